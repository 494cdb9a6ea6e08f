"""Slack: the synced JSONL log, and Slack's own workspace export.

Synced JSONL: one message a line, `{"ts","channel","user","user_name","text","thread_ts"?}`.

Workspace export: `<export>/<channel>/YYYY-MM-DD.json`, each a JSON array of messages, with
`users.json` at the export root. Names come from `users.json` first, then from each message's
`user_profile` (Slack writes it into the day file) for ids `users.json` does not list. DMs
(folder `D…`) and group DMs (folder `mpdm-…`) are titled by their members, listed in the
root's `dms.json` and `mpims.json`. Those root files are the type's declared siblings
(`SourceType.siblings`, `SIBLINGS` here): the indexer reads them and hands them in, and each
day file depends on them, so a changed `users.json` reindexes the day files it names.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field, replace
from pathlib import PurePath
from typing import Any

from engine.extractors.base import NO_SIBLINGS, ExtractError, Extraction, SiblingReader, Siblings
from engine.extractors.chunking import (
    Message,
    chat_drafts,
    decode,
    iso_from_epoch,
    json_array_items,
    jsonl_records,
    load_json,
    numbered_messages,
)
from engine.extractors.mentions import spoken
from engine.records import Mention

# Subtypes that are people talking; joins, leaves, bots, topic changes and tombstones are not.
SPOKEN_SUBTYPES = {None, "", "thread_broadcast", "file_share", "me_message", "message_replied"}
# Slack escapes `<` and `>` in text (`&lt;`), so a label never holds `<`: stopping there
# keeps each scan to one `<…>` (with `[^>]`, every `<@U1|` of a text without `>` read on
# to its end, quadratic).
_MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|([^<>]+))?>")
_CHANNEL = re.compile(r"<#[CG][A-Z0-9]+\|([^<>]*)>")
_SPECIAL = re.compile(r"<!(here|channel|everyone)(?:\|[^<>]*)?>")
_SUBTEAM = re.compile(r"<!subteam\^[A-Z0-9]+\|([^<>]+)>")
_LINK = re.compile(r"<((?:https?|mailto|tel):[^<>|]+)(?:\|([^<>]+))?>")
_DM_FOLDER = re.compile(r"D[A-Z0-9]{2,}")  # the export names a DM's folder by its id
DELETED_TEXT = "This message was deleted."
SLACKBOT = "USLACKBOT"
# The export root's listings, beside a day file's channel folder (`SourceType.siblings`).
USERS, DMS, MPIMS = "../users.json", "../dms.json", "../mpims.json"
SIBLINGS = (USERS, DMS, MPIMS)


def render_text(text: str, names: dict[str, str]) -> str:
    """Slack markup to plain text: `<@U1>` → `@Ana`, `<url|label>` → `label (url)`."""
    text = _MENTION.sub(lambda m: "@" + (names.get(m[1]) or m[2] or m[1]), text)
    text = _CHANNEL.sub(lambda m: f"#{m[1]}", text)
    text = _SPECIAL.sub(lambda m: f"@{m[1]}", text)
    text = _SUBTEAM.sub(lambda m: m[1], text)
    text = _LINK.sub(_render_link, text)
    return html.unescape(text).strip()


def _render_link(match: re.Match[str]) -> str:
    url, label = match[1], match[2]
    if url.startswith(("mailto:", "tel:")):
        return label or url.split(":", 1)[1]
    return f"{label} ({url})" if label and label != url else url


def _jsonl_message(
    number: int, record: dict[str, Any], default_channel: str, names: dict[str, str]
) -> Message | None:
    text = render_text(str(record.get("text") or ""), names)
    if not text:
        return None
    ts = float(str(record.get("ts")))
    sender = str(record.get("user_name") or record.get("user") or "unknown")
    if record.get("thread_ts") and str(record["thread_ts"]) != str(record.get("ts")):
        text = f"↳ {text}"  # a reply: kept in time order so appends touch only the last window
    return Message(
        when=iso_from_epoch(ts),
        sender=sender,
        text=text,
        conversation=str(record.get("channel") or default_channel),
        location=f"line:{number}",
        epoch=ts,
        extra={"thread_ts": record.get("thread_ts"), "user": str(record.get("user") or "")},
    )


def _extract_jsonl(data: bytes, path: PurePath) -> Extraction:
    result = Extraction()
    records = list(jsonl_records(decode(data), result))
    # Mentions carry only a user id; the log itself pairs ids with names wherever they post.
    names = {
        str(r["user"]): str(r["user_name"])
        for _, r in records
        if r.get("user") and r.get("user_name")
    }
    messages = numbered_messages(
        records,
        lambda number, record: _jsonl_message(number, record, path.stem, names),
        result,
        "message without a usable ts",
        errors=(TypeError, ValueError),
    )
    result.drafts = chat_drafts(messages, "slack")
    result.mentions = [_jsonl_mention(m) for m in messages if not is_bot_id(m.extra.get("user"))]
    return result


def is_bot_id(user: object) -> bool:
    """A bot's id (`B…`, as Slack numbers bots and integrations; people are `U…`/`W…`)
    or Slackbot's: nobody to know."""
    uid = str(user or "")
    return uid == SLACKBOT or (uid.startswith("B") and uid[1:].isalnum() and uid[1:].isupper())


