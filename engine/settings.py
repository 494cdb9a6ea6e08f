"""One Settings object, declared as data, read from config file, environment and flags.

Precedence, lowest first: declared defaults, the TOML config file, the environment
(`MEMEX_ROOT`, `MEMEX_DB`, `MEMEX_CONFIG`), then explicit overrides (CLI flags, arguments).
An unknown key anywhere is a `SettingsError`, so typos never pass silently.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

import platformdirs

APP_NAME = "memex"


class SettingsError(ValueError):
    """A config file, environment variable or flag that cannot be used."""


@dataclass(frozen=True)
class Setting:
    """One declared setting: its dotted name, type, default and help text."""

    name: str
    type: type
    default: Any
    help: str


DEFAULT_HALF_LIVES: dict[str, float] = {
    "slack": 35, "telegram": 35, "signal": 35, "meeting": 60, "email_catalog": 90,
    "event": 60, "garmin": 14, "cgm": 14, "observation": 365, "quote": 365, "story": 365,
    "transcript": 120, "voice": 60, "checkin": 30, "experiment": 60, "interview": 365,
    "interview_meta": 365, "journal": 60, "scratch": 14, "board_summary": 60,
    "rwgps_memory": 180, "podcast_digest": 30, "entity_file": 365, "codebase_doc": 365,
    "note": 60,
}

SETTINGS: tuple[Setting, ...] = (
    Setting("roots", list, [], "Data layer root folders (MEMEX_ROOT, --root)."),
    Setting("db", str, "", "Index file; empty means the platform data folder's memex.db."),
    Setting("log_dir", str, "", "Run log folder; empty means the platform log folder."),
    Setting("people_file", str, "profile/relationships.json",
            "Known people, relative to each root."),
    Setting("max_file_bytes", int, 64 * 1024 * 1024, "Files larger than this are skipped."),
    Setting("embedder.name", str, "local", "local | openai | sentence-transformers | hashing."),
    Setting("embedder.model", str, "text-embedding-3-small", "Model id for remote embedders."),
    Setting("embedder.base_url", str, "https://api.openai.com/v1", "OpenAI-compatible URL."),
    Setting("embedder.dimensions", int, 1536, "Requested dimension for remote embedders."),
    Setting("embedder.model_path", str, "", "Folder of a sentence-transformers model."),
    Setting("embedder.batch_size", int, 32, "Texts per embedding batch."),
    Setting("embedder.max_tokens", int, 256, "Tokens the local model reads per text."),
    Setting("embedder.timeout_seconds", float, 30.0, "Request timeout for remote embedders."),
    Setting("embedder.max_retries", int, 5, "Retries for remote embedders before giving up."),
    Setting("search.limit", int, 10, "Results returned by default."),
    Setting("search.overfetch", int, 5, "Each retriever fetches limit × overfetch candidates."),
    Setting("search.min_candidates", int, 50,
            "Each retriever fetches at least this many candidates, whatever the limit."),
    Setting("search.rrf_k", float, 10.0,
            "Reciprocal Rank Fusion constant k (smaller trusts each list's head more)."),
    Setting("search.bm25_weight", float, 1.0, "Weight of the keyword list in fusion."),
    Setting("search.vector_weight", float, 1.0, "Weight of the vector list in fusion."),
    Setting("search.exact_weight", float, 1.0,
            "Weight of the list of chunks holding every query term (hybrid only; 0 = off)."),
    Setting("search.decay_floor", float, 0.25, "Recency decay never goes below this factor."),
    Setting("search.default_half_life", float, 60.0, "Half-life (days) of unlisted types."),
    Setting("search.half_lives", dict, DEFAULT_HALF_LIVES, "Half-life in days per source type."),
    Setting("search.recency", bool, True, "Apply recency decay."),
    Setting("search.recency_weight", float, 0.2,
            "Share of the score recency decay acts on: score × ((1 − w) + w × decay)."),
    Setting("search.entity_injection", bool, True, "Inject a profile for a named person."),
    Setting("search.diversity", bool, False,
            "Apply MMR diversity to the head of the list (off: it cost relevance in benchmarks)."),
    Setting("search.mmr_lambda", float, 0.7, "MMR trade-off between relevance and novelty."),
    Setting("search.mmr_top", int, 7, "Size of the head that MMR reorders."),
    Setting("search.max_per_type", int, 3, "At most this many hits of one type in the head."),
    Setting("search.snippet_chars", int, 220, "Length of a snippet."),
    Setting("search.stop_words", bool, True, "Drop English stop words from keyword queries."),
    Setting("search.vector_cache", bool, True,
            "Long-lived processes (desktop, engine.search) keep the vectors in memory for "
            "vector search (~1.5 KB per chunk); one-shot `memex --search` never does."),
    Setting("watch.debounce_seconds", float, 2.0, "Quiet period before a changed file is indexed."),
    Setting("watch.reconcile_seconds", float, 300.0, "Interval of the full mtime/size scan."),
    Setting("watch.polling", bool, False, "Use the polling observer (network drives)."),
    Setting("maintenance.bloat_threshold", float, 0.25,
            "Dead vector slots (fraction) at which maintenance is suggested."),
    Setting("desktop.hotkey", str, "<ctrl>+<alt>+<space>", "Global hotkey (pynput syntax)."),
    Setting("desktop.editor_command", str, "", "Opener with {file} and {line}; empty: system."),
    Setting("desktop.start_at_login", bool, False, "Start Memex when the user logs in."),
    Setting("desktop.watching", bool, True, "Watch the data roots for changes."),
    Setting("desktop.disabled_types", list, [], "Source types left out of the index."),
    Setting("desktop.theme", str, "system", "Window theme: system, light or dark."),
    Setting("desktop.result_limit", int, 30, "Hits the search window shows."),
)

SETTINGS_BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}


# -- typed views: what each part of the engine reads, checked by mypy -------------------------

@dataclass(frozen=True)
class SearchSettings:
    """The search pipeline's constants (`search.*`)."""

    limit: int
    overfetch: int
    min_candidates: int
    rrf_k: float
    bm25_weight: float
    vector_weight: float
    exact_weight: float
    decay_floor: float
    default_half_life: float
    half_lives: Mapping[str, float]
    recency: bool
    recency_weight: float
    entity_injection: bool
    diversity: bool
    mmr_lambda: float
    mmr_top: int
    max_per_type: int
    snippet_chars: int
    stop_words: bool
    vector_cache: bool


