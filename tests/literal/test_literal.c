/* Literals: creation, element access, conversion, relayout and comparison. */
#include <math.h>
#include <stdlib.h>

#include "harness.h"
#include "literal/literal_internal.h"

static cxla_literal *make(cxla_type type, int64_t rank, const int64_t *dims) {
    cxla_shape shape = {.type = type, .rank = rank, .dims = (int64_t *)dims};
    cxla_literal *lit = NULL;
    CHECK_OK(cxla_literal_create(&shape, &lit));
    return lit;
}

static void test_create_array(void) {
    cxla_literal *lit = make(CXLA_F32, 2, (int64_t[]){2, 3});
    CHECK(lit != NULL);
    const cxla_shape *s = cxla_literal_shape(lit);
    CHECK(s->layout != NULL); /* literals always carry their layout */
    CHECK_EQ_I64(s->layout->minor_to_major[0], 1);
    CHECK_EQ_I64(s->layout->minor_to_major[1], 0);
    CHECK_EQ_I64(cxla_literal_element_count(lit), 6);
    CHECK_EQ_I64(cxla_literal_byte_size(lit), 24);
    const float *f = cxla_literal_data_const(lit);
    for (int i = 0; i < 6; i++) CHECK(f[i] == 0.0f);
    CHECK(cxla_literal_type(lit) == CXLA_F32);
    CHECK(cxla_literal_tuple_count(lit) == 0);
    cxla_literal_free(lit);

    /* Rank 0, zero-size and every array type. */
    for (int t = 1; t < CXLA_TYPE_COUNT; t++) {
        if (!cxla_type_is_array((cxla_type)t)) continue;
        cxla_literal *a = make((cxla_type)t, 0, NULL);
        CHECK_EQ_I64(cxla_literal_element_count(a), 1);
        CHECK_EQ_I64(cxla_literal_byte_size(a), cxla_type_storage((cxla_type)t));
        cxla_literal_free(a);
        cxla_literal *z = make((cxla_type)t, 2, (int64_t[]){3, 0});
        CHECK_EQ_I64(cxla_literal_element_count(z), 0);
        CHECK_EQ_I64(cxla_literal_byte_size(z), 0);
        cxla_literal_free(z);
    }
}

static void test_create_errors(void) {
    cxla_literal *lit = NULL;
    cxla_shape huge = {
        .type = CXLA_F32, .rank = 2, .dims = (int64_t[]){(int64_t)1 << 40, (int64_t)1 << 40}};
    CHECK(CHECK_ERROR(cxla_literal_create(&huge, &lit))[0] != 0);
    cxla_shape neg = {.type = CXLA_F32, .rank = 1, .dims = (int64_t[]){-1}};
    CHECK(CHECK_ERROR(cxla_literal_create(&neg, &lit))[0] != 0);
    cxla_shape unbounded = {.type = CXLA_F32,
                            .rank = 1,
                            .dims = (int64_t[]){CXLA_DIM_UNBOUNDED},
                            .dynamic = (uint8_t[]){1}};
    CHECK_ERROR_HAS(cxla_literal_create(&unbounded, &lit), "unbounded");
    cxla_tile tile = {.rank = 1, .dims = (int64_t[]){128}};
    cxla_layout tiled = {.minor_to_major = (int64_t[]){0}, .tile_count = 1, .tiles = &tile};
    cxla_shape t = {.type = CXLA_F32, .rank = 1, .dims = (int64_t[]){4}, .layout = &tiled};
    CHECK_ERROR_HAS(cxla_literal_create(&t, &lit), "tiled");
    CHECK_ERROR_HAS(cxla_literal_create_scalar(CXLA_TUPLE, 1, &lit), "tuple");
    CHECK(lit == NULL);
}

