"""`python -m bench.report [--check]`: write docs/benchmarks.md from bench/out/."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bench.report.sections import Section, sections

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "bench" / "out"
NOTES = Path(__file__).resolve().parent / "notes"
TARGET = REPO / "docs" / "benchmarks.md"

PREAMBLE = """\
# Benchmarks

The current figures of Memex, each with the command that measured it, the machine and the
load. This page is written by `.venv/bin/python -m bench.report` from the result files in
`bench/out/`; re-run a section's command, then the report, to bring it up to date. Do not edit
it by hand: `tests/test_bench_report.py` checks it against `bench/out/`.

To regenerate the whole page at one commit, run `make bench` (`.venv/bin/python -m bench.all
--budget 240`; `make bench BUDGET=480` for a longer run) on a tree with nothing uncommitted
under `engine/`, `bench/` or `pyproject.toml`. It runs one section at a time: the relevance
sections first, then the indexes the speed sections read (built once and cached under
`bench/out/perf-<chunks>-<key>/`: about 7 minutes at 10k chunks, an hour at 100k on 2 cores),
then each timed section alone once the 1-minute load average is at most 1.2, and writes this
page. `python -m bench.all --list` shows what would run with each section's estimated minutes
(`bench/all_plan.py`), what is cached, what is left out and how long every section would take.
A section that does not fit what is left of the budget or this machine (the multilingual
model's section needs a server started by hand), or that fails, keeps its last result file.

Each section's machine line names the commit its result was measured at; `+changes` marks a
result measured with uncommitted changes in the tree, which no commit reproduces.

Timings compare only within one section: each section is one run on one machine, and CPUs
differ (the query embedding alone takes ~2.5 ms on AVX-512 machines and 9–10 ms with AVX2
only). Relevance figures do not depend on the machine or its load.
"""


def machine_line(run: dict[str, Any]) -> str:
    before, after = run["machine_before"], run["machine_after"]
    flags = ", ".join(before.get("cpu_flags") or []) or "flags not recorded"
    return (
        f"Machine: {before['cpu']} ({flags}), {before['cpus']} cores, "
        f"{before['memory_gb']} GB, Python {before['python']}; load average "
        f"{before['load_avg_1m']} → {after['load_avg_1m']}. Run {run['date']}, "
        f"commit {run['commit']}."
    )


def render_section(section: Section, out: Path = OUT) -> str:
    lines = [f"### {section.title}", ""]
    path = out / f"{section.result}.json"
    if not path.exists():
        lines += [f"Not recorded: `{section.command}` writes `bench/out/{path.name}`.", ""]
        return "\n".join(lines)
    data = json.loads(path.read_text(encoding="utf-8"))
    run = data.get("run")
    if run:
        lines += ["```sh", run["command"], "```", "", machine_line(run), ""]
    lines += [section.render(data).strip(), ""]
    note = NOTES / f"{section.result}.md"
    if note.exists():
        lines += [note.read_text(encoding="utf-8").strip(), ""]
    return "\n".join(lines)


def render(out: Path = OUT) -> str:
    parts: list[str] = [PREAMBLE]
    current = None
    for section in sections():
        if section.part != current:
            current = section.part
            parts.append(f"## {current}\n")
        parts.append(render_section(section, out))
    return "\n".join(parts).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.report", description=__doc__)
    p.add_argument("--check", action="store_true", help="exit 1 if docs/benchmarks.md is stale")
    args = p.parse_args(argv)
    text = render()
    if args.check:
        if TARGET.read_text(encoding="utf-8") != text:
            print(f"{TARGET} differs from bench/out/: run python -m bench.report", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
