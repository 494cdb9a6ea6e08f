"""Where the OpenAI API key comes from (the environment first, then the system keyring),
and how a key is kept out of every message.

Secrets are not settings: they never enter `Settings`, the config file or the database,
and nothing here logs or prints a key. The environment is passed in (`env=`) so that
callers and tests decide what it is; keyring is imported lazily (it is an optional extra).

The rule for messages (docs/embedders.md, "The API key"): when a request carried a key,
nothing the server answered is shown — only its status and a fixed sentence — because a
server or proxy may echo the key in any encoding. Every message about a request also
passes through `mask`, which hides the key in the forms a text can hold it.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, quote_plus

from engine.net import LOCAL_HOSTS as LOCAL_HOSTS  # re-exported: engine.net owns them
from engine.net import is_local_url as is_local_url

ENV_VAR = "OPENAI_API_KEY"
KEYRING_SERVICE = "memex"
KEYRING_USER = "openai"
MASK = "***"
RUN = 8  # characters of a key's form that count as showing it
# OpenAI key shapes, whole or cut ("sk-proj-Zx81****HdRj"), whoever's key they are.
_KEY_LIKE = re.compile(r"sk-[\w\-*]{4,}")


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


def mask(text: str, *secrets: str | None) -> str:
    """`text` with every trace of each secret replaced by `***`: any run of `RUN` or more
    characters of the secret, of its hex (either case), URL-encoded or base64 (standard or
    URL-safe, at any alignment in a longer encoded text) forms; a shorter secret wherever
    it occurs whole. Then anything shaped like an OpenAI key (`sk-…`) becomes `sk-***`."""
    hidden = [False] * len(text)
    for secret in filter(None, secrets):
        for form in _forms(secret):
            if len(form) >= RUN or form == secret:
                _mark(text, form, min(RUN, len(form)), hidden)
    return _KEY_LIKE.sub("sk-" + MASK, _hide(text, hidden))


def _forms(secret: str) -> set[str]:
    """The texts a secret can show up as."""
    raw = secret.encode("utf-8")
    forms = {secret, raw.hex(), raw.hex().upper(), quote(secret, safe=""), quote_plus(secret)}
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        forms.update(_base64_core(encode, raw, shift) for shift in range(3))
    return {f for f in forms if f}


def _base64_core(encode: Callable[[bytes], bytes], raw: bytes, shift: int) -> str:
    """The characters of the base64 of (`shift` bytes, the secret, anything) that the
    secret alone decides: the same wherever the secret sits in the encoded text."""
    encoded = encode(b"\0" * shift + raw).decode("ascii")
    return encoded[4 * -(-shift // 3) : 4 * ((shift + len(raw)) // 3)]


def _mark(text: str, form: str, run: int, hidden: list[bool]) -> None:
    """Mark in `hidden` every run of `run`+ characters of `text` that is part of `form`."""
    grams = {form[i : i + run] for i in range(len(form) - run + 1)}
    for i in range(len(text) - run + 1):
        if text[i : i + run] in grams:
            hidden[i : i + run] = [True] * run


def _hide(text: str, hidden: list[bool]) -> str:
    """`text` with each run of marked characters replaced by one `***`."""
    out: list[str] = []
    for i, char in enumerate(text):
        if not hidden[i]:
            out.append(char)
        elif i == 0 or not hidden[i - 1]:
            out.append(MASK)
    return "".join(out)
