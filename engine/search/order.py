"""The search pipeline's stages, in the order `Searcher.search` runs them.

Each is a `Stage` (engine/search/context.py): a name and a call from the search's context
and the hits so far to the hits after it; a stage whose setting is off passes the hits on
as they are. `--explain` prints this list with each stage's time and the hits it kept.
"""

from __future__ import annotations

from engine.search.context import Stage
from engine.search.rank.entity import EntityFirst
from engine.search.rank.floor import Floor
from engine.search.rank.frecency import Frecency
from engine.search.rank.fuse import Fuse
from engine.search.rank.locate import Locate
from engine.search.rank.ranking import Diversity, EntityInjection, Page, QueryDates, Recency
from engine.search.rank.related import Related
from engine.search.rank.sections import Sections
from engine.search.rerank import Rerank
from engine.search.retrieve.retrieval import Retrieve

STAGES: tuple[Stage, ...] = (
    Retrieve(),  # the keyword and vector lists (and the coverage list), as ranked hits
    Fuse(),  # one RRF score from the ranks
    Locate(),  # each hit's row; a hit this snapshot lacks is dropped
    QueryDates(),  # the query's own days lifted (search.query_dates = boost)
    Frecency(),  # what the user opened before, a little higher
    Sections(),  # a note once, by its best section (search.group_sections)
    Recency(),  # older content decays by its type's half-life
    EntityInjection(),  # a named person's profile at the median score
    Diversity(),  # MMR over the head, at most max_per_type per type
    Rerank(),  # a cross-encoder over the head (rerank.backend)
    EntityFirst(),  # a query that is a person's name: their profile, then what names them
    Floor(),  # neither keyword nor semantic evidence: not shown
    Page(),  # the first `limit`
    Related(),  # context linked to the top hits, after them (search.related)
)
