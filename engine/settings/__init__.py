"""One Settings object, declared as data, read from config file, environment and flags.

Precedence, lowest first: declared defaults, the TOML config file, the environment
(`MEMEX_ROOT`, `MEMEX_DB`, `MEMEX_CONFIG`), then explicit overrides (CLI flags, arguments).
An unknown key anywhere is a `SettingsError`, so typos never pass silently.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import platformdirs

from engine.settings.checks import SettingsError, allowed, coerce
from engine.settings.table import DEFAULT_HALF_LIVES, SETTINGS, SETTINGS_BY_NAME, Setting
from engine.settings.views import (
    VIEWS,
    DesktopSettings,
    DiscoverySettings,
    EmbedderSettings,
    MaintenanceSettings,
    PeopleSettings,
    RerankSettings,
    SearchSettings,
    WatchSettings,
    build_view,
)

APP_NAME = "memex"


@dataclass(frozen=True)
class Route:
    """A path pattern, relative to a root, mapped to a source type."""

    pattern: str
    source_type: str
    enabled: bool = True


@dataclass(frozen=True)
class Settings:
    """Every setting, flattened under dotted names, plus the routes of the config file."""

    values: Mapping[str, Any]
    routes: tuple[Route, ...] = ()
    config_path: Path | None = None
    now: str | None = None  # fixed "today" (ISO date) for deterministic tests; None = clock

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    @cached_property
    def search(self) -> SearchSettings:
        return build_view(SearchSettings, self.values, "search")

    @cached_property
    def embedder(self) -> EmbedderSettings:
        return build_view(EmbedderSettings, self.values, "embedder")

    @cached_property
    def rerank(self) -> RerankSettings:
        return build_view(RerankSettings, self.values, "rerank")

    @cached_property
    def watch(self) -> WatchSettings:
        return build_view(WatchSettings, self.values, "watch")

    @cached_property
    def maintenance(self) -> MaintenanceSettings:
        return build_view(MaintenanceSettings, self.values, "maintenance")

    @cached_property
    def discovery(self) -> DiscoverySettings:
        return build_view(DiscoverySettings, self.values, "discovery")

    @cached_property
    def desktop(self) -> DesktopSettings:
        return build_view(DesktopSettings, self.values, "desktop")

    @cached_property
    def people(self) -> PeopleSettings:
        return build_view(PeopleSettings, self.values, "people")

    @property
    def people_file(self) -> str:
        return str(self.values["people_file"])

    @property
    def languages(self) -> tuple[str, ...]:
        """The `languages` setting: the codes chunks' languages are told among."""
        return tuple(str(code) for code in self.values["languages"])

    @property
    def max_file_bytes(self) -> int:
        return int(self.values["max_file_bytes"])

    @property
    def follow_symlinks_outside_roots(self) -> bool:
        return bool(self.values["follow_symlinks_outside_roots"])

    @property
    def roots(self) -> tuple[Path, ...]:
        return tuple(Path(os.path.expanduser(r)).resolve() for r in self.values["roots"])

    @property
    def db_path(self) -> Path:
        configured = self.values["db"]
        if configured:
            return Path(os.path.expanduser(configured))
        return Path(platformdirs.user_data_dir(APP_NAME)) / "memex.db"

    @property
    def log_path(self) -> Path:
        configured = self.values["log_dir"]
        folder = (
            Path(os.path.expanduser(configured))
            if configured
            else Path(platformdirs.user_log_dir(APP_NAME))
        )
        return folder / "runs.jsonl"

    def with_values(self, **changes: Any) -> Settings:
        """A copy with some settings changed; keys use `__` for dots (search__limit)."""
        merged = dict(self.values)
        for key, value in changes.items():
            name = key.replace("__", ".")
            merged[name] = _coerce(name, value)
        return replace(self, values=merged)


def default_config_path() -> Path:
    return Path(platformdirs.user_config_dir(APP_NAME)) / "config.toml"


def _coerce(name: str, value: Any) -> Any:
    """The value checked against its row (type, range, choices: `engine.settings.checks`)."""
    setting = SETTINGS_BY_NAME.get(name)
    if setting is None:
        raise SettingsError(f"unknown setting '{name}'")
    value = coerce(setting, value)
    if name == "search.half_lives":
        return {**DEFAULT_HALF_LIVES, **value}
    return value