def _jsonl_mention(message: Message) -> Mention:
    """The author of a synced log's message: the name it was posted under, with the id."""
    user = str(message.extra.get("user") or "")
    name = "" if message.sender in (user, "unknown") else message.sender
    return spoken(name, message.when, handles=(f"slack:{user}",) if user else ())


@dataclass(frozen=True)
class Listings:
    """An export root's listings: user id → display name, conversation → member ids, and
    user id → who they are (a `Mention` without role or dates; bots left out)."""

    users: dict[str, str]
    members: dict[str, tuple[str, ...]]  # a DM's or group DM's id and name → member ids
    people: dict[str, Mention] = field(default_factory=dict)


def listings(siblings: Siblings) -> Listings:
    """The listings of the export a day file belongs to; what is missing or broken is empty."""
    members = _members(siblings.get(DMS))
    members.update(_members(siblings.get(MPIMS)))
    listed = _listed(siblings.get(USERS))
    return Listings(_users(listed), members, _people(listed))


def _listed(data: bytes | None) -> list[Any]:
    if data is None:
        return []
    try:
        items = load_json(decode(data))
    except ExtractError:
        return []  # a broken listing: the day files fall back to ids and folder names
    return items if isinstance(items, list) else []


def _users(listed: list[Any]) -> dict[str, str]:
    """users.json as {id: display name}."""
    names: dict[str, str] = {}
    for user in listed:
        if isinstance(user, dict) and user.get("id"):
            profile = user.get("profile")
            names[str(user["id"])] = _display_name(
                profile if isinstance(profile, dict) else {}, user
            )
    return names


def _display_name(profile: dict[str, Any], user: dict[str, Any]) -> str:
    for value in (
        profile.get("real_name"),
        profile.get("display_name"),
        user.get("real_name"),
        user.get("name"),
    ):
        if value:
            return str(value)
    return str(user.get("id") or "unknown")


def _people(listed: list[Any]) -> dict[str, Mention]:
    """users.json as {id: who they are}: the real name, the display name as an alias, the
    profile's email, the handle `slack:<id>` and the team; bots are nobody."""
    found: dict[str, Mention] = {}
    for user in listed:
        if isinstance(user, dict) and user.get("id") and not _is_bot(user):
            profile = user.get("profile")
            found[str(user["id"])] = _person(profile if isinstance(profile, dict) else {}, user)
    return found


def _is_bot(user: dict[str, Any]) -> bool:
    return bool(user.get("is_bot") or user.get("is_app_user")) or user.get("id") == SLACKBOT


