#!/usr/bin/env bash
# cxla graph (DOT text, rendering through Graphviz, clusters, escaping, every shared model),
# cxla help, and errors that point at the module's line and column.
set -u
cxla=${1:?path to the cxla tool}
here=$(cd "$(dirname "$0")" && pwd)
shared=${CXLA_SHARED_DIR:-$here/../../../shared}
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
# has NAME FILE LINE: FILE holds LINE exactly (a line of check_dot.py's facts).
has() {
  if grep -qxF -- "$3" "$2"; then ok; else fail "$1: no line '$3' in $(cat "$2")"; fi
}
hasnt() {
  if grep -qF -- "$3" "$2"; then fail "$1: unexpected '$3'"; else ok; fi
}

python=/usr/bin/python3
[ -x "$python" ] || python=$(command -v python3 || true)
have_dot=false
command -v dot >/dev/null 2>&1 && have_dot=true
# checked FILE.dot OUT: validates the DOT text and writes its facts to OUT.
checked() {
  if [ -z "$python" ]; then
    # No Python: balanced braces and quotes, line by line, is what can be checked.
    awk '{ n = gsub(/\\\\/, ""); q = gsub(/\\"/, ""); s = $0; c = gsub(/"/, "", s);
           if (c % 2) { print "odd quotes on line " NR; bad = 1 }
           gsub(/"[^"]*"/, ""); o += gsub(/\{/, "{"); o -= gsub(/\}/, "}") }
         END { if (o != 0) print "unbalanced braces"; exit (bad || o != 0) }' "$1" >"$2"
    return
  fi
  "$python" "$here/check_dot.py" "$1" >"$2"
}

cat >"$dir/loop.hlo" <<'HLO'
HloModule loop_fusion_reduce

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}

fused {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  m = f32[4] multiply(p0, p1)
  ROOT e = f32[4] exponential(m)
}

cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  v = f32[4] get-tuple-element(s), index=1
  f = f32[4] fusion(v, v), kind=kLoop, calls=fused
  ROOT t = (s32[], f32[4]) tuple(i2, f)
}

big_reducer {
  bx = f32[] parameter(0)
  by = f32[] parameter(1)
  bs = f32[] add(bx, by)
  ROOT h = f32[] multiply(bs, bs)
}

ENTRY main {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, x)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  r = f32[4] get-tuple-element(w), index=1
  z = f32[] constant(0)
  sum = f32[] reduce(r, z), dimensions={0}, to_apply=add
  sum2 = f32[] reduce(r, z), dimensions={0}, to_apply=big_reducer
  big = f32[64] constant({...})
  ROOT out = (f32[], f32[], f32[64]) tuple(sum, sum2, big), control-predecessors={r}
}
HLO

