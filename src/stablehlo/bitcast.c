/* stablehlo.bitcast_convert where StableHLO's bits differ from HLO's.
 *
 * StableHLO's i1 is one bit: a w-bit element reinterprets as w booleans along a new
 * minor dimension, bit i (counting from the least significant) at index i, and w
 * booleans pack back into one element the same way. HLO's pred is a byte and its
 * bitcast-convert does not split values into bits, so the converter builds the bits
 * from integer operations: (u >> iota) & 1 != 0 one way, reduce-or of
 * (u32(p) << iota) the other.
 *
 * Complex types of different widths (complex<f64> <-> 2 x complex<f32>) reinterpret the
 * bytes of the (real, imaginary) pair; HLO's bitcast-convert only splits real types, so
 * each f64 part splits into two f32 (least significant half first) and the halves
 * regroup into complex values: c128 (r, i) gives [(lo r, hi r), (lo i, hi i)].
 *
 * Everything else is HLO's bitcast-convert as written. */
#include <inttypes.h>
#include <string.h>

#include "stablehlo/convert_internal.h"

/* The unsigned integer type of |bits| bits, or CXLA_TYPE_INVALID. */
static cxla_type unsigned_of(int bits) {
    switch (bits) {
    case 1: return CXLA_U1;
    case 2: return CXLA_U2;
    case 4: return CXLA_U4;
    case 8: return CXLA_U8;
    case 16: return CXLA_U16;
    case 32: return CXLA_U32;
    case 64: return CXLA_U64;
    default: return CXLA_TYPE_INVALID;
    }
}

/* |x|'s shape with another element type (and no layout). */
static cxla_shape retype(const cxla_shape *x, cxla_type t) {
    cxla_shape sh = *x;
    sh.type = t;
    sh.layout = NULL;
    return sh;
}

static cxla_instr *emit1(cv *c, cv_scope *s, const mlir_op *op, cxla_opcode opc,
                         const cxla_shape *sh, cxla_instr *x) {
    return x ? cv_emit(c, s, op, opc, sh, 1, &x) : NULL;
}

static cxla_instr *emit2(cv *c, cv_scope *s, const mlir_op *op, cxla_opcode opc,
                         const cxla_shape *sh, cxla_instr *x, cxla_instr *y) {
    cxla_instr *xy[2] = {x, y};
    return x && y ? cv_emit(c, s, op, opc, sh, 2, xy) : NULL;
}

/* A scalar constant broadcast to |sh|. */
static cxla_instr *splat(cv *c, cv_scope *s, const mlir_op *op, const cxla_shape *sh, double v) {
    cxla_instr *k = cv_constant_scalar(c, s, sh->type, v);
    if (!k || sh->rank == 0) return k;
    cxla_instr *b = cv_emit(c, s, op, CXLA_OP_BROADCAST, sh, 1, &k);
    return b && cv_attr_ints(c, op, b, CXLA_ATTR_DIMENSIONS, NULL, 0) ? b : NULL;
}

/* iota along the last dimension of |sh|. */
static cxla_instr *iota_last(cv *c, cv_scope *s, const mlir_op *op, const cxla_shape *sh) {
    cxla_instr *in = cv_emit(c, s, op, CXLA_OP_IOTA, sh, 0, NULL);
    return in && cv_attr_int(c, op, in, CXLA_ATTR_IOTA_DIMENSION, sh->rank - 1) ? in : NULL;
}

/* A w-bit value -> w booleans (bit i at index i of the new last dimension). */
static cxla_instr *to_bits(cv *c, cv_scope *s, const mlir_op *op, cxla_instr *x,
                           const cxla_shape *rs, cxla_type ut) {
    cxla_shape us = retype(&x->shape, ut);
    cxla_instr *u = x->shape.type == ut ? x : emit1(c, s, op, CXLA_OP_BITCAST_CONVERT, &us, x);
    cxla_shape wide = retype(rs, ut);
    cxla_instr *b = emit1(c, s, op, CXLA_OP_BROADCAST, &wide, u);
    int64_t keep[CXLA_MAX_RANK];
    for (int64_t i = 0; i < x->shape.rank; i++) keep[i] = i;
    if (!b || !cv_attr_ints(c, op, b, CXLA_ATTR_DIMENSIONS, keep, x->shape.rank)) return NULL;
    cxla_instr *shifted =
        emit2(c, s, op, CXLA_OP_SHIFT_RIGHT_LOGICAL, &wide, b, iota_last(c, s, op, &wide));
    cxla_instr *bit = emit2(c, s, op, CXLA_OP_AND, &wide, shifted, splat(c, s, op, &wide, 1));
    cxla_shape ps = retype(rs, CXLA_PRED);
    cxla_instr *p = emit2(c, s, op, CXLA_OP_COMPARE, &ps, bit, splat(c, s, op, &wide, 0));
    return p && cv_attr_text(c, op, p, CXLA_ATTR_DIRECTION, "NE") ? p : NULL;
}

