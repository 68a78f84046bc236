# Shared by the tests/install/test_*.sh scripts (sourced, not run; CTest runs only
# test_*.sh). Reads the test's arguments and CTest's environment, makes a temporary
# directory removed on exit, counts failures, and installs the build the way `make
# install PREFIX=...` does (cmake --install).
#
# Environment (set by CTest): CXLA_BINARY_DIR (the build to install), CXLA_SOURCE_DIR,
# CXLA_CMAKE, CXLA_CC (the build's compiler) and CXLA_TEST_CFLAGS (the sanitizer flags of
# a sanitizer build, which programs using its libraries need too).
#
# Sets: cxla (the tool, $1), here (the test's folder), src, bin, cmake, cc, cflags (an
# array), tmp, failed; defines fail MESSAGE and install_into PREFIX.
cxla=${1:?path to the cxla tool}
case $cxla in /*) ;; *) cxla=$(pwd)/$cxla ;; esac # the tests change directory
here=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
src=$(cd "${CXLA_SOURCE_DIR:-$here/../..}" && pwd)
bin=${CXLA_BINARY_DIR:-$(cd "$(dirname "$cxla")" && pwd)}
cmake=${CXLA_CMAKE:-cmake}
cc=${CXLA_CC:-cc}
read -r -a cflags <<<"${CXLA_TEST_CFLAGS:-}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

# install_into PREFIX: installs the build under PREFIX (as `make install PREFIX=PREFIX`
# does) and sets libdir (where libcxla.a went: lib, or lib/<multiarch> under /usr) and
# shared (YES when the build has libcxla.so; a build configured with
# -DCXLA_BUILD_SHARED=OFF has only the static library, which cxla::cxla and -lcxla then
# name). Exits the test on failure: nothing after it could work.
install_into() {
  if ! "$cmake" --install "$bin" --prefix "$1" >"$tmp/install.log" 2>&1; then
    cat "$tmp/install.log"
    echo "FAIL: cmake --install $bin --prefix $1"
    exit 1
  fi
  libdir=$(dirname "$(find "$1" -name libcxla.a | head -n 1)")
  [ -n "$libdir" ] && [ -f "$libdir/libcxla.a" ] || { echo "FAIL: no libcxla.a installed"; exit 1; }
  shared=NO
  [ -e "$bin/libcxla.so" ] && shared=YES
  return 0
}