static void test_get_set(void) {
    int64_t dims[] = {2, 3};
    cxla_literal *lit = make(CXLA_S32, 2, dims);
    for (int64_t i = 0; i < 2; i++)
        for (int64_t j = 0; j < 3; j++)
            CHECK_OK(cxla_literal_set_s64(lit, (int64_t[]){i, j}, i * 10 + j));
    const int32_t *d = cxla_literal_data_const(lit);
    CHECK(d[0] == 0 && d[1] == 1 && d[2] == 2 && d[3] == 10 && d[5] == 12);
    int64_t v;
    CHECK_OK(cxla_literal_get_s64(lit, (int64_t[]){1, 2}, &v));
    CHECK_EQ_I64(v, 12);
    double f;
    CHECK_OK(cxla_literal_get_f64(lit, (int64_t[]){1, 1}, &f));
    CHECK(f == 11.0);
    CHECK_ERROR_HAS(cxla_literal_get_s64(lit, (int64_t[]){2, 0}, &v), "out of range");
    CHECK_ERROR_HAS(cxla_literal_set_s64(lit, (int64_t[]){0, -1}, 1), "dimension 1");
    /* s32 wraps when set from a wider integer. */
    CHECK_OK(cxla_literal_set_s64(lit, (int64_t[]){0, 0}, (int64_t)1 << 32 | 5));
    CHECK_OK(cxla_literal_get_s64(lit, (int64_t[]){0, 0}, &v));
    CHECK_EQ_I64(v, 5);
    cxla_literal_free(lit);

    cxla_literal *c = make(CXLA_C64, 1, (int64_t[]){2});
    CHECK_OK(cxla_literal_set_c128(c, (int64_t[]){1}, 1.5, -2.5));
    double re, im;
    CHECK_OK(cxla_literal_get_c128(c, (int64_t[]){1}, &re, &im));
    CHECK(re == 1.5 && im == -2.5);
    CHECK_ERROR_HAS(cxla_literal_get_f64(c, (int64_t[]){1}, &f), "complex");
    CHECK_ERROR_HAS(cxla_literal_get_s64(c, (int64_t[]){1}, &v), "not an integer");
    cxla_literal_free(c);
    /* set_c128 into a real literal is the complex -> real conversion convert refuses. */
    cxla_literal *r = make(CXLA_F32, 0, NULL);
    CHECK_ERROR_HAS(cxla_literal_set_c128(r, NULL, 1.5, 2), "not complex (f32)");
    CHECK_OK(cxla_literal_get_c128(r, NULL, &re, &im)); /* reals read as complex */
    CHECK(re == 0 && im == 0);
    cxla_literal_free(r);

    cxla_literal *u = make(CXLA_U64, 0, NULL);
    CHECK_OK(cxla_literal_set_u64(u, NULL, UINT64_MAX));
    uint64_t uv;
    CHECK_OK(cxla_literal_get_u64(u, NULL, &uv));
    CHECK_EQ_U64(uv, UINT64_MAX);
    cxla_literal_free(u);

    /* Sub-byte types: stored one per byte, sign-extended, wrapping. */
    cxla_literal *s4 = make(CXLA_S4, 1, (int64_t[]){3});
    CHECK_OK(cxla_literal_set_s64(s4, (int64_t[]){0}, 7));
    CHECK_OK(cxla_literal_set_s64(s4, (int64_t[]){1}, 8)); /* wraps to -8 */
    CHECK_OK(cxla_literal_set_s64(s4, (int64_t[]){2}, -1));
    const int8_t *b = cxla_literal_data_const(s4);
    CHECK(b[0] == 7 && b[1] == -8 && b[2] == -1);
    cxla_literal_free(s4);
    cxla_literal *u2 = make(CXLA_U2, 1, (int64_t[]){1});
    CHECK_OK(cxla_literal_set_s64(u2, (int64_t[]){0}, 6));
    CHECK(((const uint8_t *)cxla_literal_data_const(u2))[0] == 2);
    cxla_literal_free(u2);
}

