"""Regenerate the whole benchmark report at one commit, within a time budget.

    .venv/bin/python -m bench.all [--budget MINUTES] [--only NAME...] [--list] [--dry-run]
        [--allow-dirty] [--quiet-load L] [--max-wait MINUTES]
    make bench [BUDGET=MINUTES]

Refuses a tree with uncommitted changes in engine/, bench/ (results aside) or pyproject.toml,
so that every result file it writes names the commit it was measured at (`run.commit`, shown
in each section of docs/benchmarks.md); `--allow-dirty` runs anyway, and the results then say
`<commit>+changes`. Runs, one at a time: the relevance sections (the load does not change
them), the cached builds the speed sections read (bench/perf_index.py), then each timed
section alone once the 1-minute load average is at most `--quiet-load`. A section that does
not fit what is left of the budget, or this machine, is skipped and keeps its last result
file; one that fails is reported, its previous result file put back, and the run goes on.
Ends with `python -m bench.report`. Each command's output goes to bench/out/all-run/<name>.log.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from bench.all_plan import (
    PERF_10K,
    PERF_100K,
    Plan,
    Step,
    build_steps,
    make_plan,
    section_steps,
)
from bench.common import OUT, REPO, changed_since, machine, tree_commit, uncommitted_paths
from bench.report.sections import sections

LOGS = OUT / "all-run"
REPORT = ".venv/bin/python -m bench.report"


@dataclass(frozen=True)
class Outcome:
    step: Step
    status: str  # ran, failed, skipped
    detail: str


class Runner(Protocol):
    """What the run does to the machine: a real one, or one that only says what it would do."""

    verb: str  # what the summary says of a step run: "ran", or "would run"

    def run(self, command: str, log: Path) -> int: ...
    def wait_quiet(self, max_load: float, timeout_s: float) -> float: ...
    def minutes(self) -> float: ...


def argv_of(command: str) -> list[str]:
    """A section's command as the report shows it, run with this interpreter."""
    words = shlex.split(command)
    return [sys.executable, *words[1:]] if words[0].endswith("python") else words


class MachineRunner:
    """Runs each command in a child process, its output in a log file."""

    verb = "ran"

    def __init__(self) -> None:
        self.started = time.monotonic()

    def run(self, command: str, log: Path) -> int:
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("wb") as out:
            child = subprocess.run(argv_of(command), cwd=REPO, stdout=out, stderr=subprocess.STDOUT)
        return child.returncode

    def wait_quiet(self, max_load: float, timeout_s: float) -> float:
        from bench.common import wait_for_quiet

        return wait_for_quiet(max_load, timeout_s=max(timeout_s, 0.0))

    def minutes(self) -> float:
        return (time.monotonic() - self.started) / 60


class DryRunner(MachineRunner):
    """Says what it would run; waits for nothing, writes nothing."""

    verb = "would run"

    def run(self, command: str, log: Path) -> int:
        print(f"  would run: {command}")
        return 0

    def wait_quiet(self, max_load: float, timeout_s: float) -> float:
        print(f"  would wait (≤ {timeout_s / 60:.0f} min) for the load to be ≤ {max_load}")
        return 0.0


@dataclass(frozen=True)
class Limits:
    budget_min: float
    quiet_load: float
    max_wait_min: float
    allow_dirty: bool
    commit: str = "HEAD"  # the commit the run started at: every result is measured there


def cached_builds() -> set[str]:
    from bench import perf_index

    targets = {PERF_10K: 10_000, PERF_100K: 100_000}
    return {
        name for name, n in targets.items() if (perf_index.target_dir(n) / "build.json").exists()
    }


def last_result(name: str) -> str:
    """The commit and date of a section's current result file, or that it has none."""
    path = OUT / f"{name}.json"
    if not path.exists():
        return "none"
    run = json.loads(path.read_text(encoding="utf-8")).get("run") or {}
    return f"{run.get('commit', '?')} {run.get('date', '')}".strip()


def why_not_now(step: Step, runner: Runner, limits: Limits, failed: set[str]) -> str:
    """Why a planned step cannot run at this point of the run ('' when it can)."""
    left = limits.budget_min - runner.minutes()
    if step.minutes > left:
        return f"no longer fits the budget: ~{step.minutes:.0f} min, {max(left, 0):.0f} min left"
    unbuilt = [b for b in step.estimate.needs if b in failed]
    if unbuilt:
        return f"needs {', '.join(unbuilt)}, which was not built"
    if limits.allow_dirty:
        return ""
    changed = uncommitted_paths() or changed_since(limits.commit)
    if changed:
        return f"the tree changed during the run ({', '.join(changed[:3])}): not run"
    return ""


def settle(step: Step, runner: Runner, limits: Limits) -> str:
    """Wait for a quiet machine before a timed step; why not, if it stayed busy."""
    left = limits.budget_min - runner.minutes() - step.estimate.minutes
    load = runner.wait_quiet(limits.quiet_load, 60 * min(limits.max_wait_min, left))
    if load > limits.quiet_load:
        return f"the load stayed at {load:.2f} (> {limits.quiet_load}): not timed on a busy machine"
    return ""


