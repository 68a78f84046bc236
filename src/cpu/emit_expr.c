/* Scalar expressions of the emitter: what one element of an elementwise operation is in
 * C, per operation and element type, mirroring the interpreter's kernels
 * (src/interp/interp_elementwise_*.c) rule for rule. Values live in C as their "compute
 * type" (cpu_emit_ctype): the integers and pred as themselves, f32/f64 as float/double,
 * f16/bf16/f8/f4 as their bits (so that moving them keeps NaN payloads, as the
 * interpreter's copies do); arithmetic on them decodes to f32, computes and encodes
 * (rounds) the result (emit.c). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_math.h"
#include "cpu/emit_internal.h"
#include "exec/math.h"

bool cpu_emit_type_ok(cxla_type t) {
    switch (cxla_type_class_of(t)) {
    case CXLA_CLASS_PRED: return true;
    case CXLA_CLASS_SIGNED:
    case CXLA_CLASS_UNSIGNED: return cxla_type_bits(t) >= 8;
    case CXLA_CLASS_FLOAT: return true;
    default: return false; /* complex, tokens, tuples */
    }
}

bool cpu_emit_is_small(cxla_type t) {
    return cxla_type_is_small_float(t);
}

static bool is_int_like(cxla_type t) {
    return t == CXLA_PRED || cxla_type_is_integer(t);
}

const char *cpu_emit_ctype(cxla_type t) {
    switch (t) {
    case CXLA_PRED: return "uint8_t";
    case CXLA_S8: return "int8_t";
    case CXLA_S16: return "int16_t";
    case CXLA_S32: return "int32_t";
    case CXLA_S64: return "int64_t";
    case CXLA_U8: return "uint8_t";
    case CXLA_U16: return "uint16_t";
    case CXLA_U32: return "uint32_t";
    case CXLA_U64: return "uint64_t";
    case CXLA_F64: return "double";
    case CXLA_F32: return "float";
    case CXLA_C64: return "cxla_c64"; /* {float re, im}: the layout of the element */
    case CXLA_S4:
    case CXLA_S2:
    case CXLA_S1: return "int8_t"; /* sub-byte integers: one per byte, sign-extended */
    case CXLA_C128: return "cxla_c128";
    default: return cxla_type_storage(t) == 2 ? "uint16_t" : "uint8_t"; /* small floats: bits */
    }
}

const char *cpu_emit_stype(cxla_type t) {
    if (t == CXLA_F32) return "float";
    if (cpu_emit_is_small(t)) return cxla_type_storage(t) == 2 ? "uint16_t" : "uint8_t";
    return cpu_emit_ctype(t);
}

/* The unsigned twin and the signed twin of an integer type (pred: uint8_t). */
static const char *utype(cxla_type t) {
    switch (cxla_type_storage(t)) {
    case 1: return "uint8_t";
    case 2: return "uint16_t";
    case 4: return "uint32_t";
    default: return "uint64_t";
    }
}

static const char *stype_signed(cxla_type t) {
    switch (cxla_type_storage(t)) {
    case 1: return "int8_t";
    case 2: return "int16_t";
    case 4: return "int32_t";
    default: return "int64_t";
    }
}

/* The wrapping arithmetic type: at least unsigned int (no undefined overflow). */
static const char *wtype(cxla_type t) {
    switch (cxla_type_storage(t)) {
    case 1:
    case 2: return "unsigned";
    case 4: return "uint32_t";
    default: return "uint64_t";
    }
}

/* Set when a piece of text could not be made (memory was short): the kernel being emitted
 * holds a placeholder there and must not be compiled (cpu_emit_kernel_info fails). */
static _Thread_local bool fmt_failed;

void cpu_emit_fmt_reset(void) {
    fmt_failed = false;
}

bool cpu_emit_fmt_failed(void) {
    return fmt_failed;
}

void cpu_emit_buf_free(cxla_strbuf *b) {
    if (b->failed) fmt_failed = true;
    cxla_strbuf_free(b);
}

char *cpu_emit_fmt(cxla_arena *arena, const char *format, ...) {
    va_list args;
    va_start(args, format);
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_strbuf_vprintf(&b, format, args);
    va_end(args);
    char *s = b.failed || !b.data ? NULL : cxla_arena_strndup(arena, b.data, b.len);
    cxla_strbuf_free(&b);
    if (!s) fmt_failed = true;
    return s ? s : (char *)"0 /* out of memory */";
}

#define F(...) cpu_emit_fmt(arena, __VA_ARGS__)

/* ---- the switch point for math functions ------------------------------------------- */

/* The C expression of unary math operation |op| on |x| of real float type |t| (f32 and
 * the small floats as float, f64 as double): the list of exec/math.h that the interpreter
 * reads, f32 computed in double and rounded once. This is the one place that says how a
 * transcendental is computed: swap in cxla_f32_<fn> (src/cpu/cxla_math.h) here. NULL when
 * |op| is not a math function. */
bool cpu_emit_fast_math(void) {
    const char *v = getenv("CXLA_CPU_EXACT_MATH");
    return !(v && *v && strcmp(v, "0") != 0);
}

/* Set while emitting an operation on a small float type whose encoding keeps a NaN's
 * sign or has no NaN (f8e4m3fnuz, f4e2m1fn, ...): there the NaN of an invalid argument
 * becomes a number whose sign depends on the NaN's, and the fast functions' NaNs need not
 * carry libm's sign, so those types keep the interpreter's libm expressions. */
static _Thread_local bool exact_for_type;

void cpu_emit_math_type(cxla_type t) {
    exact_for_type = t != CXLA_F32 && t != CXLA_BF16 && t != CXLA_F16;
}

