"""What status, maintenance, check, repair and backup report, as frozen records.

Each record's `as_json()` is the shape that `memex status --json` and `memex maintenance
--json` print and the run log stores: scripts read those keys, so they change only on purpose.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from engine.store.db import Counts
from engine.store.vectors import BuildProgress


@dataclass(frozen=True)
class VectorSlots:
    """Allocated, live and dead vec0 slots of the active table, and the dead fraction."""

    table: str | None
    allocated: int = 0
    live: int = 0
    dead: int = 0
    fraction: float = 0.0
    dead_bytes: int = 0

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class FileSizes:
    """The index file and its WAL in bytes: what maintenance can shrink."""

    db: int
    db_wal: int

    @property
    def total(self) -> int:
        return self.db + self.db_wal

    def as_json(self) -> dict[str, int]:
        return {"db": self.db, "db_wal": self.db_wal, "total": self.total}


@dataclass(frozen=True)
class DiskUsage:
    """The index file, its WAL and its shared-memory file in bytes, as status shows them."""

    db: int
    db_wal: int
    db_shm: int

    @property
    def total(self) -> int:
        return self.db + self.db_wal + self.db_shm

    def as_json(self) -> dict[str, int]:
        return {"db": self.db, "db_wal": self.db_wal, "db_shm": self.db_shm}


@dataclass(frozen=True)
class WalCheckpoint:
    """The result row of `PRAGMA wal_checkpoint(TRUNCATE)`."""

    busy: int
    log_frames: int
    checkpointed: int

    def as_json(self) -> dict[str, int]:
        return asdict(self)


EMPTY_COUNTS = Counts(chunks=0, fts=0, embedded=0, vectors=0)


@dataclass(frozen=True)
class CheckReport:
    """Integrity and row-count checks of one state; `ok` is False when a problem is listed.

    An index without a schema has nothing to measure: its report carries only `note`, and
    the other fields keep their empty defaults.
    """

    ok: bool
    problems: tuple[str, ...]
    integrity: tuple[str, ...] = ()
    fts_ok: bool = True
    counts: Counts = EMPTY_COUNTS
    orphan_vectors: int = 0
    missing_vectors: int = 0
    orphan_chunk_files: int = 0
    stale_vec_tables: tuple[str, ...] = ()
    dead_slots: VectorSlots = VectorSlots(table=None)
    note: str | None = None

    def as_json(self) -> dict[str, Any]:
        if self.note is not None:
            return {"ok": self.ok, "problems": list(self.problems), "note": self.note}
        return {
            "ok": self.ok,
            "problems": list(self.problems),
            "integrity": list(self.integrity),
            "fts_ok": self.fts_ok,
            "counts": self.counts.as_json(),
            "orphan_vectors": self.orphan_vectors,
            "missing_vectors": self.missing_vectors,
            "orphan_chunk_files": self.orphan_chunk_files,
            "stale_vec_tables": list(self.stale_vec_tables),
            "dead_slots": self.dead_slots.as_json(),
        }


@dataclass(frozen=True)
class RepairReport:
    """What a repair dropped and rebuilt."""

    orphan_chunks_dropped: int
    stale_tables_dropped: tuple[str, ...]
    vectors_rebuilt: int
    seconds: float

    def as_json(self) -> dict[str, Any]:
        return {
            "orphan_chunks_dropped": self.orphan_chunks_dropped,
            "stale_tables_dropped": list(self.stale_tables_dropped),
            "vectors_rebuilt": self.vectors_rebuilt,
            "seconds": self.seconds,
        }


@dataclass(frozen=True)
class MaintenanceReport:
    """One vec0 rebuild + VACUUM + checkpoint: sizes, counts and dead slots before and after."""

    size_before: FileSizes
    size_after: FileSizes
    vectors_rebuilt: int
    counts_before: Counts
    counts_after: Counts
    dead_slots_before: VectorSlots
    dead_slots_after: VectorSlots
    vacuum: bool
    wal_checkpoint: WalCheckpoint
    timings: dict[str, float]  # stage -> seconds, in the order the stages ran

    @property
    def bytes_reclaimed(self) -> int:
        return self.size_before.total - self.size_after.total

    @property
    def seconds(self) -> float:
        return round(sum(self.timings.values()), 3)

    def as_json(self) -> dict[str, Any]:
        return {
            "size_before": self.size_before.as_json(),
            "size_after": self.size_after.as_json(),
            "bytes_reclaimed": self.bytes_reclaimed,
            "vectors_rebuilt": self.vectors_rebuilt,
            "counts_before": self.counts_before.as_json(),
            "counts_after": self.counts_after.as_json(),
            "dead_slots_before": self.dead_slots_before.as_json(),
            "dead_slots_after": self.dead_slots_after.as_json(),
            "vacuum": self.vacuum,
            "wal_checkpoint": self.wal_checkpoint.as_json(),
            "timings": dict(self.timings),
            "seconds": self.seconds,
        }


@dataclass(frozen=True)
class MaintenanceResult:
    """What one `memex maintenance` run did: maintenance, or a repair, and/or a check."""

    maintenance: MaintenanceReport | None = None
    repair: RepairReport | None = None
    check: CheckReport | None = None

    def as_json(self) -> dict[str, Any]:
        result: dict[str, Any] = {}
        if self.repair is not None:
            result["repair"] = self.repair.as_json()
        if self.maintenance is not None:
            result["maintenance"] = self.maintenance.as_json()
        if self.check is not None:
            result["check"] = self.check.as_json()
        return result

    def log_fields(self) -> dict[str, Any]:
        """The run-log fields: a summary of maintenance, the repair, the check's verdict."""
        fields: dict[str, Any] = {}
        if (m := self.maintenance) is not None:
            fields.update(
                seconds=m.seconds,
                timings=dict(m.timings),
                bytes_reclaimed=m.bytes_reclaimed,
                size_before=m.size_before.total,
                size_after=m.size_after.total,
                vectors_rebuilt=m.vectors_rebuilt,
                dead_slots_before=m.dead_slots_before.dead,
            )
        if self.repair is not None:
            fields["repair"] = self.repair.as_json()
        if self.check is not None:
            fields.update(ok=self.check.ok, problems=list(self.check.problems))
        return fields


