"""A small home folder as a new user has one: exports where they land, beside files that are
never data. The desktop's first-run tests and scripts/first_run_screenshots.py use it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
SLACK = "Downloads/acme-slack-export-Mar-2024"

COPIES = {
    "Downloads/WhatsApp Chat with Raj Patel.txt": "whatsapp/WhatsApp Chat with Raj Patel.txt",
    "Takeout/Mail/All mail Including Spam and Trash.mbox": "email_catalog/inbox.mbox",
    "Zoom/2024-03-11 10.00.00 Weekly sync/GMT20240311-100000_Recording.transcript.vtt": (
        "meeting/GMT20240311-100000_Recording.transcript.vtt"
    ),
    "Obsidian/vault/Heron survey.md": "note/vault/Heron survey.md",
}
DECOYS = {
    "src/webapp/package.json": json.dumps({"name": "webapp", "version": "1.0.0"}),
    "src/webapp/node_modules/left-pad/package.json": "{}",
    "Downloads/data.json": json.dumps({"rows": [1, 2, 3]}),
    "Downloads/report.csv": "a,b\n1,2\n",
    ".cache/pip/selfcheck.json": "{}",
}


def build_home(home: Path) -> Path:
    """Write the exports and decoys under `home`; returns it."""
    shutil.copytree(
        FIXTURES / "slack" / "export",
        home / SLACK,
        ignore=shutil.ignore_patterns("*.golden.*", "bad-*"),
    )
    for relative, fixture in COPIES.items():
        (home / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURES / fixture, home / relative)
    (home / "Obsidian/vault/.obsidian").mkdir()
    (home / "Obsidian/vault/.obsidian/app.json").write_text("{}")
    (home / "Obsidian/vault/Garden plan.md").write_text("# Garden plan\n\nBeans in bed 3.\n")
    for relative, text in DECOYS.items():
        (home / relative).parent.mkdir(parents=True, exist_ok=True)
        (home / relative).write_text(text)
    return home
