"""A home folder as people have one: exports where they land, beside what is never data.

`memex --root ~ reindex` with no config and no routes must index every export with its
right type (recognised by content) and none of the decoys: tool configs, a `node_modules`
tree, caches, a `.git` folder, a virtualenv, random JSON and CSV, images.
"""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.cli import run
from engine.index import recognise
from engine.index.exports import exports as exports_of
from engine.index.routes import classify, scan
from engine.index.runs import reindex
from engine.settings import Settings, load_settings
from engine.store import db
from tests.conftest import cli_args

FIXTURES = Path(__file__).parent / "fixtures"
SLACK = "Downloads/acme-slack-export-Mar-2024"
ZOOM = "Zoom/2024-03-11 10.00.00 Weekly sync"

EXPORTS = {
    f"{SLACK}/general/2024-03-11.json": "slack",
    f"{SLACK}/general/2024-03-12.json": "slack",
    f"{SLACK}/random/2024-03-11.json": "slack",
    f"{SLACK}/D06DM0001/2024-03-11.json": "slack",
    "Takeout/Mail/All mail Including Spam and Trash.mbox": "email_catalog",
    "Downloads/offsite.eml": "email_catalog",
    ".thunderbird/k2x9.default-release/Mail/Local Folders/Inbox": "email_catalog",
    f"{ZOOM}/GMT20240311-100000_Recording.transcript.vtt": "meeting",
    f"{ZOOM}/meeting_saved_closed_caption.txt": "meeting",
    "Obsidian/vault/Heron survey.md": "note",
    "Obsidian/vault/projects/Garden plan.md": "note",
    "Documents/signal.jsonl": "signal",
    "Downloads/Telegram Desktop/DataExport_2024-03-15/result.json": "telegram",
    "Downloads/WhatsApp Chat with Raj Patel.txt": "whatsapp",
    "Documents/WhatsApp Chat - Climbing Crew/_chat.txt": "whatsapp",
    "Documents/health/2024-03-11.json": "garmin",
    "Documents/health/clarity-export.csv": "cgm",
}
DECOYS = (
    "package.json",
    "tsconfig.json",
    "src/webapp/package.json",
    "src/webapp/README.md",
    "src/webapp/CHANGELOG.md",
    "src/webapp/node_modules/left-pad/README.md",
    "src/webapp/node_modules/left-pad/package.json",
    "src/webapp/.git/HEAD",
    "src/webapp/.git/description",
    "src/tool/.venv/lib/site-packages/pkg/notes.md",
    "src/env/lib/python3.11/site-packages/pkg/docs.md",
    ".cache/pip/selfcheck.json",
    ".cache/thumbnails/notes.md",
    ".local/share/Trash/files/old-note.md",
    "Applications/Tool.app/Contents/Resources/help.md",
    "Obsidian/vault/.obsidian/workspace.json",
    "Obsidian/vault/.obsidian/plugins/dataview/README.md",
    "Downloads/data.json",
    "Downloads/2024-03-12.json",
    "Downloads/result.json",
    "Downloads/report.csv",
    "Downloads/shopping list.txt",
    "Documents/events.jsonl",
    "Pictures/IMG_0001.jpg",
    "Pictures/screenshot.png",
)


def _write(home: Path, relative: str, content: str | bytes) -> None:
    path = home / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")


def _copy(home: Path, relative: str, fixture: str) -> None:
    (home / relative).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / fixture, home / relative)


def slack_export(home: Path) -> None:
    """The Slack fixture export, moved to where a download lands."""
    shutil.copytree(FIXTURES / "slack" / "export", home / SLACK, ignore=_no_goldens)
    general = home / SLACK / "general"
    day = [{"type": "message", "user": "U02BEN", "text": "retro notes", "ts": "1710230400.0001"}]
    (general / "2024-03-12.json").write_text(json.dumps(day))
    shutil.rmtree(home / SLACK / "mpdm-ana--ben--dan-1")
    shutil.rmtree(home / SLACK / "random")
    (home / SLACK / "random").mkdir()
    shutil.copy(general / "2024-03-11.json", home / SLACK / "random" / "2024-03-11.json")


def _no_goldens(folder: str, names: list[str]) -> list[str]:
    return [n for n in names if ".golden." in n]


