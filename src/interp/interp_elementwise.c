/* Interpreter handlers: the elementwise family (see interp.h).
 *
 * Unary and binary arithmetic, comparisons, select, clamp, conversions, reduce-precision,
 * stochastic-convert and iota. The handlers check operands, make the result and pick a
 * typed kernel (interp_elementwise.h); f16, bf16, the f8 types and f4e2m1fn run through
 * the f32 kernels a chunk at a time and are rounded to nearest even on every result.
 * The implementation-defined cases are written in docs/semantics.md, "Elementwise
 * operations".
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp_elementwise.h"

static int64_t min64(int64_t a, int64_t b) {
    return a < b ? a : b;
}

static bool is_int_like(cxla_type t) {
    return t == CXLA_PRED || cxla_type_is_integer(t);
}

static const char *tname(cxla_type t) {
    return cxla_type_name(t);
}

static cxla_status not_defined(const cxla_instr *instr, cxla_type t) {
    return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "not defined for %s operands",
                        tname(t));
}

/* Checks that operand |i| is an array. */
static cxla_status expect_array(const cxla_instr *instr, const cxla_literal *lit, int i) {
    if (!lit || !cxla_type_is_array(cxla_literal_type(lit)))
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "operand %d must be an array", i);
    return NULL;
}

static bool same_dims(const cxla_shape *a, const cxla_shape *b) {
    if (a->rank != b->rank) return false;
    for (int64_t i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

/* Operand |i| must have the dimensions of |like| (or be a scalar when |scalar_ok|). */
static cxla_status expect_dims(const cxla_instr *instr, const cxla_literal *lit, int i,
                               const cxla_literal *like, bool scalar_ok) {
    CXLA_RETURN_IF_ERROR(expect_array(instr, lit, i));
    const cxla_shape *s = cxla_literal_shape(lit);
    if (same_dims(s, cxla_literal_shape(like)) || (scalar_ok && s->rank == 0)) return NULL;
    char *a = cxla_shape_to_string(s, CXLA_SHAPE_PRINT_NO_LAYOUT);
    char *b = cxla_shape_to_string(cxla_literal_shape(like), CXLA_SHAPE_PRINT_NO_LAYOUT);
    cxla_status st = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                  "operand %d is %s but must have the dimensions of %s", i,
                                  a ? a : "?", b ? b : "?");
    free(a);
    free(b);
    return st;
}

/* A new array with |like|'s dimensions and element type |type|. */
static cxla_status new_like(const cxla_literal *like, cxla_type type, cxla_literal **out) {
    return interp_new_array_of(cxla_literal_shape(like), type, out);
}

/* In place: an operand this instruction is the last user of becomes its result when the
 * result has the operand's element type and dimensions (a run's memory is then its live
 * set: docs/semantics.md, "Memory"). The kernels take operands and results that do not
 * overlap (restrict), so an in-place result is computed a block at a time into a buffer
 * of IN_PLACE_BYTES on the stack and copied back over the block it read. Only arrays of
 * whole-byte elements, row-major, static, are taken (the others get a new result), and
 * none under --check-finite. */
enum { IN_PLACE_BYTES = 16 * 1024 };

static cxla_literal *take_in_place(interp_ctx *ctx, const cxla_literal *const *operands,
                                   int64_t k) {
    /* --check-finite blames an instruction only when its operands, still there after it,
     * were finite: it keeps them. */
    if (ctx->options.check_finite) return NULL;
    cxla_literal *x = interp_take_operand_shared(ctx, k);
    if (!x) return NULL;
    const cxla_shape *s = cxla_literal_shape(x);
    size_t es = cxla_type_storage(s->type);
    int64_t n = cxla_literal_element_count(x);
    bool dynamic = false;
    for (int64_t d = 0; s->dynamic && d < s->rank; d++) dynamic = dynamic || s->dynamic[d];
    /* Only the operand the handler was given (a driver that passes another, converted
     * or resized, keeps the frame's). */
    if (x == operands[k] && cxla_type_is_array(s->type) && !dynamic && es >= 1 && es <= 16 &&
        (size_t)cxla_type_bits(s->type) == 8 * es && cxla_layout_is_default(s) &&
        cxla_literal_byte_size(x) == (size_t)n * es)
        return x;
    interp_give_back_operand(ctx, k, x);
    return NULL;
}

/* The declared result element type must be |type|. */
static cxla_status expect_result_type(const cxla_instr *instr, cxla_type type) {
    if (instr->shape.type != type)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the result is declared %s but the operation gives %s",
                            tname(instr->shape.type), tname(type));
    return NULL;
}