static void test_scalar_and_tuple(void) {
    cxla_literal *a, *b, *t, *t2;
    CHECK_OK(cxla_literal_create_scalar(CXLA_BF16, 1.0, &a));
    CHECK_EQ_U64(*(const uint16_t *)cxla_literal_data_const(a), 0x3f80);
    CHECK_OK(cxla_literal_create_scalar(CXLA_S8, -3, &b));
    cxla_literal *elems[] = {a, b};
    CHECK_OK(cxla_literal_create_tuple(elems, 2, &t));
    CHECK_EQ_I64(cxla_literal_tuple_count(t), 2);
    CHECK(cxla_literal_type(t) == CXLA_TUPLE);
    const cxla_shape *ts = cxla_literal_shape(t);
    CHECK(ts->tuple_count == 2 && ts->elements[0].type == CXLA_BF16 &&
          ts->elements[1].type == CXLA_S8);
    CHECK(cxla_literal_tuple_element(t, 1) == b);
    CHECK(cxla_literal_tuple_element(t, 2) == NULL);
    CHECK(cxla_literal_data(t) == NULL);
    CHECK_OK(cxla_literal_clone(t, &t2));
    CHECK(cxla_literal_equal(t, t2));
    cxla_literal *taken = cxla_literal_tuple_take(t2, 0);
    CHECK(taken && cxla_literal_type(taken) == CXLA_BF16);
    CHECK(cxla_literal_type(cxla_literal_tuple_element(t2, 0)) == CXLA_TUPLE);
    CHECK(!cxla_literal_equal(t, t2));
    CHECK_ERROR_HAS(cxla_literal_compare(t2, t, NULL), "tuple element 0");
    cxla_literal_free(taken);
    cxla_literal_free(t2);
    cxla_literal_free(t);
    cxla_literal *nul[] = {NULL};
    CHECK_ERROR_HAS(cxla_literal_create_tuple(nul, 1, &t), "NULL");

    /* Nested and empty tuple shapes, tokens. */
    cxla_shape inner[] = {{.type = CXLA_F32}, {.type = CXLA_TUPLE}};
    cxla_shape parts[] = {{.type = CXLA_TUPLE, .tuple_count = 2, .elements = inner},
                          {.type = CXLA_TOKEN}};
    cxla_shape nested = {.type = CXLA_TUPLE, .tuple_count = 2, .elements = parts};
    CHECK_OK(cxla_literal_create(&nested, &t));
    CHECK_EQ_I64(cxla_literal_tuple_count(t), 2);
    CHECK(cxla_literal_type(cxla_literal_tuple_element(t, 1)) == CXLA_TOKEN);
    CHECK(cxla_shape_equal(cxla_literal_shape(t), &nested));
    cxla_literal_free(t);
}

/* Literals are single blocks, reused through a per-thread cache: a block handed out
 * again must be zeroed, and a tuple's shape must follow its elements when one is taken
 * out or given another shape. */
static void test_blocks(void) {
    for (int round = 0; round < 3; round++) {
        cxla_literal *lits[100];
        for (int i = 0; i < 100; i++) {
            lits[i] = make(CXLA_S32, 1, (int64_t[]){1 + i % 5});
            const int32_t *d = cxla_literal_data_const(lits[i]);
            for (int j = 0; j < 1 + i % 5; j++) CHECK_EQ_I64(d[j], 0);
            CHECK_EQ_I64(cxla_literal_shape(lits[i])->dims[0], 1 + i % 5);
            memset(cxla_literal_data(lits[i]), 0xff, cxla_literal_byte_size(lits[i]));
        }
        for (int i = 0; i < 100; i++) cxla_literal_free(lits[i]);
    }

    cxla_literal *a = make(CXLA_F32, 2, (int64_t[]){2, 3}), *b = make(CXLA_U8, 0, NULL), *t;
    cxla_literal *elems[] = {a, b};
    CHECK_OK(cxla_literal_create_tuple(elems, 2, &t));
    const cxla_shape *ts = cxla_literal_shape(t);
    CHECK(cxla_shape_equal(&ts->elements[0], cxla_literal_shape(a)));
    /* Another shape for element 0 (dimension 1 dynamic), then the tuple's refreshed. */
    cxla_shape dyn = *cxla_literal_shape(a);
    uint8_t flags[2] = {0, 1};
    dyn.dynamic = flags;
    CHECK_OK(cxla_literal_replace_shape(a, &dyn));
    cxla_literal_tuple_refresh_shape(t);
    CHECK(cxla_shape_equal(&ts->elements[0], &dyn));
    CHECK(ts->elements[0].dynamic && ts->elements[0].dynamic[1] == 1);
    /* Taking element 1 out leaves an empty tuple in the shape too. */
    cxla_literal *taken = cxla_literal_tuple_take(t, 1);
    CHECK(taken == b);
    CHECK(ts->elements[1].type == CXLA_TUPLE && ts->elements[1].tuple_count == 0);
    cxla_literal_free(taken);
    cxla_literal *copy;
    CHECK_OK(cxla_literal_clone(t, &copy));
    CHECK(cxla_shape_equal(cxla_literal_shape(copy), ts));
    cxla_literal_free(copy);
    cxla_literal_free(t);
}

