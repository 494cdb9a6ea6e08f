"""The ONNX re-ranker on a cross-encoder the test builds itself: a WordLevel tokenizer.json
with a BERT pair template, and a graph scoring a pair as the sum of its document tokens'
weights (embedding lookup × attention mask × token type, reduced to one logit), so every
score, and the order it implies, is known exactly."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
from tokenizers.models import WordLevel

from engine.index.runs import reindex
from engine.search import Searcher
from engine.search.rerank import RerankError
from engine.search.rerank.onnx import OnnxReranker, logits_to_scores
from engine.settings import Settings

SPECIAL = ["[PAD]", "[CLS]", "[SEP]", "[UNK]"]
WEIGHTS = {"dawn": 5.0, "reeds": 2.0, "shore": 8.0, "grey": 1.0, "heron": 0.0, "egret": 0.5}
QUOTES = [
    "The heron waits by the lake at dawn",
    "A heron stood in the lake reeds",
    "Herons and a heron on the lake shore",
    "The grey heron flew over the lake",
]


def build_cross_encoder(folder: Path, weights: Mapping[str, float]) -> Path:
    """model.onnx + tokenizer.json: score(query, doc) = Σ weight(token) over doc tokens."""
    folder.mkdir(parents=True, exist_ok=True)
    vocab = {token: i for i, token in enumerate([*SPECIAL, *weights])}
    tokenizer = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 1), ("[SEP]", 2)],
    )
    tokenizer.save(str(folder / "tokenizer.json"))
    # [PAD] weighs much: were a padded position counted, the scores would show it.
    table = [100.0, 0.0, 0.0, 0.0, *weights.values()]
    onnx.save(_graph(np.asarray(table, dtype=np.float32)), str(folder / "model.onnx"))
    return folder


def _graph(table: np.ndarray) -> onnx.ModelProto:
    ints = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    nodes = [
        helper.make_node("Gather", ["weights", "input_ids"], ["looked_up"]),
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["token_type_ids"], ["second"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["looked_up", "mask"], ["masked"]),
        helper.make_node("Mul", ["masked", "second"], ["document"]),
        helper.make_node("ReduceSum", ["document", "axes"], ["logits"], keepdims=1),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny-cross-encoder",
        ints,
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])],
        initializer=[
            helper.make_tensor("weights", TensorProto.FLOAT, [len(table)], table.tolist()),
            helper.make_tensor("axes", TensorProto.INT64, [1], [1]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    return build_cross_encoder(tmp_path / "cross-encoder", WEIGHTS)


def test_scores_are_the_sum_of_the_document_tokens_weights(model_dir: Path) -> None:
    reranker = OnnxReranker(str(model_dir), batch_size=2)
    documents = ["egret egret", "shore", "dawn and grey", "", "Heron DAWN reeds reeds"]
    # The query's own words never count (token type 0): "shore" in the query adds nothing.
    scores = reranker.scores("shore heron", documents)
    assert scores == {0: 1.0, 1: 8.0, 2: 6.0, 3: 0.0, 4: 9.0}
    assert OnnxReranker(str(model_dir), batch_size=8).scores("shore heron", documents) == scores


def test_pairs_are_cut_to_max_tokens(model_dir: Path) -> None:
    # [CLS] q [SEP] d… [SEP]: 8 tokens leave the one-word query whole and 4 document tokens.
    reranker = OnnxReranker(str(model_dir), max_tokens=8)
    assert reranker.scores("heron", ["grey grey grey grey shore"]) == {0: 4.0}
    assert OnnxReranker(str(model_dir)).scores("heron", ["grey grey grey grey shore"]) == {0: 12.0}


def test_logits_of_each_shape_become_one_score_per_pair() -> None:
    assert logits_to_scores(np.array([0.5, -1.0])).tolist() == [0.5, -1.0]
    assert logits_to_scores(np.array([[0.5], [-1.0]])).tolist() == [0.5, -1.0]
    assert logits_to_scores(np.array([[0.0, 2.0], [1.0, 0.5]])).tolist() == [2.0, -0.5]
    with pytest.raises(RerankError):
        logits_to_scores(np.zeros((2, 3)))


def test_a_missing_or_broken_folder_is_a_rerank_error(tmp_path: Path, model_dir: Path) -> None:
    with pytest.raises(RerankError, match="has no model.onnx"):
        OnnxReranker(str(tmp_path / "nowhere"))
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "model.onnx").write_bytes(b"not a model")
    (broken / "tokenizer.json").write_text((model_dir / "tokenizer.json").read_text())
    with pytest.raises(RerankError, match=r"cannot load the re-rank model in .*broken"):
        OnnxReranker(str(broken))


@pytest.fixture
def lake(settings_factory: Callable[..., Settings]) -> Settings:
    settings = settings_factory(embedder__name="hashing")
    folder = settings.roots[0] / "data" / "identity"
    folder.mkdir(parents=True)
    lines = [
        json.dumps({"id": f"q-{i}", "text": t, "context": "Lake"}) for i, t in enumerate(QUOTES)
    ]
    (folder / "quotes.jsonl").write_text("\n".join(lines) + "\n")
    assert not reindex(settings=settings).errors
    return settings


def first_words(settings: Settings, query: str = "heron lake") -> tuple[list[str], list[str]]:
    searcher = Searcher(settings)
    try:
        response = searcher.search(query, 10, explain=True)
    finally:
        searcher.close()
    quoted = [r.content.split("\n")[0].removeprefix("Quote: ") for r in response.results]
    return quoted, response.warnings


def test_search_returns_the_order_the_model_implies(lake: Settings, model_dir: Path) -> None:
    before, _ = first_words(lake)
    settings = lake.with_values(rerank__backend="onnx", rerank__model_path=str(model_dir))
    searcher = Searcher(settings)
    try:
        response = searcher.search("heron lake", 10, explain=True)
        assert searcher.search("heron lake", 10).warnings == []  # the same session, reused
        session = searcher._reranker.backend
    finally:
        searcher.close()
    assert isinstance(session, OnnxReranker)
    # Each text is sent as title + body, and the title repeats the quote's opening words:
    # shore 2 × 8, dawn 2 × 5, reeds 2 × 2, grey 2 × 1.
    order = [r.content.split("\n")[0].removeprefix("Quote: ") for r in response.results]
    assert order == [QUOTES[2], QUOTES[0], QUOTES[1], QUOTES[3]] != before
    assert [(r.explain or {})["rerank_score"] for r in response.results] == [16.0, 10.0, 4.0, 2.0]
    assert response.warnings == []


def test_a_missing_model_folder_leaves_the_search_as_it_was(lake: Settings, tmp_path: Path) -> None:
    before, _ = first_words(lake)
    missing = tmp_path / "no-model"
    settings = lake.with_values(rerank__backend="onnx", rerank__model_path=str(missing))
    order, warnings = first_words(settings)
    assert order == before
    assert warnings == [
        f"the re-rank model folder {missing} has no model.onnx; results are not re-ranked."
    ]