static const char *math_call(cxla_arena *arena, cxla_opcode op, cxla_type t, const char *x) {
    /* exec/math.h's list: the libm function, or (NULL) a helper written out below. */
    const exec_math_info *mi = exec_math_unary(op);
    if (!mi) return NULL;
    /* f32 (and the small floats, computed in f32): the fast functions of cxla_math.h,
     * within their documented bound of the interpreter (docs/semantics.md). */
    const char *fast =
        t == CXLA_F32 && !exact_for_type && cpu_emit_fast_math() ? cpu_math_f32_function(op) : NULL;
    if (fast && arena) return F("%s(%s)", fast, x);
    const char *fn = mi->libm_f64;
    bool written = op == CXLA_OP_NEGATE || op == CXLA_OP_SIGN || op == CXLA_OP_LOGISTIC ||
                   op == CXLA_OP_RSQRT || op == CXLA_OP_REAL || op == CXLA_OP_IMAG;
    if (!fn && !written) return NULL; /* a helper of exec/math.h not written below yet */
    if (!arena) return "";            /* asked only whether |op| is a math function */
    bool f64 = t == CXLA_F64;
    const char *d = f64 ? x : F("(double)%s", x); /* the argument in double */
    const char *e;
    switch (op) {
    case CXLA_OP_NEGATE: e = F("-%s", d); break;
    case CXLA_OP_SIGN: e = F("cxla_sign_f64(%s)", d); break;
    case CXLA_OP_LOGISTIC: e = F("1.0 / (1.0 + exp(-%s))", d); break;
    case CXLA_OP_RSQRT: e = F("1.0 / sqrt(%s)", d); break;
    case CXLA_OP_REAL: e = d; break;
    case CXLA_OP_IMAG: e = F("((void)%s, 0.0)", d); break; /* reads x: no unused variable */
    default: e = F("%s(%s)", fn, d); break;
    }
    return f64 ? e : F("(float)(%s)", e);
}

/* ---- which operations apply to which types (as the interpreter's handlers) ---------- */

/* ---- complex numbers ------------------------------------------------------------------
 *
 * c64 and c128 are held as cxla_c64 / cxla_c128, structs of two floats or doubles (the
 * element's layout, so arrays of them are the buffers), with the arithmetic written out
 * (no <complex.h>: tcc has none) in the interpreter's formulas
 * (src/interp/interp_elementwise_float.c): add and subtract by parts; multiply as
 * (ar br - ai bi) + (ar bi + ai br) i from four rounded products; divide by Smith's
 * algorithm with C99's corner cases, in the component precision; abs as hypot in double
 * (rounded once for c64); sign as z / hypot(z) in double (0 for 0); negate, real, imag by
 * parts; compare EQ and NE by parts. The transcendental functions (exp, log, sqrt, pow,
 * atan2, ...) are C99's complex functions (<complex.h>, Annex G) in the interpreter,
 * evaluated in double complex: the generated code calls the same libm functions through the
 * same formulas (cpu_emit_complex_helpers), so the results are the interpreter's bit for
 * bit. <complex.h> is optional in C11 and tcc has none: a kernel that needs it is guarded
 * by an #error naming the function (cpu_emit_complex_libm_guard). */

/* The complex functions of the interpreter (interp_elementwise_float.c's complex_fn,
 * cpower and catan2) and the C of each: a libm function of <complex.h> or a helper of
 * cpu_emit_complex_helpers written as the interpreter writes it. */
static const struct {
    cxla_opcode op;
    const char *c;
} complex_fns[] = {
    {CXLA_OP_EXP, "cexp"},
    {CXLA_OP_EXPM1, "cxla_cd_expm1"},
    {CXLA_OP_LOG, "clog"},
    {CXLA_OP_LOG1P, "cxla_cd_log1p"},
    {CXLA_OP_LOGISTIC, "cxla_cd_logistic"},
    {CXLA_OP_SQRT, "csqrt"},
    {CXLA_OP_RSQRT, "cxla_cd_rsqrt"},
    {CXLA_OP_CBRT, "cxla_cd_cbrt"},
    {CXLA_OP_SIN, "csin"},
    {CXLA_OP_COS, "ccos"},
    {CXLA_OP_TAN, "ctan"},
    {CXLA_OP_TANH, "ctanh"},
    {CXLA_OP_ACOS, "cacos"},
    {CXLA_OP_ACOSH, "cacosh"},
    {CXLA_OP_ASIN, "casin"},
    {CXLA_OP_ASINH, "casinh"},
    {CXLA_OP_ATAN, "catan"},
    {CXLA_OP_ATANH, "catanh"},
    {CXLA_OP_COSH, "ccosh"},
    {CXLA_OP_SINH, "csinh"},
    {CXLA_OP_POWER, "cxla_cd_pow"},
    {CXLA_OP_ATAN2, "cxla_cd_atan2"},
};

static const char *complex_fn(cxla_opcode op) {
    for (size_t i = 0; i < sizeof complex_fns / sizeof complex_fns[0]; i++)
        if (complex_fns[i].op == op) return complex_fns[i].c;
    return NULL;
}

/* The <complex.h> function a kernel being emitted calls (NULL: none), and the operation
 * and type it computes, for cpu_emit_complex_libm_guard. Per thread, as fmt_failed. */
static _Thread_local const char *libm_fn;
static _Thread_local cxla_opcode libm_op;
static _Thread_local cxla_type libm_type;

void cpu_emit_complex_libm_reset(void) {
    libm_fn = NULL;
}

void cpu_emit_complex_libm_guard(const char *kernel, cxla_strbuf *out, size_t at) {
    if (!libm_fn || out->failed || at > out->len) return;
    cxla_strbuf g;
    cxla_strbuf_init(&g);
    cxla_strbuf_printf(&g,
                       "#ifndef CXLA_HAVE_COMPLEX\n"
                       "#error \"cxla: kernel %s computes %s of %s with C99's <complex.h> (%s), "
                       "which this C compiler lacks (tcc, or __STDC_NO_COMPLEX__): compile it "
                       "with gcc or clang\"\n"
                       "#endif\n",
                       kernel, cxla_opcode_name(libm_op), cxla_type_name(libm_type), libm_fn);
    cxla_strbuf_append(&g, out->data + at, out->len - at); /* the kernel after it */
    if (g.failed) {
        out->failed = true;
    } else {
        out->len = at;
        out->data[at] = 0;
        cxla_strbuf_append(out, g.data, g.len);
    }
    cxla_strbuf_free(&g);
}

