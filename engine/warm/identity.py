"""Which warm process may answer a search: the one whose index and settings are the same.

The socket is named by the index file's resolved path; the identity, checked in every
request, is a hash of everything a search's output depends on: every setting's value except
the watcher's, the desktop's and maintenance's (`IGNORED`), the routes, the index file and
roots as resolved paths, the fixed clock of tests, and the TZ variable (dates in queries are
read on the local clock). A config file edited after the server started, another `--root`,
`MEMEX_DB` or `--config`, another embedder: another identity, so the one-shot path answers.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from engine.settings import Settings, load_settings

IGNORED = ("watch.", "desktop.", "maintenance.")  # read by no search
RESOLVED = ("db", "roots")  # compared as resolved paths: `~/x.db` and `/home/me/x.db` agree


def identity(settings: Settings, env: Mapping[str, str]) -> str:
    """The hex digest both sides compute from their own Settings and environment."""
    payload = {
        "values": {
            k: v
            for k, v in settings.values.items()
            if not k.startswith(IGNORED) and k not in RESOLVED
        },
        "routes": [asdict(r) for r in settings.routes],
        "db": str(settings.db_path.resolve()),
        "roots": [str(r) for r in settings.roots],
        "now": settings.now,
        "tz": env.get("TZ", ""),
    }
    text = json.dumps(payload, sort_keys=True, default=_text, ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


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
