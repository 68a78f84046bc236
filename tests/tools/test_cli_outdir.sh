#!/usr/bin/env bash
# cxla run -o DIR and --outfeed-dir DIR: missing parent folders are made, and a folder
# that cannot be made or written fails before the run starts (a module whose loop never
# ends shows it: the error comes at once), naming the option and the path.
set -u
cxla=${1:?path to the cxla tool}
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"

cat >"$dir/neg.hlo" <<'HLO'
HloModule neg
ENTRY main {
  p = f32[3] parameter(0)
  ROOT n = f32[3] negate(p)
}
HLO
cat >"$dir/forever.hlo" <<'HLO'
HloModule forever
cond {
  s = s32[] parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  s = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT n = s32[] add(s, one)
}
ENTRY main {
  z = s32[] constant(0)
  ROOT w = s32[] while(z), condition=cond, body=body
}
HLO
cat >"$dir/outfeed.hlo" <<'HLO'
HloModule outfeed
ENTRY main {
  p = f32[3] parameter(0)
  t = token[] after-all()
  o = token[] outfeed(p, t), outfeed_shape=f32[3]
  ROOT n = f32[3] negate(p)
}
HLO

# Parents made, on both backends, and the result written.
for b in interpreter cpu; do
  expect "-o makes parents ($b)" 0 "" -- \
    "$cxla" run -q --backend "$b" "$dir/neg.hlo" "f32[3] {1, 2, 3}" -o "$dir/$b/a/b/c"
  if [ -s "$dir/$b/a/b/c/out0.npy" ]; then ok; else fail "-o $b: no $dir/$b/a/b/c/out0.npy"; fi
  # Nothing left of the write check.
  if [ "$(ls -A "$dir/$b/a/b/c")" = out0.npy ]; then ok; else fail "-o $b: $(ls -A "$dir/$b/a/b/c")"; fi
done
expect "--outfeed-dir makes parents" 0 "" -- \
  "$cxla" run -q "$dir/outfeed.hlo" "f32[3] {1, 2, 3}" --outfeed-dir "$dir/feeds/x/y"
if [ -s "$dir/feeds/x/y/outfeed0.npy" ]; then ok; else fail "--outfeed-dir: no outfeed0.npy"; fi
expect "-o on several devices" 0 "" -- \
  "$cxla" run -q --replicas 2 "$dir/neg.hlo" "f32[3] {1, 2, 3}" -o "$dir/multi/a"
if [ -s "$dir/multi/a/replica1/out0.npy" ]; then ok; else fail "-o replicas: no replica1/out0.npy"; fi

# Bad folders fail at once, before the run (the loop would never end; timeout shows it).
touch "$dir/plain"
expect "-o under a file" 1 "^cxla: -o $dir/plain/x: '$dir/plain' is there and is not a folder$" -- \
  timeout 20 "$cxla" run "$dir/forever.hlo" -o "$dir/plain/x"
expect "-o is a file" 1 "'$dir/plain' is there and is not a folder" -- \
  timeout 20 "$cxla" run "$dir/forever.hlo" -o "$dir/plain"
expect "--outfeed-dir under a file" 1 "^cxla: --outfeed-dir $dir/plain/y: '$dir/plain' is there" -- \
  timeout 20 "$cxla" run "$dir/forever.hlo" --outfeed-dir "$dir/plain/y"
expect "-o empty" 1 "-o needs a folder name" -- timeout 20 "$cxla" run "$dir/forever.hlo" -o ""
# A folder no one can create or write in, even root: /sys refuses new folders, /proc/self
# new files.
if [ -d /sys/kernel ] && ! mkdir /sys/cxla-test 2>/dev/null; then
  expect "-o cannot create" 1 "^cxla: -o /sys/cxla-test/x: cannot create the folder '/sys/cxla-test' \(" -- \
    timeout 20 "$cxla" run "$dir/forever.hlo" -o /sys/cxla-test/x
fi
if [ -d /proc/self ] && ! touch /proc/self/cxla-test 2>/dev/null; then
  expect "-o cannot write" 1 "^cxla: -o /proc/self: cannot write in the folder \(" -- \
    timeout 20 "$cxla" run "$dir/forever.hlo" -o /proc/self
fi
# A folder that cannot be written for a user without root: permissions.
if [ "$(id -u)" != 0 ]; then
  mkdir -p "$dir/ro" && chmod 500 "$dir/ro"
  expect "-o read-only" 1 "cannot (create|write)" -- \
    timeout 20 "$cxla" run "$dir/forever.hlo" -o "$dir/ro/x"
  chmod 700 "$dir/ro"
fi

finish
