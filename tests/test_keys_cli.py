"""`memex key set | status | delete`: the keyring only, never a file, never printed."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backends import fail

from engine.cli import keys as keys_cli
from engine.cli import run
from tests.memory_keyring import installed

SECRET = "sk-proj-do-not-print-me"


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setattr(keys_cli, "prompt", lambda _: SECRET)
    with installed() as memory:
        yield memory


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(["key", *argv], out, err)
    return code, out.getvalue(), err.getvalue()


def test_set_status_delete(store: dict[str, str]) -> None:
    assert cli("status")[1].endswith("works only with a local server (base_url on localhost).\n")
    code, out, _ = cli("set")
    assert code == 0 and store == {"memex/openai": SECRET} and SECRET not in out
    code, out, _ = cli("status")
    assert code == 0 and "a key is stored" in out and "from the system keyring" in out
    assert SECRET not in out
    assert cli("delete")[:2] == (0, "The stored API key was removed.\n") and store == {}
    assert cli("delete")[1] == "No key was stored.\n"


def test_environment_takes_precedence(
    store: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-secret")
    code, out, _ = cli("status")
    assert "from the environment" in out and "sk-env-secret" not in out


def test_set_from_stdin_and_empty_key(
    store: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("sk-from-stdin\n"))
    assert cli("set", "--stdin")[0] == 0 and store["memex/openai"] == "sk-from-stdin"
    monkeypatch.setattr(keys_cli, "prompt", lambda _: "  ")
    code, _, err = cli("set")
    assert code == 2 and "no key given" in err


def test_no_keyring_backend_exits_4_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(var, str(tmp_path))
    monkeypatch.setattr(keys_cli, "prompt", lambda _: SECRET)
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        code, out, err = cli("set")
        status = cli("status")
    finally:
        keyring.set_keyring(previous)
    assert code == 4 and out == ""
    assert "no system keyring" in err and "OPENAI_API_KEY" in err and SECRET not in err
    assert list(tmp_path.rglob("*")) == []
    assert status[0] == 0 and "unavailable" in status[1]
