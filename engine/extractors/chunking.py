"""Written once for every extractor: chat windows, JSONL records, chunk sizes, decoding, hashing."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from engine.extractors.base import ExtractError, Extraction
from engine.extractors.encodings import decode as decode  # every reader decodes here
from engine.extractors.filenames import name_stamp
from engine.records import Draft
from engine.text import clean_json, has_surrogate_escape, json_words

WINDOW_TARGET = 10  # messages per chat window on average
WINDOW_MIN = 5
WINDOW_MAX = 16
WINDOW_GAP_SECONDS = 6 * 3600  # a long silence starts a new window
SEGMENT_CHARS = 1000  # meeting segments
SECTION_MAX_CHARS = 2400  # a Markdown section longer than this is split on paragraphs
UNUSABLE_MESSAGE_ERRORS: tuple[type[Exception], ...] = (KeyError, TypeError, ValueError)
# Arrays and objects inside one another: real exports stay under 10; the limit keeps json's
# own recursion and every recursive reader far from Python's stack limit.
MAX_JSON_DEPTH = 64
EPOCH_RANGE = (-62135596800.0, 253402300799.0)  # 0001-01-01 to 9999-12-31T23:59:59 UTC

Item = TypeVar("Item")


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def chunk_id(source_file: str, content: str, occurrence: int) -> str:
    """Content-addressed id: same file and same text give the same id wherever it moves."""
    key = f"{source_file}\x00{occurrence}\x00{content}".encode()
    return hashlib.blake2b(key, digest_size=12).hexdigest()


def iso_from_epoch(seconds: float) -> str:
    """ISO text of epoch seconds; ValueError for a time no calendar holds (NaN, ±inf, 1e20)."""
    if not EPOCH_RANGE[0] <= seconds <= EPOCH_RANGE[1]:  # NaN fails every comparison
        raise ValueError(f"time {seconds!r} is out of range")
    try:
        moment = datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError):  # a platform whose time_t is narrower than the range
        raise ValueError(f"time {seconds!r} is out of range") from None
    return _iso(moment.replace(tzinfo=None))


def _iso(moment: datetime) -> str:
    # isoformat, not strftime: strftime writes year 1 as "1", which no reader takes back.
    return moment.replace(microsecond=0).isoformat()


def date_from_name(name: str) -> str | None:
    """The date in a file name (`2024-03-11-walk`, `GMT20240311-100000_Recording`, …)."""
    stamp = name_stamp(name)
    return stamp.date if stamp else None


def parse_date(value: Any) -> str | None:
    """A date or datetime from the usual shapes (ISO text, epoch seconds or ms) as ISO text.

    None when there is no date, or one out of range (1e20 seconds, year 0 after a time zone).
    """
    if value is None or value == "":
        return None
    try:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            seconds = float(value) / (1000.0 if value > 1e11 else 1.0)
            return iso_from_epoch(seconds)
        text = str(value).strip()
        if re.fullmatch(r"\d+(\.\d+)?", text):
            return parse_date(float(text))
        return _parse_iso(text)
    except (ValueError, OverflowError):
        return None


def _parse_iso(text: str) -> str | None:
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return date_from_name(text)
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(UTC).replace(tzinfo=None)
    if len(text) <= 10:
        return parsed.date().isoformat()
    return _iso(parsed)


def to_epoch(iso: str) -> float:
    """Seconds since the epoch of an ISO date or datetime taken as UTC (as `parse_date` gives)."""
    parsed = datetime.fromisoformat(iso)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


class TooDeep(ValueError):
    """JSON nested deeper than MAX_JSON_DEPTH."""

    def __init__(self) -> None:
        super().__init__(f"nested deeper than {MAX_JSON_DEPTH} levels")


def too_deep(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether arrays and objects nest deeper than `limit` (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        for child in children:
            if isinstance(child, (dict, list)):
                if depth >= limit:
                    return True
                stack.append((child, depth + 1))
    return False


def _checked(value: Any) -> Any:
    if isinstance(value, (dict, list)) and too_deep(value):
        raise TooDeep()
    return value


def _decode_value(decoder: json.JSONDecoder, text: str, position: int) -> tuple[Any, int]:
    """One JSON value at `position` and where it ends; JSONDecodeError or TooDeep otherwise."""
    try:
        value, end = decoder.raw_decode(text, position)
    except RecursionError:  # json's own recursion gave up: far past MAX_JSON_DEPTH
        raise TooDeep() from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # an integer of more digits than Python converts
        raise json.JSONDecodeError(str(exc).split(";")[0], text, position) from None
    value = _checked(value)
    if has_surrogate_escape(text, position, end):  # "\ud800": U+FFFD, the rest is kept
        value = clean_json(value)
    return value, end


_DECODER = json.JSONDecoder()  # holds no state between calls: shared by every thread


def json_fault(exc: json.JSONDecodeError | TooDeep) -> str:
    """Why a piece of JSON could not be read, in words (never the json module's message)."""
    return str(exc) if isinstance(exc, TooDeep) else json_words(exc.msg)


def _loads(text: str) -> Any:
    """json.loads within the limits: JSONDecodeError or TooDeep for what it cannot take."""
    value, end = _decode_value(_DECODER, text, _skip_space(text, 0))
    if _skip_space(text, end) != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return value


def load_json(text: str) -> Any:
    """A whole JSON document, or ExtractError: a file that is not JSON cannot be read at all."""
    try:
        return _loads(text)
    except json.JSONDecodeError as exc:
        raise ExtractError(f"not JSON: {json_fault(exc)} (line {exc.lineno})") from None
    except TooDeep as exc:
        raise ExtractError(f"not readable JSON: {exc}") from None


_SPACE = re.compile(r"\s+")


def _skip_space(text: str, position: int) -> int:
    match = _SPACE.match(text, position)
    return match.end() if match else position


def json_array_items(text: str, result: Extraction, start: int = 0) -> list[tuple[int, Any]] | None:
    """(line, item) for each item of the JSON array at `start` (the top-level one by default),
    or None if there is no array.

    Items are decoded one by one, so each knows its line, and a file cut off or broken in
    the middle keeps the items before the damage (the damage is recorded as a problem).
    """
    decoder = json.JSONDecoder()
    position = _skip_space(text, start)
    if not text.startswith("[", position):
        return None
    items: list[tuple[int, Any]] = []
    line, counted = 1, 0
    position += 1
    while True:
        position = _skip_space(text, position)
        if text.startswith("]", position):
            return items
        try:
            item, end = _decode_value(decoder, text, position)
        except (json.JSONDecodeError, TooDeep) as exc:
            reason = json_fault(exc)
            if not items:
                raise ExtractError(f"not JSON: {reason}") from None
            result.problems.append(f"item {len(items) + 1}: broken JSON ({reason}); rest skipped")
            return items
        line += text.count("\n", counted, position)
        counted = position
        items.append((line, item))
        position = _skip_space(text, end)
        if text.startswith(",", position):
            position += 1


class LineFinder:
    """Line numbers of items in a pretty-printed JSON file, found in file order.

    `json` gives no positions, but exports list their items in file order, so a forward-only
    search for each item's key (`"id": 42,`) finds the right line even when ids repeat
    across chats. Compact one-line JSON simply yields line 1.
    """

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.position = 0

    def find(self, needle: str) -> int | None:
        for index in range(self.position, len(self.lines)):
            if needle in self.lines[index]:
                self.position = index
                return index + 1
        return None


def jsonl_records(text: str, result: Extraction) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each good line; a bad line is a problem, not a failure."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = _loads(line)
        except json.JSONDecodeError as exc:
            result.problems.append(f"line {number}: not JSON ({json_fault(exc)})")
            continue
        except TooDeep as exc:
            result.problems.append(f"line {number}: {exc}")
            continue
        if not isinstance(record, dict):
            result.problems.append(f"line {number}: not a JSON object")
            continue
        yield number, record


def jsonl_drafts(
    data: bytes, draft_for: Callable[[int, dict[str, Any]], Draft | None], undrafted: str
) -> Extraction:
    """One draft per JSONL record; a record that makes none is the problem `line N: undrafted`."""
    result = Extraction()
    for number, record in jsonl_records(decode(data), result):
        draft = draft_for(number, record)
        if draft is None:
            result.problems.append(f"line {number}: {undrafted}")
        else:
            result.drafts.append(draft)
    return result


@dataclass(frozen=True)
class Message:
    """One chat message, in any chat format."""

    when: str  # ISO datetime
    sender: str
    text: str
    conversation: str  # channel, chat or group
    location: str = ""  # where it sits in the file: "line:N" or "ts:…"
    epoch: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


def numbered_messages(
    numbered: Iterable[tuple[int, Item]],
    to_message: Callable[[int, Item], Message | None],
    result: Extraction,
    unusable: str,
    where: str = "line",
    errors: tuple[type[Exception], ...] = UNUSABLE_MESSAGE_ERRORS,
) -> list[Message]:
    """The messages made of numbered raw items, in order.

    `to_message` returns None for noise (a join, a receipt, an empty text), which is skipped
    quietly, and raises one of `errors` for a broken item, which becomes the problem
    `where N: unusable` so that one bad message never costs the rest of the file.
    `numbered` is read lazily, so problems it records itself stay in file order.
    """
    messages: list[Message] = []
    for number, item in numbered:
        try:
            message = to_message(number, item)
        except errors:
            result.problems.append(f"{where} {number}: {unusable}")
            continue
        if message is not None:
            messages.append(message)
    return messages


def _boundary_after(message: Message) -> bool:
    """Content-defined cut: depends on the message alone, so inserts and appends stay local."""
    digest = hashlib.blake2b(
        f"{message.when}|{message.sender}|{message.text}".encode(), digest_size=4
    ).digest()
    return int.from_bytes(digest, "little") % WINDOW_TARGET == 0


def message_windows(messages: Sequence[Message]) -> Iterator[list[Message]]:
    """Windows of ~10 consecutive messages whose boundaries do not move on appends.

    A window ends after a message whose hash says so (once it holds WINDOW_MIN messages),
    when it reaches WINDOW_MAX, when the conversation changes, or before a long silence.
    Every rule looks only at the messages already in the window, so appending messages
    can only change the last window.
    """
    window: list[Message] = []
    for message in messages:
        if window and (
            message.conversation != window[-1].conversation
            or message.epoch - window[-1].epoch > WINDOW_GAP_SECONDS
        ):
            yield window
            window = []
        window.append(message)
        if len(window) >= WINDOW_MAX or (len(window) >= WINDOW_MIN and _boundary_after(message)):
            yield window
            window = []
    if window:
        yield window


def window_draft(window: Sequence[Message], source_label: str, prefix: str = "#") -> Draft:
    """A chat window as one chunk: `Name: text` lines, titled by conversation and day."""
    first = window[0]
    lines = [f"{m.sender}: {m.text}" for m in window]
    day = first.when[:10]
    people = tuple(dict.fromkeys(m.sender for m in window if m.sender))
    return Draft(
        content="\n".join(lines),
        title=f"{prefix}{first.conversation} · {day}"
        if first.conversation
        else f"{source_label} · {day}",
        content_date=first.when,
        location=first.location,
        metadata={
            "conversation": first.conversation,
            "messages": len(window),
            "first": first.when,
            "last": window[-1].when,
        },
        people=people,
    )


def chat_drafts(messages: Iterable[Message], source_label: str, prefix: str = "#") -> list[Draft]:
    """Group messages by conversation (stable order), sort by time, cut into windows."""
    by_conversation: dict[str, list[Message]] = {}
    for message in messages:
        by_conversation.setdefault(message.conversation, []).append(message)
    drafts: list[Draft] = []
    for conversation_messages in by_conversation.values():
        ordered = sorted(conversation_messages, key=lambda m: m.epoch)
        drafts.extend(window_draft(w, source_label, prefix) for w in message_windows(ordered))
    return drafts
