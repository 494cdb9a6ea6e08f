"""One Memex per user: two real processes, a stale socket, and the self-test command."""

from __future__ import annotations

import os
import queue
import socket
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QDir

from desktop.instance import InstanceServer, send, socket_name
from engine.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
LINE_TIMEOUT = 90


def _env(tmp_path: Path, name: str) -> dict[str, str]:
    config = tmp_path / "desktop-config.toml"
    config.write_text(f'log_dir = "{tmp_path / "logs"}"\n\n[desktop]\nwatching = false\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMEX_")}
    env.update(
        QT_QPA_PLATFORM="offscreen",
        MEMEX_INSTANCE=name,
        MEMEX_CONFIG=str(config),
        PYTHONPATH=str(ROOT),
    )
    return env


class _Lines:
    """A process's stderr, line by line, read on a helper thread (no timing guesses)."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        assert process.stderr is not None
        stream = process.stderr
        self.done = threading.Event()

        def read() -> None:
            for line in stream:
                self.lines.put(line)
            self.done.set()

        threading.Thread(target=read, daemon=True).start()

    def wait_for(self, text: str) -> str:
        while True:
            try:
                line = self.lines.get(timeout=LINE_TIMEOUT)
            except queue.Empty:
                raise AssertionError(f"no line with {text!r}; seen: {self.seen}") from None
            self.seen.append(line)
            if text in line:
                return line


def _launch(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "desktop.launcher", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_second_launch_toggles_the_first(qapp: Any, tmp_path: Path, demo_index: Settings) -> None:
    name = f"memex-test-{uuid.uuid4().hex[:10]}"
    env = _env(tmp_path, name)
    index = ["--root", str(demo_index.roots[0]), "--db", str(demo_index.db_path)]
    first = _launch(index, env)
    lines = _Lines(first)
    try:
        lines.wait_for(f"memex: running (instance {name})")
        second = subprocess.run(
            [sys.executable, "-m", "desktop.launcher", "--toggle"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=LINE_TIMEOUT,
        )
        assert second.returncode == 0, second.stderr
        assert "already running" in second.stderr
        # No tray and no hotkey offscreen: the window opened at start, and a toggle minimises
        # it (hiding it would leave no way back).
        assert "received toggle; the window is minimised" in lines.wait_for("received toggle")
        third = subprocess.run(
            [sys.executable, "-m", "desktop.launcher", *index],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=LINE_TIMEOUT,
        )
        assert third.returncode == 0 and "already running" in third.stderr
        assert "the window is shown" in lines.wait_for("received toggle")
        assert send(name, "quit")
        assert first.wait(timeout=LINE_TIMEOUT) == 0
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
        lines.done.wait(LINE_TIMEOUT)
        for stream in (first.stdout, first.stderr):
            if stream is not None:
                stream.close()


def test_quit_over_the_instance_socket_ends_the_app_without_a_traceback(
    qapp: Any, tmp_path: Path
) -> None:
    """The command came over a socket Qt deletes with its server while the app ends: it
    must not call back into the closed server (`QLocalSocket already deleted`)."""
    name = f"memex-test-{uuid.uuid4().hex[:10]}"
    (tmp_path / "root").mkdir()
    index = ["--root", str(tmp_path / "root"), "--db", str(tmp_path / "index" / "memex.db")]
    first = _launch(index, _env(tmp_path, name))
    lines = _Lines(first)
    try:
        lines.wait_for(f"memex: running (instance {name})")
        assert send(name, "quit")
        assert first.wait(timeout=LINE_TIMEOUT) == 0
        assert lines.done.wait(LINE_TIMEOUT)
        while not lines.lines.empty():
            lines.seen.append(lines.lines.get())
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
        for stream in (first.stdout, first.stderr):
            if stream is not None:
                stream.close()
    assert any("received quit" in line for line in lines.seen), lines.seen
    assert not any("Traceback" in line or "already deleted" in line for line in lines.seen)


@pytest.mark.skipif(sys.platform == "win32", reason="named pipes leave no stale file")
def test_a_stale_socket_from_a_crash_is_cleared(qapp: Any, qtbot: Any) -> None:
    name = f"memex-stale-{uuid.uuid4().hex[:10]}"
    path = os.path.join(QDir.tempPath(), name)
    crashed = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    crashed.bind(path)  # a socket file nobody listens on, as a killed instance leaves it
    crashed.close()
    assert os.path.exists(path) and not send(name, "show", timeout_ms=200)
    server = InstanceServer()
    try:
        assert server.listen(name)
        received: list[str] = []
        server.command.connect(received.append)
        assert send(name, "show")
        qtbot.waitUntil(lambda: received == ["show"], timeout=30_000)
    finally:
        server.close()


def test_socket_name_is_per_user_and_overridable() -> None:
    mine = socket_name({})
    assert Path(mine).name.startswith("memex-") and mine == socket_name({})
    assert socket_name({"MEMEX_INSTANCE": "memex-x"}) == "memex-x"


@pytest.mark.skipif(sys.platform == "win32", reason="named pipes, not files in a folder")
def test_socket_lives_in_a_private_folder_not_in_tmp(qapp: Any, qtbot: Any, tmp_path: Path) -> None:
    """Another local user who binds a /tmp name first cannot make this user's Memex exit
    as "already running": the socket is in a folder only they can enter."""
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    name = socket_name({"XDG_RUNTIME_DIR": str(runtime)})
    assert Path(name).parent == runtime
    squatter = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    squatter.bind(os.path.join(QDir.tempPath(), Path(name).name))  # the name it had in /tmp
    squatter.listen(1)
    try:
        assert not send(name, "toggle", timeout_ms=200)  # nobody answers at the real name
        server = InstanceServer()
        try:
            assert server.listen(name) and Path(name).exists()
            received: list[str] = []
            server.command.connect(received.append)
            assert send(name, "show")
            qtbot.waitUntil(lambda: received == ["show"], timeout=30_000)
        finally:
            server.close()
    finally:
        squatter.close()
        os.unlink(os.path.join(QDir.tempPath(), Path(name).name))
    # A runtime folder that others may enter, or that is not a folder, is not used.
    runtime.chmod(0o755)
    fallback = Path(socket_name({"XDG_RUNTIME_DIR": str(runtime)})).parent
    assert fallback != runtime and fallback.stat().st_mode & 0o777 == 0o700
    assert Path(socket_name({"XDG_RUNTIME_DIR": "relative/run"})).parent == fallback


def test_self_test_command_on_the_demo_index(tmp_path: Path, demo_index: Settings) -> None:
    shot = tmp_path / "shot.png"
    env = _env(tmp_path, f"memex-selftest-{uuid.uuid4().hex[:8]}")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "desktop.launcher",
            "--self-test",
            "--root",
            str(demo_index.roots[0]),
            "--db",
            str(demo_index.db_path),
            "--query",
            "Priya",
            "--screenshot",
            str(shot),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    verdict = done.stdout.strip().splitlines()[-1]
    assert verdict.startswith("memex self-test: ok — ") and "profile card: Priya Raman" in verdict
    assert shot.stat().st_size > 20_000  # a real picture, not an empty image


def test_self_test_fails_with_one_line(tmp_path: Path, demo_index: Settings) -> None:
    not_an_index = tmp_path / "empty.db"
    not_an_index.write_bytes(b"")
    env = _env(tmp_path, f"memex-selftest-{uuid.uuid4().hex[:8]}")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "desktop.launcher",
            "--self-test",
            "--root",
            str(demo_index.roots[0]),
            "--db",
            str(not_an_index),
            "--query",
            "Priya",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1
    [verdict] = done.stdout.strip().splitlines()
    assert verdict.startswith("memex self-test: FAILED — the search failed: ")
    assert "no Memex index" in verdict
