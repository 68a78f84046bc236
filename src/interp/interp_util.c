/* Helpers shared by the interpreter's handlers. */
#include <string.h>

#include "interp/interp.h"

void interp_row_major_strides(int64_t rank, const int64_t *dims, int64_t *strides) {
    int64_t s = 1;
    for (int64_t i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= dims[i];
    }
}

void interp_small_to_f32(cxla_type type, const void *src, float *dst, int64_t count) {
    if (type == CXLA_F16) {
        const uint16_t *s = src;
        for (int64_t i = 0; i < count; i++) dst[i] = cxla_f16_to_f32(s[i]);
    } else if (type == CXLA_BF16) {
        const uint16_t *s = src;
        for (int64_t i = 0; i < count; i++) {
            uint32_t bits = (uint32_t)s[i] << 16;
            memcpy(&dst[i], &bits, 4);
        }
    } else {
        const uint8_t *s = src;
        uint32_t mask = (1u << cxla_type_bits(type)) - 1; /* f4/f6: the low bits */
        for (int64_t i = 0; i < count; i++) dst[i] = cxla_float_to_float(type, s[i] & mask);
    }
}

void interp_f32_to_small(cxla_type type, const float *src, void *dst, int64_t count) {
    if (type == CXLA_F16) {
        uint16_t *d = dst;
        for (int64_t i = 0; i < count; i++) d[i] = cxla_f32_to_f16(src[i]);
    } else if (type == CXLA_BF16) {
        uint16_t *d = dst;
        for (int64_t i = 0; i < count; i++) d[i] = cxla_f32_to_bf16(src[i]);
    } else {
        uint8_t *d = dst;
        for (int64_t i = 0; i < count; i++) d[i] = (uint8_t)cxla_float_from_float(type, src[i]);
    }
}

cxla_status interp_call_scalar(interp_ctx *ctx, const cxla_computation *comp,
                               const cxla_literal *const *args, int64_t arg_count,
                               cxla_literal **out) {
    return interp_eval_computation(ctx, comp, args, arg_count, out);
}
