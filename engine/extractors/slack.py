"""Slack, synced JSONL: one message a line, `{"ts","channel","user","user_name","text"}`."""

from __future__ import annotations

from pathlib import PurePath

from engine.extractors import Extraction, register
from engine.extractors.chunking import Message, chat_drafts, decode, iso_from_epoch, jsonl_records


def _message(number: int, record: dict[str, object], default_channel: str) -> Message | None:
    text = str(record.get("text") or "").strip()
    if not text:
        return None
    ts = float(str(record.get("ts")))
    sender = str(record.get("user_name") or record.get("user") or "unknown")
    return Message(when=iso_from_epoch(ts), sender=sender, text=text,
                   conversation=str(record.get("channel") or default_channel),
                   location=f"line:{number}", epoch=ts,
                   extra={"thread_ts": record.get("thread_ts")})


@register("slack")
def extract_slack(data: bytes, path: PurePath) -> Extraction:
    result = Extraction()
    messages = []
    for number, record in jsonl_records(decode(data), result):
        try:
            message = _message(number, record, path.stem)
        except (TypeError, ValueError):
            result.problems.append(f"line {number}: message without a usable ts")
            continue
        if message is not None:
            messages.append(message)
    result.drafts = chat_drafts(messages, "slack")
    return result