def _flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and name not in SETTINGS_BY_NAME:
            flat.update(_flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def _routes_from(raw: Any, source: str) -> tuple[Route, ...]:
    if not isinstance(raw, list):
        raise SettingsError(f"{source}: [[routes]] must be a list of tables")
    routes = []
    for item in raw:
        if not isinstance(item, dict) or "pattern" not in item:
            raise SettingsError(f"{source}: each [[routes]] needs a pattern")
        unknown = set(item) - {"pattern", "source_type", "enabled"}
        if unknown:
            raise SettingsError(f"{source}: unknown route key(s) {sorted(unknown)}")
        route = Route(item["pattern"], item.get("source_type", ""), item.get("enabled", True))
        wrong = _route_problem(route)
        if wrong:
            raise SettingsError(f"{source}: [[routes]] {wrong}")
        routes.append(route)
    return tuple(routes)


def _route_problem(route: Route) -> str | None:
    """What is wrong with a route's values, in words, or None."""
    if not isinstance(route.pattern, str) or not route.pattern.strip() or "\x00" in route.pattern:
        return f"pattern must be a non-empty string, got {route.pattern!r}"
    if not isinstance(route.source_type, str) or "\x00" in route.source_type:
        return f"source_type must be a string, got {route.source_type!r}"
    if not isinstance(route.enabled, bool):
        return f"enabled must be true or false, got {route.enabled!r}"
    return None


def read_config(path: Path) -> tuple[dict[str, Any], tuple[Route, ...]]:
    """Parse a config file into flat values and routes; unknown keys are an error."""
    try:
        raw = tomllib.loads(path.read_bytes().decode("utf-8-sig"))  # a BOM is harmless
    except UnicodeDecodeError as exc:
        byte = exc.object[exc.start]
        raise SettingsError(
            f"config file {path} is not UTF-8 text (byte {exc.start} is {byte:#04x}); "
            "save it as UTF-8"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"config file {path} is not valid TOML: {exc}") from None
    except OSError as exc:
        raise SettingsError(f"cannot read config file {path}: {exc.strerror}") from None
    routes = _routes_from(raw.pop("routes", []), f"config file {path}")
    values = {}
    for name, value in _flatten(raw).items():
        try:
            values[name] = _coerce(name, value)
        except SettingsError as exc:
            raise SettingsError(f"config file {path}: {exc}") from None
    return values, routes


ENVIRONMENT = {"MEMEX_ROOT": "roots", "MEMEX_DB": "db"}


def _from_environment(env: Mapping[str, str]) -> dict[str, Any]:
    """The settings the environment sets, checked like the config file's."""
    values = {}
    for variable, name in ENVIRONMENT.items():
        if not env.get(variable):
            continue
        raw = env[variable]
        value: Any = [p for p in raw.split(os.pathsep) if p] if name == "roots" else raw
        try:
            values[name] = _coerce(name, value)
        except SettingsError as exc:
            raise SettingsError(f"environment variable {variable}: {exc}") from None
    return values


def load_settings(
    config: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    **overrides: Any,
) -> Settings:
    """Build the Settings: defaults, then config file, then environment, then overrides.

    `overrides` use `__` for dots (`search__limit=5`); `roots` and `db` may be given directly.
    """
    env = os.environ if env is None else env
    values: dict[str, Any] = {s.name: s.default for s in SETTINGS}
    config_path = (
        Path(config)
        if config
        else (Path(env["MEMEX_CONFIG"]) if env.get("MEMEX_CONFIG") else default_config_path())
    )
    routes: tuple[Route, ...] = ()
    explicit = bool(config) or bool(env.get("MEMEX_CONFIG"))
    if config_path.exists():
        file_values, routes = read_config(config_path)
        values.update(file_values)
    elif explicit:
        raise SettingsError(f"config file {config_path} does not exist")
    values.update(_from_environment(env))
    now = overrides.pop("now", None)
    for key, value in overrides.items():
        if value is None:
            continue
        name = key.replace("__", ".")
        values[name] = _coerce(name, [str(v) for v in value] if name == "roots" else value)
    return Settings(values=values, routes=routes, config_path=config_path, now=now)


def option_overrides(roots: Sequence[str] | None, db: str | None) -> dict[str, Any]:
    """A front end's `--root` (repeatable) and `--db` as `load_settings` overrides, each
    path made absolute (`~` expanded) so that a reload from another folder keeps them."""
    overrides: dict[str, Any] = {}
    if roots:
        overrides["roots"] = [str(Path(r).expanduser().resolve()) for r in roots]
    if db:
        overrides["db"] = str(Path(db).expanduser().resolve())
    return overrides


def settings_from_options(
    roots: Sequence[str] | None, db: str | None, config: str | None
) -> Settings:
    """The Settings a front end's `--root`/`--db`/`--config` name: the config file and the
    environment, then those options (the CLI and the desktop app read them alike).
    Raises SettingsError with one sentence."""
    return load_settings(config, **option_overrides(roots, db))


def describe_settings() -> list[dict[str, str]]:
    """The declared settings, for docs and `memex status --settings`."""
    return [
        {
            "name": s.name,
            "type": s.type.__name__,
            "default": repr(s.default),
            "help": s.help,
            "allowed": allowed(s),
        }
        for s in SETTINGS
    ]


__all__ = [
    "DEFAULT_HALF_LIVES",
    "SETTINGS",
    "SETTINGS_BY_NAME",
    "VIEWS",
    "DesktopSettings",
    "DiscoverySettings",
    "EmbedderSettings",
    "MaintenanceSettings",
    "RerankSettings",
    "Route",
    "SearchSettings",
    "Setting",
    "Settings",
    "SettingsError",
    "WatchSettings",
    "default_config_path",
    "describe_settings",
    "load_settings",
    "option_overrides",
    "read_config",
    "settings_from_options",
]
