"""Which warm process may answer a search: the one whose index and settings are the same.

The socket is named by the index file's resolved path; the identity, checked in every
request, is a hash of everything a search's output depends on: every setting's value except
the watcher's, the desktop's and maintenance's (`IGNORED`) and a warm process's lifetime
(`LIFETIME`), the routes, the index file and
roots as resolved paths, the fixed clock of tests, and the environment variables this
search reads besides the settings (`answer_env`: TZ, since dates in queries are read on the
local clock; with the OpenAI-compatible embedder or the HTTP re-ranker, their API keys and
the proxy and certificate variables their HTTP calls obey). A config file edited after the
server started, another `--root`, `MEMEX_DB` or `--config`, another embedder, a re-rank key
set in the client's shell but not in the server's: another identity, so the server declines
and the one-shot path answers.

The identity a request carries is the client's word; the server also reads the request's
own `--root/--db/--config` (from the client's working folder, `named_identity`) and declines
when the settings they name are not its own: a request about another index is never
answered from this one, whatever identity it carries.

The variables enter as hashes, never as values, and the identity is one digest of all
of it: what a client sends reveals no key, and it is sent only to a process of the same user.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from engine.settings import Settings, load_settings

IGNORED = ("watch.", "desktop.", "maintenance.")  # read by no search
LIFETIME = ("search.warm_autostart", "search.warm_idle_minutes")  # when a server runs, not what
NETWORK_ENV = (
    *("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"),
    *("http_proxy", "https_proxy", "all_proxy", "no_proxy"),
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
)
EMBEDDER_ENV = ("OPENAI_API_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "PYTHON_KEYRING_BACKEND")
RERANK_ENV = ("MEMEX_RERANK_API_KEY",)
ANSWER_ENV = ("TZ", *EMBEDDER_ENV, *RERANK_ENV, *NETWORK_ENV)  # every variable that may count
RESOLVED = ("db", "roots")  # compared as resolved paths: `~/x.db` and `/home/me/x.db` agree


def identity(settings: Settings, env: Mapping[str, str]) -> str:
    """The hex digest both sides compute from their own Settings and environment."""
    payload = {
        "values": {
            k: v
            for k, v in settings.values.items()
            if not k.startswith(IGNORED) and k not in RESOLVED and k not in LIFETIME
        },
        "routes": [asdict(r) for r in settings.routes],
        "db": str(settings.db_path.resolve()),
        "roots": [str(r) for r in settings.roots],
        "now": settings.now,
        "env": environment_digest(env, answer_env(settings)),
    }
    text = json.dumps(payload, sort_keys=True, default=_text, ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def answer_env(settings: Settings) -> tuple[str, ...]:
    """The variables that can change this search's answer: TZ always; the embedder's key
    and the proxies only with the OpenAI-compatible embedder, the re-ranker's with the
    HTTP re-ranker. A proxy set in the shell but not in the app's session is no reason to
    decline a search that sends nothing over the network."""
    remote_embedder = settings.embedder.name == "openai"
    remote_rerank = settings.rerank.backend == "http"
    return (
        "TZ",
        *(EMBEDDER_ENV if remote_embedder else ()),
        *(RERANK_ENV if remote_rerank else ()),
        *(NETWORK_ENV if remote_embedder or remote_rerank else ()),
    )


def environment_digest(env: Mapping[str, str], names: Sequence[str] = ANSWER_ENV) -> dict[str, str]:
    """Each set variable's hash (a key's value never leaves as itself)."""
    return {
        name: hashlib.sha256(f"memex-warm-env\0{name}\0{env[name]}".encode()).hexdigest()
        for name in names
        if env.get(name)
    }


def _text(value: Any) -> str:
    return str(value)


def cli_settings(root: Sequence[str] | None, db: str | None, config: str | None) -> Settings:
    """The Settings `engine.cli.common.settings_from` builds from these options."""
    overrides: dict[str, Any] = {}
    if root:
        overrides["roots"] = [str(Path(r).expanduser().resolve()) for r in root]
    if db:
        overrides["db"] = str(Path(db).expanduser().resolve())
    return load_settings(config, **overrides)


def named_identity(common: Mapping[str, Any], cwd: str, env: Mapping[str, str]) -> str | None:
    """The identity of the settings a request's own `--root/--db/--config` name, their
    relative paths read from the client's working folder `cwd`, the rest as this process
    reads it; None when the request names none of them (its identity speaks for itself).
    ValueError when it names a relative path and gives no working folder."""
    root, db, config = common.get("root"), common.get("db"), common.get("config")
    if not (root or db or config):
        return None

    def absolute(option: str) -> str:
        path = Path(option).expanduser()
        if path.is_absolute():
            return str(path)
        if not os.path.isabs(cwd):
            raise ValueError(f"{option!r} is relative and the request gives no working folder")
        return str(Path(cwd) / path)

    settings = cli_settings(
        [absolute(r) for r in root] if root else None,
        absolute(db) if db else None,
        absolute(config) if config else None,
    )
    return identity(settings, env)
