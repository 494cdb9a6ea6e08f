"""Who is who: the mentions of every file grouped into people by rules that never guess.

The rules, in order (docs/people.md, "How mentions become one person"):
1. the same email address, phone number or handle is the same person, unless names of
   more than one person carry it (a mailing list, a family phone: `shared_identifiers`)
   or it is a group's address a sender wrote "via" (`Sighting.held`); the people file's
   own identifiers always join;
2. the same full name (two words or more, case and accents aside) is the same person when
   the organisations of its groups agree (the same whole name or email domain: `org_keys`,
   or one side naming none; organisations compare only within one source type): two
   organisations' people of one name stay apart, and so does anyone else of that name;
3. a name equal to a curated name (a contact's name or nickname, a people note's aliases, the
   people file's names and aliases) of exactly one person joins them, when no one else
   carries that name (a first name shared by two people joins neither);
and the people file's `not` keeps what it lists out of that person's group, whatever rule
would have joined them. A first name alone never joins two people.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from engine.people.normalise import CACHED, name_key, name_tokens
from engine.people.orgs import org_keys
from engine.people.shared import names_conflict
from engine.sources import NOT_CONVERSATIONS

# The mentions the user keeps: a person's note, the people file, and (by their source type,
# `SourceType.conversation`) every address book's.
CURATED_ROLES = frozenset({"note", "curated"})


@dataclass(slots=True)  # not frozen: a hundred thousand are made per build; none is changed
class Sighting:
    """One mention, normalised: its names, identifiers ("email:…", "phone:…", "handle:…")
    and where it was; `curated` is the people-file entry it stands for (a seed), else -1."""

    source_file: str
    source_type: str
    names: tuple[str, ...]  # as written: the mention's name first, then its aliases
    ids: tuple[str, ...]
    org: str = ""
    role: str = "author"
    count: int = 1
    first: str | None = None
    last: str | None = None
    curated: int = -1
    split_of: tuple[int, ...] = ()  # the curated entries whose `not` names this sighting

    keys: tuple[str, ...] = ()  # the names as compared (`name_key`); worked out if not given
    held: tuple[str, ...] = ()  # identifiers kept but never joining: a group's, "X via Group"

    def __post_init__(self) -> None:
        if not self.keys and self.names:
            self.keys = tuple(k for k in map(name_key, self.names) if k)


class Groups:
    """Union-find over sightings; a union that would put a curated entry together with
    something its `not` split off is refused."""

    def __init__(self, sightings: Sequence[Sighting]) -> None:
        self.parent = list(range(len(sightings)))
        self.seeds: dict[int, set[int]] = {}
        self.splits: dict[int, set[int]] = {}
        for i, s in enumerate(sightings):
            if s.curated >= 0:
                self.seeds[i] = {s.curated}
            if s.split_of:
                self.splits[i] = set(s.split_of)

    def find(self, i: int) -> int:
        root = i
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[i] != root:  # path compression
            self.parent[i], i = root, self.parent[i]
        return root

    def union(self, a: int, b: int) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return True
        seeds_a, seeds_b = self.seeds.get(ra, set()), self.seeds.get(rb, set())
        splits_a, splits_b = self.splits.get(ra, set()), self.splits.get(rb, set())
        if seeds_a & splits_b or seeds_b & splits_a:
            return False
        if rb < ra:  # the smaller index stays the root: the same input, the same groups
            ra, rb = rb, ra
        self.parent[rb] = ra
        for tags in (self.seeds, self.splits):
            moved = tags.pop(rb, None)
            if moved:
                tags.setdefault(ra, set()).update(moved)
        return True

    def members(self) -> list[list[int]]:
        """The groups, each a list of sighting indices, in order of their first sighting."""
        groups: dict[int, list[int]] = {}
        for i in range(len(self.parent)):
            groups.setdefault(self.find(i), []).append(i)
        return list(groups.values())


def resolve(sightings: Sequence[Sighting], shared: frozenset[str] = frozenset()) -> list[list[int]]:
    """The sightings grouped into people (indices into `sightings`); the `shared`
    identifiers (`engine.people.shared.shared_identifiers`) join no one."""
    groups = Groups(sightings)
    _join_identifiers(groups, sightings, shared)
    _join_full_names(groups, sightings)
    _join_curated_names(groups, sightings)
    return groups.members()


def _join_identifiers(
    groups: Groups, sightings: Sequence[Sighting], shared: frozenset[str]
) -> None:
    """Rule 1: each identifier no names of two people share joins its carriers. A shared or
    held one the people file gives a person joins them those of its carriers who could be
    them (Per Berg on the family phone the file gives Anna Berg stays Per)."""
    seeds: dict[str, list[int]] = defaultdict(list)
    for i, sighting in enumerate(sightings):
        if sighting.curated >= 0:
            for ident in sighting.ids:
                seeds[ident].append(i)
    seen: dict[str, int] = {}
    for i, sighting in enumerate(sightings):
        for ident in sighting.ids:
            if ident not in shared:
                groups.union(seen.setdefault(ident, i), i)
        for ident in (*(x for x in sighting.ids if x in shared), *sighting.held):
            for seed in seeds.get(ident, ()):
                if not names_conflict((sightings[seed].keys, sighting.keys)):
                    groups.union(seed, i)


Orgs = dict[str, set[str]]  # source type → the organisations it names a group by


def _group_orgs(groups: Groups, sightings: Sequence[Sighting]) -> dict[int, Orgs]:
    """Each group's organisations, per source type: a Slack workspace id and a contact's
    company are not comparable, two Slack workspaces (or two companies) are."""
    orgs: dict[int, Orgs] = defaultdict(lambda: defaultdict(set))
    for i, sighting in enumerate(sightings):
        if sighting.curated < 0 and sighting.org:
            keys = _sighting_orgs(sighting.org, sighting.ids)
            if keys:
                orgs[groups.find(i)][sighting.source_type] |= keys
    return orgs


@lru_cache(maxsize=CACHED)
def _sighting_orgs(org: str, ids: tuple[str, ...]) -> frozenset[str]:
    return org_keys(org, (i[len("email:") :] for i in ids if i.startswith("email:")))


def compatible(a: Orgs, b: Orgs) -> bool:
    """Whether two groups may be one person as far as their organisations go: in every
    source type that names both, they share one (a side naming none never conflicts)."""
    return all(a[t] & b[t] for t in a.keys() & b.keys() if a[t] and b[t])


def _merged(a: Orgs, b: Orgs) -> Orgs:
    out: Orgs = defaultdict(set)
    for orgs in (a, b):
        for kind, names in orgs.items():
            out[kind] |= names
    return out


def _join_full_names(groups: Groups, sightings: Sequence[Sighting]) -> None:
    orgs = _group_orgs(groups, sightings)
    by_name: dict[str, set[int]] = defaultdict(set)
    for i, sighting in enumerate(sightings):
        for key in sighting.keys:
            if " " in key:
                by_name[key].add(groups.find(i))
    for roots in by_name.values():
        if len(roots) > 1:
            _join_one_name(groups, sorted(roots), orgs)


MAX_NAMESAKES = 20  # more groups of one full name than this: too many to tell apart


def _join_one_name(groups: Groups, roots: list[int], orgs: dict[int, Orgs]) -> None:
    """Groups sharing one full name become one when their organisations agree pairwise (the
    same organisation, or one side naming none); when any two disagree (two Priya Ramans
    of two companies), none of them join: nobody can tell which one the others are."""
    by_org: dict[tuple[str, str], int] = {}
    for root in roots:
        for kind, names in sorted(orgs[root].items()):
            for org in sorted(names):
                _join(groups, orgs, by_org.setdefault((kind, org), root), root)
    found = {groups.find(r): orgs[groups.find(r)] for r in roots}
    named = [o for o in found.values() if o]
    if len(named) > MAX_NAMESAKES:
        return
    if any(not compatible(a, b) for i, a in enumerate(named) for b in named[i + 1 :]):
        return
    target, *rest = found
    for root in rest:
        _join(groups, orgs, target, root)


def _join(groups: Groups, orgs: dict[int, Orgs], a: int, b: int) -> None:
    """Union two groups, their organisations with them."""
    before = (orgs[groups.find(a)], orgs[groups.find(b)])
    if groups.find(a) != groups.find(b) and groups.union(a, b):
        orgs[groups.find(a)] = _merged(*before)


def _join_curated_names(groups: Groups, sightings: Sequence[Sighting]) -> None:
    orgs = _group_orgs(groups, sightings)
    curated: dict[str, set[int]] = defaultdict(set)
    carriers: dict[str, set[int]] = defaultdict(set)
    for i, sighting in enumerate(sightings):
        root = groups.find(i)
        if sighting.role in CURATED_ROLES or sighting.source_type in NOT_CONVERSATIONS:
            for key in sighting.keys:
                curated[key].add(root)
        for key in _carried(sighting.names):
            carriers[key].add(root)
    for key, owners in curated.items():
        if len(owners) != 1:
            continue  # a nickname two contacts share names neither
        owner = groups.find(next(iter(owners)))
        others = {groups.find(r) for r in carriers.get(key, ())} - {owner}
        other = next(iter(others), owner)
        if len(others) == 1 and compatible(orgs[owner], orgs[other]):
            _join(groups, orgs, owner, other)


@lru_cache(maxsize=CACHED)
def _carried(names: tuple[str, ...]) -> frozenset[str]:
    """The keys a sighting answers to: each name, and the first word of each full name (so
    "Priya Nair" makes "Priya" ambiguous)."""
    keys = set()
    for name in names:
        tokens = name_tokens(name)
        if tokens:
            keys.add(" ".join(tokens))
            keys.add(tokens[0])
    return frozenset(keys)
