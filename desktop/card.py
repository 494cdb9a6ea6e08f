"""The person profile card shown above the hits when the query names a known person."""

from __future__ import annotations

from datetime import date
from typing import Any

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from desktop import theme
from desktop.formatting import plural
from desktop.owner import offers_this_is_me, owner_note
from desktop.requests import CardCounts
from engine.people.cards import source_label

MAX_NOTES = 3
MAX_CONVERSATIONS = 3
MAX_SEEN_WITH = 4
MAX_INTERESTS = 6
MAX_MILESTONES = 5
ROW = 21


class Timeline(QWidget):
    """Milestones as a small vertical timeline: a line, a dot per event, date and event.

    Events wrap onto a second line rather than being cut (height follows the width).
    """

    def __init__(self) -> None:
        super().__init__()
        self.items: list[tuple[str, str]] = []
        policy = QSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)

    def set_items(self, items: list[tuple[str, str]]) -> None:
        self.items = items[-MAX_MILESTONES:]
        self.setToolTip("\n".join(f"{d}  {e}" for d, e in items))
        self.updateGeometry()
        self.update()

    def _fonts(self) -> tuple[QFont, QFont, int]:
        small = QFont(self.font())
        small.setPixelSize(11)
        body = QFont(self.font())
        body.setPixelSize(12)
        return small, body, QFontMetrics(small).horizontalAdvance("Sep 2026") + 10

    def _rows(self, width: int) -> list[tuple[float, float]]:
        """(top, height) of each row at this width."""
        _, body, date_width = self._fonts()
        metrics = QFontMetrics(body)
        text_width = max(40, width - 16 - date_width)
        rows, y = [], 0.0
        for _, what in self.items:
            box = metrics.boundingRect(0, 0, text_width, 1000, int(Qt.TextFlag.TextWordWrap), what)
            height = max(float(ROW), box.height() + 6.0)
            rows.append((y, height))
            y += height
        return rows

    def hasHeightForWidth(self) -> bool:  # noqa: N802
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        rows = self._rows(width)
        return int(sum(h for _, h in rows)) if rows else ROW

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(260, self.heightForWidth(260))

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        t = theme.current()
        small, body, date_width = self._fonts()
        rows = self._rows(self.width())
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if len(rows) > 1:
            painter.setPen(QPen(QColor(t["border"]), 2))
            painter.drawLine(QPointF(5, ROW / 2), QPointF(5, rows[-1][0] + ROW / 2))
        for (top, height), (when, what) in zip(rows, self.items, strict=True):
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(t["accent"]))
            painter.drawEllipse(QPointF(5, top + ROW / 2), 4, 4)
            painter.setFont(small)
            painter.setPen(QColor(t["muted"]))
            painter.drawText(
                QRectF(16, top, date_width, ROW), Qt.AlignmentFlag.AlignVCenter, short_date(when)
            )
            painter.setFont(body)
            painter.setPen(QColor(t["text"]))
            painter.drawText(
                QRectF(16 + date_width, top + 3, self.width() - 16 - date_width, height),
                int(Qt.TextFlag.TextWordWrap),
                what,
            )
        painter.end()


def short_date(value: str) -> str:
    """ "2019-03-02" → "Mar 2019" (other text is kept as it is)."""
    try:
        return date.fromisoformat(value[:10]).strftime("%b %Y")
    except ValueError:
        return value


