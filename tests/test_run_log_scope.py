"""`memex status` and the run log: one index's runs, its files' errors in full, notes that
are no errors, and a test run that never writes into the user's own run log."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import platformdirs
import pytest

from engine.index import runlog
from engine.settings import load_settings
from tests.conftest import REAL_FOLDER_ENV
from tests.test_cli import cli
from tests.test_indexing import write_layer

ROOT = Path(__file__).resolve().parents[1]


def index_args(base: Path, log_dir: Path | None) -> list[str]:
    """`--root/--db/--config` for a layer under `base`; `log_dir` None: the platform folder."""
    root = base / "root"
    root.mkdir(parents=True)
    config = base / "cli.toml"
    log_line = "" if log_dir is None else f'log_dir = "{log_dir}"\n'
    config.write_text(f'{log_line}[embedder]\nname = "hashing"\n')
    return ["--root", str(root), "--db", str(base / "memex.db"), "--config", str(config)]


def test_status_shows_the_last_run_of_its_own_index(tmp_path: Path) -> None:
    shared = tmp_path / "logs"  # one log for both, as the platform folder is by default
    first, second = index_args(tmp_path / "a", shared), index_args(tmp_path / "b", shared)
    write_layer(Path(first[1]))
    (Path(second[1]) / "notes").mkdir()
    (Path(second[1]) / "notes" / "one.md").write_text("# One\nA single note.\n")
    assert cli("reindex", *first)[0] == 0
    assert cli("reindex", *second)[0] == 0  # the newest line of the shared log
    code, out, _ = cli("status", *first)
    assert code == 0 and ": 2 file(s), " in out and ": 1 file(s), " not in out
    code, out, _ = cli("status", "--json", *first)
    assert json.loads(out)["last_run"]["db"] == os.path.realpath(first[3])
    lines = [json.loads(line) for line in (shared / "runs.jsonl").read_text().splitlines()]
    assert [r["db"] for r in lines] == [os.path.realpath(first[3]), os.path.realpath(second[3])]


def test_status_lists_the_files_with_errors_whole(tmp_path: Path) -> None:
    args = index_args(tmp_path, tmp_path / "logs")
    slack = Path(args[1]) / "data" / "slack"
    slack.mkdir(parents=True)
    for n in range(12):
        (slack / f"bad-{n:02}.jsonl").write_text("not json\n" * (n + 1))
    assert cli("reindex", *args)[0] == 0
    code, out, _ = cli("status", *args)
    assert code == 0 and "files      12 (12 with errors)" in out
    listed = [line for line in out.splitlines() if line.startswith("  error: ")]
    assert len(listed) == 10 and "  … and 2 more ('memex status --json' lists every one)" in out
    errors = json.loads(cli("status", "--json", *args)[1])["errors"]
    longest = errors[9]  # 10 problems: a message far wider than one line
    assert len(longest["error"]) > 200
    text = " ".join(out.split())  # the wrapped lines joined again: every word is there
    assert f"{longest['file']}: {longest['error']}" in text
    assert all(len(line) <= 100 for line in out.splitlines() if line.startswith("         "))


def test_a_file_with_many_problems_says_how_many_were_left_out(tmp_path: Path) -> None:
    args = index_args(tmp_path, tmp_path / "logs")
    slack = Path(args[1]) / "data" / "slack"
    slack.mkdir(parents=True)
    (slack / "bad.jsonl").write_text("not json\n" * 25)
    assert cli("reindex", *args)[0] == 0
    [error] = json.loads(cli("status", "--json", *args)[1])["errors"]
    assert error["error"].startswith("line 1: not JSON (a value is missing); line 2: ")
    assert error["error"].endswith("line 20: not JSON (a value is missing); … and 5 more")


def test_a_charset_fallback_is_a_note_not_an_error(tmp_path: Path) -> None:
    args = index_args(tmp_path, tmp_path / "logs")
    root = Path(args[1])
    (root / "notes").mkdir()
    (root / "notes" / "cafe.md").write_bytes("# Café\nCrème brûlée".encode("cp1252"))
    (root / "data" / "email").mkdir(parents=True)
    (root / "data" / "email" / "old.mbox").write_bytes(
        b"From a@b Fri Mar 15 10:00:00 2024\nFrom: Ann <a@b>\nSubject: Caf\xe9\n"
        b"Date: Fri, 15 Mar 2024 11:00:00 +0100\n"
        b'Content-Type: text/plain; charset="x-mac-nonsense"\n\nCr\xe8me br\xfbl\xe9e\n'
    )
    code, out, _ = cli("reindex", *args)
    assert code == 0 and "0 error(s)" in out and "error:" not in out
    status = json.loads(cli("status", "--json", *args)[1])
    assert status["errors"] == [] and status["last_run"]["error_count"] == 0
    assert status["last_run"]["notes"] == [
        {
            "file": str(root / "data" / "email" / "old.mbox"),
            "note": "line:1: unknown charset 'x-mac-nonsense', read as cp1252",
        }
    ]
    code, out, _ = cli(*args, "--search", "brûlée", "--mode", "bm25", "--json")
    assert {r["source_type"] for r in json.loads(out)["results"]} == {"note", "email_catalog"}


@pytest.fixture
def real_run_log(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the user's own run log is, from the environment the test run started with."""
    with monkeypatch.context() as real:
        for name, value in REAL_FOLDER_ENV.items():
            if value is None:
                real.delenv(name, raising=False)
            else:
                real.setenv(name, value)
        return Path(platformdirs.user_log_dir("memex")) / "runs.jsonl"


def test_tests_never_write_the_users_run_log(tmp_path: Path, real_run_log: Path) -> None:
    """A CLI run under test with no log_dir configured logs into the private test home."""
    args = index_args(tmp_path / "layer", log_dir=None)
    write_layer(Path(args[1]))
    settings = load_settings(args[5], env={}, db=args[3])
    assert settings.log_path != real_run_log
    assert not settings.log_path.is_relative_to(REAL_FOLDER_ENV["HOME"] or "/nonexistent")
    script = "import sys; from desktop.launcher import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-c", script, "reindex", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert [r["kind"] for r in runlog.read_runs(settings)] == ["reindex"]
    real = real_run_log.read_text(encoding="utf-8") if real_run_log.exists() else ""
    assert os.path.realpath(args[3]) not in real


def test_status_tells_a_file_indexed_with_a_problem_from_one_not_indexed(tmp_path: Path) -> None:
    from jsonschema import Draft202012Validator

    from engine.schemas import definition_schema

    args = index_args(tmp_path, tmp_path / "logs")
    root = Path(args[1])
    (root / "trip.md").write_text("---\ntitle: [never closed\n---\n# Trip\n\nThe ferry.\n")
    (root / "data" / "slack").mkdir(parents=True)
    (root / "data" / "slack" / "bad.jsonl").write_text("not json\n")
    assert cli("reindex", *args)[0] == 0
    code, out, _ = cli("status", *args)
    assert code == 0 and "(1 with errors, 1 indexed with a problem)" in out
    text = " ".join(out.split())  # the wrapped lines joined again
    assert f"warning: {root / 'trip.md'}: line 1: front matter" in text
    assert f"error: {root / 'data' / 'slack' / 'bad.jsonl'}: line 1: not JSON" in text
    payload = json.loads(cli("status", "--json", *args)[1])
    Draft202012Validator(definition_schema("status_response")).validate(payload)
    indexed = {Path(e["file"]).name: e["indexed"] for e in payload["errors"]}
    assert indexed == {"trip.md": True, "bad.jsonl": False}
