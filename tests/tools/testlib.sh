# Shared by the shell tests (source it after setting `cxla`): a scratch folder $dir
# removed at exit, pass/fail counting and `finish`, which prints the tally and gives the
# test's exit status.
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
# expect NAME EXPECTED_RC PATTERN -- command...: runs the command, checks its exit status
# and that its output (stdout + stderr) matches PATTERN (grep -E).
expect() {
  local name=$1 rc=$2 pattern=$3
  shift 4
  local out
  out=$("$@" 2>&1)
  local got=$?
  if [ "$got" -ne "$rc" ]; then fail "$name: exit $got, expected $rc: $out"; return; fi
  if ! grep -qE -- "$pattern" <<<"$out"; then fail "$name: output lacks /$pattern/: $out"; return; fi
  ok
}
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
