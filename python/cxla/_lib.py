"""The ctypes binding of libcxla.so (internal to the cxla package).

The library is found, in order: $CXLA_LIBRARY (a path), next to this package (an
installed tree: PREFIX/lib/libcxla.so beside PREFIX/lib/python3/dist-packages/cxla),
the system's library path (ctypes.util.find_library), a build tree (./build) above this
file. Only what the package uses is declared; the C headers (include/cxla/*.h) are the
reference for what each call does and owns.
"""
import ctypes
import ctypes.util
import os

_c = ctypes


class Shape(_c.Structure):
    pass


Shape._fields_ = [
    ("type", _c.c_int),
    ("rank", _c.c_int64),
    ("dims", _c.POINTER(_c.c_int64)),
    ("dynamic", _c.POINTER(_c.c_uint8)),
    ("layout", _c.c_void_p),
    ("tuple_count", _c.c_int64),
    ("elements", _c.POINTER(Shape)),
]


class Buffer(_c.Structure):
    _fields_ = [("shape", _c.POINTER(Shape)), ("data", _c.c_void_p), ("size", _c.c_size_t)]


class ClientOptions(_c.Structure):
    _fields_ = [("backend", _c.c_char_p), ("thread_count", _c.c_int), ("seed", _c.c_uint64),
                ("_reserved", _c.c_uint8 * 64)]


class RunOptions(_c.Structure):
    # cxla_run_options (cxla/runtime.h); "fields are added over time": room is kept at the
    # end and the struct is always filled by cxla_run_options_init first.
    _fields_ = [("replica_id", _c.c_int64), ("partition_id", _c.c_int64),
                ("check_finite", _c.c_bool), ("replica_count", _c.c_int64),
                ("partition_count", _c.c_int64), ("collective_timeout_seconds", _c.c_double),
                ("cancel", _c.c_void_p), ("_reserved", _c.c_uint8 * 256)]


def _candidates():
    env = os.environ.get("CXLA_LIBRARY")
    if env:
        yield env
    here = os.path.dirname(os.path.abspath(__file__))
    for up in (2, 3, 4):
        base = here
        for _ in range(up):
            base = os.path.dirname(base)
        yield os.path.join(base, "libcxla.so")
        yield os.path.join(base, "lib", "libcxla.so")
    found = ctypes.util.find_library("cxla")
    if found:
        yield found
    repo = os.path.dirname(os.path.dirname(here))
    yield os.path.join(repo, "build", "libcxla.so")


def _load():
    errors = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            continue
        try:
            return _c.CDLL(path)
        except OSError as e:
            errors.append("%s: %s" % (path, e))
    raise ImportError("cxla: libcxla.so not found (set CXLA_LIBRARY to its path)"
                      + ("; tried " + "; ".join(errors) if errors else ""))


lib = _load()

_P = _c.c_void_p


def _fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


status_message = _fn("cxla_status_message", _c.c_char_p, _P)
status_code = _fn("cxla_status_code_of", _c.c_int, _P)
status_destroy = _fn("cxla_status_destroy", None, _P)
type_name = _fn("cxla_type_name", _c.c_char_p, _c.c_int)
client_options_init = _fn("cxla_client_options_init", None, _c.POINTER(ClientOptions))
client_create = _fn("cxla_client_create", _P, _c.POINTER(ClientOptions), _c.POINTER(_P))
client_destroy = _fn("cxla_client_destroy", None, _P)
client_backend = _fn("cxla_client_backend", _c.c_char_p, _P)
default_backend = _fn("cxla_default_backend", _P, _c.POINTER(_c.c_char_p), _c.c_char_p,
                      _c.c_size_t)
compile_hlo_text = _fn("cxla_client_compile_hlo_text", _P, _P, _c.c_char_p, _c.c_size_t,
                       _c.c_char_p, _c.POINTER(_P))
compile_stablehlo_text = _fn("cxla_client_compile_stablehlo_text", _P, _P, _c.c_char_p,
                             _c.c_size_t, _c.c_char_p, _c.POINTER(_P))
looks_like_mlir = _fn("cxla_stablehlo_looks_like_mlir", _c.c_bool, _c.c_char_p, _c.c_size_t)
looks_like_proto = _fn("cxla_hlo_looks_like_proto", _c.c_bool, _c.c_char_p, _c.c_size_t)
executable_destroy = _fn("cxla_executable_destroy", None, _P)
parameter_count = _fn("cxla_executable_parameter_count", _c.c_int64, _P)
parameter_shape = _fn("cxla_executable_parameter_shape", _c.POINTER(Shape), _P, _c.c_int64)
result_shape = _fn("cxla_executable_result_shape", _c.POINTER(Shape), _P)
run_options_init = _fn("cxla_run_options_init", None, _c.POINTER(RunOptions))
run_buffers = _fn("cxla_executable_run_buffers", _P, _P, _c.POINTER(RunOptions),
                  _c.POINTER(Buffer), _c.c_int64, _c.POINTER(Buffer), _c.c_int64)
device_count = _fn("cxla_executable_device_count", _P, _P, _c.POINTER(RunOptions),
                   _c.POINTER(_c.c_int64))
execute = _fn("cxla_executable_execute", _P, _P, _c.POINTER(RunOptions),
              _c.POINTER(_c.POINTER(_P)), _c.c_int64, _c.POINTER(_P))
shape_create_array = _fn("cxla_shape_create_array", _P, _c.c_int, _c.c_int64,
                         _c.POINTER(_c.c_int64), _c.POINTER(_c.POINTER(Shape)))
shape_destroy = _fn("cxla_shape_destroy", None, _c.POINTER(Shape))
literal_create = _fn("cxla_literal_create", _P, _c.POINTER(Shape), _c.POINTER(_P))
literal_destroy = _fn("cxla_literal_destroy", None, _P)
literal_shape = _fn("cxla_literal_shape", _c.POINTER(Shape), _P)
literal_data = _fn("cxla_literal_data", _P, _P)
literal_byte_size = _fn("cxla_literal_byte_size", _c.c_size_t, _P)
literal_tuple_count = _fn("cxla_literal_tuple_count", _c.c_int64, _P)
literal_tuple_element = _fn("cxla_literal_tuple_element", _P, _P, _c.c_int64)
literal_to_static = _fn("cxla_literal_to_static", _P, _P, _c.POINTER(_P))
literal_parse = _fn("cxla_literal_parse", _P, _c.c_char_p, _c.c_size_t, _P, _c.POINTER(_P))
hlo_parse = _fn("cxla_hlo_parse", _P, _c.c_char_p, _c.c_size_t, _c.c_char_p, _c.POINTER(_P))
hlo_verify = _fn("cxla_hlo_verify", _P, _P)
hlo_print = _fn("cxla_hlo_print", _P, _P, _c.c_int)
hlo_write_proto = _fn("cxla_hlo_write_proto", _P, _P, _c.POINTER(_P), _c.POINTER(_c.c_size_t))
module_destroy = _fn("cxla_module_destroy", None, _P)
libc_free = _c.CDLL(None).free
libc_free.argtypes = [_P]
libc_free.restype = None

# cxla_type numbers by name, asked of the library (its enum is the reference).
TYPES = {}
for _i in range(1, 64):
    _n = type_name(_i).decode()
    if _n == "invalid":
        break
    TYPES[_n] = _i
