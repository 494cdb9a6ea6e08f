"""A deterministic bag-of-words hashing embedder: for plumbing tests only, never quality."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from engine.embedders import Vectors, normalise, register
from engine.settings import Settings

_WORD = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder:
    name = "hashing"

    def __init__(self, dim: int = 64) -> None:
        self.model_id = f"hashing-{dim}"
        self._dim = dim

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
                out[row, int.from_bytes(digest, "little") % self._dim] += 1.0
            out[row, 0] += 1e-3  # never the zero vector
        return normalise(out)

    def embed_query(self, text: str) -> Vectors:
        vector: Vectors = self.embed([text])[0]
        return vector


@register("hashing")
def _create(settings: Settings) -> HashingEmbedder:
    """64 dimensions, or n with `embedder.model = "hashing-n"` (a benchmark's bed the size
    of a real model's vectors)."""
    named = re.fullmatch(r"hashing-(\d{1,4})", settings.embedder.model)
    return (
        HashingEmbedder(int(named.group(1))) if named and int(named.group(1)) else HashingEmbedder()
    )