bool cpu_emit_complex_unary_ok(cxla_opcode op) {
    switch (op) {
    case CXLA_OP_COPY:
    case CXLA_OP_NEGATE:
    case CXLA_OP_ABS:
    case CXLA_OP_REAL:
    case CXLA_OP_IMAG:
    case CXLA_OP_SIGN: return true;
    default: return complex_fn(op) != NULL && op != CXLA_OP_POWER && op != CXLA_OP_ATAN2;
    }
}

bool cpu_emit_complex_binary_ok(cxla_opcode op) {
    return op == CXLA_OP_ADD || op == CXLA_OP_SUBTRACT || op == CXLA_OP_MULTIPLY ||
           op == CXLA_OP_DIVIDE || op == CXLA_OP_POWER || op == CXLA_OP_ATAN2;
}

/* |op| on complex |x| (and |y|) of type |t| (NULL: not emitted). */
static const char *complex_expr(cxla_arena *arena, cxla_opcode op, cxla_type t, const char *x,
                                const char *y) {
    const char *n = t == CXLA_C64 ? "c64" : "c128";
    switch (op) {
    case CXLA_OP_COPY: return x;
    case CXLA_OP_NEGATE: return F("cxla_%s_neg(%s)", n, x);
    case CXLA_OP_ABS: return F("cxla_%s_abs(%s)", n, x);
    case CXLA_OP_REAL: return F("(%s).re", x);
    case CXLA_OP_IMAG: return F("(%s).im", x);
    case CXLA_OP_SIGN: return F("cxla_%s_sign(%s)", n, x);
    case CXLA_OP_ADD: return F("cxla_%s_add(%s, %s)", n, x, y);
    case CXLA_OP_SUBTRACT: return F("cxla_%s_sub(%s, %s)", n, x, y);
    case CXLA_OP_MULTIPLY: return F("cxla_%s_mul(%s, %s)", n, x, y);
    case CXLA_OP_DIVIDE: return F("cxla_%s_div(%s, %s)", n, x, y);
    default: break;
    }
    /* A function of <complex.h>: in double complex, as the interpreter (c64 widened exactly,
     * each part of the result rounded once). */
    const char *fn = complex_fn(op);
    if (!fn) return NULL;
    if (!libm_fn) {
        libm_fn = strncmp(fn, "cxla_", 5) == 0 ? "cexp, clog, csqrt, cpow" : fn;
        libm_op = op;
        libm_type = t;
    }
    if (y) return F("cxla_cd_%s(%s(cxla_%s_cd(%s), cxla_%s_cd(%s)))", n, fn, n, x, n, y);
    return F("cxla_cd_%s(%s(cxla_%s_cd(%s)))", n, fn, n, x);
}

/* The text of the helpers for one complex type: |N| its name (c64), |T| its part's type,
 * |R| the rounding of a double to it, |S| the suffix of its libm functions. */
#define COMPLEX_HELPERS(N, T, R, S)                                                                \
    "typedef struct cxla_" N " {\n    " T " re, im;\n} cxla_" N ";\n"                              \
    "static inline cxla_" N " cxla_" N "_make(" T " re, " T " im) {\n"                             \
    "    cxla_" N " z;\n    z.re = re;\n    z.im = im;\n    return z;\n}\n"                        \
    "static inline cxla_" N " cxla_" N "_bits(" T "_bits_t re, " T "_bits_t im);\n"                \
    "static inline cxla_" N " cxla_" N "_add(cxla_" N " a, cxla_" N " b) {\n"                      \
    "    return cxla_" N "_make(a.re + b.re, a.im + b.im);\n}\n"                                   \
    "static inline cxla_" N " cxla_" N "_sub(cxla_" N " a, cxla_" N " b) {\n"                      \
    "    return cxla_" N "_make(a.re - b.re, a.im - b.im);\n}\n"                                   \
    "static inline cxla_" N " cxla_" N "_neg(cxla_" N " a) {\n"                                    \
    "    return cxla_" N "_make(-a.re, -a.im);\n}\n"                                               \
    "static inline cxla_" N " cxla_" N "_mul(cxla_" N " a, cxla_" N " b) {\n"                      \
    "    " T " rr = a.re * b.re, ii = a.im * b.im, ri = a.re * b.im, ir = a.im * b.re;\n"          \
    "    CXLA_ROUNDED(" T ", rr);\n    CXLA_ROUNDED(" T ", ii);\n"                                 \
    "    CXLA_ROUNDED(" T ", ri);\n    CXLA_ROUNDED(" T ", ir);\n"                                 \
    "    return cxla_" N "_make(rr - ii, ri + ir);\n}\n"                                           \
    "static inline " T " cxla_" N "_abs(cxla_" N " a) {\n"                                         \
    "    return " R "hypot((double)a.re, (double)a.im);\n}\n"                                      \
    "static inline cxla_" N " cxla_" N "_sign(cxla_" N " a) {\n"                                   \
    "    double r = hypot((double)a.re, (double)a.im);\n"                                          \
    "    if (r == 0) return cxla_" N "_make(0, 0);\n"                                              \
    "    return cxla_" N "_make(" R "((double)a.re / r), " R "((double)a.im / r));\n}\n"           \
    "static inline uint8_t cxla_" N "_eq(cxla_" N " a, cxla_" N " b) {\n"                          \
    "    return (uint8_t)(a.re == b.re && a.im == b.im);\n}\n"                                     \
    "static inline cxla_" N " cxla_" N "_div(cxla_" N " a, cxla_" N " b) {\n"                      \
    "    " T " ar = a.re, ai = a.im, br = b.re, bi = b.im, rr, ri;\n"                              \
    "    if (fabs" S "(br) < fabs" S "(bi)) {\n"                                                   \
    "        " T " ratio = br / bi, denom = bi + br * ratio;\n"                                    \
    "        rr = (ratio * ar + ai) / denom;\n"                                                    \
    "        ri = (ratio * ai - ar) / denom;\n"                                                    \
    "    } else {\n"                                                                               \
    "        " T " ratio = bi / br, denom = br + bi * ratio;\n"                                    \
    "        rr = (ratio * ai + ar) / denom;\n"                                                    \
    "        ri = (ai - ratio * ar) / denom;\n"                                                    \
    "    }\n"                                                                                      \
    "    if (isnan(rr) && isnan(ri)) {\n"                                                          \
    "        if (br == 0 && bi == 0 && (!isnan(ar) || !isnan(ai))) {\n"                            \
    "            " T " inf = copysign" S "(INFINITY, br);\n"                                       \
    "            rr = inf * ar;\n"                                                                 \
    "            ri = inf * ai;\n"                                                                 \
    "        } else if ((isinf(ar) || isinf(ai)) && isfinite(br) && isfinite(bi)) {\n"             \
    "            " T " sr = copysign" S "(isinf(ar) ? 1 : 0, ar);\n"                               \
    "            " T " si = copysign" S "(isinf(ai) ? 1 : 0, ai);\n"                               \
    "            rr = INFINITY * (sr * br + si * bi);\n"                                           \
    "            ri = INFINITY * (si * br - sr * bi);\n"                                           \
    "        } else if ((isinf(br) || isinf(bi)) && isfinite(ar) && isfinite(ai)) {\n"             \
    "            " T " sr = copysign" S "(isinf(br) ? 1 : 0, br);\n"                               \
    "            " T " si = copysign" S "(isinf(bi) ? 1 : 0, bi);\n"                               \
    "            rr = 0 * (ar * sr + ai * si);\n"                                                  \
    "            ri = 0 * (ai * sr - ar * si);\n"                                                  \
    "        }\n"                                                                                  \
    "    }\n"                                                                                      \
    "    return cxla_" N "_make(rr, ri);\n}\n"

