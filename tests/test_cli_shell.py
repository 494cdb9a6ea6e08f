"""The CLI as a shell sees it: option order, closed pipes, Ctrl+C, usage exit codes."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.settings import Settings
from tests.conftest import cli_args
from tests.test_cli import cli
from tests.test_indexing import write_layer

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def layer(settings_factory: Callable[..., Settings]) -> list[str]:
    settings = settings_factory()
    write_layer(settings.roots[0])
    return cli_args(settings)


def test_global_options_go_before_or_after_the_command(
    layer: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, db_file, config = layer[1], layer[3], layer[5]
    code, out, err = cli(*layer, "reindex")
    assert code == 0 and "indexed 2 file(s)" in out, err
    code, out, err = cli("--root", root, "status", "--db", db_file, "--config", config)
    assert code == 0 and f"index      {db_file}" in out, err
    code, out, err = cli(f"--db={db_file}", f"--config={config}", "discover", "--root", root)
    assert code == 0 and "2 file(s)" in out, err
    monkeypatch.chdir(tmp_path)  # where a root named "reindex" would be
    code, out, err = cli("--root", "reindex", "--db", db_file, "--config", config, "discover")
    assert code == 0 and "0 file(s)" in out, err  # a root named like a command is a value


def memex(*args: str) -> subprocess.Popen[bytes]:
    """The real entry point (`desktop.launcher:main`) in a child process."""
    script = "import sys; from desktop.launcher import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )


def test_discover_into_a_reader_that_stops_after_one_line(layer: list[str]) -> None:
    notes = Path(layer[1]) / "notes" / "many"
    notes.mkdir()
    for n in range(12_000):  # > 1 MB of lines: more than any pipe buffer holds
        (notes / f"note-{n:05}.md").touch()
    with memex(*layer, "discover", "--files") as child:  # global options first, via the launcher
        assert child.stdout is not None and child.stderr is not None
        first = child.stdout.readline()
        child.stdout.close()  # what `head -1` does after its line
        err = child.stderr.read().decode()
        assert child.wait(timeout=120) == 141
    assert first.split()[0] == b"slack" and err == ""


def test_search_into_a_reader_that_is_gone(layer: list[str]) -> None:
    assert cli("reindex", *layer)[0] == 0
    with memex(*layer, "--search", "beans", "--json") as child:
        assert child.stdout is not None and child.stderr is not None
        child.stdout.close()  # no reader left: the first write meets a closed pipe
        err = child.stderr.read().decode()
        assert child.wait(timeout=120) == 141
    assert err == ""


def test_ctrl_c_while_the_engine_loads_is_one_line(layer: list[str]) -> None:
    """KeyboardInterrupt raised by the import of engine.cli, as Ctrl+C right after start."""
    script = (
        "import sys\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'engine.cli':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Interrupt())\n"
        "from desktop.launcher import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "status", *layer],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 130
    assert done.stderr == "memex: interrupted\n" and done.stdout == ""


def test_backup_onto_an_existing_file_is_a_usage_error(layer: list[str], tmp_path: Path) -> None:
    assert cli("reindex", *layer)[0] == 0
    target = tmp_path / "kept.db"
    target.write_bytes(b"an earlier backup")
    code, out, err = cli("backup", str(target), *layer)
    assert code == 2 and out == ""
    assert err.startswith("memex: ") and "--force" in err and err.count("\n") == 1
    assert target.read_bytes() == b"an earlier backup"
    code, _, err = cli("backup", layer[3], "--force", *layer)
    assert code == 2 and "the index itself" in err
    code, out, err = cli("backup", str(target), "--force", *layer)
    assert code == 0 and out.startswith("backup     "), err
    assert target.read_bytes() != b"an earlier backup"
