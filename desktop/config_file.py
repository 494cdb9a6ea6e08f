"""Writing the TOML config file from the settings dialog: the engine's one writer
(`engine.settings.config_writer`), which `memex roots` uses too."""

from __future__ import annotations

from engine.settings.config_writer import FORBIDDEN, write_config

__all__ = ["FORBIDDEN", "write_config"]
