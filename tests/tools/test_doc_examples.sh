#!/usr/bin/env bash
# Code in the documentation that is a file of the tree: a fenced block right after a
# line `<!-- file: PATH -->` in README.md or docs/*.md must be PATH's whole text, so the
# code a reader copies is code that compiles (examples/*.c are built with -Werror against
# the shared library) and runs. Then runs build/examples/embed (docs/c-api.md) and checks
# its output: 2 * {1, 2, 3} + {10, 20, 30}, and the code of a refused call.
set -u
cxla=${1:?path to the cxla tool}
src=$(cd "${CXLA_SOURCE_DIR:-$(dirname "$0")/../..}" && pwd)
bin=$(cd "$(dirname "$cxla")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
checked=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

for doc in "$src"/README.md "$src"/docs/*.md; do
  grep -n '^<!-- file: .* -->$' "$doc" | while IFS=: read -r line marker; do
    path=$(sed -E 's/^<!-- file: (.*) -->$/\1/' <<<"$marker")
    # The block: from the fence on the next line to the closing fence.
    awk -v start="$line" 'NR == start + 1 { if ($0 !~ /^```/) exit 1; inside = 1; next }
         inside && /^```$/ { exit 0 } inside { print }' "$doc" >"$tmp/block" ||
      { echo "FAIL: ${doc#"$src"/}:$line: no fenced block after the file marker"; continue; }
    if [ ! -f "$src/$path" ]; then
      echo "FAIL: ${doc#"$src"/}:$line: $path does not exist"
    elif ! diff -u "$src/$path" "$tmp/block" >"$tmp/diff"; then
      echo "FAIL: ${doc#"$src"/}:$line: the block differs from $path:"
      head -n 30 "$tmp/diff"
    else
      echo "ok: ${doc#"$src"/}:$line shows $path"
    fi
  done
done >"$tmp/log"
cat "$tmp/log"
grep -q '^FAIL' "$tmp/log" && failed=$((failed + 1))
grep -q 'docs/c-api.md:.* shows examples/embed.c' "$tmp/log" || fail "docs/c-api.md does not show examples/embed.c"

if [ -x "$bin/examples/embed" ]; then
  expected=$'parameters: f32[3] f32[3] -> f32[3]\nliterals: f32[3] {12, 24, 36}\nbuffers: 12 24 36\nerror: INVALID_ARGUMENT'
  out=$("$bin/examples/embed" 2>&1)
  [ "$out" = "$expected" ] || fail "examples/embed printed '$out', expected '$expected'"
else
  echo "note: $bin/examples/embed is not built (a fuzzing build?): not run"
fi
[ "$failed" -eq 0 ] && echo "ok: documented files match; embed runs as documented" || exit 1
