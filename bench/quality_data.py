"""Turn the public evaluation sets into one Memex data layer, and questions into qrels.

LoCoMo conversations become Slack-style synced JSONL logs (one channel per conversation,
messages dated by their session, a minute apart); QMSum meetings become Markdown meeting
transcripts. Each question keeps its evidence as (file, turn index, probe text); after
indexing, `qrels` maps every evidence turn to the chunk that holds it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import apsw

SLACK_DIR = "data/slack"
MEETING_DIR = "data/meetings/processed"
QMSUM_PROBE_CHARS = 80
SPEAKER_MAX = 60
_SESSION_KEY = re.compile(r"session_(\d+)")
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")
_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y")


@dataclass(frozen=True)
class Evidence:
    """One relevant turn: the file it lives in, its index among the file's turns, its text."""

    file: str  # file name inside the layer
    turn: int
    probe: str  # text the chunk holding the turn must contain


@dataclass
class Question:
    qid: str
    dataset: str  # "locomo" or "qmsum"
    query: str
    evidence: list[Evidence] = field(default_factory=list)
    category: int = 0


@dataclass
class Layer:
    questions: list[Question]
    newest: datetime  # the newest message or meeting in the layer
    people: list[str]
    files: int

    def to_json(self) -> dict[str, Any]:
        return {
            "newest": self.newest.isoformat(),
            "people": self.people,
            "files": self.files,
            "questions": [asdict(q) for q in self.questions],
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Layer:
        questions = [
            Question(
                q["qid"],
                q["dataset"],
                q["query"],
                [Evidence(**e) for e in q["evidence"]],
                q.get("category", 0),
            )
            for q in raw["questions"]
        ]
        return cls(questions, datetime.fromisoformat(raw["newest"]), raw["people"], raw["files"])


def data_files(data_dir: Path) -> list[Path]:
    return sorted((data_dir / "locomo").glob("*.json")) + [data_dir / "qmsum" / "val.jsonl"]


# -- LoCoMo -> Slack JSONL ------------------------------------------------------------------


def parse_session_date(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> datetime(2023, 5, 8, 13, 56)."""
    cleaned = " ".join(text.split())
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(cleaned, fmt)
        except ValueError:
            continue
    raise ValueError(f"unrecognised LoCoMo session date: {text!r}")


def _sessions(conv: dict[str, Any]) -> Iterator[tuple[datetime, list[dict[str, Any]]]]:
    numbers = sorted(int(m[1]) for k in conv if (m := _SESSION_KEY.fullmatch(k)))
    for n in numbers:
        turns = conv.get(f"session_{n}") or []
        stamp = conv.get(f"session_{n}_date_time")
        if turns and stamp:
            yield parse_session_date(stamp), turns


def _messages(conv: dict[str, Any]) -> Iterator[tuple[datetime, str, str, str]]:
    """(time, dialogue id, speaker, text) per non-empty turn, a minute apart in a session."""
    for start, turns in _sessions(conv):
        kept = [t for t in turns if str(t.get("text", "")).strip()]
        for i, turn in enumerate(kept):
            yield (
                start + timedelta(minutes=i),
                _norm_dia(turn["dia_id"]),
                str(turn["speaker"]),
                str(turn["text"]).strip(),
            )


def convert_locomo(path: Path, root: Path) -> tuple[list[Question], datetime, list[str]]:
    """One conversation -> data/slack/locomo-<id>.jsonl; returns its questions."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    conv = raw.get("conversation", raw)
    channel = f"locomo-{path.stem}"
    messages = sorted(_messages(conv), key=lambda m: m[0])
    turn_index = _write_chat(messages, channel, root / SLACK_DIR / f"{channel}.jsonl")
    newest = messages[-1][0] if messages else datetime.min
    questions = _locomo_questions(raw.get("qa", []), channel, turn_index)
    speakers = [str(conv.get("speaker_a", "")), str(conv.get("speaker_b", ""))]
    return questions, newest, [s for s in speakers if s]


def _write_chat(
    messages: list[tuple[datetime, str, str, str]], channel: str, out: Path
) -> dict[str, Evidence]:
    """The messages as one Slack-export JSONL file; returns each turn's evidence by dialogue id."""
    turn_index: dict[str, Evidence] = {}
    lines: list[str] = []
    for i, (when, dia_id, speaker, text) in enumerate(messages):
        turn_index[dia_id] = Evidence(out.name, i, f"{speaker}: {text}")
        lines.append(
            json.dumps(
                {
                    "ts": f"{when.replace(tzinfo=UTC).timestamp():.6f}",
                    "channel": channel,
                    "user": speaker.lower(),
                    "user_name": speaker,
                    "text": text,
                }
            )
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return turn_index


def _locomo_questions(
    qas: list[dict[str, Any]], channel: str, turn_index: dict[str, Evidence]
) -> list[Question]:
    """The conversation's questions, all but category 5 (LoCoMo's adversarial ones)."""
    questions = []
    for n, qa in enumerate(qas):
        if qa.get("category") == 5:
            continue
        ids = _EVIDENCE.findall(" ".join(str(e) for e in qa.get("evidence", [])))
        evidence = [turn_index[f"D{s}:{t}"] for s, t in ids if f"D{s}:{t}" in turn_index]
        questions.append(
            Question(
                f"{channel}-{n}",
                "locomo",
                str(qa["question"]),
                evidence,
                int(qa.get("category", 0)),
            )
        )
    return questions


def _norm_dia(dia_id: str) -> str:
    match = _EVIDENCE.search(str(dia_id))
    return f"D{match[1]}:{match[2]}" if match else str(dia_id)


# -- QMSum -> meeting Markdown --------------------------------------------------------------


def convert_qmsum(path: Path, root: Path, last_day: datetime) -> list[Question]:
    """Each meeting -> data/meetings/processed/qmsum-val-NN.md, dated a week apart up to
    `last_day` (QMSum has no dates); returns the specific queries."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    questions = []
    for m, row in enumerate(rows):
        name = f"qmsum-val-{m:02d}.md"
        day = (last_day - timedelta(weeks=len(rows) - 1 - m)).date()
        turns = row["meeting_transcripts"]
        kept = _write_meeting(root / MEETING_DIR / name, f"QMSum meeting {m:02d}", day, turns)
        for n, item in enumerate(row.get("specific_query_list", [])):
            evidence = [
                Evidence(name, kept[t], _probe(turns[t]))
                for a, b in item.get("relevant_text_span", [])
                for t in range(int(a), int(b) + 1)
                if t in kept
            ]
            questions.append(Question(f"qmsum-{m:02d}-{n}", "qmsum", str(item["query"]), evidence))
    return questions


def _clean(text: str) -> str:
    return " ".join(str(text).split())


def _speaker(name: str) -> str:
    """Meeting speaker names are at most 60 characters (the engine's turn pattern): drop a
    long parenthetical role such as '(Minister of …)'."""
    name = _clean(name)
    if len(name) > SPEAKER_MAX:
        name = re.sub(r"\s*\(.*\)\s*", " ", name).strip()
    return name[:SPEAKER_MAX].strip()


def _probe(turn: dict[str, Any]) -> str:
    return f"{_speaker(turn['speaker'])}: {_clean(turn['content'])}"[:QMSUM_PROBE_CHARS]


def _write_meeting(path: Path, title: str, day: Any, turns: list[dict[str, Any]]) -> dict[int, int]:
    """Write the transcript; returns original turn index -> index among written turns."""
    speakers = list(dict.fromkeys(_speaker(t["speaker"]) for t in turns))
    lines = [
        "---",
        f"title: {json.dumps(title)}",
        f"date: {day.isoformat()}",
        "attendees: " + json.dumps(speakers),
        "---",
        f"# {title}",
        "",
    ]
    kept: dict[int, int] = {}
    for i, turn in enumerate(turns):
        text = _clean(turn["content"])
        if text:
            kept[i] = len(kept)
            lines.append(f"**{_speaker(turn['speaker'])}:** {text}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return kept


# -- the layer ------------------------------------------------------------------------------


def write_layer(data_dir: Path, root: Path) -> Layer:
    """Convert every data set under `data_dir` into a data layer at `root`."""
    questions: list[Question] = []
    newest = datetime.min
    people: list[str] = []
    locomo = sorted((data_dir / "locomo").glob("*.json"))
    for path in locomo:
        found, last, speakers = convert_locomo(path, root)
        questions += found
        newest = max(newest, last)
        people += speakers
    questions += convert_qmsum(data_dir / "qmsum" / "val.jsonl", root, newest)
    people = list(dict.fromkeys(people))
    _write_people(root, people)
    files = len(list((root / "data").rglob("*.*")))
    return Layer(questions, newest, people, files)


def _write_people(root: Path, names: list[str]) -> None:
    """The chat partners as known people, so entity injection does what it would for a user."""
    path = root / "profile" / "relationships.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    people = [
        {"name": n, "relationship": "friend", "context": "LoCoMo conversation partner"}
        for n in names
    ]
    path.write_text(json.dumps({"people": people}, indent=1), encoding="utf-8")


# -- qrels ----------------------------------------------------------------------------------


@dataclass
class Mapping:
    qrels: dict[str, dict[str, int]]
    missing_probe: int  # evidence whose chunk (by turn count) did not contain its text
    unresolved: list[str]  # questions left with no relevant chunk


def build_qrels(conn: apsw.Connection, questions: list[Question]) -> Mapping:
    """Map each evidence turn to its chunk: chunks in file order, counted by their turns."""
    spans = _turn_spans(conn)
    qrels: dict[str, dict[str, int]] = {}
    missing = 0
    unresolved = []
    for q in questions:
        relevant: dict[str, int] = {}
        for ev in q.evidence:
            chunk = _chunk_of(spans.get(ev.file, []), ev.turn)
            if chunk is None:
                continue
            if ev.probe not in chunk[1]:
                missing += 1
            relevant[chunk[0]] = 1
        if relevant:
            qrels[q.qid] = relevant
        else:
            unresolved.append(q.qid)
    return Mapping(qrels, missing, unresolved)


def _turn_spans(conn: apsw.Connection) -> dict[str, list[tuple[int, str, str]]]:
    """file name -> [(first turn index, chunk id, content)] in file order."""
    out: dict[str, list[tuple[int, str, str]]] = {}
    rows = conn.execute(
        "SELECT source_file, id, content, metadata FROM chunks ORDER BY source_file, ordinal"
    ).fetchall()
    counted: dict[str, int] = {}
    for source_file, chunk_id, content, metadata in rows:
        name = Path(source_file).name
        meta = json.loads(metadata)
        size = int(meta.get("messages") or meta.get("turns") or 0)
        start = counted.get(name, 0)
        out.setdefault(name, []).append((start, chunk_id, content))
        counted[name] = start + size
    return out


def _chunk_of(spans: list[tuple[int, str, str]], turn: int) -> tuple[str, str] | None:
    found = None
    for start, chunk_id, content in spans:
        if start > turn:
            break
        found = (chunk_id, content)
    return found
