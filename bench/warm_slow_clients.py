"""Warm server under slow clients: 20 clients, 2 of them never reading, a slow re-ranker.

    .venv/bin/python -m bench.warm_slow_clients [--clients 20] [--silent 2] [--delay 4]

A `memex watch` child process serves a synthetic layer (hashing embedder: this measures the
server, not the model) with the HTTP re-ranker on a local fake server that sleeps `--delay`
seconds on every call (tests/fake_rerank.py), under the re-ranker's own bound
(`rerank.timeout_seconds`, 5 s). Then, at once: `--silent` raw clients send a large `--json`
search (`--limit 1000`) and never read a byte, and the other clients each run the warm
client's own code (`engine.warm.client.ask`, on a thread, over real sockets) and, when the
server declines or takes too long, the one-shot path as `memex --search … --json` in a
child process (MEMEX_NO_WARM=1), as the command would. A client's deadline is the search's
bound, the re-ranker's 5 s; each is to be answered within it + 1 s. Each row: the path that
answered, the seconds to the warm answer or to the decision to go one-shot, to the answer,
the exit code. Then one more search must be answered warm, with the silent clients still
connected, and the server's counters are read (`dropped`: the silent clients let go).
Every child runs with its XDG folders in bench/out/warm_slow_clients-run/, never the user's.
Writes bench/out/warm_slow_clients.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Any

from bench.common import OUT, REPO, machine, markdown_table, write_record
from bench.perf_index import memex_command
from engine import __version__
from engine.warm import client, server
from engine.warm.argv import common_options, glue_values
from engine.warm.identity import cli_settings, identity
from engine.warm.protocol import PROTOCOL
from engine.warm.runtime import address_for, connect

sys.path.insert(0, str(REPO))
from tests.fake_rerank import FakeRerank  # noqa: E402

WORK = OUT / "warm_slow_clients-run"
RESULT = OUT / "warm_slow_clients.json"
XDG = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR")
RERANK_BOUND = 5.0  # rerank.timeout_seconds' default: the search's deadline here
NOTES = 600  # notes of three sections: a --json page of 1,000 hits is ~2 MB
QUERY = ["--search", "turnip harvest schedule", "--json"]


class SlowRerank(FakeRerank):
    """The fake re-rank server, `delay` seconds slow on every call (threads: in parallel)."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        super().__init__("llama")

    def answer(self, body: dict[str, Any]) -> tuple[int, Any]:
        time.sleep(self.delay)
        return super().answer(body)


def private_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMEX_")}
    for name in XDG:
        folder = WORK / "xdg" / name.lower()
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o700)
        env[name] = str(folder)
    return env


def layer(rerank: SlowRerank) -> list[str]:
    """`--root/--db/--config` of a synthetic layer of notes, the re-ranker configured."""
    root = WORK / "layer"
    shutil.rmtree(root, ignore_errors=True)
    (root / "notes").mkdir(parents=True)
    for n in range(NOTES):
        sections = "".join(
            f"## Part {p}\nThe turnip harvest schedule, row {n}, part {p}: "
            + "beds, seedlings and frost dates. " * 12
            + "\n"
            for p in range(3)
        )
        (root / "notes" / f"note-{n:04}.md").write_text(f"# Note {n}\n{sections}")
    config = WORK / "config.toml"
    config.write_text(
        f'log_dir = "{WORK / "logs"}"\n[embedder]\nname = "hashing"\n'
        f'[rerank]\nbackend = "http"\nbase_url = "{rerank.base_url}"\n'
    )
    db = WORK / "index" / "memex.db"
    shutil.rmtree(db.parent, ignore_errors=True)
    return ["--root", str(root), "--db", str(db), "--config", str(config)]


