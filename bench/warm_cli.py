"""Warm CLI: `memex --search` answered by a running `memex watch` vs the one-shot.

    .venv/bin/python -m bench.warm_cli [--runs 21] [--in-a-row 20] [--chunks 10000 100000]
        [--hashing-chunks 100000] [--quiet-load L]

On the demo index (built once into bench/out/warm_cli-run/demo/), on copies of the perf
indexes `--chunks` names (bench/out/perf-<n>-*/memex.db, their layers read in place) and of
bench.cold_start's generated beds `--hashing-chunks` names (the `hashing` embedder), times
the wall clock of whole `memex … --search Q --json` child processes, median of `--runs` each:

- one-shot: MEMEX_NO_WARM=1, the path without a socket (numpy, onnxruntime, the model, the
  vector scan);
- nothing running: the client tries the socket, finds none and runs the one-shot path;
- warm: a `memex watch` on the same index answers over its socket (each answer checked
  through MEMEX_WARM_DEBUG's stderr line), its output compared with the one-shot's.

Then `--in-a-row` searches one after the other, as a script or a launcher makes them, twice:
with auto-start off (each one-shot), and with it on from nothing running (the first answers
one-shot and starts a warm process, the next ones are answered by it once it listens); the
total after the first of each, and the answers compared query by query. The warm process is
stopped afterwards. Every other figure runs with MEMEX_NO_AUTOSTART=1.

Each index is first brought to the state any earlier warm process leaves: a `memex watch`
started, one search answered and stopped, so that the files its copies keep beside the
index exist (`files_kept` in the result). Every child runs with its XDG folders in
bench/out/warm_cli-run/, never the user's.
Writes bench/out/warm_cli.json.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench import cold_start, demo, perf_index
from bench.common import OUT, add_quiet_load, machine, markdown_table, wait_for_quiet, write_figures

WORK = OUT / "warm_cli-run"
QUERIES = ("standup time", "Jonas birthday", "board game night", "budget review")
ANSWERED = re.compile(rb"memex: answered by the warm process (\d+)")
STARTED = re.compile(rb"memex: started the warm process (\d+)")
NO_AUTOSTART = "MEMEX_NO_AUTOSTART"
INDEXES = ("perf-", "hashing-")  # the result's keys of the indexes beside the demo
XDG = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR")


def private_env() -> dict[str, str]:
    """The children's environment: every XDG folder inside WORK (runtime: 0700)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMEX_")}
    env[NO_AUTOSTART] = "1"  # the figures of a process per search; `in_a_row` turns it on
    for name in XDG:
        folder = WORK / "xdg" / name.lower()
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o700)
        env[name] = str(folder)
    return env


def demo_index(env: dict[str, str], rebuild: bool) -> list[str]:
    """`--root/--db/--config` of the demo layer, indexed once (real local model)."""
    target = WORK / "demo"
    if rebuild or not (target / "memex.db").exists():
        os.environ.update({k: env[k] for k in XDG})  # the reindex child's run log: in WORK
        demo.build(target)
    return perf_index.cli_args(target)


def perf_index_copy(chunks: int) -> list[str]:
    """A copy of the built perf index's file, over its layer where it is (read only)."""
    source = perf_index.target_dir(chunks)
    if not (source / "memex.db").exists():
        raise SystemExit(f"no built perf index in {source}: run python -m bench.perf_index")
    target = WORK / f"perf-{chunks}"
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(source / "memex.db", target / "memex.db")
    (target / "config.toml").write_text("")
    return cold_start.index_args(source / "layer", target)


def hashing_copy(chunks: int) -> list[str]:
    """A copy of bench.cold_start's generated bed of `chunks` chunks (the `hashing`
    embedder; built there once), over its layer where it is (read only)."""
    source_args, _ = cold_start.hashing_index(chunks, cold_start.child_env())
    source = Path(source_args[3]).parent
    target = WORK / f"hashing-{chunks}"
    target.mkdir(parents=True, exist_ok=True)
    for name in ("memex.db", "config.toml"):
        shutil.copy(source / name, target / name)
    return cold_start.index_args(Path(source_args[1]), target)


