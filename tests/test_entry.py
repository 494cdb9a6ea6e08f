"""The `memex` console entry point (engine/entry.py): the CLI in the engine, the window
through the `memex.frontends` entry point, never a static import of `desktop`."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from collections.abc import Sequence
from importlib.metadata import distribution, entry_points
from pathlib import Path

import pytest

from engine import entry

ROOT = Path(__file__).resolve().parent.parent


def test_the_console_script_is_the_engines_and_the_app_is_a_registered_front_end() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["scripts"] == {"memex": "engine.entry:main"}
    assert project["project"]["entry-points"][entry.FRONTENDS] == {"desktop": "desktop.app:main"}
    installed = {p.name: p.value for p in distribution("memex").entry_points}
    assert installed["memex"] == "engine.entry:main"  # the editable install is current
    (desktop,) = [p for p in entry_points(group=entry.FRONTENDS) if p.name == entry.FRONTEND]
    assert desktop.value == "desktop.app:main"


@pytest.mark.parametrize(
    ("argv", "gui"),
    [
        ([], True),
        (["--toggle"], True),
        (["--self-test"], True),
        (["--db", "x.db"], True),
        (["--root", "r", "--config", "c.toml"], True),
        (["--search", "ferry"], False),
        (["--db", "x.db", "status"], False),
        (["--db"], False),
        (["reindex"], False),
    ],
)
def test_which_arguments_open_the_front_end(argv: list[str], gui: bool) -> None:
    assert entry.wants_gui(argv) is gui


def test_the_front_end_gets_the_arguments_and_its_exit_code_is_memexs() -> None:
    seen: list[Sequence[str]] = []

    def frontend(argv: Sequence[str]) -> int:
        seen.append(argv)
        return 3

    assert entry.main(["--toggle"], load_frontend=lambda: frontend) == 3
    assert seen == [["--toggle"]]


def test_no_front_end_is_one_sentence_and_exit_4(capsys: pytest.CaptureFixture[str]) -> None:
    def missing() -> entry.Frontend:
        raise entry.FrontendMissing("the desktop app is not installed (PySide6)")

    assert entry.main([], load_frontend=missing) == entry.EXIT_NO_FRONTEND
    err = capsys.readouterr().err
    assert err == (
        "memex: the desktop app is not installed (PySide6); "
        "install 'memex[desktop]' or use 'memex --search'\n"
    )


def test_the_installed_front_end_is_found_through_its_entry_point(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import desktop.app

    seen: list[Sequence[str]] = []
    monkeypatch.setattr(desktop.app, "main", lambda argv: seen.append(argv) or 0)
    assert entry.main(["--db", "x.db"]) == 0
    assert seen == [["--db", "x.db"]]


def test_without_a_registered_front_end_memex_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.metadata

    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: [])
    assert entry.main([]) == entry.EXIT_NO_FRONTEND
    assert "the desktop app is not installed;" in capsys.readouterr().err


def test_the_console_script_runs_the_cli_without_qt_or_the_desktop_package() -> None:
    script = (
        "import sys; from engine.entry import main; code = main(['--version']); "
        "bad = [m for m in ('PySide6', 'desktop') if m in sys.modules]; "
        "assert not bad, bad; sys.exit(code)"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("memex ")
    memex = Path(sys.executable).parent / "memex"
    if memex.exists():  # the installed console script itself
        done = subprocess.run([str(memex), "--version"], capture_output=True, text=True)
        assert done.returncode == 0 and done.stdout.startswith("memex "), done.stderr
