"""Where the OpenAI API key comes from: the environment first, then the system keyring.

Secrets are not settings: they never enter `Settings`, the config file or the database,
and nothing here logs or prints a key. The environment is passed in (`env=`) so that
callers and tests decide what it is; keyring is imported lazily (it is an optional extra).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

ENV_VAR = "OPENAI_API_KEY"
KEYRING_SERVICE = "memex"
KEYRING_USER = "openai"
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})


class KeyringUnavailable(RuntimeError):
    """No usable keyring backend on this machine (e.g. headless Linux)."""


@dataclass(frozen=True)
class ApiKey:
    """A key and where it came from ('env' or 'keyring'); repr never shows the key."""

    value: str
    source: str

    def __repr__(self) -> str:
        return f"ApiKey(source={self.source!r})"


def _keyring() -> Any:
    """The keyring module with a real backend, or KeyringUnavailable."""
    try:
        import keyring
        from keyring.backends import fail
    except ImportError:
        raise KeyringUnavailable(
            "the keyring package is not installed (pip install 'memex[openai]')"
        ) from None
    if isinstance(keyring.get_keyring(), fail.Keyring):
        raise KeyringUnavailable("no system keyring is available on this machine")
    return keyring


def keyring_get(user: str = KEYRING_USER) -> str | None:
    """The key stored in the keyring for `user` (the OpenAI key unless told), or None; a
    broken keyring counts as no key."""
    try:
        value = _keyring().get_password(KEYRING_SERVICE, user)
    except KeyringUnavailable:
        return None
    except Exception:  # any backend failure (D-Bus down, locked) must not stop search
        return None
    return str(value) if value else None


def keyring_set(value: str) -> None:
    """Store the key in the system keyring; KeyringUnavailable if there is none."""
    module = _keyring()
    from keyring.errors import KeyringError

    try:
        module.set_password(KEYRING_SERVICE, KEYRING_USER, value)
    except KeyringError as exc:
        raise KeyringUnavailable(
            f"the system keyring refused the key ({type(exc).__name__})"
        ) from None


def keyring_delete() -> bool:
    """Remove the stored key; False if there was none."""
    module = _keyring()
    from keyring.errors import KeyringError, PasswordDeleteError

    try:
        module.delete_password(KEYRING_SERVICE, KEYRING_USER)
    except PasswordDeleteError:
        return False
    except KeyringError as exc:
        raise KeyringUnavailable(f"the system keyring failed ({type(exc).__name__})") from None
    return True


def get_api_key(env: Mapping[str, str] | None = None) -> ApiKey | None:
    """OPENAI_API_KEY from `env` (default: the process environment), else the keyring."""
    env = os.environ if env is None else env
    value = env.get(ENV_VAR, "").strip()
    if value:
        return ApiKey(value, "env")
    stored = keyring_get()
    return ApiKey(stored, "keyring") if stored else None


def is_local_url(base_url: str) -> bool:
    """True for a server on this machine, which may need no key."""
    host = urlparse(base_url).hostname or ""
    return host in LOCAL_HOSTS or host.endswith(".localhost")
