"""A cross-encoder ONNX model folder the user points to, on onnxruntime + tokenizers.

The folder holds `model.onnx` and `tokenizer.json` (as exported by optimum, for one:
`optimum-cli export onnx --model BAAI/bge-reranker-base --task text-classification DIR`).
Each (query, document) pair is encoded as one input, the tokenizer's own pair template
(`[CLS] query [SEP] document [SEP]`, with the token types a BERT model needs), cut to
`max_tokens` from the longer side; the model's logit is the score. Run the way the local
embedder runs its model (engine/embedders/local.py): CPU, no busy-waiting, length-sorted
batches so padding stays small. Nothing is downloaded.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engine.search.rerank.base import RerankError, Scores
from engine.settings import Settings

MODEL_FILE, TOKENIZER_FILE = "model.onnx", "tokenizer.json"


def logits_to_scores(output: Any) -> np.ndarray:
    """One score per pair from the model's first output: a logit per pair ((n,) or (n, 1)),
    or two-class logits (n, 2), scored as relevant minus not relevant."""
    logits = np.asarray(output, dtype=np.float64)
    if logits.ndim == 1:
        return logits
    if logits.ndim == 2 and logits.shape[1] == 1:
        return logits[:, 0]
    if logits.ndim == 2 and logits.shape[1] == 2:
        return logits[:, 1] - logits[:, 0]
    raise RerankError(
        f"the re-rank model's output has shape {logits.shape}, not one logit per pair"
    )


def model_files(folder: str) -> tuple[Path, Path]:
    """model.onnx and tokenizer.json in `folder`; RerankError if either is missing."""
    if not folder.strip():
        raise RerankError("rerank.backend is onnx but rerank.model_path is empty")
    base = Path(os.path.expanduser(folder))
    files = base / MODEL_FILE, base / TOKENIZER_FILE
    for path in files:
        if not path.is_file():
            raise RerankError(f"the re-rank model folder {base} has no {path.name}")
    return files


class OnnxReranker:
    """A cross-encoder on onnxruntime. Not shared between threads: each Searcher has its own
    (and a Searcher searches under its lock)."""

    name = "onnx"

    def __init__(self, folder: str, *, max_tokens: int = 512, batch_size: int = 8) -> None:
        model, tokenizer = model_files(folder)
        try:
            self._tokenizer = _tokenizer(tokenizer, max_tokens)
            self._session = _session(model)
        except Exception as exc:  # onnxruntime and tokenizers raise their own kinds
            raise RerankError(
                f"cannot load the re-rank model in {model.parent} ({type(exc).__name__})"
            ) from None
        self._inputs = {i.name for i in self._session.get_inputs()}
        if "input_ids" not in self._inputs:
            raise RerankError(f"the re-rank model {model} takes no input_ids")
        self._batch_size = batch_size

    def scores(self, query: str, documents: Sequence[str]) -> Scores:
        """Each document's logit against the query."""
        if not documents:
            return {}
        pairs = [(query or " ", d or " ") for d in documents]
        try:
            encodings = self._tokenizer.encode_batch(pairs)
        except Exception as exc:  # tokenizers' own kinds (a pair it cannot cut to size)
            raise RerankError(f"the re-rank tokenizer failed ({type(exc).__name__})") from None
        order = sorted(range(len(pairs)), key=lambda i: len(encodings[i].ids))
        out: Scores = {}
        for start in range(0, len(order), self._batch_size):
            batch = order[start : start + self._batch_size]
            logits = self._run([encodings[i] for i in batch])
            out.update(zip(batch, (float(x) for x in logits), strict=True))
        return out

    def _run(self, encodings: list[Any]) -> np.ndarray:
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask, types = np.zeros_like(ids), np.zeros_like(ids)
        for row, enc in enumerate(encodings):
            n = len(enc.ids)
            ids[row, :n], mask[row, :n], types[row, :n] = enc.ids, 1, enc.type_ids
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        try:
            output = self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs})
        except Exception as exc:  # a model whose inputs are not a BERT-style encoder's
            raise RerankError(f"the re-rank model failed to run ({type(exc).__name__})") from None
        scores = logits_to_scores(output[0])
        if scores.shape[0] != len(encodings):
            raise RerankError("the re-rank model gave a different number of scores than pairs")
        return scores


def _tokenizer(path: Path, max_tokens: int) -> Any:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    # Longest first: the longer of query and document (nearly always the document) is cut.
    tokenizer.enable_truncation(max_length=max_tokens)
    tokenizer.no_padding()
    return tokenizer


def _session(model: Path) -> Any:
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    # No busy-waiting between runs, as for the local embedder (docs/benchmarks.md).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(
        str(model), sess_options=options, providers=["CPUExecutionProvider"]
    )


def create(settings: Settings) -> OnnxReranker:
    """The ONNX backend for these settings."""
    cfg = settings.rerank
    return OnnxReranker(cfg.model_path, max_tokens=cfg.max_tokens, batch_size=cfg.batch_size)
