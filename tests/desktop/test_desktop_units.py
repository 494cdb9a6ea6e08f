"""Small pure pieces: dates, snippets, titles and counts, hotkeys, editor commands, autostart,
neighbours."""

from __future__ import annotations

import plistlib
from datetime import datetime
from pathlib import Path

from desktop import autostart
from desktop.formatting import (
    absolute_date,
    highlight_terms,
    hit_title,
    keyword_matches,
    line_of,
    relative_date,
    snippet_html,
    split_header,
    status_text,
)
from desktop.hotkey import GlobalHotkey, to_display, to_pynput, unsupported_reason
from desktop.opener import editor_argv, on_disk, reveal_argv
from desktop.preview import labels_text
from engine.search.present.neighbours import neighbours
from engine.settings import Settings
from engine.store import db

NOW = datetime(2026, 6, 30, 12)


def test_relative_and_absolute_dates() -> None:
    assert relative_date("2026-06-30T08:00:00", NOW) == "today"
    assert relative_date("2026-06-29", NOW) == "yesterday"
    assert relative_date("2026-06-24", NOW) == "6 days ago"
    assert relative_date("2026-05-20", NOW) == "5 weeks ago"
    assert relative_date("2026-01-02", NOW) == "5 months ago"
    assert relative_date("2024-03-01", NOW) == "Mar 2024"
    assert relative_date("2026-07-03", NOW) == "in 3 days"
    assert relative_date(None, NOW) == relative_date("not a date", NOW) == ""
    assert absolute_date("2026-06-30T14:05:00") == "Tuesday 30 June 2026, 14:05"
    assert absolute_date("2026-06-30") == "Tuesday 30 June 2026"


def test_snippet_marks_become_bold_and_the_rest_is_escaped() -> None:
    html = snippet_html("a <b>tag</b> and **standup** & **Priya**", "#123456")
    assert "&lt;b&gt;tag&lt;/b&gt;" in html and "&amp;" in html
    assert html.count("font-weight:600") == 2 and ">standup</span>" in html
    marked = highlight_terms("Standups are\nstandard", ["standup"], "#1", "#2")
    assert ">Standups</span>" in marked and "standard" in marked and "<br>" in marked


def test_titles_counts_and_headers_as_the_window_shows_them() -> None:
    assert hit_title("Rajesh Kumar › Rajesh Kumar", "r.md") == "Rajesh Kumar"
    assert hit_title("indexer › Indexer > Change detection", "i.md") == "indexer › Change detection"
    assert hit_title("Ana Lima › Role", "a.md") == "Ana Lima › Role"
    assert hit_title("", "/notes/garden.md") == "garden.md"
    assert keyword_matches({}, ()) is None  # no counts: no number on "All" or in the footer
    assert keyword_matches({"slack": 5, "note": 4}, ()) == 9  # "All"
    assert keyword_matches({"slack": 5, "note": 4}, ("note", "mail")) == 4
    assert status_text(1, 9, 40.6, "hybrid") == "1 hit shown · 9 keyword matches · 41 ms · hybrid"
    assert status_text(29, None, 3, "bm25") == "29 hits shown · 3 ms · bm25"
    chunk = "Note: Garden\nAliases: plot\nTags: home, soil\nSection: Beds\n\nDig in May.\n"
    fields, body = split_header(chunk)
    assert body == "Dig in May.\n" and fields["Tags"] == "home, soil"
    assert labels_text(fields) == "#home #soil · aka plot"
    assert split_header("Ana: hi\nBen: hello") == ({}, "Ana: hi\nBen: hello")  # a chat: no header


def test_locations_give_lines() -> None:
    assert line_of("line:12") == 12 and line_of("line:7#anchor") == 7
    assert line_of("t:00:01:05") is None and line_of("") is None


