#!/usr/bin/env bash
# cxla as an installed product: installs this build into a temporary prefix (as `make
# install PREFIX=...` does) and checks the layout, the shared library's exports (exactly
# the functions the public headers declare), each public header compiling on its own,
# DESTDIR staging, and a small C program (consumer/hello.c) built against the installed
# package with pkg-config and with a CMake project using find_package(cxla), shared and
# static, run and its output checked. Needs no network.
#
# tests/install/common.sh reads the arguments and CTest's environment and installs.
set -u
source "$(dirname "$0")/common.sh"

prefix="$tmp/prefix"
install_into "$prefix"

# The layout.
for f in bin/cxla include/cxla/cxla.h; do
  [ -f "$prefix/$f" ] || fail "$f is not installed"
done
[ "$shared" = NO ] || [ -e "$libdir/libcxla.so" ] || fail "libcxla.so is not installed"
for f in cmake/cxla/cxlaConfig.cmake cmake/cxla/cxlaConfigVersion.cmake \
  cmake/cxla/cxlaTargets.cmake pkgconfig/cxla.pc; do
  [ -e "$libdir/$f" ] || fail "${libdir#"$prefix"/}/$f is not installed"
done
for h in "$src"/include/cxla/*.h; do
  [ -f "$prefix/include/cxla/$(basename "$h")" ] || fail "include/cxla/$(basename "$h") is not installed"
done
version=$(sed -n 's/^#define CXLA_VERSION_STRING "\(.*\)"/\1/p' "$src/include/cxla/cxla.h")
out=$("$prefix/bin/cxla" version 2>&1) || fail "installed cxla version: $out"
grep -qF "$version" <<<"$out" || fail "installed cxla version says '$out', expected $version"
if [ "$shared" = YES ]; then
  soname=$(readelf -d "$libdir/libcxla.so" 2>/dev/null | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
  [ "$soname" = "libcxla.so.${version%.*}" ] || fail "soname '$soname', expected libcxla.so.${version%.*}"
fi

# Each public header compiles by itself, and the shared library exports exactly the
# functions they declare (nothing internal, nothing missing).
: >"$tmp/declared.txt"
for h in "$prefix"/include/cxla/*.h; do
  name=cxla/$(basename "$h")
  if ! printf '#include <%s>\nint main(void) { return 0; }\n' "$name" |
    "$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -I"$prefix/include" -x c - \
      2>"$tmp/header.err"; then
    fail "<$name> does not compile on its own: $(head -n 5 "$tmp/header.err")"
  fi
  "$cc" -E -P -std=c11 -I"$prefix/include" "$h" | tr '\n' ' ' | grep -oE '\bcxla_[A-Za-z0-9_]*[[:space:]]*\([[:space:]]*[^*[:space:]]' |
    sed -E 's/[[:space:]]*\(.*$//' >>"$tmp/declared.txt"
done
sort -u "$tmp/declared.txt" -o "$tmp/declared.txt"
if [ "$shared" = YES ]; then
  nm -D --defined-only "$libdir/libcxla.so" | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/exported.txt"
  if ! cmp -s "$tmp/declared.txt" "$tmp/exported.txt"; then
    fail "libcxla.so's exports differ from the public headers' functions (< declared only, > exported only):
$(diff "$tmp/declared.txt" "$tmp/exported.txt" | grep '^[<>]' | head -n 20)"
  fi
fi
[ "$(wc -l <"$tmp/declared.txt")" -gt 50 ] || fail "only $(wc -l <"$tmp/declared.txt") public functions found"

# The expected output of consumer/hello.c.
cat >"$tmp/expected.txt" <<EOF
cxla $version
bf16[2,2] { { 1, 2 }, { 3, 4.5 } }
.npy round trip: equal
bad literal: INVALID_ARGUMENT
EOF
check_run() { # NAME PROGRAM
  local out
  if ! out=$(LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$2" 2>&1); then
    fail "$1: the program failed: $out"
  elif ! diff <(printf '%s\n' "$out") "$tmp/expected.txt" >"$tmp/diff.txt"; then
    fail "$1: unexpected output: $(cat "$tmp/diff.txt")"
  fi
}
needs_libcxla_so() { # NAME PROGRAM YES|NO
  local needed=NO
  readelf -d "$2" | grep -q 'NEEDED.*libcxla\.so' && needed=YES
  [ "$needed" = "$3" ] || fail "$1: links libcxla.so: $needed, expected $3"
}

# pkg-config: the shared library, then the static one with Libs.private.
if command -v pkg-config >/dev/null 2>&1; then
  export PKG_CONFIG_PATH="$libdir/pkgconfig"
  if pc_cflags=$(pkg-config --cflags cxla) && pc_libs=$(pkg-config --libs cxla) &&
    pc_static=$(pkg-config --static --libs-only-l cxla); then
    read -r -a pc_cflags <<<"$pc_cflags"
    read -r -a pc_libs <<<"$pc_libs"
    read -r -a pc_static <<<"${pc_static//-lcxla/}"
    grep -q -- "-lm" <<<"${pc_static[*]}" || fail "pkg-config --static lacks -lm: ${pc_static[*]}"
    [ "$(pkg-config --modversion cxla)" = "$version" ] || fail "pkg-config --modversion"
    if "$cc" "${cflags[@]}" -std=c11 -Wall -Werror "${pc_cflags[@]}" "$here/consumer/hello.c" \
      -o "$tmp/hello_pc" "${pc_libs[@]}" 2>"$tmp/cc.err"; then
      needs_libcxla_so "pkg-config shared" "$tmp/hello_pc" "$shared"
      check_run "pkg-config shared" "$tmp/hello_pc"
    else
      fail "pkg-config shared build: $(cat "$tmp/cc.err")"
    fi
    if "$cc" "${cflags[@]}" -std=c11 -Wall -Werror "${pc_cflags[@]}" "$here/consumer/hello.c" \
      -o "$tmp/hello_pc_static" "$libdir/libcxla.a" "${pc_static[@]}" 2>"$tmp/cc.err"; then
      needs_libcxla_so "pkg-config static" "$tmp/hello_pc_static" NO
      check_run "pkg-config static" "$tmp/hello_pc_static"
    else
      fail "pkg-config static build: $(cat "$tmp/cc.err")"
    fi
  else
    fail "pkg-config cannot read the installed cxla.pc"
  fi
  unset PKG_CONFIG_PATH
else
  echo "note: no pkg-config on this machine; its part is skipped (Debian: apt-get install pkgconf)"
fi

# CMake: find_package(cxla) from the install prefix, cxla::cxla and cxla::cxla_static.
if "$cmake" -S "$here/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="${cflags[*]}" -DCMAKE_BUILD_TYPE=Release \
  >"$tmp/cmake.log" 2>&1 && "$cmake" --build "$tmp/consumer" >>"$tmp/cmake.log" 2>&1; then
  needs_libcxla_so "find_package cxla::cxla" "$tmp/consumer/hello_shared" "$shared"
  needs_libcxla_so "find_package cxla::cxla_static" "$tmp/consumer/hello_static" NO
  check_run "find_package cxla::cxla" "$tmp/consumer/hello_shared"
  check_run "find_package cxla::cxla_static" "$tmp/consumer/hello_static"
else
  fail "the find_package(cxla) project does not build: $(tail -n 20 "$tmp/cmake.log")"
fi
# The version file: 0.1 asks for this version; 0.999 and 1.0 are other APIs (SameMinorVersion).
cat >"$tmp/version.cmake" <<EOF
string(REPLACE "." ";" parts "\${PACKAGE_FIND_VERSION}")
list(GET parts 0 PACKAGE_FIND_VERSION_MAJOR)
list(GET parts 1 PACKAGE_FIND_VERSION_MINOR)
set(PACKAGE_FIND_VERSION_PATCH 0)
set(PACKAGE_FIND_VERSION_COUNT 2)
set(CMAKE_SIZEOF_VOID_P 8)
include("$libdir/cmake/cxla/cxlaConfigVersion.cmake")
message("\${PACKAGE_VERSION_COMPATIBLE}")
EOF
for want in "${version%.*}:TRUE" "0.999:FALSE" "1.0:FALSE"; do
  got=$("$cmake" -DPACKAGE_FIND_VERSION="${want%%:*}" -P "$tmp/version.cmake" 2>&1)
  [ "$got" = "${want#*:}" ] || fail "find_package(cxla ${want%%:*}) compatible: '$got', expected ${want#*:}"
done

# DESTDIR stages the files under it; cxla.pc still names the final prefix.
if DESTDIR="$tmp/stage" "$cmake" --install "$bin" --prefix /opt/cxla >"$tmp/stage.log" 2>&1; then
  [ -f "$tmp/stage/opt/cxla/bin/cxla" ] || fail "DESTDIR: bin/cxla is not under the staging dir"
  pc=$(find "$tmp/stage/opt/cxla" -name cxla.pc | head -n 1)
  if [ -z "$pc" ]; then
    fail "DESTDIR: no cxla.pc"
  else
    grep -qx "prefix=/opt/cxla" "$pc" || fail "DESTDIR: cxla.pc names $(grep '^prefix=' "$pc")"
  fi
else
  fail "DESTDIR install: $(tail -n 5 "$tmp/stage.log")"
fi

[ "$failed" -eq 0 ] && echo "ok: installed, exports checked, built and ran with pkg-config and find_package" || exit 1
