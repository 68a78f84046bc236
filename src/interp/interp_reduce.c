/* Interpreter handlers: reduce and map, and the family table (interp_reduce.h says where
 * the other handlers live). Also the pieces reduce-window and select-and-scatter share:
 * index spaces, the typed reduction loops and calls of scalar computations.
 *
 * Reduce visits the reduced elements of each output element in row-major order and
 * folds them into the init value: acc = f(acc, x), as XLA's evaluator does. Recognized
 * reducers (interp_match_reducer) run typed loops instead of calling the computation; of
 * those, f32/f64 addition sums pairwise (the operation semantics allow any association,
 * and pairwise keeps the error at O(log n) ulps where a running sum loses O(n)), and
 * f16/bf16/f8 round to their own type after every step, as a computation written in that
 * type does. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp_reduce.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

/* ---- index spaces ------------------------------------------------------------------ */

static inline void cursor_seek(const interp_space *sp, int64_t linear, interp_cursor *c) {
    c->offset = 0;
    c->outside = 0;
    for (int64_t j = sp->rank - 1; j >= 0; j--) {
        int64_t n = sp->sizes[j];
        int64_t i = n > 0 ? linear % n : 0;
        linear = n > 0 ? linear / n : 0;
        c->index[j] = i;
        if (n <= 0) continue;
        int64_t o = sp->offsets[j][i];
        if (o < 0)
            c->outside++;
        else
            c->offset += o;
    }
}

static inline void cursor_next(const interp_space *sp, interp_cursor *c) {
    for (int64_t j = sp->rank - 1; j >= 0; j--) {
        const int64_t *t = sp->offsets[j];
        int64_t i = c->index[j];
        if (t[i] < 0)
            c->outside--;
        else
            c->offset -= t[i];
        bool carry = ++i == sp->sizes[j];
        if (carry) i = 0;
        c->index[j] = i;
        if (t[i] < 0)
            c->outside++;
        else
            c->offset += t[i];
        if (!carry) return;
    }
}

void interp_cursor_seek(const interp_space *space, int64_t linear, interp_cursor *c) {
    cursor_seek(space, linear, c);
}

void interp_cursor_next(const interp_space *space, interp_cursor *c) {
    cursor_next(space, c);
}

/* ---- typed reduction loops -------------------------------------------------------- */

bool interp_reducer_supports(interp_reducer kind, cxla_type type) {
    bool arith = kind == INTERP_REDUCER_ADD || kind == INTERP_REDUCER_MUL;
    bool order = kind == INTERP_REDUCER_MAX || kind == INTERP_REDUCER_MIN;
    if (kind == INTERP_REDUCER_NONE) return false;
    switch (cxla_type_class_of(type)) {
    case CXLA_CLASS_PRED:
    case CXLA_CLASS_SIGNED:
    case CXLA_CLASS_UNSIGNED: return true;
    case CXLA_CLASS_FLOAT: return arith || order;
    case CXLA_CLASS_COMPLEX: return arith;
    default: return false;
    }
}

/* IEEE 754-2019 maximum/minimum, as XLA's CPU backend computes them (llvm.maximum):
 * NaN propagates and -0 < +0. */
#define DEFINE_FLOAT_MINMAX(T, NAME)                                                               \
    static inline T NAME##_max(T a, T b) {                                                         \
        if (a != a) return a;                                                                      \
        if (b != b) return b;                                                                      \
        if (a == b) return signbit(a) ? b : a;                                                     \
        return a > b ? a : b;                                                                      \
    }                                                                                              \
    static inline T NAME##_min(T a, T b) {                                                         \
        if (a != a) return a;                                                                      \
        if (b != b) return b;                                                                      \
        if (a == b) return signbit(a) ? a : b;                                                     \
        return a < b ? a : b;                                                                      \
    }
DEFINE_FLOAT_MINMAX(float, f32)
DEFINE_FLOAT_MINMAX(double, f64)

/* Runs STEP (which reads x and updates acc) for every element of the space. */
#define FOLD_LOOP(T, STEP)                                                                         \
    do {                                                                                           \
        interp_cursor c;                                                                           \
        cursor_seek(sp, 0, &c);                                                                    \
        for (int64_t r = 0; r < sp->count; r++) {                                                  \
            T x = c.outside ? init : data[base + c.offset];                                        \
            STEP;                                                                                  \
            if (r + 1 < sp->count) cursor_next(sp, &c);                                            \
        }                                                                                          \
    } while (0)

/* Integers: + and * wrap (computed on uint64_t, truncated to the type). */
#define DEFINE_INT_FOLD(T, NAME)                                                                   \
    static T fold_##NAME(interp_reducer kind, const T *data, int64_t base, const interp_space *sp, \
                         T init, T acc) {                                                          \
        switch (kind) {                                                                            \
        case INTERP_REDUCER_ADD: FOLD_LOOP(T, acc = (T)((uint64_t)acc + (uint64_t)x)); break;      \
        case INTERP_REDUCER_MUL: FOLD_LOOP(T, acc = (T)((uint64_t)acc * (uint64_t)x)); break;      \
        case INTERP_REDUCER_MAX: FOLD_LOOP(T, acc = x > acc ? x : acc); break;                     \
        case INTERP_REDUCER_MIN: FOLD_LOOP(T, acc = x < acc ? x : acc); break;                     \
        case INTERP_REDUCER_AND: FOLD_LOOP(T, acc = (T)(acc & x)); break;                          \
        case INTERP_REDUCER_OR: FOLD_LOOP(T, acc = (T)(acc | x)); break;                           \
        case INTERP_REDUCER_XOR: FOLD_LOOP(T, acc = (T)(acc ^ x)); break;                          \
        default: break;                                                                            \
        }                                                                                          \
        return acc;                                                                                \
    }
DEFINE_INT_FOLD(int8_t, s8)
DEFINE_INT_FOLD(int16_t, s16)
DEFINE_INT_FOLD(int32_t, s32)
DEFINE_INT_FOLD(int64_t, s64)
DEFINE_INT_FOLD(uint8_t, u8)
DEFINE_INT_FOLD(uint16_t, u16)
DEFINE_INT_FOLD(uint32_t, u32)
DEFINE_INT_FOLD(uint64_t, u64)

