"""The report's relevance part: cross-validated constants, LoCoMo and QMSum, the personal
benchmark with its meaning-only and no-answer sets."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from bench.report.sections import Section
from bench.report.tables import markdown_table

PART = "Relevance"
QUALITY_COLUMNS = ("nDCG@10", "MRR@10", "R@10", "R@50")
DATASETS = (("locomo", "LoCoMo"), ("qmsum", "QMSum"))


def crossval(data: dict[str, Any]) -> str:
    """Each analysis: the pipelines' means, the in-sample choice, and every fold's choice."""
    parts = [
        f"{data.get('chunks', '?')} chunks; {len(data.get('grid', []))} combinations of the "
        f"hybrid's constants; {data.get('query_embeddings', '?')} query embeddings.",
    ]
    titles = {
        "analysis": "The whole grid (the headline)",
        "analysis_fusion_only": "Fusion constants alone (recency and floor as shipped)",
    }
    if any("search__vector_prf" in c.get("changes", {}) for c in data.get("grid", [])):
        titles = {
            "analysis": "With the signals under trial in the grid",
            "analysis_without_signals": "Without them",
        }
    for key, title in titles.items():
        for name, result in data.get(key, {}).items():
            parts.append(f"**{title}: {name}** ({result['questions']} questions)")
            rows = [[row, *values.values()] for row, values in result["rows"].items()]
            headers = list(next(iter(result["rows"].values())).keys()) if rows else []
            parts.append(markdown_table(["pipeline", *headers], rows))
            folds = result["folds"]
            fold_rows = [
                [
                    group,
                    f["questions"],
                    f["chosen"],
                    f["held_out"]["MRR@10"],
                    f["shipped_on_held_out"]["MRR@10"],
                ]
                for group, f in folds.items()
            ]
            common, times = Counter(f["chosen"] for f in folds.values()).most_common(1)[0]
            parts.append(
                f"In-sample best: {result['in_sample_choice']}. Most frequent choice on the "
                f"other groups: {common} ({times} of {len(folds)} folds)."
            )
            parts.append(
                markdown_table(
                    [
                        "held-out group",
                        "questions",
                        "chosen on the others",
                        "MRR@10",
                        "shipped MRR@10",
                    ],
                    fold_rows,
                )
            )
    combos = data.get("combinations")
    if combos:
        rows = [
            [name, *(means.get(d, {}).get("MRR@10") for d, _ in DATASETS)]
            for name, means in combos.items()
        ]
        parts.append("**Every combination, in-sample MRR@10**")
        parts.append(markdown_table(["combination", "LoCoMo", "QMSum"], rows))
    return "\n\n".join(parts)


def quality(data: dict[str, Any]) -> str:
    """Every configuration's means per data set, and what one query cost."""
    questions = data.get("questions", {})
    parts = [
        f"{data.get('chunks', '?')} chunks; questions without resolvable evidence skipped: "
        f"{data.get('unresolved_questions', 0)}; clock fixed at {data.get('now')}."
    ]
    results = data["results"]
    for dataset, title in DATASETS:
        rows = [
            [name, *[r[dataset].get(c) for c in QUALITY_COLUMNS], r.get("ms_per_query")]
            for name, r in results.items()
            if dataset in r
        ]
        parts.append(f"**{title}** ({questions.get(dataset, '?')} questions)")
        parts.append(markdown_table(["configuration", *QUALITY_COLUMNS, "ms/query"], rows))
    return "\n\n".join(parts)


def personal(data: dict[str, Any]) -> str:
    """Per kind and per mode, then the meaning-only set and the no-answer shares."""
    mean = data["mean"]
    rows = [[k, v["cases"], v["ndcg@10"], v["mrr@10"]] for k, v in data["per_kind"].items()]
    rows.append(["**all**", mean["cases"], mean["ndcg@10"], mean["mrr@10"]])
    parts = [
        "**Graded cases, hybrid, per kind**",
        markdown_table(["kind", "cases", "nDCG@10", "MRR@10"], rows),
    ]
    modes = data.get("modes")
    if modes:
        rows = [[m, v["ndcg@10"], v["mrr@10"]] for m, v in modes.items()]
        rows.append(["hybrid", mean["ndcg@10"], mean["mrr@10"]])
        parts += ["**Per mode**", markdown_table(["mode", "nDCG@10", "MRR@10"], rows)]
    beside = data.get("beside")
    if beside:
        parts += ["**Meaning-only and no-answer sets**", floors(beside)]
    return "\n\n".join(parts)


