#!/usr/bin/env bash
# Install Memex for the current user (no root needed), from the unpacked release archive:
#
#   tar xzf memex-<version>-linux-x86_64.tar.gz
#   ./memex-<version>-linux-x86_64/install.sh [--autostart]
#
# What goes where (XDG_DATA_HOME and XDG_CONFIG_HOME are respected):
#   ~/.local/share/memex/app/                          the bundle (memex, memex-cli, _internal/)
#   ~/.local/share/applications/memex.desktop          the menu entry
#   ~/.local/share/icons/hicolor/256x256/apps/memex.png (and scalable/apps/memex.svg)
#   ~/.local/bin/memex, ~/.local/bin/memex-cli         symlinks into the bundle
#   ~/.config/autostart/memex.desktop                  only with --autostart
# Installing again upgrades in place. Your index (~/.local/share/memex/memex.db) and config
# (~/.config/memex/) are never touched. Undo with uninstall.sh (also copied into the app folder).
set -euo pipefail

usage() {
  cat <<'EOF'
usage: install.sh [--autostart] [--force] [--bundle DIR]

  --autostart   also start Memex at login (~/.config/autostart/memex.desktop)
  --force       replace a memex/memex-cli in ~/.local/bin that is not our symlink
  --bundle DIR  the one-folder bundle to install (default: the memex/ folder beside this script)

Environment: XDG_DATA_HOME, XDG_CONFIG_HOME, MEMEX_BIN_DIR (default ~/.local/bin).
EOF
}

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUNDLE="$HERE/memex"
AUTOSTART=0
FORCE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --autostart) AUTOSTART=1 ;;
    --force) FORCE=1 ;;
    --bundle) [ $# -ge 2 ] || { usage >&2; exit 2; }; BUNDLE=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "install.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done

: "${HOME:?install.sh: HOME is not set}"
DATA_HOME=${XDG_DATA_HOME:-$HOME/.local/share}
CONFIG_HOME=${XDG_CONFIG_HOME:-$HOME/.config}
BIN_DIR=${MEMEX_BIN_DIR:-$HOME/.local/bin}
APP_DIR="$DATA_HOME/memex/app"
DESKTOP_FILE="$DATA_HOME/applications/memex.desktop"
AUTOSTART_FILE="$CONFIG_HOME/autostart/memex.desktop"
ICON_DIR="$DATA_HOME/icons/hicolor"

for exe in memex memex-cli; do
  if [ ! -x "$BUNDLE/$exe" ]; then
    echo "install.sh: $BUNDLE/$exe is missing: run this script from the unpacked release archive" >&2
    exit 1
  fi
done
BUNDLE=$(cd "$BUNDLE" && pwd)
case "$BUNDLE/" in
  "$APP_DIR/"*) echo "install.sh: $BUNDLE is the installed copy; run the archive's install.sh" >&2
                exit 1 ;;
esac