#define DATA(lit) cxla_literal_data_const(lit)
#define CHUNK     INTERP_EW_CHUNK

/* ---- unary ------------------------------------------------------------------------ */

static bool small_unary(cxla_opcode op, cxla_type t, const void *x, cxla_type rt, void *out,
                        int64_t n) {
    float a[CHUNK], r[CHUNK];
    size_t es = cxla_type_storage(t), rs = cxla_type_storage(rt);
    for (int64_t off = 0; off < n; off += CHUNK) {
        int64_t m = min64(n - off, CHUNK);
        interp_small_to_f32(t, (const char *)x + (size_t)off * es, a, m);
        if (op == CXLA_OP_IS_FINITE) {
            interp_ew_float_is_finite(CXLA_F32, a, (uint8_t *)out + off, m);
            continue;
        }
        if (!interp_ew_float_unary(op, CXLA_F32, a, r, m)) return false;
        interp_f32_to_small(rt, r, (char *)out + (size_t)off * rs, m);
    }
    return true;
}

static bool unary_kernel(cxla_opcode op, cxla_type t, cxla_type rt, const void *x, void *o,
                         int64_t n) {
    if (is_int_like(t)) return interp_ew_int_unary(op, t, x, o, n);
    if (cxla_type_is_complex(t))
        return op != CXLA_OP_IS_FINITE && interp_ew_complex_unary(op, t, x, o, n);
    if (t == CXLA_F32 || t == CXLA_F64) {
        if (op != CXLA_OP_IS_FINITE) return interp_ew_float_unary(op, t, x, o, n);
        interp_ew_float_is_finite(t, x, o, n);
        return true;
    }
    if (cxla_type_is_small_float(t)) return small_unary(op, t, x, rt, o, n);
    return false;
}

static cxla_status op_unary(interp_ctx *ctx, const cxla_instr *instr,
                            const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_literal *x = operands[0];
    CXLA_RETURN_IF_ERROR(expect_array(instr, x, 0));
    cxla_opcode op = instr->opcode;
    cxla_type t = cxla_literal_type(x), rt = t;
    if (cxla_type_is_complex(t) && (op == CXLA_OP_ABS || op == CXLA_OP_REAL || op == CXLA_OP_IMAG))
        rt = cxla_type_component(t);
    if (op == CXLA_OP_IS_FINITE) rt = CXLA_PRED;
    CXLA_RETURN_IF_ERROR(expect_result_type(instr, rt));
    /* The operand itself when this is its last use and the result has its storage. */
    cxla_literal *r = rt == t ? take_in_place(ctx, operands, 0) : NULL;
    if (!r) CXLA_RETURN_IF_ERROR(new_like(x, rt, &r));
    int64_t n = cxla_literal_element_count(r);
    bool ok = true;
    if (n > 0 && r == x) {
        size_t es = cxla_type_storage(t);
        char tmp[IN_PLACE_BYTES], *o = cxla_literal_data(r);
        for (int64_t off = 0; off < n && ok; off += IN_PLACE_BYTES / 16) {
            int64_t m = min64(n - off, IN_PLACE_BYTES / 16);
            ok = unary_kernel(op, t, rt, o + (size_t)off * es, tmp, m);
            memcpy(o + (size_t)off * es, tmp, (size_t)m * es);
        }
    } else if (n > 0) {
        ok = unary_kernel(op, t, rt, DATA(x), cxla_literal_data(r), n);
    }
    /* Report unsupported combinations even for empty arrays. */
    if (ok && n == 0) {
        bool flt = cxla_type_is_float(t), cpx = cxla_type_is_complex(t);
        switch (op) {
        case CXLA_OP_NOT: ok = is_int_like(t); break;
        case CXLA_OP_POPCNT:
        case CXLA_OP_CLZ: ok = cxla_type_is_integer(t); break;
        case CXLA_OP_NEGATE: ok = cxla_type_is_integer(t) || flt || cpx; break;
        case CXLA_OP_ABS:
        case CXLA_OP_SIGN: ok = cxla_type_is_integer(t) || flt || cpx; break;
        case CXLA_OP_IS_FINITE:
        case CXLA_OP_FLOOR:
        case CXLA_OP_CEIL:
        case CXLA_OP_ROUND_NEAREST_AFZ:
        case CXLA_OP_ROUND_NEAREST_EVEN:
        case CXLA_OP_ERF: ok = flt; break;
        default: ok = flt || cpx; break;
        }
    }
    if (!ok) {
        cxla_literal_free(r);
        return not_defined(instr, t);
    }
    *out = r;
    return NULL;
}