def _person(profile: dict[str, Any], user: dict[str, Any]) -> Mention:
    """Who a users.json entry (or a day file's `user_profile`) says a user is."""
    real = str(profile.get("real_name") or user.get("real_name") or "").strip()
    shown = str(profile.get("display_name") or "").strip()
    name = real or shown or str(user.get("name") or "")
    email = str(profile.get("email") or "").strip()
    return Mention(
        name=name,
        aliases=(shown,) if shown and shown != name else (),
        emails=(email,) if email else (),
        handles=(f"slack:{user['id']}",) if user.get("id") else (),
        org=str(user.get("team_id") or profile.get("team") or ""),
    )


def _members(data: bytes | None) -> dict[str, tuple[str, ...]]:
    """dms.json or mpims.json as {id and name: member ids}."""
    found: dict[str, tuple[str, ...]] = {}
    for item in _listed(data):
        if isinstance(item, dict) and isinstance(item.get("members"), list):
            for key in ("id", "name"):
                if item.get(key):
                    found[str(item[key])] = tuple(str(m) for m in item["members"])
    return found


def is_direct(path: PurePath) -> bool:
    """Whether a day file is of a DM (folder `D…`) or a group DM (folder `mpdm-…`)."""
    folder = path.parent.name
    return bool(_DM_FOLDER.fullmatch(folder)) or folder.startswith("mpdm-")


def direct_conversation(
    path: PurePath, names: dict[str, str], members: dict[str, tuple[str, ...]]
) -> tuple[str, str] | None:
    """(title prefix, member names) of a DM (folder `D…`, members in `dms.json`) or a group
    DM (folder `mpdm-ana--ben-1`, members in `mpims.json`); None for a channel."""
    folder = path.parent.name
    if _DM_FOLDER.fullmatch(folder):
        prefix = "DM · "
    elif folder.startswith("mpdm-"):
        prefix = "Group DM · "
    else:
        return None
    listed = members.get(folder)
    if listed:
        return prefix, ", ".join(names.get(m) or m for m in listed)
    if folder.startswith("mpdm-"):  # the name itself lists the members' handles
        return prefix, ", ".join(folder[5:].rsplit("-", 1)[0].split("--"))
    return None


def _names_in_file(items: list[Any], users: dict[str, str]) -> dict[str, str]:
    names = dict(users)
    for item in items:
        if (
            isinstance(item, dict)
            and item.get("user")
            and isinstance(item.get("user_profile"), dict)
        ):
            names.setdefault(str(item["user"]), _display_name(item["user_profile"], {}))
    return names


def _export_message(item: Any, channel: str, names: dict[str, str], line: int) -> Message | None:
    """One message of a day file, or None for noise; raises ValueError on a broken one."""
    if not isinstance(item, dict) or item.get("type", "message") != "message":
        raise ValueError("not a message object")
    ts = float(str(item["ts"]))
    if item.get("subtype") not in SPOKEN_SUBTYPES or (item.get("bot_id") and not item.get("user")):
        return None
    text = render_text(str(item.get("text") or ""), names)
    files = [
        str(f.get("name") or f.get("title"))
        for f in item.get("files") or []
        if isinstance(f, dict) and (f.get("name") or f.get("title"))
    ]
    if files:
        text = " ".join([text, *(f"[file: {name}]" for name in files)]).strip()
    if not text or text == DELETED_TEXT:
        return None
    user = str(item.get("user") or "")
    thread = str(item.get("thread_ts") or "")
    return Message(
        when=iso_from_epoch(ts),
        sender=names.get(user) or user or "unknown",
        text=f"↳ {text}" if thread and thread != str(item["ts"]) else text,
        conversation=channel,
        epoch=ts,
        location=f"line:{line}",
        extra={"thread_ts": thread or None, "edited": bool(item.get("edited")), "user": user},
    )


