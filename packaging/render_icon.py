"""Render the app icon resources/icons/memex.svg to PNG (and .ico/.icns where the tools exist).

    QT_QPA_PLATFORM=offscreen python packaging/render_icon.py

Writes resources/icons/memex.png (256x256, used by the Linux installer's hicolor theme and by
PyInstaller for the executables' icons). Run it again whenever memex.svg changes; the PNG is
committed so a build needs no rendering step. Windows and macOS: PyInstaller converts the PNG to
.ico/.icns itself when Pillow is installed (pip install pillow), see docs/packaging.md.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"


def render(svg: Path, png: Path, size: int = 256) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication([])  # noqa: F841 (keeps Qt alive)
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"render_icon: {svg} is not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    if not image.save(str(png), "PNG"):
        raise SystemExit(f"render_icon: could not write {png}")


def main(argv: list[str]) -> int:
    svg = Path(argv[0]) if argv else ICONS / "memex.svg"
    png = Path(argv[1]) if len(argv) > 1 else svg.with_suffix(".png")
    render(svg, png)
    print(f"wrote {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
