#!/usr/bin/env bash
# Remove what install.sh put in place: the app folder, menu entry, autostart entry, icons and the
# ~/.local/bin symlinks, and Memex's cache. Your index, config and logs stay unless --purge.
#
#   ~/.local/share/memex/app/uninstall.sh [--purge]
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: uninstall.sh [--purge]

  --purge   also delete your Memex data: the index and demo data (~/.local/share/memex),
            config (~/.config/memex) and logs (~/.local/state/memex)

Environment: XDG_DATA_HOME, XDG_CONFIG_HOME, XDG_STATE_HOME, XDG_CACHE_HOME, MEMEX_BIN_DIR.
USAGE
}

PURGE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --purge) PURGE=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "uninstall.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done

: "${HOME:?uninstall.sh: HOME is not set}"
DATA_HOME=${XDG_DATA_HOME:-$HOME/.local/share}
CONFIG_HOME=${XDG_CONFIG_HOME:-$HOME/.config}
STATE_HOME=${XDG_STATE_HOME:-$HOME/.local/state}
CACHE_HOME=${XDG_CACHE_HOME:-$HOME/.cache}
BIN_DIR=${MEMEX_BIN_DIR:-$HOME/.local/bin}
APP_DIR="$DATA_HOME/memex/app"
ICON_DIR="$DATA_HOME/icons/hicolor"

removed=()
remove() {  # remove a file, symlink or folder if it is there
  if [ -e "$1" ] || [ -L "$1" ]; then
    rm -rf -- "$1"
    removed+=("$1")
  fi
}

# Only our own symlinks: a `memex` script from pip or elsewhere stays.
for exe in memex memex-cli; do
  link="$BIN_DIR/$exe"
  if [ -L "$link" ]; then
    case "$(readlink "$link")" in "$APP_DIR"/*) remove "$link" ;; esac
  fi
done
# Entries written by install.sh (or the app's "start at login", which uses the same file name).
for entry in "$DATA_HOME/applications/memex.desktop" "$CONFIG_HOME/autostart/memex.desktop"; do
  if [ -f "$entry" ] && grep -q '^Exec=.*memex' "$entry"; then
    remove "$entry"
  fi
done
remove "$ICON_DIR/256x256/apps/memex.png"
remove "$ICON_DIR/scalable/apps/memex.svg"
# --purge: the OpenAI API key goes too, while the app that can reach the keyring is still here.
KEY_NOTE=""
if [ "$PURGE" = 1 ]; then
  if [ -x "$APP_DIR/memex-cli" ]; then
    TIMEOUT=(); command -v timeout >/dev/null 2>&1 && TIMEOUT=(timeout 30)
    ${TIMEOUT[@]+"${TIMEOUT[@]}"} "$APP_DIR/memex-cli" key delete >/dev/null 2>&1 \
      || KEY_NOTE="could not check the system keyring for a stored OpenAI key (service 'memex')"
  else
    KEY_NOTE="an OpenAI key stored with 'memex key set' stays in the system keyring (service 'memex')"
  fi
fi
# The running script lives in APP_DIR; bash keeps reading it from the open file after removal.
remove "$APP_DIR"
remove "$APP_DIR.old"
for stage in "$DATA_HOME"/memex/.app.new.*; do
  remove "$stage"
done

# The cache holds only what Memex makes again by itself (the model's checksum memo, the warm
# server's sockets), so it goes with the app.
remove "$CACHE_HOME/memex"

if [ "$PURGE" = 1 ]; then
  remove "$DATA_HOME/memex"
  remove "$CONFIG_HOME/memex"
  remove "$STATE_HOME/memex"
else
  rmdir "$DATA_HOME/memex" 2>/dev/null || true
fi

if command -v gtk-update-icon-cache >/dev/null 2>&1 && [ -f "$ICON_DIR/icon-theme.cache" ]; then
  gtk-update-icon-cache -q -t -f "$ICON_DIR" 2>/dev/null || true
fi

if [ ${#removed[@]} -eq 0 ]; then
  echo "Memex is not installed for this user (nothing to remove)"
else
  echo "Memex uninstalled; removed:"
  printf '  %s\n' "${removed[@]}"
fi
if [ "$PURGE" = 0 ] && [ -d "$DATA_HOME/memex" ]; then
  echo "Kept your data in $DATA_HOME/memex and config in $CONFIG_HOME/memex (--purge removes them)"
fi
if [ -n "$KEY_NOTE" ]; then
  echo "Note: $KEY_NOTE"
fi
