"""The cxla Python package: the tests/hlo cases through Python, every NumPy dtype, wrong
dtypes and shapes, .pb input, replicas, many threads on one executable, python3 -m cxla."""
import glob
import os
import re
import subprocess
import sys
import threading

import numpy as np
import pytest

import cxla

SRC = os.environ.get("CXLA_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
BACKENDS = ["interpreter", "cpu"]
try:
    import ml_dtypes  # noqa: F401

    HAVE_ML_DTYPES = True
except ImportError:
    HAVE_ML_DTYPES = False


def _cases():
    """(file, index, module text, inputs, expected, tolerance) of every tests/hlo case
    with INPUT/EXPECT lines."""
    out = []
    for path in sorted(glob.glob(os.path.join(SRC, "tests", "hlo", "cases", "*.hlo"))):
        with open(path) as f:
            blocks = re.split(r"^// -----.*$", f.read(), flags=re.M)
        for k, block in enumerate(blocks):
            lines = block.splitlines()
            inputs = [l.split(":", 1)[1].strip() for l in lines if l.startswith("// INPUT:")]
            expect = [l.split(":", 1)[1].strip() for l in lines if l.startswith("// EXPECT:")]
            tol = [l.split(":", 1)[1].strip() for l in lines if l.startswith("// TOLERANCE:")]
            if len(expect) != 1 or any(l.startswith(("// EXPECT_ERROR", "// REJECT", "// INFEED",
                                                     "// OUTFEED", "// REPLICAS"))
                                       for l in lines):
                continue
            # Without ml_dtypes the small floats are their bits, which cannot compare NaNs
            # as the harness does; dynamic shapes come back at their bounds (as arrays).
            if "<=" in block or re.search(r"[\[,]\?", block) or (not HAVE_ML_DTYPES and re.search(r"\b(bf16|f8e|f4e)", block)):
                continue
            out.append((os.path.basename(path), k, block, inputs, expect[0],
                        tol[0] if tol else None))
    return out


CASES = _cases()


def _same(got, want, tol):
    if isinstance(want, tuple):
        return isinstance(got, tuple) and len(got) == len(want) and all(
            _same(g, w, tol) for g, w in zip(got, want))
    if got is None or want is None:
        return got is want
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if tol and got.dtype.kind in "fc":
        t = dict(kv.split("=") for kv in tol.split())
        return np.allclose(got, want, atol=float(t.get("atol", 0)), rtol=float(t.get("rtol", 0)),
                           equal_nan=True) or _ulps_ok(got, want, int(t.get("ulps", 0)))
    if got.dtype.kind in "fc":
        return np.array_equal(got, want, equal_nan=True)
    return np.array_equal(got, want)


def _ulps_ok(got, want, ulps):
    if got.dtype.kind == "c":  # compare the parts
        got, want = got.view(got.real.dtype), want.view(want.real.dtype)
    if not ulps or got.dtype not in (np.float32, np.float64):
        return False
    it = np.int32 if got.dtype == np.float32 else np.int64
    g, w = got.view(it).astype(np.int64), want.view(it).astype(np.int64)
    return bool(np.all((got == want) | (np.abs(g - w) <= ulps) | (np.isnan(got) & np.isnan(want))))


def test_there_are_cases():
    assert len(CASES) >= 50


@pytest.mark.parametrize("case", CASES, ids=["%s#%d" % (c[0], c[1]) for c in CASES])
def test_hlo_case(case):
    name, k, text, inputs, expect, tol = case
    exe = cxla.Client(backend="interpreter").compile(text, name="%s#%d" % (name, k))
    args = []
    for t in inputs:
        v = cxla.literal_from_text(t)
        args.extend(_flatten(v))
    got = exe(*args)
    want = cxla.literal_from_text(expect)
    assert _same(got, want, tol), "%s#%d: got %r, want %r" % (name, k, got, want)


def _flatten(v):
    if isinstance(v, tuple):
        return [x for e in v for x in _flatten(e)]
    return [v]


DTYPES = [("pred", np.bool_), ("s8", np.int8), ("s16", np.int16), ("s32", np.int32),
          ("s64", np.int64), ("u8", np.uint8), ("u16", np.uint16), ("u32", np.uint32),
          ("u64", np.uint64), ("f16", np.float16), ("f32", np.float32), ("f64", np.float64),
          ("c64", np.complex64), ("c128", np.complex128)]


def _identity(t, dims="2,3"):
    return ("HloModule m\n\nENTRY e {\n  p = %s[%s] parameter(0)\n  ROOT c = %s[%s] copy(p)\n}\n"
            % (t, dims, t, dims))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name,dtype", DTYPES)
def test_every_numpy_dtype(backend, name, dtype):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((2, 3)) * 100).astype(dtype)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * x[::-1]
    exe = cxla.Client(backend=backend).compile(_identity(name))
    y = exe(x)
    assert y.dtype == np.dtype(dtype) and y.shape == (2, 3)
    assert np.array_equal(y, x)
    # a non-contiguous view is copied to row-major order first
    assert np.array_equal(exe(np.asfortranarray(x)), x)


