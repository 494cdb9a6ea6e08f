"""The people directory at scale, and the demo's people without the people file.

    .venv/bin/python -m bench.people [--people 5000] [--mentions 100000] [--matcher 10000]

Three figures, printed and written to bench/out/people.json:
- build: `build_directory` over synthetic mentions (5,000 people spread over 100,000
  mentions of 20,000 files in five source types, with the spellings, shared first names,
  phone forms and organisations real exports have): seconds, people out, and the size of
  the directory as the index stores it (the JSON of every person);
- matcher: `PeopleMatcher.find` over 10,000 people (a few hundred first names shared by
  many): p50 and p95 per query in microseconds, over queries that name someone, name a
  first name only, or name nobody;
- demo: the demo layer indexed with no profile/relationships.json (hashing embedder: the
  names, not the ranking), and for each person case of bench/personal_cases.json whether
  the query finds a person with a card of that name (`name_shaped` or `find`).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import REPO, bench_settings, machine, write_figures
from engine.core import read_people
from engine.embedders.hashing import HashingEmbedder
from engine.index.runs import reindex
from engine.people import PeopleMatcher, build_directory, carded
from engine.records import Mention, Person
from engine.resources import demo_dir
from engine.settings import Settings

FIRST = [f"First{i}" for i in range(300)] + ["Priya", "Raj", "Mei", "Jonas", "Ann", "Erik"]
LAST = [f"Last{i}" for i in range(2000)]
TYPES = ("slack", "mail", "whatsapp", "meeting", "contact")


def synthetic_people(rng: random.Random, n: int) -> list[dict[str, Any]]:
    people = []
    for i in range(n):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        people.append(
            {
                "name": f"{first} {last}",
                "first": first,
                "email": f"{first}.{last}{i}@example.org".lower(),
                "phone": f"+47 9{i:07d}",
                "slack": f"slack:U{i:06d}",
                "org": rng.choice(("Heliotrope", "Statnett", "")),
            }
        )
    return people


def mention_for(person: dict[str, Any], source_type: str, rng: random.Random) -> Mention:
    """One person as a source type names them: a name form and that source's identifier."""
    day = f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    if source_type == "slack":
        return Mention(person["name"], (person["first"],), handles=(person["slack"],),
                       org=person["org"], count=rng.randint(1, 20), first=day, last=day)  # fmt: skip
    if source_type == "mail":
        return Mention(person["name"], emails=(person["email"].upper(),), role="recipient",
                       first=day, last=day)  # fmt: skip
    if source_type == "whatsapp":
        phone = "0" + person["phone"][4:] if rng.random() < 0.5 else person["phone"]
        return Mention(person["first"], phones=(phone,), count=rng.randint(1, 50), first=day)
    if source_type == "contact":
        return Mention(person["name"], emails=(person["email"],), phones=(person["phone"],),
                       org=person["org"], role="contact")  # fmt: skip
    return Mention(person["name"], role="speaker", count=rng.randint(1, 30), first=day)


def synthetic_mentions(
    people: list[dict[str, Any]], total: int, files: int, rng: random.Random
) -> list[tuple[str, str, Mention]]:
    rows = []
    for _ in range(total):
        source_type = rng.choice(TYPES)
        person = rng.choice(people)
        path = f"/data/{source_type}/file{rng.randrange(files // len(TYPES))}.txt"
        rows.append((path, source_type, mention_for(person, source_type, rng)))
    return rows


def bench_build(settings: Settings, people: int, mentions: int) -> dict[str, Any]:
    rng = random.Random(1)
    rows = synthetic_mentions(synthetic_people(rng, people), mentions, 20_000, rng)
    started = time.perf_counter()
    built = build_directory(rows, [], settings)
    seconds = time.perf_counter() - started
    size = sum(len(json.dumps(p.as_dict(), ensure_ascii=False).encode()) for p in built)
    return {
        "people_in": people,
        "mentions": mentions,
        "seconds": round(seconds, 3),
        "people_out": len(built),
        "with_card": len(carded(built, settings)),
        "stored_bytes": size,
    }


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def bench_matcher(n: int) -> dict[str, Any]:
    rng = random.Random(2)
    people = [
        Person(f"{rng.choice(FIRST)} {rng.choice(LAST)}", f"p{i}", aliases=(f"Nick{i}",))
        for i in range(n)
    ]
    started = time.perf_counter()
    matcher = PeopleMatcher(people)
    build_ms = (time.perf_counter() - started) * 1000
    queries = [f"what did {p.name} say about the ferry" for p in rng.sample(people, 300)]
    queries += [f"what did {rng.choice(FIRST)} say about the budget" for _ in range(300)]
    queries += ["notes from the standup last week about the migration plan"] * 300
    times = []
    for query in queries * 3:
        started = time.perf_counter()
        matcher.find(query)
        times.append((time.perf_counter() - started) * 1e6)
    return {
        "people": n,
        "build_ms": round(build_ms, 1),
        "p50_us": round(statistics.median(times), 1),
        "p95_us": round(percentile(times, 0.95), 1),
        "queries": len(times),
    }


def bench_demo(work: Path) -> dict[str, Any]:
    from engine.search.rank.entity import name_shaped

    root = work / "demo"
    shutil.copytree(demo_dir(), root)
    (root / "profile" / "relationships.json").unlink()
    settings = bench_settings([root], work / "index" / "memex.db", embedder__name="hashing")
    reindex(settings=settings, embedder=HashingEmbedder())
    people = carded(read_people(settings), settings)
    matcher = PeopleMatcher(people)
    cases = json.loads((REPO / "bench" / "personal_cases.json").read_text(encoding="utf-8"))
    outcome = {}
    for case in cases:
        wanted = [r["profile"] for r in case["relevant"] if "profile" in r]
        if wanted:
            found = name_shaped(case["query"], matcher) or matcher.find(case["query"])
            outcome[case["id"]] = {"query": case["query"], "wanted": wanted[0],
                                   "found": found.name if found else None}  # fmt: skip
    passed = sum(1 for o in outcome.values() if o["found"] == o["wanted"])
    return {"people_with_card": len(people), "person_cases": len(outcome),
            "found": passed, "cases": outcome}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.people", description=__doc__)
    parser.add_argument("--people", type=int, default=5000)
    parser.add_argument("--mentions", type=int, default=100_000)
    parser.add_argument("--matcher", type=int, default=10_000)
    parser.add_argument("--skip-demo", action="store_true")
    args = parser.parse_args(argv)
    before = machine()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        settings = bench_settings([work], work / "scale" / "memex.db")
        report: dict[str, Any] = {
            "build": bench_build(settings, args.people, args.mentions),
            "matcher": bench_matcher(args.matcher),
        }
        if not args.skip_demo:
            report["demo_without_people_file"] = bench_demo(work)
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    write_figures("people", before, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
