#!/usr/bin/env bash
# cxla run checks, before it makes inputs or compiles, that the run has every device the
# module's collectives (replica_groups, source_target_pairs, in called computations too)
# and shardings name, and says which flag to give; a run with enough devices goes on.
set -u
cxla=${1:?path to the cxla tool}
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"

# module NAME PARAM_SHAPE BODY_LINES...: writes $dir/NAME.hlo with an add reducer, the
# entry's parameter p of PARAM_SHAPE and the given lines (the last is the root).
module() {
  local name=$1 shape=$2
  shift 2
  {
    echo "HloModule $name"
    echo "add {"
    echo "  x = f32[] parameter(0)"
    echo "  y = f32[] parameter(1)"
    echo "  ROOT s = f32[] add(x, y)"
    echo "}"
    echo "ENTRY main {"
    echo "  p = $shape parameter(0)"
    printf '  %s\n' "$@"
    echo "}"
  } >"$dir/$name.hlo"
}

# Flattened ids (use_global_device_ids=true), as the SPMD dumps of XLA's tools have them:
# 4 devices, and partitions are the count to raise when neither flag nor header says.
# The parameter is 4 GiB: generating it would take seconds and the memory; the check
# comes first, so the run fails at once (the time limit makes a regression show).
module global "f32[1024,1024,1024]" \
  "ROOT ar = f32[1024,1024,1024] all-reduce(p), channel_id=1, replica_groups=[1,4]<=[4], use_global_device_ids=true, to_apply=add"
expect "flattened ids" 1 "replica_groups name device 3 but the run has 1 device .*needs at least 4 devices; give --partitions 4$" -- \
  timeout 20 "$cxla" run "$dir/global.hlo"
expect "flattened ids, partitions given" 1 "the run has 2 devices.*give --replicas 2$" -- \
  timeout 20 "$cxla" run --partitions 2 "$dir/global.hlo"
expect "names the instruction and line" 1 "ar \(all-reduce, computation main, line 9\)" -- \
  timeout 20 "$cxla" run "$dir/global.hlo"
# The interpreter too: the check is before compiling, whatever the backend.
expect "flattened ids, interpreter" 1 "give --partitions 4$" -- \
  timeout 20 "$cxla" run --backend interpreter "$dir/global.hlo"

# Without channel_id the ids are replicas.
module replicas "f32[2]" "ROOT ar = f32[2] all-reduce(p), replica_groups={{0,1},{2,3}}, to_apply=add"
expect "replica ids" 1 "name replica 3 but the run has 1 replica \(without channel_id.*needs at least 4 replicas; give --replicas 4$" -- \
  "$cxla" run "$dir/replicas.hlo"
expect "replica ids, too few" 1 "the run has 3 replicas.*give --replicas 4$" -- \
  "$cxla" run --replicas 3 "$dir/replicas.hlo"
expect "replica ids, enough" 0 "^replica 3:" -- "$cxla" run --replicas 4 "$dir/replicas.hlo"

# collective-permute with channel_id: partitions; inside a while body (a called computation;
# its w is w.1 in the module, the entry keeping its own w).
cat >"$dir/permute.hlo" <<'HLO'
HloModule permute
cond {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(2)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[2] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  w = f32[2] collective-permute(v), channel_id=7, source_target_pairs={{0,1},{1,2},{2,0}}
  ROOT t = (s32[], f32[2]) tuple(j, w)
}
ENTRY main {
  p = f32[2] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[2]) tuple(z, p)
  ROOT w = (s32[], f32[2]) while(t), condition=cond, body=body
}
HLO
expect "permute in a loop body" 1 "w\.1 \(collective-permute, computation body, line 14\): source_target_pairs name partition 2.*give --partitions 3$" -- \
  "$cxla" run "$dir/permute.hlo"
expect "permute, enough partitions" 0 "^replica 0 partition 2:" -- "$cxla" run --partitions 3 "$dir/permute.hlo"

# Shardings name partitions: explicit device lists, the iota form, maximal.
module sharded "f32[8]" "ROOT n = f32[8] negate(p), sharding={devices=[2,1]0,1}"
expect "sharding list" 1 "sharding names device 1 but the run has 1 partition.*give --partitions 2$" -- \
  "$cxla" run "$dir/sharded.hlo"
module iota "f32[8]" "ROOT n = f32[8] negate(p), sharding={devices=[2,4]<=[8]}"
expect "sharding iota" 1 "sharding names device 7 .*needs at least 8 partitions; give --partitions 8$" -- \
  "$cxla" run "$dir/iota.hlo"
module maximal "f32[8]" "ROOT n = f32[8] negate(p), sharding={maximal device=2}"
expect "sharding maximal" 1 "names device 2 .*give --partitions 3$" -- "$cxla" run "$dir/maximal.hlo"
module tuple_sharding "f32[8]" "n = f32[8] negate(p)" \
  "ROOT t = (f32[8], f32[8]) tuple(n, p), sharding={{replicated}, {devices=[4]0,1,2,3}}"
expect "tuple sharding" 1 "give --partitions 4$" -- "$cxla" run "$dir/tuple_sharding.hlo"
module one_device "f32[8]" "ROOT n = f32[8] negate(p), sharding={devices=[1,1]0}"
expect "sharding of one device" 0 "f32\[8\]" -- "$cxla" run "$dir/one_device.hlo"
module replicated "f32[8]" "ROOT n = f32[8] negate(p), sharding={replicated}"
expect "replicated sharding" 0 "f32\[8\]" -- "$cxla" run "$dir/replicated.hlo"

# Groups bound the run from above: a replica in no group fails at once, and the flag to
# give is the count the groups hold.
module pairs "f32[2]" "ROOT ar = f32[2] all-reduce(p), replica_groups={{0},{1}}, to_apply=add"
expect "replica in no group" 1 "replica 2 is in none of the replica_groups, and the run has 3 replicas.*takes at most 2 replicas; give --replicas 2$" -- \
  "$cxla" run --replicas 3 "$dir/pairs.hlo"
expect "replica groups of one" 0 "^replica 1:" -- "$cxla" run --replicas 2 "$dir/pairs.hlo"

# A header with num_partitions=4 (as the SPMD dumps of XLA's tools, llama3's context
# parallel step among them): a flag that contradicts it, or replicas that would put
# devices 4.. in no group, fail at once, before the 4 GiB input is made.
{
  echo "HloModule spmd, num_partitions=4"
  tail -n +2 "$dir/global.hlo"
} >"$dir/spmd.hlo"
expect "header's partitions contradicted" 1 "written for 4 partitions \(num_partitions=4 in its header\), and --partitions asks for 2; give --partitions 4 or leave it out$" -- \
  timeout 20 "$cxla" run --partitions 2 "$dir/spmd.hlo"
expect "replicas of an SPMD module" 1 "device 4 is in none of the replica_groups, and the run has 8 devices.*takes at most 4 devices; give --replicas 1$" -- \
  timeout 20 "$cxla" run --replicas 2 "$dir/spmd.hlo"

# A header that states fewer devices than its collectives name: no flag helps.
{
  echo "HloModule contradicts, num_partitions=2"
  tail -n +2 "$dir/permute.hlo"
} >"$dir/contradicts.hlo"
expect "header contradicts" 1 "target 2 in source_target_pairs is outside 0..1|the module contradicts itself" -- \
  "$cxla" run "$dir/contradicts.hlo"

finish
