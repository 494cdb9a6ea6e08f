"""The local model run under one configuration of batching, threads and onnxruntime options.

bench/model_ceiling.py sweeps these configurations. Each `ModelRunner` builds its onnxruntime
sessions from the same model file and tokenizer as engine/embedders/local.py
(`model_files()`) and pushes every batch through the same `run_batch` (padding, mean pooling,
normalising), so a configuration's vectors are the local embedder's and its speed is the
speed that embedder would reach with those options (tests/test_model_ceiling.py checks both
agree for every kind of configuration).
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from engine.embedders import Vectors
from engine.embedders.local import DIM, model_files, run_batch

# onnxruntime's graph optimisation levels by the names the report uses; "all" is its default.
GRAPH_LEVELS = ("disabled", "basic", "extended", "all")


@dataclass(frozen=True)
class ModelConfig:
    """How texts go through the model: batching, threads, sessions, graph optimisation."""

    batch: int = 4  # texts per model run
    sorted: bool = True  # batches of texts of similar length (less padding)
    intra: int = 1  # onnxruntime intra-op threads per run
    runs: int = 2  # batches run side by side, one thread each
    sessions: int = 1  # 1: the threads share one session; else one session per thread
    graph: str = "basic"  # onnxruntime graph optimisation level (its own default: "all")
    parallel: bool = False  # execution mode parallel, 2 inter-op threads

    def label(self) -> str:
        parts = [
            f"batch {self.batch}",
            "sorted" if self.sorted else "unsorted",
            f"{self.runs}×{self.intra} thread{'s' if self.intra > 1 else ''}",
            f"{self.sessions} session{'s' if self.sessions > 1 else ''}",
            f"graph {self.graph}",
        ]
        if self.parallel:
            parts.append("inter-op parallel")
        return ", ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def session_key(self) -> tuple[int, str, bool]:
        """What a session is built from: a single query's latency depends on this alone."""
        return self.intra, self.graph, self.parallel


def session_options(config: ModelConfig) -> Any:
    """onnxruntime options for `config`; spinning stays off, as in the local embedder."""
    import onnxruntime as ort

    levels = {
        "disabled": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
        "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
    }
    options = ort.SessionOptions()
    options.intra_op_num_threads = config.intra
    options.graph_optimization_level = levels[config.graph]
    if config.parallel:
        options.execution_mode = ort.ExecutionMode.ORT_PARALLEL
        options.inter_op_num_threads = 2
    else:
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.inter_op_num_threads = 1
    options.log_severity_level = 3
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    return options


class SessionCache:
    """Sessions by what they are built from, so configurations that differ only in batching
    or scheduling share them (building one takes about half a second)."""

    def __init__(self) -> None:
        os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
        self._sessions: dict[tuple[int, str, bool], list[Any]] = {}

    def get(self, config: ModelConfig, count: int) -> list[Any]:
        import onnxruntime as ort

        made = self._sessions.setdefault(config.session_key(), [])
        while len(made) < count:
            made.append(
                ort.InferenceSession(
                    str(model_files()[0]),
                    sess_options=session_options(config),
                    providers=["CPUExecutionProvider"],
                )
            )
        return made[:count]


def tokenizer(max_tokens: int = 256) -> Any:
    """The local embedder's tokenizer, truncating as it does."""
    from tokenizers import Tokenizer

    made = Tokenizer.from_file(str(model_files()[1]))
    made.enable_truncation(max_length=max_tokens)
    made.no_padding()
    return made


class ModelRunner:
    """Embeds texts under one configuration; `close()` stops its threads."""

    def __init__(self, config: ModelConfig, sessions: SessionCache, tok: Any) -> None:
        self.config = config
        self._tokenizer = tok
        self._sessions = sessions.get(config, config.sessions)
        self._inputs = {i.name for i in self._sessions[0].get_inputs()}
        self._pool = ThreadPoolExecutor(config.runs) if config.runs > 1 else None
        self._local = threading.local()
        self._handed = itertools.count()

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Every text's vector in order; batches run on `runs` threads as a free queue."""
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        encodings = self._tokenizer.encode_batch([t or " " for t in texts])
        order = list(range(len(texts)))
        if self.config.sorted:
            order.sort(key=lambda i: len(encodings[i].ids))
        size = self.config.batch
        batches = [order[s : s + size] for s in range(0, len(order), size)]
        inputs = ([encodings[i] for i in batch] for batch in batches)
        found = self._pool.map(self._run, inputs) if self._pool else map(self._run, inputs)
        for batch, vectors in zip(batches, found, strict=True):
            out[batch] = vectors
        return out

    def _run(self, encodings: list[Any]) -> Vectors:
        return run_batch(self._session(), self._inputs, encodings)

    def _session(self) -> Any:
        """This thread's session: with one per thread, each worker keeps the one it was handed."""
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._sessions[next(self._handed) % len(self._sessions)]
            self._local.session = session
        return session

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