# ---- the drawing ------------------------------------------------------------------------
expect "graph" 0 "^digraph " -- "$cxla" graph "$dir/loop.hlo"
"$cxla" graph "$dir/loop.hlo" >"$dir/loop.dot" 2>"$dir/loop.err"
if [ -s "$dir/loop.err" ]; then fail "graph wrote to stderr: $(cat "$dir/loop.err")"; else ok; fi
if checked "$dir/loop.dot" "$dir/loop.facts"; then ok; else fail "loop.dot is not valid DOT"; fi
if [ -n "$python" ]; then
  f=$dir/loop.facts
  # Nodes: name, opcode (with its key attribute), value of small constants, short shape.
  has "parameter node" "$f" "node x | parameter 0 | f32[4]"
  has "constant node" "$f" "node n | constant | 10 | s32[]"
  has "elided constant" "$f" "node big | constant | {...} | f32[64]"
  has "gte node" "$f" "node r | get-tuple-element 1 | f32[4]"
  has "compare node" "$f" "node ROOT lt | compare LT | pred[]"
  has "fusion node" "$f" "node f | fusion kLoop | f32[4]"
  has "root node" "$f" "node ROOT out | tuple | (f32[], f32[], f32[64])"
  # The scalar add is summarized in the reduce's label; the bigger reducer is a cluster.
  has "summarized reducer" "$f" "node sum | reduce | to_apply=add | dimensions={0} | f32[]"
  hasnt "no add cluster" "$f" "to_apply: add"
  has "reducer cluster" "$f" "cluster reduce to_apply: big_reducer in -"
  has "reducer call" "$f" "call sum2 -> reduce to_apply: big_reducer [to_apply]"
  # Clusters, nested where one computation calls them.
  has "condition cluster" "$f" "cluster while condition: cond in -"
  has "body cluster" "$f" "cluster while body: body in -"
  has "fusion cluster" "$f" "cluster fusion calls: fused in while body: body"
  has "fusion member" "$f" "member m in fusion calls: fused"
  has "body member" "$f" "member i2 in while body: body"
  # Edges: operand -> user, labeled with the index when there are several operands.
  has "edge one operand" "$f" "edge init -> w"
  has "edge index 0" "$f" "edge zero -> init [0]"
  has "edge index 1" "$f" "edge x -> init [1]"
  has "edge repeated operand 0" "$f" "edge v -> f [0]"
  has "edge repeated operand 1" "$f" "edge v -> f [1]"
  has "edge inside a fusion" "$f" "edge m -> e"
  has "call condition" "$f" "call w -> while condition: cond [condition]"
  has "call body" "$f" "call w -> while body: body [body]"
  has "call fusion" "$f" "call f -> fusion calls: fused [calls]"
  has "control edge" "$f" "control r -> out"
  n=$(grep -c '^node ' "$f")
  if [ "$n" -eq 29 ]; then ok; else fail "expected 29 nodes (add's 3 summarized away), got $n"; fi
fi
if $have_dot; then
  if dot -Tsvg "$dir/loop.dot" -o "$dir/loop_by_dot.svg" 2>"$dir/dot.err" && [ ! -s "$dir/dot.err" ]; then
    ok
  else
    fail "dot -Tsvg rejects or warns about loop.dot: $(cat "$dir/dot.err")"
  fi
fi

# A computation called from two computations is drawn once, at the top level.
cat >"$dir/shared.hlo" <<'HLO'
HloModule shared_callee
twice {
  p = f32[2] parameter(0)
  ROOT n = f32[2] negate(p)
}
outer {
  q = f32[2] parameter(0)
  ROOT c = f32[2] call(q), to_apply=twice
}
ENTRY main {
  x = f32[2] parameter(0)
  a = f32[2] call(x), to_apply=twice
  b = f32[2] call(a), to_apply=outer
  ROOT s = f32[2] add(a, b)
}
HLO
"$cxla" graph "$dir/shared.hlo" >"$dir/shared.dot"
if checked "$dir/shared.dot" "$dir/shared.facts"; then ok; else fail "shared.dot is not valid DOT"; fi
if [ -n "$python" ]; then
  has "shared callee at the top" "$dir/shared.facts" "cluster call to_apply: twice in -"
  has "shared callee call 1" "$dir/shared.facts" "call a -> call to_apply: twice [to_apply]"
  has "shared callee call 2" "$dir/shared.facts" "call c -> call to_apply: twice [to_apply]"
  n=$(grep -c '^node ROOT n ' "$dir/shared.facts")
  if [ "$n" -eq 1 ]; then ok; else fail "the shared callee is drawn $n times"; fi
fi

# Escaping: quotes, backslashes, <, >, braces in a label stay text.
cat >"$dir/escape.hlo" <<'HLO'
HloModule escape
ENTRY main {
  x = f32[2] parameter(0)
  ROOT c = f32[2] custom-call(x), custom_call_target="a\"b\\c<d>{e}|f"
}
HLO
"$cxla" graph "$dir/escape.hlo" >"$dir/escape.dot"
if checked "$dir/escape.dot" "$dir/escape.facts"; then ok; else fail "escape.dot is not valid DOT"; fi
if [ -n "$python" ]; then
  has "escaped label" "$dir/escape.facts" 'node ROOT c | custom-call "a"b\c<d>{e}|f" | f32[2]'