static void test_convert(void) {
    /* float -> int: truncate toward zero, saturate, NaN -> 0 */
    double in[] = {1.9, -1.9, 1e10, -1e10, NAN, INFINITY, -INFINITY, -0.0, 127.5, -128.9};
    int64_t n = (int64_t)CXLA_ARRAY_SIZE(in);
    cxla_literal *f = make(CXLA_F64, 1, &n);
    memcpy(cxla_literal_data(f), in, sizeof(in));
    cxla_literal *s8, *u8, *s64, *u64;
    CHECK_OK(cxla_literal_convert(f, CXLA_S8, &s8));
    const int8_t *a = cxla_literal_data_const(s8);
    int8_t want_s8[] = {1, -1, 127, -128, 0, 127, -128, 0, 127, -128};
    CHECK(memcmp(a, want_s8, sizeof(want_s8)) == 0);
    CHECK_OK(cxla_literal_convert(f, CXLA_U8, &u8));
    uint8_t want_u8[] = {1, 0, 255, 0, 0, 255, 0, 0, 127, 0};
    CHECK(memcmp(cxla_literal_data_const(u8), want_u8, sizeof(want_u8)) == 0);
    CHECK_OK(cxla_literal_convert(f, CXLA_S64, &s64));
    const int64_t *l = cxla_literal_data_const(s64);
    CHECK(l[2] == 10000000000LL && l[5] == INT64_MAX && l[6] == INT64_MIN && l[4] == 0);
    CHECK_OK(cxla_literal_convert(f, CXLA_U64, &u64));
    const uint64_t *ul = cxla_literal_data_const(u64);
    CHECK(ul[5] == UINT64_MAX && ul[6] == 0 && ul[2] == 10000000000ULL);
    cxla_literal *pr;
    CHECK_OK(cxla_literal_convert(f, CXLA_PRED, &pr)); /* != 0, and NaN is true */
    uint8_t want_pred[] = {1, 1, 1, 1, 1, 1, 1, 0, 1, 1};
    CHECK(memcmp(cxla_literal_data_const(pr), want_pred, sizeof(want_pred)) == 0);
    cxla_literal_free(pr);
    cxla_literal_free(s8);
    cxla_literal_free(u8);
    cxla_literal_free(s64);
    cxla_literal_free(u64);
    cxla_literal_free(f);

    /* int -> float: round to nearest even, once. 2^24+1 is a tie in f32 -> 2^24. */
    int64_t big[] = {16777217, 16777219, INT64_MAX, -3, (int64_t)1 << 62 | 1};
    int64_t nb = (int64_t)CXLA_ARRAY_SIZE(big);
    cxla_literal *i64 = make(CXLA_S64, 1, &nb);
    memcpy(cxla_literal_data(i64), big, sizeof(big));
    cxla_literal *f32;
    CHECK_OK(cxla_literal_convert(i64, CXLA_F32, &f32));
    const float *ff = cxla_literal_data_const(f32);
    CHECK(ff[0] == 16777216.0f && ff[1] == 16777220.0f && ff[2] == 9223372036854775808.0f &&
          ff[3] == -3.0f);
    cxla_literal_free(f32);
    /* bf16 from an int64 just above a tie: 2^62 + 2^54 is the exact midpoint between two
     * bf16 values (8 significant bits); 2^62 + 2^54 + 1 must round up, even though a
     * detour through double would land on the midpoint and round to even (down). */
    int64_t tie[] = {((int64_t)1 << 62) + ((int64_t)1 << 54) + 1,
                     ((int64_t)1 << 62) + ((int64_t)1 << 54)};
    int64_t nt = 2;
    cxla_literal *ti = make(CXLA_S64, 1, &nt);
    memcpy(cxla_literal_data(ti), tie, sizeof(tie));
    cxla_literal *bf;
    CHECK_OK(cxla_literal_convert(ti, CXLA_BF16, &bf));
    const uint16_t *bb = cxla_literal_data_const(bf);
    CHECK_EQ_U64(bb[0], 0x5e81); /* 2^62 * (1 + 1/128) */
    CHECK_EQ_U64(bb[1], 0x5e80); /* tie: to even, 2^62 */
    cxla_literal_free(bf);
    cxla_literal_free(ti);
    cxla_literal_free(i64);

    /* int -> narrower int wraps; anything -> pred is != 0; complex -> real drops imag. */
    cxla_literal *w = make(CXLA_S32, 1, (int64_t[]){3});
    int32_t wv[] = {300, -129, 0};
    memcpy(cxla_literal_data(w), wv, sizeof(wv));
    cxla_literal *w8, *wp;
    CHECK_OK(cxla_literal_convert(w, CXLA_S8, &w8));
    const int8_t *w8d = cxla_literal_data_const(w8);
    CHECK(w8d[0] == 44 && w8d[1] == 127 && w8d[2] == 0);
    CHECK_OK(cxla_literal_convert(w, CXLA_PRED, &wp));
    const uint8_t *wpd = cxla_literal_data_const(wp);
    CHECK(wpd[0] == 1 && wpd[1] == 1 && wpd[2] == 0);
    cxla_literal_free(w8);
    cxla_literal_free(wp);
    cxla_literal_free(w);

    /* real -> complex: imaginary 0; complex -> complex keeps both parts; complex -> real,
     * integer or pred is refused, as XLA's Literal::Convert and convert refuse it (also
     * inside a tuple, and for an empty array). */
    cxla_literal *c = make(CXLA_F32, 0, NULL), *cc, *c64, *bad_c = NULL;
    *(float *)cxla_literal_data(c) = 2.5f;
    CHECK_OK(cxla_literal_convert(c, CXLA_C128, &cc));
    const double *ccd = cxla_literal_data_const(cc);
    CHECK(ccd[0] == 2.5 && ccd[1] == 0);
    CHECK_OK(cxla_literal_set_c128(cc, NULL, 2.5, 7));
    CHECK_OK(cxla_literal_convert(cc, CXLA_C64, &c64));
    const float *c64d = cxla_literal_data_const(c64);
    CHECK(c64d[0] == 2.5f && c64d[1] == 7.0f);
    static const cxla_type reals[] = {CXLA_F32, CXLA_F64, CXLA_BF16, CXLA_S32, CXLA_U8, CXLA_PRED};
    for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++) {
        char want[64];
        snprintf(want, sizeof want, "cannot convert c128 to %s: a complex value",
                 cxla_type_name(reals[i]));
        CHECK_ERROR_HAS(cxla_literal_convert(cc, reals[i], &bad_c), want);
        CHECK(bad_c == NULL);
        CHECK_ERROR_HAS(cxla_literal_convert(c64, reals[i], &bad_c), "real part");
    }
    cxla_literal *empty = make(CXLA_C64, 1, (int64_t[]){0});
    CHECK_ERROR_HAS(cxla_literal_convert(empty, CXLA_F32, &bad_c), "c64 to f32");
    cxla_literal *pair_items[2] = {c, NULL}, *pair = NULL;
    CHECK_OK(cxla_literal_clone(c64, &pair_items[1]));
    CHECK_OK(cxla_literal_create_tuple(pair_items, 2, &pair)); /* takes both */
    CHECK_ERROR_HAS(cxla_literal_convert(pair, CXLA_F64, &bad_c), "c64 to f64");
    CHECK(bad_c == NULL);
    cxla_literal_free(pair);
    cxla_literal_free(empty);
    cxla_literal_free(cc);
    cxla_literal_free(c64);

    /* Every array type converts from f32 and (but complex) back without error, shape kept. */
    cxla_literal *src = make(CXLA_F32, 1, (int64_t[]){4});
    float sv[] = {1.5f, -2.0f, 0.0f, 3.0f};
    memcpy(cxla_literal_data(src), sv, sizeof(sv));
    for (int t = 1; t < CXLA_TYPE_COUNT; t++) {
        if (!cxla_type_is_array((cxla_type)t)) continue;
        cxla_literal *o, *back;
        CHECK_OK(cxla_literal_convert(src, (cxla_type)t, &o));
        CHECK(cxla_literal_type(o) == (cxla_type)t && cxla_literal_element_count(o) == 4);
        if (cxla_type_is_complex((cxla_type)t)) { /* complex -> real is refused (above) */
            cxla_literal_free(o);
            continue;
        }
        CHECK_OK(cxla_literal_convert(o, CXLA_F32, &back));
        const float *bv = cxla_literal_data_const(back);
        /* -2 and 3 survive every signed or float type that can hold them */
        if (cxla_type_is_float((cxla_type)t) && cxla_type_bits((cxla_type)t) >= 8 &&
            t != CXLA_F8E8M0FNU)
            CHECK_MSG(bv[1] == -2.0f && bv[3] == 3.0f, "%s", cxla_type_name((cxla_type)t));
        cxla_literal_free(o);
        cxla_literal_free(back);
    }
    cxla_literal *bad;
    CHECK_ERROR_HAS(cxla_literal_convert(src, CXLA_TOKEN, &bad), "token");
    cxla_literal_free(src);
}

