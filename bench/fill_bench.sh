#!/usr/bin/env bash
# Generated inputs (tools/fake_args.c) before and after a change, in the same run:
# bench_convert.c built twice, against tools/fake_args.c of REV (default HEAD) and of the
# working tree, each run ROUNDS times alternating (best of each kept).
#   bench/fill_bench.sh BUILD_DIR [N] [REV] [ROUNDS]
set -e
build=${1:?usage: fill_bench.sh BUILD_DIR [N] [REV] [ROUNDS]}
n=${2:-50000000}
rev=${3:-HEAD}
rounds=${4:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/old/bench" "$tmp/old/tools"
git -C "$root" show "$rev:tools/fake_args.c" >"$tmp/old/tools/fake_args.c"
cp "$root/tools/fake_args.h" "$tmp/old/tools/"
cp "$root/bench/bench_convert.c" "$tmp/old/bench/"
libs="$build/libcxla.a -lm -ldl -lpthread"
[ -f /usr/lib/x86_64-linux-gnu/libdnnl.so ] && libs="$libs /usr/lib/x86_64-linux-gnu/libdnnl.so"
mpi=$(ls /usr/lib/x86_64-linux-gnu/openmpi/lib/libmpi.so 2>/dev/null || true)
[ -n "$mpi" ] && libs="$libs $mpi"
flags="-O2 -DNDEBUG -std=c11 -I$root/src -I$root/include"
cc $flags "$tmp/old/bench/bench_convert.c" -o "$tmp/old.bin" $libs
cc $flags "$root/bench/bench_convert.c" -o "$tmp/new.bin" $libs
for r in $(seq "$rounds"); do
  "$tmp/old.bin" "$n" | grep "generated inputs" | sed 's/^/old /'
  "$tmp/new.bin" "$n" | grep "generated inputs" | sed 's/^/new /'
done | awk '{k = $1 " " $4; v = $5; if (!(k in best) || v > best[k]) best[k] = v}
  END {for (k in best) printf "%-20s %10.0f M values/s\n", k, best[k]}' | sort -k2,2 -k1,1