fi
if $have_dot; then
  if dot -Tsvg "$dir/escape.dot" -o "$dir/escape.svg" 2>/dev/null; then ok; else fail "dot rejects escape.dot"; fi
fi

# --computation draws one computation and what it calls.
"$cxla" graph "$dir/loop.hlo" --computation body >"$dir/body.dot"
if checked "$dir/body.dot" "$dir/body.facts"; then ok; else fail "body.dot is not valid DOT"; fi
if [ -n "$python" ]; then
  has "computation root" "$dir/body.facts" "node ROOT t | tuple | (s32[], f32[4])"
  has "computation's callee" "$dir/body.facts" "cluster fusion calls: fused in -"
  hasnt "no entry nodes" "$dir/body.facts" "node w "
fi
expect "unknown computation" 1 "no computation named 'nope'.*cond.*body" -- "$cxla" graph "$dir/loop.hlo" --computation nope
expect "computation needs a value" 1 "needs a value" -- "$cxla" graph "$dir/loop.hlo" --computation
expect "unknown option" 1 "unknown option '--frob'" -- "$cxla" graph "$dir/loop.hlo" --frob
expect "no module" 1 "usage: cxla graph" -- "$cxla" graph
expect "missing module" 1 "cannot open" -- "$cxla" graph "$dir/none.hlo"

# ---- output files -------------------------------------------------------------------------
expect "-o dot" 0 "^$" -- "$cxla" graph "$dir/loop.hlo" -o "$dir/out.dot"
if cmp -s "$dir/out.dot" "$dir/loop.dot"; then ok; else fail "-o FILE.dot differs from stdout"; fi
expect "-o unwritable" 1 "cannot create" -- "$cxla" graph "$dir/loop.hlo" -o "$dir/no/such/dir.dot"

# .svg without Graphviz: a clear error that suggests .dot.
mkdir -p "$dir/empty"
expect "svg without graphviz" 1 "Graphviz is not installed.*\.dot" -- env PATH="$dir/empty" "$cxla" graph "$dir/loop.hlo" -o "$dir/x.svg"
if [ -e "$dir/x.svg" ]; then fail "a failed .svg left a file"; else ok; fi
# With a stand-in dot on PATH: it gets -Tsvg -o FILE and the DOT text on stdin.
mkdir -p "$dir/fakebin"
cat >"$dir/fakebin/dot" <<EOF
#!/bin/sh
echo "\$*" >"$dir/fake_args"
cat >"$dir/fake_stdin"
echo "<svg/>" >"\$3"
EOF
chmod +x "$dir/fakebin/dot"
expect "svg via dot" 0 "^$" -- env PATH="$dir/fakebin:$PATH" "$cxla" graph "$dir/loop.hlo" -o "$dir/fake.svg"
if [ "$(cat "$dir/fake_args" 2>/dev/null)" = "-Tsvg -o $dir/fake.svg" ]; then ok; else fail "dot got arguments '$(cat "$dir/fake_args" 2>/dev/null)'"; fi
if cmp -s "$dir/fake_stdin" "$dir/loop.dot"; then ok; else fail "dot did not get the DOT text on stdin"; fi
expect "png via dot" 0 "^$" -- env PATH="$dir/fakebin:$PATH" "$cxla" graph "$dir/loop.hlo" -o "$dir/fake.png"
if grep -q -- "-Tpng" "$dir/fake_args"; then ok; else fail "png: dot got '$(cat "$dir/fake_args")'"; fi
cat >"$dir/fakebin/dot" <<'EOF'
#!/bin/sh
echo "Error: something is wrong" >&2
exit 3
EOF
expect "dot fails" 1 "dot failed \(exit status 3\)" -- env PATH="$dir/fakebin:$PATH" "$cxla" graph "$dir/loop.hlo" -o "$dir/fail.svg"
if $have_dot; then
  expect "svg with graphviz" 0 "^$" -- "$cxla" graph "$dir/loop.hlo" -o "$dir/real.svg"
  if grep -q "<svg" "$dir/real.svg"; then ok; else fail "real.svg is not SVG"; fi