/* ---- binary ----------------------------------------------------------------------- */

static bool small_binary(cxla_opcode op, cxla_type t, const void *a, const void *b, void *out,
                         int64_t n) {
    float x[CHUNK], y[CHUNK], r[CHUNK];
    size_t es = cxla_type_storage(t);
    for (int64_t off = 0; off < n; off += CHUNK) {
        int64_t m = min64(n - off, CHUNK);
        interp_small_to_f32(t, (const char *)a + (size_t)off * es, x, m);
        interp_small_to_f32(t, (const char *)b + (size_t)off * es, y, m);
        if (!interp_ew_float_binary(op, CXLA_F32, x, y, r, m)) return false;
        interp_f32_to_small(t, r, (char *)out + (size_t)off * es, m);
    }
    return true;
}

/* Whether binary |op| applies to |t| (the kernels say so too; this answers for empty
 * arrays). */
static bool binary_defined(cxla_opcode op, cxla_type t) {
    bool integer = cxla_type_is_integer(t), pred = t == CXLA_PRED;
    bool flt = cxla_type_is_float(t), cpx = cxla_type_is_complex(t);
    switch (op) {
    case CXLA_OP_ADD:
    case CXLA_OP_MULTIPLY: return true;
    case CXLA_OP_SUBTRACT:
    case CXLA_OP_DIVIDE:
    case CXLA_OP_POWER: return integer || flt || cpx;
    case CXLA_OP_REMAINDER:
    case CXLA_OP_MAXIMUM:
    case CXLA_OP_MINIMUM: return integer || flt || (pred && op != CXLA_OP_REMAINDER);
    case CXLA_OP_ATAN2: return flt || cpx;
    case CXLA_OP_AND:
    case CXLA_OP_OR:
    case CXLA_OP_XOR: return integer || pred;
    default: return integer; /* shifts, mulhi */
    }
}

static bool binary_kernel(cxla_opcode op, cxla_type t, const void *a, const void *b, void *o,
                          int64_t n) {
    if (is_int_like(t)) return interp_ew_int_binary(op, t, a, b, o, n);
    if (cxla_type_is_complex(t)) return interp_ew_complex_binary(op, t, a, b, o, n);
    if (t == CXLA_F32 || t == CXLA_F64) return interp_ew_float_binary(op, t, a, b, o, n);
    if (cxla_type_is_small_float(t)) return small_binary(op, t, a, b, o, n);
    return false;
}

static cxla_status op_binary(interp_ctx *ctx, const cxla_instr *instr,
                             const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_literal *a = operands[0], *b = operands[1];
    CXLA_RETURN_IF_ERROR(expect_array(instr, a, 0));
    CXLA_RETURN_IF_ERROR(expect_dims(instr, b, 1, a, false));
    cxla_opcode op = instr->opcode;
    cxla_type t = cxla_literal_type(a);
    if (cxla_literal_type(b) != t)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "operands must have the same element type, got %s and %s", tname(t),
                            tname(cxla_literal_type(b)));
    if (!binary_defined(op, t)) return not_defined(instr, t);
    CXLA_RETURN_IF_ERROR(expect_result_type(instr, t));
    /* An operand this is the last use of becomes the result (take_in_place). */
    cxla_literal *r = take_in_place(ctx, operands, 0);
    if (!r) r = take_in_place(ctx, operands, 1);
    if (!r) CXLA_RETURN_IF_ERROR(new_like(a, t, &r));
    int64_t n = cxla_literal_element_count(r);
    bool ok = true;
    if (n > 0 && (r == a || r == b)) {
        size_t es = cxla_type_storage(t);
        char tmp[IN_PLACE_BYTES], *o = cxla_literal_data(r);
        const char *pa = DATA(a), *pb = DATA(b);
        for (int64_t off = 0; off < n && ok; off += IN_PLACE_BYTES / 16) {
            int64_t m = min64(n - off, IN_PLACE_BYTES / 16);
            size_t at = (size_t)off * es;
            ok = binary_kernel(op, t, pa + at, pb + at, tmp, m);
            memcpy(o + at, tmp, (size_t)m * es);
        }
    } else if (n > 0) {
        ok = binary_kernel(op, t, DATA(a), DATA(b), cxla_literal_data(r), n);
    }
    if (!ok) {
        cxla_literal_free(r);
        return not_defined(instr, t);
    }
    *out = r;
    return NULL;
}