def run_search(args: list[str], query: str, env: dict[str, str]) -> tuple[float, bytes, bytes]:
    """One `memex … --search query --json` child: (wall seconds, stdout, stderr)."""
    command = [*perf_index.memex_command(), *args, "--search", query, "--json"]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, env=env, check=True)
    return time.perf_counter() - started, done.stdout, done.stderr


def timed(args: list[str], env: dict[str, str], runs: int, warm: bool) -> dict[str, Any]:
    """Median and spread of `runs` searches; `warm`: each one must be a warm answer."""
    walls, answered = [], 0
    for n in range(runs):
        wall, _, err = run_search(args, QUERIES[n % len(QUERIES)], env)
        walls.append(wall)
        answered += bool(ANSWERED.search(err))
    if warm and answered != runs:
        raise SystemExit(f"only {answered} of {runs} searches were answered warm")
    if not warm and answered:
        raise SystemExit(f"{answered} searches were answered warm with nothing running")
    return {
        "median_s": round(statistics.median(walls), 4),
        "min_s": round(min(walls), 4),
        "max_s": round(max(walls), 4),
        "runs": runs,
        "answered_warm": answered,
    }


def timeless(stdout: bytes) -> bytes:
    return re.sub(rb'"took_ms": [0-9.]+', b'"took_ms": 0', stdout)


class Watch:
    """`memex watch` in a child process, until `stop`."""

    def __init__(self, args: list[str], env: dict[str, str], log: Path) -> None:
        self.log = log
        with log.open("wb") as out:
            self.child = subprocess.Popen(
                [*perf_index.memex_command(), *args, "watch"],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
            )
        deadline = time.monotonic() + 300
        while b"watching with" not in log.read_bytes():  # the catch-up scan is over
            if self.child.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"memex watch did not start: {log.read_text()}")
            time.sleep(0.1)

    def rss_mb(self) -> float:
        status = Path(f"/proc/{self.child.pid}/status").read_text()
        found = re.search(r"VmRSS:\s+(\d+) kB", status)
        return int(found.group(1)) / 1024 if found else 0.0

    def stop(self) -> None:
        self.child.send_signal(signal.SIGTERM)
        self.child.wait(timeout=120)


def same_output(args: list[str], env: dict[str, str]) -> bool:
    """The warm answer and the one-shot answer agree byte for byte (timing aside)."""
    one_shot = {**env, "MEMEX_NO_WARM": "1"}
    return all(
        timeless(run_search(args, q, env)[1]) == timeless(run_search(args, q, one_shot)[1])
        for q in QUERIES
    )


def series(args: list[str], env: dict[str, str], count: int) -> dict[str, Any]:
    """`count` searches one after the other: each wall time, which were answered warm, the
    warm process the first one started (if any), and each answer."""
    walls, warm, outputs, started = [], [], [], None
    for n in range(count):
        wall, out, err = run_search(args, QUERIES[n % len(QUERIES)], env)
        walls.append(round(wall, 4))
        warm.append(bool(ANSWERED.search(err)))
        outputs.append(timeless(out))
        found = STARTED.search(err)
        started = int(found.group(1)) if found and started is None else started
    after_first = walls[1:]
    return {
        "walls_s": walls,
        "first_s": walls[0],
        "total_after_first_s": round(sum(after_first), 3),
        "median_after_first_s": round(statistics.median(after_first), 4),
        "answered_warm": sum(warm),
        "first_warm": warm.index(True) + 1 if any(warm) else None,
        "started_pid": started,
        "outputs": outputs,
    }


