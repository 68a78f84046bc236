#!/usr/bin/env bash
# Data-driven cases of tests/hlo/cases/ with every dimension of their entry parameters made
# unbounded ('?'): the cpu backend (which specializes such modules to each run's argument
# sizes, or leaves them to the interpreter's driver: src/cpu/cpu_specialize.c) must print
# what the interpreter prints, results and error messages alike, for every module of the
# files below (with the interpreter's math functions: CXLA_CPU_EXACT_MATH=1; a NaN's sign
# aside).
set -u
cxla=${1:?usage: test_cpu_unbounded_cases.sh path/to/cxla}
src=${CXLA_SOURCE_DIR:?the source folder}
python=$(command -v python3 || true)
if [ -z "$python" ]; then
  echo "no python3: skipped"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
CXLA_CPU_EXACT_MATH=1 "$python" - "$cxla" "$src/tests/hlo/cases" "$dir" <<'EOF'
import os, re, subprocess, sys
cxla, cases, out = sys.argv[1:4]
files = ['shape_reshape', 'shape_broadcast', 'shape_concatenate', 'shape_slice', 'reduce',
         'control', 'dynamic_control', 'host_and_custom_call', 'sort', 'dot']
param = re.compile(r'^(\s*\S+\s*=\s*)(\w+)\[([0-9, ]+)\](\{[^}]*\})?(\s+parameter\(\d+\))')
modules = differ = 0
for f in files:
    for i, chunk in enumerate(open(os.path.join(cases, f + '.hlo')).read().split('\n// -----')):
        lines = chunk.split('\n')
        if any(l.startswith(('// INFEED', '// REPLICAS')) for l in lines):
            continue
        inputs = [l[len('// INPUT:'):].strip() for l in lines if l.startswith('// INPUT:')]
        text, entry, changed = [], False, False
        for l in lines:
            if l.startswith('//'):
                continue
            entry = entry or l.startswith('ENTRY')
            m = param.match(l) if entry else None
            if m:
                dims = ','.join('?' for _ in m.group(3).split(','))
                l = m.group(1) + m.group(2) + '[' + dims + ']' + (m.group(4) or '') + m.group(5) + l[m.end():]
                changed = True
            if entry and l.startswith('}'):
                entry = False
            text.append(l)
        if not changed:
            continue
        path = os.path.join(out, '%s_%d.hlo' % (f, i))
        open(path, 'w').write('\n'.join(text) + '\n')
        got = []
        for backend in ('interpreter', 'cpu'):
            r = subprocess.run([cxla, 'run', '--backend', backend, path] + inputs,
                               capture_output=True, text=True)
            # Any NaN matches any NaN: which one an invalid operation or two NaN operands
            # give depends on the operand order the C compiler chose (docs/semantics.md);
            # the ASan build's interpreter gave -nan where the kernel gave nan (dot module 15).
            stdout = re.sub(r'-nan\b', 'nan', r.stdout.strip())
            got.append((r.returncode, stdout, r.stderr.strip()))
        modules += 1
        if got[0] != got[1]:
            differ += 1
            print('FAIL %s module %d:\n  interpreter: %s\n  cpu:         %s' % (f, i, got[0], got[1]))
print('%d modules, %d differ' % (modules, differ))
sys.exit(1 if differ or modules < 50 else 0)
EOF
