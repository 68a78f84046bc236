/* The C emitter against the interpreter: every elementwise opcode on every element type
 * it is defined for, compare, convert, select, clamp, iota, the data-movement operations,
 * reduces and fusions. Each case is a small module whose entry root is emitted as a
 * kernel; all kernels go into one translation unit (one compiler run), then each runs on
 * random inputs with edge values (NaN, +-Inf, -0, denormals, INT_MIN, -1, shifts past
 * the width) and must match interp_run_module bit for bit. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu/compiler.h"
#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
#include "cpu/cpu_math.h"
#include "cpu/emit.h"
#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"

enum { N = 37, MAX_CASES = 2048 };

typedef struct tcase {
    char *text;
    cxla_module *module;
    char name[32];
} tcase;

static tcase tcases[MAX_CASES];
static int ncases;

static void add_case(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void add_case(const char *fmt, ...) {
    if (ncases == MAX_CASES) return;
    va_list ap;
    va_start(ap, fmt);
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_strbuf_vprintf(&b, fmt, ap);
    va_end(ap);
    tcases[ncases].text = cxla_strbuf_take(&b);
    snprintf(tcases[ncases].name, sizeof tcases[ncases].name, "k%d", ncases);
    ncases++;
}

static const cxla_type all_types[] = {
    CXLA_PRED,          CXLA_S8,      CXLA_S16,        CXLA_S32,
    CXLA_S64,           CXLA_U8,      CXLA_U16,        CXLA_U32,
    CXLA_U64,           CXLA_F16,     CXLA_BF16,       CXLA_F32,
    CXLA_F64,           CXLA_F8E5M2,  CXLA_F8E4M3,     CXLA_F8E4M3FN,
    CXLA_F8E4M3B11FNUZ, CXLA_F8E3M4,  CXLA_F8E5M2FNUZ, CXLA_F8E4M3FNUZ,
    CXLA_F8E8M0FNU,     CXLA_F4E2M1FN};

/* ---- random inputs with edge values -------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void fill(cxla_literal *lit) {
    cxla_type t = cxla_literal_shape(lit)->type;
    int64_t n = cxla_literal_element_count(lit);
    size_t es = cxla_type_storage(t);
    /* Complex: each part as a real float, so that NaN, +-inf, -0 and denormals meet in
     * every combination (Annex G's special cases). */
    if (cxla_type_is_complex(t)) {
        t = t == CXLA_C64 ? CXLA_F32 : CXLA_F64;
        es /= 2;
        n *= 2;
    }
    unsigned char *p = cxla_literal_data(lit);
    int bits = cxla_type_bits(t);
    for (int64_t i = 0; i < n; i++) {
        uint64_t v = rnd();
        int pick = (int)(rnd() % 24);
        if (t == CXLA_PRED) {
            v &= 1;
        } else if (cxla_type_is_integer(t)) {
            static const int64_t edge[] = {0, 1, -1, 2, 3, 7, 8, 15, 16, 31, 32, 33, 63, 64, -8};
            if (pick < 15) v = (uint64_t)edge[pick];
            if (pick == 15) v = (uint64_t)1 << (bits - 1); /* INT_MIN */
            if (pick == 16) v = ((uint64_t)1 << (bits - 1)) - 1;
            if (pick == 17) v %= 5;
        } else if (t == CXLA_F32) {
            static const float edge[] = {0.0f,    -0.0f,   1.0f,   -1.0f,    0.5f,      2.5f,
                                         -2.5f,   3.0f,    NAN,    INFINITY, -INFINITY, 1e-40f,
                                         -3e-39f, 3.4e38f, 100.0f, 1e-3f};
            float f;
            if (pick < 16)
                f = edge[pick];
            else
                f = (float)((double)(int64_t)(rnd() % 2000001 - 1000000) / 1000.0);
            memcpy(&v, &f, 4);
        } else if (t == CXLA_F64) {
            static const double edge[] = {0.0,     -0.0,    1.0,   -1.0,     0.5,       2.5,
                                          -2.5,    3.0,     NAN,   INFINITY, -INFINITY, 1e-310,
                                          -4e-320, 1.7e308, 100.0, 1e-3};
            double d;
            if (pick < 16)
                d = edge[pick];
            else
                d = (double)(int64_t)(rnd() % 2000001 - 1000000) / 1000.0;
            memcpy(&v, &d, 8);
        } else if (t == CXLA_F4E2M1FN) {
            v &= 0xF;
        }
        memcpy(p + (size_t)i * es, &v, es);
    }
}

/* ---- the cases ----------------------------------------------------------------------- */

/* The complex functions of the interpreter (interp_ew_complex_unary / _binary) on c64 and
 * c128: the kernels call <complex.h> as it does, bit for bit. */
static void complex_cases(void) {
    static const cxla_opcode unary[] = {
        CXLA_OP_NEGATE, CXLA_OP_SIGN,     CXLA_OP_ABS,   CXLA_OP_EXP,   CXLA_OP_EXPM1, CXLA_OP_LOG,
        CXLA_OP_LOG1P,  CXLA_OP_LOGISTIC, CXLA_OP_SQRT,  CXLA_OP_RSQRT, CXLA_OP_CBRT,  CXLA_OP_SIN,
        CXLA_OP_COS,    CXLA_OP_TAN,      CXLA_OP_TANH,  CXLA_OP_ACOS,  CXLA_OP_ACOSH, CXLA_OP_ASIN,
        CXLA_OP_ASINH,  CXLA_OP_ATAN,     CXLA_OP_ATANH, CXLA_OP_COSH,  CXLA_OP_SINH};
    static const cxla_opcode binary[] = {CXLA_OP_ADD,    CXLA_OP_SUBTRACT, CXLA_OP_MULTIPLY,
                                         CXLA_OP_DIVIDE, CXLA_OP_POWER,    CXLA_OP_ATAN2};
    static const char *const types[][2] = {{"c64", "f32"}, {"c128", "f64"}};
    for (int ti = 0; ti < 2; ti++) {
        const char *tn = types[ti][0];
        for (size_t k = 0; k < CXLA_ARRAY_SIZE(unary); k++)
            add_case("HloModule m\nENTRY e {\n  p0 = %s[%d] parameter(0)\n"
                     "  ROOT r = %s[%d] %s(p0)\n}\n",
                     tn, N, unary[k] == CXLA_OP_ABS ? types[ti][1] : tn, N,
                     cxla_opcode_name(unary[k]));
        for (size_t k = 0; k < CXLA_ARRAY_SIZE(binary); k++)
            add_case("HloModule m\nENTRY e {\n  p0 = %s[%d] parameter(0)\n"
                     "  p1 = %s[%d] parameter(1)\n  ROOT r = %s[%d] %s(p0, p1)\n}\n",
                     tn, N, tn, N, tn, N, cxla_opcode_name(binary[k]));
    }
}

static bool unary_defined(cxla_opcode op, cxla_type t) {
    bool integer = cxla_type_is_integer(t), flt = cxla_type_is_float(t);
    switch (op) {
    case CXLA_OP_NOT: return integer || t == CXLA_PRED;
    case CXLA_OP_POPCNT:
    case CXLA_OP_CLZ: return integer;
    case CXLA_OP_NEGATE: return integer || flt;
    case CXLA_OP_ABS:
    case CXLA_OP_SIGN: return cxla_type_is_signed(t) || flt;
    case CXLA_OP_COPY: return true;
    default: return flt;
    }
}

/* stochastic-convert of every float type to signed results (sub-byte among them), random
 * bits as wide as the float: the kernel's cxla_stochastic against the interpreter. */
static void stochastic_cases(void) {
    static const char *const results[] = {"s8", "s16", "s32", "s64", "s4", "s2"};
    for (size_t ti = 0; ti < CXLA_ARRAY_SIZE(all_types); ti++) {
        cxla_type t = all_types[ti];
        if (!cxla_type_is_float(t)) continue;
        int bits = cxla_type_bits(t);
        const char *ut = bits == 4    ? "u4"
                         : bits == 8  ? "u8"
                         : bits == 16 ? "u16"
                         : bits == 32 ? "u32"
                                      : "u64";
        for (size_t r = 0; r < CXLA_ARRAY_SIZE(results); r++)
            add_case("HloModule m\nENTRY e {\n  p0 = %s[%d] parameter(0)\n"
                     "  p1 = %s[%d] parameter(1)\n"
                     "  ROOT r = %s[%d] stochastic-convert(p0, p1)\n}\n",
                     cxla_type_name(t), N, ut, N, results[r], N);
    }
}

static void elementwise_cases(void) {
    for (size_t ti = 0; ti < CXLA_ARRAY_SIZE(all_types); ti++) {
        cxla_type t = all_types[ti];
        const char *tn = cxla_type_name(t);
        for (int op = 0; op < CXLA_OP_COUNT; op++) {
            const cxla_opcode_info *info = cxla_opcode_get_info((cxla_opcode)op);
            if (!(info->flags & CXLA_OPF_ELEMENTWISE)) continue;
            if (op == CXLA_OP_CONVERT || op == CXLA_OP_COMPARE || op == CXLA_OP_SELECT ||
                op == CXLA_OP_CLAMP || op == CXLA_OP_COMPLEX || op == CXLA_OP_REDUCE_PRECISION ||
                op == CXLA_OP_STOCHASTIC_CONVERT)
                continue;
            if (info->arity == 1) {
                if (!unary_defined((cxla_opcode)op, t)) continue;
                const char *rt = op == CXLA_OP_IS_FINITE ? "pred" : tn;
                add_case("HloModule m\nENTRY e {\n  p0 = %s[%d] parameter(0)\n"
                         "  ROOT r = %s[%d] %s(p0)\n}\n",
                         tn, N, rt, N, info->name);
            } else if (info->arity == 2) {
                /* The interpreter's definedness (binary_defined). */
                bool integer = cxla_type_is_integer(t), flt = cxla_type_is_float(t);
                bool pred = t == CXLA_PRED, ok;
                switch (op) {
                case CXLA_OP_ADD:
                case CXLA_OP_MULTIPLY: ok = true; break;
                case CXLA_OP_SUBTRACT:
                case CXLA_OP_DIVIDE:
                case CXLA_OP_POWER:
                case CXLA_OP_REMAINDER: ok = integer || flt; break;
                case CXLA_OP_MAXIMUM:
                case CXLA_OP_MINIMUM: ok = integer || flt || pred; break;
                case CXLA_OP_ATAN2: ok = flt; break;
                case CXLA_OP_AND:
                case CXLA_OP_OR:
                case CXLA_OP_XOR: ok = integer || pred; break;
                default: ok = integer; break;
                }
                if (!ok) continue;
                add_case("HloModule m\nENTRY e {\n  p0 = %s[%d] parameter(0)\n"
                         "  p1 = %s[%d] parameter(1)\n  ROOT r = %s[%d] %s(p0, p1)\n}\n",
                         tn, N, tn, N, tn, N, info->name);
            }
        }
        static const char *dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
        for (int d = 0; d < 6; d++) {
            const char *types[] = {"", ", type=TOTALORDER", ", type=UNSIGNED", ", type=SIGNED"};
            for (int k = 0; k < 4; k++) {
                bool flt = cxla_type_is_float(t);
                bool sgn = cxla_type_is_signed(t);
                if ((k == 1 && !flt) || (k >= 2 && flt) || (k == 2 && sgn) || (k == 3 && !sgn))
                    continue;
                add_case("HloModule m\nENTRY e {\n  p0 = %s[%d] parameter(0)\n"
                         "  p1 = %s[%d] parameter(1)\n"
                         "  ROOT r = pred[%d] compare(p0, p1), direction=%s%s\n}\n",
                         tn, N, tn, N, N, dirs[d], types[k]);
            }
        }
        for (size_t ui = 0; ui < CXLA_ARRAY_SIZE(all_types); ui++)
            add_case("HloModule m\nENTRY e {\n  p0 = %s[%d] parameter(0)\n"
                     "  ROOT r = %s[%d] convert(p0)\n}\n",
                     tn, N, cxla_type_name(all_types[ui]), N);
        add_case("HloModule m\nENTRY e {\n  p = pred[%d] parameter(0)\n  a = %s[%d] parameter(1)\n"
                 "  b = %s[%d] parameter(2)\n  ROOT r = %s[%d] select(p, a, b)\n}\n",
                 N, tn, N, tn, N, tn, N);
        if (t != CXLA_PRED) {
            add_case(
                "HloModule m\nENTRY e {\n  lo = %s[%d] parameter(0)\n  x = %s[%d] parameter(1)\n"
                "  hi = %s[%d] parameter(2)\n  ROOT r = %s[%d] clamp(lo, x, hi)\n}\n",
                tn, N, tn, N, tn, N, tn, N);
            add_case("HloModule m\nENTRY e {\n  ROOT r = %s[5,7] iota(), iota_dimension=1\n}\n",
                     tn);
        }
    }
}