/* Pairwise summation: leaves of up to PAIRWISE_LEAF elements summed in order. */
enum { PAIRWISE_LEAF = 16 };
#define DEFINE_FLOAT_FOLD(T, NAME)                                                                 \
    static T pairwise_##NAME(const T *data, int64_t base, const interp_space *sp, T init,          \
                             int64_t first, int64_t n) {                                           \
        if (n <= PAIRWISE_LEAF) {                                                                  \
            interp_cursor c;                                                                       \
            cursor_seek(sp, first, &c);                                                            \
            T s = c.outside ? init : data[base + c.offset];                                        \
            for (int64_t r = 1; r < n; r++) {                                                      \
                cursor_next(sp, &c);                                                               \
                s += c.outside ? init : data[base + c.offset];                                     \
            }                                                                                      \
            return s;                                                                              \
        }                                                                                          \
        int64_t half = n / 2;                                                                      \
        return pairwise_##NAME(data, base, sp, init, first, half) +                                \
               pairwise_##NAME(data, base, sp, init, first + half, n - half);                      \
    }                                                                                              \
    static T fold_##NAME(interp_reducer kind, const T *data, int64_t base, const interp_space *sp, \
                         T init, T acc) {                                                          \
        switch (kind) {                                                                            \
        case INTERP_REDUCER_ADD:                                                                   \
            if (sp->count > 0) acc += pairwise_##NAME(data, base, sp, init, 0, sp->count);         \
            break;                                                                                 \
        case INTERP_REDUCER_MUL: FOLD_LOOP(T, acc *= x); break;                                    \
        case INTERP_REDUCER_MAX: FOLD_LOOP(T, acc = NAME##_max(acc, x)); break;                    \
        case INTERP_REDUCER_MIN: FOLD_LOOP(T, acc = NAME##_min(acc, x)); break;                    \
        default: break;                                                                            \
        }                                                                                          \
        return acc;                                                                                \
    }
DEFINE_FLOAT_FOLD(float, f32)
DEFINE_FLOAT_FOLD(double, f64)

/* pred: + is or and * is and (C++ bool arithmetic, which XLA's evaluator uses). */
static uint8_t fold_pred(interp_reducer kind, const uint8_t *data, int64_t base,
                         const interp_space *sp, uint8_t init, uint8_t acc) {
    switch (kind) {
    case INTERP_REDUCER_ADD:
    case INTERP_REDUCER_OR:
    case INTERP_REDUCER_MAX: FOLD_LOOP(uint8_t, acc = (uint8_t)((acc | x) != 0)); break;
    case INTERP_REDUCER_MUL:
    case INTERP_REDUCER_AND:
    case INTERP_REDUCER_MIN: FOLD_LOOP(uint8_t, acc = (uint8_t)((acc & x) != 0)); break;
    case INTERP_REDUCER_XOR: FOLD_LOOP(uint8_t, acc = (uint8_t)((acc ^ x) != 0)); break;
    default: break;
    }
    return acc;
}

/* Complex: (re, im) pairs of T, added and multiplied in T. */
#define DEFINE_COMPLEX_FOLD(T, NAME)                                                               \
    static void fold_##NAME(interp_reducer kind, const T *data, int64_t base,                      \
                            const interp_space *sp, const T *init, T *acc) {                       \
        interp_cursor c;                                                                           \
        T re = acc[0], im = acc[1];                                                                \
        if (sp->count > 0) cursor_seek(sp, 0, &c);                                                 \
        for (int64_t r = 0; r < sp->count; r++) {                                                  \
            const T *x = c.outside ? init : data + 2 * (base + c.offset);                          \
            if (kind == INTERP_REDUCER_ADD) {                                                      \
                re += x[0];                                                                        \
                im += x[1];                                                                        \
            } else {                                                                               \
                T nre = re * x[0] - im * x[1];                                                     \
                im = re * x[1] + im * x[0];                                                        \
                re = nre;                                                                          \
            }                                                                                      \
            if (r + 1 < sp->count) cursor_next(sp, &c);                                            \
        }                                                                                          \
        acc[0] = re;                                                                               \
        acc[1] = im;                                                                               \
    }
DEFINE_COMPLEX_FOLD(float, c64)
DEFINE_COMPLEX_FOLD(double, c128)

/* f16, bf16, f8, f4: computed in f32 and rounded to the type after every step. */
static float small_load(cxla_type type, const void *p) {
    uint32_t bits;
    if (cxla_type_storage(type) == 2) {
        uint16_t v;
        memcpy(&v, p, 2);
        bits = v;
    } else {
        bits = *(const uint8_t *)p;
        bits &= (1u << cxla_type_bits(type)) - 1; /* f4/f6: the low bits */
    }
    return cxla_float_to_float(type, bits);
}

static void small_store(cxla_type type, void *p, float value) {
    uint32_t bits = cxla_float_from_float(type, value);
    if (cxla_type_storage(type) == 2) {
        uint16_t v = (uint16_t)bits;
        memcpy(p, &v, 2);
    } else {
        *(uint8_t *)p = (uint8_t)bits;
    }
}

static void fold_small_float(interp_reducer kind, cxla_type type, const uint8_t *data, int64_t base,
                             const interp_space *sp, const void *init, void *acc) {
    size_t size = cxla_type_storage(type);
    float a = small_load(type, acc), init_f = small_load(type, init);
    interp_cursor c;
    if (sp->count > 0) cursor_seek(sp, 0, &c);
    for (int64_t r = 0; r < sp->count; r++) {
        float x = c.outside ? init_f : small_load(type, data + (size_t)(base + c.offset) * size);
        switch (kind) {
        case INTERP_REDUCER_ADD: a += x; break;
        case INTERP_REDUCER_MUL: a *= x; break;
        case INTERP_REDUCER_MAX: a = f32_max(a, x); break;
        default: a = f32_min(a, x); break;
        }
        small_store(type, acc, a); /* round to the type */
        a = small_load(type, acc);
        if (r + 1 < sp->count) cursor_next(sp, &c);
    }
}

/* Integers narrower than a byte (s2, s4, u2, ...): computed on 64 bits, which wrap as
 * the narrow type does for + * & | ^, and stored (wrapped) at the end. */
static void fold_narrow_int(interp_reducer kind, cxla_type type, const uint8_t *data, int64_t base,
                            const interp_space *sp, const void *init, void *acc) {
    size_t size = cxla_type_storage(type);
    bool is_signed = cxla_type_is_signed(type);
    uint64_t a = is_signed ? (uint64_t)cxla_load_s64(type, acc) : cxla_load_u64(type, acc);
    uint64_t init_v = is_signed ? (uint64_t)cxla_load_s64(type, init) : cxla_load_u64(type, init);
    interp_cursor c;
    if (sp->count > 0) cursor_seek(sp, 0, &c);
    for (int64_t r = 0; r < sp->count; r++) {
        uint64_t x = init_v;
        if (!c.outside) {
            const void *p = data + (size_t)(base + c.offset) * size;
            x = is_signed ? (uint64_t)cxla_load_s64(type, p) : cxla_load_u64(type, p);
        }
        bool x_greater = is_signed ? (int64_t)x > (int64_t)a : x > a;
        switch (kind) {
        case INTERP_REDUCER_ADD: a += x; break;
        case INTERP_REDUCER_MUL: a *= x; break;
        case INTERP_REDUCER_MAX: a = x_greater ? x : a; break;
        case INTERP_REDUCER_MIN: a = x_greater || x == a ? a : x; break;
        case INTERP_REDUCER_AND: a &= x; break;
        case INTERP_REDUCER_OR: a |= x; break;
        default: a ^= x; break;
        }
        if (r + 1 < sp->count) cursor_next(sp, &c);
    }
    cxla_store_u64(type, acc, a);
}

#define NATIVE_FOLD(T, NAME)                                                                       \
    do {                                                                                           \
        T init_v, acc_v;                                                                           \
        memcpy(&init_v, init, sizeof(T));                                                          \
        memcpy(&acc_v, acc, sizeof(T));                                                            \
        acc_v = fold_##NAME(kind, (const T *)data, base, space, init_v, acc_v);                    \
        memcpy(acc, &acc_v, sizeof(T));                                                            \
    } while (0)

void interp_reduce_space(interp_reducer kind, cxla_type type, const void *data, int64_t base,
                         const interp_space *space, const void *init, void *acc) {
    switch (type) {
    case CXLA_PRED: NATIVE_FOLD(uint8_t, pred); break;
    case CXLA_S8: NATIVE_FOLD(int8_t, s8); break;
    case CXLA_S16: NATIVE_FOLD(int16_t, s16); break;
    case CXLA_S32: NATIVE_FOLD(int32_t, s32); break;
    case CXLA_S64: NATIVE_FOLD(int64_t, s64); break;
    case CXLA_U8: NATIVE_FOLD(uint8_t, u8); break;
    case CXLA_U16: NATIVE_FOLD(uint16_t, u16); break;
    case CXLA_U32: NATIVE_FOLD(uint32_t, u32); break;
    case CXLA_U64: NATIVE_FOLD(uint64_t, u64); break;
    case CXLA_F32: NATIVE_FOLD(float, f32); break;
    case CXLA_F64: NATIVE_FOLD(double, f64); break;
    case CXLA_C64: {
        float in[2], a[2];
        memcpy(in, init, sizeof(in));
        memcpy(a, acc, sizeof(a));
        fold_c64(kind, data, base, space, in, a);
        memcpy(acc, a, sizeof(a));
        break;
    }
    case CXLA_C128: {
        double in[2], a[2];
        memcpy(in, init, sizeof(in));
        memcpy(a, acc, sizeof(a));
        fold_c128(kind, data, base, space, in, a);
        memcpy(acc, a, sizeof(a));
        break;
    }
    default:
        if (cxla_type_is_float(type))
            fold_small_float(kind, type, data, base, space, init, acc);
        else
            fold_narrow_int(kind, type, data, base, space, init, acc);
        break;
    }
}

/* ---- calling scalar computations --------------------------------------------------- */

cxla_status interp_scalar_fn_init(interp_scalar_fn *f, interp_ctx *ctx, const cxla_instr *instr,
                                  const cxla_computation *comp) {
    memset(f, 0, sizeof(*f));
    f->ctx = ctx;
    f->instr = instr;
    f->comp = comp;
    if (!comp) return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "no computation to call");
    int64_t n = comp->param_count;
    f->args = calloc((size_t)(n ? n : 1), sizeof(*f->args));
    f->arg_sizes = calloc((size_t)(n ? n : 1), sizeof(*f->arg_sizes));
    if (!f->args || !f->arg_sizes) {
        interp_scalar_fn_deinit(f);
        return OOM();
    }
    f->arg_count = n;
    for (int64_t i = 0; i < n; i++) {
        const cxla_instr *p = comp->params ? comp->params[i] : NULL;
        if (!p || !cxla_type_is_array(p->shape.type) || p->shape.rank != 0) {
            interp_scalar_fn_deinit(f);
            return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                "parameter %" PRId64 " of computation '%s' must be a scalar", i,
                                comp->name);
        }
        cxla_shape s = {.type = p->shape.type};
        cxla_status st = cxla_literal_create(&s, &f->args[i]);
        if (st) {
            interp_scalar_fn_deinit(f);
            return st;
        }
        f->arg_sizes[i] = cxla_type_storage(p->shape.type);
    }
    return NULL;
}

