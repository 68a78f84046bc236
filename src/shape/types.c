/* The element type table: one row per cxla_type. */
#include <string.h>

#include "base/base.h"
#include "cxla/types.h"

#define INT(nm, cls, b, st)                                                                        \
    { .name = nm, .klass = cls, .bits = b, .storage = st }
#define FLT(nm, b, st, e, m, bias, kind)                                                           \
    {                                                                                              \
        .name = nm, .klass = CXLA_CLASS_FLOAT, .bits = b, .storage = st, .exponent_bits = e,       \
        .mantissa_bits = m, .exponent_bias = bias, .float_kind = kind                              \
    }

static const cxla_type_info type_table[CXLA_TYPE_COUNT] = {
    [CXLA_TYPE_INVALID] = {.name = "invalid", .klass = CXLA_CLASS_INVALID},
    [CXLA_PRED] = INT("pred", CXLA_CLASS_PRED, 8, 1),
    [CXLA_S1] = INT("s1", CXLA_CLASS_SIGNED, 1, 1),
    [CXLA_S2] = INT("s2", CXLA_CLASS_SIGNED, 2, 1),
    [CXLA_S4] = INT("s4", CXLA_CLASS_SIGNED, 4, 1),
    [CXLA_S8] = INT("s8", CXLA_CLASS_SIGNED, 8, 1),
    [CXLA_S16] = INT("s16", CXLA_CLASS_SIGNED, 16, 2),
    [CXLA_S32] = INT("s32", CXLA_CLASS_SIGNED, 32, 4),
    [CXLA_S64] = INT("s64", CXLA_CLASS_SIGNED, 64, 8),
    [CXLA_U1] = INT("u1", CXLA_CLASS_UNSIGNED, 1, 1),
    [CXLA_U2] = INT("u2", CXLA_CLASS_UNSIGNED, 2, 1),
    [CXLA_U4] = INT("u4", CXLA_CLASS_UNSIGNED, 4, 1),
    [CXLA_U8] = INT("u8", CXLA_CLASS_UNSIGNED, 8, 1),
    [CXLA_U16] = INT("u16", CXLA_CLASS_UNSIGNED, 16, 2),
    [CXLA_U32] = INT("u32", CXLA_CLASS_UNSIGNED, 32, 4),
    [CXLA_U64] = INT("u64", CXLA_CLASS_UNSIGNED, 64, 8),
    [CXLA_F16] = FLT("f16", 16, 2, 5, 10, 15, CXLA_FLOAT_IEEE),
    [CXLA_BF16] = FLT("bf16", 16, 2, 8, 7, 127, CXLA_FLOAT_IEEE),
    [CXLA_F32] = FLT("f32", 32, 4, 8, 23, 127, CXLA_FLOAT_IEEE),
    [CXLA_F64] = FLT("f64", 64, 8, 11, 52, 1023, CXLA_FLOAT_IEEE),
    [CXLA_C64] = {.name = "c64",
                  .klass = CXLA_CLASS_COMPLEX,
                  .bits = 64,
                  .storage = 8,
                  .exponent_bits = 8,
                  .mantissa_bits = 23,
                  .exponent_bias = 127},
    [CXLA_C128] = {.name = "c128",
                   .klass = CXLA_CLASS_COMPLEX,
                   .bits = 128,
                   .storage = 16,
                   .exponent_bits = 11,
                   .mantissa_bits = 52,
                   .exponent_bias = 1023},
    [CXLA_F8E5M2] = FLT("f8e5m2", 8, 1, 5, 2, 15, CXLA_FLOAT_IEEE),
    [CXLA_F8E4M3] = FLT("f8e4m3", 8, 1, 4, 3, 7, CXLA_FLOAT_IEEE),
    [CXLA_F8E4M3FN] = FLT("f8e4m3fn", 8, 1, 4, 3, 7, CXLA_FLOAT_FN),
    [CXLA_F8E4M3B11FNUZ] = FLT("f8e4m3b11fnuz", 8, 1, 4, 3, 11, CXLA_FLOAT_FNUZ),
    [CXLA_F8E3M4] = FLT("f8e3m4", 8, 1, 3, 4, 3, CXLA_FLOAT_IEEE),
    [CXLA_F8E5M2FNUZ] = FLT("f8e5m2fnuz", 8, 1, 5, 2, 16, CXLA_FLOAT_FNUZ),
    [CXLA_F8E4M3FNUZ] = FLT("f8e4m3fnuz", 8, 1, 4, 3, 8, CXLA_FLOAT_FNUZ),
    [CXLA_F8E8M0FNU] = FLT("f8e8m0fnu", 8, 1, 8, 0, 127, CXLA_FLOAT_FNU),
    [CXLA_F4E2M1FN] = FLT("f4e2m1fn", 4, 1, 2, 1, 1, CXLA_FLOAT_FN_NO_NAN),
    /* Not in XLA (StableHLO and ml_dtypes only): named as primitive_util would spell them. */
    [CXLA_F6E2M3FN] = FLT("f6e2m3fn", 6, 1, 2, 3, 1, CXLA_FLOAT_FN_NO_NAN),
    [CXLA_F6E3M2FN] = FLT("f6e3m2fn", 6, 1, 3, 2, 3, CXLA_FLOAT_FN_NO_NAN),
    [CXLA_TOKEN] = {.name = "token", .klass = CXLA_CLASS_TOKEN},
    [CXLA_OPAQUE] = {.name = "opaque", .klass = CXLA_CLASS_OPAQUE},
    [CXLA_TUPLE] = {.name = "tuple", .klass = CXLA_CLASS_TUPLE},
};