static void movement_cases(void) {
    const char *const texts[] = {
        "HloModule m\nENTRY e {\n  p = f32[3,4,5] parameter(0)\n"
        "  ROOT r = f32[5,3,4] transpose(p), dimensions={2,0,1}\n}\n",
        "HloModule m\nENTRY e {\n  p = s16[4,5] parameter(0)\n"
        "  ROOT r = s16[3,4,5] broadcast(p), dimensions={1,2}\n}\n",
        "HloModule m\nENTRY e {\n  p = bf16[5] parameter(0)\n"
        "  ROOT r = bf16[5,6] broadcast(p), dimensions={0}\n}\n",
        "HloModule m\nENTRY e {\n  p = u8[6,10] parameter(0)\n  ROOT r = u8[3,4,5] reshape(p)\n}\n",
        "HloModule m\nENTRY e {\n  p = f64[9,8] parameter(0)\n"
        "  ROOT r = f64[3,3] slice(p), slice={[1:8:3], [2:5]}\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[4,5] parameter(0)\n  v = f32[] parameter(1)\n"
        "  ROOT r = f32[10,6] pad(p, v), padding=1_2_1x-1_2\n}\n",
        "HloModule m\nENTRY e {\n  a = s32[2,3] parameter(0)\n  b = s32[4,3] parameter(1)\n"
        "  c = s32[1,3] parameter(2)\n  ROOT r = s32[7,3] concatenate(a, b, c), "
        "dimensions={0}\n}\n",
        "HloModule m\nENTRY e {\n  p = f16[4,6] parameter(0)\n"
        "  ROOT r = f16[4,6] reverse(p), dimensions={0,1}\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[3,4] parameter(0)\n  ROOT r = f32[3,4] copy(p)\n}\n",
        "HloModule m\nENTRY e {\n  ROOT r = f32[2,3] constant({{1, -0, nan}, {inf, 1e-40, "
        "3.5}})\n}\n",
        "HloModule m\nENTRY e {\n  ROOT r = s8[4] constant({-128, 127, 0, -1})\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[8,9] parameter(0)\n  i = s32[] parameter(1)\n"
        "  j = s32[] parameter(2)\n  ROOT r = f32[3,4] dynamic-slice(p, i, j), "
        "dynamic_slice_sizes={3,4}\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[8,9] parameter(0)\n  u = f32[3,4] parameter(1)\n"
        "  i = u32[] parameter(2)\n  j = u32[] parameter(3)\n"
        "  ROOT r = f32[8,9] dynamic-update-slice(p, u, i, j)\n}\n",
        /* reduces */
        "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  p = f32[5,100] parameter(0)\n"
        "  z = f32[] parameter(1)\n  ROOT r = f32[5] reduce(p, z), dimensions={1}, "
        "to_apply=add\n}\n",
        "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  p = f32[70,3,9] parameter(0)\n"
        "  z = f32[] parameter(1)\n  ROOT r = f32[3] reduce(p, z), dimensions={0,2}, "
        "to_apply=add\n}\n",
        "HloModule m\nadd {\n  a = f64[] parameter(0)\n  b = f64[] parameter(1)\n"
        "  ROOT s = f64[] add(a, b)\n}\nENTRY e {\n  p = f64[300] parameter(0)\n"
        "  z = f64[] parameter(1)\n  ROOT r = f64[] reduce(p, z), dimensions={0}, "
        "to_apply=add\n}\n",
        "HloModule m\nmx {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT s = f32[] maximum(a, b)\n}\nENTRY e {\n  p = f32[6,7] parameter(0)\n"
        "  z = f32[] parameter(1)\n  ROOT r = f32[7] reduce(p, z), dimensions={0}, "
        "to_apply=mx\n}\n",
        "HloModule m\nadd {\n  a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n"
        "  ROOT s = bf16[] add(a, b)\n}\nENTRY e {\n  p = bf16[4,50] parameter(0)\n"
        "  z = bf16[] parameter(1)\n  ROOT r = bf16[4] reduce(p, z), dimensions={1}, "
        "to_apply=add\n}\n",
        "HloModule m\nmul {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n"
        "  ROOT s = s32[] multiply(a, b)\n}\nENTRY e {\n  p = s32[4,5] parameter(0)\n"
        "  z = s32[] parameter(1)\n  ROOT r = s32[4] reduce(p, z), dimensions={1}, "
        "to_apply=mul\n}\n",
        "HloModule m\nor {\n  a = pred[] parameter(0)\n  b = pred[] parameter(1)\n"
        "  ROOT s = pred[] or(a, b)\n}\nENTRY e {\n  p = pred[4,5] parameter(0)\n"
        "  z = pred[] parameter(1)\n  ROOT r = pred[5] reduce(p, z), dimensions={0}, "
        "to_apply=or\n}\n",
        "HloModule m\nmn {\n  a = u16[] parameter(0)\n  b = u16[] parameter(1)\n"
        "  ROOT s = u16[] minimum(a, b)\n}\nENTRY e {\n  p = u16[3,4,5] parameter(0)\n"
        "  z = u16[] parameter(1)\n  ROOT r = u16[4] reduce(p, z), dimensions={0,2}, "
        "to_apply=mn\n}\n",
        /* fusions: loop, input (softmax-like row sums), multi-output */
        "HloModule m\nf {\n  x = f32[4,8] parameter(0)\n  b = f32[8] parameter(1)\n"
        "  bb = f32[4,8] broadcast(b), dimensions={1}\n  s = f32[4,8] add(x, bb)\n"
        "  h = f32[] constant(0.5)\n  hb = f32[4,8] broadcast(h), dimensions={}\n"
        "  m = f32[4,8] multiply(s, hb)\n  t = f32[4,8] tanh(m)\n"
        "  ROOT c = f16[4,8] convert(t)\n}\nENTRY e {\n  p0 = f32[4,8] parameter(0)\n"
        "  p1 = f32[8] parameter(1)\n  ROOT r = f16[4,8] fusion(p0, p1), kind=kLoop, calls=f\n}\n",
        "HloModule m\nf {\n  x = bf16[6] parameter(0)\n  y = bf16[6] parameter(1)\n"
        "  a = bf16[6] add(x, y)\n  m = bf16[6] multiply(a, a)\n  ROOT s = bf16[6] subtract(m, x)\n"
        "}\nENTRY e {\n  p0 = bf16[6] parameter(0)\n  p1 = bf16[6] parameter(1)\n"
        "  ROOT r = bf16[6] fusion(p0, p1), kind=kLoop, calls=f\n}\n",
        "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT s = f32[] add(a, b)\n}\nf {\n  x = f32[3,40] parameter(0)\n  e = f32[3,40] "
        "exponential(x)\n  z = f32[] constant(0)\n  ROOT r = f32[3] reduce(e, z), dimensions={1}, "
        "to_apply=add\n}\nENTRY e {\n  p0 = f32[3,40] parameter(0)\n"
        "  ROOT r = f32[3] fusion(p0), kind=kInput, calls=f\n}\n",
        "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT s = f32[] add(a, b)\n}\nf {\n  x = f32[4,20] parameter(0)\n"
        "  sq = f32[4,20] multiply(x, x)\n  z = f32[] constant(0)\n"
        "  s1 = f32[4] reduce(x, z), dimensions={1}, to_apply=add\n"
        "  s2 = f32[4] reduce(sq, z), dimensions={1}, to_apply=add\n"
        "  ROOT t = (f32[4], f32[4]) tuple(s1, s2)\n}\nENTRY e {\n  p0 = f32[4,20] parameter(0)\n"
        "  ROOT r = (f32[4], f32[4]) fusion(p0), kind=kInput, calls=f\n}\n",
        "HloModule m\nf {\n  x = f32[3,5] parameter(0)\n  y = f32[5,3] parameter(1)\n"
        "  yt = f32[3,5] transpose(y), dimensions={1,0}\n  a = f32[3,5] add(x, yt)\n"
        "  n = f32[3,5] negate(a)\n  sl = f32[3,2] slice(a), slice={[0:3], [1:3]}\n"
        "  z = f32[] constant(-7)\n  pd = f32[3,5] pad(sl, z), padding=0_0x2_1\n"
        "  m = f32[3,5] maximum(pd, n)\n  ROOT t = (f32[3,5], f32[3,5]) tuple(a, m)\n}\n"
        "ENTRY e {\n  p0 = f32[3,5] parameter(0)\n  p1 = f32[5,3] parameter(1)\n"
        "  ROOT r = (f32[3,5], f32[3,5]) fusion(p0, p1), kind=kLoop, calls=f\n}\n",
        "HloModule m\nf {\n  x = s32[12] parameter(0)\n  r = s32[3,4] reshape(x)\n"
        "  i = s32[3,4] iota(), iota_dimension=0\n  a = s32[3,4] multiply(r, i)\n"
        "  k = s32[] constant(3)\n  kb = s32[3,4] broadcast(k), dimensions={}\n"
        "  d = s32[3,4] divide(a, kb)\n  c = pred[3,4] compare(d, r), direction=GT\n"
        "  ROOT s = s32[3,4] select(c, d, r)\n}\nENTRY e {\n  p0 = s32[12] parameter(0)\n"
        "  ROOT r = s32[3,4] fusion(p0), kind=kLoop, calls=f\n}\n",
    };
    for (size_t i = 0; i < CXLA_ARRAY_SIZE(texts); i++) add_case("%s", texts[i]);
}

/* Transposes and transposing fusions large enough for whole tiles of emit.c's transposing
 * nest (up to 128 x 128 elements for 1-byte types) and with partial tiles at every edge
 * (odd sizes): every element size, ranks 2 to 5, transposes fused with elementwise work,
 * two transposes in one fusion, multiple outputs. run_case also splits each kernel's
 * range at odd places (the threads' parts), so tiles start off the multiples too. */
static void transpose_cases(void) {
    static const char *const types[] = {"pred", "s8",  "u8",  "f8e4m3fn", "bf16", "f16", "s16",
                                        "f32",  "s32", "u32", "f64",      "s64",  "u64"};
    for (size_t i = 0; i < CXLA_ARRAY_SIZE(types); i++) {
        const char *t = types[i];
        add_case("HloModule m\nENTRY e {\n  p = %s[263,141] parameter(0)\n"
                 "  ROOT r = %s[141,263] transpose(p), dimensions={1,0}\n}\n",
                 t, t);
        /* NHWC -> NCHW and NCHW -> NHWC, batched. */
        add_case("HloModule m\nENTRY e {\n  p = %s[2,3,29,137] parameter(0)\n"
                 "  ROOT r = %s[2,137,3,29] transpose(p), dimensions={0,3,1,2}\n}\n",
                 t, t);
        add_case("HloModule m\nENTRY e {\n  p = %s[2,131,3,45] parameter(0)\n"
                 "  ROOT r = %s[2,3,45,131] transpose(p), dimensions={0,2,3,1}\n}\n",
                 t, t);
    }
    const char *const texts[] = {
        /* Every 3-D permutation that moves the innermost dimension, sizes off the tiles. */
        "HloModule m\nENTRY e {\n  p = f32[5,70,67] parameter(0)\n"
        "  ROOT r = f32[5,67,70] transpose(p), dimensions={0,2,1}\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[66,3,71] parameter(0)\n"
        "  ROOT r = f32[71,66,3] transpose(p), dimensions={2,0,1}\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[65,69,2] parameter(0)\n"
        "  ROOT r = f32[69,2,65] transpose(p), dimensions={1,2,0}\n}\n",
        "HloModule m\nENTRY e {\n  p = s16[67,3,130] parameter(0)\n"
        "  ROOT r = s16[130,3,67] transpose(p), dimensions={2,1,0}\n}\n",
        /* [B,H,S,D] -> [B,S,H,D] (attention): the innermost dimension stays. */
        "HloModule m\nENTRY e {\n  p = bf16[2,3,70,16] parameter(0)\n"
        "  ROOT r = bf16[2,70,3,16] transpose(p), dimensions={0,2,1,3}\n}\n",
        /* [B,H,S,D] -> [B,H,D,S] (keys transposed for a product). */
        "HloModule m\nENTRY e {\n  p = bf16[2,3,133,72] parameter(0)\n"
        "  ROOT r = bf16[2,3,72,133] transpose(p), dimensions={0,1,3,2}\n}\n",
        /* Rank 5, the tiled dimension first (the ranged one), size-1 dimensions. */
        "HloModule m\nENTRY e {\n  p = f32[2,3,65,1,66] parameter(0)\n"
        "  ROOT r = f32[66,3,2,1,65] transpose(p), dimensions={4,1,0,3,2}\n}\n",
        "HloModule m\nENTRY e {\n  p = u8[3,2,130,5,131] parameter(0)\n"
        "  ROOT r = u8[3,131,5,2,130] transpose(p), dimensions={0,4,3,1,2}\n}\n",
        "HloModule m\nENTRY e {\n  p = f64[1,7,33,1,65] parameter(0)\n"
        "  ROOT r = f64[65,1,1,33,7] transpose(p), dimensions={4,3,0,2,1}\n}\n",
        /* A transposed operand read inside loop fusions: with elementwise work after it,
         * an operand in the output's order, a broadcast along the rows. */
        "HloModule m\nf {\n  x = f32[150,77] parameter(0)\n  y = f32[77,150] parameter(1)\n"
        "  t = f32[77,150] transpose(x), dimensions={1,0}\n  a = f32[77,150] add(t, y)\n"
        "  ROOT n = f32[77,150] multiply(a, t)\n}\nENTRY e {\n  p0 = f32[150,77] parameter(0)\n"
        "  p1 = f32[77,150] parameter(1)\n"
        "  ROOT r = f32[77,150] fusion(p0, p1), kind=kLoop, calls=f\n}\n",
        "HloModule m\nf {\n  x = bf16[2,140,3,75] parameter(0)\n  b = bf16[140] parameter(1)\n"
        "  t = bf16[2,3,75,140] transpose(x), dimensions={0,2,3,1}\n"
        "  bb = bf16[2,3,75,140] broadcast(b), dimensions={3}\n"
        "  m = bf16[2,3,75,140] multiply(t, bb)\n  ROOT c = f32[2,3,75,140] convert(m)\n}\n"
        "ENTRY e {\n  p0 = bf16[2,140,3,75] parameter(0)\n  p1 = bf16[140] parameter(1)\n"
        "  ROOT r = f32[2,3,75,140] fusion(p0, p1), kind=kLoop, calls=f\n}\n",
        /* The transpose's operand computed in the fusion (phase 1 computes it). */
        "HloModule m\nf {\n  x = f32[131,70] parameter(0)\n  n = f32[131,70] negate(x)\n"
        "  c = bf16[131,70] convert(n)\n  ROOT t = bf16[70,131] transpose(c), dimensions={1,0}\n"
        "}\nENTRY e {\n  p0 = f32[131,70] parameter(0)\n"
        "  ROOT r = bf16[70,131] fusion(p0), kind=kLoop, calls=f\n}\n",
        /* Two transposes of the same tiles, and multiple outputs. */
        "HloModule m\nf {\n  x = s32[69,130] parameter(0)\n  y = s32[69,130] parameter(1)\n"
        "  tx = s32[130,69] transpose(x), dimensions={1,0}\n"
        "  ty = s32[130,69] transpose(y), dimensions={1,0}\n  s = s32[130,69] subtract(tx, ty)\n"
        "  n = s32[130,69] negate(tx)\n  ROOT o = (s32[130,69], s32[130,69]) tuple(s, n)\n}\n"
        "ENTRY e {\n  p0 = s32[69,130] parameter(0)\n  p1 = s32[69,130] parameter(1)\n"
        "  ROOT r = (s32[130,69], s32[130,69]) fusion(p0, p1), kind=kLoop, calls=f\n}\n",
        /* A transpose to other dimensions than the output's (reshaped after it). */
        "HloModule m\nf {\n  x = f64[70,66] parameter(0)\n"
        "  t = f64[66,70] transpose(x), dimensions={1,0}\n  ROOT r = f64[66,7,10] reshape(t)\n}\n"
        "ENTRY e {\n  p0 = f64[70,66] parameter(0)\n"
        "  ROOT r = f64[66,7,10] fusion(p0), kind=kLoop, calls=f\n}\n",
        /* Smaller than a tile, and narrower than 8 (a block small enough for the red
         * zone: f32[2,3,4] crashed once, emit.c's _Alignas). */
        "HloModule m\nENTRY e {\n  p = f32[2,3,4] parameter(0)\n"
        "  ROOT r = f32[2,4,3] transpose(p), dimensions={0,2,1}\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[5,7] parameter(0)\n"
        "  ROOT r = f32[7,5] transpose(p), dimensions={1,0}\n}\n",
        "HloModule m\nENTRY e {\n  p = u16[200,9] parameter(0)\n"
        "  ROOT r = u16[9,200] transpose(p), dimensions={1,0}\n}\n",
    };
    for (size_t i = 0; i < CXLA_ARRAY_SIZE(texts); i++) add_case("%s", texts[i]);
}