@pytest.mark.parametrize("name", ["bf16", "f8e5m2", "f8e4m3fn", "f4e2m1fn"])
def test_small_floats_as_bits_or_ml_dtypes(name):
    dt = cxla.dtype_of(name)
    bits = np.arange(6, dtype=np.uint16 if name == "bf16" else np.uint8)
    if name == "f4e2m1fn":
        bits &= 0xF
    x = bits.view(dt) if dt.itemsize == bits.itemsize else bits.astype(dt)
    exe = cxla.Client(backend="interpreter").compile(_identity(name, "6"))
    y = exe(x)
    assert y.dtype == dt
    assert np.array_equal(y.view(bits.dtype), x.view(bits.dtype))


def test_wrong_dtype_and_shape_raise():
    exe = cxla.Client(backend="interpreter").compile(_identity("f32"))
    with pytest.raises(cxla.Error, match="shape s32\\[2,3\\]"):
        exe(np.zeros((2, 3), np.int32))
    with pytest.raises(cxla.Error, match="f32\\[3,2\\]"):
        exe(np.zeros((3, 2), np.float32))
    with pytest.raises(cxla.Error, match="takes 1 arguments"):
        exe()
    with pytest.raises(cxla.Error, match="no cxla element type"):
        exe(np.zeros((2, 3), np.dtype("U3")))
    with pytest.raises(cxla.Error, match="expected a NumPy array"):
        exe("not an array")


def test_errors_carry_the_library_message():
    with pytest.raises(cxla.Error, match="frobnicate") as e:
        cxla.Client(backend="interpreter").compile(
            "HloModule m\nENTRY e {\n  ROOT p = f32[] frobnicate()\n}\n")
    assert e.value.code != 0
    with pytest.raises(cxla.Error, match="backend"):
        cxla.Client(backend="no-such-backend")


@pytest.mark.parametrize("backend", BACKENDS)
def test_compile_proto_and_tuple_result(backend, tmp_path):
    text = ("HloModule m\n\nENTRY e {\n  a = f32[3] parameter(0)\n  b = s32[] parameter(1)\n"
            "  n = f32[3] negate(a)\n  ROOT t = (f32[3], s32[]) tuple(n, b)\n}\n")
    pb = cxla.to_proto(text)
    assert pb[:1] == b"\x0a"
    path = tmp_path / "m.pb"
    path.write_bytes(pb)
    client = cxla.Client(backend=backend)
    for module in (pb, str(path), path):
        out = client.compile(module)(np.array([1, 2, 3], np.float32), np.int32(7))
        assert isinstance(out, tuple) and len(out) == 2
        assert np.array_equal(out[0], [-1, -2, -3]) and out[1] == 7
    assert cxla.parse(pb) == cxla.parse(text)


def test_stablehlo_text():
    mlir = ("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
            "  %0 = stablehlo.add %a, %a : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n")
    out = cxla.Client(backend="interpreter").compile(mlir)(np.array([1, 2], np.float32))
    assert np.array_equal(out, [2, 4])


def test_run_replicated():
    text = ("HloModule m, replica_count=2\n\nadd {\n  x = f32[] parameter(0)\n"
            "  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n\nENTRY e {\n"
            "  p = f32[2] parameter(0)\n  ROOT r = f32[2] all-reduce(p), replica_groups={{0,1}},"
            " to_apply=add\n}\n")
    exe = cxla.Client(backend="interpreter").compile(text)
    outs = exe.run_replicated([[np.array([1, 2], np.float32)], [np.array([10, 20], np.float32)]])
    assert len(outs) == 2
    for o in outs:
        assert np.array_equal(o, [11, 22])
    with pytest.raises(cxla.Error):
        exe.run_replicated([[np.zeros(2, np.float32)]] * 3)  # the module says 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_many_threads_one_executable(backend):
    text = ("HloModule m\n\nENTRY e {\n  a = f32[64] parameter(0)\n  b = f32[64] parameter(1)\n"
            "  m = f32[64] multiply(a, b)\n  ROOT s = f32[64] add(m, a)\n}\n")
    exe = cxla.Client(backend=backend).compile(text)
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(25):
            a = rng.standard_normal(64).astype(np.float32)
            b = rng.standard_normal(64).astype(np.float32)
            if not np.array_equal(exe(a, b), a * b + a):
                errors.append(seed)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_version_matches_the_header():
    with open(os.path.join(SRC, "include", "cxla", "cxla.h")) as f:
        m = re.search(r'CXLA_VERSION_STRING\s+"([^"]+)"', f.read())
    assert m and cxla.version() == m.group(1)