def _thread_start(thread_ts: Any) -> float | None:
    """A reply's thread start in epoch seconds, or None when it has none (or a broken one)."""
    try:
        start = float(thread_ts) if thread_ts else None
    except (TypeError, ValueError):
        return None
    return start


def _thread_order(messages: list[Message]) -> list[Message]:
    """Replies right after their parent: each message sorts at its thread's start time."""
    starts = {f"{m.epoch:.6f}" for m in messages}
    ordered: list[Message] = []
    for message in sorted(messages, key=lambda m: m.epoch):
        thread = _thread_start(message.extra.get("thread_ts"))
        anchor = thread if thread is not None and f"{thread:.6f}" in starts else message.epoch
        ordered.append(
            Message(
                message.when,
                message.sender,
                message.text,
                message.conversation,
                message.location,
                anchor,
                message.extra,
            )
        )
    return ordered  # chat_drafts' stable sort on epoch keeps replies in time order after the parent


def _extract_export_day(data: bytes, path: PurePath, siblings: Siblings) -> Extraction:
    result = Extraction()
    items = json_array_items(decode(data), result)
    if items is None:
        raise ExtractError("a Slack export day file must be a JSON array of messages")
    listed = siblings.parsed(listings)  # once per export and run, not per day file
    names = _names_in_file([item for _, item in items], listed.users)
    conversation = direct_conversation(path, names, listed.members)
    prefix, channel = conversation or ("#", path.parent.name)
    messages = numbered_messages(
        enumerate(items, start=1),
        lambda _, line_and_item: _export_message(
            line_and_item[1], channel, names, line=line_and_item[0]
        ),
        result,
        "not a usable Slack message",
        where="message",
    )
    result.drafts = chat_drafts(_thread_order(messages), "slack", prefix)
    profiles = _profiles_in_file([item for _, item in items], listed)
    result.mentions = export_mentions(messages, listed, profiles, path)
    return result


def _profiles_in_file(items: list[Any], listed: Listings) -> dict[str, Mention]:
    """Who the users users.json does not list are, by the day file's own `user_profile`."""
    found: dict[str, Mention] = {}
    for item in items:
        if (
            isinstance(item, dict)
            and item.get("user")
            and isinstance(item.get("user_profile"), dict)
        ):
            uid = str(item["user"])
            if uid not in listed.users and uid not in found:
                found[uid] = _person(item["user_profile"], {"id": uid, "team_id": item.get("team")})
    return found


def _who(uid: str, listed: Listings, profiles: dict[str, Mention]) -> Mention | None:
    """A user id as a mention: users.json first, then the day file's profile, else the
    handle alone; None for nobody (a bot users.json lists, Slackbot, no id)."""
    if uid in listed.people:
        return listed.people[uid]
    if not uid or is_bot_id(uid) or uid in listed.users:
        return None
    return profiles.get(uid) or Mention(handles=(f"slack:{uid}",))


def export_mentions(
    messages: list[Message], listed: Listings, profiles: dict[str, Mention], path: PurePath
) -> list[Mention]:
    """One mention per message of its author, and of each other member of a DM or group DM
    (role "recipient"); the team is the export's folder where users.json names none."""
    org = path.parent.parent.name
    members = listed.members.get(path.parent.name, ()) if is_direct(path) else ()
    found: list[Mention] = []
    for message in messages:
        user = str(message.extra.get("user") or "")
        roles = [(user, "author"), *((m, "recipient") for m in members if m != user)]
        for uid, role in roles:
            person = _who(uid, listed, profiles)
            if person is not None:
                when = message.when
                found.append(
                    replace(person, role=role, org=person.org or org, first=when, last=when)
                )
    return found


def extract_slack(data: bytes, path: PurePath, siblings: Siblings = NO_SIBLINGS, /) -> Extraction:
    """A synced JSONL log, or a day file of a workspace export with its root's listings."""
    if path.suffix.lower() == ".json":
        return _extract_export_day(data, path, siblings)
    return _extract_jsonl(data, path)


READER = SiblingReader(extract_slack)