/* Results that stream (emit.c's streaming stores; CXLA_CPU_STREAM_BYTES=1 lets small
 * ones stream): transposes whose output rows are whole 64-byte lines, with partial tiles
 * along both tiled dimensions, every element size, batched; a transposing fusion with two
 * outputs; flat elementwise kernels with a tail, one and two outputs of different types;
 * last, two flat kernels that do not stream (stream_flat). */
static void stream_cases(void) {
    const char *const texts[] = {
        "HloModule m\nENTRY e {\n  p = f32[144,67] parameter(0)\n"
        "  ROOT r = f32[67,144] transpose(p), dimensions={1,0}\n}\n",
        "HloModule m\nENTRY e {\n  p = bf16[160,70] parameter(0)\n"
        "  ROOT r = bf16[70,160] transpose(p), dimensions={1,0}\n}\n",
        "HloModule m\nENTRY e {\n  p = f64[72,35] parameter(0)\n"
        "  ROOT r = f64[35,72] transpose(p), dimensions={1,0}\n}\n",
        "HloModule m\nENTRY e {\n  p = u8[192,130] parameter(0)\n"
        "  ROOT r = u8[130,192] transpose(p), dimensions={1,0}\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[2,3,96,67] parameter(0)\n"
        "  ROOT r = f32[2,3,67,96] transpose(p), dimensions={0,1,3,2}\n}\n",
        "HloModule m\nf {\n  x = s32[144,69] parameter(0)\n  y = s32[144,69] parameter(1)\n"
        "  tx = s32[69,144] transpose(x), dimensions={1,0}\n"
        "  ty = s32[69,144] transpose(y), dimensions={1,0}\n  s = s32[69,144] subtract(tx, ty)\n"
        "  n = s32[69,144] negate(tx)\n  ROOT o = (s32[69,144], s32[69,144]) tuple(s, n)\n}\n"
        "ENTRY e {\n  p0 = s32[144,69] parameter(0)\n  p1 = s32[144,69] parameter(1)\n"
        "  ROOT r = (s32[69,144], s32[69,144]) fusion(p0, p1), kind=kLoop, calls=f\n}\n",
        "HloModule m\nf {\n  x = f32[4099] parameter(0)\n  y = f32[4099] parameter(1)\n"
        "  a = f32[4099] multiply(x, y)\n  ROOT b = f32[4099] add(a, x)\n}\n"
        "ENTRY e {\n  p0 = f32[4099] parameter(0)\n  p1 = f32[4099] parameter(1)\n"
        "  ROOT r = f32[4099] fusion(p0, p1), kind=kLoop, calls=f\n}\n",
        "HloModule m\nf {\n  x = f32[3001] parameter(0)\n  y = f32[3001] parameter(1)\n"
        "  z = f32[3001] parameter(2)\n  n = f32[3001] add(x, y)\n  m = f32[3001] multiply(n, z)\n"
        "  c = bf16[3001] convert(m)\n  ROOT o = (f32[3001], bf16[3001]) tuple(n, c)\n}\n"
        "ENTRY e {\n  p0 = f32[3001] parameter(0)\n  p1 = f32[3001] parameter(1)\n"
        "  p2 = f32[3001] parameter(2)\n"
        "  ROOT r = (f32[3001], bf16[3001]) fusion(p0, p1, p2), kind=kLoop, calls=f\n}\n",
        /* Not streamed: a transcendental function (compute-bound), one input per output. */
        "HloModule m\nENTRY e {\n  p = f32[4099] parameter(0)\n"
        "  ROOT r = f32[4099] exponential(p)\n}\n",
        "HloModule m\nENTRY e {\n  p = f32[4099] parameter(0)\n"
        "  ROOT r = f32[4099] negate(p)\n}\n",
    };
    for (size_t i = 0; i < CXLA_ARRAY_SIZE(texts); i++) add_case("%s", texts[i]);
}

/* Whether element bits |x| of float type |t| are a NaN. Two NaNs that differ only in sign
 * or payload count as equal: when both operands of an addition are NaN, which one the
 * hardware returns depends on the operand order the C compiler picked (it commutes
 * additions freely), in the interpreter as in a kernel (docs/semantics.md). */
static bool is_nan_bits(cxla_type t, uint64_t x) {
    if (t == CXLA_F64) {
        double d;
        memcpy(&d, &x, 8);
        return isnan(d);
    }
    if (!cxla_type_is_float(t)) return false;
    return isnan(cxla_float_to_double(t, (uint32_t)x));
}

/* ---- running ------------------------------------------------------------------------- */

static char cache_dir[256];

static void setup_cache(void) {
    snprintf(cache_dir, sizeof cache_dir, "/tmp/cxla-test-emit-XXXXXX");
    if (!mkdtemp(cache_dir)) snprintf(cache_dir, sizeof cache_dir, "/tmp/cxla-test-emit");
    setenv("CXLA_CACHE_DIR", cache_dir, 1);
}

/* Emits every case (that parses and verifies) into one translation unit. */
/* Window, gather and scatter kernels (emit_window.c, emit_gather.c): the window options,
 * variadic reducers, the pairwise sum of windows of more than 16, reducers written inline;
 * gather with clamped starts and batching dims; scatter with repeated indices, each mode
 * (assign, a recognized reducer, a computation inline) and several operands. */
#define RED(NAME, T, OP)                                                                           \
    NAME " {\n  a = " T "[] parameter(0)\n  b = " T "[] parameter(1)\n  ROOT s = " T "[] " OP      \
         "(a, b)\n}\n"
static void window_cases(void) {
    const char *const texts[] = {
        /* max pool 3x3 stride 2 pad 1, NCHW and NHWC */
        "HloModule m\n" RED(
            "mx", "f32",
            "maximum") "ENTRY e {\n  p = f32[2,3,9,9] parameter(0)\n"
                       "  z = f32[] parameter(1)\n  ROOT r = f32[2,3,5,5] reduce-window(p, z), "
                       "window={size=1x1x3x3 stride=1x1x2x2 pad=0_0x0_0x1_1x1_1}, to_apply=mx\n}\n",
        "HloModule m\n" RED(
            "mx", "f32",
            "maximum") "ENTRY e {\n  p = f32[2,8,8,5] parameter(0)\n"
                       "  z = f32[] parameter(1)\n  ROOT r = f32[2,4,4,5] reduce-window(p, z), "
                       "window={size=1x2x2x1 stride=1x2x2x1}, to_apply=mx\n}\n",
        /* avg pool sums (pairwise: a 5x5 window is 25 > 16 elements), f32 and f64 */
        "HloModule m\n" RED(
            "add", "f32",
            "add") "ENTRY e {\n  p = f32[3,11,12] parameter(0)\n"
                   "  z = f32[] parameter(1)\n  ROOT r = f32[3,6,6] reduce-window(p, z), "
                   "window={size=1x5x5 stride=1x2x2 pad=0_0x2_2x2_1}, to_apply=add\n}\n",
        "HloModule m\n" RED(
            "add", "f64",
            "add") "ENTRY e {\n  p = f64[7,300] parameter(0)\n"
                   "  z = f64[] parameter(1)\n  ROOT r = f64[7,296] reduce-window(p, z), "
                   "window={size=1x5}, to_apply=add\n}\n",
        /* avg pool 3x3 stride 2 pad 1 (a window of 9: one pairwise leaf), NHWC */
        "HloModule m\n" RED(
            "add", "f32",
            "add") "ENTRY e {\n  p = f32[2,7,7,3] parameter(0)\n"
                   "  z = f32[] parameter(1)\n  ROOT r = f32[2,4,4,3] reduce-window(p, z), "
                   "window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=add\n}\n",
        /* base and window dilation, padding, strides; bf16 rounded per step; s32 wrapping */
        "HloModule m\n" RED(
            "add", "bf16",
            "add") "ENTRY e {\n  p = bf16[5,6] parameter(0)\n"
                   "  z = bf16[] parameter(1)\n  ROOT r = bf16[5,5] reduce-window(p, z), "
                   "window={size=2x3 stride=2x1 pad=1_1x2_1 lhs_dilate=2x1 rhs_dilate=1x2}, "
                   "to_apply=add\n}\n",
        "HloModule m\n" RED(
            "mul", "s32",
            "multiply") "ENTRY e {\n  p = s32[9,4] parameter(0)\n"
                        "  z = s32[] parameter(1)\n  ROOT r = s32[7,8] reduce-window(p, z), "
                        "window={size=3x2 stride=1x1 pad=0_0x1_1 lhs_dilate=1x2 rhs_dilate=1x1}, "
                        "to_apply=mul\n}\n",
        /* a long 1-D window over more than one block of lanes */
        "HloModule m\n" RED("mn", "u8", "minimum") "ENTRY e {\n  p = u8[700] parameter(0)\n"
                                                   "  z = u8[] parameter(1)\n  ROOT r = u8[698] "
                                                   "reduce-window(p, z), window={size=3}, "
                                                   "to_apply=mn\n}\n",
        /* rank 0, and a reducer that is not a plain operation */
        "HloModule m\n" RED("add", "f32", "add") "ENTRY e {\n  p = f32[] parameter(0)\n"
                                                 "  z = f32[] parameter(1)\n  ROOT r = f32[] "
                                                 "reduce-window(p, z), to_apply=add\n}\n",
        "HloModule m\nf {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  m = f32[] multiply(b, b)\n  ROOT s = f32[] add(a, m)\n}\nENTRY e {\n"
        "  p = f32[6,6] parameter(0)\n  z = f32[] parameter(1)\n  ROOT r = f32[3,3] "
        "reduce-window(p, z), window={size=2x2 stride=2x2}, to_apply=f\n}\n",
        /* computations that ignore an argument (generated C must still compile cleanly) */
        "HloModule m\nfirst {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT r = f32[] copy(a)\n}\nENTRY e {\n  p = f32[4,9] parameter(0)\n"
        "  z = f32[] parameter(1)\n  ROOT r = f32[4,5] reduce-window(p, z), "
        "window={size=1x3 stride=1x2 pad=0_0x1_1}, to_apply=first\n}\n",
        "HloModule m\nfirst {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT r = f32[] copy(a)\n}\nfc {\n  p = f32[4,9] parameter(0)\n  z = f32[] "
        "parameter(1)\n  n = f32[4,9] negate(p)\n  ROOT r = f32[4,5] reduce-window(n, z), "
        "window={size=1x3 stride=1x2 pad=0_0x1_1}, to_apply=first\n}\nENTRY e {\n"
        "  p = f32[4,9] parameter(0)\n  z = f32[] parameter(1)\n  ROOT r = f32[4,5] "
        "fusion(p, z), kind=kInput, calls=fc\n}\n",
        "HloModule m\nfirst {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT r = f32[] copy(a)\n}\nfc {\n  p = f32[4,9] parameter(0)\n  z = f32[] "
        "parameter(1)\n  n = f32[4,9] negate(p)\n  ROOT r = f32[4,9] reduce-window(n, z), "
        "window={size=1x2 pad=0_0x1_0 lhs_dilate=1x2 stride=1x2}, to_apply=first\n}\n"
        "ENTRY e {\n  p = f32[4,9] parameter(0)\n  z = f32[] parameter(1)\n"
        "  ROOT r = f32[4,9] fusion(p, z), kind=kInput, calls=fc\n}\n",
        "HloModule m\nkeep {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n"
        "  ROOT r = s32[] copy(a)\n}\nENTRY e {\n  p = s32[6] parameter(0)\n"
        "  i = s32[2,1] constant({{1}, {3}})\n  u = s32[2] parameter(1)\n"
        "  ROOT r = s32[6] scatter(p, i, u), update_window_dims={}, inserted_window_dims={0}, "
        "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=keep\n}\n",
        /* variadic: max and its index (argmax) */
        "HloModule m\nam {\n  a = f32[] parameter(0)\n  i = s32[] parameter(1)\n"
        "  b = f32[] parameter(2)\n  j = s32[] parameter(3)\n  g = pred[] compare(a, b), "
        "direction=GE\n  v = f32[] select(g, a, b)\n  k = s32[] select(g, i, j)\n"
        "  ROOT t = (f32[], s32[]) tuple(v, k)\n}\nENTRY e {\n  p = f32[4,10] parameter(0)\n"
        "  q = s32[4,10] parameter(1)\n  z = f32[] parameter(2)\n  y = s32[] parameter(3)\n"
        "  ROOT r = (f32[4,5], s32[4,5]) reduce-window(p, q, z, y), "
        "window={size=1x3 stride=1x2 pad=0_0x0_1}, to_apply=am\n}\n",
        /* select-and-scatter: the max pool gradient, overlapping windows with padding */
        "HloModule m\nge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT c = pred[] compare(a, b), direction=GE\n}\n" RED(
            "add", "f32",
            "add") "ENTRY e {\n  p = f32[2,9,9] parameter(0)\n  s = f32[2,5,5] parameter(1)\n"
                   "  z = f32[] parameter(2)\n  ROOT r = f32[2,9,9] select-and-scatter(p, s, z), "
                   "window={size=1x3x3 stride=1x2x2 pad=0_0x1_1x1_1}, select=ge, scatter=add\n}\n",
        "HloModule m\nle {\n  a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n"
        "  ROOT c = pred[] compare(a, b), direction=LE\n}\n" RED(
            "mx", "bf16",
            "maximum") "ENTRY e {\n  p = bf16[8] parameter(0)\n  s = bf16[4] parameter(1)\n"
                       "  z = bf16[] parameter(2)\n  ROOT r = bf16[8] select-and-scatter(p, s, z), "
                       "window={size=3 stride=2 pad=1_0}, select=le, scatter=mx\n}\n",
        /* gather: rows of a table (clamped starts), and with batching dims */
        "HloModule m\nENTRY e {\n  p = f32[10,6] parameter(0)\n  i = s32[5] parameter(1)\n"
        "  ROOT r = f32[5,6] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, "
        "start_index_map={0}, index_vector_dim=1, slice_sizes={1,6}\n}\n",
        "HloModule m\nENTRY e {\n  p = s8[7,8] parameter(0)\n  i = u64[3,2] parameter(1)\n"
        "  ROOT r = s8[3,2,3] gather(p, i), offset_dims={1,2}, collapsed_slice_dims={}, "
        "start_index_map={1,0}, index_vector_dim=1, slice_sizes={2,3}\n}\n",
        "HloModule m\nENTRY e {\n  p = f16[3,5,4] parameter(0)\n  i = s64[3,2,1] parameter(1)\n"
        "  ROOT r = f16[3,2,4] gather(p, i), offset_dims={2}, collapsed_slice_dims={1}, "
        "start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, "
        "index_vector_dim=2, slice_sizes={1,1,4}\n}\n",
        /* scatter with repeated indices: add (pairs in order), assign (the last wins) */
        "HloModule m\n" RED(
            "add", "f32",
            "add") "ENTRY e {\n  p = f32[6,3] parameter(0)\n"
                   "  i = s32[5,1] constant({{1}, {4}, {1}, {-1}, {1}})\n  u = f32[5,3] "
                   "parameter(1)\n"
                   "  ROOT r = f32[6,3] scatter(p, i, u), update_window_dims={1}, "
                   "inserted_window_dims={0}, "
                   "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n}\n",
        "HloModule m\nset {\n  a = s32[] parameter(0)\n  ROOT b = s32[] parameter(1)\n}\n"
        "ENTRY e {\n  p = s32[8] parameter(0)\n  i = u8[4] constant({3, 3, 7, 200})\n"
        "  u = s32[4,2] parameter(1)\n  ROOT r = s32[8] scatter(p, i, u), "
        "update_window_dims={1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, "
        "index_vector_dim=1, to_apply=set\n}\n",
        /* the interpreter's typed max keeps the first on -0/+0 ties: not maximum's rule */
        "HloModule m\n" RED(
            "mx", "f32",
            "maximum") "ENTRY e {\n  p = f32[4,4] parameter(0)\n"
                       "  i = s32[3,2] constant({{0, 0}, {1, 2}, {0, 0}})\n  u = f32[3,2,2] "
                       "parameter(1)\n"
                       "  ROOT r = f32[4,4] scatter(p, i, u), update_window_dims={1,2}, "
                       "inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, "
                       "index_vector_dim=1, "
                       "to_apply=mx\n}\n",
        /* an update computation inline, and two operands */
        "HloModule m\nf {\n  a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n"
        "  m = bf16[] multiply(a, b)\n  ROOT s = bf16[] subtract(m, b)\n}\n"
        "ENTRY e {\n  p = bf16[5] parameter(0)\n  i = s32[4,1] constant({{2}, {0}, {2}, {4}})\n"
        "  u = bf16[4] parameter(1)\n  ROOT r = bf16[5] scatter(p, i, u), "
        "update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
        "index_vector_dim=1, to_apply=f\n}\n",
        "HloModule m\nf {\n  a = f32[] parameter(0)\n  b = s32[] parameter(1)\n"
        "  c = f32[] parameter(2)\n  d = s32[] parameter(3)\n  s = f32[] add(a, c)\n"
        "  t = s32[] add(b, d)\n  ROOT r = (f32[], s32[]) tuple(s, t)\n}\n"
        "ENTRY e {\n  p = f32[3,4] parameter(0)\n  q = s32[3,4] parameter(1)\n"
        "  i = s32[2,2] constant({{1, 1}, {1, 1}})\n  u = f32[2,2] parameter(2)\n"
        "  v = s32[2,2] parameter(3)\n  ROOT r = (f32[3,4], s32[3,4]) scatter(p, q, i, u, v), "
        "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0,1}, "
        "index_vector_dim=1, to_apply=f\n}\n",
        /* reduce-window at the root of an input fusion: relu then max pool (NHWC); a
         * convert then a pairwise sum whose init is a fusion parameter */
        "HloModule m\n" RED(
            "mx", "f32",
            "maximum") "fc {\n  p = f32[2,9,9,3] parameter(0)\n"
                       "  z = f32[] constant(0)\n  zb = f32[2,9,9,3] broadcast(z), dimensions={}\n"
                       "  r = f32[2,9,9,3] maximum(p, zb)\n  n = f32[] constant(-inf)\n"
                       "  ROOT w = f32[2,5,5,3] reduce-window(r, n), window={size=1x3x3x1 "
                       "stride=1x2x2x1 "
                       "pad=0_0x1_1x1_1x0_0}, to_apply=mx\n}\nENTRY e {\n  p = f32[2,9,9,3] "
                       "parameter(0)\n"
                       "  ROOT r = f32[2,5,5,3] fusion(p), kind=kInput, calls=fc\n}\n",
        "HloModule m\n" RED(
            "add", "f32",
            "add") "fc {\n  p = bf16[3,12,11] parameter(0)\n"
                   "  z = f32[] parameter(1)\n  c = f32[3,12,11] convert(p)\n"
                   "  ROOT w = f32[3,6,5] reduce-window(c, z), window={size=1x5x5 stride=1x2x2 "
                   "pad=0_0x2_2x2_1}, to_apply=add\n}\nENTRY e {\n  p = bf16[3,12,11] "
                   "parameter(0)\n"
                   "  z = f32[] parameter(1)\n  ROOT r = f32[3,6,5] fusion(p, z), kind=kInput, "
                   "calls=fc\n}\n",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) add_case("%s", texts[i]);
}

