"""Churn: how much space maintenance (vec0 rebuild + VACUUM) reclaims after heavy change.

    .venv/bin/python -m bench.churn [--chunks 5000] [--rounds 3] [--embedder local]

Builds a realistic data layer (bench.perf_data), indexes it, then churns it for a few rounds:
each round overwrites 30 % of the files with other content (every chunk of them changes and
is re-embedded) and deletes 20 % of the rest, reindexing after each round. Then it reports
the index size, the dead vec0 slots and the free pages, runs `memex maintenance` and reports
the size after, the bytes reclaimed and each stage's time. Writes bench/out/churn.json.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import bench_settings, machine, write_figures
from bench.perf_data import LayerWriter
from engine.index.maintenance import dead_slots, maintain
from engine.index.runs import reindex
from engine.index.status import collect_status
from engine.settings import Settings
from engine.store import db


def layer_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


Kind = tuple[tuple[str, ...], str]


def kind_of(path: Path, root: Path) -> Kind:
    """Files of one kind: the same top folders and suffix (a chat log, a meeting, a note)."""
    return path.relative_to(root).parts[:2], path.suffix


def churn_round(root: Path, other: Path, rng: random.Random) -> dict[str, int]:
    """Overwrite 30 % of the files with another file's content of the same kind (every chunk
    changes and is re-embedded) and delete 20 % of the rest."""
    mine = layer_files(root)
    donors: dict[Kind, list[Path]] = {}
    for path in layer_files(other):
        donors.setdefault(kind_of(path, other), []).append(path)
    candidates = [p for p in mine if kind_of(p, root) in donors]
    changed = rng.sample(candidates, int(len(candidates) * 0.3))
    for path in changed:
        shutil.copyfile(rng.choice(donors[kind_of(path, root)]), path)
    rest = [p for p in mine if p not in set(changed)]
    deleted = rng.sample(rest, int(len(rest) * 0.2))
    for path in deleted:
        path.unlink()
    return {"changed_files": len(changed), "deleted_files": len(deleted)}


def snapshot(settings: Settings) -> dict[str, Any]:
    status = collect_status(settings)
    conn = db.connect(settings.db_path, create=False)
    try:
        slots = dead_slots(conn)
    finally:
        conn.close()
    return {
        "size_bytes": status.size_bytes,
        "chunks": status.chunks,
        "dead_slots": slots.dead,
        "allocated_slots": slots.allocated,
        "dead_fraction": slots.fraction,
        "free_page_fraction": status.free_page_fraction,
        "maintenance_suggested": status.maintenance_suggested,
    }


def run(chunks: int, rounds: int, embedder: str, work: Path) -> dict[str, Any]:
    root, db_path = work / "layer", work / "index" / "memex.db"
    LayerWriter(root, chunks, seed=7).write()
    settings = bench_settings([root], db_path, embedder__name=embedder)
    started = time.perf_counter()
    first = reindex(settings=settings)
    result: dict[str, Any] = {
        "embedder": embedder,
        "initial": {
            "chunks": first.chunks,
            "seconds": round(time.perf_counter() - started, 1),
            **snapshot(settings),
        },
        "rounds": [],
    }
    rng = random.Random(11)
    for n in range(rounds):
        # Another layer of the same shape: the same file names, other content.
        other = work / f"other{n}"
        LayerWriter(other, chunks, seed=100 + n).write()
        done = churn_round(root, other, rng)
        stats = reindex(settings=settings)
        result["rounds"].append(
            {**done, "embedded": stats.embedded, "deleted_chunks": stats.deleted_chunks}
        )
        shutil.rmtree(other)
    result["before_maintenance"] = snapshot(settings)
    m = maintain(settings).maintenance
    assert m is not None  # the index has a schema: maintenance ran
    result["maintenance"] = {
        "size_before": m.size_before.total,
        "size_after": m.size_after.total,
        "bytes_reclaimed": m.bytes_reclaimed,
        "reclaimed_fraction": round(m.bytes_reclaimed / m.size_before.total, 3),
        "vectors_rebuilt": m.vectors_rebuilt,
        "timings": dict(m.timings),
    }
    result["after_maintenance"] = snapshot(settings)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--embedder", default="local")
    args = parser.parse_args()
    before = machine()
    with tempfile.TemporaryDirectory(prefix="memex-churn-") as work:
        result = run(args.chunks, args.rounds, args.embedder, Path(work))
    print(json.dumps(result, indent=2))
    write_figures("churn", before, result)


if __name__ == "__main__":
    main()