def run_step(step: Step, runner: Runner) -> Outcome:
    """Run one step; a failed section gets its previous result file back."""
    result = OUT / f"{step.name}.json"
    before = result.read_bytes() if result.exists() and not step.build else None
    started = runner.minutes()
    log = LOGS / f"{step.name}.log"
    code = runner.run(step.command, log)
    dry = runner.verb != "ran"
    took = f"~{step.minutes:.0f} min" if dry else f"{runner.minutes() - started:.1f} min"
    if code == 0:
        said = "last result at" if dry else "result at"
        measured = "" if step.build else f", {said} {last_result(step.name)}"
        if not dry and before is not None and result.read_bytes() == before:
            measured += " (the result file did not change)"
        return Outcome(step, runner.verb, f"{took}{measured}")
    if before is not None:
        result.write_bytes(before)
    kept = "its last result file kept" if before is not None else "no result file"
    return Outcome(step, "failed", f"exit {code} after {took}; {kept}; see {log}")


def execute(plan: Plan, runner: Runner, limits: Limits) -> list[Outcome]:
    """Each planned step in order, re-checking the budget and the tree before each."""
    outcomes = [Outcome(step, "skipped", reason) for step, reason in plan.skipped]
    failed: set[str] = set()
    for step in plan.steps:
        print(f"{step.name} ({step.kind}, ~{step.minutes:.0f} min)", flush=True)
        reason = why_not_now(step, runner, limits, failed)
        if not reason and step.kind != "relevance":
            reason = settle(step, runner, limits)
        outcome = Outcome(step, "skipped", reason) if reason else run_step(step, runner)
        if outcome.status not in ("ran", "would run"):
            failed.add(step.name)
        print(f"  {outcome.status}: {outcome.detail}", flush=True)
        outcomes.append(outcome)
    return outcomes


def print_list(plan: Plan, warnings: list[str]) -> None:
    """What would run, in order, with estimates; what is cached; what is left out and why."""
    for warning in warnings:
        print(f"warning: {warning}")
    print(f"would run, in order (~{plan.minutes:.0f} min):")
    for step in plan.steps:
        last = "" if step.build else f"  last result: {last_result(step.name)}"
        print(f"  {step.name:28} {step.kind:9} ~{step.minutes:4.0f} min{last}")
    for name in sorted(plan.cached):
        print(f"  {name:28} cached    (built under bench/out/, not run again)")
    print("left out (each keeps its last result file):")
    for step, reason in plan.skipped:
        print(f"  {step.name:28} {reason}; last result: {last_result(step.name)}")
    sections_min = sum(s.minutes for s in plan.steps if not s.build)
    sections_min += sum(step.minutes for step, _ in plan.skipped)
    builds_min = sum(b.minutes for name, b in build_steps().items() if name not in plan.cached)
    print(f"every section, with the builds not cached: ~{sections_min + builds_min:.0f} min")


def print_summary(outcomes: list[Outcome], commit: str) -> None:
    print(f"\nbench.all at commit {commit}:")
    for status in ("ran", "would run", "failed", "skipped"):
        for o in (o for o in outcomes if o.status == status):
            print(f"  {status:10} {o.step.name:28} {o.detail}")
    if any(o.status == "ran" for o in outcomes):
        print("commit the result files in bench/out/ and docs/benchmarks.md together")


def chosen_steps(only: list[str] | None) -> tuple[list[Step], list[str]]:
    steps, warnings = section_steps(sections())
    if not only:
        return steps, warnings
    known = {s.name for s in steps}
    unknown = [name for name in only if name not in known]
    if unknown:
        raise SystemExit(
            f"bench.all: no section is called {', '.join(unknown)}; the sections are: "
            + ", ".join(sorted(known))
        )
    return [s for s in steps if s.name in only], warnings


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.all", description=__doc__.split("\n")[0])
    p.add_argument("--budget", type=float, default=240.0, metavar="MINUTES")
    p.add_argument("--only", nargs="+", metavar="NAME", help="these sections (result names)")
    p.add_argument("--list", action="store_true", help="what would run, with estimates")
    p.add_argument("--dry-run", action="store_true", help="walk the run, print the commands")
    p.add_argument("--allow-dirty", action="store_true", help="results then say +changes")
    p.add_argument("--quiet-load", type=float, default=1.2, metavar="L")
    p.add_argument("--max-wait", type=float, default=30.0, metavar="MINUTES")
    return p


def refuse_dirty(args: argparse.Namespace) -> bool:
    """Whether the run must stop: uncommitted changes to measured files, not allowed."""
    changed = uncommitted_paths()
    if not changed or args.allow_dirty:
        return False
    listed = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
    if args.dry_run:
        print(f"a real run would refuse: uncommitted changes in {listed}")
        return False
    print(
        f"bench.all runs on a committed tree only: {listed} have uncommitted changes. Commit "
        "them, or pass --allow-dirty (the results then say +changes).",
        file=sys.stderr,
    )
    return True


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    steps, warnings = chosen_steps(args.only)
    plan = make_plan(steps, args.budget, cached_builds(), float(machine()["memory_gb"]))
    if args.list:
        print_list(plan, warnings)
        return 0
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if refuse_dirty(args):
        return 2
    runner = DryRunner() if args.dry_run else MachineRunner()
    tree = tree_commit()
    limits = Limits(
        args.budget,
        args.quiet_load,
        args.max_wait,
        args.allow_dirty or args.dry_run,
        tree.removesuffix("+changes"),
    )
    outcomes = execute(plan, runner, limits)
    if runner.run(REPORT, LOGS / "report.log") != 0:
        print(f"the report was not written: see {LOGS / 'report.log'}", file=sys.stderr)
    print_summary(outcomes, tree)
    return 1 if any(o.status == "failed" for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