void interp_scalar_fn_deinit(interp_scalar_fn *f) {
    if (f->args)
        for (int64_t i = 0; i < f->arg_count; i++) cxla_literal_free(f->args[i]);
    free(f->args);
    free(f->arg_sizes);
    f->args = NULL;
    f->arg_sizes = NULL;
    f->arg_count = 0;
}

cxla_status interp_scalar_fn_expect(const interp_scalar_fn *f, int64_t i, cxla_type type) {
    if (i >= f->arg_count)
        return interp_error(f->instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "computation '%s' takes %" PRId64 " parameters, %" PRId64 " needed",
                            f->comp->name, f->arg_count, i + 1);
    cxla_type have = cxla_literal_type(f->args[i]);
    if (have != type)
        return interp_error(f->instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "parameter %" PRId64 " of computation '%s' is %s, expected %s", i,
                            f->comp->name, cxla_type_name(have), cxla_type_name(type));
    return NULL;
}

void interp_scalar_set_arg(interp_scalar_fn *f, int64_t i, const void *element) {
    memcpy(cxla_literal_data(f->args[i]), element, f->arg_sizes[i]);
}

cxla_status interp_scalar_call(interp_scalar_fn *f, cxla_literal **out) {
    cxla_status s = interp_call_scalar(f->ctx, f->comp, (const cxla_literal *const *)f->args,
                                       f->arg_count, out);
    if (s)
        return cxla_status_annotate(s, "in computation '%s' of %s", f->comp->name, f->instr->name);
    return NULL;
}