def floors(beside: dict[str, Any]) -> str:
    """The meaning-only set and the no-answer shares, each with the floor on and off."""
    meaning = beside["meaning"]
    rows = [
        [name, meaning["cases"], *meaning[key].values()]
        for name, key in (("floor on", "floor_on"), ("floor off", "floor_off"))
    ]
    headers = ["meaning-only", "cases", *meaning["floor_on"].keys()]
    on, off = meaning["floor_on"], meaning["floor_off"]
    recall = next((k for k in on if k.lower().startswith("recall")), None)
    ratio = ""
    if recall and off.get(recall):
        ratio = (
            f"\n\n{recall} with the floor ÷ without it: {on[recall] / off[recall]:.3f} "
            "(target ≥ 0.98)."
        )
    shares = [[name, v["floor_on"], v["floor_off"]] for name, v in beside["no_answer"].items()]
    return (
        markdown_table(headers, rows)
        + ratio
        + "\n\n"
        + markdown_table(["no-answer queries, share with ≤ 1 hit", "floor on", "floor off"], shares)
    )


def no_answer(data: dict[str, Any]) -> str:
    """The share of no-answer queries that show at most one hit, per layer."""
    rows = [
        [name, v["share_at_most_one_hit"], v["mean_hits"]]
        for name, v in data.items()
        if isinstance(v, dict) and "share_at_most_one_hit" in v
    ]
    return f"{data.get('queries', '?')} queries whose answer no layer holds.\n\n" + markdown_table(
        ["layer", "share with ≤ 1 hit (target ≥ 0.90)", "mean hits shown"], rows
    )


def languages(data: dict[str, Any]) -> str:
    """Per language: top 3 in keyword and default mode (and with the as-written order off),
    MRR@10, detection; the nonsense set; bench.personal's English queries on the layer."""
    rows = []
    for name, v in data["languages"].items():
        d, off = v["detection"], v["as_written_off"]
        rows.append([
            name, v["queries"], v["bm25"]["top3"], v["hybrid"]["top3"], v["hybrid"]["mrr@10"],
            off["bm25"]["top3"], off["hybrid"]["top3"],
            d["chunks_right"], d["messages_right"], d["us_per_message"],
        ])  # fmt: skip
    table = markdown_table(
        ["language", "queries", "top 3, keyword", "top 3, default", "MRR@10, default",
         "top 3, keyword, as-written off", "top 3, default, as-written off",
         "chunks' language right", "messages alone right", "µs a message"],
        rows,
    )  # fmt: skip
    english = markdown_table(
        ["keyword hits' order", "mode", "nDCG@10", "MRR@10", "queries"],
        [
            [label.replace("_", " "), "default" if mode == "hybrid" else "keyword",
             v["ndcg@10"], v["mrr@10"], v["cases"]]
            for label, modes in data["english"].items()
            for mode, v in modes.items()
        ],
    )  # fmt: skip
    missed = [
        f"{name} `{m['query']}` ({m['kind']}, {m['mode']}: "
        f"{'rank ' + str(m['rank']) if m['rank'] else 'not in the top 10'})"
        for name, v in data["languages"].items()
        for m in v["missed"]
    ]
    n = data["nonsense"]
    shares = markdown_table(
        ["nonsense queries, share with ≤ 1 hit (default mode)", "share"],
        [["the layer of eleven languages", n["this_layer"]], ["the demo layer", n["demo_layer"]]],
    )
    missed_text = "Missed: " + "; ".join(missed) + "." if missed else "Nothing missed."
    return (
        f"{table}\n\n{missed_text}\n\n{n['queries']} nonsense queries:\n\n{shares}\n\n"
        f"bench.personal's 60 English queries on the layer of eleven languages:\n\n{english}"
    )