static cxla_status op_complex(interp_ctx *ctx, const cxla_instr *instr,
                              const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_literal *re = operands[0], *im = operands[1];
    CXLA_RETURN_IF_ERROR(expect_array(instr, re, 0));
    CXLA_RETURN_IF_ERROR(expect_dims(instr, im, 1, re, false));
    cxla_type t = cxla_literal_type(re);
    if (cxla_literal_type(im) != t || (t != CXLA_F32 && t != CXLA_F64))
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "expected two f32 or two f64 operands, got %s and %s", tname(t),
                            tname(cxla_literal_type(im)));
    cxla_type rt = t == CXLA_F32 ? CXLA_C64 : CXLA_C128;
    CXLA_RETURN_IF_ERROR(expect_result_type(instr, rt));
    cxla_literal *r;
    CXLA_RETURN_IF_ERROR(new_like(re, rt, &r));
    int64_t n = cxla_literal_element_count(r);
    if (n > 0) interp_ew_make_complex(t, DATA(re), DATA(im), cxla_literal_data(r), n);
    *out = r;
    return NULL;
}

/* ---- compare ---------------------------------------------------------------------- */

static cxla_status parse_compare(const cxla_instr *instr, interp_cmp_dir *dir,
                                 interp_cmp_type *type) {
    static const struct {
        const char *name;
        interp_cmp_dir dir;
    } dirs[] = {{"EQ", INTERP_CMP_EQ}, {"NE", INTERP_CMP_NE}, {"LT", INTERP_CMP_LT},
                {"LE", INTERP_CMP_LE}, {"GT", INTERP_CMP_GT}, {"GE", INTERP_CMP_GE}};
    static const struct {
        const char *name;
        interp_cmp_type type;
    } types[] = {{"SIGNED", INTERP_CMP_SIGNED},
                 {"UNSIGNED", INTERP_CMP_UNSIGNED},
                 {"FLOAT", INTERP_CMP_FLOAT},
                 {"TOTALORDER", INTERP_CMP_TOTALORDER}};
    const char *d = cxla_instr_word(instr, CXLA_ATTR_DIRECTION);
    if (!d) return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "needs direction=");
    size_t i = 0;
    while (i < CXLA_ARRAY_SIZE(dirs) && strcmp(d, dirs[i].name) != 0) i++;
    if (i == CXLA_ARRAY_SIZE(dirs))
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "unknown direction=%s", d);
    *dir = dirs[i].dir;
    *type = INTERP_CMP_DEFAULT;
    const char *ty = cxla_instr_word(instr, CXLA_ATTR_COMPARISON_TYPE);
    if (ty) {
        size_t k = 0;
        while (k < CXLA_ARRAY_SIZE(types) && strcmp(ty, types[k].name) != 0) k++;
        if (k == CXLA_ARRAY_SIZE(types))
            return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "unknown comparison type=%s",
                                ty);
        *type = types[k].type;
    }
    return NULL;
}

static void small_compare(interp_cmp_dir dir, bool total, cxla_type t, const void *a, const void *b,
                          uint8_t *out, int64_t n) {
    float x[CHUNK], y[CHUNK];
    size_t es = cxla_type_storage(t);
    for (int64_t off = 0; off < n; off += CHUNK) {
        int64_t m = min64(n - off, CHUNK);
        interp_small_to_f32(t, (const char *)a + (size_t)off * es, x, m);
        interp_small_to_f32(t, (const char *)b + (size_t)off * es, y, m);
        if (total)
            interp_ew_float_compare_total(dir, CXLA_F32, x, y, out + off, m);
        else
            interp_ew_float_compare(dir, CXLA_F32, x, y, out + off, m);
    }
}

