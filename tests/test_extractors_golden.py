"""Golden outputs: every fixture under tests/fixtures/<source_type>/ against its checked-in chunks.

Regenerate after an intended change with `UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_extractors_golden.py`
and review the diff. Paths in the goldens (and so the chunk ids) are relative to the fixture
folder, so they are the same on every machine.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.extractors import ExtractError
from engine.extractors.registry import REGISTRY
from engine.index.indexer import make_chunks
from engine.index.routes import Found
from tests.sibling_files import siblings_on_disk

FIXTURES = Path(__file__).parent / "fixtures"
# read by an extractor, not routed themselves
SUPPORT_FILES = {"users.json", "channels.json", "dms.json", "mpims.json", "group_info.json"}
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"


def fixture_files() -> Iterator[Path]:
    for path in sorted(FIXTURES.rglob("*")):
        if path.is_file() and ".golden." not in path.name and path.name not in SUPPORT_FILES:
            yield path


def golden_path(path: Path) -> Path:
    return path.with_name(path.name + ".golden.json")


def render(path: Path) -> dict[str, Any]:
    """What the indexer would store for a fixture; call with the fixture folder as cwd."""
    relative = path.relative_to(FIXTURES)
    source_type = relative.parts[0]
    found = Found(
        Path(relative.as_posix()),
        FIXTURES,
        relative.as_posix(),
        source_type,
        0.0,
        path.stat().st_size,
    )
    try:
        siblings = siblings_on_disk(found.path, source_type)  # as the indexer reads them
        chunks, problems, notes = make_chunks(found, path.read_bytes(), siblings)
    except ExtractError as exc:
        return {"source_type": source_type, "error": str(exc)}
    return {
        "source_type": source_type,
        "problems": problems,
        **({"notes": notes} if notes else {}),
        "chunks": [
            {
                "id": c.id,
                "title": c.title,
                "content_date": c.content_date,
                "location": c.location,
                "people": list(c.people),
                "metadata": c.metadata,
                "content": c.content,
            }
            for c in chunks
        ],
    }


@pytest.mark.parametrize(
    "path", list(fixture_files()), ids=lambda p: p.relative_to(FIXTURES).as_posix()
)
def test_fixture_matches_golden(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES)
    actual = json.loads(json.dumps(render(path)))  # tuples → lists, as in the file
    golden = golden_path(path)
    if UPDATE:
        golden.write_text(json.dumps(actual, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert golden.exists(), f"no golden for {path.name}: run with UPDATE_GOLDEN=1"
    assert actual == json.loads(golden.read_text(encoding="utf-8"))


def _goldens_by_type() -> dict[str, list[tuple[Path, dict[str, Any]]]]:
    found: dict[str, list[tuple[Path, dict[str, Any]]]] = {}
    for path in fixture_files():
        golden = golden_path(path)
        if golden.exists():
            data = json.loads(golden.read_text(encoding="utf-8"))
            found.setdefault(path.relative_to(FIXTURES).parts[0], []).append((path, data))
    return found


def test_every_registered_extractor_has_fixtures_and_goldens() -> None:
    goldens = _goldens_by_type()
    missing = [
        t for t in REGISTRY if not any("chunks" in g and g["chunks"] for _, g in goldens.get(t, []))
    ]
    assert not missing, f"source types without a fixture and a golden with chunks: {missing}"


def test_every_registered_extractor_has_a_malformed_variant() -> None:
    """A `bad*` fixture per type whose golden keeps good chunks and records the damage."""
    goldens = _goldens_by_type()
    missing = []
    for source_type in REGISTRY:
        bad = [g for p, g in goldens.get(source_type, []) if p.name.startswith("bad")]
        if not any(g.get("problems") and g.get("chunks") for g in bad):
            missing.append(source_type)
    assert not missing, f"source types without a malformed fixture that keeps good parts: {missing}"


def test_no_golden_without_its_fixture() -> None:
    orphans = [
        g
        for g in FIXTURES.rglob("*.golden.json")
        if not g.with_name(g.name.removesuffix(".golden.json")).exists()
    ]
    assert not orphans
