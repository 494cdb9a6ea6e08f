"""Code projects: their Markdown is the project's documentation, not someone's notes.

A code project is a folder holding `.git` (a folder, or the file a worktree or submodule
has) together with a build file (`BUILD_FILES`). Below it, a Markdown file that no route
claims is not recognised as a note: it is counted as left out instead, and `memex discover`
says how many and in how many projects. A route (the config's `[[routes]]`, or the seed
layout's `notes/**/*.md`) still takes such files. An Obsidian vault (a folder holding
`.obsidian/`) is a vault even when it is a git repository with a build file, and a vault
inside a project's tree is a vault too.

The walk decides each folder once, from the listing it has already made (no file system
access), and a folder inherits its parent's project; a single path (the watcher's) is
decided by looking at the folders from its root down, each once per `CodeProjects`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from engine.extractors.recognisers import RECOGNISERS

GIT_MARK = ".git"
VAULT_MARK = ".obsidian"
# Files that declare a package or a build. Not a Makefile alone: notes kept in git are often
# made into a site by `make`, and a C project's Markdown is mostly its README, never a note.
# Nor a static site's configuration (mkdocs.yml, _config.yml, hugo.toml): a blog is writing.
BUILD_FILES = frozenset(
    {
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "package.json",
        "tsconfig.json",
        "deno.json",
        "Cargo.toml",
        "go.mod",
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
        "settings.gradle",
        "build.sbt",
        "CMakeLists.txt",
        "meson.build",
        "configure.ac",
        "composer.json",
        "mix.exs",
        "rebar.config",
        "Package.swift",
        "pubspec.yaml",
        "stack.yaml",
        "dune-project",
        "project.clj",
        "deps.edn",
        "MODULE.bazel",
        "WORKSPACE",
    }
)
BUILD_SUFFIXES = (".gemspec", ".csproj", ".fsproj", ".sln", ".cabal", ".nimble")
NOTES = RECOGNISERS["markdown"]  # what knows a note by its name (not a README, a LICENSE…)


def _note_name(name: str) -> bool:
    """Whether the Markdown recogniser would take a file of this name for a note."""
    return name.lower().endswith(NOTES.suffixes) and NOTES.test(name, b"", _nothing_beside)


def _nothing_beside(_relative: str) -> bool:
    return False  # the Markdown recogniser reads neither the head nor the siblings


def is_project(names: Iterable[str]) -> bool:
    """Whether a folder holding these entries is a code project (and not a vault)."""
    listed = set(names)
    if VAULT_MARK in listed or GIT_MARK not in listed:
        return False
    return bool(listed & BUILD_FILES) or any(n.endswith(BUILD_SUFFIXES) for n in listed)


@dataclass(frozen=True)
class ProjectDocs:
    """What a walk left out as project docs: Markdown files, and the projects holding them."""

    projects: int = 0
    files: int = 0

    def describe(self) -> str:
        return (
            f"{self.files:,} Markdown file(s) in {self.projects:,} code project(s) left out as "
            "project docs (a route can include them)"
        )


class CodeProjects:
    """Which folders lie in a code project's tree, and what was left out there."""

    def __init__(self) -> None:
        self._project: dict[Path, Path | None] = {}  # folder → the project it lies in
        self._left_out: dict[Path, int] = {}  # project → Markdown files left out

    def enter(self, folder: Path, names: Iterable[str]) -> None:
        """A folder the walk lists (its parent entered before it), with its entries."""
        listed = set(names)
        if VAULT_MARK in listed:
            self._project[folder] = None
        elif is_project(listed):
            self._project[folder] = folder
        else:
            self._project[folder] = self._project.get(folder.parent)

    def leaves_out(self, folder: Path, name: str) -> bool:
        """Whether a file no route claims is left out as a project's doc (counted)."""
        project = self._project.get(folder)
        if project is None or not _note_name(name):
            return False
        self._left_out[project] = self._left_out.get(project, 0) + 1
        return True

    def leaves_out_path(self, path: Path, root: Path) -> bool:
        """`leaves_out` for one path under `root`, its folders looked at from the root."""
        if not _note_name(path.name):
            return False
        folder = root
        if folder not in self._project:
            self._look(folder)
        for part in path.parent.relative_to(root).parts:
            folder = folder / part
            if folder not in self._project:
                self._look(folder)
        return self.leaves_out(path.parent, path.name)

    def summary(self) -> ProjectDocs:
        return ProjectDocs(len(self._left_out), sum(self._left_out.values()))

    def _look(self, folder: Path) -> None:
        try:
            names = os.listdir(folder)
        except OSError:
            names = []
        self.enter(folder, names)