def _label(text: str = "", name: str = "", wrap: bool = False) -> QLabel:
    label = QLabel(text)
    if name:
        label.setObjectName(name)
    label.setWordWrap(wrap)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class ProfileCard(QFrame):
    """Initials avatar, name, relationship, context, notes, interests and milestones."""

    only_person = Signal(str, bool)  # name, on
    all_mentions = Signal(str)
    this_is_me = Signal(str)  # name: the user says this card is theirs

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("profileCard")
        self.profile: dict[str, Any] | None = None
        self.avatar = QLabel()
        self.avatar.setFixedSize(52, 52)
        self.name = _label(name="cardName")
        self.relationship = _label(name="cardRelationship", wrap=True)
        self.context = _label(wrap=True)
        self.notes = _label(wrap=True)
        self.facts = _label(name="cardFacts", wrap=True)
        self.interests = QHBoxLayout()
        self.interests.setSpacing(4)
        self.timeline = Timeline()
        self.milestones_title = _label("MILESTONES", "cardSection")
        self.latest_title = _label("LATEST", "cardSection")
        self.latest = _label(name="cardLatest", wrap=True)
        self.seen_title = _label("SEEN WITH", "cardSection")
        self.seen_with = _label(name="cardSeenWith", wrap=True)
        self.only = QPushButton()
        self.only.setObjectName("cardButton")
        self.only.setCheckable(True)
        self.only.setAccessibleName("onlyPerson")
        self.only.toggled.connect(lambda on: self.only_person.emit(self._name(), on))
        self.mentions = QPushButton("All mentions")
        self.mentions.setObjectName("cardButton")
        self.mentions.clicked.connect(lambda: self.all_mentions.emit(self._name()))
        self.owner = _label(name="cardOwner", wrap=True)
        self.me = QPushButton("This is me")
        self.me.setObjectName("cardButton")
        self.me.setToolTip(
            "Memex takes you to be this person (written as “me” in your people file)"
        )
        self.me.clicked.connect(lambda: self.this_is_me.emit(self._name()))
        self._build()
        self.hide()

    def _build(self) -> None:
        left = QVBoxLayout()
        left.addWidget(self.avatar, alignment=Qt.AlignmentFlag.AlignTop)
        left.addStretch(1)
        head = QHBoxLayout()
        head.addWidget(self.name)
        head.addWidget(self.relationship, 1)
        middle = QVBoxLayout()
        middle.setSpacing(4)
        middle.addLayout(head)
        middle.addWidget(self.owner)
        middle.addWidget(self.context)
        middle.addWidget(self.notes)
        middle.addWidget(self.facts)
        middle.addLayout(self.interests)
        middle.addStretch(1)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.only)
        buttons.addWidget(self.mentions)
        buttons.addWidget(self.me)
        right = QVBoxLayout()
        right.setSpacing(6)
        right.addLayout(buttons)
        for widget in (self.milestones_title, self.timeline, self.latest_title, self.latest):
            right.addWidget(widget)
        right.addWidget(self.seen_title)
        right.addWidget(self.seen_with)
        right.addStretch(1)
        row = QHBoxLayout(self)
        row.setContentsMargins(14, 12, 14, 12)
        row.setSpacing(14)
        row.addLayout(left)
        row.addLayout(middle, 1)
        row.addLayout(right, 1)

    def _name(self) -> str:
        return str(self.profile["name"]) if self.profile else ""

    def show_profile(
        self, profile: dict[str, Any], only_on: bool, counts: CardCounts | None = None
    ) -> None:
        """Fill the card from a profile result's dict and show it; `counts`: the keyword
        matches each action opens (desktop/card_counts.py), shown on its button."""
        self.profile = profile
        name = str(profile.get("name", ""))
        self.avatar.setPixmap(theme.avatar_pixmap(name, 52))
        self.name.setText(name)
        self.relationship.setText(str(profile.get("relationship", "")))
        self.context.setText(str(profile.get("context", "")))
        notes = [str(n) for n in profile.get("notes") or []]
        self.notes.setText("\n".join(f"•  {n}" for n in notes[:MAX_NOTES]))
        self.notes.setVisible(bool(notes))
        self._set_interests([str(i) for i in profile.get("interests") or []])
        milestones = [
            (str(m.get("date", "")), str(m.get("event", "")))
            for m in profile.get("milestones") or []
            if isinstance(m, dict)
        ]
        self.timeline.set_items(milestones)
        self.milestones_title.setVisible(bool(milestones))
        self.timeline.setVisible(bool(milestones))
        self._set_data(profile)
        self._set_actions(name, only_on, counts or CardCounts())
        self.owner.setText(owner_note(profile))
        self.owner.setVisible(bool(self.owner.text()))
        self.me.setVisible(offers_this_is_me(profile))
        self.show()

    def _set_actions(self, name: str, only_on: bool, counts: CardCounts) -> None:
        self.only.blockSignals(True)
        self.only.setText(with_count(f"Only {name}", counts.only))
        self.only.setChecked(only_on)
        self.only.blockSignals(False)
        self.only.setToolTip(action_tip(f"This search, only where {name} is named", counts.only))
        self.mentions.setText(with_count("All mentions", counts.all_mentions))
        self.mentions.setToolTip(
            action_tip(f"Everything that names {name}, any source, any time", counts.all_mentions)
        )

    def _set_data(self, profile: dict[str, Any]) -> None:
        """What the people directory found: where they appear, first and last contact,
        the latest conversations, whom they are seen with (each hidden when empty)."""
        self.facts.setText(facts_text(profile))
        self.facts.setVisible(bool(self.facts.text()))
        latest = [
            f"{c.get('title', '')} · {short_date(str(c['last']))}"
            if c.get("last")
            else str(c.get("title", ""))
            for c in (profile.get("conversations") or [])[:MAX_CONVERSATIONS]
            if isinstance(c, dict)
        ]
        self.latest.setText("\n".join(latest))
        seen = [
            str(s.get("name", "")) for s in profile.get("seen_with") or [] if isinstance(s, dict)
        ]
        self.seen_with.setText(", ".join(seen[:MAX_SEEN_WITH]))
        for title, label in ((self.latest_title, self.latest), (self.seen_title, self.seen_with)):
            title.setVisible(bool(label.text()))
            label.setVisible(bool(label.text()))

    def _set_interests(self, interests: list[str]) -> None:
        while self.interests.count():
            item = self.interests.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        for interest in interests[:MAX_INTERESTS]:
            self.interests.addWidget(_label(interest, "pill"))
        self.interests.addStretch(1)

    def clear(self) -> None:
        self.profile = None
        self.hide()


def with_count(label: str, count: int | None) -> str:
    """ "All mentions · 244": the keyword matches the action's search will count."""
    return label if count is None else f"{label} · {count}"


def action_tip(what: str, count: int | None) -> str:
    """What the action searches, and the keyword matches it will count."""
    if count is None:
        return what
    return f"{what}: {plural(count, 'keyword match', 'keyword matches')}"


def facts_text(profile: dict[str, Any]) -> str:
    """ "Slack 6 · Meeting 11 · 209 messages" and "First contact Jul 2025 · last Jun 2026"."""
    sources = profile.get("sources") or {}
    lines = []
    if isinstance(sources, dict) and sources:
        where = [f"{source_label(str(t))} {n}" for t, n in sources.items()]
        lines.append(" · ".join([*where, f"{profile.get('messages', 0)} messages"]))
    first, last = profile.get("first"), profile.get("last")
    if first or last:
        lines.append(
            f"First contact {short_date(str(first or '?'))} · last {short_date(str(last or '?'))}"
        )
    return "\n".join(lines)
