"""The people of a chat file as mentions: one per sender, counted, with the span of their
messages (`engine.records.Mention`), for the chat readers that know a sender by an id."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from engine.extractors.chunking import LineFinder
from engine.records import Mention


@dataclass(frozen=True)
class Sender:
    """Who sent one message, as the file names them, and when."""

    name: str
    when: str
    aliases: tuple[str, ...] = ()
    emails: tuple[str, ...] = ()
    handles: tuple[str, ...] = ()
    phones: tuple[str, ...] = ()


def sender_mentions(senders: Iterable[Sender], org: str = "") -> list[Mention]:
    """One mention per distinct sender (name, aliases, emails, handles), in order of first
    appearance, counting their messages and spanning their first and last."""
    found: dict[tuple[object, ...], Mention] = {}
    for sender in senders:
        key = (sender.name, sender.aliases, sender.emails, sender.handles, sender.phones)
        seen = found.get(key)
        if seen is None:
            found[key] = Mention(
                name=sender.name,
                aliases=sender.aliases,
                emails=sender.emails,
                phones=sender.phones,
                handles=sender.handles,
                org=org,
                first=sender.when,
                last=sender.when,
            )
            continue
        found[key] = replace(
            seen,
            count=seen.count + 1,
            first=min(seen.first or sender.when, sender.when),
            last=max(seen.last or sender.when, sender.when),
        )
    return list(found.values())


class ChatReader:
    """One chat export being read: its conversation's name, where its messages' lines are,
    and the senders met so far; a reader adds its `message(number, raw)`."""

    def __init__(self, text: str, conversation: str) -> None:
        self.lines = LineFinder(text)
        self.conversation = conversation
        self.senders: list[Sender] = []