/* Scalar computations beyond plain elementwise operations, written inline by emit_scalar.c
 * into reduce-window, select-and-scatter and scatter kernels (emitted from the module as
 * written, so calls and fusions are still there): call, fusion, tuples (nested too) and
 * get-tuple-element, map and reduce of one element, broadcast / reshape / iota of scalars,
 * dynamic-slice, dynamic-update-slice and get-dimension-size of one element, complex,
 * clamp (small floats too), compare of complex values, bitcast-convert; select-and-scatter
 * of sub-byte integers. */
static void scalar_form_cases(void) {
    const char *const texts[] = {
        "HloModule m\nclampadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  lo = f32[] constant(-2)\n  hi = f32[] constant(3)\n  s = f32[] add(a, b)\n"
        "  ROOT c = f32[] clamp(lo, s, hi)\n}\npair {\n  a = f32[] parameter(0)\n"
        "  b = f32[] parameter(1)\n  u = (f32[]) tuple(a)\n"
        "  ROOT t = (f32[], (f32[])) tuple(b, u)\n}\n" RED(
            "mx", "f32",
            "maximum") "f {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                       "  t = (f32[], (f32[])) call(a, b), to_apply=pair\n"
                       "  x = f32[] get-tuple-element(t), index=0\n"
                       "  u = (f32[]) get-tuple-element(t), index=1\n"
                       "  y = f32[] get-tuple-element(u), index=0\n"
                       "  bb = f32[1,1] broadcast(x), dimensions={}\n  rb = f32[] reshape(bb)\n"
                       "  z = f32[1] iota(), iota_dimension=0\n  zr = f32[] reshape(z)\n"
                       "  s = f32[] reduce(rb, zr), dimensions={}, to_apply=mx\n"
                       "  m = f32[] map(y, s), dimensions={}, to_apply=clampadd\n"
                       "  ROOT o = f32[] fusion(m, x), kind=kLoop, calls=clampadd\n}\n"
                       "ENTRY e {\n  p = f32[4,9] parameter(0)\n  z = f32[] parameter(1)\n"
                       "  ROOT r = f32[4,8] reduce-window(p, z), window={size=1x2}, "
                       "to_apply=f\n}\n",
        /* a reducer of two results through a called tuple; a reduce of one element with a
         * reducer the interpreter does not recognize */
        "HloModule m\npick {\n  a = f32[] parameter(0)\n  ai = s32[] parameter(1)\n"
        "  b = f32[] parameter(2)\n  bi = s32[] parameter(3)\n"
        "  g = pred[] compare(a, b), direction=GE\n  v = f32[] select(g, a, b)\n"
        "  i = s32[] select(g, ai, bi)\n  ROOT t = (f32[], s32[]) tuple(v, i)\n}\n"
        "sub {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n"
        "  ROOT s = s32[] subtract(a, b)\n}\n"
        "am {\n  a = f32[] parameter(0)\n  ai = s32[] parameter(1)\n  b = f32[] parameter(2)\n"
        "  bi = s32[] parameter(3)\n  c = (f32[], s32[]) call(a, ai, b, bi), to_apply=pick\n"
        "  v = f32[] get-tuple-element(c), index=0\n  i = s32[] get-tuple-element(c), index=1\n"
        "  one = s32[1,1] broadcast(i), dimensions={}\n  seven = s32[] constant(7)\n"
        "  k = s32[] reduce(one, seven), dimensions={0,1}, to_apply=sub\n"
        "  ROOT t = (f32[], s32[]) tuple(v, k)\n}\nENTRY e {\n  p = f32[4,10] parameter(0)\n"
        "  q = s32[4,10] parameter(1)\n  z = f32[] parameter(2)\n  y = s32[] parameter(3)\n"
        "  ROOT r = (f32[4,5], s32[4,5]) reduce-window(p, q, z, y), "
        "window={size=1x3 stride=1x2 pad=0_0x0_1}, to_apply=am\n}\n",
        /* compare of complex values (EQ, NE), in a reduce-window and a scatter */
        "HloModule m\nf {\n  a = c64[] parameter(0)\n  b = c64[] parameter(1)\n"
        "  e = pred[] compare(a, b), direction=EQ\n  z = c64[] constant((0, 0))\n"
        "  n = pred[] compare(b, z), direction=NE\n  s = c64[] add(a, b)\n"
        "  m = c64[] multiply(a, b)\n  t = c64[] select(n, s, m)\n"
        "  ROOT r = c64[] select(e, a, t)\n}\nENTRY e {\n  p = c64[3,7] parameter(0)\n"
        "  z = c64[] parameter(1)\n  ROOT r = c64[3,6] reduce-window(p, z), "
        "window={size=1x2}, to_apply=f\n}\n",
        "HloModule m\nf {\n  a = c128[] parameter(0)\n  b = c128[] parameter(1)\n"
        "  e = pred[] compare(a, b), direction=NE\n  s = c128[] subtract(a, b)\n"
        "  ROOT r = c128[] select(e, s, b)\n}\n"
        "ENTRY e {\n  p = c128[5] parameter(0)\n  i = s32[4,1] constant({{2}, {0}, {2}, {4}})\n"
        "  u = c128[4] parameter(1)\n  ROOT r = c128[5] scatter(p, i, u), "
        "update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
        "index_vector_dim=1, to_apply=f\n}\n",
        /* complex made from parts, and the moves of one element that read indices or sizes */
        "HloModule m\nf {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  z = c64[] complex(a, b)\n  m = c64[] multiply(z, z)\n  re = f32[] real(m)\n"
        "  one = f32[1] reshape(re)\n  i = s32[] constant(5)\n"
        "  ds = f32[1] dynamic-slice(one, i), dynamic_slice_sizes={1}\n"
        "  im = f32[] imag(m)\n  imr = f32[1] reshape(im)\n"
        "  du = f32[1] dynamic-update-slice(ds, imr, i)\n"
        "  g = s32[] get-dimension-size(du), dimensions={0}\n  gf = f32[] convert(g)\n"
        "  r = f32[] reshape(du)\n  ROOT o = f32[] add(r, gf)\n}\n"
        "ENTRY e {\n  p = f32[3,7] parameter(0)\n  z = f32[] parameter(1)\n"
        "  ROOT r = f32[3,5] reduce-window(p, z), window={size=1x3}, to_apply=f\n}\n",
        /* clamp of small floats and integers; bitcast-convert both ways */
        "HloModule m\nf {\n  a = f8e4m3fn[] parameter(0)\n  b = f8e4m3fn[] parameter(1)\n"
        "  lo = f8e4m3fn[] constant(-4)\n  hi = f8e4m3fn[] constant(6)\n"
        "  s = f8e4m3fn[] add(a, b)\n  ROOT c = f8e4m3fn[] clamp(lo, s, hi)\n}\n"
        "ENTRY e {\n  p = f8e4m3fn[2,9] parameter(0)\n  z = f8e4m3fn[] parameter(1)\n"
        "  ROOT r = f8e4m3fn[2,7] reduce-window(p, z), window={size=1x3}, to_apply=f\n}\n",
        "HloModule m\nf {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n"
        "  lo = s32[] constant(-1000)\n  hi = s32[] constant(1000)\n  s = s32[] add(a, b)\n"
        "  c = s32[] clamp(lo, s, hi)\n  x = f32[] bitcast-convert(c)\n"
        "  n = f32[] negate(x)\n  ROOT y = s32[] bitcast-convert(n)\n}\n"
        "ENTRY e {\n  p = s32[12] parameter(0)\n  z = s32[] parameter(1)\n"
        "  ROOT r = s32[10] reduce-window(p, z), window={size=3}, to_apply=f\n}\n",
        /* select-and-scatter: a selector through a call with clamps, a scatter fusion; and
         * sub-byte integers */
        "HloModule m\ncl {\n  a = bf16[] parameter(0)\n  lo = bf16[] constant(-1)\n"
        "  hi = bf16[] constant(1)\n  ROOT c = bf16[] clamp(lo, a, hi)\n}\n"
        "ge {\n  a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n"
        "  x = bf16[] call(a), to_apply=cl\n  y = bf16[] call(b), to_apply=cl\n"
        "  ROOT g = pred[] compare(x, y), direction=GE\n}\n" RED(
            "add", "bf16", "add") "sc {\n  a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n"
                                  "  ROOT f = bf16[] fusion(a, b), kind=kLoop, calls=add\n}\n"
                                  "ENTRY e {\n  p = bf16[2,9] parameter(0)\n"
                                  "  s = bf16[2,4] parameter(1)\n  z = bf16[] parameter(2)\n"
                                  "  ROOT r = bf16[2,9] select-and-scatter(p, s, z), "
                                  "window={size=1x3 stride=1x2}, select=ge, scatter=sc\n}\n",
        "HloModule m\nge {\n  a = s4[] parameter(0)\n  b = s4[] parameter(1)\n"
        "  ROOT c = pred[] compare(a, b), direction=GE\n}\n" RED(
            "add", "s4", "add") "ENTRY e {\n  p = s4[9] parameter(0)\n  s = s4[4] parameter(1)\n"
                                "  z = s4[] parameter(2)\n  ROOT r = s4[9] "
                                "select-and-scatter(p, s, z), window={size=3 stride=2}, "
                                "select=ge, scatter=add\n}\n",
        /* control flow and small arrays inside scalar computations: a while loop over a
         * tuple state whose body swaps it, a pred conditional of branches with a dot of
         * small arrays moved by reshape, concatenate and reverse */
        "HloModule m\ncond {\n  s = (s32[], f32[], f32[]) parameter(0)\n"
        "  i = s32[] get-tuple-element(s), index=0\n  n = s32[] constant(3)\n"
        "  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"
        "body {\n  s = (s32[], f32[], f32[]) parameter(0)\n"
        "  i = s32[] get-tuple-element(s), index=0\n  x = f32[] get-tuple-element(s), index=1\n"
        "  y = f32[] get-tuple-element(s), index=2\n  one = s32[] constant(1)\n"
        "  i2 = s32[] add(i, one)\n  m = f32[] multiply(x, y)\n  h = f32[] constant(0.5)\n"
        "  x2 = f32[] add(m, h)\n  ROOT t = (s32[], f32[], f32[]) tuple(i2, y, x2)\n}\n"
        "br0 {\n  p = (f32[], f32[]) parameter(0)\n  a = f32[] get-tuple-element(p), index=0\n"
        "  b = f32[] get-tuple-element(p), index=1\n  av = f32[1] reshape(a)\n"
        "  bv = f32[1] reshape(b)\n  o = f32[1] constant({1})\n"
        "  v = f32[3] concatenate(av, bv, o), dimensions={0}\n"
        "  w = f32[3] reverse(v), dimensions={0}\n"
        "  ROOT d = f32[] dot(v, w), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n"
        "br1 {\n  p = (f32[], f32[]) parameter(0)\n  a = f32[] get-tuple-element(p), index=0\n"
        "  b = f32[] get-tuple-element(p), index=1\n  ROOT s = f32[] subtract(a, b)\n}\n"
        "f {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  z = s32[] constant(0)\n"
        "  t0 = (s32[], f32[], f32[]) tuple(z, a, b)\n"
        "  w = (s32[], f32[], f32[]) while(t0), condition=cond, body=body\n"
        "  x = f32[] get-tuple-element(w), index=1\n  g = pred[] compare(a, b), direction=GT\n"
        "  ab = (f32[], f32[]) tuple(x, b)\n"
        "  ROOT c = f32[] conditional(g, ab, ab), true_computation=br0, false_computation=br1\n}\n"
        "ENTRY e {\n  p = f32[3,9] parameter(0)\n  z = f32[] parameter(1)\n"
        "  ROOT r = f32[3,7] reduce-window(p, z), window={size=1x3}, to_apply=f\n}\n",
        /* a map of s16 through an s32 branch index (out of range both ways: the last
         * branch), one branch a generic fold over a padded small array */
        "HloModule m\nb0 {\n  x = s16[] parameter(0)\n  k = s16[] constant(7)\n"
        "  ROOT r = s16[] add(x, k)\n}\nb1 {\n  x = s16[] parameter(0)\n"
        "  ROOT r = s16[] multiply(x, x)\n}\n"
        "g {\n  a = s16[] parameter(0)\n  y = s16[] parameter(1)\n  t = s16[] constant(3)\n"
        "  m = s16[] multiply(a, t)\n  ROOT s = s16[] subtract(m, y)\n}\n"
        "b2 {\n  x = s16[] parameter(0)\n  xv = s16[1] reshape(x)\n  c = s16[] constant(3)\n"
        "  p = s16[5] pad(xv, c), padding=1_3\n  io = s16[5] iota(), iota_dimension=0\n"
        "  q = s16[5] add(p, io)\n  z = s16[] constant(1)\n"
        "  ROOT r = s16[] reduce(q, z), dimensions={0}, to_apply=g\n}\n"
        "f {\n  x = s16[] parameter(0)\n  i = s32[] convert(x)\n"
        "  ROOT c = s16[] conditional(i, x, x, x), branch_computations={b0, b1, b2}\n}\n"
        "ENTRY e {\n  p = s16[4,9] parameter(0)\n"
        "  ROOT r = s16[4,9] map(p), dimensions={0,1}, to_apply=f\n}\n",
        /* dots in bf16 (a 2x3 by 3x2 product, transposed, sliced, summed by the
         * interpreter's bf16 fold) and in s32 with a batch dimension */
        "HloModule m\n" RED(
            "add", "bf16",
            "add") "f {\n  a = bf16[] parameter(0)\n"
                   "  b = bf16[] parameter(1)\n  bb = bf16[2,3] broadcast(b), dimensions={}\n"
                   "  io = bf16[2,3] iota(), iota_dimension=1\n  m = bf16[2,3] multiply(bb, io)\n"
                   "  c = bf16[3,2] constant({{1, -2}, {0.5, 3}, {-1.25, 2}})\n"
                   "  d = bf16[2,2] dot(m, c), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                   "  t = bf16[2,2] transpose(d), dimensions={1,0}\n"
                   "  s = bf16[2,1] slice(t), slice={[0:2], [1:2]}\n"
                   "  r = bf16[] reduce(s, a), dimensions={0,1}, to_apply=add\n  ROOT o = bf16[] "
                   "add(r, b)\n}\n"
                   "ENTRY e {\n  p = bf16[3,9] parameter(0)\n  z = bf16[] parameter(1)\n"
                   "  ROOT r = bf16[3,7] reduce-window(p, z), window={size=1x3}, to_apply=f\n}\n",
        "HloModule m\nmx {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n"
        "  d = s32[] subtract(a, b)\n  ROOT s = s32[] maximum(d, b)\n}\n"
        "f {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n"
        "  io = s32[2,2,3] iota(), iota_dimension=2\n"
        "  bb = s32[2,2,3] broadcast(b), dimensions={}\n  l = s32[2,2,3] add(io, bb)\n"
        "  r = s32[2,3,2] transpose(l), dimensions={0,2,1}\n"
        "  d = s32[2,2,2] dot(l, r), lhs_batch_dims={0}, rhs_batch_dims={0}, "
        "lhs_contracting_dims={2}, rhs_contracting_dims={1}\n"
        "  ROOT s = s32[] reduce(d, a), dimensions={0,1,2}, to_apply=mx\n}\n"
        "ENTRY e {\n  p = s32[4,8] parameter(0)\n  z = s32[] parameter(1)\n"
        "  ROOT r = s32[4] reduce(p, z), dimensions={1}, to_apply=f\n}\n",
        /* a sum of 24 f32 elements (the interpreter's pairwise tree splits it), and a
         * complex dot of small arrays */
        "HloModule m\n" RED(
            "add", "f32",
            "add") "f {\n  a = f32[] parameter(0)\n"
                   "  b = f32[] parameter(1)\n  bb = f32[4,6] broadcast(b), dimensions={}\n"
                   "  io = f32[4,6] iota(), iota_dimension=1\n  m = f32[4,6] multiply(bb, io)\n"
                   "  q = f32[4,6] add(m, bb)\n"
                   "  ROOT r = f32[] reduce(q, a), dimensions={0,1}, to_apply=add\n}\n"
                   "ENTRY e {\n  p = f32[3,9] parameter(0)\n  z = f32[] parameter(1)\n"
                   "  ROOT r = f32[3,7] reduce-window(p, z), window={size=1x3}, to_apply=f\n}\n",
        /* a while loop inside a while body, with a conditional on the loop counter, over
         * f16 arrays; a variadic reduce (argmax) of a small array */
        "HloModule nested_loops\n"
        "icond {\n"
        "  s = (s32[], f16[3]) parameter(0)\n"
        "  i = s32[] get-tuple-element(s), index=0\n"
        "  n = s32[] constant(2)\n"
        "  ROOT lt = pred[] compare(i, n), direction=LT\n"
        "}\n"
        "ibody {\n"
        "  s = (s32[], f16[3]) parameter(0)\n"
        "  i = s32[] get-tuple-element(s), index=0\n"
        "  v = f16[3] get-tuple-element(s), index=1\n"
        "  one = s32[] constant(1)\n"
        "  i2 = s32[] add(i, one)\n"
        "  r = f16[3] reverse(v), dimensions={0}\n"
        "  h = f16[] constant(0.3)\n"
        "  hb = f16[3] broadcast(h), dimensions={}\n"
        "  m = f16[3] multiply(r, hb)\n"
        "  v2 = f16[3] add(v, m)\n"
        "  ROOT t = (s32[], f16[3]) tuple(i2, v2)\n"
        "}\n"
        "ocond {\n"
        "  s = (s32[], f16[3]) parameter(0)\n"
        "  i = s32[] get-tuple-element(s), index=0\n"
        "  n = s32[] constant(3)\n"
        "  ROOT lt = pred[] compare(i, n), direction=LT\n"
        "}\n"
        "br0 {\n"
        "  v = f16[3] parameter(0)\n"
        "  ROOT n = f16[3] negate(v)\n"
        "}\n"
        "br1 {\n"
        "  v = f16[3] parameter(0)\n"
        "  ROOT s = f16[3] abs(v)\n"
        "}\n"
        "obody {\n"
        "  s = (s32[], f16[3]) parameter(0)\n"
        "  i = s32[] get-tuple-element(s), index=0\n"
        "  v = f16[3] get-tuple-element(s), index=1\n"
        "  z = s32[] constant(0)\n"
        "  t0 = (s32[], f16[3]) tuple(z, v)\n"
        "  w = (s32[], f16[3]) while(t0), condition=icond, body=ibody\n"
        "  v2 = f16[3] get-tuple-element(w), index=1\n"
        "  c = f16[3] conditional(i, v2, v2), branch_computations={br0, br1}\n"
        "  one = s32[] constant(1)\n"
        "  i2 = s32[] add(i, one)\n"
        "  ROOT t = (s32[], f16[3]) tuple(i2, c)\n"
        "}\n"
        "mul {\n"
        "  a = f16[] parameter(0)\n"
        "  b = f16[] parameter(1)\n"
        "  ROOT m = f16[] add(a, b)\n"
        "}\n"
        "f {\n"
        "  a = f16[] parameter(0)\n"
        "  b = f16[] parameter(1)\n"
        "  io = f16[3] iota(), iota_dimension=0\n"
        "  bb = f16[3] broadcast(b), dimensions={}\n"
        "  v = f16[3] add(io, bb)\n"
        "  z = s32[] constant(0)\n"
        "  t0 = (s32[], f16[3]) tuple(z, v)\n"
        "  w = (s32[], f16[3]) while(t0), condition=ocond, body=obody\n"
        "  r = f16[3] get-tuple-element(w), index=1\n"
        "  ROOT p = f16[] reduce(r, a), dimensions={0}, to_apply=mul\n"
        "}\n"
        "ENTRY main {\n"
        "  x = f16[3,9] parameter(0)\n"
        "  i = f16[] constant(1)\n"
        "  ROOT y = f16[3,7] reduce-window(x, i), window={size=1x3}, to_apply=f\n"
        "}\n",
        "HloModule variadic_small\n"
        "am {\n"
        "  a = f32[] parameter(0)\n"
        "  ai = s32[] parameter(1)\n"
        "  b = f32[] parameter(2)\n"
        "  bi = s32[] parameter(3)\n"
        "  g = pred[] compare(a, b), direction=GE\n"
        "  v = f32[] select(g, a, b)\n"
        "  i = s32[] select(g, ai, bi)\n"
        "  ROOT t = (f32[], s32[]) tuple(v, i)\n"
        "}\n"
        "f {\n"
        "  a = f32[] parameter(0)\n"
        "  b = f32[] parameter(1)\n"
        "  c = f32[2,3] constant({{1, 5, -2}, {7, 0.5, 3}})\n"
        "  bb = f32[2,3] broadcast(b), dimensions={}\n"
        "  m = f32[2,3] multiply(c, bb)\n"
        "  io = s32[2,3] iota(), iota_dimension=1\n"
        "  ninf = f32[] constant(-inf)\n"
        "  zi = s32[] constant(-1)\n"
        "  r = (f32[2], s32[2]) reduce(m, io, ninf, zi), dimensions={1}, to_apply=am\n"
        "  rv = f32[2] get-tuple-element(r), index=0\n"
        "  ri = s32[2] get-tuple-element(r), index=1\n"
        "  rf = f32[2] convert(ri)\n"
        "  s = f32[2] add(rv, rf)\n"
        "  s0 = f32[1] slice(s), slice={[0:1]}\n"
        "  s1 = f32[1] slice(s), slice={[1:2]}\n"
        "  d = f32[1] subtract(s0, s1)\n"
        "  dr = f32[] reshape(d)\n"
        "  ROOT o = f32[] add(a, dr)\n"
        "}\n"
        "ENTRY main {\n"
        "  x = f32[3,9] parameter(0)\n"
        "  i = f32[] constant(0)\n"
        "  ROOT y = f32[3,7] reduce-window(x, i), window={size=1x3}, to_apply=f\n"
        "}\n",
        /* dynamic-slice and dynamic-update-slice of a small 2-D array at starts read from
         * the data (u64 starts, those above INT64_MAX too, clamped) */
        "HloModule m\n" RED(
            "mx", "f32",
            "maximum") "f {\n  a = f32[] parameter(0)\n"
                       "  b = f32[] parameter(1)\n  i = u64[] convert(b)\n  j = u64[] convert(a)\n"
                       "  c = f32[3,4] constant({{1, 2, 3, 4}, {-5, 6, -7, 8}, {9, -10, 11, 12}})\n"
                       "  ds = f32[2,2] dynamic-slice(c, i, j), dynamic_slice_sizes={2,2}\n"
                       "  bb = f32[2,2] broadcast(b), dimensions={}\n  m = f32[2,2] multiply(ds, "
                       "bb)\n"
                       "  u = f32[3,4] dynamic-update-slice(c, m, j, i)\n"
                       "  ROOT r = f32[] reduce(u, a), dimensions={0,1}, to_apply=mx\n}\n"
                       "ENTRY e {\n  p = f32[3,9] parameter(0)\n  z = f32[] parameter(1)\n"
                       "  ROOT r = f32[3,7] reduce-window(p, z), window={size=1x3}, "
                       "to_apply=f\n}\n",
        "HloModule m\nf {\n  a = c64[] parameter(0)\n  b = c64[] parameter(1)\n"
        "  av = c64[1] reshape(a)\n  bv = c64[1] reshape(b)\n"
        "  v = c64[2] concatenate(av, bv), dimensions={0}\n  w = c64[2] reverse(v), "
        "dimensions={0}\n"
        "  ROOT d = c64[] dot(v, w), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n"
        "ENTRY e {\n  p = c64[3,7] parameter(0)\n  z = c64[] parameter(1)\n"
        "  ROOT r = c64[3,6] reduce-window(p, z), window={size=1x2}, to_apply=f\n}\n",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) add_case("%s", texts[i]);
}

