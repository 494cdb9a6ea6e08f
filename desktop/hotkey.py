"""The global hotkey: pynput where it works (X11, Windows, macOS with permission).

pynput is imported here, lazily: on a machine without a reachable X display (offscreen, CI,
Wayland without XWayland) the import itself fails. Wherever the hotkey cannot work, the
status says why and how to bind `memex --toggle` in the desktop's own shortcut settings.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

DEFAULT = "<ctrl>+<alt>+<space>"
_QT_TO_PYNPUT = {
    "ctrl": "<ctrl>",
    "alt": "<alt>",
    "shift": "<shift>",
    "meta": "<cmd>",
    "space": "<space>",
    "return": "<enter>",
    "enter": "<enter>",
    "tab": "<tab>",
    "esc": "<esc>",
    "escape": "<esc>",
    "backspace": "<backspace>",
    "home": "<home>",
    "end": "<end>",
    "pgup": "<page_up>",
    "pgdown": "<page_down>",
    "ins": "<insert>",
    "del": "<delete>",
    "up": "<up>",
    "down": "<down>",
    "left": "<left>",
    "right": "<right>",
}
_PYNPUT_TO_QT = {
    "<ctrl>": "Ctrl",
    "<alt>": "Alt",
    "<shift>": "Shift",
    "<cmd>": "Meta",
    "<space>": "Space",
    "<enter>": "Return",
    "<tab>": "Tab",
    "<esc>": "Esc",
}


@dataclass(frozen=True)
class HotkeyStatus:
    """Whether the hotkey is live, and a sentence for the settings and the tray tooltip."""

    ok: bool
    message: str


def to_pynput(sequence: str) -> str:
    """A Qt key sequence ("Ctrl+Alt+Space") in pynput syntax ("<ctrl>+<alt>+<space>")."""
    parts = [p for p in sequence.replace(" ", "").split("+") if p]
    out = []
    for part in parts:
        low = part.lower()
        if low in _QT_TO_PYNPUT:
            out.append(_QT_TO_PYNPUT[low])
        elif len(low) > 1 and low[0] == "f" and low[1:].isdigit():
            out.append(f"<{low}>")
        else:
            out.append(low)
    return "+".join(out)


def to_display(spec: str) -> str:
    """pynput syntax as people read it: "<ctrl>+<alt>+<space>" → "Ctrl+Alt+Space"."""
    out = []
    for part in spec.split("+"):
        if part in _PYNPUT_TO_QT:
            out.append(_PYNPUT_TO_QT[part])
        elif part.startswith("<") and part.endswith(">"):
            out.append(part[1:-1].replace("_", " ").title().replace(" ", ""))
        else:
            out.append(part.upper() if len(part) == 1 else part)
    return "+".join(out)


def bind_instructions(spec: str, env: Mapping[str, str], platform: str = sys.platform) -> str:
    """How to bind `memex --toggle` in the desktop's own shortcut settings."""
    keys = to_display(spec)
    desktop = env.get("XDG_CURRENT_DESKTOP", "").lower()
    if "gnome" in desktop:
        where = "Settings › Keyboard › View and Customise Shortcuts › Custom Shortcuts"
    elif "kde" in desktop:
        where = "System Settings › Keyboard › Shortcuts › Add New › Command or Script"
    elif platform == "darwin":
        where = "a Shortcuts app action that runs a shell script"
    else:
        where = "your desktop's keyboard shortcut settings"
    return f"Bind the command “memex --toggle” to {keys} in {where}."


def unsupported_reason(
    env: Mapping[str, str], platform: str = sys.platform, qt_platform: str = ""
) -> str | None:
    """Why a global hotkey cannot work here, or None if pynput may work."""
    if qt_platform in ("offscreen", "minimal"):
        return "there is no display (offscreen)"
    if platform.startswith("linux") or platform.startswith("freebsd"):
        if env.get("XDG_SESSION_TYPE", "").lower() == "wayland" or (
            env.get("WAYLAND_DISPLAY") and not env.get("DISPLAY")
        ):
            return "Wayland does not let applications grab global keys"
        if not env.get("DISPLAY"):
            return "there is no X display"
    return None


class GlobalHotkey:
    """One global hotkey; `on_press` runs on pynput's thread (the app posts it to the GUI)."""

    def __init__(self, on_press: Callable[[], None]) -> None:
        self.on_press = on_press
        self._listener: Any = None
        self.status = HotkeyStatus(False, "not started")

    def start(self, spec: str, env: Mapping[str, str], qt_platform: str = "") -> HotkeyStatus:
        self.stop()
        reason = unsupported_reason(env, qt_platform=qt_platform)
        if reason is None:
            self.status = self._listen(spec, env)
        else:
            self.status = HotkeyStatus(
                False, f"The global hotkey is off: {reason}. " + bind_instructions(spec, env)
            )
        return self.status

    def _listen(self, spec: str, env: Mapping[str, str]) -> HotkeyStatus:
        try:
            from pynput import keyboard
        except Exception as exc:  # ImportError without a display; Xlib errors on odd setups
            return HotkeyStatus(
                False,
                f"The global hotkey is off: pynput cannot start "
                f"({type(exc).__name__}). " + bind_instructions(spec, env),
            )
        try:
            keyboard.HotKey.parse(spec)
            listener = keyboard.GlobalHotKeys({spec: self.on_press})
            listener.start()
        except (ValueError, KeyError) as exc:
            return HotkeyStatus(False, f"The hotkey “{spec}” is not valid ({exc}).")
        except Exception as exc:
            return HotkeyStatus(
                False, f"The global hotkey is off: {exc}. " + bind_instructions(spec, env)
            )
        self._listener = listener
        if getattr(listener, "IS_TRUSTED", True) is False:  # macOS without Accessibility
            return HotkeyStatus(
                False,
                "Allow Memex in System Settings › Privacy & Security › "
                "Accessibility for the global hotkey, then restart it. "
                + bind_instructions(spec, env),
            )
        return HotkeyStatus(True, f"Press {to_display(spec)} anywhere to search.")

    def stop(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.stop()