static cxla_status op_compare(interp_ctx *ctx, const cxla_instr *instr,
                              const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_literal *a = operands[0], *b = operands[1];
    CXLA_RETURN_IF_ERROR(expect_array(instr, a, 0));
    CXLA_RETURN_IF_ERROR(expect_dims(instr, b, 1, a, false));
    cxla_type t = cxla_literal_type(a);
    if (cxla_literal_type(b) != t)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "operands must have the same element type, got %s and %s", tname(t),
                            tname(cxla_literal_type(b)));
    interp_cmp_dir dir = INTERP_CMP_EQ;
    interp_cmp_type ct = INTERP_CMP_DEFAULT;
    CXLA_RETURN_IF_ERROR(parse_compare(instr, &dir, &ct));
    CXLA_RETURN_IF_ERROR(expect_result_type(instr, CXLA_PRED));
    if (cxla_type_is_complex(t) && dir != INTERP_CMP_EQ && dir != INTERP_CMP_NE)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "complex numbers are not ordered: only EQ and NE compare %s", tname(t));
    cxla_literal *r;
    CXLA_RETURN_IF_ERROR(new_like(a, CXLA_PRED, &r));
    int64_t n = cxla_literal_element_count(r);
    uint8_t *o = cxla_literal_data(r);
    bool total = ct == INTERP_CMP_TOTALORDER;
    if (n == 0) {
        /* nothing to compare */
    } else if (is_int_like(t)) {
        bool signed_order =
            ct == INTERP_CMP_SIGNED || (ct != INTERP_CMP_UNSIGNED && cxla_type_is_signed(t));
        interp_ew_int_compare(dir, signed_order, t, DATA(a), DATA(b), o, n);
    } else if (cxla_type_is_complex(t)) {
        interp_ew_complex_compare(dir, total, t, DATA(a), DATA(b), o, n);
    } else if (t == CXLA_F32 || t == CXLA_F64) {
        if (total)
            interp_ew_float_compare_total(dir, t, DATA(a), DATA(b), o, n);
        else
            interp_ew_float_compare(dir, t, DATA(a), DATA(b), o, n);
    } else {
        small_compare(dir, total, t, DATA(a), DATA(b), o, n);
    }
    *out = r;
    return NULL;
}

/* ---- select and clamp ------------------------------------------------------------- */

#define SELECT_LOOP(T)                                                                             \
    do {                                                                                           \
        const T *x = on_true, *y = on_false;                                                       \
        T *z = out;                                                                                \
        for (int64_t i = 0; i < n; i++) z[i] = p[i * ps] ? x[i * ts] : y[i * fs];                  \
    } while (0)

/* Elements of |es| bytes; strides 0 or 1 (a scalar operand is broadcast). */
static void select_elements(size_t es, const uint8_t *p, int64_t ps, const void *on_true,
                            int64_t ts, const void *on_false, int64_t fs, void *out, int64_t n) {
    switch (es) {
    case 1: SELECT_LOOP(uint8_t); break;
    case 2: SELECT_LOOP(uint16_t); break;
    case 4: SELECT_LOOP(uint32_t); break;
    case 8: SELECT_LOOP(uint64_t); break;
    default: {
        const char *x = on_true, *y = on_false;
        char *z = out;
        for (int64_t i = 0; i < n; i++)
            memcpy(z + (size_t)i * es,
                   p[i * ps] ? x + (size_t)(i * ts) * es : y + (size_t)(i * fs) * es, es);
        break;
    }
    }
}

static cxla_status op_select(interp_ctx *ctx, const cxla_instr *instr,
                             const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_literal *p = operands[0], *t = operands[1], *f = operands[2];
    CXLA_RETURN_IF_ERROR(expect_array(instr, p, 0));
    if (cxla_literal_type(p) != CXLA_PRED)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the predicate must be pred, got %s", tname(cxla_literal_type(p)));
    bool scalar_pred = cxla_literal_shape(p)->rank == 0;
    if (cxla_literal_type(t) == CXLA_TUPLE || cxla_literal_type(f) == CXLA_TUPLE) {
        /* The old form: a scalar predicate picks one of two tuples whole. */
        if (!scalar_pred || !cxla_shape_compatible(cxla_literal_shape(t), cxla_literal_shape(f)))
            return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                "selecting tuples needs a scalar predicate and two tuples of one "
                                "shape");
        bool v = ((const uint8_t *)DATA(p))[0] != 0;
        return cxla_literal_clone(v ? t : f, out);
    }
    CXLA_RETURN_IF_ERROR(expect_array(instr, t, 1));
    CXLA_RETURN_IF_ERROR(expect_dims(instr, f, 2, t, false));
    CXLA_RETURN_IF_ERROR(expect_dims(instr, p, 0, t, true));
    cxla_type ty = cxla_literal_type(t);
    if (cxla_literal_type(f) != ty)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "on_true and on_false must have the same element type, got %s and %s",
                            tname(ty), tname(cxla_literal_type(f)));
    CXLA_RETURN_IF_ERROR(expect_result_type(instr, ty));
    cxla_literal *r;
    CXLA_RETURN_IF_ERROR(new_like(t, ty, &r));
    int64_t n = cxla_literal_element_count(r);
    if (n > 0) {
        select_elements(cxla_type_storage(ty), DATA(p), scalar_pred ? 0 : 1, DATA(t), 1, DATA(f), 1,
                        cxla_literal_data(r), n);
    }
    *out = r;
    return NULL;
}

