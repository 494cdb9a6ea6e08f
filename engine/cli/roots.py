"""`memex roots add PATH…`, `memex roots list [--json]`, `memex roots remove PATH`: the data
folders in the user's config file, the same file the desktop app reads and writes.

Paths are stored absolute, `~` expanded. Adding a folder that is missing, or one that is
already a data folder or inside one, changes nothing and exits 2 with one sentence; adding a
folder that holds data folders replaces them. `memex reindex` then indexes what changed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

from engine.cli.common import EXIT_OK, EXIT_USAGE, CliError, Parser, add_common
from engine.settings import SettingsError, default_config_path, read_config
from engine.settings.config_writer import write_config
from engine.text import shown

NEXT_STEP = "next: 'memex reindex' indexes it ('memex discover' first shows what it holds)"


def config_file(config: str | None, env: Mapping[str, str]) -> Path:
    """The config file `load_settings` reads: --config, else MEMEX_CONFIG, else the default."""
    if config:
        return Path(config).expanduser()
    if env.get("MEMEX_CONFIG"):
        return Path(env["MEMEX_CONFIG"]).expanduser()
    return default_config_path()


def configured_roots(path: Path) -> list[Path]:
    """The roots the config file lists, absolute; [] when there is no file yet."""
    if not path.exists():
        return []
    try:
        values, _routes = read_config(path)
    except SettingsError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    return [absolute(str(r)) for r in values.get("roots", [])]


def absolute(path: str) -> Path:
    return Path(os.path.expanduser(path)).resolve()


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def plan_add(roots: Sequence[Path], wanted: Sequence[Path]) -> tuple[list[Path], list[Path]]:
    """The new list of roots and the roots it replaces (held by a wanted folder); a
    `CliError` when a wanted folder is missing or already covered. Pure but for `is_dir`."""
    new = list(roots)
    replaced: list[Path] = []
    for path in wanted:
        if not path.is_dir():
            what = "is not a folder" if path.exists() else "does not exist"
            raise CliError(f"{shown(path)} {what}; nothing was added", EXIT_USAGE)
        holder = next((r for r in new if _inside(path, r)), None)
        if holder == path:
            raise CliError(f"{shown(path)} is already a data folder; nothing was added")
        if holder is not None:
            raise CliError(
                f"{shown(path)} is inside the data folder {shown(holder)} already; "
                "nothing was added"
            )
        replaced += [r for r in new if _inside(r, path)]
        new = [r for r in new if not _inside(r, path)] + [path]
    return new, replaced


def _save(path: Path, roots: Sequence[Path]) -> None:
    try:
        write_config(path, {"roots": [str(r) for r in roots]})
    except (OSError, ValueError) as exc:
        raise CliError(f"cannot write the config file {path}: {exc}", EXIT_USAGE) from None


def roots_add(path: Path, folders: Sequence[str], out: TextIO) -> int:
    wanted = [absolute(f) for f in folders]
    new, replaced = plan_add(configured_roots(path), wanted)
    _save(path, new)
    for folder in wanted:
        out.write(f"added {shown(folder)} to the data folders ({path})\n")
    for folder in replaced:
        out.write(f"  it holds {shown(folder)}, which is no longer listed on its own\n")
    out.write(NEXT_STEP + "\n")
    return EXIT_OK


def roots_remove(path: Path, folder: str, out: TextIO) -> int:
    roots = configured_roots(path)
    target = absolute(folder)
    if target not in roots:
        raise CliError(f"{shown(target)} is not a data folder ('memex roots list' shows them)")
    _save(path, [r for r in roots if r != target])
    out.write(f"removed {shown(target)} from the data folders; 'memex reindex' updates the index\n")
    return EXIT_OK


def roots_list(path: Path, as_json: bool, env: Mapping[str, str], out: TextIO) -> int:
    roots = configured_roots(path)
    override = env.get("MEMEX_ROOT", "")
    if as_json:
        listed = [{"path": str(r), "exists": r.is_dir()} for r in roots]
        payload = {"config_file": str(path), "roots": listed, "MEMEX_ROOT": override or None}
        out.write(json.dumps(payload, indent=2) + "\n")
        return EXIT_OK
    for root in roots:
        out.write(shown(root) + ("" if root.is_dir() else "  (not found)") + "\n")
    if not roots:
        out.write("no data folders yet: 'memex roots add ~' adds your home folder\n")
    if override:
        out.write(f"note: MEMEX_ROOT is set ({override}) and is used instead of these\n")
    return EXIT_OK


USAGE = "memex roots add PATH…, memex roots list [--json] or memex roots remove PATH"


def roots_parser() -> Parser:
    p = Parser(
        prog="memex roots",
        usage=USAGE,
        description="The data folders Memex indexes, kept in the config file the app uses.",
    )
    add_common(p)  # --root and --db are accepted like everywhere; they change nothing here
    p.add_argument("action", choices=("add", "list", "remove"))
    p.add_argument("paths", nargs="*", metavar="PATH")
    p.add_argument("--json", action="store_true", help="list as JSON")
    return p


def cmd_roots(argv: Sequence[str], out: TextIO, env: Mapping[str, str] | None = None) -> int:
    env = os.environ if env is None else env
    args = roots_parser().parse_args(list(argv))
    path = config_file(args.config, env)
    count = len(args.paths)
    if args.action == "add" and count:
        return roots_add(path, args.paths, out)
    if args.action == "remove" and count == 1:
        return roots_remove(path, args.paths[0], out)
    if args.action == "list" and not count:
        return roots_list(path, args.json, env, out)
    raise CliError(f"usage: {USAGE}")