def languages_embedder(data: dict[str, Any]) -> str:
    """Another embedder on the languages layer beside the local model (one run): per
    language, the nonsense queries, the floor's cut swept, a query's embedding, the rate."""
    this, local = data["this"], data["local"]
    rows = [
        [name, v["bm25"]["top3"], v["hybrid"]["top3"], local["languages"][name]["hybrid"]["top3"],
         v["hybrid"]["mrr@10"], local["languages"][name]["hybrid"]["mrr@10"]]
        for name, v in this["languages"].items()
    ]  # fmt: skip
    table = markdown_table(
        ["language", "top 3, keyword", "top 3, default", "top 3, default (local model)",
         "MRR@10, default", "MRR@10, default (local model)"],
        rows,
    )  # fmt: skip
    sweep = markdown_table(
        ["`search.floor_cosine` (and `_low`)", "top 3, default", "MRR@10, default",
         "nonsense queries with ≤ 1 hit"],
        [[f"{r['floor_cosine']:.2f}", r["top3"], r["mrr@10"], r["nonsense_at_most_one"]]
         for r in this["floor_cosine_sweep"]],
    )  # fmt: skip
    x, y = this["indexing"], local["indexing"]
    timing = markdown_table(
        ["", "this embedder", "local model"],
        [
            ["a query's embedding, median ms", *_ms(data, "median_ms")],
            ["a query's embedding, p90 ms", *_ms(data, "p90_ms")],
            ["first index: chunks embedded a second", f"{x['chunks_per_second']:.1f}",
             f"{y['chunks_per_second']:.1f}"],
            ["first index: texts embedded a second", f"{x['texts_per_second']:.1f}",
             f"{y['texts_per_second']:.1f}"],
        ],
    )  # fmt: skip
    n = this["nonsense"]
    return (
        f"Embedder: `{json.dumps(data['embedder'], sort_keys=True)}`.\n\n{table}\n\n"
        f"{n['queries']} nonsense queries, share with ≤ 1 hit (default mode, the shipped "
        f"floor): {n['this_layer']} with this embedder, {local['nonsense']['this_layer']} with "
        f"the local model. The floor's cosine cut swept, this embedder:\n\n{sweep}\n\n"
        f"{timing}\n\nThe layer's {x['chunks']} chunks ({x['texts']} texts, "
        f"{x['mean_chars']} characters on average) took {x['embed_seconds']} s of embedding "
        f"with this embedder, {y['embed_seconds']} s with the local model."
    )


def _ms(data: dict[str, Any], key: str) -> list[str]:
    return [f"{data[m]['query_latency'][key]:.1f}" for m in ("this", "local")]


SECTIONS = [
    Section(
        "Cross-validated constants: the relevance headline",
        "crossval",
        crossval,
        ".venv/bin/python -m bench.crossval",
        PART,
    ),
    Section(
        "Retrieval signals under trial: vector pseudo-relevance feedback",
        "crossval-signals",
        crossval,
        ".venv/bin/python -m bench.crossval --fixed-fusion --json bench/out/crossval-signals.json",
        PART,
    ),
    Section(
        "LoCoMo chats and QMSum meetings, every configuration",
        "quality",
        quality,
        ".venv/bin/python -m bench.quality",
        PART,
    ),
    Section(
        "Personal benchmark: graded queries over the demo layer",
        "personal",
        personal,
        ".venv/bin/python -m bench.personal --modes",
        PART,
    ),
    Section(
        "Languages: inflections, words inside runs, nonsense in other scripts",
        "languages",
        languages,
        ".venv/bin/python -m bench.languages",
        PART,
    ),
    Section(
        "Languages with multilingual vectors: multilingual-e5-small on a local server",
        "languages-e5",
        languages_embedder,
        ".venv/bin/python -m bench.languages --embedder openai --base-url "
        "http://127.0.0.1:PORT/v1 --model multilingual-e5-small-q4 "
        "--input-type --json bench/out/languages-e5.json",
        PART,
    ),
    Section(
        "No-answer queries",
        "no_answer",
        no_answer,
        ".venv/bin/python -m bench.no_answer",
        PART,
    ),
]
