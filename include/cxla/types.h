/* cxla/types.h: element types.
 *
 * The element types of XLA's PrimitiveType, with their text names as HLO prints them.
 * One table (src/shape/types.c) gives each type's name, bit width, storage size and
 * class; everything else asks it.
 *
 * Storage in host memory (literals, buffers): one element per storage unit, in the
 * machine's byte order. pred is one byte (0 or 1). The sub-byte integer types (s1, s2,
 * s4, u1, u2, u4), f4e2m1fn and the f6 types are stored one element per byte (signed ones
 * sign-extended, the small floats in the low bits), as XLA's literals do. f16, bf16 and the
 * f8 types are stored as their bit patterns. c64 and c128 are (real, imaginary) pairs.
 */
#ifndef CXLA_TYPES_H_
#define CXLA_TYPES_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cxla/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cxla_type {
    CXLA_TYPE_INVALID = 0,
    CXLA_PRED,
    CXLA_S1,
    CXLA_S2,
    CXLA_S4,
    CXLA_S8,
    CXLA_S16,
    CXLA_S32,
    CXLA_S64,
    CXLA_U1,
    CXLA_U2,
    CXLA_U4,
    CXLA_U8,
    CXLA_U16,
    CXLA_U32,
    CXLA_U64,
    CXLA_F16,
    CXLA_BF16,
    CXLA_F32,
    CXLA_F64,
    CXLA_C64,
    CXLA_C128,
    CXLA_F8E5M2,
    CXLA_F8E4M3,
    CXLA_F8E4M3FN,
    CXLA_F8E4M3B11FNUZ,
    CXLA_F8E3M4,
    CXLA_F8E5M2FNUZ,
    CXLA_F8E4M3FNUZ,
    CXLA_F8E8M0FNU,
    CXLA_F4E2M1FN,
    CXLA_F6E2M3FN, /* StableHLO's f6E2M3FN and f6E3M2FN; XLA's PrimitiveType has neither */
    CXLA_F6E3M2FN,
    CXLA_TOKEN,
    CXLA_OPAQUE,
    CXLA_TUPLE,
    CXLA_TYPE_COUNT
} cxla_type;

typedef enum cxla_type_class {
    CXLA_CLASS_INVALID = 0,
    CXLA_CLASS_PRED,
    CXLA_CLASS_SIGNED,   /* two's complement integers */
    CXLA_CLASS_UNSIGNED, /* unsigned integers */
    CXLA_CLASS_FLOAT,    /* binary floating point, IEEE-like or ml_dtypes' small formats */
    CXLA_CLASS_COMPLEX,  /* a pair of floats */
    CXLA_CLASS_TOKEN,
    CXLA_CLASS_OPAQUE,
    CXLA_CLASS_TUPLE,
    CXLA_CLASS_COUNT
} cxla_type_class;

/* How a small float format encodes the special values (ml_dtypes' naming):
 * IEEE: inf and NaN with an all-ones exponent; FN: finite, no inf, NaN is the all-ones
 * exponent and mantissa (S.1111.111 for e4m3fn); FNUZ: finite, no negative zero, the
 * single NaN is the sign bit alone (0x80); FNU: unsigned, exponent only (e8m0fnu), NaN
 * is 0xff, no zero; FN_NO_NAN: finite with no NaN at all (f4e2m1fn,
 * f6e2m3fn, f6e3m2fn). */
typedef enum cxla_float_kind {
    CXLA_FLOAT_IEEE = 0,
    CXLA_FLOAT_FN,
    CXLA_FLOAT_FNUZ,
    CXLA_FLOAT_FNU,
    CXLA_FLOAT_FN_NO_NAN,
} cxla_float_kind;

typedef struct cxla_type_info {
    const char *name;      /* HLO text name: "f32", "pred", "f8e4m3fn", "token" */
    cxla_type_class klass; /* integer, float, ... */
    int bits;              /* bit width: 8 for pred (one byte), 4 for s4, 64 for c64 */
    size_t storage;        /* bytes per element in host memory; 0 for token/tuple/opaque */
    /* Float formats (FLOAT, and the components of COMPLEX): */
    int exponent_bits;
    int mantissa_bits; /* explicit mantissa bits, without the hidden one */
    int exponent_bias;
    cxla_float_kind float_kind;
} cxla_type_info;

const cxla_type_info *cxla_type_get_info(cxla_type type); /* never NULL; INVALID's row for bad */
const char *cxla_type_name(cxla_type type);               /* "f32"; "invalid" when out of range */
/* Looks a text name up ("f32", "bf16", ...); CXLA_TYPE_INVALID when unknown. |len| may be
 * (size_t)-1 for a NUL-terminated name. */
cxla_type cxla_type_from_name(const char *name, size_t len);

/* Shortcuts into cxla_type_get_info: bytes per element in host memory (0 for token,
 * tuple, opaque and invalid types), bit width, class (CXLA_CLASS_INVALID when out of
 * range). */
size_t cxla_type_storage(cxla_type type);
int cxla_type_bits(cxla_type type);
cxla_type_class cxla_type_class_of(cxla_type type);
bool cxla_type_is_array(cxla_type type); /* an element type arrays can have (not tuple/token) */
bool cxla_type_is_integer(cxla_type type);
bool cxla_type_is_signed(cxla_type type);   /* signed integers */
bool cxla_type_is_unsigned(cxla_type type); /* unsigned integers */
bool cxla_type_is_float(cxla_type type);    /* real floating point (not complex) */
bool cxla_type_is_complex(cxla_type type);
bool cxla_type_is_small_float(cxla_type type); /* f16, bf16, f8, f4: computed in f32 */
/* For c64 -> f32, c128 -> f64; otherwise |type| itself. */
cxla_type cxla_type_component(cxla_type type);

/* Small float conversions (src/base/floats.c). Round to nearest even; NaN, infinities
 * (or their absence) and denormals as ml_dtypes does: a value too large for a format
 * with no infinity becomes NaN (or, for f4e2m1fn which has no NaN, the largest finite
 * value), -0 becomes +0 in the fnuz formats, and so on. |type| must be a float type;
 * bits are right-aligned in the returned integer. */
uint32_t cxla_float_from_double(cxla_type type, double value);
uint32_t cxla_float_from_float(cxla_type type, float value);
double cxla_float_to_double(cxla_type type, uint32_t bits);
float cxla_float_to_float(cxla_type type, uint32_t bits);

/* The common cases, fast. */
uint16_t cxla_f32_to_f16(float value);
float cxla_f16_to_f32(uint16_t bits);
uint16_t cxla_f32_to_bf16(float value);
float cxla_bf16_to_f32(uint16_t bits);

#ifdef __cplusplus
}
#endif
#endif /* CXLA_TYPES_H_ */
