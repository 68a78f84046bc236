#!/usr/bin/env bash
# The layering of src/ holds (tests/tools/check_layering.sh, with the order of
# src/README.md), and the checker itself fails on a lower module including a higher one,
# on a folder outside the order, and accepts folders of the order that do not exist.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=${CXLA_SOURCE_DIR:-$here/../..}/src
# shellcheck source=testlib.sh
. "$here/testlib.sh"
check="$here/check_layering.sh"

expect "the tree" 0 '^$' -- bash "$check" "$src"

# A scratch tree: hlo below runtime, cpu missing.
mkdir -p "$dir/src/hlo" "$dir/src/runtime"
printf 'Layers, lowest first: base, hlo, cpu, runtime.\n' >"$dir/src/README.md"
printf '#include "hlo/a.h"\n#include "cxla/status.h"\n#include <stdio.h>\n' >"$dir/src/runtime/r.c"
printf '#include "base/base.h"\n' >"$dir/src/hlo/a.h"
expect "lower includes lower" 0 '^$' -- bash "$check" "$dir/src"
printf '#include "hlo/a.h"\n  #  include "runtime/r.h"\n' >"$dir/src/hlo/h.c"
expect "lower includes higher" 1 'src/hlo/h.c:2: hlo includes runtime/r.h, a higher layer' \
  -- bash "$check" "$dir/src"
rm "$dir/src/hlo/h.c"
mkdir "$dir/src/extra"
expect "unplaced folder" 1 'src/extra/ is not in the layer order' -- bash "$check" "$dir/src"
rmdir "$dir/src/extra"
printf '#include "nowhere/x.h"\n' >"$dir/src/hlo/n.c"
expect "unknown include" 1 'hlo includes nowhere/x.h, which is in no layer' \
  -- bash "$check" "$dir/src"
rm "$dir/src/hlo/n.c"
printf 'no order here\n' >"$dir/src/README.md"
expect "no order" 1 'has no line' -- bash "$check" "$dir/src"
finish
