"""Every value checked against its row of the SETTINGS table, before anything runs.

One function for every row, whatever its source (config file, environment, flag, the
settings dialog): the declared type (a list's items are strings, a table's values numbers),
then what the row allows — `low`, `high`, `positive` for numbers, `choices` for strings —
and what no setting may hold: a number that is not finite or does not fit in 64 bits, a
string with a NUL character. A value that fails is one sentence naming the key, the value
and what is allowed.
"""

from __future__ import annotations

import math
from typing import Any

from engine.settings.table import Setting

INT_LIMIT = 2**63 - 1  # what SQLite (and every C library below) can hold
KINDS = {int: "a whole number", float: "a number", bool: "true or false", str: "a string"}
TRUE, FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


class SettingsError(ValueError):
    """A config file, environment variable or flag that cannot be used."""


def coerce(setting: Setting, value: Any) -> Any:
    """`value` as the row's type (an int where a float is declared; a text from the
    environment or a flag where a number or a bool is), checked against what the row
    allows; SettingsError otherwise."""
    if setting.type is list:
        if not isinstance(value, list):
            raise _error(setting.name, "a list of strings", value)
        return [_scalar(f"{setting.name}[{i}]", setting, v, str) for i, v in enumerate(value)]
    if setting.type is dict:
        if not isinstance(value, dict):
            raise _error(setting.name, "a table of numbers (name = number)", value)
        return {str(k): _scalar(f"{setting.name}.{k}", setting, v, float) for k, v in value.items()}
    return _scalar(setting.name, setting, value, setting.type)


def allowed(setting: Setting, kind: type | None = None) -> str:
    """What a value of the row (or of its items) may be, in words: "a whole number from 1
    to 100000", "one of 'system', 'light', 'dark'"."""
    kind = kind or setting.type
    if kind is list:
        return "a list of strings"
    if kind is dict:
        return f"a table of {allowed(setting, float).replace('a number', 'numbers', 1)}"
    if kind is str and setting.choices:
        return "one of " + ", ".join(repr(c) for c in setting.choices)
    if kind not in (int, float):
        return KINDS.get(kind, kind.__name__)
    return KINDS[kind] + _range(setting)


def _range(setting: Setting) -> str:
    low, high = setting.low, setting.high
    if setting.positive:
        return " greater than 0" + ("" if high is None else f" and at most {_number(high)}")
    if low is not None and high is not None:
        return f" from {_number(low)} to {_number(high)}"
    if low is not None:
        return f" of at least {_number(low)}"
    return "" if high is None else f" of at most {_number(high)}"


def _number(bound: float) -> str:
    return str(int(bound)) if float(bound).is_integer() else str(bound)


def _scalar(name: str, setting: Setting, given: Any, kind: type) -> Any:
    value = _converted(kind, given)
    if not _fits(setting, kind, value):
        nul = isinstance(given, str) and "\x00" in given
        raise _error(
            name, "a string without NUL characters" if nul else allowed(setting, kind), given
        )
    return value


def _converted(kind: type, value: Any) -> Any:
    """The value as `kind` where the conversion is lossless and expected; else unchanged."""
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if kind is bool and isinstance(value, str) and value.strip().lower() in TRUE + FALSE:
        return value.strip().lower() in TRUE
    if kind in (int, float) and isinstance(value, str):
        try:
            return kind(value.strip())
        except ValueError:
            return value
    return value


def _fits(setting: Setting, kind: type, given: Any) -> bool:
    if not isinstance(given, kind) or (kind is not bool and isinstance(given, bool)):
        return False
    value: Any = given  # of `kind` now; Any again for the checks of each kind
    if kind is str:
        return "\x00" not in value and (not setting.choices or value in setting.choices)
    if kind is int and abs(value) > INT_LIMIT:
        return False
    if kind is float and not math.isfinite(value):
        return False
    return kind is bool or _in_range(setting, value)


def _in_range(setting: Setting, value: float) -> bool:
    if setting.positive and not value > 0:
        return False
    if setting.low is not None and value < setting.low:
        return False
    return setting.high is None or value <= setting.high


def _error(name: str, wanted: str, value: Any) -> SettingsError:
    shown = repr(value)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return SettingsError(f"setting '{name}' must be {wanted}, got {shown}")