/* The complex functions in double complex, where the compiler has <complex.h> (gcc,
 * clang; not tcc, which claims C99 but has no _Complex): the interpreter's formulas
 * (src/interp/interp_elementwise_float.c) line for line, with C's complex arithmetic where
 * it uses it (the product in atan2 is C's: the textbook product, rounded as
 * cxla_c128_mul rounds it, and Annex G's recovery (__muldc3) when both parts are NaN) and
 * the mixed real-complex operations of C by parts. cxla_cd_div is the interpreter's
 * division (cxla_c128_div). complex.h's macros complex and I are undefined: generated names
 * may be those. One string per line (ISO C bounds a string literal's length). */
static const char *const complex_libm_lines[] = {
    "#if !defined(__STDC_NO_COMPLEX__) && !defined(__TINYC__)\n",
    "#include <complex.h>\n",
    "#undef complex\n",
    "#undef imaginary\n",
    "#undef I\n",
    "#define CXLA_HAVE_COMPLEX 1\n",
    "typedef double _Complex cxla_cd;\n",
    "static inline cxla_cd cxla_cd_make(double re, double im) {\n",
    "    double p[2];\n",
    "    cxla_cd z;\n",
    "    p[0] = re;\n",
    "    p[1] = im;\n",
    "    memcpy(&z, p, sizeof z);\n",
    "    return z;\n",
    "}\n",
    "static inline cxla_cd cxla_c64_cd(cxla_c64 z) {\n",
    "    return cxla_cd_make((double)z.re, (double)z.im);\n",
    "}\n",
    "static inline cxla_cd cxla_c128_cd(cxla_c128 z) {\n",
    "    return cxla_cd_make(z.re, z.im);\n",
    "}\n",
    "static inline cxla_c64 cxla_cd_c64(cxla_cd z) {\n",
    "    return cxla_c64_make((float)creal(z), (float)cimag(z));\n",
    "}\n",
    "static inline cxla_c128 cxla_cd_c128(cxla_cd z) {\n",
    "    return cxla_c128_make(creal(z), cimag(z));\n",
    "}\n",
    "static inline cxla_cd cxla_cd_div(cxla_cd a, cxla_cd b) {\n",
    "    cxla_c128 r =\n",
    "        cxla_c128_div(cxla_c128_make(creal(a), cimag(a)), cxla_c128_make(creal(b), "
    "cimag(b)));\n",
    "    return cxla_cd_make(r.re, r.im);\n",
    "}\n",
    "static inline cxla_cd cxla_cd_expm1(cxla_cd z) {\n",
    "    double x = creal(z), y = cimag(z), s;\n",
    "    if (y == 0) return cxla_cd_make(expm1(x), y);\n",
    "    s = sin(y / 2);\n",
    "    return cxla_cd_make(expm1(x) * cos(y) - 2 * s * s, exp(x) * sin(y));\n",
    "}\n",
    "static inline cxla_cd cxla_cd_log1p(cxla_cd z) {\n",
    "    double a = creal(z), b = cimag(z);\n",
    "    if (fabs(a) < 0.5 && fabs(b) < 0.5)\n",
    "        return cxla_cd_make(0.5 * log1p(a * a + 2 * a + b * b), atan2(b, a + 1));\n",
    "    return clog(cxla_cd_make(1 + a, b));\n",
    "}\n",
    "static inline cxla_cd cxla_cd_logistic(cxla_cd z) {\n",
    "    cxla_cd e = cexp(cxla_cd_make(-creal(z), -cimag(z)));\n",
    "    return cxla_cd_div(cxla_cd_make(1, 0), cxla_cd_make(1 + creal(e), cimag(e)));\n",
    "}\n",
    "static inline cxla_cd cxla_cd_rsqrt(cxla_cd z) {\n",
    "    return cxla_cd_div(cxla_cd_make(1, 0), csqrt(z));\n",
    "}\n",
    "static inline cxla_cd cxla_cd_cbrt(cxla_cd z) {\n",
    "    cxla_cd l;\n",
    "    if (creal(z) == 0 && cimag(z) == 0) return z;\n",
    "    l = clog(z);\n",
    "    return cexp(cxla_cd_make(creal(l) / 3, cimag(l) / 3));\n",
    "}\n",
    "static inline cxla_cd cxla_cd_pow(cxla_cd x, cxla_cd y) {\n",
    "    if ((creal(x) == 1 && cimag(x) == 0) || (creal(y) == 0 && cimag(y) == 0))\n",
    "        return cxla_cd_make(1, 0);\n",
    "    if (cimag(x) == 0 && isinf(creal(x)) && creal(x) > 0 && cimag(y) == 0) {\n",
    "        if (creal(y) > 0) return x;\n",
    "        if (creal(y) < 0) return cxla_cd_make(0, 0);\n",
    "    }\n",
    "    return cpow(x, y);\n",
    "}\n",
    "static inline cxla_cd cxla_cd_mul(cxla_cd a, cxla_cd b) {\n",
    "    cxla_c128 r = cxla_c128_mul(cxla_c128_make(creal(a), cimag(a)),\n",
    "                                cxla_c128_make(creal(b), cimag(b)));\n",
    "    if (isnan(r.re) && isnan(r.im)) return a * b; /* Annex G's recovery (__muldc3) */\n",
    "    return cxla_cd_make(r.re, r.im);\n",
    "}\n",
    "static inline cxla_cd cxla_cd_atan2(cxla_cd y, cxla_cd x) {\n",
    "    cxla_cd xx = cxla_cd_mul(x, x), yy = cxla_cd_mul(y, y);\n",
    "    cxla_cd s = csqrt(cxla_cd_make(creal(xx) + creal(yy), cimag(xx) + cimag(yy)));\n",
    "    cxla_cd v = clog(cxla_cd_div(cxla_cd_make(creal(x) - cimag(y), cimag(x) + creal(y)), "
    "s));\n",
    "    return cxla_cd_make(cimag(v), -creal(v));\n",
    "}\n",
    "#endif\n",
    NULL,
};

