"""cxla from Python: compile HLO (text, binary HloModuleProto .pb) or StableHLO and run it
on NumPy arrays, over the shared library libcxla.so with ctypes (nothing to compile).

    import numpy as np, cxla
    client = cxla.Client()                        # the library's default backend, or
                                                  # backend="cpu" / "interpreter"
    exe = client.compile("model.hlo")             # a path, HLO/StableHLO text, or .pb bytes
    out = exe(np.ones((2, 3), np.float32))        # NumPy arrays in, NumPy arrays out
    outs = exe.run_replicated([[x0], [x1]])      # one argument list per replica

Errors raise cxla.Error with the library's message. Element types map to NumPy dtypes
(docs/python.md has the table); bf16 and the f8/f4 types are ml_dtypes arrays when
ml_dtypes can be imported, otherwise arrays of their bits (uint16 for bf16, uint8 for the
8- and 4-bit floats). The sub-byte integers s1/s2/s4 and u1/u2/u4 are int8 / uint8 arrays,
one element per byte, as cxla stores them.

Threads: one executable may be called from several threads at once; the library runs
without the GIL.
"""
import ctypes as _c
import os as _os

import numpy as _np

from . import _lib

__version__ = "0.1.0"  # CXLA_VERSION_STRING of include/cxla/cxla.h

__all__ = ["Client", "Executable", "Error", "version", "default_backend", "dtype_of", "parse",
           "to_proto", "literal_from_text"]


def version():
    """The version of cxla (major.minor.patch)."""
    return __version__


class Error(Exception):
    """A cxla failure: the library's message; .code is its status code."""

    def __init__(self, message, code=None):
        super().__init__(message)
        self.code = code


def _check(status):
    if status:
        msg = _lib.status_message(status).decode("utf-8", "replace")
        code = _lib.status_code(status)
        _lib.status_destroy(status)
        raise Error(msg, code)


def _ml_dtypes():
    try:
        import ml_dtypes  # noqa: F401

        return ml_dtypes
    except ImportError:
        return None


_ML = _ml_dtypes()

# cxla type name -> NumPy dtype (None: no array type).
_DTYPES = {
    "pred": _np.bool_, "s8": _np.int8, "s16": _np.int16, "s32": _np.int32, "s64": _np.int64,
    "u8": _np.uint8, "u16": _np.uint16, "u32": _np.uint32, "u64": _np.uint64,
    "f16": _np.float16, "f32": _np.float32, "f64": _np.float64,
    "c64": _np.complex64, "c128": _np.complex128,
    "s1": _np.int8, "s2": _np.int8, "s4": _np.int8, "u1": _np.uint8, "u2": _np.uint8,
    "u4": _np.uint8,
    "bf16": _np.uint16,
}
_ML_NAMES = {
    "bf16": "bfloat16", "f8e5m2": "float8_e5m2", "f8e4m3": "float8_e4m3",
    "f8e4m3fn": "float8_e4m3fn", "f8e4m3b11fnuz": "float8_e4m3b11fnuz",
    "f8e3m4": "float8_e3m4", "f8e5m2fnuz": "float8_e5m2fnuz", "f8e4m3fnuz": "float8_e4m3fnuz",
    "f8e8m0fnu": "float8_e8m0fnu", "f4e2m1fn": "float4_e2m1fn",
}
for _name in _ML_NAMES:
    _DTYPES.setdefault(_name, _np.uint8)
    if _ML is not None and hasattr(_ML, _ML_NAMES[_name]):
        _DTYPES[_name] = getattr(_ML, _ML_NAMES[_name])
_FROM_DTYPE = {}
for _name in ["pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "f16", "f32",
              "f64", "c64", "c128"] + [n for n in _ML_NAMES if _DTYPES[n] not in
                                       (_np.uint8, _np.uint16)]:
    _FROM_DTYPE[_np.dtype(_DTYPES[_name])] = _name


def dtype_of(type_name):
    """The NumPy dtype cxla uses for element type |type_name| ("f32", "bf16", ...)."""
    if type_name not in _DTYPES:
        raise Error("element type %s has no NumPy array form" % type_name)
    return _np.dtype(_DTYPES[type_name])


