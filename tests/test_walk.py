"""The walk's shortcuts keep its answers: a name no route's last part can match skips the
route regex, and a file no route or recogniser can claim is counted without a stat."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from engine.index.routes import DEFAULT_ROUTES, name_endings, route_matcher, scan
from engine.settings import Route, Settings


def test_the_default_routes_end_in_fixed_names() -> None:
    endings = name_endings(DEFAULT_ROUTES)
    assert endings is not None and ".json" in endings and ".md" in endings
    assert ".jpg" not in endings


def test_a_route_without_a_fixed_ending_turns_the_shortcut_off() -> None:
    routes = (Route("mail/Inbox*", "email_catalog"), *DEFAULT_ROUTES)
    assert name_endings(routes) is None
    assert route_matcher(routes)("mail/Inbox") == "email_catalog"  # no suffix at all
    assert route_matcher(DEFAULT_ROUTES)("data/slack/general.jsonl") == "slack"
    assert route_matcher(DEFAULT_ROUTES)("data/slack/general.jsonl.jpg") is None


def test_unreadable_names_are_counted_unknown_without_a_stat(
    tmp_path: Path, settings_factory: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "home"
    (root / "Pictures").mkdir(parents=True)
    for n in range(5):
        (root / "Pictures" / f"IMG_{n}.jpg").write_bytes(b"\xff\xd8")
    (root / "notes.md").write_text("# Notes\n\nferry\n")
    settings = settings_factory(root)
    stats: list[str] = []
    real = Path.stat

    def counted(self: Path, *args: object, **kwargs: object) -> object:
        stats.append(self.name)
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "stat", counted)
    found = scan(settings)
    assert [f.relative for f in found.found] == ["notes.md"]
    assert found.skipped.unknown == 5
    assert not [name for name in stats if name.endswith(".jpg")]