void cpu_emit_complex_helpers(cxla_strbuf *out) {
    /* The products of a complex multiply are rounded before they are added: GCC 12's SLP
     * vectorizer turns the pair (a*b - c, d*e + f) into one vfmaddsub even under
     * -ffp-contract=off (1 ulp from the interpreter's product, seen with -march=native), so
     * each product passes through an empty asm (GCC and Clang on x86 and AArch64) or a
     * volatile (elsewhere, and in portable output: no extensions). */
    cxla_strbuf_puts(out,
                     "#if !defined(CXLA_PORTABLE) && defined(__GNUC__) && (defined(__x86_64__) || "
                     "defined(__i386__))\n"
                     "#define CXLA_ROUNDED(T, v) __asm__(\"\" : \"+x\"(v))\n"
                     "#elif !defined(CXLA_PORTABLE) && defined(__GNUC__) && defined(__aarch64__)\n"
                     "#define CXLA_ROUNDED(T, v) __asm__(\"\" : \"+w\"(v))\n"
                     "#else\n"
                     "#define CXLA_ROUNDED(T, v)                                                   "
                     "           \\\n"
                     "    do {                                                                     "
                     "          \\\n"
                     "        volatile T cxla_rounded_ = (v);                                      "
                     "          \\\n"
                     "        (v) = cxla_rounded_;                                                 "
                     "          \\\n"
                     "    } while (0)\n"
                     "#endif\n");
    /* A constant's parts are their bits (NaN payloads and -0 survive, as for real floats). */
    cxla_strbuf_puts(out, "typedef uint32_t float_bits_t;\ntypedef uint64_t double_bits_t;\n");
    cxla_strbuf_puts(out, COMPLEX_HELPERS("c64", "float", "(float)", "f"));
    cxla_strbuf_puts(out, COMPLEX_HELPERS("c128", "double", "", ""));
    cxla_strbuf_puts(out,
                     "static inline cxla_c64 cxla_c64_bits(uint32_t re, uint32_t im) {\n"
                     "    return cxla_c64_make(cxla_f32_from_bits(re), cxla_f32_from_bits(im));\n"
                     "}\n"
                     "static inline cxla_c128 cxla_c128_bits(uint64_t re, uint64_t im) {\n"
                     "    return cxla_c128_make(cxla_f64_from_bits(re), cxla_f64_from_bits(im));\n"
                     "}\n");
    for (const char *const *l = complex_libm_lines; *l; l++) cxla_strbuf_puts(out, *l);
}

/* ---- sub-byte integers ----------------------------------------------------------------
 *
 * s4, u4, s2, u2 (s1, u1) as the interpreter stores them: one element per byte, the value
 * sign-extended (signed) or zero-extended (unsigned), so a byte is the element's value in
 * int8_t / uint8_t. Arithmetic computes as for 8-bit integers and wraps the result back to
 * the type's width (narrow); operations that look at the bits (popcnt, clz, logical and
 * arithmetic right shifts) take the low |bits| bits first. Only elementwise kernels and
 * data movement take them (emit.c); the library-like kernels still refuse them. */

bool cpu_emit_subbyte(cxla_type t) {
    return cxla_type_is_integer(t) && cxla_type_bits(t) < 8;
}

/* |x| wrapped to sub-byte type |t| (other types unchanged). */
static const char *narrow(cxla_arena *arena, cxla_type t, const char *x) {
    if (!x || !cpu_emit_subbyte(t)) return x;
    unsigned bits = (unsigned)cxla_type_bits(t), m = (1u << bits) - 1, sb = 1u << (bits - 1);
    if (cxla_type_is_signed(t))
        return F("(int8_t)((int)(((unsigned)(%s) & %uu) ^ %uu) - %d)", x, m, sb, (int)sb);
    return F("(uint8_t)((unsigned)(%s) & %uu)", x, m);
}

/* The low |bits| bits of sub-byte |x| as an unsigned value, and as a signed one. */
static const char *low_bits(cxla_arena *arena, cxla_type t, const char *x) {
    return F("((unsigned)(%s) & %uu)", x, (1u << cxla_type_bits(t)) - 1);
}

static const char *sign_extended(cxla_arena *arena, cxla_type t, const char *x) {
    unsigned bits = (unsigned)cxla_type_bits(t), sb = 1u << (bits - 1);
    return F("((int)(((unsigned)(%s) & %uu) ^ %uu) - %d)", x, (1u << bits) - 1, sb, (int)sb);
}