class Watch:
    """`memex watch` in a child process, until `stop`."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.log = WORK / "watch.log"
        with self.log.open("wb") as out:
            self.child = subprocess.Popen(
                [*memex_command(), *args, "watch"], stdout=out, stderr=subprocess.STDOUT, env=env
            )
        deadline = time.monotonic() + 600
        while b"watching with" not in self.log.read_bytes():
            if self.child.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"memex watch did not start: {self.log.read_text()}")
            time.sleep(0.1)

    def stop(self) -> None:
        self.child.send_signal(signal.SIGTERM)
        self.child.wait(timeout=120)


def silent_client(args: list[str], env: dict[str, str]) -> socket.socket:
    """A client that sends a large `--json` search, as `memex --search` would, and never
    reads its answer."""
    argv = [*args, *QUERY, "--limit", "1000"]
    common = common_options(glue_values(argv))
    assert common is not None
    settings = cli_settings(common.root, common.db, common.config)
    sock, token = connect(address_for(settings.db_path, env), 5.0)
    request = {
        "memex": PROTOCOL,
        "op": "search",
        "version": __version__,
        "identity": identity(settings, env),
        "argv": argv,
        "common": common.as_json(),
        "cwd": os.getcwd(),
        "token": token,
    }
    sock.sendall(json.dumps(request).encode() + b"\n")
    return sock


def one_client(args: list[str], env: dict[str, str], rows: list[dict[str, Any]]) -> None:
    """One client, as `memex --search … --json` runs it: the warm client's own code asks
    the server (`engine.warm.client.ask`, real sockets); when it declines, or no worker
    takes the search in time, the one-shot path answers in a child process. Its path, the
    seconds to the warm answer or the decision to go one-shot, to the answer, exit code."""
    started = time.perf_counter()
    reply = client.ask([*args, *QUERY], env)
    asked = time.perf_counter() - started
    if reply is not None:
        code, stdout = int(reply["code"]), str(reply["stdout"])
    else:
        done = subprocess.run(
            [*memex_command(), *args, *QUERY],
            capture_output=True,
            text=True,
            env={**env, client.ENV_OFF: "1"},
            timeout=600,
        )
        code, stdout = done.returncode, done.stdout
    rows.append(
        {
            "path": "warm" if reply is not None else "one-shot",
            "asked_s": round(asked, 3),
            "seconds": round(time.perf_counter() - started, 3),
            "code": code,
            "results": len(json.loads(stdout)["results"]) if code == 0 else 0,
        }
    )


def status(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    settings = cli_settings([args[1]], args[3], args[5])
    sock, token = connect(address_for(settings.db_path, env), 5.0)
    with sock:
        sock.settimeout(30)
        sock.sendall(json.dumps({"memex": PROTOCOL, "op": "status", "token": token}).encode())
        sock.sendall(b"\n")
        with sock.makefile("rb") as lines:
            return dict(client.read_line(lines))


def storm(args: list[str], env: dict[str, str], clients: int, silent: int) -> dict[str, Any]:
    """The silent clients, then the others at once; then one more search."""
    rows: list[dict[str, Any]] = []
    held = [silent_client(args, env) for _ in range(silent)]
    try:
        threads = [
            threading.Thread(target=one_client, args=(args, env, rows))
            for _ in range(clients - silent)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        after: list[dict[str, Any]] = []
        one_client(args, env, after)  # the silent clients still connected
        counters = status(args, env)
        for _ in range(300):  # their answers' write deadline passes: the server lets go
            if counters["dropped"] >= silent:
                break
            time.sleep(0.1)
            counters = status(args, env)
    finally:
        for sock in held:
            sock.close()
    return {"rows": rows, "after": after[0], "server": counters}


def figures_of(run: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    rows = run["rows"]
    bound = RERANK_BOUND + 1.0
    late = [r for r in rows if r["seconds"] > bound or r["code"] != 0]
    return {
        "clients": args.clients,
        "silent": args.silent,
        "rerank_delay_s": args.delay,
        "rerank_bound_s": RERANK_BOUND,
        "queue_s": server.QUEUE_SECONDS,
        "taken_timeout_s": client.TAKEN_TIMEOUT_SECONDS,
        "rows": sorted(rows, key=lambda r: r["seconds"]),
        "warm": sum(r["path"] == "warm" for r in rows),
        "one_shot": sum(r["path"] == "one-shot" for r in rows),
        "max_s": max(r["seconds"] for r in rows),
        "max_warm_s": max((r["seconds"] for r in rows if r["path"] == "warm"), default=0.0),
        "max_one_shot_s": max((r["seconds"] for r in rows if r["path"] == "one-shot"), default=0.0),
        "late": len(late),
        "after": run["after"],
        "server": run["server"],
        "ok": not late
        and run["after"]["path"] == "warm"
        and run["server"]["dropped"] == args.silent,
    }


def table(f: dict[str, Any]) -> str:
    rows = [
        [path, sum(r["path"] == path for r in f["rows"]), f"{max_s:.2f} s"]
        for path, max_s in (("warm", f["max_warm_s"]), ("one-shot", f["max_one_shot_s"]))
    ]
    return markdown_table(["answered by", "clients", "slowest"], rows)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bench.warm_slow_clients", description=__doc__.split("\n")[0]
    )
    p.add_argument("--clients", type=int, default=20, help="clients at once, the silent included")
    p.add_argument("--silent", type=int, default=2, help="clients that never read their answer")
    p.add_argument("--delay", type=float, default=4.0, help="the re-ranker's seconds per call")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    WORK.mkdir(parents=True, exist_ok=True)
    env = private_env()
    rerank = SlowRerank(args.delay).start()
    try:
        index = layer(rerank)
        watch = Watch(index, env)
        try:
            before = machine()
            figures = figures_of(storm(index, env, args.clients, args.silent), args)
        finally:
            watch.stop()
    finally:
        rerank.stop()
    print(table(figures))
    print(f"\nevery client within its deadline + 1 s: {figures['ok']}; server {figures['server']}")
    write_record(RESULT, before, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
