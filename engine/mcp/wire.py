"""The MCP stdio wire format: one JSON-RPC message per line, read and written by pure functions.

The SDK's own stdio transport parses each line with pydantic's JSON parser, which rejects
JSON's lone-surrogate escapes ("\\ud800" is valid JSON) and answers nothing for a line it
cannot parse: the client waits for a response that never comes. Here a line is parsed with
Python's `json`, every string in it except the request id is made clean (`engine.text`: a
lone surrogate becomes U+FFFD), and only then is it validated as a JSON-RPC message, so:

- a valid request reaches the server whatever its strings hold (tool arguments, the method
  name, `_meta`); its id is kept exactly as sent, so the response carries it back;
- a line that is not JSON gets the spec's parse error (-32700, id null);
- JSON that is not a JSON-RPC message (an array, a number, an object without `jsonrpc`, a
  request whose id is neither a string nor an integer) gets an invalid request error
  (-32600), with the id when one could be read;
- a blank line is skipped, as between messages.

Writing escapes any lone surrogate left in a message (an echoed id, text from the index) as
`\\udXXX`, so encoding a response never fails.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, NoReturn

import mcp_types as types
from pydantic import ValidationError

from engine.text import clean_json

# Far above any real request (a tool's text arguments stop at 2,000 characters) and small
# enough that a runaway client cannot make the server hold gigabytes for one line.
MAX_LINE_BYTES = 4 * 1024 * 1024
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Reply:
    """An error response the transport writes itself: the line never reaches the server."""

    payload: dict[str, Any]


Inbound = types.JSONRPCMessage | Reply | None


def error_payload(request_id: Any, code: int, message: str) -> dict[str, Any]:
    """A JSON-RPC error response."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def oversized_reply() -> Reply:
    return Reply(
        error_payload(None, types.INVALID_REQUEST, f"Invalid Request: over {MAX_LINE_BYTES} bytes")
    )


def decode_line(raw: bytes) -> Inbound:
    """One line of the wire as a message for the server, a `Reply` for the client, or None."""
    text = raw.decode("utf-8", errors="replace").strip()
    if not text:
        return None
    try:
        value = json.loads(text, parse_constant=_not_json)
    except (ValueError, RecursionError):
        return Reply(error_payload(None, types.PARSE_ERROR, "Parse error: the line is not JSON"))
    try:
        return _message(value)
    except RecursionError:
        return _invalid(value, "nested too deeply")


def _message(value: Any) -> types.JSONRPCMessage | Reply:
    if not isinstance(value, dict):
        what = "batches are not supported" if isinstance(value, list) else "not an object"
        return _invalid(None, what)
    request_id = value.get("id")
    if "method" in value and "id" in value and not is_request_id(request_id):
        return _invalid(None, "id must be a string or an integer")
    cleaned = {key: clean_json(item) for key, item in value.items() if key != "id"}
    if "id" in value:
        cleaned["id"] = request_id  # as sent: the response must carry it back unchanged
    try:
        return types.jsonrpc_message_adapter.validate_python(cleaned, by_name=False)
    except ValidationError:
        return _invalid(value, "not a JSON-RPC 2.0 message")


def _invalid(value: Any, why: str) -> Reply:
    request_id = value.get("id") if isinstance(value, dict) else None
    shown = request_id if is_request_id(request_id) else None
    return Reply(error_payload(shown, types.INVALID_REQUEST, f"Invalid Request: {why}"))


def is_request_id(value: Any) -> bool:
    """MCP's request ids: a string or an integer (never null, a bool or a fraction)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _not_json(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


def encode_payload(payload: dict[str, Any]) -> bytes:
    """One line of the wire: compact JSON in UTF-8, lone surrogates escaped."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return _LONE_SURROGATE.sub(_escape, text).encode("utf-8") + b"\n"


def _escape(match: re.Match[str]) -> str:
    # json.dumps leaves characters inside string literals only, where an escape is valid.
    return f"\\u{ord(match.group()):04x}"


def encode_message(message: types.JSONRPCMessage) -> bytes | None:
    """The line for a message from the server. A response that cannot be written becomes an
    internal error, so its request is still answered; any other such message, None."""
    try:
        return encode_payload(message.model_dump(by_alias=True, exclude_unset=True, mode="json"))
    except (ValueError, TypeError, RecursionError):
        if not isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            return None
        failure = "Internal error: the response could not be encoded"
        return encode_payload(error_payload(message.id, types.INTERNAL_ERROR, failure))