bool cpu_emit_unary_ok(cxla_opcode op, cxla_type t) {
    if (cxla_type_is_complex(t)) return cpu_emit_complex_unary_ok(op);
    if (!cpu_emit_type_ok(t) && !cpu_emit_subbyte(t)) return false;
    bool integer = cxla_type_is_integer(t), flt = cxla_type_is_float(t);
    switch (op) {
    case CXLA_OP_COPY: return true;
    case CXLA_OP_NOT: return is_int_like(t);
    case CXLA_OP_POPCNT:
    case CXLA_OP_CLZ: return integer;
    case CXLA_OP_NEGATE:
    case CXLA_OP_ABS:
    case CXLA_OP_SIGN: return integer || flt;
    case CXLA_OP_IS_FINITE: return flt;
    default: return flt && math_call(NULL, op, CXLA_F64, "x") != NULL;
    }
}

bool cpu_emit_binary_ok(cxla_opcode op, cxla_type t) {
    if (cxla_type_is_complex(t)) return cpu_emit_complex_binary_ok(op);
    if (!cpu_emit_type_ok(t) && !cpu_emit_subbyte(t)) return false;
    bool integer = cxla_type_is_integer(t), pred = t == CXLA_PRED, flt = cxla_type_is_float(t);
    switch (op) {
    case CXLA_OP_ADD:
    case CXLA_OP_MULTIPLY: return true;
    case CXLA_OP_SUBTRACT:
    case CXLA_OP_DIVIDE:
    case CXLA_OP_POWER: return integer || flt;
    case CXLA_OP_REMAINDER: return integer || flt;
    case CXLA_OP_MAXIMUM:
    case CXLA_OP_MINIMUM: return integer || flt || pred;
    case CXLA_OP_ATAN2: return flt;
    case CXLA_OP_AND:
    case CXLA_OP_OR:
    case CXLA_OP_XOR: return integer || pred;
    case CXLA_OP_SHIFT_LEFT:
    case CXLA_OP_SHIFT_RIGHT_ARITHMETIC:
    case CXLA_OP_SHIFT_RIGHT_LOGICAL:
    case CXLA_OP_MULHI: return integer;
    default: return false;
    }
}

/* ---- expressions --------------------------------------------------------------------- */

const char *cpu_emit_unary(cxla_arena *arena, cxla_opcode op, cxla_type t, const char *x) {
    if (op == CXLA_OP_COPY) return x;
    if (cxla_type_is_complex(t)) return complex_expr(arena, op, t, x, NULL);
    if (cxla_type_is_float(t)) {
        if (op == CXLA_OP_IS_FINITE) return F("(uint8_t)(isfinite(%s) != 0)", x);
        return math_call(arena, op, t, x);
    }
    if (cpu_emit_subbyte(t)) {
        /* The value computed as an 8-bit one from the low bits where they matter, then
         * wrapped to the width. */
        const char *y = op == CXLA_OP_POPCNT || op == CXLA_OP_CLZ ? low_bits(arena, t, x) : x;
        cxla_type t8 = cxla_type_is_signed(t) ? CXLA_S8 : CXLA_U8;
        const char *e = cpu_emit_unary(arena, op, t8, y);
        if (e && op == CXLA_OP_CLZ) /* clz counts within the width */
            e = F("(%s - %d)", e, 8 - cxla_type_bits(t));
        return narrow(arena, t, e);
    }
    const char *T = cpu_emit_ctype(t), *UT = utype(t), *WT = wtype(t);
    int bits = cxla_type_bits(t);
    bool sgn = cxla_type_is_signed(t);
    switch (op) {
    case CXLA_OP_NEGATE: return F("(%s)(0u - (%s)%s)", T, WT, x);
    case CXLA_OP_ABS: return sgn ? F("(%s < 0 ? (%s)(0u - (%s)%s) : %s)", x, T, WT, x, x) : x;
    case CXLA_OP_SIGN:
        return sgn ? F("(%s)(%s < 0 ? -1 : %s != 0)", T, x, x) : F("(%s)(%s != 0)", T, x);
    case CXLA_OP_NOT:
        return t == CXLA_PRED ? F("(uint8_t)(%s == 0)", x) : F("(%s)~(%s)%s", T, WT, x);
    case CXLA_OP_POPCNT: return F("(%s)cxla_popcount64((uint64_t)(%s)%s)", T, UT, x);
    case CXLA_OP_CLZ:
        return F("(%s)(%s ? cxla_clz64((uint64_t)(%s)%s) - %d : %d)", T, x, UT, x, 64 - bits, bits);
    default: return NULL;
    }
}

