"""Helpers shared by the benchmarks: paths, settings, hashing, IR metrics, tables, machine."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engine.embedders import Embedder, Vectors
from engine.settings import Settings, load_settings

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "bench" / "out"
DEFAULT_DATA = REPO.parent / "shared" / "data"

Qrels = dict[str, dict[str, int]]
Run = dict[str, list[str]]  # query id -> ranked result ids, best first


def bench_settings(
    roots: Sequence[Path], db_path: Path, now: str | None = None, **overrides: Any
) -> Settings:
    """Settings that ignore the user's config file and environment. Frecency is off: a
    benchmark measures the ranking, not what someone once opened in this index."""
    overrides.setdefault("search__frecency", False)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    config = db_path.parent / "bench-config.toml"
    config.write_text("")
    return load_settings(
        config,
        env={},
        roots=[str(r) for r in roots],
        db=str(db_path),
        log_dir=str(db_path.parent / "logs"),
        now=now,
        **overrides,
    )


def digest(paths: Iterable[Path], extra: str = "") -> str:
    """A short hash of files' names and bytes (and an extra string), for cache keys."""
    h = hashlib.sha256(extra.encode())
    for path in sorted(paths):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def engine_code_files() -> list[Path]:
    """The engine code that decides what the index holds: extractors, indexer, db, embedders."""
    engine = REPO / "engine"
    files = [engine / "parts.py"]
    for package in ("index", "store", "store/sql", "extractors", "embedders"):
        files += sorted((engine / package).glob("*.py"))
    return [f for f in files if f.exists()]


class CachedEmbedder:
    """Wraps an embedder and memoises query vectors (many configurations, same questions)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.model_id = inner.model_id
        self._cache: dict[str, Vectors] = {}

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        return self.inner.embed(texts)

    def embed_query(self, text: str) -> Vectors:
        if text not in self._cache:
            self._cache[text] = self.inner.embed_query(text)
        return self._cache[text]


# -- IR metrics (pytrec_eval) ---------------------------------------------------------------


def evaluate(qrels: Qrels, run: Run, depth: int, measures: set[str]) -> dict[str, dict[str, float]]:
    """Per-query measures over the top `depth` results; a query with no results scores 0."""
    import pytrec_eval

    scored = {
        qid: {doc: float(depth - i) for i, doc in enumerate(_unique(run.get(qid, []))[:depth])}
        for qid in qrels
    }
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures)
    per_query = evaluator.evaluate({q: d for q, d in scored.items() if d})
    names = sorted({m for v in per_query.values() for m in v} | _expand(measures))
    return {qid: {m: per_query.get(qid, {}).get(m, 0.0) for m in names} for qid in qrels}


def _expand(measures: set[str]) -> set[str]:
    out = set()
    for m in measures:
        if "." in m:
            base, cuts = m.split(".", 1)
            out |= {f"{base}_{c}" for c in cuts.split(",")}
        else:
            out.add(m)
    return out


def _unique(ids: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def mean(
    per_query: Mapping[str, Mapping[str, float]], measure: str, qids: Iterable[str] | None = None
) -> float:
    keys = list(per_query if qids is None else qids)
    return statistics.fmean(per_query[q][measure] for q in keys) if keys else 0.0


# -- latency --------------------------------------------------------------------------------


def percentiles(samples_ms: Sequence[float]) -> dict[str, float]:
    arr = np.asarray(samples_ms, dtype=np.float64)
    return {
        "p50": float(np.percentile(arr, 50)),
        "p95": float(np.percentile(arr, 95)),
        "p99": float(np.percentile(arr, 99)),
        "n": float(len(arr)),
    }


# -- output ---------------------------------------------------------------------------------


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    def cell(value: Any) -> str:
        return f"{value:.3f}" if isinstance(value, float) else str(value)

    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def machine() -> dict[str, Any]:
    """What the figures were measured on, including the load other processes put on it."""
    memory_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {
        "cpus": os.cpu_count(),
        "memory_gb": round(memory_gb, 1),
        "cpu": _cpu_model(),
        "cpu_flags": _vector_flags(),
        "python": platform.python_version(),
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "platform": platform.platform(),
    }


def _vector_flags() -> list[str]:
    """The SIMD flags that decide how fast the model and the scans run (avx2, avx512*, …)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                flags = line.split(":", 1)[1].split()
                return sorted(f for f in flags if f.startswith(("avx", "fma", "amx")))
    except OSError:
        pass
    return []


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def wait_for_quiet(max_load: float, timeout_s: float = 1800, poll_s: float = 15) -> float:
    """Wait until the 1-minute load average is at most `max_load` (or the timeout); returns it.

    Other people's tests on a 2-core machine multiply every latency: timing waits for calm.
    """
    deadline = time.monotonic() + timeout_s
    load = os.getloadavg()[0]
    while load > max_load and time.monotonic() < deadline:
        print(f"waiting for a quiet machine: load {load:.2f} > {max_load}", file=sys.stderr)
        time.sleep(poll_s)
        load = os.getloadavg()[0]
    return load


