"""The settings dialog: data roots, source types, embedder and key, hotkey, login, watching.

Saving writes the TOML config (never the key: that goes to the keyring) and hands the
changed names to the app, which applies them without a restart where it can.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QKeySequenceEdit,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop import theme
from desktop.config_file import write_config
from desktop.export_list import capped_list, export_item, export_list
from desktop.hotkey import to_display, to_pynput
from desktop.survey import Survey
from engine.embedders import apikeys
from engine.settings import Settings, default_config_path
from engine.sources import PROFILE_TYPE
from engine.sources import source_type as declared_type
from engine.text import shown

OPENAI_URL = "https://api.openai.com/v1"
EMBEDDERS = (
    ("local", "Local model (offline, built in)"),
    ("openai", "OpenAI"),
    ("compatible", "OpenAI-compatible server (Ollama, LM Studio, …)"),
    ("sentence-transformers", "sentence-transformers model folder"),
)
EMBEDDER_KEYS = (
    "embedder.name",
    "embedder.model",
    "embedder.base_url",
    "embedder.dimensions",
    "embedder.model_path",
)


def embedder_choice(settings: Settings) -> str:
    name = settings.embedder.name
    if name == "openai":
        return "openai" if settings.embedder.base_url.rstrip("/") == OPENAI_URL else "compatible"
    return name if name in ("local", "sentence-transformers") else "local"


def user_label(name: str) -> str:
    """A source type in the user's words: its declared label ("Slack", "WhatsApp")."""
    declared = declared_type(name)
    return declared.label if declared else name.replace("_", " ").capitalize()


def shown_types(found: Sequence[str], disabled: Sequence[str]) -> list[str]:
    """The types the Data tab lists: those found (in the index, or recognised in a folder)
    and those switched off (so they can be switched on again), by label."""
    names = {n for n in (*found, *disabled) if n != PROFILE_TYPE}
    return sorted(names, key=lambda n: user_label(n).lower())