def _type_name(t):
    return _lib.type_name(t).decode()


def _leaves(shape_p):
    """Depth-first array leaves of a cxla_shape: (type name, dims) each."""
    s = shape_p.contents
    name = _type_name(s.type)
    if name == "tuple":
        out = []
        for i in range(s.tuple_count):
            out.extend(_leaves(_c.pointer(s.elements[i])))
        return out
    return [(name, tuple(s.dims[i] for i in range(s.rank)))]


def _structure(shape_p, leaves):
    """Rebuilds the tuple nesting of |shape_p| from the flat list |leaves|."""
    s = shape_p.contents
    if _type_name(s.type) == "tuple":
        return tuple(_structure(_c.pointer(s.elements[i]), leaves) for i in range(s.tuple_count))
    return leaves.pop(0)


def _array_type(array, what):
    dt = array.dtype
    if dt in _FROM_DTYPE:
        return _FROM_DTYPE[dt]
    raise Error("%s: NumPy dtype %s has no cxla element type" % (what, dt))


class _Shape:
    """An owned row-major cxla_shape for an array."""

    def __init__(self, type_name, dims):
        arr = (_c.c_int64 * max(len(dims), 1))(*dims)
        self.p = _c.POINTER(_lib.Shape)()
        _check(_lib.shape_create_array(_lib.TYPES[type_name], len(dims), arr, _c.byref(self.p)))

    def __del__(self):
        if getattr(self, "p", None):
            _lib.shape_destroy(self.p)
            self.p = None


def _as_array(x, what):
    if isinstance(x, (bool, int, float, complex, _np.generic)) and not isinstance(x, _np.ndarray):
        x = _np.asarray(x)
    if not isinstance(x, _np.ndarray):
        raise Error("%s: expected a NumPy array, got %s" % (what, type(x).__name__))
    return _np.require(x, requirements="C")  # no copy when it is row-major already


class Executable:
    """A compiled module; call it with NumPy arrays (one per array leaf of the entry
    parameters, depth first) to run it. Returns one array, or a tuple for a tuple result."""

    def __init__(self, client, handle):
        self._client = client  # keeps the client alive
        self._h = handle
        n = _lib.parameter_count(handle)
        self.parameter_leaves = []
        for i in range(n):
            self.parameter_leaves.extend(_leaves(_lib.parameter_shape(handle, i)))
        self.result_leaves = _leaves(_lib.result_shape(handle))

    def __del__(self):
        if getattr(self, "_h", None):
            _lib.executable_destroy(self._h)
            self._h = None

    def _arg_buffers(self, args):
        if len(args) != len(self.parameter_leaves):
            raise Error("the module takes %d arguments (array leaves of its parameters), "
                        "not %d" % (len(self.parameter_leaves), len(args)))
        keep, bufs = [], (_lib.Buffer * max(len(args), 1))()
        for i, a in enumerate(args):
            a = _as_array(a, "argument %d" % i)
            # The library checks the type and dimensions against the parameter's. An
            # array of bits (uint16 for bf16, uint8 for f8 without ml_dtypes) stands for
            # the parameter's type when that is the type's documented dtype.
            want = self.parameter_leaves[i][0]
            if want in _DTYPES and a.dtype == dtype_of(want):
                name = want
            else:
                name = _array_type(a, "argument %d" % i)
            sh = _Shape(name, a.shape)
            keep += [a, sh]
            bufs[i].shape = sh.p
            bufs[i].data = a.ctypes.data
            bufs[i].size = a.nbytes
        return keep, bufs

    def __call__(self, *args):
        keep, bufs = self._arg_buffers(args)
        outs, res = [], (_lib.Buffer * max(len(self.result_leaves), 1))()
        for i, (name, dims) in enumerate(self.result_leaves):
            if name == "token":
                outs.append(None)
                continue
            if any(d < 0 for d in dims):
                raise Error("result leaf %d has an unbounded dynamic shape; "
                            "the call form needs bounds" % i)
            out = _np.empty(dims, dtype_of(name))
            sh = _Shape(name, dims)
            keep += [sh]
            outs.append(out)
            res[i].shape = sh.p
            res[i].data = out.ctypes.data
            res[i].size = out.nbytes
        _check(_lib.run_buffers(self._h, None, bufs, len(args), res, len(self.result_leaves)))
        del keep
        return _structure(_lib.result_shape(self._h), outs)

    def run_replicated(self, args_per_replica):
        """Runs on len(args_per_replica) replicas (threads, with collectives between
        them); returns one result per replica."""
        n = len(args_per_replica)
        opts = _lib.RunOptions()
        _lib.run_options_init(_c.byref(opts))
        opts.replica_count = n
        lits, keep = [], []
        try:
            rows = (_c.POINTER(_c.c_void_p) * max(n, 1))()
            nargs = len(self.parameter_leaves)
            for r, args in enumerate(args_per_replica):
                if len(args) != nargs:
                    raise Error("replica %d: the module takes %d arguments, not %d"
                                % (r, nargs, len(args)))
                row = (_c.c_void_p * max(nargs, 1))()
                for i, a in enumerate(args):
                    a = _as_array(a, "replica %d argument %d" % (r, i))
                    want = self.parameter_leaves[i][0]
                    name = want if want in _DTYPES and a.dtype == dtype_of(want) else None
                    row[i] = _to_literal(a, lits, name)
                keep.append(row)
                rows[r] = _c.cast(row, _c.POINTER(_c.c_void_p))
            results = (_c.c_void_p * max(n, 1))()
            _check(_lib.execute(self._h, _c.byref(opts), rows, nargs, results))
            out = []
            for r in range(n):
                try:
                    out.append(_from_literal(results[r]))
                finally:
                    _lib.literal_destroy(results[r])
            return out
        finally:
            for lit in lits:
                _lib.literal_destroy(lit)


