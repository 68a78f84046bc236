#!/usr/bin/env bash
# What a new user meets: a mistyped command gets a "did you mean", and `cxla graph -o`
# with an extension it cannot write is an error (not DOT text in a .jpg).
set -u
cxla=${1:?path to the cxla tool}
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"

cat >"$dir/add.hlo" <<'HLO'
HloModule add
ENTRY main {
  x = f32[3] parameter(0)
  ROOT s = f32[3] add(x, x)
}
HLO
expect "chek" 2 "unknown command 'chek'; did you mean 'check'\?" -- "$cxla" chek "$dir/add.hlo"
expect "rnu" 2 "did you mean 'run'\?" -- "$cxla" rnu "$dir/add.hlo"
expect "far away" 2 "the commands are:" -- "$cxla" frobnicate
expect "graph .jpg" 1 "unknown extension '.jpg'.*\.dot or \.gv.*\.svg, \.png or \.pdf" -- "$cxla" graph "$dir/add.hlo" -o "$dir/g.jpg"
if [ -e "$dir/g.jpg" ]; then fail "graph wrote $dir/g.jpg"; else ok; fi
expect "graph .dot" 0 "^$" -- "$cxla" graph "$dir/add.hlo" -o "$dir/g.dot"
if grep -q "^digraph" "$dir/g.dot"; then ok; else fail "g.dot is not DOT text"; fi
expect "graph .gv" 0 "^$" -- "$cxla" graph "$dir/add.hlo" -o "$dir/g.gv"

finish