/* w booleans along the last dimension -> one w-bit value of |rs|'s type. */
static cxla_instr *from_bits(cv *c, cv_scope *s, const mlir_op *op, cxla_instr *x,
                             const cxla_shape *rs, cxla_type ut) {
    cxla_shape wide = retype(&x->shape, ut);
    cxla_instr *u = emit1(c, s, op, CXLA_OP_CONVERT, &wide, x);
    cxla_instr *placed = emit2(c, s, op, CXLA_OP_SHIFT_LEFT, &wide, u, iota_last(c, s, op, &wide));
    cxla_computation *orc = cv_binary_computation(c, op, CXLA_OP_OR, ut, 1);
    cxla_instr *zero = cv_constant_scalar(c, s, ut, 0);
    if (!placed || !orc || !zero) return NULL;
    cxla_shape us = retype(rs, ut);
    cxla_instr *r = emit2(c, s, op, CXLA_OP_REDUCE, &us, placed, zero);
    int64_t last = x->shape.rank - 1;
    if (!r || !cv_attr_ints(c, op, r, CXLA_ATTR_DIMENSIONS, &last, 1) ||
        !cv_attr_comps(c, op, r, CXLA_ATTR_TO_APPLY, &orc, 1))
        return NULL;
    return rs->type == ut ? r : emit1(c, s, op, CXLA_OP_BITCAST_CONVERT, rs, r);
}

/* x[..., lo:hi] along the last dimension. */
static cxla_instr *slice_last(cv *c, cv_scope *s, const mlir_op *op, cxla_instr *x, int64_t lo,
                              int64_t hi) {
    if (!x) return NULL;
    int64_t dims[CXLA_MAX_RANK];
    int64_t rank = x->shape.rank;
    memcpy(dims, x->shape.dims, sizeof(int64_t) * (size_t)rank);
    dims[rank - 1] = hi - lo;
    cxla_shape sh = {.type = x->shape.type, .rank = rank, .dims = dims};
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_strbuf_putc(&b, '{');
    for (int64_t d = 0; d < rank; d++)
        cxla_strbuf_printf(&b, "%s[%" PRId64 ":%" PRId64 ":1]", d ? "," : "",
                           d == rank - 1 ? lo : 0, d == rank - 1 ? hi : dims[d]);
    cxla_strbuf_putc(&b, '}');
    cxla_instr *in = cv_emit(c, s, op, CXLA_OP_SLICE, &sh, 1, &x);
    bool ok = in && cv_attr_text(c, op, in, CXLA_ATTR_SLICE, b.data);
    cxla_strbuf_free(&b);
    return ok ? in : NULL;
}

/* concatenate(a, b) along the last dimension. */
static cxla_instr *concat_last(cv *c, cv_scope *s, const mlir_op *op, cxla_instr *a,
                               cxla_instr *b) {
    if (!a || !b) return NULL;
    int64_t dims[CXLA_MAX_RANK];
    int64_t rank = a->shape.rank;
    memcpy(dims, a->shape.dims, sizeof(int64_t) * (size_t)rank);
    dims[rank - 1] += b->shape.dims[rank - 1];
    cxla_shape sh = {.type = a->shape.type, .rank = rank, .dims = dims};
    cxla_instr *ab[2] = {a, b};
    cxla_instr *in = cv_emit(c, s, op, CXLA_OP_CONCATENATE, &sh, 2, ab);
    int64_t d = rank - 1;
    return in && cv_attr_ints(c, op, in, CXLA_ATTR_DIMENSIONS, &d, 1) ? in : NULL;
}