static cxla_status op_clamp(interp_ctx *ctx, const cxla_instr *instr,
                            const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_literal *lo = operands[0], *x = operands[1], *hi = operands[2];
    CXLA_RETURN_IF_ERROR(expect_array(instr, x, 1));
    CXLA_RETURN_IF_ERROR(expect_dims(instr, lo, 0, x, true));
    CXLA_RETURN_IF_ERROR(expect_dims(instr, hi, 2, x, true));
    cxla_type t = cxla_literal_type(x);
    if (cxla_literal_type(lo) != t || cxla_literal_type(hi) != t)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "min, operand and max must have one element type, got %s, %s and %s",
                            tname(cxla_literal_type(lo)), tname(t), tname(cxla_literal_type(hi)));
    if (cxla_type_is_complex(t)) return not_defined(instr, t);
    CXLA_RETURN_IF_ERROR(expect_result_type(instr, t));
    cxla_literal *r;
    CXLA_RETURN_IF_ERROR(new_like(x, t, &r));
    int64_t n = cxla_literal_element_count(r);
    void *o = cxla_literal_data(r);
    /* A rank-0 bound next to a larger operand is broadcast (stride 0). */
    int64_t ls = cxla_literal_shape(lo)->rank == 0 && cxla_literal_shape(x)->rank > 0 ? 0 : 1;
    int64_t hs = cxla_literal_shape(hi)->rank == 0 && cxla_literal_shape(x)->rank > 0 ? 0 : 1;
    if (n == 0) {
        /* empty */
    } else if (is_int_like(t)) {
        interp_ew_int_clamp(t, DATA(lo), ls, DATA(x), 1, DATA(hi), hs, o, n);
    } else if (t == CXLA_F32 || t == CXLA_F64) {
        interp_ew_float_clamp(t, DATA(lo), ls, DATA(x), 1, DATA(hi), hs, o, n);
    } else {
        /* Small floats: compare in f32; the result is one of the inputs, so exact. */
        float l[CHUNK], v[CHUNK], h[CHUNK], res[CHUNK];
        size_t es = cxla_type_storage(t);
        for (int64_t off = 0; off < n; off += CHUNK) {
            int64_t m = min64(n - off, CHUNK);
            interp_small_to_f32(t, (const char *)DATA(lo) + (size_t)(off * ls) * es, l, ls ? m : 1);
            interp_small_to_f32(t, (const char *)DATA(x) + (size_t)off * es, v, m);
            interp_small_to_f32(t, (const char *)DATA(hi) + (size_t)(off * hs) * es, h, hs ? m : 1);
            interp_ew_float_clamp(CXLA_F32, l, ls, v, 1, h, hs, res, m);
            interp_f32_to_small(t, res, (char *)o + (size_t)off * es, m);
        }
    }
    *out = r;
    return NULL;
}

/* ---- conversions ------------------------------------------------------------------ */

static cxla_status op_convert(interp_ctx *ctx, const cxla_instr *instr,
                              const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_literal *x = operands[0];
    CXLA_RETURN_IF_ERROR(expect_array(instr, x, 0));
    cxla_type to = instr->shape.type;
    if (!cxla_type_is_array(to))
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "cannot convert to %s", tname(to));
    cxla_literal *r;
    CXLA_RETURN_IF_ERROR(new_like(x, to, &r));
    int64_t n = cxla_literal_element_count(r);
    if (n > 0) interp_ew_convert(cxla_literal_type(x), DATA(x), to, cxla_literal_data(r), n);
    *out = r;
    return NULL;
}

