/* Helpers shared by the interpreter's handlers. */
#include "base/floats.h"
#include "interp/interp.h"

void interp_row_major_strides(int64_t rank, const int64_t *dims, int64_t *strides) {
    int64_t s = 1;
    for (int64_t i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= dims[i];
    }
}

/* In bulk (base/floats.h); f8e8m0fnu, which has no bulk loop, element by element. */
void interp_small_to_f32(cxla_type type, const void *src, float *dst, int64_t count) {
    if (cxla_floats_convert(type, src, CXLA_F32, dst, count)) return;
    const uint8_t *s = src;
    for (int64_t i = 0; i < count; i++) dst[i] = cxla_float_to_float(type, s[i]);
}

void interp_f32_to_small(cxla_type type, const float *src, void *dst, int64_t count) {
    if (cxla_floats_convert(CXLA_F32, src, type, dst, count)) return;
    uint8_t *d = dst;
    for (int64_t i = 0; i < count; i++) d[i] = (uint8_t)cxla_float_from_float(type, src[i]);
}

cxla_status interp_call_scalar(interp_ctx *ctx, const cxla_computation *comp,
                               const cxla_literal *const *args, int64_t arg_count,
                               cxla_literal **out) {
    return interp_eval_computation(ctx, comp, args, arg_count, out);
}