@dataclass(frozen=True)
class EmbedderSettings:
    """Which embedder, and how it runs (`embedder.*`)."""

    name: str
    model: str
    base_url: str
    dimensions: int
    model_path: str
    batch_size: int
    max_tokens: int
    timeout_seconds: float
    max_retries: int


@dataclass(frozen=True)
class WatchSettings:
    """The file watcher (`watch.*`)."""

    debounce_seconds: float
    reconcile_seconds: float
    polling: bool


@dataclass(frozen=True)
class MaintenanceSettings:
    """When maintenance is suggested (`maintenance.*`)."""

    bloat_threshold: float


@dataclass(frozen=True)
class DesktopSettings:
    """The desktop app's user settings (`desktop.*`)."""

    hotkey: str
    editor_command: str
    start_at_login: bool
    watching: bool
    disabled_types: tuple[str, ...]
    theme: str
    result_limit: int


VIEWS: dict[str, type] = {"search": SearchSettings, "embedder": EmbedderSettings,
                          "watch": WatchSettings, "maintenance": MaintenanceSettings,
                          "desktop": DesktopSettings}
View = TypeVar("View")


def _view(cls: type[View], values: Mapping[str, Any], prefix: str) -> View:
    """The `prefix.*` settings as a frozen dataclass (lists become tuples)."""
    picked = {f.name: values[f"{prefix}.{f.name}"] for f in fields(cls)}  # type: ignore[arg-type]
    return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in picked.items()})


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
        return _view(SearchSettings, self.values, "search")

    @cached_property
    def embedder(self) -> EmbedderSettings:
        return _view(EmbedderSettings, self.values, "embedder")

    @cached_property
    def watch(self) -> WatchSettings:
        return _view(WatchSettings, self.values, "watch")

    @cached_property
    def maintenance(self) -> MaintenanceSettings:
        return _view(MaintenanceSettings, self.values, "maintenance")

    @cached_property
    def desktop(self) -> DesktopSettings:
        return _view(DesktopSettings, self.values, "desktop")

    @property
    def people_file(self) -> str:
        return str(self.values["people_file"])

    @property
    def max_file_bytes(self) -> int:
        return int(self.values["max_file_bytes"])

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
        folder = Path(os.path.expanduser(configured)) if configured else Path(
            platformdirs.user_log_dir(APP_NAME))
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
    setting = SETTINGS_BY_NAME.get(name)
    if setting is None:
        raise SettingsError(f"unknown setting '{name}'")
    want = setting.type
    if want is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if want is bool and isinstance(value, str):
        if value.lower() in ("1", "true", "yes", "on"):
            return True
        if value.lower() in ("0", "false", "no", "off"):
            return False
    if want in (int, float) and isinstance(value, str):
        try:
            return want(value)
        except ValueError:
            raise SettingsError(f"setting '{name}' must be a {want.__name__}, got {value!r}") from None
    if not isinstance(value, want) or (want is int and isinstance(value, bool)):
        raise SettingsError(f"setting '{name}' must be a {want.__name__}, got {value!r}")
    if name == "search.half_lives":
        assert isinstance(value, dict)
        return {**DEFAULT_HALF_LIVES, **{str(k): float(v) for k, v in value.items()}}
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
        routes.append(Route(str(item["pattern"]), str(item.get("source_type", "")),
                            bool(item.get("enabled", True))))
    return tuple(routes)


