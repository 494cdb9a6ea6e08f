"""Indexing: routes and discovery, the indexer, the one writer, the watcher, maintenance."""
