"""Build (or reuse) the speed-benchmark index: layer, `memex reindex` in a child process.

The built index is cached under bench/out/perf-<chunks>-<key>/ with a manifest of how the
build went (seconds, chunks/s, peak RSS, load average), because embedding 100k chunks with
the local model on 2 cores takes the better part of an hour.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from bench import perf_data
from bench.common import OUT, bench_settings, digest
from engine.store import db


@dataclass
class Build:
    root: str
    db: str
    chunks: int
    files: int
    seconds: float
    chunks_per_s: float
    peak_rss_mb: float
    load_avg_before: float
    load_avg_after: float
    built_at: str
    resumed: bool = False  # finished an interrupted build: seconds cover the resume only


def memex_command() -> list[str]:
    script = Path(sys.executable).parent / "memex"
    return [str(script)] if script.exists() else [sys.executable, "-m", "desktop.launcher"]


def run_child(args: list[str], log: Path | None = None) -> tuple[float, float, int]:
    """Run a child process; (wall seconds, peak RSS in MB, exit code)."""
    out = log.open("wb") if log else subprocess.DEVNULL
    started = time.perf_counter()
    try:
        child = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    finally:
        if log:
            out.close()  # type: ignore[union-attr]
    return time.perf_counter() - started, usage.ru_maxrss / 1024, child.returncode


def cli_args(target: Path) -> list[str]:
    settings = bench_settings([target / "layer"], target / "memex.db")
    return [
        "--root",
        str(target / "layer"),
        "--db",
        str(settings.db_path),
        "--config",
        str(target / "bench-config.toml"),
    ]


def target_dir(chunks: int) -> Path:
    key = digest([Path(perf_data.__file__)], extra=f"{chunks}|schema{db.SCHEMA_VERSION}")
    return OUT / f"perf-{chunks}-{key}"


def prepare_layer(target: Path, chunks: int, rebuild: bool) -> bool:
    """Write a fresh layer, or keep an interrupted build's layer and database; True if kept."""
    resumed = not rebuild and (target / "layer").is_dir() and (target / "memex.db").exists()
    if resumed:
        print(f"finishing the interrupted build in {target}", file=sys.stderr)
    else:
        shutil.rmtree(target, ignore_errors=True)
        made = perf_data.LayerWriter(target / "layer", chunks).write()
        print(f"wrote the layer: {made}", file=sys.stderr)
    return resumed


def index_counts(db_path: Path) -> tuple[int, int]:
    """(chunks, files) of a built index, its WAL checkpointed into the database file."""
    conn = db.connect(db_path, create=False)
    count = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    files = conn.execute("SELECT count(*) FROM index_state").fetchone()[0]
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return count, files


def build(chunks: int, rebuild: bool = False) -> Build:
    """The layer and its index, built once; returns the recorded build figures.

    An interrupted build (a layer and a database but no manifest) is finished by an
    incremental `memex reindex` rather than started again, and marked `resumed`: its
    throughput is then unknown and reported as such."""
    target = target_dir(chunks)
    manifest = target / "build.json"
    if manifest.exists() and not rebuild:
        return Build(**json.loads(manifest.read_text()))
    resumed = prepare_layer(target, chunks, rebuild)
    load_before = os.getloadavg()[0]
    seconds, rss, code = run_child(
        [*memex_command(), "reindex", *cli_args(target)], target / "reindex.log"
    )
    if code != 0:
        raise SystemExit(f"memex reindex failed ({code}); see {target / 'reindex.log'}")
    count, files = index_counts(target / "memex.db")
    result = Build(
        str(target / "layer"),
        str(target / "memex.db"),
        count,
        files,
        round(seconds, 1),
        round(count / seconds, 1),
        round(rss, 1),
        round(load_before, 2),
        round(os.getloadavg()[0], 2),
        time.strftime("%Y-%m-%d %H:%M:%S"),
        resumed,
    )
    manifest.write_text(json.dumps(asdict(result), indent=2))
    return result


if __name__ == "__main__":
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    print(json.dumps(asdict(build(size, "--rebuild" in sys.argv)), indent=2))
