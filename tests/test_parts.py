"""Parts: chunks cut into ~300-character spans, one vector each; a chunk scores its best."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from engine import parts
from engine.index.runs import reindex
from engine.search import Searcher
from engine.search.query.filters import Filters
from engine.settings import Settings
from engine.store import db
from tests.conftest import assert_consistent

WINDOW = "\n".join(
    f"{name}: {text}"
    for name, text in [
        ("Nate", "Hey Joanna! Long time no see! What's up? Anything fun going on lately?"),
        ("Joanna", "Hey Nate! I've been working on a screenplay, it's been pretty cool."),
        ("Nate", "I won my first video game tournament last week, so exciting for me!"),
        ("Joanna", "Wow, congrats on winning! Tell me more, what game was it, then?"),
        ("Nate", "It's a team shooter game, Counter-Strike, and my team had a blast."),
        ("Joanna", "Cool! Besides writing, I also enjoy reading and exploring nature."),
        ("Nate", "Nice. I adopted a turtle named Shelly last month, she loves lettuce."),
        ("Joanna", "Ha, a turtle! Does she have a tank with a heat lamp and a ramp?"),
    ]
)


def test_a_short_text_is_one_part_and_a_blank_one_none() -> None:
    assert parts.split_parts("Priya: the release is on Friday.") == [(0, 32)]
    assert parts.split_parts("   \n ") == []


def test_a_chat_window_is_cut_on_line_ends_into_parts_that_cover_every_line() -> None:
    spans = parts.split_parts(WINDOW)
    assert len(spans) == 2
    texts = [WINDOW[a:b] for a, b in spans]
    assert all(t.startswith(("Nate:", "Joanna:")) for t in texts)  # on message boundaries
    assert all(len(t) >= parts.PART_CHARS for t in texts[:-1])
    assert "\n".join(texts) == WINDOW  # every line in exactly one part, in order
    assert spans == sorted(spans) and spans[0][0] == 0


def test_only_a_line_longer_than_the_model_reads_is_cut_at_sentence_ends() -> None:
    turn = "PhD A: " + " ".join(f"Sentence number {i} says one thing." for i in range(40))
    assert parts.PART_CHARS < len(turn) < parts.LONG_LINE
    assert parts.split_parts(turn + "\nPhD B: OK .") == [(0, len(turn) + 12)]  # one turn
    line = " ".join(f"Sentence number {i} says one thing." for i in range(160))
    spans = parts.split_parts(line)
    assert len(spans) >= len(line) // (2 * parts.LINE_PIECE)
    for a, b in spans[:-1]:
        assert line[a:b].rstrip().endswith(".") and b - a >= parts.LINE_PIECE


def test_a_huge_text_keeps_at_most_max_parts() -> None:
    text = "\n".join(f"line {i} " + "word " * 70 for i in range(400))
    spans = parts.split_parts(text)
    assert 1 < len(spans) <= parts.MAX_PARTS
    assert spans[-1][1] >= len(text.rstrip())  # the last line is in the last part


def test_rowids_name_their_chunk() -> None:
    for seq in (1, 77, 10**9):
        for ordinal in (0, 5, parts.MAX_PARTS - 1):
            assert parts.seq_of(parts.rowid(seq, ordinal)) == seq


def write_chat(root: Path, messages: list[tuple[str, str]]) -> None:
    folder = root / "data" / "slack"
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps(
            {"ts": f"{1_780_000_000 + i * 60}.0001", "channel": "pets", "user_name": who,
             "text": text}
        )
        for i, (who, text) in enumerate(messages)
    ]  # fmt: skip
    (folder / "pets.jsonl").write_text("\n".join(lines) + "\n")


def test_every_part_has_a_vector_row_and_deletion_removes_them_all(
    settings_factory: Callable[..., Settings],
) -> None:
    settings = settings_factory(embedder__name="hashing")
    chat = [line.split(": ", 1) for line in WINDOW.split("\n")]
    write_chat(settings.roots[0], [(a, b) for a, b in chat])
    reindex(settings=settings)
    counts = assert_consistent(settings.db_path)
    conn = db.connect(settings.db_path, create=False)
    rows = conn.execute("SELECT content, length(embedding) FROM chunks").fetchall()
    dim = int(db.get_meta(conn, "dimension") or 0)
    assert sum(n for _, n in rows) // (4 * dim) == counts.parts > counts.chunks
    for content, size in rows:
        assert size == len(parts.split_parts(content)) * 4 * dim
    (settings.roots[0] / "data" / "slack" / "pets.jsonl").unlink()
    reindex(settings=settings)
    after = assert_consistent(settings.db_path)
    assert (after.chunks, after.parts, after.vectors) == (0, 0, 0)
    conn.close()


def test_an_index_from_before_parts_is_embedded_again(
    settings_factory: Callable[..., Settings],
) -> None:
    settings = settings_factory(embedder__name="hashing")
    write_chat(settings.roots[0], [("Nate", f"message {i} about the turtle") for i in range(30)])
    first = reindex(settings=settings)
    conn = db.connect(settings.db_path, create=False)
    with db.transaction(conn):
        # What an index written before parts holds: no `parts` key, a key without the rule.
        db.delete_meta(conn, "parts")
        key = db.get_meta(conn, "embedder") or ""
        db.set_meta(conn, "embedder", key.removesuffix("|" + parts.PARTS_KEY))
    conn.close()
    again = reindex(settings=settings)
    assert again.files == 0 and again.embedded == first.chunks
    assert assert_consistent(settings.db_path).vectors == first.chunks


def test_the_message_that_matches_ranks_its_window_and_leads_the_snippet(
    settings_factory: Callable[..., Settings],
) -> None:
    settings = settings_factory()  # the real local model
    filler = [("Maya", f"standup note {i}: the build is green and the release is on track")
              for i in range(40)]  # fmt: skip
    chat = filler[:14] + [("Nate", "I adopted a little turtle called Shelly, she eats lettuce")]
    write_chat(settings.roots[0], chat + filler[14:])
    reindex(settings=settings)
    searcher = Searcher(settings, vector_cache=False)
    hits = searcher.search("which pet reptile did Nate get", 3, mode="vector").results
    searcher.close()
    assert "Shelly" in hits[0].content
    assert hits[0].content.index("Shelly") > parts.PART_CHARS  # deep in its window
    assert hits[0].snippet.startswith("…") and "Shelly" in hits[0].snippet


def test_vec0_and_the_cache_score_a_chunk_by_its_best_part(demo_index: Settings) -> None:
    plain = Searcher(demo_index, vector_cache=False)
    cached = Searcher(demo_index, vector_cache=True)
    qvec = np.asarray(
        plain._query_embedder.vector("the ferry to the islands", []), dtype=np.float32
    )
    one, two = plain.vector(qvec, 5, Filters()), cached.vector(qvec, 5, Filters())
    assert [s for s, _ in one] == [s for s, _ in two]
    assert all(abs(a - b) < 1e-4 for (_, a), (_, b) in zip(one, two, strict=True))
    plain.close(), cached.close()


def test_generated_header_lines_stay_out_of_the_parts_of_a_long_chunk() -> None:
    from engine.sources import SOURCE_TYPES

    markdown = {t.chunk_heading for t in SOURCE_TYPES if t.reader == "markdown"}
    assert markdown | {"Meeting", "Aliases", "Tags", "Section"} <= set(parts.HEADER_LABELS)
    long_meeting = "Meeting: Weekly sync\n" + WINDOW
    spans = parts.split_parts(long_meeting)
    assert long_meeting[spans[0][0] :].startswith("Nate: Hey Joanna")
    short_note = "Note: Garden\nTags: herbs\n\nBasil on the windowsill."
    assert parts.split_parts(short_note) == [(0, len(short_note))]  # one part: all of it