const char *cpu_emit_binary(cxla_arena *arena, cxla_opcode op, cxla_type t, const char *a,
                            const char *b) {
    if (cxla_type_is_complex(t)) return complex_expr(arena, op, t, a, b);
    if (cxla_type_is_float(t)) {
        bool f64 = t == CXLA_F64;
        const char *sfx = f64 ? "f64" : "f32";
        const char *da = f64 ? a : F("(double)%s", a), *db = f64 ? b : F("(double)%s", b);
        const char *cast = f64 ? "" : "(float)";
        switch (op) {
        case CXLA_OP_ADD: return F("%s + %s", a, b);
        case CXLA_OP_SUBTRACT: return F("%s - %s", a, b);
        case CXLA_OP_MULTIPLY: return F("%s * %s", a, b);
        case CXLA_OP_DIVIDE: return F("%s / %s", a, b);
        case CXLA_OP_REMAINDER: return F("%sfmod(%s, %s)", cast, da, db);
        case CXLA_OP_POWER:
        case CXLA_OP_ATAN2: {
            const char *fast =
                !f64 && !exact_for_type && cpu_emit_fast_math() ? cpu_math_f32_function(op) : NULL;
            if (fast) return F("%s(%s, %s)", fast, a, b);
            return F("%s%s(%s, %s)", cast, op == CXLA_OP_POWER ? "pow" : "atan2", da, db);
        }
        case CXLA_OP_COMPLEX: return F("cxla_%s_make(%s, %s)", f64 ? "c128" : "c64", a, b);
        case CXLA_OP_MAXIMUM: return F("cxla_max_%s(%s, %s)", sfx, a, b);
        case CXLA_OP_MINIMUM: return F("cxla_min_%s(%s, %s)", sfx, a, b);
        default: return NULL;
        }
    }
    if (cpu_emit_subbyte(t)) {
        int w = cxla_type_bits(t);
        switch (op) {
        case CXLA_OP_SHIFT_LEFT:
            return F("((unsigned)%s >= %du ? (%s)0 : %s)", low_bits(arena, t, b), w,
                     cpu_emit_ctype(t),
                     narrow(arena, t, F("%s << %s", low_bits(arena, t, a), low_bits(arena, t, b))));
        case CXLA_OP_SHIFT_RIGHT_LOGICAL:
            return F("(%s >= %du ? (%s)0 : %s)", low_bits(arena, t, b), w, cpu_emit_ctype(t),
                     narrow(arena, t, F("%s >> %s", low_bits(arena, t, a), low_bits(arena, t, b))));
        case CXLA_OP_SHIFT_RIGHT_ARITHMETIC: {
            const char *x = sign_extended(arena, t, a), *n = low_bits(arena, t, b);
            return narrow(arena, t, F("(%s >= %du ? (%s < 0 ? -1 : 0) : %s >> %s)", n, w, x, x, n));
        }
        case CXLA_OP_MULHI:
            return narrow(arena, t,
                          cxla_type_is_signed(t) ? F("((int)%s * (int)%s) >> %d", a, b, w)
                                                 : F("(%s * %s) >> %d", low_bits(arena, t, a),
                                                     low_bits(arena, t, b), w));
        default:
            return narrow(
                arena, t,
                cpu_emit_binary(arena, op, cxla_type_is_signed(t) ? CXLA_S8 : CXLA_U8, a, b));
        }
    }
    const char *T = cpu_emit_ctype(t), *UT = utype(t), *WT = wtype(t), *ST = stype_signed(t);
    int bits = cxla_type_bits(t);
    bool sgn = cxla_type_is_signed(t), pred = t == CXLA_PRED;
    switch (op) {
    case CXLA_OP_ADD:
        return pred ? F("(uint8_t)(%s | %s)", a, b) : F("(%s)((%s)%s + (%s)%s)", T, WT, a, WT, b);
    case CXLA_OP_SUBTRACT: return F("(%s)((%s)%s - (%s)%s)", T, WT, a, WT, b);
    case CXLA_OP_MULTIPLY:
        return pred ? F("(uint8_t)(%s & %s)", a, b) : F("(%s)((%s)%s * (%s)%s)", T, WT, a, WT, b);
    case CXLA_OP_DIVIDE:
        /* x / 0 = -1 (all ones); INT_MIN / -1 = INT_MIN (negation wraps). */
        if (sgn)
            return F("(%s == 0 ? (%s)-1 : %s == -1 ? (%s)(0u - (%s)%s) : (%s)(%s / %s))", b, T, b,
                     T, WT, a, T, a, b);
        return F("(%s == 0 ? (%s)~(%s)0 : (%s)(%s / %s))", b, T, UT, T, a, b);
    case CXLA_OP_REMAINDER:
        /* x % 0 = x; INT_MIN % -1 = 0. */
        if (sgn)
            return F("(%s == 0 ? %s : %s == -1 ? (%s)0 : (%s)(%s %% %s))", b, a, b, T, T, a, b);
        return F("(%s == 0 ? %s : (%s)(%s %% %s))", b, a, T, a, b);
    case CXLA_OP_POWER:
        /* A negative exponent gives 1 for a base of 1, else 0. */
        if (sgn)
            return F("(%s < 0 ? (%s)(%s == 1) : (%s)cxla_ipow((uint64_t)%s, (uint64_t)(%s)%s))", b,
                     T, a, T, a, UT, b);
        return F("(%s)cxla_ipow((uint64_t)%s, (uint64_t)%s)", T, a, b);
    /* max(x, x) is x (and clang's -Wtautological-compare refuses "x >= x"). */
    case CXLA_OP_MAXIMUM: return strcmp(a, b) == 0 ? a : F("(%s >= %s ? %s : %s)", a, b, a, b);
    case CXLA_OP_MINIMUM: return strcmp(a, b) == 0 ? a : F("(%s <= %s ? %s : %s)", a, b, a, b);
    case CXLA_OP_AND: return F("(%s)(%s & %s)", T, a, b);
    case CXLA_OP_OR: return F("(%s)(%s | %s)", T, a, b);
    case CXLA_OP_XOR: return F("(%s)(%s ^ %s)", T, a, b);
    case CXLA_OP_SHIFT_LEFT:
        /* Shifts by the width or more (or negative) give 0, or the sign fill. */
        return F("((%s)%s >= %d ? (%s)0 : (%s)((%s)(%s)%s << (%s)%s))", UT, b, bits, T, T, WT, UT,
                 a, UT, b);
    case CXLA_OP_SHIFT_RIGHT_ARITHMETIC:
        return F("((%s)%s >= %d ? ((%s)%s < 0 ? (%s)~(%s)0 : (%s)0) : (%s)((%s)%s >> (%s)%s))", UT,
                 b, bits, ST, a, T, UT, T, T, ST, a, UT, b);
    case CXLA_OP_SHIFT_RIGHT_LOGICAL:
        return F("((%s)%s >= %d ? (%s)0 : (%s)((%s)%s >> (%s)%s))", UT, b, bits, T, T, UT, a, UT,
                 b);
    case CXLA_OP_MULHI:
        if (bits == 64)
            return sgn ? F("(%s)cxla_mulhi_s64(%s, %s)", T, a, b)
                       : F("(%s)cxla_mulhi_u64(%s, %s)", T, a, b);
        return sgn ? F("(%s)(((int64_t)%s * (int64_t)%s) >> %d)", T, a, b, bits)
                   : F("(%s)(((uint64_t)%s * (uint64_t)%s) >> %d)", T, a, b, bits);
    default: return NULL;
    }
}

