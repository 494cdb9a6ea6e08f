"""What holding BLAS to one thread costs per call, and what it buys.

    .venv/bin/python -m bench.blas_limit [--rows 10000] [--calls 2000] [--busy]

Times, per call: the bare matrix-vector product (numpy's default BLAS threads), the same
inside threadpoolctl's `threadpool_limits(1, "blas")` (made per call, as the docs show it),
inside `ThreadpoolController().limit(…)` with the controller made once, and inside
engine/search/retrieve/blas.py's `OneBlasThread` (libraries found once; only set and restore per
call). Each limiter is also timed around an empty block (its own overhead). `--busy` keeps
one core busy in a child process while timing (bench.vector_scale's `busy_core`).
Prints a table; writes bench/out/blas_limit.json.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController, threadpool_limits

from bench.common import OUT, busy_core, machine, percentiles, write_record
from engine.search.retrieve.blas import OneBlasThread

Factory = Callable[[], AbstractContextManager[Any]]


def limiters() -> dict[str, Factory]:
    controller = ThreadpoolController()
    once = OneBlasThread()
    return {
        "no limit (default threads)": nullcontext,
        "threadpool_limits per call": lambda: threadpool_limits(limits=1, user_api="blas"),
        "controller made once, .limit per call": lambda: controller.limit(
            limits=1, user_api="blas"
        ),
        "OneBlasThread made once": lambda: once,
    }


def time_calls(factory: Factory, body: Callable[[], object], calls: int) -> list[float]:
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        with factory():
            body()
        samples.append((time.perf_counter() - started) * 1e6)
    return samples


def run(rows: int, calls: int) -> dict[str, Any]:
    rng = np.random.default_rng(3)
    matrix = rng.standard_normal((rows, 384), dtype=np.float32)
    query = rng.standard_normal(384, dtype=np.float32)
    expected = matrix @ query
    out: dict[str, Any] = {}
    for name, factory in limiters().items():
        with factory():
            assert np.array_equal(matrix @ query, expected) or name.startswith("no limit")
        out[name] = {
            "empty block µs": percentiles(time_calls(factory, lambda: None, calls)),
            "product µs": percentiles(time_calls(factory, lambda: matrix @ query, calls)),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.blas_limit")
    p.add_argument("--rows", type=int, default=10_000)
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--busy", action="store_true", help="keep one core busy while timing")
    args = p.parse_args(argv)
    before = machine()
    with busy_core() if args.busy else nullcontext():
        result = run(args.rows, args.calls)
    print(f"{args.rows} × 384 float32, {args.calls} calls, busy core: {args.busy}")
    print("| limiter | empty block p50 / p95 µs | product p50 / p95 µs |\n|---|---|---|")
    for name, figures in result.items():
        empty, product = figures["empty block µs"], figures["product µs"]
        print(
            f"| {name} | {empty['p50']:.1f} / {empty['p95']:.1f} "
            f"| {product['p50']:.1f} / {product['p95']:.1f} |"
        )
    suffix = "-busy" if args.busy else ""
    figures = {"rows": args.rows, "calls": args.calls, "busy": args.busy, "limiters": result}
    write_record(OUT / f"blas_limit{suffix}.json", before, figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
