"""`memex key set | status | delete`: the OpenAI API key in the system keyring.

The key is read without echo and goes only to the keyring: never to a file, the config or
the database, and it is never printed. A machine without a keyring backend (headless
Linux) gets one clear sentence and exit code 4; set OPENAI_API_KEY there instead.
"""

from __future__ import annotations

import getpass
import os
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from engine.cli.common import EXIT_OK, EXIT_UNUSABLE, CliError, Parser
from engine.embedders import apikeys

NO_KEYRING_HINT = (
    "; set the OPENAI_API_KEY environment variable instead (Memex never writes the key to a file)"
)

# How the key is asked for; tests replace it. getpass reads from the terminal, not stdin.
prompt: Callable[[str], str] = getpass.getpass


def _read_key(from_stdin: bool) -> str:
    value = sys.stdin.readline() if from_stdin else prompt("OpenAI API key (input hidden): ")
    value = value.strip()
    if not value:
        raise CliError("no key given; nothing stored")
    return value


def key_set(from_stdin: bool, out: TextIO) -> int:
    value = _read_key(from_stdin)
    try:
        apikeys.keyring_set(value)
    except apikeys.KeyringUnavailable as exc:
        raise CliError(f"{exc}{NO_KEYRING_HINT}", EXIT_UNUSABLE) from None
    out.write("The API key is stored in the system keyring (service 'memex', user 'openai').\n")
    if os.environ.get(apikeys.ENV_VAR):
        out.write(f"Note: {apikeys.ENV_VAR} is set and takes precedence over the keyring.\n")
    return EXIT_OK


def key_status(out: TextIO) -> int:
    """Where a key would come from, without revealing it."""
    in_env = bool(os.environ.get(apikeys.ENV_VAR, "").strip())
    try:
        apikeys._keyring()
        keyring_state = "a key is stored" if apikeys.keyring_get() else "no key stored"
    except apikeys.KeyringUnavailable as exc:
        keyring_state = f"unavailable ({exc})"
    source = (
        "the environment"
        if in_env
        else ("the system keyring" if keyring_state == "a key is stored" else None)
    )
    out.write(f"{apikeys.ENV_VAR:<15} {'set' if in_env else 'not set'}\n")
    out.write(f"{'keyring':<15} {keyring_state}\n")
    out.write(
        f"Memex uses the key from {source}.\n"
        if source
        else "No API key: the openai embedder works only with a local server "
        "(base_url on localhost).\n"
    )
    return EXIT_OK


def key_delete(out: TextIO) -> int:
    try:
        removed = apikeys.keyring_delete()
    except apikeys.KeyringUnavailable as exc:
        raise CliError(str(exc), EXIT_UNUSABLE) from None
    out.write("The stored API key was removed.\n" if removed else "No key was stored.\n")
    return EXIT_OK


def cmd_key(argv: Sequence[str], out: TextIO) -> int:
    p = Parser(prog="memex key", description="Manage the OpenAI API key (system keyring).")
    p.add_argument("action", choices=("set", "status", "delete"))
    p.add_argument(
        "--stdin",
        action="store_true",
        help="read the key from standard input (for scripts) instead of a prompt",
    )
    args = p.parse_args(argv)
    if args.action == "set":
        return key_set(args.stdin, out)
    if args.action == "status":
        return key_status(out)
    return key_delete(out)