def exports(home: Path) -> None:
    slack_export(home)
    _copy(home, "Takeout/Mail/All mail Including Spam and Trash.mbox", "email_catalog/inbox.mbox")
    _copy(home, "Downloads/offsite.eml", "email_catalog/reply.eml")
    thunderbird = ".thunderbird/k2x9.default-release/Mail/Local Folders"
    _copy(home, f"{thunderbird}/Inbox", "email_catalog/inbox.mbox")
    _write(home, f"{thunderbird}/Inbox.msf", '// <!-- <mdb:mork:z v="1.4"/> -->\n')
    _copy(
        home,
        f"{ZOOM}/GMT20240311-100000_Recording.transcript.vtt",
        "meeting/GMT20240311-100000_Recording.transcript.vtt",
    )
    captions = "meeting/2024-03-11 10.00.00 Weekly sync/meeting_saved_closed_caption.txt"
    _copy(home, f"{ZOOM}/meeting_saved_closed_caption.txt", captions)
    _copy(home, "Obsidian/vault/Heron survey.md", "note/vault/Heron survey.md")
    _write(home, "Obsidian/vault/projects/Garden plan.md", "# Garden plan\n\nBeans in bed 3.\n")
    _write(home, "Obsidian/vault/.obsidian/app.json", "{}")
    _copy(home, "Documents/signal.jsonl", "signal/signal.jsonl")
    _copy(
        home,
        "Downloads/Telegram Desktop/DataExport_2024-03-15/result.json",
        "telegram/full/result.json",
    )
    _copy(
        home,
        "Downloads/WhatsApp Chat with Raj Patel.txt",
        "whatsapp/WhatsApp Chat with Raj Patel.txt",
    )
    _copy(home, "Documents/WhatsApp Chat - Climbing Crew/_chat.txt", "whatsapp/_chat.txt")
    _copy(home, "Documents/health/2024-03-11.json", "garmin/2024-03-11.json")
    _copy(home, "Documents/health/clarity-export.csv", "cgm/dexcom.csv")


def decoys(home: Path) -> None:
    manifest = json.dumps({"name": "webapp", "version": "1.0.0", "scripts": {"test": "jest"}})
    readme = "# left-pad\n\nPads a string on the left.\n"
    for relative in DECOYS:
        if relative.endswith(".md"):
            _write(home, relative, readme)
        elif relative.endswith("package.json"):
            _write(home, relative, manifest)
        elif relative.endswith((".jpg", ".png")):
            _write(home, relative, b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes(200))
        else:
            _write(home, relative, _decoy_text(relative))
    _write(home, "src/tool/.venv/pyvenv.cfg", "home = /usr/bin\n")
    _write(home, "src/env/pyvenv.cfg", "home = /usr/bin\n")


def _decoy_text(relative: str) -> str:
    name = Path(relative).name
    return {
        "tsconfig.json": '{"compilerOptions": {"strict": true, "target": "es2022"}}',
        "data.json": '{"calendarDate": "someday", "values": [1, 2, 3]}',
        "2024-03-12.json": '[{"type": "message", "text": "not in a Slack export"}]',
        "result.json": '{"result": "ok", "name": "build", "took": 12}',
        "report.csv": "date,region,revenue\n2024-03-01,EU,1200\n2024-03-02,US,900\n",
        "shopping list.txt": "eggs\nmilk\n12/03/2024 dentist\n",
        "events.jsonl": '{"event": "login", "user": "alex"}\n',
        "HEAD": "ref: refs/heads/main\n",
    }.get(name, "[core]\n\tbare = false\n")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    exports(folder)
    decoys(folder)
    return folder


@pytest.fixture
def at_home(home: Path, settings_factory: Callable[..., Settings]) -> Settings:
    return settings_factory(home, embedder__name="hashing")


def indexed_types(settings: Settings, home: Path) -> dict[str, str]:
    conn = db.connect(settings.db_path, create=False)
    try:
        rows = conn.execute("SELECT source_file, source_type FROM index_state").fetchall()
    finally:
        conn.close()
    return {Path(path).relative_to(home).as_posix(): kind for path, kind in rows}


def test_every_export_is_indexed_with_its_type_and_no_decoy(at_home: Settings, home: Path) -> None:
    stats = reindex(settings=at_home)
    assert not stats.errors, stats.errors
    assert indexed_types(at_home, home) == EXPORTS
    conn = db.connect(at_home.db_path, create=False)
    try:
        types = {r[0] for r in conn.execute("SELECT DISTINCT source_type FROM chunks")}
    finally:
        conn.close()
    assert types == set(EXPORTS.values())  # each export gave chunks, not just a state row