@dataclass(frozen=True)
class BackupReport:
    """Where a backup went, how large it is and how long it took."""

    path: str
    bytes: int
    seconds: float

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class IndexStatus:
    """What `memex status` reports: counts per type, sizes, embedder, errors, last run."""

    db: str
    roots: tuple[str, ...]
    files: int
    per_type: dict[str, int]  # source type -> chunks, most first
    counts: Counts
    embedder: str | None
    vec_table: str | None
    reembed: BuildProgress | None  # a switch of embedder in progress
    sizes: DiskUsage
    free_page_fraction: float
    errors: tuple[tuple[str, str], ...]  # (file, error)
    last_run: dict[str, Any] | None  # the newest run-log record, as the log stores it
    vector_slots: VectorSlots
    maintenance_suggested: bool
    schema_version: str | None
    log: str | None  # the run log's path, if it exists
    # Files among `errors` whose text was indexed all the same: a problem, not a failure.
    indexed_with_errors: frozenset[str] = frozenset()

    @property
    def chunks(self) -> int:
        return sum(self.per_type.values())

    @property
    def size_bytes(self) -> int:
        return self.sizes.total

    @property
    def vector_coverage(self) -> float:
        """The share of chunks that have a vector (1.0 for an empty index)."""
        return 1.0 if not self.counts.chunks else self.counts.embedded / self.counts.chunks

    def as_json(self) -> dict[str, Any]:
        return {
            "db": self.db,
            "roots": list(self.roots),
            "files": self.files,
            "chunks": self.chunks,
            "per_type": dict(self.per_type),
            "counts": self.counts.as_json(),
            "embedder": self.embedder,
            "vec_table": self.vec_table,
            "reembed": None if self.reembed is None else self.reembed.as_json(),
            "sizes": self.sizes.as_json(),
            "free_page_fraction": self.free_page_fraction,
            "errors": [
                {"file": f, "error": e, "indexed": f in self.indexed_with_errors}
                for f, e in self.errors
            ],
            "last_run": self.last_run,
            "vector_slots": self.vector_slots.as_json(),
            "maintenance_suggested": self.maintenance_suggested,
            "schema_version": self.schema_version,
            "size_bytes": self.size_bytes,
            "vector_coverage": round(self.vector_coverage, 4),
            "log": self.log,
        }
