"""python3 -m cxla run|check|fmt ...: the cxla command line's module commands, through
the Python package (so through libcxla.so, as a notebook would use it).

  python3 -m cxla fmt [--style short|long] [--to-proto -o OUT.pb] MODULE
  python3 -m cxla check MODULE
  python3 -m cxla run MODULE [INPUT.npy ...] [--backend cpu|interpreter] [-o DIR]

run uses the library's default backend (cxla.default_backend(): CXLA_BACKEND, else cpu
when a C compiler runs, else the interpreter) unless --backend names one.

MODULE is HLO text, a binary HloModuleProto (.pb) or (run only) StableHLO. Unlike the
cxla program, run needs every input as a .npy file (it generates none).
"""
import os
import sys

import numpy as np

import cxla


def _usage():
    sys.stderr.write(__doc__)
    return 2


def _fmt(argv):
    path, style, to_proto, out = None, 0, False, None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--style" and i + 1 < len(argv):
            i += 1
            if argv[i] not in ("short", "long"):
                return _usage()
            style = 0 if argv[i] == "short" else 1
        elif a == "--to-proto":
            to_proto = True
        elif a == "-o" and i + 1 < len(argv):
            i += 1
            out = argv[i]
        elif path is None and not a.startswith("-"):
            path = a
        else:
            return _usage()
        i += 1
    if path is None:
        return _usage()
    if to_proto:
        data = cxla.to_proto(path)
        if out:
            with open(out, "wb") as f:
                f.write(data)
        else:
            sys.stdout.buffer.write(data)
        return 0
    text = cxla.parse(path, verify=False) if style == 0 else _long(path)
    sys.stdout.write(text)
    return 0


def _long(path):
    import ctypes as c
    from cxla import _lib
    m = cxla._parse(path)
    try:
        p = _lib.hlo_print(m, 1)
        try:
            return c.string_at(p).decode()
        finally:
            _lib.libc_free(p)
    finally:
        _lib.module_destroy(m)


def _check(argv):
    if len(argv) != 1:
        return _usage()
    cxla.parse(argv[0], verify=True)
    print("%s: OK" % argv[0])
    return 0


def _run(argv):
    path, inputs, backend, out = None, [], None, None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--backend" and i + 1 < len(argv):
            i += 1
            backend = argv[i]
        elif a == "-o" and i + 1 < len(argv):
            i += 1
            out = argv[i]
        elif a.startswith("-"):
            return _usage()
        elif path is None:
            path = a
        else:
            inputs.append(np.load(a))
        i += 1
    if path is None:
        return _usage()
    exe = cxla.Client(backend=backend).compile(path)
    result = exe(*inputs)
    leaves = list(result) if isinstance(result, tuple) else [result]
    for k, leaf in enumerate(leaves):
        print(repr(leaf))
        if out:
            os.makedirs(out, exist_ok=True)
            np.save(os.path.join(out, "out%d.npy" % k), leaf)
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        return _usage()
    cmds = {"fmt": _fmt, "check": _check, "run": _run}
    if argv[0] not in cmds:
        return _usage()
    try:
        return cmds[argv[0]](argv[1:])
    except cxla.Error as e:
        sys.stderr.write("cxla: %s\n" % e)
        return 1


if __name__ == "__main__":
    sys.exit(main())
