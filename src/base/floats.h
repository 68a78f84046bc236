/* Bulk conversions between the real float types (src/base/floats.c), for the loops that
 * convert whole arrays: literal conversion, the interpreter's convert and its small-float
 * arithmetic, generated inputs. Each element comes out bit for bit as the per-element
 * functions of cxla/types.h give it (cxla_float_from_double, cxla_float_to_float, the
 * f16/bf16 fast paths, and the C casts between f32 and f64), without a call per element:
 * the loops work on fixed-size blocks of integer and float lanes that the compiler
 * vectorizes. */
#ifndef CXLA_BASE_FLOATS_H_
#define CXLA_BASE_FLOATS_H_

#include <stdbool.h>
#include <stdint.h>

#include "cxla/types.h"

/* Whether cxla_floats_convert has a loop for |from| -> |to|: both real float types
 * (f64, f32, f16, bf16, the f8, f6 and f4 types) other than f8e8m0fnu. */
bool cxla_floats_can_convert(cxla_type from, cxla_type to);

/* Converts |n| elements of |from| at |src| to |to| at |dst| (arrays in storage order,
 * not overlapping), as cxla_convert_element would one by one. Returns false and writes
 * nothing when !cxla_floats_can_convert(from, to). */
bool cxla_floats_convert(cxla_type from, const void *src, cxla_type to, void *dst, int64_t n);

#endif /* CXLA_BASE_FLOATS_H_ */
