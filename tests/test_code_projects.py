"""Code projects are not notebooks: the Markdown of a folder holding `.git` and a build file
is left out (and `memex discover` says so), unless a route takes it; an Obsidian vault is a
vault even when it is a git repository; plain notes are notes."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from engine.cli import run
from engine.index.projects import CodeProjects, is_project
from engine.index.routes import classify, scan
from engine.index.runs import reindex
from engine.settings import Route, Settings
from engine.store import db
from tests.conftest import cli_args

PROJECT_DOCS = (
    "code/weather-cli/README.md",
    "code/weather-cli/docs/usage.md",
    "code/weather-cli/docs/api/forecast.md",
    "code/weather-cli/src/weather/NOTES.md",
)
VAULT_NOTES = ("Obsidian/garden/Ferry timetable.md", "Obsidian/garden/Plants/Basil.md")
PLAIN_NOTES = ("Documents/notes/Climbing plan.md",)


def write(path: Path, text: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def git_folder(repo: Path) -> None:
    """What `git init` leaves (the parts a walk could see)."""
    write(repo / ".git/HEAD", "ref: refs/heads/main\n")
    write(repo / ".git/config", "[core]\n\trepositoryformatversion = 0\n")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    project = home / "code/weather-cli"
    git_folder(project)
    write(project / "pyproject.toml", '[project]\nname = "weather-cli"\nversion = "0.3.0"\n')
    write(project / "src/weather/__init__.py", '"""Forecasts in the terminal."""\n')
    for relative in PROJECT_DOCS:
        write(home / relative, "# Usage\n\nRun `weather --city Oslo` to see the ferry forecast.\n")
    vault = home / "Obsidian/garden"
    git_folder(vault)  # a vault kept in git, with a package.json for its publishing script
    write(vault / "package.json", '{"name": "garden-publish", "private": true}\n')
    write(vault / ".obsidian/app.json", "{}\n")
    write(home / VAULT_NOTES[0], "# Ferry timetable\n\nThe first ferry leaves at 07:10.\n")
    write(home / VAULT_NOTES[1], "# Basil\n\nWater every second day, more in July.\n")
    write(home / PLAIN_NOTES[0], "# Climbing plan\n\nBouldering at the Arch on Friday.\n")
    return home


def indexed(settings: Settings) -> set[str]:
    conn = db.connect(settings.db_path, create=False)
    try:
        rows = conn.execute("SELECT source_file FROM index_state WHERE source_type = 'note'")
        return {Path(r[0]).relative_to(settings.roots[0]).as_posix() for r in rows}
    finally:
        conn.close()


def test_a_project_is_git_with_a_build_file_and_a_vault_never_is() -> None:
    assert is_project([".git", "pyproject.toml", "README.md"])
    assert is_project([".git", "weather.gemspec"])  # a build file known by its suffix
    assert not is_project(["pyproject.toml", "README.md"])  # not in git
    assert not is_project([".git", "Makefile", "notes.md"])  # make alone: notes published
    assert not is_project([".git", ".obsidian", "package.json"])  # a vault stays a vault


def test_project_docs_are_left_out_and_vault_and_notes_indexed(
    home: Path, settings_factory: Callable[..., Settings]
) -> None:
    settings = settings_factory(home, embedder__name="hashing")
    stats = reindex(settings=settings)
    assert not stats.errors, stats.errors
    assert indexed(settings) == {*VAULT_NOTES, *PLAIN_NOTES}
    discovery = scan(settings)
    assert (discovery.project_docs.projects, discovery.project_docs.files) == (1, 3)
    # Of no known format: the README (never a note), __init__.py and the two build files.
    assert discovery.skipped.unknown == 4


def test_discover_says_what_was_left_out_as_project_docs(
    home: Path, settings_factory: Callable[..., Settings]
) -> None:
    out, err = io.StringIO(), io.StringIO()
    code = run([*cli_args(settings_factory(home)), "discover"], out, err)
    assert code == 0, err.getvalue()
    lines = out.getvalue().splitlines()
    skipped = next(line for line in lines if line.startswith("skipped: "))
    assert (
        "3 Markdown file(s) in 1 code project(s) left out as project docs "
        "(a route can include them)" in skipped
    ), skipped
    assert any(line.endswith("Obsidian vault — 2 note(s)") for line in lines), lines


def test_a_route_in_the_config_includes_the_project_docs(
    home: Path, settings_factory: Callable[..., Settings]
) -> None:
    settings = settings_factory(home)
    route = '[[routes]]\npattern = "code/weather-cli/docs/**/*.md"\nsource_type = "note"\n'
    out, err = io.StringIO(), io.StringIO()
    code = run([*cli_args(settings, route), "reindex"], out, err)
    assert code == 0, err.getvalue()
    assert indexed(settings) == {
        *VAULT_NOTES,
        *PLAIN_NOTES,
        "code/weather-cli/docs/usage.md",
        "code/weather-cli/docs/api/forecast.md",
    }
    routed = replace(settings, routes=(Route("code/weather-cli/docs/**/*.md", "note"),))
    assert scan(routed).project_docs.files == 1  # src/weather/NOTES.md: no route takes it


def test_the_watcher_leaves_out_a_project_doc_as_the_walk_does(
    home: Path, settings_factory: Callable[..., Settings]
) -> None:
    settings = settings_factory(home, embedder__name="hashing")
    assert classify(home / "code/weather-cli/docs/usage.md", settings) is None
    vault_note = classify(home / VAULT_NOTES[1], settings)
    assert vault_note is not None and vault_note.source_type == "note"
    plain = classify(home / PLAIN_NOTES[0], settings)
    assert plain is not None and plain.source_type == "note"


def test_a_vault_inside_a_project_is_a_vault(tmp_path: Path) -> None:
    project = tmp_path / "app"
    projects = CodeProjects()
    projects.enter(project, [".git", "Cargo.toml", "docs", "handbook"])
    projects.enter(project / "docs", ["design.md"])
    projects.enter(project / "handbook", [".obsidian", "Onboarding.md"])
    projects.enter(project / "handbook" / "teams", ["Platform.md"])
    assert projects.leaves_out(project / "docs", "design.md")
    assert not projects.leaves_out(project / "docs", "schema.json")  # not Markdown
    assert not projects.leaves_out(project / "handbook", "Onboarding.md")
    assert not projects.leaves_out(project / "handbook" / "teams", "Platform.md")
    summary = projects.summary()
    assert (summary.projects, summary.files) == (1, 1)
