"""The running desktop app answers `memex --search` with its warm engine."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

from test_desktop_instance import ROOT, _Lines

from desktop.instance import send
from engine.settings import Settings
from tests.conftest import cli_args
from tests.test_cli import cli
from tests.test_indexing import write_layer

ANSWERED = re.compile(r"memex: answered by the warm process (\d+)")


def _search(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "desktop.launcher", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=120,
    )


def test_the_app_answers_searches_like_the_one_shot_path(
    settings_factory: Callable[..., Settings],
) -> None:
    settings = settings_factory()
    write_layer(settings.roots[0])
    args = cli_args(settings, extra_config="[desktop]\nwatching = false\n")
    assert cli(*args, "reindex")[0] == 0
    name = f"memex-test-{uuid.uuid4().hex[:10]}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMEX_")}
    env |= {"QT_QPA_PLATFORM": "offscreen", "MEMEX_INSTANCE": name, "PYTHONPATH": str(ROOT)}
    with subprocess.Popen(
        [sys.executable, "-m", "desktop.launcher", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as app:
        try:
            _check_answers(app, _Lines(app), env, args, name)
        finally:
            if app.poll() is None:
                app.kill()


def _check_answers(
    app: subprocess.Popen[str], lines: _Lines, env: dict[str, str], args: list[str], name: str
) -> None:
    address = lines.wait_for("memex: answering searches at").split(" at ", 1)[1].strip()
    assert Path(address).parent == Path(os.environ["XDG_RUNTIME_DIR"])
    query = [*args, "--search", "climbing beans", "--json"]
    warm = _search({**env, "MEMEX_WARM_DEBUG": "1"}, *query)
    found = ANSWERED.search(warm.stderr.decode())
    assert found and int(found.group(1)) == app.pid, warm.stderr
    cold = _search({**env, "MEMEX_NO_WARM": "1"}, *query)
    assert warm.returncode == cold.returncode == 0 and b"garden.md" in cold.stdout
    took = re.compile(rb'"took_ms": [0-9.]+')
    assert took.sub(b"", warm.stdout) == took.sub(b"", cold.stdout)
    assert send(name, "quit")
    assert app.wait(timeout=90) == 0
    lines.done.wait(timeout=90)
    assert not Path(address).exists()
