"""A data layer of realistic shape for speed work, from real chat messages (chitchat-dataset).

About 86 % of the chunks are chat windows (Slack and Telegram synced JSONL), 7 % meeting
segments and 7 % note sections. chitchat-dataset has 258k messages (~25k windows): beyond one
pass over its conversations, new conversations are remixed from randomly drawn messages, so
every window is distinct text. Everything is seeded and deterministic.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from engine.extractors.chunking import Message, message_windows

NOW = datetime(2026, 6, 30, 12, 0, 0)
SPAN_DAYS = 3 * 365
SHARES = {"chat": 0.86, "meeting": 0.07, "note": 0.07}
NAMES = (
    "Maya",
    "Jonas",
    "Sofie",
    "Ahmed",
    "Lena",
    "Ola",
    "Priya",
    "Tom",
    "Ingrid",
    "Kari",
    "Mateo",
    "Yuki",
    "Noah",
    "Emma",
    "Lars",
    "Aisha",
    "Ben",
    "Clara",
    "David",
    "Eva",
    "Farid",
    "Grace",
    "Hugo",
    "Iris",
    "Jakob",
    "Kim",
    "Liam",
    "Mia",
    "Nina",
    "Oscar",
    "Pia",
    "Rune",
    "Sara",
    "Theo",
    "Una",
    "Viktor",
    "Wen",
    "Xavier",
    "Ylva",
    "Zoe",
)
TOPICS = (
    "roadmap",
    "budget",
    "hiring",
    "launch",
    "retro",
    "design review",
    "offsite",
    "customer call",
    "incident review",
    "planning",
    "research sync",
    "board prep",
)
CHANNELS_PER_10K = 40


@dataclass(frozen=True)
class Line:
    sender: str
    text: str


def chitchat_conversations() -> list[list[Line]]:
    """The chats of chitchat-dataset as (sender name, text) lines, senders given names."""
    import chitchat_dataset

    names: dict[str, str] = {}
    out = []
    for chat in chitchat_dataset.Dataset().values():
        lines = []
        for group in chat["messages"]:
            for message in group:
                sender = names.setdefault(message["sender"], NAMES[len(names) % len(NAMES)])
                text = " ".join(str(message["text"]).split())
                if text:
                    lines.append(Line(sender, text))
        if lines:
            out.append(lines)
    return out


def remixed(conversations: list[list[Line]], rng: random.Random) -> Iterator[list[Line]]:
    """The originals once, then endless new conversations of messages drawn at random."""
    yield from conversations
    pool = [line.text for conv in conversations for line in conv]
    while True:
        a, b = rng.sample(NAMES, 2)
        size = rng.randint(12, 60)
        yield [Line(a if i % 2 == 0 else b, rng.choice(pool)) for i in range(size)]


def windows_of(conv: list[Line], start: datetime) -> int:
    """How many chunks the chat extractor will make of this conversation."""
    messages = [
        Message(
            when=(start + timedelta(seconds=30 * i)).isoformat(),
            sender=m.sender,
            text=m.text,
            conversation="c",
            epoch=start.timestamp() + 30 * i,
        )
        for i, m in enumerate(conv)
    ]
    return sum(1 for _ in message_windows(messages))


class LayerWriter:
    """Writes the layer into `root` until each share of `chunks` is reached."""

    def __init__(self, root: Path, chunks: int, seed: int = 7) -> None:
        self.root = root
        self.target = {kind: int(chunks * share) for kind, share in SHARES.items()}
        self.rng = random.Random(seed)
        self.conversations = chitchat_conversations()
        self.pool = [line.text for conv in self.conversations for line in conv]
        self.files = max(4, chunks * CHANNELS_PER_10K // 10_000)

    def write(self) -> dict[str, int]:
        made = {"chat": self._chats(), "meeting": self._meetings(), "note": self._notes()}
        return made

    def _when(self) -> datetime:
        return NOW - timedelta(seconds=self.rng.uniform(3600, SPAN_DAYS * 86400))

    def _chats(self) -> int:
        logs: dict[int, list[tuple[datetime, Line]]] = {}
        made = 0
        for conv in remixed(self.conversations, self.rng):
            if made >= self.target["chat"]:
                break
            start = self._when()
            made += windows_of(conv, start)
            log = logs.setdefault(self.rng.randrange(self.files), [])
            log += [(start + timedelta(seconds=30 * i), m) for i, m in enumerate(conv)]
        for number, lines in logs.items():
            self._write_log(number, sorted(lines, key=lambda x: x[0]))
        return made

    def _write_log(self, number: int, lines: list[tuple[datetime, Line]]) -> None:
        telegram = number % 5 in (1, 3)  # 40 % of the chat logs are Telegram-style
        if telegram:
            path = self.root / "data" / "telegram" / f"chat-{number:04d}.jsonl"
            rows = [
                {
                    "date": when.isoformat(),
                    "chat": f"chat {number}",
                    "from": m.sender,
                    "text": m.text,
                }
                for when, m in lines
            ]
        else:
            path = self.root / "data" / "slack" / f"channel-{number:04d}.jsonl"
            rows = [
                {
                    "ts": f"{when.replace(tzinfo=UTC).timestamp():.6f}",
                    "channel": f"channel-{number}",
                    "user": m.sender.lower(),
                    "user_name": m.sender,
                    "text": m.text,
                }
                for when, m in lines
            ]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")

    def _meetings(self) -> int:
        made, number = 0, 0
        while made < self.target["meeting"]:
            segments = self.rng.randint(6, 20)
            self._write_meeting(number, segments)
            made, number = made + segments, number + 1
        return made

    def _write_meeting(self, number: int, segments: int) -> None:
        people = self.rng.sample(NAMES, self.rng.randint(3, 6))
        title = f"{self.rng.choice(TOPICS).title()} #{number}"
        day = self._when().date()
        turns = []
        size = 0
        while size < segments * 1000:
            text = " ".join(self.rng.choice(self.pool) for _ in range(self.rng.randint(1, 4)))
            turns.append(f"**{self.rng.choice(people)}:** {text}")
            size += len(text) + 12
        path = self.root / "data" / "meetings" / "processed" / f"{day}-meeting-{number:04d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"---\ntitle: {json.dumps(title)}\ndate: {day}\nattendees: "
            f"{json.dumps(people)}\n---\n\n" + "\n".join(turns) + "\n",
            encoding="utf-8",
        )

    def _notes(self) -> int:
        made, number = 0, 0
        while made < self.target["note"]:
            sections = self.rng.randint(2, 6)
            self._write_note(number, sections)
            made, number = made + sections, number + 1
        return made

    def _write_note(self, number: int, sections: int) -> None:
        topic = self.rng.choice(TOPICS)
        parts = [f"---\ntitle: {json.dumps(f'{topic.title()} notes {number}')}\n---\n"]
        for s in range(sections):
            body = " ".join(self.rng.choice(self.pool) for _ in range(self.rng.randint(4, 12)))
            parts.append(f"## {topic.title()} part {s + 1}\n\n{body}\n")
        path = self.root / "notes" / topic.replace(" ", "-") / f"note-{number:04d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(parts), encoding="utf-8")
