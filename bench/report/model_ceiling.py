"""The report's section on the local model at this CPU's limit (bench.model_ceiling's file)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench.report.tables import markdown_table

# A configuration's fields as the report names them.
NAMES: dict[str, Callable[[Any], str]] = {
    "batch": lambda v: f"batch {v}",
    "sorted": lambda v: "length-sorted" if v else "unsorted",
    "runs": lambda v: f"{v} run{'s' if v > 1 else ''} side by side",
    "intra": lambda v: f"{v} intra-op thread{'s' if v > 1 else ''}",
    "sessions": lambda v: "one session per thread" if v > 1 else "one shared session",
    "graph": lambda v: f"graph {v}",
    "parallel": lambda v: "parallel, 2 inter-op threads" if v else "sequential",
}


def describe(config: dict[str, Any], fields: list[str] | None = None) -> str:
    """A configuration in words (only `fields`, when given)."""
    return ", ".join(NAMES[k](config[k]) for k in fields or list(NAMES) if k in config)


def stage_row(stage: dict[str, Any], baseline: dict[str, Any], rate: float) -> list[str]:
    """The values a stage tried, each with texts/s and its ratio to the baseline's (best in
    bold); what all of them hold apart from the baseline follows the stage's name."""
    results = stage["results"]
    varying = [k for k in NAMES if len({str(r["config"][k]) for r in results}) > 1]
    held = [k for k in NAMES if k not in varying and results[0]["config"][k] != baseline[k]]
    name = stage["stage"] + (f" ({describe(results[0]['config'], held)})" if held else "")
    cells = []
    for r in results:
        per_s = r["texts_per_s"]
        text = f"{describe(r['config'], varying)}: {per_s:,.1f} ({per_s / rate:.2f}×)"
        cells.append(f"**{text}**" if r["config"] == stage["best"] else text)
    return [name, "; ".join(cells)]


def summary_rows(data: dict[str, Any]) -> list[list[str]]:
    rows = []
    for name, w in data["workloads"].items():
        best = w["best"]["texts_per_s"]
        rows.append(
            [
                f"{name} ({data['tokens'][name]} tokens)",
                f"{w['baseline']:,.1f}",
                f"{best:,.1f}: {describe(w['best']['config'])}",
                f"{best / w['baseline']:.2f}×",
                f"{w['indexer']:,.1f}",
                f"**{w['indexer'] / best:.2f}×**",
            ]
        )
    return rows


def query_table(query: dict[str, Any]) -> str:
    fields = ["intra", "graph", "parallel"]
    rows = [[describe(c["config"], fields), f"{c['query_ms']:.2f}"] for c in query["configs"]]
    rows.append(["the indexer's embedder (`embed_query`'s path)", f"{query['indexer_ms']:.2f}"])
    return markdown_table(["session options", "one short query, median ms"], rows)


def render(data: dict[str, Any]) -> str:
    headers = [
        "workload",
        "baseline texts/s",
        "best configuration: texts/s",
        "best ÷ baseline",
        "indexer texts/s",
        "indexer ÷ best",
    ]
    parts = [
        f"Baseline: {describe(data['baseline'])}. The indexer's embedder: "
        f"{describe(data['indexer_config']) or 'not reported'}.",
        markdown_table(headers, summary_rows(data)),
    ]
    for name, w in data["workloads"].items():
        table = markdown_table(
            ["stage", "texts/s (× the baseline's)"],
            [stage_row(stage, data["baseline"], w["baseline"]) for stage in w["stages"]],
        )
        parts.append(f"**{name}** ({w['texts']} texts)\n\n{table}")
    parts.append(query_table(data["query"]))
    return "\n\n".join(parts)
