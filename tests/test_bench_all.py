"""bench.all's plan (budget, order, builds, machine) and its run, without running a benchmark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import all as bench_all
from bench.all_plan import PERF_10K, PERF_100K, Estimate, Step, make_plan, section_steps
from bench.report.sections import Section, sections


def section(name: str) -> Section:
    return Section(name, name, lambda data: "", f".venv/bin/python -m bench.{name}", "Part")


def step(name: str, minutes: float, timed: bool = True, **kw: object) -> Step:
    return Step(name, f".venv/bin/python -m bench.{name}", Estimate(minutes, timed, **kw))  # type: ignore[arg-type]


def test_every_section_of_the_report_has_an_estimate() -> None:
    _, warnings = section_steps(sections())
    assert warnings == [], "add the section to ESTIMATES in bench/all_plan.py"


def test_a_section_without_an_estimate_gets_the_default_and_a_warning() -> None:
    steps, warnings = section_steps([section("brand_new")], estimates={})
    assert steps[0].estimate.timed and steps[0].estimate.minutes == 15.0
    assert warnings == ["bench/all_plan.py has no estimate for brand_new: assuming 15 min, timed"]


def test_the_list_names_every_section(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_all.main(["--list", "--budget", "30"]) == 0
    listed = {
        line.split()[0] for line in capsys.readouterr().out.splitlines()[1:] if line[:2] == "  "
    }
    assert {s.result for s in sections()} <= listed


def test_relevance_first_then_builds_then_timed_runs() -> None:
    steps = [
        step("perf-10000", 6, needs=(PERF_10K,)),
        step("quality", 6, timed=False),
        step("perf-100000", 20, needs=(PERF_100K,)),
        step("no_answer", 3, timed=False),
    ]
    plan = make_plan(steps, 1000, cached=set(), memory_gb=16)
    assert [s.name for s in plan.steps] == [
        "quality",
        "no_answer",
        PERF_10K,
        PERF_100K,
        "perf-10000",
        "perf-100000",
    ]
    assert [s.kind for s in plan.steps] == [
        "relevance",
        "relevance",
        "build",
        "build",
        "timed",
        "timed",
    ]


def test_a_cached_build_is_not_run_again_nor_counted() -> None:
    steps = [step("perf-100000", 20, needs=(PERF_100K,))]
    assert make_plan(steps, 30, cached=set(), memory_gb=16).steps == []
    plan = make_plan(steps, 30, cached={PERF_100K}, memory_gb=16)
    assert [s.name for s in plan.steps] == ["perf-100000"] and plan.cached == {PERF_100K}


def test_what_does_not_fit_the_budget_is_skipped_and_cheaper_ones_still_run() -> None:
    steps = [step("big", 50), step("small", 5), step("also_small", 5)]
    plan = make_plan(steps, 20, cached=set(), memory_gb=16)
    assert [s.name for s in plan.steps] == ["small", "also_small"]  # 7 min each with the settle
    [(skipped, reason)] = plan.skipped
    assert skipped.name == "big"
    assert reason == "does not fit the budget: ~52 min, 20 min left"


def test_a_build_counts_against_the_budget_of_its_first_reader() -> None:
    steps = [step("perf-100000", 20, needs=(PERF_100K,))]
    [(_, reason)] = make_plan(steps, 60, cached=set(), memory_gb=16).skipped
    assert reason == f"does not fit the budget: ~84 min with the build of {PERF_100K}, 60 min left"


def test_what_this_machine_cannot_hold_or_start_is_left_out() -> None:
    steps = [step("scale-10x", 45, memory_gb=20.0), step("e5", 5, external="it needs a server")]
    plan = make_plan(steps, 1000, cached=set(), memory_gb=16)
    reasons = dict((s.name, r) for s, r in plan.skipped)
    assert plan.steps == []
    assert reasons["scale-10x"].startswith("does not fit this machine: it needs about 20 GB")
    assert reasons["e5"] == "not run: it needs a server"


class FakeRunner:
    """Runs nothing: each command 'takes' its minutes on a fake clock; some fail."""

    verb = "ran"

    def __init__(self, out: Path, failing: set[str], take: float = 10.0) -> None:
        self.out, self.failing, self.take, self.now = out, failing, take, 0.0
        self.commands: list[str] = []

    def run(self, command: str, log: Path) -> int:
        self.commands.append(command)
        self.now += self.take
        name = command.rsplit(".", 1)[-1]
        if name in self.failing:
            (self.out / f"{name}.json").write_text("half written")
            return 1
        return 0

    def wait_quiet(self, max_load: float, timeout_s: float) -> float:
        return 0.5

    def minutes(self) -> float:
        return self.now


def test_a_failed_section_keeps_its_result_and_the_run_goes_on_within_the_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bench_all, "OUT", tmp_path)
    old = {"run": {"commit": "abc1234", "date": "2026-12-01 10:00 UTC"}}
    (tmp_path / "quality.json").write_text(json.dumps(old))
    plan = make_plan(
        [step("quality", 5, timed=False), step("demo", 5), step("people", 5)], 100, set(), 16
    )
    runner = FakeRunner(tmp_path, failing={"quality"}, take=12.0)
    limits = bench_all.Limits(budget_min=20, quiet_load=1.2, max_wait_min=5, allow_dirty=True)
    outcomes = {o.step.name: o for o in bench_all.execute(plan, runner, limits)}
    assert json.loads((tmp_path / "quality.json").read_text()) == old
    assert outcomes["quality"].status == "failed"
    assert "its last result file kept" in outcomes["quality"].detail
    assert outcomes["demo"].status == "ran"
    assert outcomes["people"].detail == "no longer fits the budget: ~7 min, 0 min left"


def test_a_timed_run_waits_for_calm_and_is_skipped_if_it_never_comes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bench_all, "OUT", tmp_path)
    runner = FakeRunner(tmp_path, failing=set())
    monkeypatch.setattr(runner, "wait_quiet", lambda max_load, timeout_s: 3.5)
    (tmp_path / "quality.json").write_text(json.dumps({"run": {"commit": "abc1234"}}))
    plan = make_plan([step("demo", 5), step("quality", 5, timed=False)], 100, set(), 16)
    limits = bench_all.Limits(budget_min=100, quiet_load=1.2, max_wait_min=5, allow_dirty=True)
    outcomes = {o.step.name: o for o in bench_all.execute(plan, runner, limits)}
    assert outcomes["quality"].status == "ran"
    assert outcomes["quality"].detail.endswith("abc1234 (the result file did not change)")
    assert outcomes["demo"].detail.startswith("the load stayed at 3.50 (> 1.2)")
    assert runner.commands == [".venv/bin/python -m bench.quality"]


def test_a_commit_to_the_measured_files_during_the_run_stops_the_sections_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bench_all, "OUT", tmp_path)
    monkeypatch.setattr(bench_all, "uncommitted_paths", lambda: [])
    runner = FakeRunner(tmp_path, failing=set())
    commits: list[str] = []
    monkeypatch.setattr(
        bench_all, "changed_since", lambda commit: commits.append(commit) or runner.commands
    )
    plan = make_plan(
        [step("quality", 5, timed=False), step("no_answer", 5, timed=False)], 100, set(), 16
    )
    limits = bench_all.Limits(100, 1.2, 5, allow_dirty=False, commit="abc1234")
    outcomes = bench_all.execute(plan, runner, limits)
    assert [o.status for o in outcomes] == ["ran", "skipped"] and commits == ["abc1234"] * 2
    assert outcomes[1].detail.startswith("the tree changed during the run (")


def test_a_dry_run_prints_the_commands_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(bench_all, "LOGS", tmp_path / "logs")
    assert bench_all.main(["--dry-run", "--only", "quality", "no_answer", "perf-10000"]) == 0
    out = capsys.readouterr().out
    assert "  would run: .venv/bin/python -m bench.quality" in out
    assert "  would run: .venv/bin/python -m bench.no_answer" in out
    assert "  would run: .venv/bin/python -m bench.perf --chunks 10000" in out
    assert out.index("bench.quality") < out.index("would wait") < out.index("bench.perf ")
    assert "  would run: .venv/bin/python -m bench.report" in out
    assert "  would run  quality " in out and "  ran " not in out
    assert not (tmp_path / "logs").exists()


def test_an_unknown_section_is_named_with_the_known_ones() -> None:
    with pytest.raises(SystemExit, match="no section is called nonsense; the sections are: "):
        bench_all.main(["--list", "--only", "nonsense"])