def test_a_no_change_reindex_reads_no_head_again(
    at_home: Settings, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reindex(settings=at_home)
    heads: list[str] = []
    real = recognise.read_head

    def counted(path: Path) -> bytes:
        heads.append(path.relative_to(home).as_posix())
        return real(path)

    monkeypatch.setattr(recognise, "read_head", counted)
    again = reindex(settings=at_home)
    assert again.files == 0 and again.skipped == len(EXPORTS)
    assert heads == []  # the exports' types and the other files' verdicts are kept


def test_discovery_counts_what_it_skipped(at_home: Settings) -> None:
    skipped = scan(at_home).skipped
    assert skipped.excluded_names == {
        "node_modules": 1,
        ".git": 1,
        "virtualenv": 1,
        ".venv": 1,
        ".cache": 1,
        ".local/share/Trash": 1,
        "*.app": 1,
        ".obsidian": 1,
    }
    # The 13 decoys outside excluded folders and the Slack export's 4 listings (read beside
    # its day files, never indexed themselves), by name or content.
    assert skipped.unknown == 13 + 4 + 1  # and Thunderbird's Inbox.msf
    assert skipped.too_large == 0


def test_an_export_larger_than_the_limit_is_one_error_that_says_so(
    at_home: Settings, home: Path
) -> None:
    mbox = "Takeout/Mail/All mail Including Spam and Trash.mbox"
    small = at_home.with_values(max_file_bytes=(home / mbox).stat().st_size - 1)
    discovery = scan(small)
    assert discovery.skipped.too_large >= 1  # its head alone was read
    assert {f.relative for f in discovery.found} >= {mbox}
    stats = reindex(settings=small)
    assert "larger than" in dict(stats.errors)[str(home / mbox)]
    assert len(stats.errors) == sum(
        1 for f in discovery.found if f.size > small.max_file_bytes
    )  # one error each, and only those


def test_user_routes_win_and_ignore(home: Path, settings_factory: Callable[..., Settings]) -> None:
    config = home.parent / "routes.toml"
    config.write_text(
        '[[routes]]\npattern = "Downloads/*.txt"\nsource_type = "ignore"\n\n'
        '[[routes]]\npattern = "Documents/health/*.json"\nsource_type = "voice"\n'
    )
    settings = settings_factory(home, embedder__name="hashing")
    routed = load_settings(config, env={}, roots=[str(home)], db=str(settings.db_path))
    types = {f.path.relative_to(home).as_posix(): f.source_type for f in scan(routed).found}
    assert "Downloads/WhatsApp Chat with Raj Patel.txt" not in types
    assert types["Documents/health/2024-03-11.json"] == "voice"
    assert types["Documents/WhatsApp Chat - Climbing Crew/_chat.txt"] == "whatsapp"


def test_recognition_can_be_switched_off(at_home: Settings) -> None:
    assert not scan(at_home.with_values(discovery__recognise_by_content=False)).found


def test_the_watcher_recognises_and_excludes_one_file(at_home: Settings, home: Path) -> None:
    chat = classify(home / "Downloads" / "WhatsApp Chat with Raj Patel.txt", at_home)
    assert chat is not None and chat.source_type == "whatsapp" and chat.recognised
    assert classify(home / "src/webapp/node_modules/left-pad/README.md", at_home) is None
    assert classify(home / "Obsidian/vault/.obsidian/workspace.json", at_home) is None
    assert classify(home / "Downloads/data.json", at_home) is None


def run_cli(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), out, err)
    return code, out.getvalue() + err.getvalue()


def test_discover_tells_each_export_and_what_it_skipped(at_home: Settings) -> None:
    code, out = run_cli(*cli_args(at_home), "discover")
    assert code == 0, out
    lines = out.splitlines()
    slack = next(line for line in lines if "acme-slack-export-Mar-2024:" in line)
    assert slack.endswith("Slack export — 2 channel(s), 1 DM(s), 4 user(s), 4 day file(s)"), slack
    assert any(line.endswith("Obsidian vault — 2 note(s)") for line in lines), out
    assert any("WhatsApp Chat with Raj Patel.txt: WhatsApp" in line for line in lines), out
    skipped = next(line for line in lines if line.startswith("skipped: "))
    assert "18 file(s) of no known format" in skipped and "8 excluded folder(s)" in skipped
    assert lines[-1] == f"{len(EXPORTS)} file(s) in {len(lines) - 2} export(s)"


def test_reindex_finding_nothing_points_to_discover(
    tmp_path: Path, settings_factory: Callable[..., Settings]
) -> None:
    empty = tmp_path / "nothing-here"
    _write(empty, "Downloads/report.csv", "a,b\n1,2\n")
    code, out = run_cli(*cli_args(settings_factory(empty, embedder__name="hashing")), "reindex")
    assert code == 0, out
    assert "nothing to index under" in out and "memex discover" in out


def test_exports_group_notes_and_slack_day_files(at_home: Settings, home: Path) -> None:
    _write(home, "Documents/ideas/2024/spring.md", "# Spring\n")
    _write(home, "Documents/ideas/summer.md", "# Summer\n")
    _write(home, "loose.md", "# Loose\n")
    told = {
        e.folder.relative_to(home).as_posix(): e.describe()
        for e in exports_of(scan(at_home).found, at_home.max_file_bytes)
    }
    assert told["Documents"] == "Notes — 2 file(s)"
    assert told["loose.md"] == "Notes"  # one note directly in the root: told as itself
    assert told["Obsidian/vault"] == "Obsidian vault — 2 note(s)"
    assert told[SLACK].startswith("Slack export — 2 channel(s), 1 DM(s)")
