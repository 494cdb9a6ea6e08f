"""Start at login: an XDG autostart .desktop file (Linux), the Run key (Windows), a
LaunchAgent plist (macOS). Each function takes its folder so tests can point it elsewhere.
"""

from __future__ import annotations

import contextlib
import os
import plistlib
import shlex
import shutil
import sys
from pathlib import Path

APP_ID = "memex"
LAUNCH_AGENT = "io.memex.app"


def launch_command() -> list[str]:
    """How to start the app: the frozen binary, the `memex` script, or this Python."""
    if getattr(sys, "frozen", False):
        return [sys.executable]
    script = shutil.which("memex")
    if script:
        return [script]
    return [sys.executable, "-m", "desktop.launcher"]


def xdg_entry(command: list[str]) -> str:
    return "\n".join(
        [
            "[Desktop Entry]",
            "Type=Application",
            "Name=Memex",
            "Comment=Search your whole digital life",
            f"Exec={shlex.join(command)}",
            "Icon=memex",
            "Terminal=false",
            "X-GNOME-Autostart-enabled=true",
            "",
        ]
    )


def launch_agent(command: list[str]) -> bytes:
    return plistlib.dumps(
        {
            "Label": LAUNCH_AGENT,
            "ProgramArguments": command,
            "RunAtLoad": True,
            "ProcessType": "Interactive",
        }
    )


def autostart_path(
    platform: str = sys.platform, home: Path | None = None, xdg_config_home: str | None = None
) -> Path | None:
    """The file that makes the app start at login (None on Windows: a registry value)."""
    home = home or Path.home()
    if platform == "darwin":
        return home / "Library" / "LaunchAgents" / f"{LAUNCH_AGENT}.plist"
    if platform == "win32":
        return None
    base = Path(xdg_config_home) if xdg_config_home else home / ".config"
    return base / "autostart" / f"{APP_ID}.desktop"


def set_start_at_login(
    enabled: bool,
    *,
    platform: str = sys.platform,
    path: Path | None = None,
    command: list[str] | None = None,
) -> None:
    """Create or remove the login item; raises OSError when the system refuses."""
    command = command or launch_command()
    if platform == "win32":
        _windows_run_key(enabled, command)
        return
    target = path or autostart_path(platform, xdg_config_home=os.environ.get("XDG_CONFIG_HOME"))
    assert target is not None
    if not enabled:
        target.unlink(missing_ok=True)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    if platform == "darwin":
        target.write_bytes(launch_agent(command))
    else:
        target.write_text(xdg_entry(command), encoding="utf-8")


def is_start_at_login(*, platform: str = sys.platform, path: Path | None = None) -> bool:
    if platform == "win32":
        return _windows_run_value() is not None
    target = path or autostart_path(platform, xdg_config_home=os.environ.get("XDG_CONFIG_HOME"))
    return bool(target and target.exists())


_RUN_KEY = r"Software\Microsoft\Windows\CurrentVersion\Run"


def _windows_run_key(enabled: bool, command: list[str]) -> None:  # pragma: no cover - Windows
    import winreg  # type: ignore[import-not-found,unused-ignore]

    with winreg.OpenKey(winreg.HKEY_CURRENT_USER, _RUN_KEY, 0, winreg.KEY_SET_VALUE) as key:
        if enabled:
            value = " ".join(f'"{c}"' if " " in c else c for c in command)
            winreg.SetValueEx(key, "Memex", 0, winreg.REG_SZ, value)
        else:
            with contextlib.suppress(FileNotFoundError):
                winreg.DeleteValue(key, "Memex")


def _windows_run_value() -> str | None:  # pragma: no cover - Windows
    import winreg  # type: ignore[import-not-found,unused-ignore]

    try:
        with winreg.OpenKey(winreg.HKEY_CURRENT_USER, _RUN_KEY) as key:
            return str(winreg.QueryValueEx(key, "Memex")[0])
    except OSError:
        return None