def _to_literal(a, owned, name=None):
    name = name or _array_type(a, "argument")
    sh = _Shape(name, a.shape)
    lit = _c.c_void_p()
    _check(_lib.literal_create(sh.p, _c.byref(lit)))
    owned.append(lit.value)
    size = _lib.literal_byte_size(lit)
    if size != a.nbytes:
        raise Error("internal: literal of %d bytes for an array of %d" % (size, a.nbytes))
    if size:
        _c.memmove(_lib.literal_data(lit), a.ctypes.data, size)
    return lit.value


def _from_literal(lit):
    n = _lib.literal_tuple_count(lit)
    shape = _lib.literal_shape(lit).contents
    name = _type_name(shape.type)
    if name == "tuple":
        return tuple(_from_literal(_lib.literal_tuple_element(lit, i)) for i in range(n))
    if name == "token":
        return None
    static = _c.c_void_p()
    _check(_lib.literal_to_static(lit, _c.byref(static)))
    try:
        s = _lib.literal_shape(static).contents
        dims = tuple(s.dims[i] for i in range(s.rank))
        out = _np.empty(dims, dtype_of(name))
        # Literals from a run are in the entry layout; relaid by the library when it is
        # not row-major is future work: check it.
        if s.layout:
            mtm = _c.cast(s.layout, _c.POINTER(_c.POINTER(_c.c_int64))).contents
            if any(mtm[i] != s.rank - 1 - i for i in range(s.rank)):
                raise Error("a result in a non-row-major layout (use the call form)")
        if out.nbytes:
            _c.memmove(out.ctypes.data, _lib.literal_data(static), out.nbytes)
        return out
    finally:
        _lib.literal_destroy(static)


def default_backend():
    """The backend a Client() made now would get, and why, as the library chooses it
    (cxla_default_backend): CXLA_BACKEND when set, else "cpu" when a C compiler runs,
    else "interpreter". Returns (name, reason)."""
    name = _c.c_char_p()
    reason = _c.create_string_buffer(512)
    _check(_lib.default_backend(_c.byref(name), reason, len(reason)))
    return name.value.decode(), reason.value.decode()