static void test_relayout(void) {
    /* The seed's 2x3 example: a b c / d e f. */
    cxla_literal *lit = make(CXLA_S32, 2, (int64_t[]){2, 3});
    int32_t v[] = {1, 2, 3, 4, 5, 6};
    memcpy(cxla_literal_data(lit), v, sizeof(v));
    cxla_layout col = {.minor_to_major = (int64_t[]){0, 1}};
    cxla_literal *cm, *back, *padded;
    CHECK_OK(cxla_literal_relayout(lit, &col, &cm));
    int32_t want[] = {1, 4, 2, 5, 3, 6}; /* a d b e c f */
    CHECK(memcmp(cxla_literal_data_const(cm), want, sizeof(want)) == 0);
    CHECK(cxla_literal_equal(cm, lit)); /* same logical values */
    int64_t x;
    CHECK_OK(cxla_literal_get_s64(cm, (int64_t[]){1, 0}, &x));
    CHECK_EQ_I64(x, 4);
    CHECK_OK(cxla_literal_relayout(cm, NULL, &back));
    CHECK(memcmp(cxla_literal_data_const(back), v, sizeof(v)) == 0);
    /* Padded: [3,5] column-major, a d 0 b e 0 c f 0 0 0 0 0 0 0. */
    cxla_layout pad = {.minor_to_major = (int64_t[]){0, 1},
                       .padded_dims = (int64_t[]){3, 5},
                       .padding_value = CXLA_PAD_ZERO};
    CHECK_OK(cxla_literal_relayout(lit, &pad, &padded));
    int32_t want_pad[15] = {1, 4, 0, 2, 5, 0, 3, 6, 0, 0, 0, 0, 0, 0, 0};
    CHECK_EQ_I64(cxla_literal_byte_size(padded), sizeof(want_pad));
    CHECK(memcmp(cxla_literal_data_const(padded), want_pad, sizeof(want_pad)) == 0);
    CHECK(cxla_literal_equal(padded, lit));
    cxla_literal *pc;
    CHECK_OK(cxla_literal_convert(padded, CXLA_F32, &pc)); /* conversion keeps the layout */
    double d;
    CHECK_OK(cxla_literal_get_f64(pc, (int64_t[]){1, 2}, &d));
    CHECK(d == 6.0);
    cxla_literal_free(pc);
    cxla_layout bad = {.minor_to_major = (int64_t[]){0, 0}};
    cxla_literal *o;
    CHECK(CHECK_ERROR(cxla_literal_relayout(lit, &bad, &o))[0] != 0);
    cxla_literal_free(cm);
    cxla_literal_free(back);
    cxla_literal_free(padded);
    cxla_literal_free(lit);
}

