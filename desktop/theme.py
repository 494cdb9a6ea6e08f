"""The look: light and dark palettes following the system, the style sheet, the icons."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache

from PySide6.QtCore import QByteArray, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QGuiApplication, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication

from desktop.formatting import type_icon_name
from engine.resources import resource_dir

LIGHT = {
    "bg": "#FFFFFF",
    "surface": "#F5F6F8",
    "hover": "#ECEEF2",
    "border": "#E2E4E9",
    "text": "#1B1D22",
    "muted": "#6B7280",
    "accent": "#5B5BD6",
    "accent_soft": "#ECEBFD",
    "accent_text": "#4A48C4",
    "on_accent": "#FFFFFF",
    "mark_bg": "#FFF0B3",
    "scroll": "#C9CDD4",
    "selection": "#E9E8FC",
    "warn_bg": "#FFF4D6",
    "warn_text": "#7A5200",
    "snippet": "#454A54",
}
DARK = {
    "bg": "#1E1F24",
    "surface": "#26272E",
    "hover": "#30323A",
    "border": "#363842",
    "text": "#ECEDEF",
    "muted": "#9AA0AA",
    "accent": "#8B8BF5",
    "accent_soft": "#2F2E52",
    "accent_text": "#B4B3FF",
    "on_accent": "#14141A",
    "mark_bg": "#5C4A0E",
    "scroll": "#4A4D57",
    "selection": "#34335A",
    "warn_bg": "#3D3214",
    "warn_text": "#F2C94C",
    "snippet": "#C5C8CF",
}
AVATAR_COLOURS = (
    "#5B5BD6",
    "#0F9D8A",
    "#E0533D",
    "#B7791F",
    "#3867D6",
    "#A55EEA",
    "#20A35A",
    "#E2445C",
)


@dataclass(frozen=True)
class Theme:
    """The active palette; `dark` follows the system unless the settings force one."""

    dark: bool
    colours: dict[str, str]

    def __getitem__(self, name: str) -> str:
        return self.colours[name]


_active: list[Theme] = [Theme(False, LIGHT)]


def current() -> Theme:
    return _active[0]


def system_is_dark(app: QGuiApplication) -> bool:
    scheme = app.styleHints().colorScheme()
    if scheme == Qt.ColorScheme.Dark:
        return True
    if scheme == Qt.ColorScheme.Light:
        return False
    return app.palette().color(QPalette.ColorRole.Window).lightness() < 128


def apply(app: QApplication, preference: str = "system") -> Theme:
    """Set the palette and the style sheet: `preference` is system, light or dark."""
    dark = system_is_dark(app) if preference == "system" else preference == "dark"
    theme = Theme(dark, DARK if dark else LIGHT)
    _active[0] = theme
    app.setStyle("Fusion")
    app.setPalette(_palette(theme))
    app.setStyleSheet(style_sheet(theme))
    font = QFont(app.font())
    font.setHintingPreference(QFont.HintingPreference.PreferNoHinting)
    app.setFont(font)
    _tinted.cache_clear()
    return theme


def _palette(theme: Theme) -> QPalette:
    p = QPalette()
    roles = {
        QPalette.ColorRole.Window: "bg",
        QPalette.ColorRole.Base: "surface",
        QPalette.ColorRole.AlternateBase: "hover",
        QPalette.ColorRole.Text: "text",
        QPalette.ColorRole.WindowText: "text",
        QPalette.ColorRole.ButtonText: "text",
        QPalette.ColorRole.Button: "surface",
        QPalette.ColorRole.Highlight: "accent",
        QPalette.ColorRole.HighlightedText: "on_accent",
        QPalette.ColorRole.PlaceholderText: "muted",
        QPalette.ColorRole.ToolTipBase: "bg",
        QPalette.ColorRole.ToolTipText: "text",
        QPalette.ColorRole.Link: "accent_text",
    }
    for role, name in roles.items():
        p.setColor(role, QColor(theme[name]))
    return p


def style_sheet(theme: Theme) -> str:
    qss = (resource_dir() / "style" / "memex.qss").read_text(encoding="utf-8")
    qss = re.sub(r"/\*.*?\*/", "", qss, flags=re.DOTALL)
    for name in sorted(theme.colours, key=len, reverse=True):
        qss = qss.replace(f"@{name}", theme[name])
    leftover = re.search(r"@[a-z_]+", qss)
    if leftover:
        raise ValueError(f"memex.qss uses an unknown colour {leftover.group(0)}")
    return qss


# -- icons ----------------------------------------------------------------------------------------


def _svg_pixmap(svg: bytes, size: int, ratio: float = 2.0) -> QPixmap:
    renderer = QSvgRenderer(QByteArray(svg))
    pixmap = QPixmap(int(size * ratio), int(size * ratio))
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, size * ratio, size * ratio))
    painter.end()
    pixmap.setDevicePixelRatio(ratio)
    return pixmap


@cache
def type_icon(source_type: str) -> QIcon:
    """The tile icon of a source type (a neutral file tile for unknown types)."""
    folder = resource_dir() / "icons" / "types"
    path = folder / f"{type_icon_name(source_type)}.svg"
    return QIcon(str(path if path.exists() else folder / "other.svg"))


@cache
def type_pixmap(source_type: str, size: int) -> QPixmap:
    folder = resource_dir() / "icons" / "types"
    path = folder / f"{type_icon_name(source_type)}.svg"
    return _svg_pixmap((path if path.exists() else folder / "other.svg").read_bytes(), size)


@cache
def _tinted(name: str, colour: str, size: int) -> QPixmap:
    svg = (resource_dir() / "icons" / f"ui-{name}.svg").read_text(encoding="utf-8")
    return _svg_pixmap(svg.replace("currentColor", colour).encode(), size)


def ui_icon(name: str, size: int = 18, colour: str | None = None) -> QIcon:
    """A line glyph (search, settings, more, calendar, person) in the theme's muted colour."""
    return QIcon(_tinted(name, colour or current()["muted"], size))


def app_icon(state: str = "") -> QIcon:
    """The Memex icon; `state` is "", "busy" or "paused" (tray)."""
    name = f"memex-{state}.svg" if state else "memex.svg"
    return QIcon(str(resource_dir() / "icons" / name))


def initials(name: str) -> str:
    words = [w for w in re.split(r"\s+", name.strip()) if w]
    if not words:
        return "?"
    letters = words[0][0] + (words[-1][0] if len(words) > 1 else "")
    return letters.upper()


def avatar_colour(name: str) -> str:
    digest = hashlib.sha1(name.encode("utf-8")).digest()
    return AVATAR_COLOURS[digest[0] % len(AVATAR_COLOURS)]


def avatar_pixmap(name: str, size: int = 52) -> QPixmap:
    """A round avatar with the person's initials."""
    ratio = 2.0
    pixmap = QPixmap(int(size * ratio), int(size * ratio))
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(QColor(avatar_colour(name)))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.drawEllipse(QRectF(0, 0, size * ratio, size * ratio))
    font = QFont()
    font.setPixelSize(int(size * ratio * 0.38))
    font.setWeight(QFont.Weight.DemiBold)
    painter.setFont(font)
    painter.setPen(QColor("#FFFFFF"))
    painter.drawText(
        QRectF(0, 0, size * ratio, size * ratio), Qt.AlignmentFlag.AlignCenter, initials(name)
    )
    painter.end()
    pixmap.setDevicePixelRatio(ratio)
    return pixmap