static cxla_status op_bitcast_convert(interp_ctx *ctx, const cxla_instr *instr,
                                      const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_literal *x = operands[0];
    CXLA_RETURN_IF_ERROR(expect_array(instr, x, 0));
    cxla_type from = cxla_literal_type(x), to = instr->shape.type;
    if (!cxla_type_is_array(to))
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "cannot convert to %s", tname(to));
    int wi = interp_ew_bitcast_bits(from), wo = interp_ew_bitcast_bits(to);
    int lo = wi < wo ? wi : wo, hi = wi < wo ? wo : wi;
    if (hi % lo != 0 || (wi != wo && (cxla_type_is_complex(from) || cxla_type_is_complex(to))))
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "cannot reinterpret %d-bit %s as %d-bit %s", wi, tname(from), wo,
                            tname(to));
    cxla_shape s = instr->shape;
    s.dynamic = NULL;
    cxla_literal *r;
    CXLA_RETURN_IF_ERROR(interp_new_array(&s, &r));
    int64_t ni = cxla_literal_element_count(x), no = cxla_literal_element_count(r);
    if ((wi <= wo && ni != no * (wo / wi)) || (wi > wo && no != ni * (wi / wo))) {
        cxla_literal_free(r);
        char *a = cxla_shape_to_string(cxla_literal_shape(x), CXLA_SHAPE_PRINT_NO_LAYOUT);
        char *b = cxla_shape_to_string(&instr->shape, CXLA_SHAPE_PRINT_NO_LAYOUT);
        cxla_status st = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                      "the bits of %s do not fill %s", a ? a : "?", b ? b : "?");
        free(a);
        free(b);
        return st;
    }
    if (no > 0) interp_ew_bitcast_convert(from, DATA(x), ni, to, cxla_literal_data(r), no);
    *out = r;
    return NULL;
}

static cxla_status op_reduce_precision(interp_ctx *ctx, const cxla_instr *instr,
                                       const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_literal *x = operands[0];
    CXLA_RETURN_IF_ERROR(expect_array(instr, x, 0));
    cxla_type t = cxla_literal_type(x);
    if (!cxla_type_is_float(t)) return not_defined(instr, t);
    int64_t e, m;
    if (!cxla_instr_int(instr, CXLA_ATTR_EXPONENT_BITS, &e) ||
        !cxla_instr_int(instr, CXLA_ATTR_MANTISSA_BITS, &m))
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "needs exponent_bits= and mantissa_bits=");
    if (e < 1 || m < 0)
        return interp_error(
            instr, CXLA_STATUS_INVALID_ARGUMENT,
            "exponent_bits=%" PRId64 " must be >= 1 and mantissa_bits=%" PRId64 " >= 0", e, m);
    CXLA_RETURN_IF_ERROR(expect_result_type(instr, t));
    cxla_literal *r;
    CXLA_RETURN_IF_ERROR(new_like(x, t, &r));
    int64_t n = cxla_literal_element_count(r);
    if (n > 0) interp_ew_reduce_precision(t, DATA(x), cxla_literal_data(r), n, e, m);
    *out = r;
    return NULL;
}

static cxla_status op_stochastic_convert(interp_ctx *ctx, const cxla_instr *instr,
                                         const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_literal *x = operands[0], *rnd = operands[1];
    CXLA_RETURN_IF_ERROR(expect_array(instr, x, 0));
    CXLA_RETURN_IF_ERROR(expect_dims(instr, rnd, 1, x, false));
    cxla_type t = cxla_literal_type(x), rt = cxla_literal_type(rnd), to = instr->shape.type;
    if (!cxla_type_is_float(t)) return not_defined(instr, t);
    if (!cxla_type_is_unsigned(rt) || cxla_type_bits(rt) != cxla_type_bits(t))
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the random bits must be unsigned integers as wide as %s, got %s",
                            tname(t), tname(rt));
    if (!cxla_type_is_signed(to))
        return interp_error(instr, CXLA_STATUS_UNIMPLEMENTED,
                            "converting %s to %s stochastically is not supported (XLA converts "
                            "floats to signed integers only)",
                            tname(t), tname(to));
    cxla_literal *r;
    CXLA_RETURN_IF_ERROR(new_like(x, to, &r));
    int64_t n = cxla_literal_element_count(r);
    if (n > 0) interp_ew_stochastic_convert(t, DATA(x), rt, DATA(rnd), to, cxla_literal_data(r), n);
    *out = r;
    return NULL;
}

