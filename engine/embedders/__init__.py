"""Embedders: one per file, behind one small protocol, chosen by name from one registry."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from engine.settings import EmbedderSettings, Settings

Vectors = npt.NDArray[np.float32]


class EmbedderError(RuntimeError):
    """The embedder cannot produce vectors now (missing model, network, key, quota)."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    name: str
    model_id: str

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors: ...

    def embed_query(self, text: str) -> Vectors: ...


EmbedderFactory = Callable[[Settings], Embedder]
REGISTRY: dict[str, EmbedderFactory] = {}


def register(name: str) -> Callable[[EmbedderFactory], EmbedderFactory]:
    def add(factory: EmbedderFactory) -> EmbedderFactory:
        REGISTRY[name] = factory
        return factory

    return add


# The built-ins by the name they register under, and the module that registers it.
BUILTIN = {
    "local": "local",
    "hashing": "hashing",
    "openai": "openai_embedder",
    "sentence-transformers": "sentence_transformers",
}
OPTIONAL = ("openai_embedder", "sentence_transformers")  # a build may leave these out


def _load_builtin(name: str | None) -> None:
    """Import the module that registers `name`, or every built-in (None): importing
    registers. One name's alone, as a one-shot search would otherwise load the HTTP client
    of the openai embedder (http.client, ssl, email) for the local model."""
    import importlib

    modules = [BUILTIN[name]] if name in BUILTIN else list(BUILTIN.values())
    for module in modules:
        try:
            importlib.import_module(f"engine.embedders.{module}")
        except ModuleNotFoundError as exc:
            if module not in OPTIONAL or exc.name != f"engine.embedders.{module}":
                raise


def create_embedder(settings: Settings) -> Embedder:
    """The embedder named in the settings; EmbedderError if it is unknown or unusable."""
    name = settings.embedder.name
    _load_builtin(name)
    factory = REGISTRY.get(name)
    if factory is None:
        _load_builtin(None)  # every built-in, to name what is known
        raise EmbedderError(f"unknown embedder '{name}' (known: {', '.join(sorted(REGISTRY))})")
    return factory(settings)


def normalise(vectors: Vectors) -> Vectors:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: Vectors = (vectors / norms).astype(np.float32)
    return out


class EmbedderPool:
    """The models one engine has loaded, by the settings that make them: each loads once.

    Loading costs a fraction of a second (ONNX) to seconds (torch), so an engine's readers and
    its writer share one model. A failure is not remembered here: the caller decides when to try again.
    """

    def __init__(self, factory: EmbedderFactory = create_embedder) -> None:
        self._factory = factory
        self._models: dict[EmbedderSettings, Embedder] = {}
        self._lock = threading.Lock()

    def get(self, settings: Settings) -> Embedder:
        """The embedder these settings name, loaded on first use; EmbedderError if unusable."""
        with self._lock:
            model = self._models.get(settings.embedder)
            if model is None:
                model = self._models[settings.embedder] = self._factory(settings)
            return model

    def __len__(self) -> int:
        return len(self._models)

    def clear(self) -> None:
        with self._lock:
            self._models.clear()

    def close(self) -> None:
        """Forget the models and stop the threads of those that hold any (`close()`)."""
        with self._lock:
            models, self._models = list(self._models.values()), {}
        for model in models:
            close_embedder(model)


def close_embedder(embedder: Embedder) -> None:
    """Stop the threads an embedder holds, if it holds any (the local model's run pool)."""
    close = getattr(embedder, "close", None)
    if callable(close):
        close()
