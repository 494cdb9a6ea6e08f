#!/usr/bin/env bash
# Pack the one-folder bundle (dist/memex, from `make package`) with the installer scripts:
#   dist/memex-<version>-linux-<arch>.tar.gz  and its .sha256
# Layout inside: memex-<version>-linux-<arch>/{install.sh, uninstall.sh, README.txt, memex/}
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VERSION=$("$PY" packaging/version.py)
ARCH=$(uname -m)
NAME="memex-$VERSION-linux-$ARCH"
BUNDLE=${MEMEX_BUNDLE:-dist/memex}        # overridable for tests/test_packaging.py
DIST_DIR=${MEMEX_DIST_DIR:-dist}
STAGE=${MEMEX_STAGE_DIR:-build/dist-linux}  # beside dist/, so the bundle is hard-linked, not copied
OUT="$DIST_DIR/$NAME.tar.gz"

for exe in memex memex-cli; do
  [ -x "$BUNDLE/$exe" ] || { echo "make-dist-linux: $BUNDLE/$exe is missing; run 'make package' first" >&2; exit 1; }
done

rm -rf "$STAGE"
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/$NAME"
install -m 755 packaging/linux/install.sh packaging/linux/uninstall.sh "$STAGE/$NAME/"
sed "s/@VERSION@/$VERSION/g; s/@ARCH@/$ARCH/g" packaging/linux/README.txt >"$STAGE/$NAME/README.txt"
GLIBC=$(ldd --version 2>/dev/null | head -1 | grep -oE '[0-9]+\.[0-9]+$' || echo unknown)
echo "Built on glibc $GLIBC: the target needs glibc $GLIBC or newer." >>"$STAGE/$NAME/README.txt"

cp -al "$BUNDLE" "$STAGE/$NAME/memex" 2>/dev/null \
  || { rm -rf "$STAGE/$NAME/memex"; cp -a "$BUNDLE" "$STAGE/$NAME/memex"; }
MTIME=${SOURCE_DATE_EPOCH:-$(date +%s)}
rm -f "$OUT" "$OUT.sha256"
mkdir -p "$DIST_DIR"
tar --create --file=- --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$MTIME" \
    -C "$STAGE" "$NAME" | gzip -6 -n >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
(cd "$DIST_DIR" && sha256sum "$NAME.tar.gz" >"$NAME.tar.gz.sha256")
echo "wrote $OUT ($(du -h "$OUT" | cut -f1); bundle $(du -sh "$BUNDLE" | cut -f1) unpacked)"