const void *interp_scalar_result(const interp_scalar_fn *f, const cxla_literal *result, int64_t k,
                                 int64_t n, cxla_type type, cxla_status *status) {
    const cxla_literal *e = result;
    if (n > 1 || cxla_literal_type(result) == CXLA_TUPLE) {
        e = cxla_literal_type(result) == CXLA_TUPLE && cxla_literal_tuple_count(result) == n
                ? cxla_literal_tuple_element_const(result, k)
                : NULL;
    }
    if (!e || cxla_literal_type(e) != type || cxla_literal_shape(e)->rank != 0) {
        *status = interp_error(f->instr, CXLA_STATUS_INVALID_ARGUMENT,
                               "computation '%s' must return %s%s scalar(s), it returned a %s",
                               f->comp->name, n > 1 ? "a tuple of " : "", cxla_type_name(type),
                               cxla_type_name(cxla_literal_type(result)));
        return NULL;
    }
    return cxla_literal_data_const(e);
}

/* ---- reduce ------------------------------------------------------------------------ */

/* A space over the dimensions of a row-major array of |dims| for which keep[j] == want. */
typedef struct dim_space {
    interp_space sp;
    int64_t sizes[CXLA_MAX_RANK];
    const int64_t *tables[CXLA_MAX_RANK];
    int64_t *storage;
} dim_space;

static cxla_status dim_space_init(dim_space *d, int64_t rank, const int64_t *dims, const bool *keep,
                                  bool want) {
    int64_t strides[CXLA_MAX_RANK], total = 0, k = 0;
    interp_row_major_strides(rank, dims, strides);
    memset(d, 0, sizeof(*d));
    for (int64_t j = 0; j < rank; j++)
        if (keep[j] == want) total += dims[j];
    d->storage = malloc((size_t)(total ? total : 1) * sizeof(int64_t));
    if (!d->storage) return OOM();
    int64_t *t = d->storage, count = 1;
    for (int64_t j = 0; j < rank; j++) {
        if (keep[j] != want) continue;
        for (int64_t i = 0; i < dims[j]; i++) t[i] = i * strides[j];
        d->sizes[k] = dims[j];
        d->tables[k++] = t;
        t += dims[j];
        count *= dims[j]; /* a part of the array's element count: no overflow */
    }
    d->sp.rank = k;
    d->sp.count = count;
    d->sp.sizes = d->sizes;
    d->sp.offsets = d->tables;
    return NULL;
}

/* ---- reduce over blocks of outputs ------------------------------------------------- */

/* op_reduce's typed loops for pred, the integers, f32 and f64. Outputs are taken in blocks
 * of up to REDUCE_LANES consecutive elements ("lanes"), and the reduced elements are
 * visited in the same row-major order for every lane of a block, so each output element
 * sees exactly the additions (maxima, ...) it would see alone, in the same order and the
 * same pairwise tree (pairwise_f32/f64 above), while the inner loops run across lanes: a
 * contiguous run of the input when the kept dimensions are the minor ones (a column sum),
 * which the compiler vectorizes, and independent accumulators otherwise (a row sum). */
enum { REDUCE_LANES = 64, REDUCE_ROW_LANES = 8, REDUCE_MAX_DEPTH = 64 };

typedef struct lane_block {
    const interp_space *sp;  /* the reduced elements, offsets from the block's base */
    int64_t step;            /* >= 0: reduced element r is at offset r * step (no cursor) */
    int64_t w;               /* lanes in the block, 1..REDUCE_LANES */
    const int64_t *lane_off; /* offset of each lane from the base; NULL: lane k at k */
} lane_block;

/* The offset of reduced element |first|, and a cursor there for the next ones. */
static inline int64_t lane_seek(const lane_block *b, int64_t first, interp_cursor *c) {
    c->offset = 0; /* unused with a step; set for the compiler's flow analysis */
    if (b->step >= 0) return first * b->step;
    cursor_seek(b->sp, first, c);
    return c->offset;
}

static inline int64_t lane_next(const lane_block *b, int64_t off, interp_cursor *c) {
    if (b->step >= 0) return off + b->step;
    cursor_next(b->sp, c);
    return c->offset;
}

/* The lane loops: OP(acc, x) gives the new accumulator. A full block of contiguous lanes
 * has a constant trip count, which GCC vectorizes at -O2. */
#define LANE_LOOP(T, OP)                                                                           \
    do {                                                                                           \
        if (!lo && w == REDUCE_LANES) {                                                            \
            for (int64_t k = 0; k < REDUCE_LANES; k++) acc[k] = OP(acc[k], p[k]);                  \
        } else if (!lo) {                                                                          \
            for (int64_t k = 0; k < w; k++) acc[k] = OP(acc[k], p[k]);                             \
        } else {                                                                                   \
            for (int64_t k = 0; k < w; k++) acc[k] = OP(acc[k], p[lo[k]]);                         \
        }                                                                                          \
    } while (0)

#define LANE_FIRST(T)                                                                              \
    do {                                                                                           \
        for (int64_t k = 0; k < w; k++) acc[k] = p[lo ? lo[k] : k];                                \
    } while (0)

/* acc[k] = OP(acc[k], x) for the reduced elements in order (a sequential fold). */
#define DEFINE_LANE_FOLD(T, NAME, OPNAME, OP)                                                      \
    static void lanes_##OPNAME##_##NAME(const lane_block *b, const T *data, T *restrict acc) {     \
        int64_t w = b->w, n = b->sp->count;                                                        \
        const int64_t *lo = b->lane_off;                                                           \
        interp_cursor c;                                                                           \
        int64_t off = n > 0 ? lane_seek(b, 0, &c) : 0;                                             \
        for (int64_t r = 0; r < n; r++) {                                                          \
            const T *restrict p = data + off;                                                      \
            LANE_LOOP(T, OP);                                                                      \
            if (r + 1 < n) off = lane_next(b, off, &c);                                            \
        }                                                                                          \
    }