def test_module_command_line(tmp_path):
    hlo = tmp_path / "m.hlo"
    hlo.write_text(_identity("f32"))
    env = dict(os.environ)
    run = lambda *a: subprocess.run([sys.executable, "-m", "cxla"] + list(a), env=env,
                                    capture_output=True, text=True)
    r = run("fmt", "--to-proto", "-o", str(tmp_path / "m.pb"), str(hlo))
    assert r.returncode == 0, r.stderr
    r = run("fmt", str(tmp_path / "m.pb"))
    assert r.returncode == 0 and "ROOT c = f32[2,3]{1,0} copy(p)" in r.stdout
    tool = os.environ.get("CXLA_TOOL")
    if tool:  # the same text as the cxla program prints
        assert r.stdout == subprocess.run([tool, "fmt", str(hlo)], capture_output=True,
                                          text=True).stdout
    assert run("check", str(tmp_path / "m.pb")).returncode == 0
    np.save(tmp_path / "x.npy", np.arange(6, dtype=np.float32).reshape(2, 3))
    r = run("run", str(hlo), str(tmp_path / "x.npy"), "-o", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert np.array_equal(np.load(tmp_path / "out" / "out0.npy"),
                          np.arange(6, dtype=np.float32).reshape(2, 3))
    r = run("check", str(tmp_path / "missing.hlo"))
    assert r.returncode == 1 and "no such file" in r.stderr


def test_binds_no_deprecated_names():
    """_lib binds the current names, never the aliases the headers mark deprecated."""
    deprecated = set()
    for h in glob.glob(os.path.join(SRC, "include", "cxla", "*.h")):
        with open(h) as f:
            text = f.read()
        for m in re.finditer(r"Deprecated alias of \w+[^;]*?\b(cxla_\w+)\(", text, flags=re.S):
            deprecated.add(m.group(1))
    assert "cxla_status_free" in deprecated  # the scan finds the aliases
    with open(os.path.join(SRC, "python", "cxla", "_lib.py")) as f:
        bound = set(re.findall(r'"(cxla_\w+)"', f.read()))
    assert bound and not (bound & deprecated), sorted(bound & deprecated)


def _python(code, **env_changes):
    """Runs |code| in a fresh python3 (the compiler probe and the fallback line are once
    per process), with |env_changes| (None: unset); returns the CompletedProcess."""
    env = dict(os.environ)
    for k, v in env_changes.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True)


def test_client_defaults_to_the_librarys_backend(tmp_path):
    """Client() takes cxla_default_backend's choice (cpu when a C compiler runs, else the
    interpreter with its one line); an explicit backend wins over it and over CXLA_BACKEND."""
    code = "import cxla; print(cxla.Client().backend, *cxla.default_backend(), sep='|')"
    r = _python(code, CXLA_BACKEND=None)
    assert r.returncode == 0, r.stderr
    got, name, reason = r.stdout.strip().split("|", 2)
    assert got == name and name in ("cpu", "interpreter")
    assert reason.startswith("the C compiler runs" if name == "cpu" else "no C compiler")
    # No compiler: the interpreter, with the library's one line.
    nocc = str(tmp_path / "no-such-cc")
    r = _python(code, CXLA_BACKEND=None, CXLA_CC=nocc)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("interpreter|interpreter|no C compiler"), r.stdout
    assert "no C compiler found" in r.stderr and "using the interpreter" in r.stderr
    # CXLA_BACKEND is the library's default; an explicit backend wins over both.
    r = _python(code, CXLA_BACKEND="interpreter")
    assert r.stdout.startswith("interpreter|interpreter|CXLA_BACKEND=interpreter"), r.stdout
    r = _python("import cxla; print(cxla.Client(backend='cpu').backend)",
                CXLA_BACKEND="interpreter")
    assert r.returncode == 0 and r.stdout.strip() == "cpu", r.stdout + r.stderr
    r = _python("import cxla; print(cxla.Client(backend='interpreter').backend)",
                CXLA_BACKEND=None, CXLA_CC=nocc)
    assert r.stdout.strip() == "interpreter" and "no C compiler found" not in r.stderr


def test_module_command_line_runs_on_the_default_backend(tmp_path):
    """python3 -m cxla run takes the library's default backend unless --backend names one.
    The cpu backend shows itself by CXLA_STEP_TIMES's lines (the interpreter has none)."""
    hlo = tmp_path / "m.hlo"
    hlo.write_text(_identity("f32"))
    np.save(tmp_path / "x.npy", np.arange(6, dtype=np.float32).reshape(2, 3))
    env = dict(os.environ, CXLA_STEP_TIMES="1")
    env.pop("CXLA_BACKEND", None)

    def run(*a, **more):
        return subprocess.run([sys.executable, "-m", "cxla", "run", str(hlo),
                               str(tmp_path / "x.npy")] + list(a), env=dict(env, **more),
                              capture_output=True, text=True)

    default = cxla.default_backend()[0]
    r = run()
    assert r.returncode == 0, r.stderr
    assert ("cxla-step-time" in r.stderr) == (default == "cpu"), (default, r.stderr)
    r = run("--backend", "interpreter")
    assert r.returncode == 0 and "cxla-step-time" not in r.stderr, r.stderr
    r = run("--backend", "cpu")
    assert r.returncode == 0 and "cxla-step-time" in r.stderr, r.stderr
    # No compiler: the default is the interpreter, which says so.
    r = run(CXLA_CC=str(tmp_path / "no-such-cc"))
    assert r.returncode == 0 and "cxla-step-time" not in r.stderr
    assert "using the interpreter" in r.stderr, r.stderr
