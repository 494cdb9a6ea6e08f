"""Memex writes only into Memex's files: a corpus of foreign files as `--db`, every command.

The corpus: a browser's history database (places.sqlite's shape: moz_ tables, WAL mode), an
SQLite file stamped with another program's application id, an SQLite file with a `chunks`
table that is not Memex's, a text file, a folder, and a 0-byte file. Each lies alone in its
own folder. Every command of the CLI's parser (`engine.cli.COMMANDS` and `--search`) runs on
each, `memex mcp` with its search, status and person tools called; the bytes of every file and
the listing of every folder are compared before and after: nothing may change, nothing may
appear beside them, and no command that needs an index may exit 0. A 0-byte file is a new
index only for the commands that build one; a path naming nothing stays so for the others.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw
import pytest

from engine.cli import COMMANDS, run
from engine.index.locks import writer_lock
from engine.index.runs import reindex
from engine.store import db, owner
from tests.conftest import make_settings
from tests.test_indexing import write_layer
from tests.test_mcp_fuzz import INITIALIZE

ROOT = Path(__file__).resolve().parent.parent
BOOT = "import sys; from engine.cli import main; sys.exit(main())"
CHILD_SECONDS = 120  # a net: each child refuses within a second or two

# Every command of the parser, with the flags that change how it opens the index.
COMMAND_LINES: dict[str, list[list[str]]] = {
    "reindex": [["reindex"], ["reindex", "--full"], ["reindex", "{root}"]],
    "discover": [
        ["discover"],
        ["discover", "--changed"],
        ["discover", "--files"],
        ["discover", "--changed", "--json"],
    ],
    "roots": [["roots", "list"], ["roots", "list", "--json"], ["roots", "add", "{root}"]],
    "demo": [["demo", "{demo}"]],
    "status": [["status"], ["status", "--json"]],
    "maintenance": [
        ["maintenance"],
        ["maintenance", "--no-vacuum"],
        ["maintenance", "--check"],
        ["maintenance", "--check", "--json"],
        ["maintenance", "--repair"],
    ],
    "backup": [["backup", "{backup}"], ["backup", "--force", "{backup}"]],
    "watch": [["watch", "--polling"]],
    "key": [["key", "status"]],
    "mcp": [["mcp"]],  # initialize, then the search, status and person tools
    "opened": [["opened", "some-id"]],
    "frecency": [["frecency"], ["frecency", "--json"], ["frecency", "--clear"]],
    "people": [["people"], ["people", "--json"], ["people", "--all"]],
    "--search": [
        ["--search", "turnips"],
        ["--search", "turnips", "--json"],
        ["--search", "turnips", "--explain"],
    ],
}
# Any exit code, but nothing written: commands, and command lines, that read no index (what
# the roots hold is listed from the roots alone).
NEEDS_NO_INDEX = {"roots", "key", "discover", "discover --files"}
BUILDS = {"reindex", "demo", "watch"}  # take a 0-byte file as a new index
IN_A_CHILD = {"watch", "mcp"}  # run until stopped: a child process, with a net
EXIT_NO_INDEX = 3
MCP_CALLS = [("search", {"query": "turnips"}), ("status", {}), ("person", {"name": "Ann"})]


def places_sqlite(path: Path) -> None:
    """A browser's history database in the shape of Firefox's places.sqlite (WAL mode)."""
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA journal_mode=WAL").fetchall()
    conn.execute(
        "CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url LONGVARCHAR, title LONGVARCHAR,"
        " visit_count INTEGER DEFAULT 0, frecency INTEGER DEFAULT -1);"
        "CREATE TABLE moz_historyvisits (id INTEGER PRIMARY KEY, place_id INTEGER,"
        " visit_date INTEGER);"
        "CREATE TABLE moz_meta (key TEXT PRIMARY KEY, value NOT NULL) WITHOUT ROWID;"
    )
    conn.execute("INSERT INTO moz_places(url, title) VALUES('https://example.org/', 'Example')")
    conn.close()


def other_application(path: Path) -> None:
    """An SQLite file of a program that stamps its own id (GeoPackage's 'GPKG')."""
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA application_id=1196444487")
    conn.execute("CREATE TABLE gpkg_contents (table_name TEXT PRIMARY KEY, data_type TEXT)")
    conn.close()


def chunks_not_memex(path: Path) -> None:
    """Another program's database that happens to have a table named `chunks`."""
    conn = apsw.Connection(str(path))
    conn.execute("CREATE TABLE chunks (id INTEGER PRIMARY KEY, data BLOB)")
    conn.execute("INSERT INTO chunks(data) VALUES(x'00ff')")
    conn.close()


def text_file(path: Path) -> None:
    path.write_text("Shopping: turnips, leeks, oats.\n", encoding="utf-8")


def folder(path: Path) -> None:
    path.mkdir()
    (path / "inside.txt").write_text("a file inside the folder\n", encoding="utf-8")


def empty_file(path: Path) -> None:
    path.write_bytes(b"")


FOREIGN: dict[str, Callable[[Path], None]] = {
    f.__name__: f
    for f in (places_sqlite, other_application, chunks_not_memex, text_file, folder, empty_file)
}
COMMAND_IDS = [" ".join(argv) for lines in COMMAND_LINES.values() for argv in lines]


def test_the_table_holds_every_command_of_the_parser() -> None:
    """A command added to the CLI must be added here, so the corpus runs it too."""
    assert set(COMMAND_LINES) == {*COMMANDS, "--search"}


def snapshot(where: Path) -> dict[str, str]:
    """Every file under `where` (the foreign file's own folder): its path and hash."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(where):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            data = path.read_bytes() if path.is_file() else b"<folder>"
            found[str(path.relative_to(where))] = hashlib.sha256(data).hexdigest()
    return found


def setup(kind: str, tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """(the foreign file, its own folder, the CLI's --root/--db/--config)."""
    root = tmp_path / "root"
    root.mkdir()
    write_layer(root)
    where = tmp_path / "theirs"
    where.mkdir()
    target = where / ("places.sqlite" if kind == "places_sqlite" else "data")
    FOREIGN[kind](target)
    config = tmp_path / "cli.toml"
    config.write_text(f'log_dir = "{tmp_path / "logs"}"\n[embedder]\nname = "hashing"\n')
    return target, where, ["--root", str(root), "--db", str(target), "--config", str(config)]


def filled(argv: list[str], tmp_path: Path) -> list[str]:
    fill = {
        "{demo}": str(tmp_path / "demo"),
        "{backup}": str(tmp_path / "backup.db"),
        "{root}": str(tmp_path / "root"),
    }
    return [fill.get(a, a) for a in argv]


def run_command(argv: list[str], args: list[str]) -> tuple[int, str]:
    """(exit code, stdout + stderr) of one command, in-process or in a child process."""
    if argv[0] == "mcp":
        return mcp_session(args)
    if argv[0] in IN_A_CHILD:
        child = subprocess.run(
            [sys.executable, "-c", BOOT, *argv, *args],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=CHILD_SECONDS,
        )
        return child.returncode, child.stdout + child.stderr
    if argv[0] == "demo":  # its root is the demo folder it writes
        args = args[2:]
    out, err = io.StringIO(), io.StringIO()
    code = run([*argv, *args], out, err)
    return code, out.getvalue() + err.getvalue()


def mcp_session(args: list[str]) -> tuple[int, str]:
    """`memex mcp` in a child: initialize, then each of MCP_CALLS, its answer read before the
    next is sent, then stdin closed. Each answer must be a tool error (the server stays up);
    (exit code, their texts and stderr)."""
    texts = []
    with subprocess.Popen(
        [sys.executable, "-c", BOOT, "mcp", *args],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as child:
        assert child.stdin is not None and child.stdout is not None
        answers: queue.Queue[str] = queue.Queue()
        reader = threading.Thread(target=lambda: [answers.put(a) for a in child.stdout or ()])
        reader.start()

        def ask(message: dict[str, Any]) -> dict[str, Any] | None:
            assert child.stdin is not None
            child.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
            child.stdin.flush()
            if "id" not in message:
                return None
            answer: dict[str, Any] = json.loads(answers.get(timeout=CHILD_SECONDS))
            return answer

        try:
            opened = ask({"id": 0, "method": "initialize", "params": INITIALIZE})
            assert opened is not None and "result" in opened, opened
            ask({"method": "notifications/initialized"})
            for n, (tool, arguments) in enumerate(MCP_CALLS, 1):
                params = {"name": tool, "arguments": arguments}
                answer = ask({"id": n, "method": "tools/call", "params": params})
                assert answer is not None and answer["result"]["isError"] is True, answer
                texts.append(answer["result"]["content"][0]["text"])
            child.stdin.close()
            code = child.wait(timeout=CHILD_SECONDS)
        finally:
            if child.poll() is None:
                child.kill()
            reader.join(timeout=CHILD_SECONDS)
        err = child.stderr.read() if child.stderr is not None else ""
    return code, "\n".join(texts) + "\n" + err


@pytest.mark.parametrize("command", COMMAND_IDS)
@pytest.mark.parametrize("kind", FOREIGN)
def test_no_command_writes_into_a_file_that_is_not_memex(
    kind: str, command: str, tmp_path: Path
) -> None:
    argv = filled(command.split(" "), tmp_path)
    if kind == "empty_file" and argv[0] in BUILDS:
        pytest.skip("a 0-byte file is a new index for a command that builds one")
    target, where, args = setup(kind, tmp_path)
    before = snapshot(where)
    code, said = run_command(argv, args)
    assert snapshot(where) == before, (command, said)  # no byte, no file beside it
    assert "Traceback" not in said, said
    assert not (tmp_path / "backup.db").exists() and not (tmp_path / "demo").exists()
    if argv[0] in NEEDS_NO_INDEX or command in NEEDS_NO_INDEX:
        return
    if kind == "empty_file" and argv[0] == "discover":  # as with no file: every file to do
        assert code == 0 and "garden.md" in said and "eng.jsonl" in said, said
        return
    expected = 0 if argv[0] == "mcp" else EXIT_NO_INDEX  # mcp: tool errors, the server up
    assert code == expected, (command, code, said)
    if kind == "empty_file":
        assert "holds no Memex index yet" in said, said
    else:
        assert f"{target} is not a Memex index" in said and owner.NOTHING_WRITTEN in said, said


ANSWERS_WITHOUT_INDEX = {  # with nothing at the path: every file to do, the people file alone
    "discover --changed",
    "discover --changed --json",
    "people",
    "people --json",
    "people --all",
}


@pytest.mark.parametrize("command", [c for c in COMMAND_IDS if c.split(" ")[0] not in BUILDS])
@pytest.mark.parametrize("folder", ["there", "missing"])
def test_a_missing_path_stays_missing(command: str, folder: str, tmp_path: Path) -> None:
    """Every command that builds no index, with --db naming nothing (in a folder that is
    there, or in one that is not): no file, no folder, nothing beside it is made."""
    argv = filled(command.split(" "), tmp_path)
    target, where, args = setup("empty_file", tmp_path)
    target.unlink()
    if folder == "missing":
        target = where / "absent" / "memex.db"
        args[args.index("--db") + 1] = str(target)
    code, said = run_command(argv, args)
    assert not target.exists() and snapshot(where) == {}, (command, said)
    assert "Traceback" not in said, said
    assert not (tmp_path / "backup.db").exists()
    if argv[0] in NEEDS_NO_INDEX or command in NEEDS_NO_INDEX:
        return
    if command in ANSWERS_WITHOUT_INDEX or argv[0] == "mcp":
        assert code == 0, (command, said)
    else:
        assert code == EXIT_NO_INDEX and "reindex" in said, (command, code, said)


@pytest.mark.parametrize("kind", ["places_sqlite", "other_application", "text_file"])
def test_the_refusal_is_one_sentence_naming_what_the_file_is(kind: str, tmp_path: Path) -> None:
    target, _, args = setup(kind, tmp_path)
    out, err = io.StringIO(), io.StringIO()
    assert run(["reindex", *args], out, err) == EXIT_NO_INDEX
    said = err.getvalue()
    assert out.getvalue() == "" and said.count("\n") == 1, said
    what = "not an SQLite database" if kind == "text_file" else "another program's SQLite"
    assert said.startswith(f"memex: {target} is not a Memex index (it is {what}"), said


def test_the_engine_refuses_too(tmp_path: Path) -> None:
    """Below the CLI, every open of the index (the app, MCP, the Python API) is refused
    before SQLite writes: the WAL switch, a damage marker, the schema."""
    target, where, _ = setup("places_sqlite", tmp_path)
    before = snapshot(where)
    for readonly in (False, True):
        with pytest.raises(db.NotMemexIndex, match="another program's SQLite database"):
            db.connect(target, readonly=readonly)
    assert snapshot(where) == before


def test_no_lock_file_is_made_beside_a_file_that_is_not_memex(tmp_path: Path) -> None:
    """The writer lock (every writer's first step: the app's too) claims the file first."""
    target, where, _ = setup("places_sqlite", tmp_path)
    settings = make_settings(tmp_path / "root", target)  # its empty config file beside it
    before = snapshot(where)
    with pytest.raises(db.NotMemexIndex, match="another program's SQLite database"):
        writer_lock(settings)
    assert snapshot(where) == before


def test_a_zero_byte_file_is_a_new_index_for_reindex(tmp_path: Path) -> None:
    target, _, args = setup("empty_file", tmp_path)
    out, err = io.StringIO(), io.StringIO()
    assert run(["reindex", *args], out, err) == 0, err.getvalue()
    assert owner.kind_of(target) is owner.Kind.MEMEX
    with target.open("rb") as f:  # in the main file's header, not only in the WAL
        assert f.read(100)[68:72] == b"MMEX"


def test_an_index_from_before_the_application_id_is_accepted_and_stamped(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    write_layer(root)
    index = tmp_path / "index" / "memex.db"
    index.parent.mkdir()
    settings = make_settings(root, index, embedder__name="hashing")
    reindex(settings=settings)
    conn = db.connect(index)
    conn.execute("PRAGMA application_id=0")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    assert owner.kind_of(index) is owner.Kind.UNSTAMPED
    conn = db.connect(index, readonly=True)  # a reader accepts it, and writes nothing
    assert conn.execute("SELECT count(*) FROM chunks").fetchone()[0] > 0
    conn.close()
    assert owner.kind_of(index) is owner.Kind.UNSTAMPED
    reindex(settings=settings)  # the writer stamps it
    conn = db.connect(index)
    assert conn.execute("PRAGMA application_id").fetchone()[0] == owner.APPLICATION_ID
    conn.close()
