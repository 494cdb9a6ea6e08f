"""The first run: shown instead of an empty search while no data folder is configured.

One sentence of what Memex does; "Add a folder…" (the native folder picker, starting in the
home folder) or the home folder in one click; then what the folder holds, per export, found
on the read pool with a busy bar; then "Index", which hands the folder to the app
(`index_requested`): the app saves it as a data folder and starts indexing.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
)

from desktop import theme
from desktop.export_list import export_item, export_list
from desktop.survey import Survey
from desktop.tasks import Tasks
from engine.text import shown

PITCH = (
    "Memex makes your chats, mail, meetings, notes and journals searchable in one place, "
    "offline: the index and the model stay on this computer."
)
ASK = "Choose a folder that holds your exports and notes. Nothing is indexed until you say so."
# The page's own rules, in the theme's colours (memex.qss styles the search window).
STYLE = """
#welcomeTitle { font-size: 22px; font-weight: 600; }
#welcomePitch { font-size: 14px; }
QPushButton#indexButton {
    background: @accent; color: @on_accent; border: 1px solid @accent;
    border-radius: 8px; padding: 6px 22px; font-weight: 600;
}
QPushButton#indexButton:disabled { background: @surface; color: @muted; }
QListWidget { background: @surface; border: 1px solid @border; border-radius: 8px; }
"""


def _label(text: str = "", name: str = "dialogNote") -> QLabel:
    label = QLabel(text, objectName=name, wordWrap=True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def _button(text: str) -> QPushButton:
    button = QPushButton(text, objectName="cardButton")
    button.setCursor(Qt.CursorShape.PointingHandCursor)
    return button


class WelcomePage(QFrame):
    """The welcome; `index_requested` carries the folder to index."""

    index_requested = Signal(str)

    def __init__(self, tasks: Tasks, home: Path | None = None) -> None:
        super().__init__(objectName="panel")
        self.tasks = tasks
        self.home = (home or Path.home()).resolve()
        self.folder: Path | None = None
        self.survey: Survey | None = None
        self._colours: dict[str, str] | None = None
        self._build()

    def _build(self) -> None:
        title = QLabel("Welcome to Memex", objectName="welcomeTitle")
        self.add_folder = _button("Add a folder…")
        self.add_folder.clicked.connect(self.choose_folder)
        self.use_home = _button(f"Use my home folder ({shown(self.home)})")
        self.use_home.clicked.connect(lambda: self.look_at(self.home))
        choices = QHBoxLayout()
        choices.addWidget(self.add_folder)
        choices.addWidget(self.use_home)
        choices.addStretch(1)
        self.heading = QLabel(wordWrap=True)
        self.busy = QProgressBar(objectName="workProgress", textVisible=False)
        self.busy.setRange(0, 0)  # busy: no count is known while the walk runs
        self.exports = export_list()
        self.skipped = _label()
        self.error = _label(name="dialogWarning")
        self.index = _button("Index")
        self.index.setObjectName("indexButton")
        self.index.clicked.connect(self._index)
        self.index.setDefault(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(28, 24, 28, 20)
        layout.setSpacing(10)
        for widget in (title, _label(PITCH, "welcomePitch"), _label(ASK)):
            layout.addWidget(widget)
        layout.addLayout(choices)
        for widget in (self.heading, self.busy, self.exports, self.skipped, self.error):
            layout.addWidget(widget, 100 if widget is self.exports else 0)  # the height left
        layout.addStretch(1)  # keeps the rest at the top while there is no list
        footer = QHBoxLayout()
        footer.addStretch(1)
        footer.addWidget(self.index)
        layout.addLayout(footer)
        self._show_state(looking=False)
        self._restyle()

    def _restyle(self) -> None:
        colours = theme.current().colours
        if colours is self._colours:
            return  # setting the style sheet changes the palette too: once per theme
        self._colours = colours
        style = STYLE
        for name in sorted(colours, key=len, reverse=True):
            style = style.replace(f"@{name}", colours[name])
        self.setStyleSheet(style)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:  # the theme changed: its colours too
            self._restyle()

    def _show_state(self, looking: bool) -> None:
        survey = self.survey
        self.busy.setVisible(looking)
        self.heading.setVisible(looking or survey is not None)
        self.exports.setVisible(survey is not None and bool(survey.found))
        self.skipped.setVisible(bool(survey and survey.skipped))
        self.index.setVisible(survey is not None and bool(survey.found))
        self.error.setVisible(bool(self.error.text()))
        for button in (self.add_folder, self.use_home, self.index):
            button.setEnabled(not looking)

    # -- choosing and looking --------------------------------------------------------------------

    def choose_folder(self) -> None:
        """The native folder picker, starting in the home folder."""
        folder = QFileDialog.getExistingDirectory(self, "Add a folder", str(self.home))
        if folder:
            self.look_at(Path(folder))

    def look_at(self, folder: Path) -> None:
        """Find what `folder` holds, off the GUI thread; the list comes when it is done."""
        self.folder, self.survey = folder, None
        self.error.setText("")
        self.exports.clear()
        self.heading.setText(f"Looking through {shown(folder)}…")
        self._show_state(looking=True)
        self.tasks.discover(folder, self.show_survey, self._failed)

    def show_survey(self, survey: Survey) -> None:
        self.survey = survey
        self.heading.setText(survey.heading())
        self.exports.clear()
        for found in survey.found:
            self.exports.addItem(export_item(found))
        self.skipped.setText(f"Skipped: {survey.skipped}." if survey.skipped else "")
        if not survey.found and not survey.problem:
            self.error.setText("Choose another folder, or add exports to this one.")
        self._show_state(looking=False)

    def _failed(self, error: BaseException) -> None:
        self.survey = None
        self.heading.setText("")
        self.error.setText(f"Memex could not look through that folder: {error}")
        self._show_state(looking=False)

    # -- indexing --------------------------------------------------------------------------------

    def _index(self) -> None:
        if self.survey is not None and self.survey.found:
            self.index_requested.emit(str(self.survey.folder))

    def show_error(self, text: str) -> None:
        """Saving the folder failed: say so here, where the user is."""
        self.error.setText(text)
        self._show_state(looking=False)

    def lines(self) -> list[str]:
        """The list's lines, as shown."""
        return [self.exports.item(i).text() for i in range(self.exports.count())]
