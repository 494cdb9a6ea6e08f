"""docs/architecture.md against the code: its stage list is the one the Searcher walks."""

from __future__ import annotations

import re
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import grimp
import pytest

from engine.search.order import STAGES
from engine.sources import SOURCE_TYPES

ARCHITECTURE = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"
STAGE_LINE = re.compile(r"^(\d+)\. `([a-z_]+)` — ")


def documented_stages(text: str) -> list[str]:
    """The stage names of the list between the `stages` markers, checked to be numbered
    1, 2, 3, … in order."""
    block = text.split("<!-- stages:", 1)[1].split("<!-- /stages -->", 1)[0]
    found = [m.groups() for m in map(STAGE_LINE.match, block.splitlines()) if m]
    assert [int(n) for n, _ in found] == list(range(1, len(found) + 1))
    return [name for _, name in found]


def test_the_documented_stage_list_is_the_declared_one() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    assert documented_stages(text) == [s.name for s in STAGES]


def test_the_document_opens_with_the_stage_list_then_the_package_map() -> None:
    headings = re.findall(r"^## (.+)$", ARCHITECTURE.read_text(encoding="utf-8"), re.MULTILINE)
    assert headings[:2] == ["The search pipeline", "The map"]


def test_the_parser_notices_a_stage_out_of_place() -> None:
    names = [s.name for s in STAGES]
    swapped = [names[1], names[0], *names[2:]]
    lines = "\n".join(f"{i}. `{n}` — what it does" for i, n in enumerate(swapped, start=1))
    text = f"<!-- stages: -->\n{lines}\n<!-- /stages -->"
    assert documented_stages(text) == swapped != names


def test_the_package_map_names_every_search_module_in_its_subpackage() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    block = text.split("\nengine/search/ ", 1)[1].split("\nengine/store/", 1)[0]
    sections = re.split(r"\n  [├└] ", block)  # the top level, then one per subpackage
    search = Path(__file__).resolve().parent.parent / "engine" / "search"
    named = {"": sections[0]} | {s.split("/", 1)[0]: s for s in sections[1:]}
    for package, listed in named.items():
        folder = search / package
        modules = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
        if package == "rerank":
            continue  # listed by what it holds, not module by module
        missing = {m for m in modules if not re.search(rf"\b{m}\b", listed)}
        assert not missing, (package or "engine/search", missing)
    folders = {p.name for p in search.iterdir() if (p / "__init__.py").exists()}
    assert folders == set(named) - {""}


def extractor_imports() -> dict[str, set[str]]:
    """Each module of engine.extractors (the package's own too) → the modules of the package
    it imports, at the top or inside a function (grimp reads them all)."""
    graph = grimp.build_graph("engine", cache_dir=None)
    package = {"engine.extractors", *graph.find_descendants("engine.extractors")}
    return {m: graph.find_modules_directly_imported_by(m) & package for m in package}


def test_the_extractors_import_no_module_that_imports_them_back() -> None:
    """Shared helpers lie below the readers (base, turns, document_sections), so the readers
    can be imported in any order, one by one, by name."""
    imports = extractor_imports()
    try:
        order = list(TopologicalSorter(imports).static_order())
    except CycleError as cycle:
        raise AssertionError(f"an import cycle among the extractors: {cycle.args[1]}") from None
    assert order.index("engine.extractors.base") < order.index("engine.extractors.meeting")
    assert order.index("engine.extractors.turns") < order.index("engine.extractors.subtitles")


def test_the_cycle_check_finds_a_cycle() -> None:
    with pytest.raises(CycleError):
        list(TopologicalSorter({"a": {"b"}, "b": {"a"}}).static_order())


def map_entry(text: str, folder: str, following: str) -> str:
    """The map's lines from a folder's entry up to the next one named."""
    return text.split(f"\n{folder} ", 1)[1].split(f"\n{following}", 1)[0]


def test_the_package_map_names_every_index_module_and_every_shared_extractor_module() -> None:
    """Every module of engine/index; of engine/extractors, every one a row does not name
    (the readers are found from `engine.sources`, the rest only from the map)."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    root = Path(__file__).resolve().parent.parent / "engine"
    named = {t.reader for t in SOURCE_TYPES} | {t.recogniser for t in SOURCE_TYPES}
    wanted = {
        "index": {p.stem for p in (root / "index").glob("*.py")} - {"__init__"},
        "extractors": {p.stem for p in (root / "extractors").glob("*.py")} - {"__init__"} - named,
    }
    entries = {
        "index": map_entry(text, "engine/index/", "engine/search/"),
        "extractors": map_entry(text, "engine/extractors/", "engine/language/"),
    }
    for package, modules in wanted.items():
        missing = {m for m in modules if not re.search(rf"\b{m}\b", entries[package])}
        assert not missing, (package, missing)