static void test_compare(void) {
    cxla_literal *a = make(CXLA_F32, 1, (int64_t[]){4}), *b = make(CXLA_F32, 1, (int64_t[]){4});
    float av[] = {1.0f, NAN, -0.0f, INFINITY};
    float bv[] = {1.0f, -NAN, -0.0f, INFINITY};
    memcpy(cxla_literal_data(a), av, sizeof(av));
    memcpy(cxla_literal_data(b), bv, sizeof(bv));
    CHECK(cxla_literal_equal(a, b)); /* NaN equals NaN */
    ((float *)cxla_literal_data(b))[2] = 0.0f;
    CHECK_ERROR_HAS(cxla_literal_compare(a, b, NULL), "first at {2}"); /* -0 != +0 exactly */
    cxla_tolerance tol = {.atol = 1e-6};
    CHECK_OK(cxla_literal_compare(a, b, &tol)); /* but approximately equal */
    ((float *)cxla_literal_data(b))[0] = nextafterf(1.0f, 2.0f);
    CHECK_ERROR_HAS(cxla_literal_compare(a, b, NULL), "2 of 4 elements differ; first at {0}");
    cxla_tolerance ulp1 = {.ulps = 1};
    CHECK_OK(cxla_literal_compare(a, b, &ulp1));
    ((float *)cxla_literal_data(b))[0] = nextafterf(nextafterf(1.0f, 2.0f), 2.0f);
    CHECK_ERROR_HAS(cxla_literal_compare(a, b, &ulp1), "expected 1.00000024");
    cxla_tolerance rel = {.rtol = 1e-6};
    CHECK_OK(cxla_literal_compare(a, b, &rel));
    ((float *)cxla_literal_data(b))[3] = -INFINITY; /* infinities must match */
    cxla_tolerance loose = {.atol = 1e30, .rtol = 1};
    CHECK(CHECK_ERROR(cxla_literal_compare(a, b, &loose))[0] != 0);
    ((float *)cxla_literal_data(b))[3] = INFINITY;
    ((float *)cxla_literal_data(b))[1] = 1.0f; /* NaN vs number */
    CHECK(CHECK_ERROR(cxla_literal_compare(a, b, &loose))[0] != 0);
    cxla_literal *c = make(CXLA_F32, 1, (int64_t[]){3}), *d = make(CXLA_S32, 1, (int64_t[]){4});
    CHECK_ERROR_HAS(cxla_literal_compare(a, c, NULL), "shape f32[4] differs from expected f32[3]");
    CHECK(!cxla_literal_equal(a, d));
    cxla_literal_free(a);
    cxla_literal_free(b);
    cxla_literal_free(c);
    cxla_literal_free(d);

    /* ULPs across zero and in small float types; complex part by part. */
    cxla_literal *h = make(CXLA_BF16, 1, (int64_t[]){1}), *k = make(CXLA_BF16, 1, (int64_t[]){1});
    ((uint16_t *)cxla_literal_data(h))[0] = 0x0001;
    ((uint16_t *)cxla_literal_data(k))[0] = 0x8001;
    cxla_tolerance two = {.ulps = 2};
    CHECK_OK(cxla_literal_compare(h, k, &two));
    cxla_tolerance one = {.ulps = 1};
    CHECK(CHECK_ERROR(cxla_literal_compare(h, k, &one))[0] != 0);
    cxla_literal_free(h);
    cxla_literal_free(k);
    cxla_literal *z1 = make(CXLA_C128, 0, NULL), *z2 = make(CXLA_C128, 0, NULL);
    CHECK_OK(cxla_literal_set_c128(z1, NULL, 1, 2));
    CHECK_OK(cxla_literal_set_c128(z2, NULL, 1, 2.5));
    CHECK_ERROR_HAS(cxla_literal_compare(z1, z2, NULL), "(1, 2)");
    CHECK_OK(cxla_literal_set_c128(z2, NULL, 1, nextafter(2.0, 3.0)));
    cxla_tolerance ulp = {.ulps = 1};
    CHECK_OK(cxla_literal_compare(z1, z2, &ulp)); /* part by part, in f64 ULPs */
    CHECK_OK(cxla_literal_set_c128(z2, NULL, 1, nextafter(nextafter(2.0, 3.0), 3.0)));
    CHECK_ERROR_HAS(cxla_literal_compare(z1, z2, &ulp), "1 of 1 elements differ");
    cxla_literal_free(z1);
    cxla_literal_free(z2);
}

TEST_MAIN(TEST(test_create_array), TEST(test_create_errors), TEST(test_get_set),
          TEST(test_scalar_and_tuple), TEST(test_blocks), TEST(test_convert), TEST(test_relayout),
          TEST(test_compare))
