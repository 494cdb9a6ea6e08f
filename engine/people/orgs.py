"""How two organisations are compared: by their whole name, normalised, or by the email
domain of whoever names them. "Heliotrope AS" is "heliotrope" (a Slack workspace of that
name); "University of Oslo" is not "University of Bergen"; a contact at "UiO" with an
address at uio.no is the "University of Oslo" of another contact at uio.no.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from engine.people.normalise import CACHED, name_tokens

# Legal forms written after (or, as in "AB Volvo", before) a company's name.
LEGAL_FORMS = frozenset(
    {"inc", "incorporated", "corp", "corporation", "co", "company", "ltd", "limited"}
    | {"llc", "llp", "lp", "plc", "pty", "as", "asa", "ab", "publ", "aps", "oy", "oyj"}
    | {"gmbh", "ag", "kg", "mbh", "ug", "se", "sa", "sas", "sarl", "srl", "spa", "bv", "nv"}
)
_LEADING_FORMS = frozenset({"ab", "as", "asa", "oy", "oyj"})
_FILLER = frozenset({"the", "and"})
# Addresses anyone can have: their domain says nothing of an organisation.
PUBLIC_DOMAINS = frozenset(
    {"gmail.com", "googlemail.com", "googlegroups.com", "outlook.com", "hotmail.com"}
    | {"live.com", "msn.com", "yahoo.com", "icloud.com", "me.com", "mac.com", "aol.com"}
    | {"proton.me", "protonmail.com", "pm.me", "gmx.de", "gmx.net", "web.de", "mail.com"}
    | {"yandex.ru", "mail.ru", "qq.com", "163.com", "fastmail.com", "zoho.com", "hey.com"}
)
_DOMAIN = re.compile(r"^[\w-]+(\.[\w-]+)+$")


@lru_cache(maxsize=CACHED)
def org_name(org: str) -> str:
    """An organisation's name as compared: folded words, "the"/"and" and legal forms
    ("AS", "Inc", "GmbH", "Ltd.") dropped: "The Heliotrope Co., Ltd." → "heliotrope"."""
    words = [w for w in name_tokens(org) if w not in _FILLER]
    while len(words) > 1 and words[-1] in LEGAL_FORMS:
        words.pop()
    while len(words) > 1 and words[0] in _LEADING_FORMS:
        words.pop(0)
    return " ".join(words)


def org_keys(org: str, emails: Iterable[str] = ()) -> frozenset[str]:
    """What an organisation is known by: its name, and the domains of the addresses of
    whoever names it (public mail providers aside); an organisation written as a domain
    ("acme.example") is that domain too. Empty when no organisation is named."""
    name = org_name(org)
    if not name:
        return frozenset()
    keys = {f"name:{name}"}
    written = org.strip().lower()
    if _DOMAIN.match(written):
        keys.add(f"domain:{written}")
    for email in emails:
        domain = email.rpartition("@")[2]
        if domain and domain not in PUBLIC_DOMAINS:
            keys.add(f"domain:{domain}")
    return frozenset(keys)