# A file in the bin folder that is not our symlink (e.g. a pip-installed `memex` script) stays
# unless --force.
link_ok() {
  local link="$BIN_DIR/$1"
  [ ! -e "$link" ] && [ ! -L "$link" ] && return 0
  [ -L "$link" ] && case "$(readlink "$link")" in "$APP_DIR"/*) return 0 ;; esac
  [ "$FORCE" = 1 ]
}
SKIP_LINKS=()
for exe in memex memex-cli; do
  link_ok "$exe" || SKIP_LINKS+=("$exe")
done

# Copy beside the old version, then swap, so a failed copy never leaves half an app.
mkdir -p "$DATA_HOME/memex"
chmod 700 "$DATA_HOME/memex" 2>/dev/null || true
STAGE="$DATA_HOME/memex/.app.new.$$"
rm -rf "$STAGE"
trap 'rm -rf "$STAGE"' EXIT
cp -a "$BUNDLE" "$STAGE"
if [ -f "$HERE/uninstall.sh" ]; then
  cp "$HERE/uninstall.sh" "$STAGE/uninstall.sh"
  chmod 755 "$STAGE/uninstall.sh"
fi
if [ -d "$APP_DIR" ]; then
  rm -rf "$APP_DIR.old"
  mv "$APP_DIR" "$APP_DIR.old"
fi
mv "$STAGE" "$APP_DIR"
rm -rf "$APP_DIR.old"
trap - EXIT

# Icons: the PNG for every desktop, the SVG where the theme takes scalable icons.
RES="$APP_DIR/_internal/resources/icons"
mkdir -p "$ICON_DIR/256x256/apps"
if [ -f "$RES/memex.png" ]; then
  cp "$RES/memex.png" "$ICON_DIR/256x256/apps/memex.png"
else
  echo "install.sh: warning: the bundle has no icon ($RES/memex.png)" >&2
fi
if [ -f "$RES/memex.svg" ]; then
  mkdir -p "$ICON_DIR/scalable/apps"
  cp "$RES/memex.svg" "$ICON_DIR/scalable/apps/memex.svg"
fi

# Desktop Entry Specification: inside a quoted Exec argument, \ " ` $ take a backslash, and the
# value's own escaping doubles every backslash; % is written %%.
desktop_quote() {
  local s=$1
  s=${s//\\/\\\\}; s=${s//\"/\\\"}; s=${s//\`/\\\`}; s=${s//\$/\\\$}
  s=${s//\\/\\\\}; s=${s//%/%%}
  printf '"%s"' "$s"
}
EXEC=$(desktop_quote "$APP_DIR/memex")
write_entry() {  # $1 = file, $2 = extra lines
  mkdir -p "$(dirname "$1")"
  cat >"$1.tmp" <<EOF
[Desktop Entry]
Type=Application
Version=1.4
Name=Memex
GenericName=Personal search
Comment=Search your chats, meetings, mail, notes and people, offline
Exec=$EXEC
TryExec=$APP_DIR/memex
Icon=memex
Terminal=false
Categories=Utility;
Keywords=search;recall;notes;chat;meeting;mail;journal;people;
StartupNotify=false
StartupWMClass=memex
X-Memex-Installer=install.sh
$2
EOF
  mv "$1.tmp" "$1"
}
write_entry "$DESKTOP_FILE" "Actions=Toggle;

[Desktop Action Toggle]
Name=Show or hide the search window
Exec=$EXEC --toggle"
if [ "$AUTOSTART" = 1 ]; then
  write_entry "$AUTOSTART_FILE" "X-GNOME-Autostart-enabled=true"
fi

mkdir -p "$BIN_DIR"
for exe in memex memex-cli; do
  case " ${SKIP_LINKS[*]-} " in *" $exe "*) continue ;; esac
  ln -sfn "$APP_DIR/$exe" "$BIN_DIR/$exe"
done

# An icon theme with its own cache (rare in ~/.local) needs it refreshed to show the icon.
if command -v gtk-update-icon-cache >/dev/null 2>&1 && [ -f "$ICON_DIR/icon-theme.cache" ]; then
  gtk-update-icon-cache -q -t -f "$ICON_DIR" 2>/dev/null || true
fi

echo "Memex installed in $APP_DIR"
echo "  menu entry  $DESKTOP_FILE"
[ "$AUTOSTART" = 1 ] && echo "  autostart   $AUTOSTART_FILE"
for exe in memex memex-cli; do
  case " ${SKIP_LINKS[*]-} " in
    *" $exe "*) echo "  warning: kept the existing $BIN_DIR/$exe (not ours); --force replaces it" >&2 ;;
    *) echo "  command     $BIN_DIR/$exe" ;;
  esac
done
case ":${PATH:-}:" in
  *":$BIN_DIR:"*) ;;
  *) echo "  note: $BIN_DIR is not on your PATH; add it, or run $APP_DIR/memex-cli" ;;
esac

# The window needs a few X11 client libraries the bundle does not carry (the headless
# `memex-cli --search` needs none of them).
QXCB="$APP_DIR/_internal/PySide6/Qt/plugins/platforms/libqxcb.so"
if [ -f "$QXCB" ] && command -v ldd >/dev/null 2>&1; then
  MISSING=$(LD_LIBRARY_PATH="$APP_DIR/_internal" ldd "$QXCB" 2>/dev/null \
            | awk '/not found/ {print $1}' | sort -u | tr '\n' ' ' || true)
  if [ -n "$MISSING" ]; then
    echo "  note: the desktop window (X11) needs these system libraries: $MISSING" >&2
    echo "        Debian/Ubuntu: sudo apt install libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxkbcommon-x11-0" >&2
    echo "        Fedora: sudo dnf install xcb-util-cursor xcb-util-wm xcb-util-keysyms libxkbcommon-x11" >&2
  fi
fi
echo "Start it from the menu, or: memex   (search from a terminal: memex-cli --search \"…\")"
echo "Try it on demo data: memex-cli demo"
echo "Uninstall: $APP_DIR/uninstall.sh   (keeps your index and config; --purge removes them)"
