"""Discovery over a home folder of 100,000 files, mostly not exports: how fast the walk is,
how much it reads of files it does not know, and what a reindex costs when nothing changed.

    .venv/bin/python -m bench.home_discovery [--files 100000] [--runs 3]

Builds (once, under bench/out/home-<files>/) a home folder as people have one: the exports of
the home-folder test (`tests/test_home_folder.py`: a Slack export, a Takeout mbox, a Zoom
transcript, an Obsidian vault, Telegram, Signal, WhatsApp, Garmin, Dexcom) where they land,
beside code projects with `.git` and `node_modules`, photos, music, documents, downloads of
JSON, CSV and text, caches and a trash folder. Then, on one index built with the default
local model:

- a cold walk (`routes.scan`, nothing known): files/s, files whose head was read, bytes read
  per file of no known format;
- a no-change walk with what the index knows (types and verdicts): the same counts;
- a no-change `memex reindex` as a user runs it (a child process: start-up, the walk, the
  state check), with the verdicts kept and, beside it, with the `unknown_files` table
  dropped first (every unknown file read again).
Prints JSON and writes bench/out/home_discovery.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import OUT, REPO, bench_settings, machine, write_figures
from engine.index.recognise import known_types, load_verdicts
from engine.index.routes import scan
from engine.index.runs import reindex
from engine.settings import Settings
from engine.store import db
from tests.test_home_folder import decoys, exports

MEMEX = [sys.executable, "-c", "import sys; from engine.cli import main; sys.exit(main())"]

# (folder pattern, names per folder, file endings, bytes): the bulk of a home folder, in shares
# of the requested file count. Folders a walk never enters are marked excluded.
BULK: tuple[tuple[str, float, tuple[str, ...], bool], ...] = (
    ("src/project-{n}/src/module-{m}", 0.16, (".py", ".js", ".ts", ".go", ".c", ".h"), False),
    ("src/project-{n}/config", 0.02, (".json", ".yaml", ".toml"), False),
    ("src/project-{n}/docs", 0.01, (".md",), False),
    ("src/project-{n}/node_modules/pkg-{m}", 0.14, (".js", ".json", ".md"), True),
    ("src/project-{n}/.git/objects/{m:02x}", 0.06, ("",), True),
    ("Pictures/{n}/{m:02d}", 0.20, (".jpg", ".png", ".heic"), False),
    ("Music/Artist {n}/Album {m}", 0.08, (".mp3", ".flac"), False),
    ("Documents/Work {n}/Project {m}", 0.10, (".pdf", ".xlsx", ".csv", ".txt", ".json"), False),
    ("Downloads/batch-{n}", 0.05, (".json", ".csv", ".txt", ".zip", ".dmg"), False),
    (".cache/app-{n}/{m}", 0.08, (".bin", ".json"), True),
    ("Library/Caches/com.app.{n}", 0.05, (".db", ".plist"), True),
    (".local/share/Trash/files/{n}", 0.05, (".md", ".txt"), True),
)
PER_FOLDER = 50


def _content(ending: str, i: int) -> bytes:
    if ending == ".json":
        return json.dumps({"name": f"item-{i}", "version": "1.0", "values": [i, i + 1]}).encode()
    if ending == ".csv":
        return f"date,region,amount\n2024-03-{i % 28 + 1:02d},EU,{i}\n".encode()
    if ending in (".txt", ".md", ".yaml", ".toml"):
        return f"notes {i}\nline two of {i}\n".encode()
    if ending in (".py", ".js", ".ts", ".go", ".c", ".h"):
        return f"// module {i}\nfunction f{i}() {{ return {i}; }}\n".encode()
    return bytes([i % 256]) * 256  # images, music, archives, caches: bytes


def build_home(home: Path, files: int) -> dict[str, int]:
    """The home folder (made once; kept for later runs); how many files of each kind."""
    marker = home / ".built"
    if marker.exists():
        return json.loads(marker.read_text())
    exports(home)
    decoys(home)
    counts = {"bulk": 0, "excluded": 0}
    for pattern, share, endings, excluded in BULK:
        wanted = int(files * share)
        for k in range(wanted):
            folder = pattern.format(n=k // (PER_FOLDER * 20), m=(k // PER_FOLDER) % 20)
            ending = endings[k % len(endings)]
            path = home / folder / f"file-{k}{ending}"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(_content(ending, k))
        counts["excluded" if excluded else "bulk"] += wanted
    for project in {p.parent.parent for p in home.glob("src/project-*/.git/objects")}:
        (project / "tsconfig.json").write_text('{"compilerOptions": {}}')
    marker.write_text(json.dumps(counts))
    return counts


def walk(settings: Settings, conn: Any | None) -> dict[str, Any]:
    known = known_types(conn) if conn is not None else {}
    verdicts = load_verdicts(conn, settings) if conn is not None else {}
    started = time.perf_counter()
    found = scan(settings, known, verdicts)
    seconds = time.perf_counter() - started
    skipped = found.skipped
    seen = len(found.found) + skipped.unknown + skipped.ignored + skipped.too_large
    return {
        "seconds": round(seconds, 3),
        "files_seen": seen,
        "files_per_s": round(seen / seconds),
        "found": len(found.found),
        "unknown": skipped.unknown,
        "excluded_folders": skipped.excluded,
        "heads_read": skipped.read_files,
        "bytes_read": skipped.read_bytes,
        "bytes_read_per_unknown_file": round(skipped.read_bytes / max(skipped.unknown, 1), 1),
    }


def cli_reindex(settings: Settings, config: Path, runs: int) -> dict[str, Any]:
    argv = [
        *MEMEX,
        *("--root", str(settings.roots[0]), "--db", str(settings.db_path)),
        *("--config", str(config), "reindex"),
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMEX_")}
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True)
        seconds.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise SystemExit(f"memex reindex failed: {done.stderr.strip()}")
    return {
        "median_s": round(statistics.median(seconds), 3),
        "runs": [round(s, 3) for s in seconds],
    }


def drop_verdicts(settings: Settings) -> None:
    conn = db.connect(settings.db_path)
    try:
        conn.execute("DROP TABLE IF EXISTS unknown_files")
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    base = OUT / f"home-{args.files}"
    home = base / "home"
    built = build_home(home, args.files)
    settings = bench_settings([home], base / "index" / "memex.db")
    config = settings.db_path.parent / "bench-config.toml"
    before = machine()
    cold = walk(settings, None)
    started = time.perf_counter()
    stats = reindex(settings=settings)
    first = time.perf_counter() - started
    conn = db.connect(settings.db_path, create=False)
    try:
        warm = walk(settings, conn)
    finally:
        conn.close()
    kept = cli_reindex(settings, config, args.runs)
    without = []
    for _ in range(args.runs):
        drop_verdicts(settings)
        without.append(cli_reindex(settings, config, 1)["median_s"])
    cli_reindex(settings, config, 1)  # the verdicts stored again
    report = {
        "home": {"files": args.files, **built},
        "first_reindex": {"seconds": round(first, 2), "files": stats.files, "chunks": stats.chunks},
        "cold_walk": cold,
        "no_change_walk": warm,
        "no_change_cli_reindex": kept,
        "no_change_cli_reindex_without_verdicts": {
            "median_s": round(statistics.median(without), 3),
            "runs": without,
        },
    }
    print(json.dumps(report, indent=2))
    write_figures("home_discovery", before, report)


if __name__ == "__main__":
    main()
