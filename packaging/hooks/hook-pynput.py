"""PyInstaller hook: pynput's platform backends (overrides the contrib hook).

pynput picks its backend at run time with importlib (`pynput.keyboard._xorg`, `._win32`,
`._darwin`, `._uinput`, `._dummy`), so the modules must be listed. The contrib hook calls
collect_submodules("pynput"), which imports pynput, and that raises without an X display (CI,
offscreen builds): the backends were silently left out and the global hotkey broke in the bundle.
List them from the package folder instead, without importing pynput.
"""

import importlib.util
from pathlib import Path


def _backends():
    spec = importlib.util.find_spec("pynput")
    if spec is None or spec.origin is None:
        return []
    base = Path(spec.origin).parent
    return sorted(
        "pynput." + ".".join(p.relative_to(base).with_suffix("").parts)
        for p in base.glob("*/*.py")
        if p.stem != "__init__"
    )


hiddenimports = _backends()