def read_config(path: Path) -> tuple[dict[str, Any], tuple[Route, ...]]:
    """Parse a config file into flat values and routes; unknown keys are an error."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"config file {path} is not valid TOML: {exc}") from None
    except OSError as exc:
        raise SettingsError(f"cannot read config file {path}: {exc.strerror}") from None
    routes = _routes_from(raw.pop("routes", []), str(path))
    values = {}
    for name, value in _flatten(raw).items():
        try:
            values[name] = _coerce(name, value)
        except SettingsError as exc:
            raise SettingsError(f"config file {path}: {exc}") from None
    return values, routes


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
    config_path = Path(config) if config else (
        Path(env["MEMEX_CONFIG"]) if env.get("MEMEX_CONFIG") else default_config_path())
    routes: tuple[Route, ...] = ()
    explicit = bool(config) or bool(env.get("MEMEX_CONFIG"))
    if config_path.exists():
        file_values, routes = read_config(config_path)
        values.update(file_values)
    elif explicit:
        raise SettingsError(f"config file {config_path} does not exist")
    if env.get("MEMEX_ROOT"):
        values["roots"] = [p for p in env["MEMEX_ROOT"].split(os.pathsep) if p]
    if env.get("MEMEX_DB"):
        values["db"] = env["MEMEX_DB"]
    now = overrides.pop("now", None)
    for key, value in overrides.items():
        if value is None:
            continue
        name = key.replace("__", ".")
        values[name] = _coerce(name, [str(v) for v in value] if name == "roots" else value)
    return Settings(values=values, routes=routes, config_path=config_path, now=now)


def describe_settings() -> list[dict[str, str]]:
    """The declared settings, for docs and `memex status --settings`."""
    return [{"name": s.name, "type": s.type.__name__, "default": repr(s.default), "help": s.help}
            for s in SETTINGS]


__all__ = ["Route", "Setting", "Settings", "SettingsError", "SETTINGS", "load_settings",
           "read_config", "describe_settings"]