/* complex<f64>[...] -> complex<f32>[..., 2]. */
static cxla_instr *split_complex(cv *c, cv_scope *s, const mlir_op *op, cxla_instr *x,
                                 const cxla_shape *rs) {
    cxla_shape part = retype(&x->shape, CXLA_F64);
    cxla_shape halves = retype(rs, CXLA_F32);
    cxla_instr *re =
        emit1(c, s, op, CXLA_OP_BITCAST_CONVERT, &halves, emit1(c, s, op, CXLA_OP_REAL, &part, x));
    cxla_instr *im =
        emit1(c, s, op, CXLA_OP_BITCAST_CONVERT, &halves, emit1(c, s, op, CXLA_OP_IMAG, &part, x));
    /* element 0 is the real part's (low, high) halves, element 1 the imaginary part's */
    cxla_instr *lows =
        concat_last(c, s, op, slice_last(c, s, op, re, 0, 1), slice_last(c, s, op, im, 0, 1));
    cxla_instr *highs =
        concat_last(c, s, op, slice_last(c, s, op, re, 1, 2), slice_last(c, s, op, im, 1, 2));
    return emit2(c, s, op, CXLA_OP_COMPLEX, rs, lows, highs);
}

/* complex<f32>[..., 2] -> complex<f64>[...]. */
static cxla_instr *join_complex(cv *c, cv_scope *s, const mlir_op *op, cxla_instr *x,
                                const cxla_shape *rs) {
    cxla_shape parts = retype(&x->shape, CXLA_F32);
    cxla_instr *re = emit1(c, s, op, CXLA_OP_REAL, &parts, x);
    cxla_instr *im = emit1(c, s, op, CXLA_OP_IMAG, &parts, x);
    cxla_shape whole = retype(rs, CXLA_F64);
    /* the f64 real part is element 0's (real, imaginary) f32 pair, the imaginary part
     * element 1's */
    cxla_instr *r64 = emit1(
        c, s, op, CXLA_OP_BITCAST_CONVERT, &whole,
        concat_last(c, s, op, slice_last(c, s, op, re, 0, 1), slice_last(c, s, op, im, 0, 1)));
    cxla_instr *i64 = emit1(
        c, s, op, CXLA_OP_BITCAST_CONVERT, &whole,
        concat_last(c, s, op, slice_last(c, s, op, re, 1, 2), slice_last(c, s, op, im, 1, 2)));
    return emit2(c, s, op, CXLA_OP_COMPLEX, rs, r64, i64);
}

/* Whether |big| is |small|'s shape with one more, last, dimension of size |n|. */
static bool adds_last_dim(const cxla_shape *small, const cxla_shape *big, int64_t n) {
    if (big->rank != small->rank + 1 || big->dims[big->rank - 1] != n) return false;
    for (int64_t i = 0; i < small->rank; i++)
        if (small->dims[i] != big->dims[i]) return false;
    return true;
}

bool cv_bitcast_convert(cv *c, cv_scope *s, const mlir_op *op) {
    cxla_instr *x;
    if (!(x = cv_one_operand(c, s, op))) return false;
    if (op->out_type_count < 1) return cv_fail(c, op, "the result type is missing");
    const cxla_shape *rs = &op->out_types[op->out_type_count - 1];
    cxla_type from = x->shape.type, to = rs->type;
    cxla_instr *r = NULL;
    if (!cxla_type_is_array(from) || !cxla_type_is_array(to)) {
        /* left to the verifier's message */
    } else if ((from == CXLA_PRED) != (to == CXLA_PRED)) {
        bool split = to == CXLA_PRED;
        const cxla_shape *one = split ? &x->shape : rs, *many = split ? rs : &x->shape;
        cxla_type t = split ? from : to;
        int bits = cxla_type_bits(t);
        cxla_type ut = cxla_type_is_complex(t) ? CXLA_TYPE_INVALID : unsigned_of(bits);
        if (ut == CXLA_TYPE_INVALID)
            return cv_fail(c, op, "bitcast_convert between i1 and %s is not supported",
                           cxla_type_name(t));
        if (!adds_last_dim(one, many, bits))
            return cv_fail(c, op,
                           "bitcast_convert between i1 and the %d-bit %s needs a last i1 "
                           "dimension of size %d",
                           bits, cxla_type_name(t), bits);
        r = split ? to_bits(c, s, op, x, rs, ut) : from_bits(c, s, op, x, rs, ut);
        return r && cv_bind_results(c, s, op, r);
    } else if (from == CXLA_C128 && to == CXLA_C64 && adds_last_dim(&x->shape, rs, 2)) {
        r = split_complex(c, s, op, x, rs);
        return r && cv_bind_results(c, s, op, r);
    } else if (from == CXLA_C64 && to == CXLA_C128 && adds_last_dim(rs, &x->shape, 2)) {
        r = join_complex(c, s, op, x, rs);
        return r && cv_bind_results(c, s, op, r);
    }
    r = cv_emit(c, s, op, CXLA_OP_BITCAST_CONVERT, rs, 1, &x);
    return r && cv_bind_results(c, s, op, r);
}
