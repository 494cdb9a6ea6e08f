"""Writing the TOML config file (tomli-w; reading is `read_config`): the one writer that the
settings dialog and `memex roots` share.

The file is read, the changed dotted keys are set in their tables, and it is written back
atomically; keys the caller does not know (routes, search constants) are kept as they were.
Comments are not kept (TOML writers do not round-trip them); the docs say so.
Secrets never come here: the API key goes to the keyring (engine.embedders.apikeys).
"""

from __future__ import annotations

import os
import tempfile
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomli_w

from engine.settings import SETTINGS_BY_NAME, read_config

FORBIDDEN = ("key", "api_key", "token", "secret", "password")


def _check(name: str) -> None:
    if name not in SETTINGS_BY_NAME:
        raise KeyError(f"unknown setting '{name}'")
    leaf = name.rsplit(".", 1)[-1].lower()
    if any(word == leaf or leaf.endswith("_" + word) for word in FORBIDDEN):
        raise ValueError(f"'{name}' looks like a secret; secrets belong in the keyring")


def write_config(
    path: Path, changes: Mapping[str, Any], routes: list[dict[str, Any]] | None = None
) -> None:
    """Set dotted settings (`embedder.name`) in the config file, creating it if needed.

    `routes`, when given, replaces the `[[routes]]` list. The result is validated with the
    engine's own reader before it replaces the old file.
    """
    data: dict[str, Any] = {}
    if path.exists():
        data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
    for name, value in changes.items():
        _check(name)
        table = data
        *parents, leaf = name.split(".")
        for part in parents:
            table = table.setdefault(part, {})
        table[leaf] = value
    if routes is not None:
        data["routes"] = routes
    _replace(path, tomli_w.dumps(_plain_first(data)))


def _replace(path: Path, text: str) -> None:
    """Write `text` beside `path`, check it reads back, then move it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".config-", suffix=".toml", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        read_config(Path(tmp))  # never leave a file the engine would refuse
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _plain_first(data: dict[str, Any]) -> dict[str, Any]:
    """Top-level keys before tables, so the file reads like the documented example."""
    plain = {k: v for k, v in data.items() if not isinstance(v, dict) and k != "routes"}
    tables = {k: v for k, v in data.items() if isinstance(v, dict)}
    rest = {"routes": data["routes"]} if "routes" in data else {}
    return {**plain, **tables, **rest}
