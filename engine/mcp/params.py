"""The arguments of the MCP tools, declared once as data: each `Param` gives both its part of
the tool's JSON input schema and the check of what a client sent.

The checks are done here rather than by a schema validator so that a bad argument comes back
as one sentence a model can act on ("limit must be an integer from 1 to 50, got 0").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

Kind = Literal["text", "integer", "date", "texts", "choice"]
MAX_TEXT = 2000


class ArgumentError(ValueError):
    """A tool was called with an argument it cannot take; the message is one sentence."""


@dataclass(frozen=True)
class Param:
    """One argument of a tool: its kind, help, default and bounds."""

    name: str
    kind: Kind
    help: str
    required: bool = False
    default: Any = None
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()

    def schema(self) -> dict[str, Any]:
        """This argument's JSON Schema (a property of the tool's input schema)."""
        schema: dict[str, Any] = {**_KIND_SCHEMAS[self.kind], "description": self.help}
        if self.choices:
            schema["enum"] = list(self.choices)
        if self.minimum is not None:
            schema["minimum"] = self.minimum
        if self.maximum is not None:
            schema["maximum"] = self.maximum
        if self.default is not None:
            schema["default"] = self.default
        return schema

    def read(self, arguments: Mapping[str, Any]) -> Any:
        """The argument's value from a call, its default when absent or null."""
        value = arguments.get(self.name)
        if value is None or value == "" or value == []:
            if self.required:
                raise ArgumentError(f"{self.name} is required")
            return self.default
        return _READERS[self.kind](self, value)


def input_schema(params: Sequence[Param]) -> dict[str, Any]:
    """A tool's input schema: an object of these arguments and no others."""
    return {
        "type": "object",
        "properties": {p.name: p.schema() for p in params},
        "required": [p.name for p in params if p.required],
        "additionalProperties": False,
    }


def read_arguments(
    tool: str, params: Sequence[Param], arguments: Mapping[str, Any]
) -> dict[str, Any]:
    """Every argument's value, checked; ArgumentError names the first problem."""
    known = {p.name for p in params}
    unknown = sorted(set(arguments) - known)
    if unknown:
        takes = ", ".join(p.name for p in params) or "no arguments"
        raise ArgumentError(f"{tool} has no argument '{unknown[0]}' (it takes: {takes})")
    return {p.name: p.read(arguments) for p in params}


def _text(param: Param, value: Any) -> str:
    if not isinstance(value, str):
        raise ArgumentError(f"{param.name} must be a string, got {_shown(value)}")
    if len(value) > MAX_TEXT:
        raise ArgumentError(f"{param.name} must be at most {MAX_TEXT} characters long")
    return value


def _integer(param: Param, value: Any) -> int:
    low, high = param.minimum, param.maximum
    # bool is an int to Python, never to a caller.
    is_integer = isinstance(value, int) and not isinstance(value, bool)
    if not is_integer or (low is not None and value < low) or (high is not None and value > high):
        raise ArgumentError(
            f"{param.name} must be an integer from {low} to {high}, got {_shown(value)}"
        )
    return int(value)


def _date(param: Param, value: Any) -> str:
    text = _text(param, value).strip()
    try:
        return datetime.fromisoformat(text).date().isoformat()
    except ValueError:
        raise ArgumentError(
            f"{param.name} must be a date like 2026-05-31, got {_shown(value)}"
        ) from None


def _texts(param: Param, value: Any) -> tuple[str, ...]:
    # Models often send one string where a list is asked for: take it as a list of one.
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(i, str) and i for i in items):
        raise ArgumentError(f"{param.name} must be a list of strings, got {_shown(value)}")
    return tuple(items)


def _choice(param: Param, value: Any) -> str:
    if value not in param.choices:
        options = ", ".join(param.choices)
        raise ArgumentError(f"{param.name} must be one of {options}, got {_shown(value)}")
    return str(value)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_KIND_SCHEMAS: dict[Kind, dict[str, Any]] = {
    "text": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT},
    "integer": {"type": "integer"},
    "date": {"type": "string", "format": "date"},
    "texts": {"type": "array", "items": {"type": "string", "minLength": 1}},
    "choice": {"type": "string"},
}
_READERS = {"text": _text, "integer": _integer, "date": _date, "texts": _texts, "choice": _choice}
