"""Typed, frozen views of the settings, generated from the one table (`table.SETTINGS`).

Every dotted row `<view>.<field>` is a field of the view `<view>` (`search.rrf_k` is
`SearchSettings.rrf_k`), with the row's type: a list is a tuple of strings (frozen), a dict
a mapping of names to numbers. The classes are frozen dataclasses built here, at import,
from the table, so a setting is declared once, as a row. What mypy reads is `views.pyi`,
generated from the same table by `scripts/gen_settings_views.py` (`stub_text`);
tests/test_settings.py fails when it is not current.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field, fields, make_dataclass
from typing import Any, TypeVar

from engine.settings.table import SETTINGS, Setting

# The Python type of a view's field, per row type (values are checked against the row).
FIELD_TYPES: dict[type, Any] = {
    bool: bool,
    int: int,
    float: float,
    str: str,
    list: tuple[str, ...],
    dict: Mapping[str, float],
}
FIELD_SPELLING = {tuple[str, ...]: "tuple[str, ...]", Mapping[str, float]: "Mapping[str, float]"}
DOCS = {
    "search": "The search pipeline's constants (`search.*`).",
    "embedder": "Which embedder, and how it runs (`embedder.*`).",
    "rerank": "The re-ranking stage and its backends (`rerank.*`, engine/search/rerank/).",
    "watch": "The file watcher (`watch.*`).",
    "discovery": "What a walk of the roots enters and recognises (`discovery.*`).",
    "maintenance": "When maintenance is suggested (`maintenance.*`).",
    "desktop": "The desktop app's user settings (`desktop.*`).",
    "people": "The people directory: who gets a card, how phone numbers compare (`people.*`).",
}


def view_rows() -> dict[str, list[Setting]]:
    """The dotted rows by view, in table order (rows without a dot are Settings' own)."""
    rows: dict[str, list[Setting]] = {}
    for setting in SETTINGS:
        if "." in setting.name:
            rows.setdefault(setting.name.split(".", 1)[0], []).append(setting)
    return rows


def class_name(prefix: str) -> str:
    return "".join(word.capitalize() for word in prefix.split("_")) + "Settings"


def field_name(setting: Setting) -> str:
    return setting.name.split(".", 1)[1].replace(".", "_")


def _view(prefix: str, rows: list[Setting]) -> type:
    made = make_dataclass(
        class_name(prefix),
        [(field_name(s), FIELD_TYPES[s.type], field(metadata={"setting": s.name})) for s in rows],
        frozen=True,
    )
    made.__module__ = __name__  # pickling and reprs find it here
    made.__doc__ = DOCS.get(prefix, f"The `{prefix}.*` settings.")
    return made


VIEWS: dict[str, type] = {prefix: _view(prefix, rows) for prefix, rows in view_rows().items()}
# Each view by its class name (SearchSettings, EmbedderSettings, …), as views.pyi declares.
globals().update({view.__name__: view for view in VIEWS.values()})
View = TypeVar("View")


def build_view(cls: type[View], values: Mapping[str, Any], prefix: str) -> View:
    """The `prefix.*` settings as a frozen view (lists become tuples)."""
    picked = {f.name: values[f.metadata["setting"]] for f in fields(cls)}  # type: ignore[arg-type]
    return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in picked.items()})


def stub_text() -> str:
    """views.pyi: what mypy knows of this module, from the table."""
    lines = [
        '"""Generated from engine/settings/table.py by scripts/gen_settings_views.py; do not',
        'edit (tests/test_settings.py checks that it is current)."""',
        "",
        "from collections.abc import Mapping",
        "from dataclasses import dataclass",
        "from typing import Any, TypeVar",
        "",
        "from engine.settings.table import Setting",
        "",
        "FIELD_TYPES: dict[type, Any]",
        "FIELD_SPELLING: dict[Any, str]",
        "DOCS: dict[str, str]",
    ]
    for prefix, rows in view_rows().items():
        lines += ["", "@dataclass(frozen=True)", f"class {class_name(prefix)}:"]
        lines.append(f'    """{DOCS.get(prefix, f"The `{prefix}.*` settings.")}"""')
        lines.append("")
        for s in rows:
            kind = FIELD_TYPES[s.type]
            lines.append(f"    {field_name(s)}: {FIELD_SPELLING.get(kind, kind.__name__)}")
    lines += [
        "",
        "VIEWS: dict[str, type]",
        'View = TypeVar("View")',
        "",
        "def view_rows() -> dict[str, list[Setting]]: ...",
        "def class_name(prefix: str) -> str: ...",
        "def field_name(setting: Setting) -> str: ...",
        "def build_view(cls: type[View], values: Mapping[str, Any], prefix: str) -> View: ...",
        "def stub_text() -> str: ...",
    ]
    return "\n".join(lines) + "\n"