else
  echo "note: Graphviz is not installed; rendering is tested with a stand-in dot only"
fi

# ---- every shared model -----------------------------------------------------------------
if [ -d "$shared/models" ]; then
  for m in "$shared"/models/*.hlo; do
    b=$(basename "$m" .hlo)
    start=$(date +%s)
    if ! "$cxla" graph "$m" -o "$dir/$b.dot" 2>"$dir/$b.err"; then
      fail "graph $b: $(head -c 400 "$dir/$b.err")"
      continue
    fi
    secs=$(($(date +%s) - start))
    if [ "$secs" -le 10 ]; then ok; else fail "graph $b took $secs s"; fi
    if checked "$dir/$b.dot" "$dir/$b.facts"; then ok; else fail "graph $b is not valid DOT"; fi
    # nop -p (Graphviz) parses without laying out: fast even for thousands of nodes.
    if $have_dot && command -v nop >/dev/null 2>&1; then
      if nop -p "$dir/$b.dot" 2>"$dir/$b.nop"; then ok; else fail "Graphviz rejects $b: $(cat "$dir/$b.nop")"; fi
    fi
    # Every instruction of the entry is a node.
    if [ -n "$python" ]; then
      nodes=$(grep -c '^node ' "$dir/$b.facts")
      entry=$("$cxla" fmt "$m" | awk '/^ENTRY /{e=1; next} e && /^}/{e=0} e && / = /{n++} END{print n+0}')
      if [ "$nodes" -ge "$entry" ] && [ "$entry" -gt 0 ]; then ok; else fail "$b: $nodes nodes for $entry entry instructions"; fi
    fi
  done
else
  echo "note: $shared/models is absent; skipped drawing the shared models"
fi

# ---- help -----------------------------------------------------------------------------------
expect "help lists commands" 0 "graph +draw a module" -- "$cxla" help
expect "help lists run" 0 "run +run an HLO module" -- "$cxla" help
expect "help run" 0 "--repeat N" -- "$cxla" help run
expect "help graph" 0 "--computation NAME" -- "$cxla" help graph
expect "help check" 0 "usage: cxla check .*FILE" -- "$cxla" help check
expect "help fmt" 0 "--style short" -- "$cxla" help fmt
expect "help help" 0 "usage: cxla help \[COMMAND\]" -- "$cxla" help help
expect "graph --help" 0 "usage: cxla graph" -- "$cxla" graph --help
expect "help unknown" 2 "unknown command 'frob'" -- "$cxla" help frob
expect "help unknown lists" 2 "graph +draw a module" -- "$cxla" help frob
expect "unknown command" 2 "unknown command 'frob'.*" -- "$cxla" frob
expect "no command" 2 "usage: cxla COMMAND" -- "$cxla"

# ---- errors show the module's line and column ---------------------------------------------
cat >"$dir/parse.hlo" <<'HLO'
HloModule parse_error
ENTRY main {
  x = f32[3] parameter(0)
  ROOT s = f32[3] frobnicate(x)
}
HLO
cat >"$dir/verify.hlo" <<'HLO'
HloModule verify_error
ENTRY main {
  x = f32[3] parameter(0)
    ROOT s = f32[4] negate(x)
}
HLO
for cmd in check graph run; do
  expect "$cmd parse error" 1 "parse\.hlo:4:19: Unknown opcode" -- "$cxla" $cmd "$dir/parse.hlo"
  expect "$cmd verifier error" 1 "verify\.hlo:4:5: .*instruction 's'.*f32\[4\]" -- "$cxla" $cmd "$dir/verify.hlo"
done

finish
