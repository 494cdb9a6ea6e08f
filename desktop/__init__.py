"""Memex's desktop app (PySide6). Importing this package imports no Qt."""
