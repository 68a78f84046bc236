/* Internal to the emitter (src/cpu/emit*.c): the scalar expression rules of emit_expr.c
 * that the kernel structure in emit.c calls. Strings come from |arena| (the emitter's
 * scratch arena, freed when a kernel is done). */
#ifndef CXLA_CPU_EMIT_INTERNAL_H_
#define CXLA_CPU_EMIT_INTERNAL_H_

#include "cpu/emit.h"

/* The fixed text of the prelude (emit_prelude.c); cpu_emit_prelude adds the per-type
 * small-float helpers (cpu_emit_small_float_helpers) after it. */
extern const char *const cpu_emit_prelude_lines[]; /* NULL-terminated */
void cpu_emit_small_float_helpers(cxla_strbuf *out);

/* Element types kernels handle: pred, the integers of 8 bits and more, the real floats. */
bool cpu_emit_type_ok(cxla_type t);
bool cpu_emit_is_small(cxla_type t);
/* The C type a value is held in (small floats: their bits), and the one it is stored in. */
const char *cpu_emit_ctype(cxla_type t);
const char *cpu_emit_stype(cxla_type t);
/* printf into |arena|. */
char *cpu_emit_fmt(cxla_arena *arena, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* Whether unary / binary |op| is defined on |t| (as the interpreter's handlers say). */
bool cpu_emit_unary_ok(cxla_opcode op, cxla_type t);
bool cpu_emit_binary_ok(cxla_opcode op, cxla_type t);
/* The C expression of one element (NULL when |op| does not apply): operands are C
 * expressions of the compute type of |t| (f32, f64, an integer or pred: small floats are
 * decoded to f32 by the caller and the result encoded). */
const char *cpu_emit_unary(cxla_arena *arena, cxla_opcode op, cxla_type t, const char *x);
const char *cpu_emit_binary(cxla_arena *arena, cxla_opcode op, cxla_type t, const char *a,
                            const char *b);
/* compare with direction |dir| ("EQ" ...) and comparison type |ctype| (NULL: default). */
const char *cpu_emit_compare(cxla_arena *arena, const char *dir, const char *ctype, cxla_type t,
                             const char *a, const char *b);
/* Small float bits |x| of |t| as a float, and a float as (rounded) bits of |t|; other
 * types unchanged. */
const char *cpu_emit_decode(cxla_arena *arena, cxla_type t, const char *x);
const char *cpu_emit_encode(cxla_arena *arena, cxla_type t, const char *x);
/* convert of |x| from |from| to |to| (both as held: small floats as bits). */
const char *cpu_emit_convert(cxla_arena *arena, cxla_type from, cxla_type to, const char *x);

/* The dot kernel (emit_dot.c): whether |instr| is a dot it emits (integer types, or f32
 * or f64 operands of the result type, with dimension numbers that merge into strides), and
 * the kernel. */
bool cpu_emit_dot_ok(const cxla_instr *instr);
cxla_status cpu_emit_dot(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                         cpu_kernel_info *out_info);

/* The convolution kernel (emit_conv.c): whether |instr| is a convolution it emits (real
 * floats with a real float result, or integers with an integer result; static row-major
 * arrays; no PACKED_NIBBLE), and the kernel (an exact loop nest, bit for bit the
 * interpreter's). */
bool cpu_emit_conv_ok(const cxla_instr *instr);
cxla_status cpu_emit_conv(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                          cpu_kernel_info *out_info);

/* The library-like kernels (emit_lib.c and the files it dispatches to: emit_sort.c,
 * emit_linalg.c, emit_rng.c, emit_fft.c): sort, top-k, cholesky, triangular-solve,
 * rng-bit-generator, fft, map, reduce-precision, bitcast-convert. Whether |instr| is one it
 * emits, and the kernel (which may need scratch: cpu_kernel_info.scratch). */
bool cpu_emit_lib_ok(const cxla_instr *instr);
cxla_status cpu_emit_lib(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                         cpu_kernel_info *out_info);

/* The element type of the operation about to be emitted (emit_expr.c's math_call keeps
 * the interpreter's libm expressions for small floats whose NaN sign matters). */
void cpu_emit_math_type(cxla_type t);

/* cpu_emit_fmt's failure flag (per thread): reset before a kernel, tested after it. */
void cpu_emit_fmt_reset(void);
bool cpu_emit_fmt_failed(void);
/* Frees a piece of text the emitter made on the side (a loop nest, a condition, a
 * helper's body) after its use, setting the failure flag when it could not be made
 * whole: what was pasted from it is then missing or cut short, and the kernel must not
 * be compiled (such a kernel may compile and compute something else). */
void cpu_emit_buf_free(cxla_strbuf *b);

#endif /* CXLA_CPU_EMIT_INTERNAL_H_ */
