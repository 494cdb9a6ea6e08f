"""A no-change `memex reindex` at 100k chunks and over a home folder of 100k files.

    .venv/bin/python -m bench.reindex_nochange [--chunks 100000] [--files 100000] [--runs 3]

Two test beds, built once and kept under bench/out/:
- `reindex-<chunks>-<key>/`: the speed benchmark's chat layer (bench/perf_data.py) indexed with
  the `hashing` embedder. A run with nothing changed embeds nothing, so its time does not
  depend on the embedder, and the bed is built in minutes rather than the local model's hour;
- `reindex-home-<files>/`: the home folder of bench/home_discovery.py (shared with it), indexed
  with the same embedder.

On each, `memex reindex` runs `--runs` times as a user runs it (a child process: start-up,
the walk, the state check, whatever else the run does), then once in this process under
cProfile: the wall-time median, each run, the run log's stage timings, and the ten functions
with the most cumulative time. Writes bench/out/reindex_nochange.json (`--name`), with the
figures of an earlier commit beside them (`--before FILE`, kept by later runs).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import time
from pathlib import Path
from typing import Any

from bench import perf_data
from bench.common import OUT, bench_settings, digest, machine, wait_for_quiet, write_figures
from bench.home_discovery import build_home, cli_reindex
from engine.index.runs import reindex
from engine.settings import Settings
from engine.store import db

MEMEX = [sys.executable, "-c", "import sys; from engine.cli import main; sys.exit(main())"]
CONFIG = '[embedder]\nname = "hashing"\n'


def bed_settings(root: Path, target: Path) -> Settings:
    """Settings of a bed: the hashing embedder, in a config file the child reads too."""
    settings = bench_settings([root], target / "memex.db", embedder__name="hashing")
    (target / "bench-config.toml").write_text(CONFIG)
    return settings


def chunk_bed(chunks: int) -> tuple[Settings, dict[str, Any]]:
    """The chat layer indexed with the hashing embedder (built once)."""
    key = digest([Path(perf_data.__file__)], extra=f"{chunks}|schema{db.SCHEMA_VERSION}")
    target = OUT / f"reindex-{chunks}-{key}"
    if not (target / "layer").is_dir():
        perf_data.LayerWriter(target / "layer", chunks).write()
    return first_index(bed_settings(target / "layer", target), target)


def home_bed(files: int) -> tuple[Settings, dict[str, Any]]:
    """The home folder of bench.home_discovery indexed with the hashing embedder (built once)."""
    home = OUT / f"home-{files}" / "home"
    build_home(home, files)
    target = OUT / f"reindex-home-{files}"
    return first_index(bed_settings(home, target), target)


def first_index(settings: Settings, target: Path) -> tuple[Settings, dict[str, Any]]:
    """Index the bed once (kept with its manifest); the index's size."""
    manifest = target / "build.json"
    if not manifest.exists():
        started = time.perf_counter()
        stats = reindex(settings=settings)
        built = {"seconds": round(time.perf_counter() - started, 1), "files": stats.files}
        manifest.write_text(json.dumps(built))
    conn = db.connect(settings.db_path, create=False)
    try:
        files = conn.execute("SELECT count(*) FROM index_state").fetchone()[0]
        chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    finally:
        conn.close()
    return settings, {"indexed_files": files, "chunks": chunks, **json.loads(manifest.read_text())}


def cli_runs(settings: Settings, runs: int) -> dict[str, Any]:
    """`memex reindex` in a child process, `runs` times: median and each run's seconds."""
    return cli_reindex(settings, settings.db_path.parent / "bench-config.toml", runs)


def profiled_run(settings: Settings) -> dict[str, Any]:
    """One no-change `reindex()` in this process under cProfile: what it changed (nothing,
    or the bed is not at rest), its stage timings and the costliest functions."""
    profile = cProfile.Profile()
    started = time.perf_counter()
    stats = profile.runcall(reindex, settings=settings)
    seconds = time.perf_counter() - started
    log = settings.log_path
    timings = json.loads(log.read_text().splitlines()[-1])["timings"] if log.exists() else {}
    table = pstats.Stats(profile).sort_stats("cumulative")
    rows = sorted(table.stats.items(), key=lambda kv: kv[1][3], reverse=True)  # type: ignore[attr-defined]
    top = [
        {"function": f"{Path(f).name}:{line}({name})", "cumulative_s": round(v[3], 3)}
        for (f, line, name), v in rows
        if "reindex_nochange" not in f and not name.startswith("<")
    ][:12]
    changed = stats.files + stats.deleted_files + stats.chunks + stats.embedded
    return {"seconds": round(seconds, 3), "changed": changed, "skipped": stats.skipped,
            "timings": timings, "top": top}  # fmt: skip


def measure(settings: Settings, built: dict[str, Any], runs: int) -> dict[str, Any]:
    cli_runs(settings, 1)  # the bed at rest (a first index may leave vectors or verdicts)
    return {**built, "cli": cli_runs(settings, runs), "in_process": profiled_run(settings)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quiet-load", type=float, default=0.0, metavar="L")
    parser.add_argument("--name", default="reindex_nochange", help="bench/out/<name>.json")
    parser.add_argument(
        "--before",
        type=Path,
        metavar="FILE",
        help="a result of this benchmark at an earlier commit, kept beside the new figures "
        "(default: the `before` the result file holds already)",
    )
    args = parser.parse_args()
    chunk_settings, chunk_built = chunk_bed(args.chunks)
    home_settings, home_built = home_bed(args.files)
    if args.quiet_load:
        wait_for_quiet(args.quiet_load)
    before = machine()
    report = {
        "chunk_bed": {
            "layer_chunks": args.chunks,
            **measure(chunk_settings, chunk_built, args.runs),
        },
        "home_bed": {"home_files": args.files, **measure(home_settings, home_built, args.runs)},
    }
    print(json.dumps(report, indent=2))
    earlier = earlier_figures(args.before, OUT / f"{args.name}.json")
    write_figures(args.name, before, {**report, **earlier})


def earlier_figures(given: Path | None, current: Path) -> dict[str, Any]:
    """{"before": …}: the figures of an earlier commit to compare with (`--before FILE`, or
    those the result file carries already), or nothing."""
    if given is not None:
        data = json.loads(given.read_text(encoding="utf-8"))
        return {"before": {k: data[k] for k in ("run", "chunk_bed", "home_bed")}}
    if current.exists():
        data = json.loads(current.read_text(encoding="utf-8"))
        return {"before": data["before"]} if "before" in data else {}
    return {}


if __name__ == "__main__":
    main()
