"""Cold start of the frozen CLI: wall time from a new process to printed results.

    python packaging/bench_startup.py dist/memex/memex-cli --root DEMO --db DB \
        --search "standup time" --json [--runs 5]

Runs the command `--runs` times (each a new process, page cache warm after the first), checks
every run exits 0, prints each wall time, the median, and the median CPU time (user + system,
which a busy machine disturbs less than wall time). Only the standard library is used, so
any python3 can time the bundle.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import time


def main(argv: list[str]) -> int:
    runs = 5
    if "--runs" in argv:
        i = argv.index("--runs")
        runs = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2 :]
    if not argv:
        sys.stderr.write(__doc__ or "")
        return 2
    times, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if done.returncode != 0:
            sys.stderr.write(f"bench_startup: exit {done.returncode}: {done.stderr.decode()}\n")
            return 1
    print("runs (s): " + " ".join(f"{t:.3f}" for t in times))
    print(
        f"median {statistics.median(times):.3f} s  min {min(times):.3f}  max {max(times):.3f}"
        f"  ({runs} runs); CPU time median {statistics.median(cpu):.3f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