/* The separable max/min kernel (emit_window.c pool_plan_of): windows over at most two
 * adjacent dimensions with odd sizes, padding on every side (negative too), strides,
 * window dilation, windows larger than the unrolled 8, several blocks of output rows,
 * f32/f64/f16/bf16/s32/u8/s64, maximum and minimum, inits that are not the identity; and
 * the forms it leaves to the row kernel (base dilation, windows over non-adjacent
 * dimensions). */
static void pool_cases(void) {
    static const struct {
        const char *type, *op, *in, *out, *window;
    } c[] = {
        {"f32", "maximum", "2,3,11,13", "2,3,6,7",
         "size=1x1x3x3 stride=1x1x2x2 pad=0_0x0_0x1_1x1_1"},
        {"f32", "minimum", "2,3,11,13", "2,3,5,6",
         "size=1x1x3x3 stride=1x1x2x2 pad=0_0x0_0x0_1x1_0"},
        {"f32", "maximum", "2,9,7,5", "2,5,4,5", "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0"},
        {"f32", "maximum", "3,10,12", "3,4,6",
         "size=1x3x2 stride=1x2x2 pad=0_0x2_0x0_1 rhs_dilate=1x2x1"},
        {"f32", "maximum", "3,10,12", "3,8,8",
         "size=1x2x3 stride=1x1x1 pad=0_0x-1_0x0_-2 rhs_dilate=1x1x1"},
        {"f32", "minimum", "4,40", "4,14", "size=1x10 stride=1x3 pad=0_0x4_5"},
        {"f32", "maximum", "23,6", "5,6", "size=11x1 stride=4x1 pad=3_2x0_0"},
        {"f32", "maximum", "17", "9", "size=3 stride=2 pad=1_1"},
        {"f32", "maximum", "2,3,4", "2,3,4", "size=1x1x1"},
        {"f32", "maximum", "1,6,2000", "1,6,1000", "size=1x3x2 stride=1x1x2 pad=0_0x1_1x0_0"},
        /* several blocks of output rows per outer index (the buffer holds 4 and 8 rows) */
        {"f32", "maximum", "1,40,8000", "1,40,8000", "size=1x3x1 pad=0_0x1_1x0_0"},
        {"f32", "minimum", "1,20,120,64", "1,10,60,64",
         "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0"},
        {"f32", "maximum", "2,5,6,7", "2,5,6,7", "size=1x5x1x1 pad=0_0x2_2x0_0x0_0"},
        {"f64", "maximum", "2,3,9,9", "2,3,5,5", "size=1x1x3x3 stride=1x1x2x2 pad=0_0x0_0x1_1x1_1"},
        {"f64", "minimum", "3,12,12", "3,4,4", "size=1x3x3 stride=1x3x3"},
        {"bf16", "maximum", "2,9,9,3", "2,5,5,3",
         "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0"},
        {"f16", "minimum", "4,9,10", "4,4,5", "size=1x3x2 stride=1x2x2 pad=0_0x0_0x0_0"},
        {"s32", "maximum", "2,3,11,13", "2,3,6,7",
         "size=1x1x3x3 stride=1x1x2x2 pad=0_0x0_0x1_1x1_1"},
        {"u8", "minimum", "5,12", "5,3", "size=1x4 stride=1x2 pad=0_0x0_0 rhs_dilate=1x2"},
        {"s64", "minimum", "6,7", "3,7", "size=3x3 stride=2x1 pad=1_0x1_1"},
        /* left to the row kernel: base dilation; windows over dimensions 0 and 2 */
        {"f32", "maximum", "3,4,5", "3,8,5", "size=1x2x1 lhs_dilate=1x2x1 pad=0_0x1_1x0_0"},
        {"f32", "maximum", "6,4,5", "2,4,2", "size=3x1x3 stride=3x1x2"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        for (int init = 0; init < 2; init++)
            add_case("HloModule m\nred {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n"
                     "  ROOT s = %s[] %s(a, b)\n}\nENTRY e {\n  p = %s[%s] parameter(0)\n"
                     "  z = %s[] %s\n  ROOT r = %s[%s] reduce-window(p, z), window={%s}, "
                     "to_apply=red\n}\n",
                     c[i].type, c[i].type, c[i].type, c[i].op, c[i].type, c[i].in, c[i].type,
                     init ? "parameter(1)"
                     : strcmp(c[i].op, "maximum") == 0
                         ? (c[i].type[0] == 'f' || c[i].type[0] == 'b' ? "constant(-inf)"
                                                                       : "constant(-100)")
                         : (c[i].type[0] == 'f' || c[i].type[0] == 'b' ? "constant(inf)"
                                                                       : "constant(100)"),
                     c[i].type, c[i].out, c[i].window);
    /* A pad fused into the reduce-window (resnet50's stem pool, NHWC): the fused reader
     * computes the pad's multi-dimensional index from the kernel's linear offset; max (the
     * separable kernel) and add (the row kernel). */
    static const char *const fused_ops[] = {"maximum", "add"};
    for (int k = 0; k < 2; k++)
        add_case("HloModule m\nred {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                 "  ROOT s = f32[] %s(a, b)\n}\nfc {\n  p = f32[2,11,11,3] parameter(0)\n"
                 "  z = f32[] constant(0)\n  pd = f32[2,13,13,3] pad(p, z), "
                 "padding=0_0x1_1x1_1x0_0\n  n = f32[] constant(-inf)\n"
                 "  ROOT w = f32[2,6,6,3] reduce-window(pd, n), window={size=1x3x3x1 "
                 "stride=1x2x2x1}, to_apply=red\n}\nENTRY e {\n  p = f32[2,11,11,3] parameter(0)\n"
                 "  ROOT r = f32[2,6,6,3] fusion(p), kind=kInput, calls=fc\n}\n",
                 fused_ops[k]);
    /* select-and-scatter over rows (emit_window.c emit_ss_rows): the max pool gradient
     * NCHW and NHWC, padding on every side, window dilation, a window of more than 16,
     * a source element whose window is all padding; and with base dilation (the one-unit
     * kernel). */
    static const struct {
        const char *type, *sel, *sc, *in, *src, *window;
    } s[] = {
        {"f32", "GE", "add", "2,3,11,13", "2,3,6,7",
         "size=1x1x3x3 stride=1x1x2x2 pad=0_0x0_0x1_1x1_1"},
        {"f32", "GE", "add", "2,9,7,5", "2,5,4,5",
         "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0"},
        {"f32", "LE", "maximum", "3,10,12", "3,5,6",
         "size=1x3x2 stride=1x2x2 pad=0_0x2_1x0_1 rhs_dilate=1x2x1"},
        {"f32", "GT", "add", "2,12,11", "2,4,2", "size=1x5x5 stride=1x3x4 pad=0_0x2_1x1_0"},
        {"f32", "GE", "add", "2,5,6", "2,4,4", "size=1x3x3 stride=1x2x2 pad=0_0x3_1x3_1"},
        {"bf16", "GE", "add", "2,9,9,3", "2,5,5,3",
         "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0"},
        {"s32", "LT", "add", "17", "9", "size=3 stride=2 pad=1_1"},
        {"f64", "GE", "add", "23,6", "5,6", "size=11x1 stride=4x1 pad=3_2x0_0"},
        {"f32", "GE", "add", "6,4,5", "2,4,2", "size=3x1x3 stride=3x1x2"},
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        add_case("HloModule m\nsel {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n"
                 "  ROOT c = pred[] compare(a, b), direction=%s\n}\n"
                 "sc {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n"
                 "  ROOT s = %s[] %s(a, b)\n}\nENTRY e {\n  p = %s[%s] parameter(0)\n"
                 "  s = %s[%s] parameter(1)\n  z = %s[] parameter(2)\n"
                 "  ROOT r = %s[%s] select-and-scatter(p, s, z), window={%s}, select=sel, "
                 "scatter=sc\n}\n",
                 s[i].type, s[i].type, s[i].sel, s[i].type, s[i].type, s[i].type, s[i].sc,
                 s[i].type, s[i].in, s[i].type, s[i].src, s[i].type, s[i].type, s[i].in,
                 s[i].window);
}

#undef RED

static char *emit_all(size_t *len, int *emitted) {
    cxla_strbuf tu;
    cxla_strbuf_init(&tu);
    cpu_emit_prelude(&tu);
    *emitted = 0;
    for (int i = 0; i < ncases; i++) {
        cxla_status s =
            cxla_hlo_parse(tcases[i].text, (size_t)-1, tcases[i].name, &tcases[i].module);
        if (!s) s = cxla_hlo_verify(tcases[i].module);
        if (s) {
            test_fail(__FILE__, __LINE__, "case %d does not parse: %s\n%s", i,
                      cxla_status_message(s), tcases[i].text);
            cxla_status_free(s);
            cxla_module_destroy(tcases[i].module);
            tcases[i].module = NULL;
            continue;
        }
        const cxla_instr *root = tcases[i].module->entry->root;
        CHECK_MSG(cpu_can_emit(root), "cannot emit case %d:\n%s", i, tcases[i].text);
        s = cpu_emit_kernel(root, tcases[i].name, &tu);
        if (s) {
            test_fail(__FILE__, __LINE__, "case %d: %s", i, cxla_status_message(s));
            cxla_status_free(s);
            cxla_module_destroy(tcases[i].module);
            tcases[i].module = NULL;
            continue;
        }
        (*emitted)++;
    }
    *len = tu.len;
    return cxla_strbuf_take(&tu);
}

typedef void (*kernel_fn)(void *const *out, const void *const *in, int64_t begin, int64_t end);

/* A float's bits as an integer ordered as the floats are (so that neighbours differ by 1). */
static int64_t ordered_bits(uint64_t bits, size_t es) {
    int width = (int)es * 8;
    uint64_t sign = 1ull << (width - 1), mag = bits & (sign - 1);
    return (bits & sign) ? -(int64_t)mag : (int64_t)mag;
}

/* The kernel of an f32 (or smaller float, computed in f32) transcendental function uses
 * cxla_math.h's fast function: within its documented bound of the interpreter, in ulp of
 * the result's own type (docs/semantics.md). */
static bool within_fast_math_bound(const cxla_instr *root, cxla_type t, size_t es, uint64_t x,
                                   uint64_t y) {
    int bound = cpu_math_f32_bound_ulp(root->opcode);
    if (bound < 0 || !cpu_emit_fast_math() || !cxla_type_is_float(t) || t == CXLA_F64) return false;
    int64_t d = ordered_bits(x, es) - ordered_bits(y, es);
    /* The smaller floats, rounded from f32, are within 1 ulp of their own type. */
    int64_t allowed = t == CXLA_F32 && bound > 1 ? bound : 1;
    return (d < 0 ? -d : d) <= allowed;
}

/* Bytes from a 64-byte line to where run_case's outputs start (a multiple of 16). */
static int out_offset;

/* Runs case |i| on random inputs on the interpreter and the kernel; compares. The kernel
 * runs its whole range at once (|rep| 0) or in parts split at odd places, as threads run
 * it (any split must give the same bits). */
static void run_case(cpu_library *lib, int i, int rep) {
    cxla_module *m = tcases[i].module;
    if (!m) return;
    kernel_fn fn = (kernel_fn)(uintptr_t)cpu_library_symbol(lib, tcases[i].name);
    CHECK_MSG(fn != NULL, "no symbol %s", tcases[i].name);
    if (!fn) return;
    const cxla_computation *entry = m->entry;
    cxla_literal *args[8] = {NULL};
    for (int64_t k = 0; k < entry->param_count && k < 8; k++) {
        CHECK_OK(cxla_literal_create(&entry->params[k]->shape, &args[k]));
        fill(args[k]);
    }
    const cxla_instr *root = entry->root;
    /* Start indices in range more often than not. */
    if (root->opcode == CXLA_OP_DYNAMIC_SLICE || root->opcode == CXLA_OP_DYNAMIC_UPDATE_SLICE)
        for (int64_t k = root->opcode == CXLA_OP_DYNAMIC_SLICE ? 1 : 2; k < entry->param_count;
             k++) {
            int64_t v = (int64_t)(rnd() % 12) - 3;
            size_t es = cxla_type_storage(cxla_literal_shape(args[k])->type);
            memcpy(cxla_literal_data(args[k]), &v, es);
        }
    cxla_literal *expected = NULL;
    cxla_status s = interp_run_module(m, NULL, (const cxla_literal *const *)args,
                                      entry->param_count, &expected);
    if (s) {
        test_fail(__FILE__, __LINE__, "case %d: the interpreter failed: %s\n%s", i,
                  cxla_status_message(s), tcases[i].text);
        cxla_status_free(s);
    } else {
        const void *in[8] = {NULL};
        for (int64_t k = 0; k < root->operand_count && k < 8; k++) {
            const cxla_instr *o = root->operands[k];
            in[k] = o->opcode == CXLA_OP_PARAMETER
                        ? cxla_literal_data_const(args[o->parameter_number])
                        : cxla_literal_data_const(o->literal);
        }
        int64_t nout = root->shape.type == CXLA_TUPLE ? root->shape.tuple_count : 1;
        const cxla_literal *want[8];
        if (root->shape.type == CXLA_TUPLE)
            for (int64_t j = 0; j < nout; j++)
                want[j] = cxla_literal_tuple_element_const(expected, j);
        else
            want[0] = expected;
        void *out[8], *blocks[8];
        size_t sizes[8];
        for (int64_t j = 0; j < nout; j++) {
            const cxla_shape *sh = cxla_literal_shape(want[j]);
            sizes[j] = (size_t)cxla_literal_element_count(want[j]) * cxla_type_storage(sh->type);
            /* On a 64-byte line, or out_offset bytes after one (streaming stores: whole
             * lines, plain stores where the output is off the lines). */
            size_t total = (sizes[j] + (size_t)out_offset + 64) / 64 * 64;
            blocks[j] = aligned_alloc(64, total);
            if (blocks[j]) memset(blocks[j], 0, total);
            out[j] = blocks[j] ? (unsigned char *)blocks[j] + out_offset : NULL;
        }
        static const int64_t cuts[3][3] = {{INT64_MAX}, {37, INT64_MAX}, {1, 66, INT64_MAX}};
        int64_t lo = 0;
        for (int c = 0; c < 3 && lo < INT64_MAX; c++) {
            fn(out, in, lo, cuts[rep % 3][c]);
            lo = cuts[rep % 3][c];
        }
        for (int64_t j = 0; j < nout; j++) {
            const unsigned char *a = cxla_literal_data_const(want[j]), *b = out[j];
            cxla_type ct = cxla_literal_shape(want[j])->type;
            /* complex: compared by parts (any NaN part matches any NaN part) */
            size_t es = cxla_type_storage(ct) / (cxla_type_is_complex(ct) ? 2 : 1);
            for (size_t off = 0; off < sizes[j]; off += es) {
                if (memcmp(a + off, b + off, es) != 0) {
                    uint64_t x = 0, y = 0, in0 = 0;
                    memcpy(&x, a + off, es);
                    memcpy(&y, b + off, es);
                    cxla_type ot = ct == CXLA_C64 ? CXLA_F32 : ct == CXLA_C128 ? CXLA_F64 : ct;
                    /* One operand: which NaN comes out is no compiler's choice, and the
                     * small floats promise it bit for bit (docs/semantics.md). */
                    bool nan_sign_kept = root->operand_count == 1 && es == 1;
                    if (is_nan_bits(ot, x) && is_nan_bits(ot, y) && !nan_sign_kept) continue;
                    if (within_fast_math_bound(root, ot, es, x, y)) continue;
                    if (entry->param_count > 0) {
                        const cxla_shape *ps = cxla_literal_shape(args[0]);
                        size_t pes = cxla_type_storage(ps->type);
                        if (off / es < (size_t)cxla_literal_element_count(args[0]))
                            memcpy(&in0,
                                   (const unsigned char *)cxla_literal_data_const(args[0]) +
                                       off / es * pes,
                                   pes);
                    }
                    test_fail(__FILE__, __LINE__,
                              "case %d (%s) output %" PRId64 " element %zu: interpreter 0x%" PRIx64
                              ", kernel 0x%" PRIx64 " (input 0 there: 0x%" PRIx64 ")\n%s",
                              i, tcases[i].name, j, off / es, x, y, in0, tcases[i].text);
                    break;
                }
            }
            free(blocks[j]);
        }
        cxla_literal_free(expected);
    }
    for (int k = 0; k < 8; k++) cxla_literal_free(args[k]);
}

/* The cpu backend runs reduce-window, select-and-scatter, gather and scatter as generated
 * kernels (not the interpreter's handlers), a gather inside a loop fusion too, and a
 * scatter's kernel says its results may be its operands' buffers. */
static void test_window_gather_scatter_are_kernels(void) {
    setup_cache();
    const char *text =
        "HloModule m\nmx {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT s = f32[] maximum(a, b)\n}\nge {\n  a = f32[] parameter(0)\n"
        "  b = f32[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=GE\n}\n"
        "ENTRY e {\n  x = f32[4,9,9] parameter(0)\n  i = s32[3] parameter(1)\n"
        "  z = f32[] constant(-inf)\n  zero = f32[] constant(0)\n"
        "  pool = f32[4,5,5] reduce-window(x, z), window={size=1x3x3 stride=1x2x2 "
        "pad=0_0x1_1x1_1}, to_apply=mx\n"
        "  grad = f32[4,9,9] select-and-scatter(x, pool, zero), window={size=1x3x3 "
        "stride=1x2x2 pad=0_0x1_1x1_1}, select=ge, scatter=mx\n"
        "  rows = f32[3,9,9] gather(grad, i), offset_dims={1,2}, collapsed_slice_dims={0}, "
        "start_index_map={0}, index_vector_dim=1, slice_sizes={1,9,9}\n"
        "  neg = f32[3,9,9] negate(rows)\n"
        "  ii = s32[3,1] reshape(i)\n"
        "  sc = f32[4,9,9] scatter(grad, ii, neg), update_window_dims={1,2}, "
        "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
        "to_apply=mx\n"
        "  ROOT t = (f32[4,5,5], f32[4,9,9], f32[3,9,9], f32[4,9,9]) tuple(pool, grad, neg, "
        "sc)\n}\n";
    cxla_module *m = NULL;
    CHECK_OK(cxla_hlo_parse(text, (size_t)-1, "kernels", &m));
    if (!m) return;
    void *compiled = NULL;
    exec_compile_options co = {0};
    CHECK_OK(cpu_backend.compile(m, &co, &compiled));
    if (compiled) {
        const char *names[] = {"pool", "grad", "sc"};
        for (int k = 0; k < 3; k++) {
            const char *what = cpu_compiled_call_what(compiled, names[k]);
            CHECK_MSG(what && strcmp(what, "kernel") == 0, "%s runs as '%s', not 'kernel'",
                      names[k], what ? what : "the interpreter");
        }
        /* The gather and the negate are one loop fusion, and that fusion is a kernel. */
        cxla_module *opt = NULL;
        cxla_strbuf src;
        cxla_strbuf_init(&src);
        CHECK_OK(cpu_generate(m, NULL, &opt, &src, NULL));
        bool fused_gather = false;
        for (int64_t j = 0; opt && j < opt->entry->instr_count; j++) {
            const cxla_instr *in = opt->entry->instrs[j];
            const cxla_computation *c = cxla_instr_called(in, CXLA_ATTR_CALLS);
            if (in->opcode != CXLA_OP_FUSION || !c) continue;
            for (int64_t k = 0; k < c->instr_count; k++)
                if (c->instrs[k]->opcode == CXLA_OP_GATHER) {
                    fused_gather = true;
                    const char *what = cpu_compiled_call_what(compiled, in->name);
                    CHECK_MSG(what && strcmp(what, "kernel") == 0, "fusion %s runs as '%s'",
                              in->name, what ? what : "the interpreter");
                }
        }
        CHECK(fused_gather);
        cxla_module_destroy(opt);
        cxla_strbuf_free(&src);
        cxla_literal *args[2] = {NULL, NULL}, *got = NULL, *want = NULL;
        CHECK_OK(cxla_literal_create(&m->entry->params[0]->shape, &args[0]));
        CHECK_OK(cxla_literal_create(&m->entry->params[1]->shape, &args[1]));
        float *x = cxla_literal_data(args[0]);
        for (int64_t j = 0; j < 4 * 81; j++) x[j] = (float)((j * 37) % 101) - 50.0f;
        int32_t *iv = cxla_literal_data(args[1]);
        iv[0] = 2;
        iv[1] = -7; /* clamped by gather, skipped by scatter */
        iv[2] = 2;
        exec_run_options ro = {0};
        CHECK_OK(cpu_backend.execute(compiled, &ro, (const cxla_literal *const *)args, 2, &got));
        CHECK_OK(interp_run_module(m, NULL, (const cxla_literal *const *)args, 2, &want));
        if (got && want) CHECK_OK(cxla_literal_compare(got, want, NULL));
        cxla_literal_free(got);
        cxla_literal_free(want);
        cxla_literal_free(args[0]);
        cxla_literal_free(args[1]);
        cpu_backend.destroy(compiled);
    }
    /* The scatter kernel's in-place flag, and its copy skipped when out is in. */
    const cxla_instr *sc = NULL;
    for (int64_t j = 0; j < m->entry->instr_count; j++)
        if (m->entry->instrs[j]->opcode == CXLA_OP_SCATTER) sc = m->entry->instrs[j];
    CHECK(sc != NULL);
    if (sc) {
        cxla_strbuf b;
        cxla_strbuf_init(&b);
        cpu_kernel_info info;
        CHECK_OK(cpu_emit_kernel_info(sc, "sc", &b, &info));
        CHECK(info.in_place == 1);
        CHECK(info.range == 1);
        CHECK(b.data && strstr(b.data, "if (out[0] != in[0]) memcpy") != NULL);
        cxla_strbuf_free(&b);
    }
    cxla_module_destroy(m);
}

/* The scalar writer's bounds (emit_scalar.c): a reducer of a few 8x8 products is written
 * inline, one of nine (over 4,096 scalar operations) stays on the handler, as does one
 * with an rng (it needs the run's generator state) and one whose calls nest 9 deep. */
static bool window_kernel_ok(const char *reducer_body, const char *extra) {
    char text[4096];
    snprintf(text, sizeof text,
             "HloModule m\n%sf {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n%s}\n"
             "ENTRY e {\n  p = f32[9] parameter(0)\n  z = f32[] parameter(1)\n"
             "  ROOT r = f32[7] reduce-window(p, z), window={size=3}, to_apply=f\n}\n",
             extra, reducer_body);
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "bounds", &m);
    if (!s) s = cxla_verify_module(m);
    CHECK_OK(s);
    bool ok = m && cpu_can_emit(m->entry->root);
    cxla_module_destroy(m);
    return ok;
}

static void test_scalar_writer_bounds(void) {
    char body[4096];
    for (int products = 2; products <= 9; products += 7) {
        size_t at =
            (size_t)snprintf(body, sizeof body, "  m0 = f32[8,8] broadcast(b), dimensions={}\n");
        for (int k = 1; k <= products; k++)
            at += (size_t)snprintf(body + at, sizeof body - at,
                                   "  m%d = f32[8,8] dot(m%d, m0), lhs_contracting_dims={1}, "
                                   "rhs_contracting_dims={0}\n",
                                   k, k - 1);
        snprintf(body + at, sizeof body - at,
                 "  s = f32[] reduce(m%d, a), dimensions={0,1}, to_apply=add\n"
                 "  ROOT o = f32[] add(s, b)\n",
                 products);
        bool ok =
            window_kernel_ok(body, "add {\n  x = f32[] parameter(0)\n"
                                   "  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n");
        CHECK_MSG(ok == (products == 2), "%d products of 8x8 matrices: %s", products,
                  ok ? "written inline" : "left to the handler");
    }
    CHECK(!window_kernel_ok("  lo = f32[] constant(0)\n  hi = f32[] constant(1)\n"
                            "  r = f32[] rng(lo, hi), distribution=rng_uniform\n"
                            "  s = f32[] add(a, r)\n  ROOT o = f32[] add(s, b)\n",
                            ""));
    /* Calls nested 8 deep (c1 calls c0, ...; f calls c8) pass the bound, 9 deep do not. */
    for (int depth = 8; depth <= 9; depth++) {
        char extra[4096];
        size_t at = (size_t)snprintf(
            extra, sizeof extra, "c0 {\n  x = f32[] parameter(0)\n  ROOT n = f32[] negate(x)\n}\n");
        for (int k = 1; k < depth; k++)
            at += (size_t)snprintf(extra + at, sizeof extra - at,
                                   "c%d {\n  x = f32[] parameter(0)\n"
                                   "  ROOT n = f32[] call(x), to_apply=c%d\n}\n",
                                   k, k - 1);
        snprintf(body, sizeof body,
                 "  c = f32[] call(b), to_apply=c%d\n  ROOT o = f32[] add(a, c)\n", depth - 1);
        bool ok = window_kernel_ok(body, extra);
        CHECK_MSG(ok == (depth == 8), "calls nested %d deep: %s", depth,
                  ok ? "written inline" : "left to the handler");
    }
}

/* The separable max/min kernel keeps the interpreter's NaN bit for bit (the first NaN of
 * the window in row-major order, and a NaN init value), which the comparison above lets
 * pass: every NaN here has its own payload and sign. Rows with and without NaN and -0 take
 * the kernel's two folds; the init is -inf, 0 (not the identity: padding must not change
 * the result) and a NaN. */
static void test_pool_nan_payloads(void) {
    setup_cache();
    static const char *const ops[] = {"maximum", "minimum"};
    static const char *const inits[] = {"-inf", "0", "nan(0x123)"};
    for (int o = 0; o < 2; o++)
        for (int z = 0; z < 3; z++) {
            char text[1024];
            snprintf(text, sizeof text,
                     "HloModule m\nred {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                     "  ROOT s = f32[] %s(a, b)\n}\nENTRY e {\n  x = f32[2,3,21,37] parameter(0)\n"
                     "  z = f32[] constant(%s)\n  ROOT r = f32[2,3,11,19] reduce-window(x, z), "
                     "window={size=1x1x3x3 stride=1x1x2x2 pad=0_0x0_0x1_1x1_1}, to_apply=red\n}\n",
                     ops[o], inits[z]);
            cxla_module *m = NULL;
            CHECK_OK(cxla_hlo_parse(text, (size_t)-1, "pool", &m));
            if (!m) continue;
            cxla_strbuf kb;
            cxla_strbuf_init(&kb);
            CHECK_OK(cpu_emit_kernel(m->entry->root, "pool", &kb));
            CHECK_MSG(kb.data && strstr(kb.data, "pool_xf(") && strstr(kb.data, "pool_ff("),
                      "not the separable kernel:\n%s", kb.data ? kb.data : "");
            cxla_strbuf_free(&kb);
            void *compiled = NULL;
            exec_compile_options co = {0};
            CHECK_OK(cpu_backend.compile(m, &co, &compiled));
            cxla_literal *x = NULL, *got = NULL, *want = NULL;
            CHECK_OK(cxla_literal_create(&m->entry->params[0]->shape, &x));
            if (compiled && x) {
                uint32_t *v = cxla_literal_data(x);
                int64_t n = cxla_literal_element_count(x);
                for (int64_t i = 0; i < n; i++) {
                    float f = (float)((int64_t)(rnd() % 2001) - 1000) / 100.0f;
                    uint32_t u;
                    memcpy(&u, &f, 4);
                    int64_t row = i / 37;
                    uint64_t pick = rnd() % 16;
                    if (row % 3 == 1 && pick < 2) /* a third of the rows hold NaNs */
                        u = (pick ? 0xffc00000u : 0x7fc00000u) | (uint32_t)(i & 0x3fffff);
                    if (row % 3 == 2 && pick < 3) u = pick == 2 ? 0x80000000u : 0; /* -0, +0 */
                    v[i] = u;
                }
                exec_run_options ro = {0};
                CHECK_OK(
                    cpu_backend.execute(compiled, &ro, (const cxla_literal *const *)&x, 1, &got));
                CHECK_OK(interp_run_module(m, NULL, (const cxla_literal *const *)&x, 1, &want));
                if (got && want) {
                    const uint32_t *a = cxla_literal_data_const(want),
                                   *b = cxla_literal_data_const(got);
                    int64_t count = cxla_literal_element_count(want), nan = 0;
                    for (int64_t i = 0; i < count; i++) {
                        nan += (a[i] & 0x7fffffffu) > 0x7f800000u;
                        if (a[i] != b[i]) {
                            test_fail(__FILE__, __LINE__,
                                      "%s init %s element %" PRId64 ": interpreter 0x%08x, cpu "
                                      "0x%08x",
                                      ops[o], inits[z], i, a[i], b[i]);
                            break;
                        }
                    }
                    CHECK(nan > 0);
                }
            }
            cxla_literal_free(x);
            cxla_literal_free(got);
            cxla_literal_free(want);
            if (compiled) cpu_backend.destroy(compiled);
            cxla_module_destroy(m);
        }
}

static void test_against_interpreter(void) {
    setup_cache();
    elementwise_cases();
    stochastic_cases();
    movement_cases();
    window_cases();
    scalar_form_cases();
    pool_cases();
    size_t len = 0;
    int emitted = 0;
    char *tu = emit_all(&len, &emitted);
    CHECK(tu != NULL);
    CHECK(emitted > 500);
    if (getenv("CXLA_TEST_DUMP_C")) cxla_write_file(getenv("CXLA_TEST_DUMP_C"), tu, len);
    /* Two translation units, compiled in parallel into one object. */
    size_t half = 0;
    const char *cut = strstr(tu + len / 2, "/* ---- k");
    half = cut ? (size_t)(cut - tu) : len;
    cxla_strbuf second;
    cxla_strbuf_init(&second);
    cpu_emit_prelude(&second);
    cxla_strbuf_append(&second, tu + half, len - half);
    const char *sources[2] = {tu, second.data};
    size_t lengths[2] = {half, second.len};
    cpu_library *lib = NULL;
    /* Warnings are errors: generated code must compile cleanly. */
    setenv("CXLA_CFLAGS", "-O2 -march=native -Wall -Wextra -Werror", 1);
    CHECK_OK(cpu_library_compile(sources, lengths, 2, "test_emit", &lib));
    /* And under clang too, where it is installed (compiled, not run: -O0 keeps it quick). */
    if (system("clang --version > /dev/null 2>&1") == 0) {
        setenv("CXLA_CC", "clang", 1);
        setenv("CXLA_CFLAGS", "-O0 -Wall -Wextra -Werror", 1);
        cpu_library *clang_lib = NULL;
        CHECK_OK(cpu_library_compile(sources, lengths, 2, "test_emit (clang)", &clang_lib));
        cpu_library_close(clang_lib);
        unsetenv("CXLA_CC");
    }
    unsetenv("CXLA_CFLAGS");
    if (lib)
        for (int i = 0; i < ncases; i++)
            for (int rep = 0; rep < 3; rep++) run_case(lib, i, rep);
    cpu_library_close(lib);
    cxla_strbuf_free(&second);
    free(tu);
    for (int i = 0; i < ncases; i++) {
        cxla_module_destroy(tcases[i].module);
        free(tcases[i].text);
    }
    ncases = 0;
}

/* The transposing nest (transpose_cases) against the interpreter, in a translation unit of
 * its own, compiled natively and as `cxla compile --target portable` output is (C11,
 * CXLA_PORTABLE: no builtins), each run with split ranges. */
static void test_transposes_against_interpreter(void) {
    setup_cache();
    ncases = 0;
    transpose_cases();
    size_t len = 0;
    int emitted = 0;
    char *tu = emit_all(&len, &emitted);
    CHECK(tu != NULL);
    CHECK(emitted == ncases);
    /* The tiled path is what runs: whole tiles read through an interleaved block, the
     * next tile's rows fetched early. */
    CHECK(tu && strstr(tu, "blk0[jg * 512 + ja * 8 + 7]") != NULL);
    CHECK(tu && strstr(tu, "CXLA_PREFETCH(&p0[") != NULL);
    const char *flags[2] = {"-O2 -march=native -Wall -Wextra -Werror",
                            "-O2 -std=c11 -DCXLA_PORTABLE -Wall -Wextra -Werror"};
    for (int f = 0; f < 2 && tu; f++) {
        const char *sources[1] = {tu};
        size_t lengths[1] = {len};
        cpu_library *lib = NULL;
        setenv("CXLA_CFLAGS", flags[f], 1);
        CHECK_OK(cpu_library_compile(sources, lengths, 1, "test_emit transposes", &lib));
        unsetenv("CXLA_CFLAGS");
        if (lib)
            for (int i = 0; i < ncases; i++)
                for (int rep = 0; rep < 3; rep++) run_case(lib, i, rep);
        cpu_library_close(lib);
    }
    free(tu);
    for (int i = 0; i < ncases; i++) {
        cxla_module_destroy(tcases[i].module);
        free(tcases[i].text);
    }
    ncases = 0;
}

/* Streaming stores (stream_cases) against the interpreter: emitted as if the results were
 * large, compiled natively and as portable output, run with split ranges into outputs on
 * 64-byte lines (the non-temporal stores) and 16 bytes off them (plain stores); without
 * CXLA_CPU_STREAM_BYTES the same small results do not stream. */
static void test_streams_against_interpreter(void) {
    setup_cache();
    ncases = 0;
    stream_cases();
    size_t len = 0;
    int emitted = 0;
    char *tu = emit_all(&len, &emitted);
    CHECK(tu != NULL);
    CHECK(tu && strstr(tu, "cxla_stream_line(&o") == NULL);
    free(tu);
    for (int i = 0; i < ncases; i++) cxla_module_destroy(tcases[i].module);
    setenv("CXLA_CPU_STREAM_BYTES", "1", 1);
    tu = emit_all(&len, &emitted);
    unsetenv("CXLA_CPU_STREAM_BYTES");
    CHECK(tu != NULL);
    CHECK(emitted == ncases);
    /* Every case streams (a transpose's rows, a flat kernel's blocks, both outputs) but the
     * last two, flat kernels bound by their computation or with one input. */
    for (int i = 0; i < ncases && tu; i++) {
        char fence[64];
        snprintf(fence, sizeof fence, "%s_body(", tcases[i].name);
        const char *at = strstr(tu, fence), *next = at ? strstr(at, "CXLA_STREAM_FENCE();") : NULL;
        const char *end = at ? strstr(at + 1, "/* ---- k") : NULL;
        bool streamed = next && (!end || next < end);
        CHECK_MSG(streamed == (i < ncases - 2), "case %d: streams %d:\n%s", i, streamed,
                  tcases[i].text);
    }
    CHECK(tu && strstr(tu, "cxla_stream_line(&o1[") != NULL);
    const char *flags[2] = {"-O2 -march=native -Wall -Wextra -Werror",
                            "-O2 -std=c11 -DCXLA_PORTABLE -Wall -Wextra -Werror"};
    for (int f = 0; f < 2 && tu; f++) {
        const char *sources[1] = {tu};
        size_t lengths[1] = {len};
        cpu_library *lib = NULL;
        setenv("CXLA_CFLAGS", flags[f], 1);
        CHECK_OK(cpu_library_compile(sources, lengths, 1, "test_emit streams", &lib));
        unsetenv("CXLA_CFLAGS");
        for (int off = 0; off <= 16 && lib; off += 16) {
            out_offset = off;
            for (int i = 0; i < ncases; i++)
                for (int rep = 0; rep < 3; rep++) run_case(lib, i, rep);
        }
        out_offset = 0;
        cpu_library_close(lib);
    }
    free(tu);
    for (int i = 0; i < ncases; i++) {
        cxla_module_destroy(tcases[i].module);
        free(tcases[i].text);
    }
    ncases = 0;
}

/* The elements of the first transpose block ("_Alignas(64) T blkN[SIZE]") after |from| in
 * |tu|, or -1. */
static long block_elements(const char *tu, const char *from) {
    const char *at = tu ? strstr(tu, from) : NULL;
    at = at ? strstr(at, " blk") : NULL;
    at = at ? strchr(at, '[') : NULL;
    return at ? strtol(at + 1, NULL, 10) : -1;
}

/* Transpose tiles (emit_transpose.c, tile_extents): 256-byte operand rows and blocks of
 * 16 KiB in cache; 128 bytes along both sides where the transposes read at least
 * CXLA_CPU_STREAM_BYTES (here 1); CXLA_CPU_TRANSPOSE_TILE=AxB sets them (a bad value is
 * ignored). The forced tiles, with partial tiles along both dimensions, against the
 * interpreter. */
static void test_transpose_tiles(void) {
    setup_cache();
    ncases = 0;
    add_case("HloModule m\nENTRY e {\n  p = f32[144,67] parameter(0)\n"
             "  ROOT r = f32[67,144] transpose(p), dimensions={1,0}\n}\n");
    add_case("HloModule m\nENTRY e {\n  p = f64[72,35] parameter(0)\n"
             "  ROOT r = f64[35,72] transpose(p), dimensions={1,0}\n}\n");
    /* Settings: none, big, forced 16x8, forced with a bad value. Blocks (f32, f64). */
    const char *stream[4] = {NULL, "1", NULL, NULL}, *tile[4] = {NULL, NULL, "16x8", "7x8"};
    const long want[4][2] = {
        {64 * 64, 32 * 64}, {32 * 32, 16 * 16}, {16 * 8, 16 * 8}, {64 * 64, 32 * 64}};
    for (int k = 0; k < 4; k++) {
        if (stream[k]) setenv("CXLA_CPU_STREAM_BYTES", stream[k], 1);
        if (tile[k]) setenv("CXLA_CPU_TRANSPOSE_TILE", tile[k], 1);
        size_t len = 0;
        int emitted = 0;
        char *tu = emit_all(&len, &emitted);
        unsetenv("CXLA_CPU_STREAM_BYTES");
        unsetenv("CXLA_CPU_TRANSPOSE_TILE");
        CHECK(tu != NULL && emitted == ncases);
        for (int i = 0; i < ncases; i++) {
            char body[64];
            snprintf(body, sizeof body, "%s_body(", tcases[i].name);
            long got = block_elements(tu, body);
            CHECK_MSG(got == want[k][i], "setting %d, case %d: a block of %ld elements, not %ld", k,
                      i, got, want[k][i]);
        }
        if (k == 2 && tu) {
            const char *sources[1] = {tu};
            cpu_library *lib = NULL;
            CHECK_OK(cpu_library_compile(sources, &len, 1, "test_emit tiles", &lib));
            for (int i = 0; i < ncases && lib; i++)
                for (int rep = 0; rep < 3; rep++) run_case(lib, i, rep);
            cpu_library_close(lib);
        }
        free(tu);
        for (int i = 0; i < ncases; i++) cxla_module_destroy(tcases[i].module);
    }
    for (int i = 0; i < ncases; i++) free(tcases[i].text);
    ncases = 0;
}

/* The complex functions (complex_cases) against the interpreter, in a translation unit of
 * their own, compiled by gcc and by clang (where installed; both have <complex.h>) and run
 * with split ranges: C99's functions with every combination of NaN, +-inf, -0 and denormal
 * parts, bit for bit. */
static void test_complex_against_interpreter(void) {
    setup_cache();
    ncases = 0;
    complex_cases();
    size_t len = 0;
    int emitted = 0;
    char *tu = emit_all(&len, &emitted);
    CHECK(tu != NULL);
    CHECK(emitted == ncases);
    CHECK(tu && strstr(tu, "cacosh(") != NULL && strstr(tu, "#error") != NULL);
    bool clang = system("clang --version > /dev/null 2>&1") == 0;
    for (int c = 0; c < (clang ? 2 : 1) && tu; c++) {
        const char *sources[1] = {tu};
        size_t lengths[1] = {len};
        cpu_library *lib = NULL;
        if (c == 1) setenv("CXLA_CC", "clang", 1);
        setenv("CXLA_CFLAGS", "-O2 -march=native -Wall -Wextra -Werror", 1);
        CHECK_OK(cpu_library_compile(sources, lengths, 1, "test_emit complex", &lib));
        unsetenv("CXLA_CFLAGS");
        unsetenv("CXLA_CC");
        if (lib)
            for (int i = 0; i < ncases; i++)
                for (int rep = 0; rep < 3; rep++) run_case(lib, i, rep);
        cpu_library_close(lib);
    }
    free(tu);
    for (int i = 0; i < ncases; i++) {
        cxla_module_destroy(tcases[i].module);
        free(tcases[i].text);
    }
    ncases = 0;
}

TEST_MAIN(TEST(test_against_interpreter), TEST(test_transposes_against_interpreter),
          TEST(test_streams_against_interpreter), TEST(test_transpose_tiles),
          TEST(test_complex_against_interpreter), TEST(test_window_gather_scatter_are_kernels),
          TEST(test_pool_nan_payloads), TEST(test_scalar_writer_bounds))
