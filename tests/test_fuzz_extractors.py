"""Every extractor against hostile input: an `Extraction` or an `ExtractError`, nothing else.

Each registered source type is fed, under every file suffix its routes give it, a fixed set
of hostile payloads (deep nesting, numbers out of range, bad UTF-8, NUL bytes, truncated
files, YAML bombs, 1 MB lines, …) and hypothesis-made records whose fields hold hostile
values. Sizes are bounded so that the file runs in seconds; there are no timing asserts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from engine.extractors import ExtractError, Extraction
from engine.extractors.registry import REGISTRY
from engine.index.routes import DEFAULT_ROUTES

# Every key an extractor reads somewhere: hostile values land where they are used.
# fmt: off
KEYS = (
    "Date", "From", "Subject", "To", "account", "actor", "aliases", "attachments", "attendees",
    "author", "authorNumber", "body", "bodyBatteryHighestValue", "bodyBatteryLowestValue",
    "bot_id", "calendarDate", "channel", "chat", "chats", "context", "dailySleepDTO",
    "dataMessage", "date", "date_unixtime", "description", "destination", "destinationName",
    "destinationNumber", "display_name", "edited", "envelope", "file", "file_name", "filename",
    "files", "forwarded_from", "from", "groupId", "groupInfo", "groupName", "href", "id", "list",
    "location", "message", "messages", "moderateIntensityMinutes", "name", "people", "podcast",
    "profile", "quote", "real_name", "recorded_at", "reply_to", "reply_to_message_id", "segments",
    "sentMessage", "show", "sleepTimeSeconds", "sleepingSeconds", "source", "sourceName",
    "sourceNumber", "start", "subject", "subtype", "summary", "syncMessage", "tags", "text",
    "thread_ts", "timestamp", "title", "to", "totalDistanceMeters", "totalSteps", "ts", "type",
    "user", "user_name", "user_profile", "vigorousIntensityMinutes", "restingHeartRate",
    "averageStressLevel",
)
# fmt: on

# Raw JSON texts of values that have broken an extractor, or could.
HOSTILE_JSON_VALUES = (
    "1e400",
    "-1e400",
    "1e20",
    "-1e20",
    "NaN",
    "Infinity",
    "9" * 5000,  # past Python's int-from-text digit limit
    '"1e20"',
    '"99999-01-01"',
    '"0001-01-01T00:00:00+14:00"',
    '"9999-12-31T23:59:59-14:00"',
    '"2024-02-30"',
    '"\\u0000"',
    '"x"',
    "[" * 5000 + "]" * 5000,
    '{"a": ' * 900 + "1" + "}" * 900,  # under json's own limit, deep for recursive readers
    '[{"start": 1e400, "text": "t"}]',
    '{"groupName": 1e400}',
    "true",
    "null",
    "[]",
    "{}",
    "-1",
    "0",
)


def _record(value: str) -> str:
    return "{" + ", ".join(f'"{key}": {value}' for key in KEYS) + "}"


def _json_payloads() -> Iterator[tuple[str, bytes]]:
    for index, value in enumerate(HOSTILE_JSON_VALUES):
        record = _record(value)
        mixed = _record('"2024-03-11"')[:-1] + f', "text": "hi", "ts": {value}' + "}"
        shapes = {
            "object": record,
            "array": f"[{record}]",
            "jsonl": f'{{"text": "fine", "date": "2024-03-11", "ts": "1"}}\n{record}\n{mixed}\n',
            "chat": f'{{"name": "c", "messages": [{record}, {mixed}]}}',
            "chats": f'{{"chats": {{"list": [{{"messages": {value}}}, {record}]}}}}',
            "envelope": f'{{"envelope": {record}}}\n{{"envelope": {{"dataMessage": {record}}}}}',
        }
        for shape, text in shapes.items():
            yield f"value{index}-{shape}", text.encode()


YAML_BOMB = (
    '---\na: &a ["x","x","x","x","x","x","x","x","x"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ntags: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "title: [*d,*d,*d]\n---\n# Body\ntext\n"
)

TEXT_PAYLOADS: dict[str, bytes] = {
    "empty": b"",
    "blank": b"  \n\n\t\n",
    "nul": b"\x00" * 64,
    "nul-late": b"a" * 5000 + b"\x00\x00\n",
    "bad-utf8": b"\xff\xfe\xfa\x80\x81 text \xc3\x28\xed\xa0\x80\n",
    "one-mb-line": b"a" * 1_000_000,
    "one-mb-quoted": b'"' + b"a" * 1_000_000,
    "deep-array": b"[" * 100_000,
    "deep-object": b'{"a":' * 50_000,
    "deep-jsonl": b'{"text": "ok", "ts": "1"}\n' + b"[" * 100_000 + b"\n",
    "deep-in-record": b'{"text": "hi", "messages": ' + b"[" * 100_000 + b"}",
    "truncated-array": b'[{"text": "hi", "ts": "1", "date": "2024-03-11"}, {"text": "x',
    "truncated-object": b'{"messages": [{"text": "hi"',
    "yaml-bomb": YAML_BOMB.encode(),
    "yaml-deep": b"---\nx: " + b"[" * 50_000 + b"\n---\nbody\n",
    "yaml-deep-block": b"---\n" + b"- " * 5000 + b"x\n---\nbody\n",
    "yaml-timestamp": b"---\ndate: !!timestamp 99999-01-01\n---\n# H\nbody\n",
    "yaml-bad-date": b"---\ndate: 2024-02-30\ntitle: t\n---\n# H\nbody\n",
    "yaml-huge-int": b"---\ndate: " + b"9" * 5000 + b"\n---\nbody\n",
    "yaml-epoch": b"---\ndate: 99999999999999999999\n---\nbody\n",
    "yaml-python-tag": b"---\nx: !!python/object/apply:os.system ['true']\n---\nbody\n",
    "yaml-unknown-alias": b"---\ntitle: *nowhere\n---\nbody\n",
    "yaml-large": b"---\n" + b"k: v\n" * 100_000 + b"---\nbody\n",
    "yaml-unclosed": b"---\ntitle: [\n" + b"x" * 10_000,
    "csv-values": (
        b"Index,Timestamp (YYYY-MM-DDThh:mm:ss),Event Type,Glucose Value (mg/dL)\n"
        b"1,2024-03-11T08:00:00,EGV,1e400\n2,2024-03-11T08:05:00,EGV,nan\n"
        b"3,99999-01-01T00:00:00,EGV,100\n4,2024-03-11T08:10:00,EGV,-inf\n"
        b"5,2024-03-11T08:15:00,EGV," + b"9" * 5000 + b"\n"
    ),
    "csv-carriage-return": b'Timestamp,Glucose Value\r2024-03-11T08:00:00,1\rx"y\r\n',
    "csv-huge-field": b'Timestamp,Glucose Value\n"' + b"a" * 200_000 + b'",1\n',
    "libre": (
        b"Glucose Data\nDevice,Serial Number,Device Timestamp,Record Type,"
        b"Historic Glucose mg/dL,Scan Glucose mg/dL\nL,1,99-99-9999 99:99,0,1e400,\n"
        b"L,1,13-01-2024 08:00,1,,inf\n"
    ),
    "mbox-junk": b"From x\nSubject: =?utf-8?b?!!!?=\nDate: Mon, 1 Jan 99999 00:00:00 +0000\n\nhi\n",
    "mbox-headers": (
        b'From a\nFrom: ",,,@,\\"\nTo: <<<>>>, @@\nContent-Type: multipart/mixed; boundary=""\n'
        b"Content-Transfer-Encoding: base64\n\n!!!!\n"
    ),
    "mbox-charset": (
        b"From a\nFrom: a@b\nContent-Type: text/plain; charset=x-nonsense\n"
        b"Content-Transfer-Encoding: quoted-printable\n\n=ZZ=\n"
    ),
    "mail-deep-html": (
        b"From: a@b\nSubject: s\nContent-Type: text/html\n\n" + b"<div>" * 20_000 + b"deep"
    ),
    "vtt-timing": b"WEBVTT\n\n99999999999999999999:00:00.000 --> 00:00:01.000\n<v A>hi\n",
    "srt-broken": b"1\n00:00:01,000 -> broken\nhi\n\n2\n\n\n",
}


def payloads() -> dict[str, bytes]:
    """Every fixed payload, by name."""
    return {**TEXT_PAYLOADS, **dict(_json_payloads())}


def targets() -> list[tuple[str, str]]:
    """(source type, file suffix) for every registered extractor and every suffix it serves."""
    pairs = {(r.source_type, PurePosixPath(r.pattern).suffix) for r in DEFAULT_ROUTES}
    for source_type in REGISTRY:
        if not any(t == source_type for t, _ in pairs):
            pairs.add((source_type, ".jsonl"))
    return sorted(p for p in pairs if p[0] in REGISTRY)


def path_for(suffix: str) -> PurePosixPath:
    # A dated name, as real files have; no such folder exists.
    return PurePosixPath(f"/nonexistent/memex-fuzz/data/export/chan/2024-03-11{suffix}")


def escaped(source_type: str, suffix: str, data: bytes) -> str | None:
    """None when the extractor kept its contract, else the type of what escaped it."""
    try:
        result = REGISTRY[source_type](data, path_for(suffix))
    except ExtractError:
        return None
    except Exception as exc:  # the point of the test: anything else is a failure
        return f"{type(exc).__name__}: {str(exc)[:80]}"
    return None if isinstance(result, Extraction) else f"returned {type(result).__name__}"


TARGETS = targets()
PAYLOADS = payloads()


@pytest.mark.parametrize(("source_type", "suffix"), TARGETS)
def test_hostile_payloads_give_an_extraction_or_an_extract_error(
    source_type: str, suffix: str
) -> None:
    failures = {
        name: problem
        for name, data in PAYLOADS.items()
        if (problem := escaped(source_type, suffix, data))
    }
    assert failures == {}


# -- hypothesis: records of the known keys with hostile values, in every container ---------------

_leaves = st.sampled_from(HOSTILE_JSON_VALUES) | st.text(max_size=20).map(json.dumps)


def _array(items: list[str]) -> str:
    return "[" + ", ".join(items) + "]"


def _object(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    pairs = st.lists(st.tuples(st.sampled_from(KEYS), children), max_size=6)
    return pairs.map(lambda kv: "{" + ", ".join(f'"{k}": {v}' for k, v in kv) + "}")


_values = st.recursive(
    _leaves,
    lambda children: _object(children) | st.lists(children, max_size=4).map(_array),
    max_leaves=12,
)


def _document(records: list[str], container: str) -> bytes:
    shapes: dict[str, Any] = {
        "jsonl": "\n".join(records),
        "array": _array(records),
        "object": records[0] if records else "{}",
        "chat": '{"name": "c", "messages": ' + _array(records) + "}",
        "envelopes": "\n".join('{"envelope": ' + r + "}" for r in records),
    }
    return str(shapes[container]).encode()


@pytest.mark.parametrize(("source_type", "suffix"), TARGETS)
@hsettings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    records=st.lists(_object(_values), min_size=1, max_size=4),
    container=st.sampled_from(["jsonl", "array", "object", "chat", "envelopes"]),
)
def test_hostile_records_give_an_extraction_or_an_extract_error(
    source_type: str, suffix: str, records: list[str], container: str
) -> None:
    assert escaped(source_type, suffix, _document(records, container)) is None
