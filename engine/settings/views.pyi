"""Generated from engine/settings/table.py by scripts/gen_settings_views.py; do not
edit (tests/test_settings.py checks that it is current)."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from engine.settings.table import Setting

FIELD_TYPES: dict[type, Any]
FIELD_SPELLING: dict[Any, str]
DOCS: dict[str, str]

@dataclass(frozen=True)
class PeopleSettings:
    """The people directory: who gets a card, how phone numbers compare (`people.*`)."""

    card_min_sources: int
    card_min_messages: int
    country_code: str
    me: str

@dataclass(frozen=True)
class DiscoverySettings:
    """What a walk of the roots enters and recognises (`discovery.*`)."""

    recognise_by_content: bool
    read_archives: bool
    exclude_folders: tuple[str, ...]

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
    input_type: bool

@dataclass(frozen=True)
class SearchSettings:
    """The search pipeline's constants (`search.*`)."""

    limit: int
    overfetch: int
    min_candidates: int
    rrf_k: float
    bm25_weight: float
    vector_weight: float
    coverage_weight: float
    vector_prf: bool
    vector_prf_beta: float
    vector_prf_depth: int
    name_aliases: bool
    floor: bool
    floor_cosine: float
    floor_cosine_low: float
    floor_cosine_margin: float
    floor_cosine_spread: float
    floor_keyword: float
    decay_floor: float
    default_half_life: float
    half_lives: Mapping[str, float]
    recency: bool
    recency_weight: float
    query_dates: str
    query_date_boost: float
    entity_injection: bool
    entity_first: bool
    group_sections: bool
    group_types: tuple[str, ...]
    group_lift: float
    frecency: bool
    frecency_weight: float
    frecency_half_life: float
    related: bool
    related_limit: int
    related_from: int
    diversity: bool
    mmr_lambda: float
    mmr_top: int
    max_per_type: int
    snippet_chars: int
    stop_words: bool
    vector_cache: bool
    keyword_index: bool
    vector_scan: str
    vector_rescore: int
    warm_cli: bool
    warm_autostart: bool
    warm_idle_minutes: float

@dataclass(frozen=True)
class RerankSettings:
    """The re-ranking stage and its backends (`rerank.*`, engine/search/rerank/)."""

    backend: str
    depth: int
    max_chars: int
    base_url: str
    model: str
    request_format: str
    timeout_seconds: float
    max_retries: int
    retry_wait_seconds: float
    cooldown_seconds: float
    model_path: str
    max_tokens: int
    batch_size: int

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

VIEWS: dict[str, type]
View = TypeVar("View")

def view_rows() -> dict[str, list[Setting]]: ...
def class_name(prefix: str) -> str: ...
def field_name(setting: Setting) -> str: ...
def build_view(cls: type[View], values: Mapping[str, Any], prefix: str) -> View: ...
def stub_text() -> str: ...
