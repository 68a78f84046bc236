#!/usr/bin/env bash
# check_layering.sh SRC_DIR: checks that no module under SRC_DIR includes a module above it.
# The order comes from SRC_DIR/README.md, from its line "Layers, lowest first: a, b, ...":
# a file in src/<m>/ may include "x/..." only when x is m or listed before m. Folders in
# the order that do not exist are accepted (modules not written yet); a folder of
# SRC_DIR that is not in the order is an error (it must be placed). Prints one line per
# violation ("src/stablehlo/parallel.c:39: stablehlo includes runtime/replicas.h, a
# higher layer") and exits 1 when there is any.
set -u
src=${1:?usage: check_layering.sh SRC_DIR}
line=$(grep -m1 '^Layers, lowest first:' "$src/README.md" 2>/dev/null)
if [ -z "$line" ]; then
  echo "$src/README.md has no line 'Layers, lowest first: ...'"
  exit 1
fi
# "a, b, c." -> rank[a]=0, rank[b]=1, ...
declare -A rank
i=0
for m in $(sed -e 's/^Layers, lowest first://' -e 's/[,.`]/ /g' <<<"$line"); do
  rank[$m]=$i
  i=$((i + 1))
done
bad=0
for d in "$src"/*/; do
  m=$(basename "$d")
  if [ -z "${rank[$m]+x}" ]; then
    echo "src/$m/ is not in the layer order of $src/README.md"
    bad=1
    continue
  fi
  # Every #include "x/..." (quoted, with a folder) in the module's .c and .h files.
  while IFS=: read -r file lineno text; do
    inc=$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]*)".*/\1/' <<<"$text")
    x=${inc%%/*}
    [ "$x" = cxla ] && continue # the public headers (include/cxla/)
    if [ -z "${rank[$x]+x}" ]; then
      echo "src/${file#"$src"/}:$lineno: $m includes $inc, which is in no layer"
      bad=1
    elif [ "${rank[$x]}" -gt "${rank[$m]}" ]; then
      echo "src/${file#"$src"/}:$lineno: $m includes $inc, a higher layer"
      bad=1
    fi
  done < <(grep -HnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"/]+/' \
             "$d"*.c "$d"*.h "$d"*.def 2>/dev/null)
done
exit $bad