#define DEFINE_INT_LANES(T, UT, NAME)                                                              \
    static inline T NAME##_add_op(T a, T x) {                                                      \
        return (T)((UT)a + (UT)x);                                                                 \
    }                                                                                              \
    static inline T NAME##_mul_op(T a, T x) {                                                      \
        return (T)((UT)a * (UT)x);                                                                 \
    }                                                                                              \
    static inline T NAME##_max_op(T a, T x) {                                                      \
        return x > a ? x : a;                                                                      \
    }                                                                                              \
    static inline T NAME##_min_op(T a, T x) {                                                      \
        return x < a ? x : a;                                                                      \
    }                                                                                              \
    static inline T NAME##_and_op(T a, T x) {                                                      \
        return (T)(a & x);                                                                         \
    }                                                                                              \
    static inline T NAME##_or_op(T a, T x) {                                                       \
        return (T)(a | x);                                                                         \
    }                                                                                              \
    static inline T NAME##_xor_op(T a, T x) {                                                      \
        return (T)(a ^ x);                                                                         \
    }                                                                                              \
    DEFINE_LANE_FOLD(T, NAME, add, NAME##_add_op)                                                  \
    DEFINE_LANE_FOLD(T, NAME, mul, NAME##_mul_op)                                                  \
    DEFINE_LANE_FOLD(T, NAME, max, NAME##_max_op)                                                  \
    DEFINE_LANE_FOLD(T, NAME, min, NAME##_min_op)                                                  \
    DEFINE_LANE_FOLD(T, NAME, and, NAME##_and_op)                                                  \
    DEFINE_LANE_FOLD(T, NAME, or, NAME##_or_op)                                                    \
    DEFINE_LANE_FOLD(T, NAME, xor, NAME##_xor_op)                                                  \
    static void lanes_##NAME(interp_reducer kind, const lane_block *b, const T *data, T *acc) {    \
        switch (kind) {                                                                            \
        case INTERP_REDUCER_ADD: lanes_add_##NAME(b, data, acc); break;                            \
        case INTERP_REDUCER_MUL: lanes_mul_##NAME(b, data, acc); break;                            \
        case INTERP_REDUCER_MAX: lanes_max_##NAME(b, data, acc); break;                            \
        case INTERP_REDUCER_MIN: lanes_min_##NAME(b, data, acc); break;                            \
        case INTERP_REDUCER_AND: lanes_and_##NAME(b, data, acc); break;                            \
        case INTERP_REDUCER_OR: lanes_or_##NAME(b, data, acc); break;                              \
        case INTERP_REDUCER_XOR: lanes_xor_##NAME(b, data, acc); break;                            \
        default: break;                                                                            \
        }                                                                                          \
    }
DEFINE_INT_LANES(int8_t, uint8_t, s8)
DEFINE_INT_LANES(int16_t, uint16_t, s16)
DEFINE_INT_LANES(int32_t, uint32_t, s32)
DEFINE_INT_LANES(int64_t, uint64_t, s64)
DEFINE_INT_LANES(uint8_t, uint8_t, u8)
DEFINE_INT_LANES(uint16_t, uint16_t, u16)
DEFINE_INT_LANES(uint32_t, uint32_t, u32)
DEFINE_INT_LANES(uint64_t, uint64_t, u64)

/* pred: + and max are or, * and min are and (as fold_pred). */
static inline uint8_t pred_or_op(uint8_t a, uint8_t x) {
    return (uint8_t)((a | x) != 0);
}
static inline uint8_t pred_and_op(uint8_t a, uint8_t x) {
    return (uint8_t)((a & x) != 0);
}
static inline uint8_t pred_xor_op(uint8_t a, uint8_t x) {
    return (uint8_t)((a ^ x) != 0);
}
DEFINE_LANE_FOLD(uint8_t, pred, or, pred_or_op)
DEFINE_LANE_FOLD(uint8_t, pred, and, pred_and_op)
DEFINE_LANE_FOLD(uint8_t, pred, xor, pred_xor_op)
static void lanes_pred(interp_reducer kind, const lane_block *b, const uint8_t *data,
                       uint8_t *acc) {
    switch (kind) {
    case INTERP_REDUCER_ADD:
    case INTERP_REDUCER_OR:
    case INTERP_REDUCER_MAX: lanes_or_pred(b, data, acc); break;
    case INTERP_REDUCER_MUL:
    case INTERP_REDUCER_AND:
    case INTERP_REDUCER_MIN: lanes_and_pred(b, data, acc); break;
    case INTERP_REDUCER_XOR: lanes_xor_pred(b, data, acc); break;
    default: break;
    }
}

/* Floats: * max min fold in order; + sums pairwise with pairwise_f32/f64's tree: a range
 * of up to PAIRWISE_LEAF elements summed in order from its first, a longer one split at
 * half = n / 2 and its halves added, left + right. |stack| holds REDUCE_LANES elements per
 * level below. */
#define DEFINE_FLOAT_LANES(T, NAME)                                                                \
    static inline T NAME##_add_op(T a, T x) {                                                      \
        return a + x;                                                                              \
    }                                                                                              \
    static inline T NAME##_mul_op(T a, T x) {                                                      \
        return a * x;                                                                              \
    }                                                                                              \
    DEFINE_LANE_FOLD(T, NAME, mul, NAME##_mul_op)                                                  \
    DEFINE_LANE_FOLD(T, NAME, max, NAME##_max)                                                     \
    DEFINE_LANE_FOLD(T, NAME, min, NAME##_min)                                                     \
    static void lanes_pairwise_##NAME(const lane_block *b, const T *data, int64_t first,           \
                                      int64_t n, T *restrict acc, T *stack) {                      \
        int64_t w = b->w;                                                                          \
        const int64_t *lo = b->lane_off;                                                           \
        if (n <= PAIRWISE_LEAF) {                                                                  \
            interp_cursor c;                                                                       \
            int64_t off = lane_seek(b, first, &c);                                                 \
            const T *restrict p = data + off;                                                      \
            LANE_FIRST(T);                                                                         \
            for (int64_t r = 1; r < n; r++) {                                                      \
                off = lane_next(b, off, &c);                                                       \
                p = data + off;                                                                    \
                LANE_LOOP(T, NAME##_add_op);                                                       \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        int64_t half = n / 2;                                                                      \
        lanes_pairwise_##NAME(b, data, first, half, acc, stack);                                   \
        lanes_pairwise_##NAME(b, data, first + half, n - half, stack, stack + REDUCE_LANES);       \
        const T *restrict p = stack;                                                               \
        lo = NULL;                                                                                 \
        LANE_LOOP(T, NAME##_add_op);                                                               \
    }                                                                                              \
    static void lanes_##NAME(interp_reducer kind, const lane_block *b, const T *data, T *acc) {    \
        switch (kind) {                                                                            \
        case INTERP_REDUCER_ADD: {                                                                 \
            if (b->sp->count == 0) break;                                                          \
            T sum[REDUCE_LANES], stack[REDUCE_LANES * REDUCE_MAX_DEPTH];                           \
            lanes_pairwise_##NAME(b, data, 0, b->sp->count, sum, stack);                           \
            for (int64_t k = 0; k < b->w; k++) acc[k] = acc[k] + sum[k];                           \
            break;                                                                                 \
        }                                                                                          \
        case INTERP_REDUCER_MUL: lanes_mul_##NAME(b, data, acc); break;                            \
        case INTERP_REDUCER_MAX: lanes_max_##NAME(b, data, acc); break;                            \
        case INTERP_REDUCER_MIN: lanes_min_##NAME(b, data, acc); break;                            \
        default: break;                                                                            \
        }                                                                                          \
    }
DEFINE_FLOAT_LANES(float, f32)
DEFINE_FLOAT_LANES(double, f64)

/* Whether reduce_lanes handles |type|. */
static bool lanes_support(interp_reducer kind, cxla_type type) {
    switch (type) {
    case CXLA_PRED:
    case CXLA_S8:
    case CXLA_S16:
    case CXLA_S32:
    case CXLA_S64:
    case CXLA_U8:
    case CXLA_U16:
    case CXLA_U32:
    case CXLA_U64: return kind != INTERP_REDUCER_NONE;
    case CXLA_F32:
    case CXLA_F64: return interp_reducer_supports(kind, type);
    default: return false;
    }
}

/* One block: acc (w elements, holding the init value) folded with the reduced elements
 * of each lane, the elements of lane k at |data| + lane offset + reduced offsets. */
static void lanes_run(interp_reducer kind, cxla_type type, const lane_block *b, const void *data,
                      int64_t base, void *acc) {
    switch (type) {
    case CXLA_PRED: lanes_pred(kind, b, (const uint8_t *)data + base, acc); break;
    case CXLA_S8: lanes_s8(kind, b, (const int8_t *)data + base, acc); break;
    case CXLA_S16: lanes_s16(kind, b, (const int16_t *)data + base, acc); break;
    case CXLA_S32: lanes_s32(kind, b, (const int32_t *)data + base, acc); break;
    case CXLA_S64: lanes_s64(kind, b, (const int64_t *)data + base, acc); break;
    case CXLA_U8: lanes_u8(kind, b, (const uint8_t *)data + base, acc); break;
    case CXLA_U16: lanes_u16(kind, b, (const uint16_t *)data + base, acc); break;
    case CXLA_U32: lanes_u32(kind, b, (const uint32_t *)data + base, acc); break;
    case CXLA_U64: lanes_u64(kind, b, (const uint64_t *)data + base, acc); break;
    case CXLA_F32: lanes_f32(kind, b, (const float *)data + base, acc); break;
    case CXLA_F64: lanes_f64(kind, b, (const double *)data + base, acc); break;
    default: break;
    }
}

/* The reduce of |in| (dims |dims|, row-major, |reduced| marking the reduced dimensions)
 * into |out| by blocks of lanes; every output element starts from |init|. */
static void reduce_lanes(interp_reducer kind, cxla_type type, const void *in, const void *init,
                         void *out, const dim_space *inner, const dim_space *outer, int64_t rank,
                         const int64_t *dims, const bool *reduced) {
    size_t size = cxla_type_storage(type);
    /* Reduced element r at r * step when the reduced dimensions have strides that make
     * one arithmetic progression (a trailing group, or dimensions of size 1 between). */
    int64_t step = 0, span = 1;
    for (int64_t j = inner->sp.rank - 1; j >= 0 && step >= 0; j--) {
        int64_t n = inner->sp.sizes[j];
        int64_t stride = n > 1 ? inner->sp.offsets[j][1] : 0;
        if (n <= 1) continue;
        if (span == 1 && step == 0)
            step = stride;
        else if (stride != step * span)
            step = -1;
        span *= n;
    }
    /* K: the elements of the kept dimensions after the last reduced one, contiguous in the
     * input for each output, and consecutive outputs. */
    int64_t last = -1, K = 1;
    for (int64_t j = 0; j < rank; j++)
        if (reduced[j]) last = j;
    for (int64_t j = last + 1; j < rank; j++) K *= dims[j];
    lane_block b = {.sp = &inner->sp, .step = step};
    int64_t lane_off[REDUCE_LANES];
    int64_t out_count = outer->sp.count;
    interp_cursor oc;
    for (int64_t e0 = 0; e0 < out_count; e0 += b.w) {
        int64_t w = out_count - e0 < REDUCE_LANES ? out_count - e0 : REDUCE_LANES;
        if (K > 1 && K - e0 % K < w) w = K - e0 % K;
        /* Lanes apart in memory (a row sum): few enough that their rows stay in L1 (rows
         * 4 KiB apart all fall in one set of a typical 8-way L1). */
        if (K == 1 && w > REDUCE_ROW_LANES) w = REDUCE_ROW_LANES;
        b.w = w;
        cursor_seek(&outer->sp, e0, &oc);
        int64_t base = oc.offset;
        b.lane_off = NULL;
        if (K == 1) {
            bool contiguous = true;
            for (int64_t k = 0; k < w; k++) {
                if (k > 0) cursor_next(&outer->sp, &oc);
                lane_off[k] = oc.offset - base;
                contiguous = contiguous && lane_off[k] == k;
            }
            if (!contiguous) b.lane_off = lane_off;
        }
        uint8_t *acc = (uint8_t *)out + (size_t)e0 * size;
        for (int64_t k = 0; k < w; k++) memcpy(acc + (size_t)k * size, init, size);
        lanes_run(kind, type, &b, in, base, acc);
    }
}

static bool is_scalar_array(const cxla_literal *lit) {
    const cxla_shape *s = cxla_literal_shape(lit);
    return cxla_type_is_array(s->type) && s->rank == 0;
}

void interp_reduce_free_literals(cxla_literal **lits, int64_t n) {
    if (lits)
        for (int64_t i = 0; i < n; i++) cxla_literal_free(lits[i]);
    free(lits);
}

/* The result literals of a variadic op: |n| arrays from the instruction's shape (a tuple
 * of n when |tuple|), each checked to have |rank| dims |dims| and element type types[i]. */
cxla_status interp_reduce_new_results(const cxla_instr *instr, int64_t n, bool tuple, int64_t rank,
                                      const int64_t *dims, const cxla_type *types,
                                      cxla_literal ***out) {
    const cxla_shape *shape = &instr->shape;
    if (tuple ? shape->type != CXLA_TUPLE || shape->tuple_count != n
              : !cxla_type_is_array(shape->type))
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "the result must be %s%" PRId64 " array(s)", tuple ? "a tuple of " : "",
                            n);
    cxla_literal **res = calloc((size_t)n, sizeof(*res));
    if (!res) return OOM();
    for (int64_t i = 0; i < n; i++) {
        const cxla_shape *s = tuple ? &shape->elements[i] : shape;
        bool ok = cxla_type_is_array(s->type) && s->rank == rank && s->type == types[i];
        for (int64_t j = 0; ok && j < rank; j++) ok = s->dims[j] == dims[j];
        cxla_status st = NULL;
        if (!ok) {
            char *got = cxla_shape_to_string(s, CXLA_SHAPE_PRINT_NO_LAYOUT);
            st = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                              "result %" PRId64 " has shape %s, which does not match the operands",
                              i, got ? got : "?");
            free(got);
        }
        if (!st) st = interp_new_array(s, &res[i]);
        if (st) {
            interp_reduce_free_literals(res, n);
            return st;
        }
    }
    *out = res;
    return NULL;
}

/* Wraps the results: the array itself, or a tuple (taking ownership either way). */
cxla_status interp_reduce_pack_results(cxla_literal **res, int64_t n, bool tuple,
                                       cxla_literal **out) {
    if (!tuple) {
        *out = res[0];
        free(res);
        return NULL;
    }
    cxla_status s = cxla_literal_create_tuple(res, n, out);
    if (s) {
        interp_reduce_free_literals(res, n);
        return s;
    }
    free(res);
    return NULL;
}

static cxla_status op_reduce(interp_ctx *ctx, const cxla_instr *instr,
                             const cxla_literal *const *operands, cxla_literal **out) {
    int64_t count = instr->operand_count;
    if (count < 2 || count % 2)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "expects N inputs then N init values, got %" PRId64 " operands", count);
    int64_t n = count / 2;
    const cxla_shape *xs = cxla_literal_shape(operands[0]);
    for (int64_t i = 0; i < n; i++) {
        const cxla_shape *s = cxla_literal_shape(operands[i]);
        bool ok = cxla_type_is_array(s->type) && s->rank == xs->rank;
        for (int64_t j = 0; ok && j < s->rank; j++) ok = s->dims[j] == xs->dims[j];
        if (!ok || !cxla_type_is_array(xs->type))
            return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                "the inputs must be arrays of the same dimensions");
        if (!is_scalar_array(operands[n + i]))
            return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                "init value %" PRId64 " must be a scalar", i);
    }
    int64_t nd = 0;
    const int64_t *d = cxla_instr_ints(instr, CXLA_ATTR_DIMENSIONS, &nd);
    bool reduced[CXLA_MAX_RANK] = {false};
    for (int64_t i = 0; i < nd; i++) {
        if (d[i] < 0 || d[i] >= xs->rank || reduced[d[i]])
            return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                "dimensions: %" PRId64
                                " is out of range or repeated for rank %" PRId64,
                                d[i], xs->rank);
        reduced[d[i]] = true;
    }
    const cxla_computation *comp = cxla_instr_called(instr, CXLA_ATTR_TO_APPLY);
    if (!comp) return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "needs to_apply");

    int64_t out_dims[CXLA_MAX_RANK], out_rank = 0;
    for (int64_t j = 0; j < xs->rank; j++)
        if (!reduced[j]) out_dims[out_rank++] = xs->dims[j];
    cxla_type *acc_types = malloc((size_t)n * sizeof(cxla_type));
    if (!acc_types) return OOM();
    for (int64_t i = 0; i < n; i++) acc_types[i] = cxla_literal_type(operands[n + i]);
    cxla_literal **res = NULL;
    cxla_status s = interp_reduce_new_results(instr, n, instr->shape.type == CXLA_TUPLE, out_rank,
                                              out_dims, acc_types, &res);
    free(acc_types);
    if (s) return s;

    dim_space inner, outer;
    s = dim_space_init(&inner, xs->rank, xs->dims, reduced, true);
    if (!s) {
        s = dim_space_init(&outer, xs->rank, xs->dims, reduced, false);
        if (s) free(inner.storage);
    }
    if (s) {
        interp_reduce_free_literals(res, n);
        return s;
    }
    int64_t out_count = outer.sp.count;
    interp_reducer kind = n == 1 ? interp_match_reducer(comp) : INTERP_REDUCER_NONE;
    cxla_type t0 = xs->type;
    if (kind != INTERP_REDUCER_NONE && t0 == cxla_literal_type(operands[1]) &&
        lanes_support(kind, t0)) {
        reduce_lanes(kind, t0, cxla_literal_data_const(operands[0]),
                     cxla_literal_data_const(operands[1]), cxla_literal_data(res[0]), &inner,
                     &outer, xs->rank, xs->dims, reduced);
    } else if (kind != INTERP_REDUCER_NONE && t0 == cxla_literal_type(operands[1]) &&
               interp_reducer_supports(kind, t0)) {
        /* Fast path: a typed loop per output element. */
        size_t size = cxla_type_storage(t0);
        const void *init = cxla_literal_data_const(operands[1]);
        const void *in = cxla_literal_data_const(operands[0]);
        uint8_t *o = cxla_literal_data(res[0]);
        interp_cursor oc;
        if (out_count > 0) cursor_seek(&outer.sp, 0, &oc);
        for (int64_t e = 0; e < out_count; e++) {
            memcpy(o + (size_t)e * size, init, size);
            interp_reduce_space(kind, t0, in, oc.offset, &inner.sp, init, o + (size_t)e * size);
            if (e + 1 < out_count) cursor_next(&outer.sp, &oc);
        }
    } else {
        /* Any computation: acc = f(acc..., x...) in row-major order. */
        interp_scalar_fn f;
        s = interp_scalar_fn_init(&f, ctx, instr, comp);
        for (int64_t i = 0; i < n && !s; i++) {
            s = interp_scalar_fn_expect(&f, i, cxla_literal_type(operands[n + i]));
            if (!s) s = interp_scalar_fn_expect(&f, n + i, cxla_literal_type(operands[i]));
        }
        interp_cursor oc, ic;
        if (!s && out_count > 0) cursor_seek(&outer.sp, 0, &oc);
        for (int64_t e = 0; e < out_count && !s; e++) {
            for (int64_t i = 0; i < n; i++) {
                size_t size = f.arg_sizes[i];
                memcpy((uint8_t *)cxla_literal_data(res[i]) + (size_t)e * size,
                       cxla_literal_data_const(operands[n + i]), size);
            }
            if (inner.sp.count > 0) cursor_seek(&inner.sp, 0, &ic);
            for (int64_t r = 0; r < inner.sp.count && !s; r++) {
                int64_t at = oc.offset + ic.offset;
                for (int64_t i = 0; i < n; i++) {
                    interp_scalar_set_arg(
                        &f, i, (uint8_t *)cxla_literal_data(res[i]) + (size_t)e * f.arg_sizes[i]);
                    interp_scalar_set_arg(&f, n + i,
                                          (const uint8_t *)cxla_literal_data_const(operands[i]) +
                                              (size_t)at * f.arg_sizes[n + i]);
                }
                cxla_literal *r_lit = NULL;
                s = interp_scalar_call(&f, &r_lit);
                for (int64_t i = 0; i < n && !s; i++) {
                    const void *p =
                        interp_scalar_result(&f, r_lit, i, n, cxla_literal_type(res[i]), &s);
                    if (p)
                        memcpy((uint8_t *)cxla_literal_data(res[i]) + (size_t)e * f.arg_sizes[i], p,
                               f.arg_sizes[i]);
                }
                cxla_literal_free(r_lit);
                if (r + 1 < inner.sp.count) cursor_next(&inner.sp, &ic);
            }
            if (e + 1 < out_count) cursor_next(&outer.sp, &oc);
        }
        interp_scalar_fn_deinit(&f);
    }
    free(inner.storage);
    free(outer.storage);
    if (s) {
        interp_reduce_free_literals(res, n);
        return s;
    }
    return interp_reduce_pack_results(res, n, instr->shape.type == CXLA_TUPLE, out);
}

/* ---- map --------------------------------------------------------------------------- */

static cxla_status op_map(interp_ctx *ctx, const cxla_instr *instr,
                          const cxla_literal *const *operands, cxla_literal **out) {
    int64_t n = instr->operand_count;
    if (n < 1) return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "needs an operand");
    const cxla_shape *rs = &instr->shape;
    if (!cxla_type_is_array(rs->type))
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "the result must be an array");
    for (int64_t i = 0; i < n; i++) {
        const cxla_shape *s = cxla_literal_shape(operands[i]);
        bool ok = cxla_type_is_array(s->type) && s->rank == rs->rank;
        for (int64_t j = 0; ok && j < s->rank; j++) ok = s->dims[j] == rs->dims[j];
        if (!ok)
            return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                "operand %" PRId64 " does not have the result's dimensions", i);
    }
    const cxla_computation *comp = cxla_instr_called(instr, CXLA_ATTR_TO_APPLY);
    interp_scalar_fn f;
    CXLA_RETURN_IF_ERROR(interp_scalar_fn_init(&f, ctx, instr, comp));
    cxla_status s = NULL;
    if (f.arg_count != n)
        s = interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                         "computation '%s' takes %" PRId64
                         " parameters, not one per operand (%" PRId64 ")",
                         comp->name, f.arg_count, n);
    for (int64_t i = 0; i < n && !s; i++)
        s = interp_scalar_fn_expect(&f, i, cxla_literal_type(operands[i]));
    cxla_literal *res = NULL;
    if (!s) s = interp_new_array(rs, &res);
    int64_t count = res ? cxla_literal_element_count(res) : 0;
    size_t out_size = cxla_type_storage(rs->type);
    for (int64_t e = 0; e < count && !s; e++) {
        for (int64_t i = 0; i < n; i++)
            interp_scalar_set_arg(&f, i,
                                  (const uint8_t *)cxla_literal_data_const(operands[i]) +
                                      (size_t)e * f.arg_sizes[i]);
        cxla_literal *r = NULL;
        s = interp_scalar_call(&f, &r);
        if (!s) {
            const void *p = interp_scalar_result(&f, r, 0, 1, rs->type, &s);
            if (p) memcpy((uint8_t *)cxla_literal_data(res) + (size_t)e * out_size, p, out_size);
        }
        cxla_literal_free(r);
    }
    interp_scalar_fn_deinit(&f);
    if (s) {
        cxla_literal_free(res);
        return s;
    }
    *out = res;
    return NULL;
}

const interp_op_fn interp_reduce_ops[CXLA_OP_COUNT] = {
    [CXLA_OP_REDUCE] = op_reduce,
    [CXLA_OP_MAP] = op_map,
    [CXLA_OP_REDUCE_WINDOW] = interp_op_reduce_window,
    [CXLA_OP_SELECT_AND_SCATTER] = interp_op_select_and_scatter,
    [CXLA_OP_SORT] = interp_op_sort,
    [CXLA_OP_TOPK] = interp_op_topk,
};