class Client:
    """A cxla client on |backend|: "cpu" (the compiled backend), "interpreter" (the
    reference), or None for the library's choice (default_backend(): CXLA_BACKEND, else
    cpu when a C compiler runs, else the interpreter with one line on stderr)."""

    def __init__(self, backend=None, threads=0, seed=0):
        opts = _lib.ClientOptions()
        _lib.client_options_init(_c.byref(opts))
        self._backend_name = backend.encode() if backend is not None else None
        opts.backend = self._backend_name
        opts.thread_count = threads
        opts.seed = seed
        h = _c.c_void_p()
        _check(_lib.client_create(_c.byref(opts), _c.byref(h)))
        self._h = h.value

    def __del__(self):
        if getattr(self, "_h", None):
            _lib.client_destroy(self._h)
            self._h = None

    @property
    def backend(self):
        return _lib.client_backend(self._h).decode()

    def compile(self, module, name=None):
        """Compiles |module|: a path (HLO text, .pb, .mlir), HLO or StableHLO text, or the
        bytes of a binary HloModuleProto. Returns an Executable."""
        data, label = _read_module(module, name)
        h = _c.c_void_p()
        if _is_mlir(data, label):
            _check(_lib.compile_stablehlo_text(self._h, data, len(data), label.encode(),
                                               _c.byref(h)))
        else:
            _check(_lib.compile_hlo_text(self._h, data, len(data), label.encode(), _c.byref(h)))
        return Executable(self, h.value)


def _read_module(module, name=None):
    if isinstance(module, (bytes, bytearray)):
        return bytes(module), name or "module"
    if isinstance(module, _os.PathLike) or (isinstance(module, str) and "\n" not in module
                                            and _os.path.exists(module)):
        with open(module, "rb") as f:
            return f.read(), name or str(module)
    if isinstance(module, str):
        stripped = module.strip()
        if "\n" not in stripped and (stripped.endswith((".hlo", ".pb", ".mlir", ".txt"))
                                      or _os.sep in stripped):
            raise Error("%s: no such file" % module)
        return module.encode(), name or "module"
    raise Error("compile takes a path, text or bytes, not %s" % type(module).__name__)


def _is_mlir(data, label):
    if _lib.looks_like_proto(data, len(data)):
        return False
    return label.endswith(".mlir") or bool(_lib.looks_like_mlir(data, len(data)))


def literal_from_text(text):
    """A literal written as text with its shape ("f32[2] {1, 2}") as NumPy arrays (a tuple
    for a tuple literal)."""
    lit = _c.c_void_p()
    data = text.encode()
    _check(_lib.literal_parse(data, len(data), None, _c.byref(lit)))
    try:
        return _from_literal(lit.value)
    finally:
        _lib.literal_destroy(lit)


def _parse(module, name=None):
    data, label = _read_module(module, name)
    if _is_mlir(data, label):
        raise Error("%s: StableHLO: use Client.compile, or the cxla command (fmt, check)" % label)
    h = _c.c_void_p()
    _check(_lib.hlo_parse(data, len(data), label.encode(), _c.byref(h)))
    return h.value


def parse(module, name=None, verify=True):
    """The canonical HLO text of |module| (path, text or .pb bytes), verified."""
    m = _parse(module, name)
    try:
        if verify:
            _check(_lib.hlo_verify(m))
        p = _lib.hlo_print(m, 0)
        if not p:
            raise Error("out of memory")
        try:
            return _c.string_at(p).decode()
        finally:
            _lib.libc_free(p)
    finally:
        _lib.module_destroy(m)


def to_proto(module, name=None):
    """|module| (path, text or .pb bytes) as the bytes of a binary HloModuleProto."""
    m = _parse(module, name)
    try:
        out = _c.c_void_p()
        n = _c.c_size_t()
        _check(_lib.hlo_write_proto(m, _c.byref(out), _c.byref(n)))
        try:
            return _c.string_at(out, n.value)
        finally:
            _lib.libc_free(out)
    finally:
        _lib.module_destroy(m)