def test_hotkey_syntax_both_ways() -> None:
    assert to_pynput("Ctrl+Alt+Space") == "<ctrl>+<alt>+<space>"
    assert to_pynput("Meta+Shift+F5") == "<cmd>+<shift>+<f5>"
    assert to_pynput("Ctrl+K") == "<ctrl>+k"
    assert to_display("<ctrl>+<alt>+<space>") == "Ctrl+Alt+Space"
    assert to_display("<cmd>+<shift>+k") == "Meta+Shift+K"


def test_where_the_hotkey_cannot_work_the_app_says_how_to_bind_toggle() -> None:
    assert unsupported_reason({"XDG_SESSION_TYPE": "wayland", "DISPLAY": ":0"}, "linux")
    assert unsupported_reason({}, "linux") == "there is no X display"
    assert unsupported_reason({"DISPLAY": ":0"}, "linux") is None
    assert unsupported_reason({}, "win32") is None
    hotkey = GlobalHotkey(lambda: None)
    status = hotkey.start(
        "<ctrl>+<alt>+<space>",
        {"XDG_SESSION_TYPE": "wayland", "XDG_CURRENT_DESKTOP": "GNOME"},
        qt_platform="wayland",
    )
    assert not status.ok
    assert "memex --toggle" in status.message and "Ctrl+Alt+Space" in status.message
    assert "Custom Shortcuts" in status.message
    offscreen = hotkey.start("<ctrl>+<alt>+<space>", {"DISPLAY": ":0"}, qt_platform="offscreen")
    assert not offscreen.ok and "memex --toggle" in offscreen.message


def test_editor_command_templates() -> None:
    assert editor_argv("code --goto {file}:{line}", "/a b/c.md", 12) == [
        "code",
        "--goto",
        "/a b/c.md:12",
    ]
    assert editor_argv("emacsclient +{line}", "/x.md", None) == ["emacsclient", "+1", "/x.md"]
    assert reveal_argv("/x.md", "darwin") == ["open", "-R", "/x.md"]
    assert reveal_argv("C:\\x.md", "win32") == ["explorer", "/select,C:\\x.md"]
    assert reveal_argv("/x.md", "linux") is None


def test_a_hit_inside_an_archive_opens_the_archive() -> None:
    assert on_disk("/h/Downloads/slack.zip!/general/2024-03-11.json") == "/h/Downloads/slack.zip"
    assert on_disk("/h/notes/a!b.md") == "/h/notes/a!b.md"


def test_start_at_login_files(tmp_path: Path) -> None:
    desktop_file = tmp_path / "autostart" / "memex.desktop"
    autostart.set_start_at_login(
        True, platform="linux", path=desktop_file, command=["/opt/memex/memex"]
    )
    assert "Exec=/opt/memex/memex" in desktop_file.read_text()
    assert autostart.is_start_at_login(platform="linux", path=desktop_file)
    autostart.set_start_at_login(False, platform="linux", path=desktop_file)
    assert not desktop_file.exists()
    plist = tmp_path / "LaunchAgents" / "io.memex.app.plist"
    autostart.set_start_at_login(True, platform="darwin", path=plist, command=["/A/memex"])
    assert plistlib.loads(plist.read_bytes())["ProgramArguments"] == ["/A/memex"]
    assert autostart.autostart_path("linux", home=tmp_path) == (
        tmp_path / ".config" / "autostart" / "memex.desktop"
    )


def test_neighbours_are_the_chunks_around_a_hit_in_file_order(demo_index: Settings) -> None:
    conn = db.connect(demo_index.db_path, create=False)
    try:
        source_file, count = conn.execute(
            "SELECT source_file, count(*) FROM chunks GROUP BY source_file ORDER BY 2 DESC LIMIT 1"
        ).fetchone()
        assert count >= 5
        ordered = conn.execute(
            "SELECT id FROM chunks WHERE source_file = ? ORDER BY ordinal", (source_file,)
        ).fetchall()
        middle = ordered[2][0]
        around = neighbours(conn, middle, before=2, after=2)
        assert [c.id for c in around] == [r[0] for r in ordered[:5]]
        assert [c.is_hit for c in around] == [False, False, True, False, False]
        assert neighbours(conn, "no-such-id") == []
    finally:
        conn.close()
