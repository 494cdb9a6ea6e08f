"""An in-memory keyring backend for tests (the real one is absent on headless Linux)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import keyring
import keyring.backend
from keyring.errors import PasswordDeleteError


class MemoryKeyring(keyring.backend.KeyringBackend):
    priority = 1  # type: ignore[assignment]

    def __init__(self, store: dict[str, str]) -> None:
        super().__init__()
        self.store = store

    def get_password(self, service: str, username: str) -> str | None:
        return self.store.get(f"{service}/{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        self.store[f"{service}/{username}"] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.store.pop(f"{service}/{username}", None) is None:
            raise PasswordDeleteError("no such password")


@contextmanager
def installed() -> Iterator[dict[str, str]]:
    """Install an in-memory keyring; yields its store ({"service/user": secret})."""
    previous = keyring.get_keyring()
    store: dict[str, str] = {}
    keyring.set_keyring(MemoryKeyring(store))
    yield store
    keyring.set_keyring(previous)
