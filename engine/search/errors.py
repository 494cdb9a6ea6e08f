"""The errors a search raises, below every layer of engine/search so each may raise them."""

from __future__ import annotations


class SearchError(ValueError):
    """A search that cannot run as asked (bad mode, bad date, unknown person)."""


class NoIndexError(RuntimeError):
    """There is no index yet at the configured path."""
