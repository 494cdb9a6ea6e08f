"""Writes Memex's source-type icons: a coloured rounded tile with a white line glyph.

Run `python resources/icons/make_icons.py` after changing a glyph or colour; the SVG files
are committed. UI glyphs (ui-*.svg) use `currentColor`, tinted at run time by the theme.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent

GLYPHS = {
    "bubble": '<path d="M19 18h26a5 5 0 0 1 5 5v14a5 5 0 0 1-5 5H31l-9 7v-7h-3a5 5 0 0 1-5-5V23a5 5 0 0 1 5-5z"/>',
    "hash": '<path d="M28 16l-5 32M41 16l-5 32M18 26h30M16 38h30"/>',
    "plane": '<path d="M14 31l35-14-7 31-11-9z"/><path d="M31 39l18-22M31 39v9l5-5"/>',
    "round_bubble": '<path d="M32 15a17 17 0 1 1-8.6 31.7L15 49l2.3-8.2A17 17 0 0 1 32 15z"/>',
    "people": '<circle cx="24" cy="25" r="6"/><circle cx="41" cy="27" r="5"/>'
              '<path d="M13 47c0-7 5-12 11-12s11 5 11 12M35 47c.5-6 3-9 6-9 4 0 8 3 9 9"/>',
    "envelope": '<rect x="14" y="19" width="36" height="26" rx="4"/><path d="M15 22l17 13 17-13"/>',
    "calendar": '<rect x="15" y="18" width="34" height="30" rx="4"/><path d="M15 28h34M24 14v8M40 14v8"/>'
                '<circle cx="25" cy="37" r="1.5" fill="#fff"/><circle cx="32" cy="37" r="1.5" fill="#fff"/>',
    "pulse": '<path d="M13 33h9l4-11 7 21 5-14 3 4h10"/>',
    "drop": '<path d="M32 14c7.5 9.5 12.5 15.5 12.5 23a12.5 12.5 0 0 1-25 0c0-7.5 5-13.5 12.5-23z"/>'
            '<path d="M27 39a5 5 0 0 0 5 5"/>',
    "eye": '<path d="M13 32s7-12 19-12 19 12 19 12-7 12-19 12-19-12-19-12z"/><circle cx="32" cy="32" r="5"/>',
    "quote": '<path d="M28 22c-6 2-9 7-9 13v6h9v-9h-5M45 22c-6 2-9 7-9 13v6h9v-9h-5"/>',
    "book": '<path d="M32 21c-5-3-11-4-17-3v27c6-1 12 0 17 3 5-3 11-4 17-3V18c-6-1-12 0-17 3zM32 21v27"/>',
    "document": '<rect x="18" y="14" width="28" height="36" rx="4"/><path d="M24 24h16M24 31h16M24 38h10"/>',
    "mic": '<rect x="26" y="13" width="12" height="23" rx="6"/><path d="M19 31a13 13 0 0 0 26 0M32 44v6M26 50h12"/>',
    "check": '<circle cx="32" cy="32" r="17"/><path d="M24 32l6 6 11-12"/>',
    "flask": '<path d="M26 14h12M29 14v13L17 46a3 3 0 0 0 2.6 4.5h24.8A3 3 0 0 0 47 46L35 27V14M22 39h20"/>',
    "question": '<path d="M19 18h26a5 5 0 0 1 5 5v14a5 5 0 0 1-5 5H31l-9 7v-7h-3a5 5 0 0 1-5-5V23a5 5 0 0 1 5-5z"/>'
                '<path d="M28 26a4 4 0 1 1 5.5 3.7c-1 .5-1.5 1.3-1.5 2.3v1"/><circle cx="32" cy="37.5" r="1.3" fill="#fff"/>',
    "tag": '<path d="M15 17h15l19 19-13 13-19-19z"/><circle cx="23.5" cy="25.5" r="2.5"/>',
    "journal": '<rect x="18" y="13" width="28" height="38" rx="4"/><path d="M25 13v38M33 13v13l4-3 4 3V13"/>',
    "pencil": '<path d="M40 15l9 9-23 23-11 2 2-11zM36 19l9 9"/>',
    "clipboard": '<rect x="17" y="18" width="30" height="32" rx="4"/><rect x="25" y="13" width="14" height="8" rx="2.5"/>'
                 '<path d="M24 31h16M24 38h11"/>',
    "bike": '<circle cx="20" cy="40" r="7"/><circle cx="44" cy="40" r="7"/><path d="M20 40l7-13h11l6 13M27 27l7 13h-14M33 21h6"/>',
    "headphones": '<path d="M16 40v-5a16 16 0 0 1 32 0v5"/><rect x="14" y="37" width="8" height="12" rx="3"/>'
                  '<rect x="42" y="37" width="8" height="12" rx="3"/>',
    "card": '<rect x="13" y="18" width="38" height="28" rx="4"/><circle cx="25" cy="29" r="4"/>'
            '<path d="M18 40c1-3.5 3.8-5 7-5s6 1.5 7 5M37 27h9M37 34h9"/>',
    "code": '<path d="M24 21l-10 11 10 11M40 21l10 11-10 11M35 17l-6 30"/>',
    "note": '<path d="M20 14h17l9 9v27H20zM37 14v9h9M25 32h15M25 39h15"/>',
    "person": '<circle cx="32" cy="24" r="8"/><path d="M17 49c0-8.5 6.5-14 15-14s15 5.5 15 14"/>',
    "file": '<path d="M20 14h17l9 9v27H20zM37 14v9h9"/>',
}

TYPES = {  # source type: (glyph, tile colour)
    "slack": ("hash", "#611F69"),
    "telegram": ("plane", "#229ED9"),
    "signal": ("round_bubble", "#3A76F0"),
    "meeting": ("people", "#0F9D8A"),
    "email_catalog": ("envelope", "#E0533D"),
    "event": ("calendar", "#F08C2E"),
    "garmin": ("pulse", "#E2445C"),
    "cgm": ("drop", "#C2185B"),
    "observation": ("eye", "#6C5CE7"),
    "quote": ("quote", "#8E44AD"),
    "story": ("book", "#A55EEA"),
    "transcript": ("document", "#2D98DA"),
    "voice": ("mic", "#20A35A"),
    "checkin": ("check", "#26A65B"),
    "experiment": ("flask", "#0FA3A3"),
    "interview": ("question", "#3867D6"),
    "interview_meta": ("tag", "#4B6584"),
    "journal": ("journal", "#B7791F"),
    "scratch": ("pencil", "#708090"),
    "board_summary": ("clipboard", "#546DE5"),
    "rwgps_memory": ("bike", "#E67E22"),
    "podcast_digest": ("headphones", "#9B59B6"),
    "entity_file": ("card", "#3D5A80"),
    "codebase_doc": ("code", "#2F3542"),
    "note": ("note", "#D4A017"),
    "profile": ("person", "#5B5BD6"),
    "other": ("file", "#7F8C9A"),
}

UI = {  # glyph-only icons, tinted by the theme
    "search": '<circle cx="27" cy="27" r="13"/><path d="M37 37l12 12"/>',
    "settings": '<path d="M14 22h20M46 22h4M14 42h6M32 42h18"/><circle cx="40" cy="22" r="5"/>'
                '<circle cx="26" cy="42" r="5"/>',
    "more": '<circle cx="18" cy="32" r="2.5"/><circle cx="32" cy="32" r="2.5"/><circle cx="46" cy="32" r="2.5"/>',
    "calendar": GLYPHS["calendar"].replace('fill="#fff"', 'fill="currentColor"'),
    "person": GLYPHS["person"],
}

TILE = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">'
        '<rect width="64" height="64" rx="15" fill="{color}"/>'
        '<g fill="none" stroke="#fff" stroke-width="3.6" stroke-linecap="round" '
        'stroke-linejoin="round">{glyph}</g></svg>\n')
LINE = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">'
        '<g fill="none" stroke="currentColor" stroke-width="4.5" stroke-linecap="round" '
        'stroke-linejoin="round">{glyph}</g></svg>\n')
APP = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><defs>'
       '<linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#6D6AF5"/>'
       '<stop offset="1" stop-color="#A25CF0"/></linearGradient></defs>'
       '<rect width="64" height="64" rx="15" fill="url(#g)"/>'
       '<g fill="none" stroke="#fff" stroke-width="5" stroke-linecap="round">'
       '<circle cx="28" cy="28" r="12"/><path d="M37 37l11 11"/></g>'
       '<path d="M28 21l1.8 4.7 4.7 1.8-4.7 1.8L28 34l-1.8-4.7-4.7-1.8 4.7-1.8z" fill="#fff"/></svg>\n')


def main() -> None:
    (HERE / "types").mkdir(exist_ok=True)
    for name, (glyph, color) in TYPES.items():
        (HERE / "types" / f"{name}.svg").write_text(TILE.format(color=color, glyph=GLYPHS[glyph]))
    for name, glyph in UI.items():
        (HERE / f"ui-{name}.svg").write_text(LINE.format(glyph=glyph))
    (HERE / "memex.svg").write_text(APP)
    # Busy and paused variants of the tray icon.
    (HERE / "memex-busy.svg").write_text(APP.replace("#6D6AF5", "#F0A030").replace("#A25CF0", "#E8663C"))
    (HERE / "memex-paused.svg").write_text(APP.replace("#6D6AF5", "#8A8F98").replace("#A25CF0", "#6B7079"))


if __name__ == "__main__":
    main()