def _note(text: str, name: str = "dialogNote") -> QLabel:
    label = QLabel(text, objectName=name, wordWrap=True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


Discover = Callable[[Path, Callable[[Survey], Any]], Any]


class SettingsDialog(QDialog):
    """Edits the user's settings; `saved` carries the changed dotted names."""

    saved = Signal(dict)

    def __init__(
        self,
        settings: Settings,
        hotkey_message: str = "",
        parent: QWidget | None = None,
        found_types: Sequence[str] = (),
        discover: Discover | None = None,
    ) -> None:
        """`discover(folder, on_done)`: what a folder holds per export, off the GUI thread
        (`Tasks.discover`); the Data tab lists it for each data folder."""
        super().__init__(parent)
        self.settings = settings
        self.found_types = tuple(found_types)
        self._pending = 0  # data folders still being looked in
        self.config_path = settings.config_path or default_config_path()
        self.setWindowTitle("Memex settings")
        self.setWindowIcon(theme.app_icon())
        self.setMinimumWidth(560)
        # Tests replace these: a yes/no question, and where the key goes.
        self.confirm: Callable[[str], bool] = self._ask
        self.store_key: Callable[[str], None] = apikeys.keyring_set
        self.error = _note("", "dialogWarning")
        self.error.hide()
        tabs = QTabWidget()
        tabs.addTab(self._data_tab(), "Data")
        tabs.addTab(self._embedder_tab(), "Embedder")
        tabs.addTab(self._app_tab(hotkey_message), "App")
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(tabs)
        layout.addWidget(self.error)
        layout.addWidget(_note(f"Config file: {self.config_path}"))
        layout.addWidget(buttons)
        if discover is not None:
            self.survey_roots(discover)

    def survey_roots(self, discover: Discover) -> None:
        """Ask what each data folder holds; the list fills as each answer arrives."""
        self.exports.clear()
        roots = [Path(str(r)) for r in self.settings["roots"]]
        self.exports_note.setText("Looking in your folders…" if roots else "No data folder yet.")
        self._pending = len(roots)
        for root in roots:
            discover(root, self.show_survey)

    def show_survey(self, survey: Survey) -> None:
        """One folder's exports, each with its type's icon, and what was skipped."""
        for found in survey.found:
            kind, _, rest = found.text.partition(" · ")
            text = f"{kind} · {shown(survey.folder)}/{rest}" if rest else found.text
            self.exports.addItem(export_item(found, text))
        self._pending = max(0, self._pending - 1)
        told = [survey.heading() if survey.problem or not survey.found else "", survey.skipped]
        if self._pending:
            told.append("Looking in your other folders…")
        self.exports_note.setText(" ".join(t for t in told if t))

    # -- tabs ------------------------------------------------------------------------------------

    def _data_tab(self) -> QWidget:
        self.roots = QListWidget()
        self.roots.addItems([str(r) for r in self.settings["roots"]])
        add = QPushButton("Add folder…")
        add.clicked.connect(self._add_root)
        remove = QPushButton("Remove")
        remove.clicked.connect(
            lambda: [self.roots.takeItem(self.roots.row(i)) for i in self.roots.selectedItems()]
        )
        row = QHBoxLayout()
        row.addWidget(add)
        row.addWidget(remove)
        row.addStretch(1)
        self.types = QListWidget()
        disabled = set(self.settings.desktop.disabled_types)
        for source_type in shown_types(self.found_types, sorted(disabled)):
            item = QListWidgetItem(theme.type_icon(source_type), user_label(source_type))
            item.setData(Qt.ItemDataRole.UserRole, source_type)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(
                Qt.CheckState.Unchecked if source_type in disabled else Qt.CheckState.Checked
            )
            self.types.addItem(item)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(QLabel("Data folders"))
        layout.addWidget(capped_list(self.roots, 4))  # the rest of the height: the exports
        layout.addLayout(row)
        layout.addWidget(QLabel("What these folders hold"))
        self.exports = export_list(rows=8)
        self.exports_note = _note("")
        layout.addWidget(self.exports, 1)  # the height the dialog has
        layout.addWidget(self.exports_note)
        layout.addWidget(QLabel("Source types to index"))
        layout.addWidget(capped_list(self.types, 7))
        if not self.types.count():
            layout.addWidget(_note("The types Memex finds in your folders appear here."))
        layout.addWidget(
            _note(
                "A type switched off is left out of the index at the next "
                "reindex. Routes of your own live in the config file."
            )
        )
        return page

    def _embedder_tab(self) -> QWidget:
        s = self.settings
        self.embedder = QComboBox()
        for key, text in EMBEDDERS:
            self.embedder.addItem(text, key)
        self.embedder.setCurrentIndex(self.embedder.findData(embedder_choice(s)))
        self.embedder.currentIndexChanged.connect(self._embedder_fields)
        self.base_url = QLineEdit(s.embedder.base_url)
        self.model = QLineEdit(s.embedder.model)
        self.dimensions = QSpinBox(minimum=1, maximum=8192, value=s.embedder.dimensions)
        self.model_path_row = self._model_path_row(s.embedder.model_path)
        self.api_key = QLineEdit(echoMode=QLineEdit.EchoMode.Password)
        self.api_key.setPlaceholderText(
            "stored in the system keyring" if apikeys.keyring_get() else "sk-…"
        )
        self.form = QFormLayout()
        self.form.addRow("Embedder", self.embedder)
        self.form.addRow("Server URL", self.base_url)
        self.form.addRow("Model", self.model)
        self.form.addRow("Dimensions", self.dimensions)
        self.form.addRow("Model folder", self.model_path_row)
        self.form.addRow("API key", self.api_key)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addLayout(self.form)
        layout.addWidget(
            _note(
                "The API key is kept in the system keyring (or the "
                "OPENAI_API_KEY environment variable), never in the config "
                "file. Switching the embedder re-embeds every chunk."
            )
        )
        layout.addStretch(1)
        self._embedder_fields()
        return page

    def _model_path_row(self, path: str) -> QWidget:
        """The model folder field with its Browse… button."""
        self.model_path = QLineEdit(path)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._pick_model)
        path_row = QHBoxLayout()
        path_row.addWidget(self.model_path, 1)
        path_row.addWidget(browse)
        row = QWidget()
        row.setLayout(path_row)
        return row

    def _app_tab(self, hotkey_message: str) -> QWidget:
        s = self.settings
        self.hotkey = QKeySequenceEdit(QKeySequence(to_display(s.desktop.hotkey)))
        self.hotkey.setMaximumSequenceLength(1)
        self.start_at_login = QCheckBox("Start Memex when I log in")
        self.start_at_login.setChecked(s.desktop.start_at_login)
        self.watching = QCheckBox("Watch the data folders and reindex changed files")
        self.watching.setChecked(s.desktop.watching)
        self.theme = QComboBox()
        self.theme.addItems(["system", "light", "dark"])
        self.theme.setCurrentText(s.desktop.theme)
        self.editor = QLineEdit(s.desktop.editor_command)
        self.editor.setPlaceholderText("e.g. code --goto {file}:{line}  (empty: system opener)")
        page = QWidget()
        form = QFormLayout(page)
        form.addRow("Hotkey", self.hotkey)
        if hotkey_message:
            self.hotkey_note = _note(hotkey_message)
            form.addRow("", self.hotkey_note)
        form.addRow("Open hits with", self.editor)
        form.addRow("Theme", self.theme)
        form.addRow("", self.start_at_login)
        form.addRow("", self.watching)
        return page

    # -- reactions -------------------------------------------------------------------------------

    def _embedder_fields(self) -> None:
        choice = self.embedder.currentData()
        remote = choice in ("openai", "compatible")
        for widget, visible in (
            (self.base_url, choice == "compatible"),
            (self.model, remote),
            (self.dimensions, remote),
            (self.api_key, remote),
            (self.model_path_row, choice == "sentence-transformers"),
        ):
            self.form.setRowVisible(widget, visible)

    def _add_root(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Add a data folder", str(Path.home()))
        if folder:
            self.roots.addItem(folder)

    def _pick_model(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "sentence-transformers model folder")
        if folder:
            self.model_path.setText(folder)

    def _ask(self, text: str) -> bool:
        answer = QMessageBox.question(self, "Memex", text)
        return answer == QMessageBox.StandardButton.Yes

    # -- saving ----------------------------------------------------------------------------------

    def values(self) -> dict[str, Any]:
        """The dialog's settings as dotted names (only those the dialog edits)."""
        choice = self.embedder.currentData()
        types = [self.types.item(i) for i in range(self.types.count())]
        values: dict[str, Any] = {
            "roots": [self.roots.item(i).text() for i in range(self.roots.count())],
            "desktop.disabled_types": [
                i.data(Qt.ItemDataRole.UserRole)
                for i in types
                if i.checkState() != Qt.CheckState.Checked
            ],
            "embedder.name": "openai" if choice in ("openai", "compatible") else choice,
            "desktop.start_at_login": self.start_at_login.isChecked(),
            "desktop.watching": self.watching.isChecked(),
            "desktop.theme": self.theme.currentText(),
            "desktop.editor_command": self.editor.text().strip(),
        }
        sequence = self.hotkey.keySequence().toString(QKeySequence.SequenceFormat.PortableText)
        if sequence:
            values["desktop.hotkey"] = to_pynput(sequence)
        if choice in ("openai", "compatible"):
            values["embedder.model"] = self.model.text().strip()
            values["embedder.dimensions"] = self.dimensions.value()
            values["embedder.base_url"] = (
                OPENAI_URL if choice == "openai" else self.base_url.text().strip()
            )
        if choice == "sentence-transformers":
            values["embedder.model_path"] = self.model_path.text().strip()
        return values

    def changes(self) -> dict[str, Any]:
        return {k: v for k, v in self.values().items() if self.settings[k] != v}

    def save(self) -> bool:
        """Ask before switching the embedder, store the key, write the config, close."""
        changes = self.changes()
        if any(k in EMBEDDER_KEYS for k in changes) and not self.confirm(
            "Switch the embedder? Every chunk is embedded again with the new model; "
            "until that finishes, search uses the old vectors."
        ):
            return False
        key = self.api_key.text().strip()
        try:
            # Checked like the config file will be on the next start (SettingsError).
            self.settings.with_values(**{k.replace(".", "__"): v for k, v in changes.items()})
            if key:
                self.store_key(key)
            write_config(self.config_path, changes)
        except (apikeys.KeyringUnavailable, OSError, ValueError) as exc:
            hint = (
                " Set the OPENAI_API_KEY environment variable instead."
                if isinstance(exc, apikeys.KeyringUnavailable)
                else ""
            )
            self.error.setText(f"Not saved: {exc}.{hint}")
            self.error.show()
            return False
        self.api_key.clear()
        self.saved.emit(changes)
        self.accept()
        return True