_Static_assert(CXLA_ARRAY_SIZE(type_table) == CXLA_TYPE_COUNT, "one row per type");

const cxla_type_info *cxla_type_get_info(cxla_type type) {
    if ((int)type <= 0 || type >= CXLA_TYPE_COUNT) return &type_table[CXLA_TYPE_INVALID];
    return &type_table[type];
}

const char *cxla_type_name(cxla_type type) {
    return cxla_type_get_info(type)->name;
}

cxla_type cxla_type_from_name(const char *name, size_t len) {
    if (len == (size_t)-1) len = strlen(name);
    for (int t = 1; t < CXLA_TYPE_COUNT; t++) {
        const char *n = type_table[t].name;
        if (t == CXLA_TUPLE) continue; /* "tuple" is not an element type name in text */
        if (strlen(n) == len && memcmp(n, name, len) == 0) return (cxla_type)t;
    }
    return CXLA_TYPE_INVALID;
}

size_t cxla_type_storage(cxla_type type) {
    return cxla_type_get_info(type)->storage;
}
int cxla_type_bits(cxla_type type) {
    return cxla_type_get_info(type)->bits;
}
cxla_type_class cxla_type_class_of(cxla_type type) {
    return cxla_type_get_info(type)->klass;
}

bool cxla_type_is_array(cxla_type type) {
    cxla_type_class c = cxla_type_class_of(type);
    return c == CXLA_CLASS_PRED || c == CXLA_CLASS_SIGNED || c == CXLA_CLASS_UNSIGNED ||
           c == CXLA_CLASS_FLOAT || c == CXLA_CLASS_COMPLEX;
}
bool cxla_type_is_integer(cxla_type type) {
    cxla_type_class c = cxla_type_class_of(type);
    return c == CXLA_CLASS_SIGNED || c == CXLA_CLASS_UNSIGNED;
}
bool cxla_type_is_signed(cxla_type type) {
    return cxla_type_class_of(type) == CXLA_CLASS_SIGNED;
}
bool cxla_type_is_unsigned(cxla_type type) {
    return cxla_type_class_of(type) == CXLA_CLASS_UNSIGNED;
}
bool cxla_type_is_float(cxla_type type) {
    return cxla_type_class_of(type) == CXLA_CLASS_FLOAT;
}
bool cxla_type_is_complex(cxla_type type) {
    return cxla_type_class_of(type) == CXLA_CLASS_COMPLEX;
}
bool cxla_type_is_small_float(cxla_type type) {
    return cxla_type_is_float(type) && type != CXLA_F32 && type != CXLA_F64;
}
cxla_type cxla_type_component(cxla_type type) {
    if (type == CXLA_C64) return CXLA_F32;
    if (type == CXLA_C128) return CXLA_F64;
    return type;
}