def stop_process(pid: int) -> None:
    """SIGTERM a warm process a search started (not our child: poll until it is gone)."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 60
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def in_a_row(args: list[str], debug: dict[str, str], count: int) -> dict[str, Any]:
    """`count` searches in a row with auto-start off, then on from nothing running."""
    off = series(args, debug, count)
    on_env = {k: v for k, v in debug.items() if k != NO_AUTOSTART}
    on = series(args, on_env, count)
    if on["started_pid"] is not None:
        stop_process(on["started_pid"])
    if off["answered_warm"] or on["started_pid"] is None:
        raise SystemExit("auto-start off answered warm, or on started nothing")
    same = off.pop("outputs") == on.pop("outputs")
    return {"count": count, "autostart_off": off, "autostart_on": on, "same_output": same}


def keep_files(name: str, args: list[str], env: dict[str, str]) -> list[str]:
    """What any earlier warm process leaves beside the index: a `memex watch` started, one
    search answered, stopped (its copies' files, `memex.db.keyword` and `.vectors`, written
    as it read the index); the files there afterwards. Every index is measured so, whatever
    an earlier run of this benchmark left."""
    watch = Watch(args, env, WORK / f"keep-{name}.log")
    try:
        run_search(args, QUERIES[0], env)
    finally:
        watch.stop()
    db = Path(args[args.index("--db") + 1])
    return [s for s in (".keyword", ".vectors") if Path(str(db) + s).exists()]


def measure(name: str, args: list[str], env: dict[str, str], runs: int, row: int) -> dict[str, Any]:
    """The figures for one index."""
    debug = {**env, "MEMEX_WARM_DEBUG": "1"}
    figures: dict[str, Any] = {"args": args, "files_kept": keep_files(name, args, env)}
    figures["one_shot"] = timed(args, {**debug, "MEMEX_NO_WARM": "1"}, runs, warm=False)
    figures["nothing_running"] = timed(args, debug, runs, warm=False)
    if row:
        figures["in_a_row"] = in_a_row(args, debug, row)
    watch = Watch(args, env, WORK / f"watch-{name}.log")
    try:
        for query in QUERIES:  # untimed: the server loads the model and the vectors
            run_search(args, query, env)
        figures["warm"] = timed(args, debug, runs, warm=True)
        figures["same_output"] = same_output(args, debug)
        figures["watch_rss_mb"] = round(watch.rss_mb(), 1)
    finally:
        watch.stop()
    return figures


def interpreter_start(runs: int) -> float:
    """The floor: a bare `python -c pass` of the same interpreter."""
    walls = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        walls.append(time.perf_counter() - started)
    return round(statistics.median(walls), 4)


def table(figures: dict[str, Any]) -> str:
    rows = []
    for name in [n for n in figures if n == "demo" or n.startswith(INDEXES)]:
        f = figures[name]
        rows.append(
            [
                name,
                f"{f['one_shot']['median_s']:.3f} s",
                f"{f['nothing_running']['median_s']:.3f} s",
                f"{f['warm']['median_s']:.3f} s",
                f"{f['watch_rss_mb']:.0f} MB",
                "yes" if f["same_output"] else "NO",
            ]
        )
    headers = ["index", "one-shot", "nothing running", "warm (watch)", "watch RSS", "same output"]
    return markdown_table(headers, rows)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.warm_cli", description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=21, help="searches timed per figure (median)")
    p.add_argument("--rebuild", action="store_true", help="index the demo layer again")
    p.add_argument("--in-a-row", type=int, default=20, help="searches one after another (0: none)")
    p.add_argument(
        "--chunks", type=int, nargs="*", default=[], help="perf index sizes (built) beside the demo"
    )
    p.add_argument(
        "--hashing-chunks",
        type=int,
        nargs="*",
        default=[],
        help="sizes of bench.cold_start's generated beds (hashing embedder) beside the demo",
    )
    add_quiet_load(p)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    WORK.mkdir(parents=True, exist_ok=True)
    env = private_env()
    indexes = {"demo": demo_index(env, args.rebuild)}
    indexes |= {f"perf-{n}": perf_index_copy(n) for n in args.chunks}
    indexes |= {f"hashing-{n}": hashing_copy(n) for n in args.hashing_chunks}
    if args.quiet_load:
        wait_for_quiet(args.quiet_load)
    before = machine()
    figures: dict[str, Any] = {"python_start_s": interpreter_start(args.runs)}
    for name, index_args in indexes.items():
        figures[name] = measure(name, index_args, env, args.runs, args.in_a_row)
    print(table(figures))
    for name, f in figures.items():
        row = f.get("in_a_row") if isinstance(f, dict) else None
        if row:
            off, on = row["autostart_off"], row["autostart_on"]
            print(
                f"{name}: {row['count']} in a row, total after the first: auto-start off "
                f"{off['total_after_first_s']:.2f} s, on {on['total_after_first_s']:.2f} s "
                f"({on['answered_warm']} warm from search {on['first_warm']})"
            )
    print(f"\nbare interpreter start: {figures['python_start_s']:.3f} s")
    write_figures("warm_cli", before, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