const char *cpu_emit_compare(cxla_arena *arena, const char *dir, const char *ctype, cxla_type t,
                             const char *a, const char *b) {
    const char *op = strcmp(dir, "EQ") == 0   ? "=="
                     : strcmp(dir, "NE") == 0 ? "!="
                     : strcmp(dir, "LT") == 0 ? "<"
                     : strcmp(dir, "LE") == 0 ? "<="
                     : strcmp(dir, "GT") == 0 ? ">"
                     : strcmp(dir, "GE") == 0 ? ">="
                                              : NULL;
    if (!op) return NULL;
    if (!arena) return "";         /* asked only whether |dir| is known */
    if (cxla_type_is_complex(t)) { /* EQ and NE only (op_ok), by parts */
        if (strcmp(op, "==") && strcmp(op, "!=")) return NULL;
        return F("(uint8_t)(%scxla_%s_eq(%s, %s))", op[0] == '!' ? "!" : "",
                 t == CXLA_C64 ? "c64" : "c128", a, b);
    }
    if (cxla_type_is_float(t)) {
        if (ctype && strcmp(ctype, "TOTALORDER") == 0) {
            const char *k = t == CXLA_F64 ? "cxla_total_f64" : "cxla_total_f32";
            return F("(uint8_t)(%s(%s) %s %s(%s))", k, a, op, k, b);
        }
        if (strcmp(op, "!=") == 0) return F("(uint8_t)!(%s == %s)", a, b);
        return F("(uint8_t)(%s %s %s)", a, op, b);
    }
    bool signed_order = (ctype && strcmp(ctype, "SIGNED") == 0) ||
                        (!(ctype && strcmp(ctype, "UNSIGNED") == 0) && cxla_type_is_signed(t));
    const char *K = signed_order ? stype_signed(t) : utype(t);
    if (t == CXLA_PRED) K = "uint8_t";
    return F("(uint8_t)((%s)%s %s (%s)%s)", K, a, op, K, b);
}

const char *cpu_emit_decode(cxla_arena *arena, cxla_type t, const char *x) {
    if (!cpu_emit_is_small(t)) return x;
    return F("cxla_ld_%s(%s)", cxla_type_name(t), x);
}

const char *cpu_emit_encode(cxla_arena *arena, cxla_type t, const char *x) {
    if (!cpu_emit_is_small(t)) return x;
    return F("cxla_st_%s(%s)", cxla_type_name(t), x);
}

const char *cpu_emit_convert(cxla_arena *arena, cxla_type from, cxla_type to, const char *x) {
    if (from == to) return x; /* the bits, as the interpreter copies them */
    if (cxla_type_is_complex(to)) {
        /* From complex: each part rounded; from a real or integer value: the real part,
         * rounded once from the exact value (small floats decode exactly). */
        const char *k = to == CXLA_C64 ? "c64" : "c128", *c = to == CXLA_C64 ? "float" : "double";
        if (cxla_type_is_complex(from))
            return F("cxla_%s_make((%s)(%s).re, (%s)(%s).im)", k, c, x, c, x);
        return F("cxla_%s_make((%s)%s, 0)", k, c, cpu_emit_decode(arena, from, x));
    }
    if (cpu_emit_is_small(from)) {
        x = cpu_emit_decode(arena, from, x); /* exact */
        from = CXLA_F32;
    }
    const char *T = cpu_emit_ctype(to);
    if (to == CXLA_PRED) return F("(uint8_t)(%s != 0)", x);
    if (cpu_emit_subbyte(to) && is_int_like(from)) /* wrapped to the width */
        return narrow(arena, to, F("(%s)%s", utype(from), x));
    if (cxla_type_is_integer(to)) {
        if (is_int_like(from)) return F("(%s)(%s)%s", T, utype(to), x);
        int bits = cxla_type_bits(to);
        return cxla_type_is_signed(to) ? F("(%s)cxla_f2s((double)%s, %d)", T, x, bits)
                                       : F("(%s)cxla_f2u((double)%s, %d)", T, x, bits);
    }
    if (to == CXLA_F32 || to == CXLA_F64) return from == to ? x : F("(%s)%s", T, x);
    /* To a small float: rounded once, from the exact value. */
    const char *n = cxla_type_name(to);
    if (is_int_like(from)) {
        if (cxla_type_is_signed(from))
            return F("cxla_st_%s_d(cxla_s64_to_double_odd((int64_t)%s))", n, x);
        return F("cxla_st_%s_d(cxla_u64_to_double_odd((uint64_t)%s))", n, x);
    }
    if (from == CXLA_F32) return cpu_emit_encode(arena, to, x);
    return F("cxla_st_%s_d((double)%s)", n, x);
}

/* ---- the per-type part of the prelude ------------------------------------------------ */

void cpu_emit_small_float_helpers(cxla_strbuf *out) {
    for (int t = 0; t < CXLA_TYPE_COUNT; t++) {
        if (!cpu_emit_is_small((cxla_type)t)) continue;
        const cxla_type_info *info = cxla_type_get_info((cxla_type)t);
        const char *n = info->name;
        const char *st = cpu_emit_stype((cxla_type)t);
        cxla_strbuf_printf(out,
                           "static inline %s cxla_st_%s_d(double x) {\n"
                           "    return (%s)cxla_small_encode(x, %d, %d, %d, %d);\n}\n",
                           st, n, st, info->exponent_bits, info->mantissa_bits, info->exponent_bias,
                           (int)info->float_kind);
        if (t == CXLA_F16 || t == CXLA_BF16) continue; /* the fast paths are in the text */
        cxla_strbuf_printf(out,
                           "static inline uint8_t cxla_st_%s(float x) {\n"
                           "    return cxla_st_%s_d((double)x);\n}\n",
                           n, n);
        /* Decoding by table, made from the interpreter's own decoder. */
        cxla_strbuf_printf(out, "static inline float cxla_ld_%s(uint8_t b) {\n", n);
        cxla_strbuf_puts(out, "    static const uint32_t bits[256] = {");
        uint32_t mask = t == CXLA_F4E2M1FN ? 0xF : 0xFF;
        for (uint32_t b = 0; b < 256; b++) {
            float f = cxla_float_to_float((cxla_type)t, b & mask);
            uint32_t u;
            memcpy(&u, &f, 4);
            cxla_strbuf_printf(out, "%s0x%08xu", b % 8 == 0 ? "\n        " : " ", u);
            if (b != 255) cxla_strbuf_putc(out, ',');
        }
        cxla_strbuf_puts(out, "};\n    return cxla_f32_from_bits(bits[b]);\n}\n");
    }
    cpu_emit_complex_helpers(out);
}