def add_quiet_load(parser: Any) -> None:
    """The `--quiet-load L` option of the timed benchmarks."""
    parser.add_argument(
        "--quiet-load",
        type=float,
        default=0.0,
        metavar="L",
        help="before timing, wait (≤ 30 min) until the 1-minute load is ≤ L",
    )


def run_record(before: dict[str, Any]) -> dict[str, Any]:
    """How a result came about, for the report (bench/report): the command as typed, the
    date, the commit, and the machine with its load before and after the measurement."""
    module = sys.modules["__main__"].__spec__
    name = module.name if module else Path(sys.argv[0]).stem
    return {
        "command": " ".join([".venv/bin/python -m", name.removesuffix(".__main__"), *sys.argv[1:]]),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": tree_commit(),
        "machine_before": before,
        "machine_after": machine(),
    }


# The files whose changes change a figure (the results in bench/out aside): a result measured
# with any of them uncommitted says `<commit>+changes`, and bench.all refuses to run.
MEASURED_PATHS = ("engine", "bench", "pyproject.toml", ":(exclude)bench/out")


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(REPO), *args], capture_output=True, text=True, check=True
    ).stdout


def uncommitted_paths() -> list[str]:
    """The files under MEASURED_PATHS that differ from HEAD, new files included."""
    status = _git("status", "--porcelain", "--", *MEASURED_PATHS)
    return [line[3:] for line in status.splitlines() if line.strip()]


def changed_since(commit: str) -> list[str]:
    """The files under MEASURED_PATHS that HEAD holds otherwise than `commit` does."""
    return _git("diff", "--name-only", commit, "HEAD", "--", *MEASURED_PATHS).split()


def tree_commit() -> str:
    """HEAD's short hash, with `+changes` when a file under MEASURED_PATHS differs from it."""
    try:
        head = _git("rev-parse", "--short", "HEAD").strip()
        dirty = uncommitted_paths()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head}+changes" if dirty else head


def write_record(path: Path, before: dict[str, Any], figures: dict[str, Any]) -> Path:
    """Write a result file: {"run": run_record(before), **figures}; print the load."""
    record = {"run": run_record(before), **figures}
    run = record["run"]
    print(
        f"\nload average {before['load_avg_1m']} → {run['machine_after']['load_avg_1m']}; "
        f"JSON in {path}"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def write_figures(name: str, before: dict[str, Any], figures: dict[str, Any]) -> None:
    """Write bench/out/<name>.json (see write_record)."""
    write_record(OUT / f"{name}.json", before, figures)


def parse_sets(items: Sequence[str]) -> dict[str, Any]:
    """`search.rrf_k=20` → {"search__rrf_k": "20"}; JSON values (true, 0.5, {…}) are decoded."""
    changes: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep:
            raise SystemExit(f"--set wants KEY=VALUE, got {item!r}")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        changes[key.strip().replace(".", "__")] = value
    return changes


@contextlib.contextmanager
def busy_core() -> Iterator[None]:
    """One core kept busy by a child process spinning in Python, for the block's duration
    (a busy machine: a browser or a build on the other core)."""
    child = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(1.0)
        yield
    finally:
        child.kill()
        child.wait()