static cxla_status op_iota(interp_ctx *ctx, const cxla_instr *instr,
                           const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_shape *s = &instr->shape;
    if (!cxla_type_is_array(s->type) || s->rank < 1)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the result must be an array of rank >= 1");
    int64_t d;
    if (!cxla_instr_int(instr, CXLA_ATTR_IOTA_DIMENSION, &d) || d < 0 || d >= s->rank)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "needs an iota_dimension= in [0, %" PRId64 ")", s->rank);
    cxla_shape shape = *s;
    shape.dynamic = NULL;
    cxla_literal *r;
    CXLA_RETURN_IF_ERROR(interp_new_array(&shape, &r));
    if (cxla_literal_element_count(r) > 0)
        interp_ew_iota(s->type, s->rank, s->dims, d, cxla_literal_data(r));
    *out = r;
    return NULL;
}

const interp_op_fn interp_elementwise_ops[CXLA_OP_COUNT] = {
    [CXLA_OP_IOTA] = op_iota,
    [CXLA_OP_ABS] = op_unary,
    [CXLA_OP_NEGATE] = op_unary,
    [CXLA_OP_SIGN] = op_unary,
    [CXLA_OP_NOT] = op_unary,
    [CXLA_OP_FLOOR] = op_unary,
    [CXLA_OP_CEIL] = op_unary,
    [CXLA_OP_ROUND_NEAREST_AFZ] = op_unary,
    [CXLA_OP_ROUND_NEAREST_EVEN] = op_unary,
    [CXLA_OP_EXP] = op_unary,
    [CXLA_OP_EXPM1] = op_unary,
    [CXLA_OP_LOG] = op_unary,
    [CXLA_OP_LOG1P] = op_unary,
    [CXLA_OP_LOGISTIC] = op_unary,
    [CXLA_OP_SQRT] = op_unary,
    [CXLA_OP_RSQRT] = op_unary,
    [CXLA_OP_CBRT] = op_unary,
    [CXLA_OP_SIN] = op_unary,
    [CXLA_OP_COS] = op_unary,
    [CXLA_OP_TAN] = op_unary,
    [CXLA_OP_TANH] = op_unary,
    [CXLA_OP_ACOS] = op_unary,
    [CXLA_OP_ACOSH] = op_unary,
    [CXLA_OP_ASIN] = op_unary,
    [CXLA_OP_ASINH] = op_unary,
    [CXLA_OP_ATAN] = op_unary,
    [CXLA_OP_ATANH] = op_unary,
    [CXLA_OP_COSH] = op_unary,
    [CXLA_OP_SINH] = op_unary,
    [CXLA_OP_ERF] = op_unary,
    [CXLA_OP_IS_FINITE] = op_unary,
    [CXLA_OP_POPCNT] = op_unary,
    [CXLA_OP_CLZ] = op_unary,
    [CXLA_OP_REAL] = op_unary,
    [CXLA_OP_IMAG] = op_unary,
    [CXLA_OP_CONVERT] = op_convert,
    [CXLA_OP_BITCAST_CONVERT] = op_bitcast_convert,
    [CXLA_OP_REDUCE_PRECISION] = op_reduce_precision,
    [CXLA_OP_STOCHASTIC_CONVERT] = op_stochastic_convert,
    [CXLA_OP_ADD] = op_binary,
    [CXLA_OP_SUBTRACT] = op_binary,
    [CXLA_OP_MULTIPLY] = op_binary,
    [CXLA_OP_DIVIDE] = op_binary,
    [CXLA_OP_REMAINDER] = op_binary,
    [CXLA_OP_POWER] = op_binary,
    [CXLA_OP_ATAN2] = op_binary,
    [CXLA_OP_MAXIMUM] = op_binary,
    [CXLA_OP_MINIMUM] = op_binary,
    [CXLA_OP_AND] = op_binary,
    [CXLA_OP_OR] = op_binary,
    [CXLA_OP_XOR] = op_binary,
    [CXLA_OP_SHIFT_LEFT] = op_binary,
    [CXLA_OP_SHIFT_RIGHT_ARITHMETIC] = op_binary,
    [CXLA_OP_SHIFT_RIGHT_LOGICAL] = op_binary,
    [CXLA_OP_MULHI] = op_binary,
    [CXLA_OP_COMPLEX] = op_complex,
    [CXLA_OP_COMPARE] = op_compare,
    [CXLA_OP_SELECT] = op_select,
    [CXLA_OP_CLAMP] = op_clamp,
};
