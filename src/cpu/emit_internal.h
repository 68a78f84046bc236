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
/* The complex types and their arithmetic (emit_expr.c; cpu_emit_small_float_helpers
 * writes them), and which complex operations have a C form. */
void cpu_emit_complex_helpers(cxla_strbuf *out);
bool cpu_emit_complex_unary_ok(cxla_opcode op);
/* The complex functions of <complex.h> (exp, log, pow, ... of c64 / c128): a kernel that
 * calls one gets an #error in front of it for compilers without <complex.h> (tcc).
 * cpu_emit_kernel_info resets the record before a kernel and inserts the guard at offset
 * |at| of |out| (where the kernel starts) after it; nothing when the kernel calls none. */
void cpu_emit_complex_libm_reset(void);
void cpu_emit_complex_libm_guard(const char *kernel, cxla_strbuf *out, size_t at);
bool cpu_emit_complex_binary_ok(cxla_opcode op);
/* Sub-byte integers (s4, u4, s2, u2, ...): elementwise kernels and data movement only. */
bool cpu_emit_subbyte(cxla_type t);

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

/* Row fusion (emit_rows.c): the statement that asks for the cache lines of the next row
 * of the fused computation's row-shaped inputs (those shaped as |s|, read element by
 * element), for the block of |lanes| columns starting at column |col| of the row that
 * starts at element |start| (C expressions); NULL when there is none to ask for. A pass
 * over a row that is already in cache places it in its loop over blocks. */
const char *cpu_emit_row_prefetch(cxla_arena *arena, const cxla_computation *fused,
                                  const cxla_shape *s, const char *start, const char *col,
                                  int64_t lanes);
/* Row fusion (emit_rows.c): |call|, the C expression of f32 exponential |exp|, or the same
 * call to cxla_m_exp_nonpos (cxla_math.h: the same bits for arguments <= 0 or NaN, in fewer
 * instructions) where |exp|'s operand is an element minus its row's maximum (softmax's). */
const char *cpu_emit_row_exp(cxla_arena *arena, const cxla_instr *exp, const char *call);

/* The dot kernel (emit_dot.c): whether |instr| is a dot it emits (integer types, or f32
 * or f64 operands of the result type, with dimension numbers that merge into strides), and
 * the kernel (for a narrow f32 product, cxla_dot_narrow, its own register-blocked form). */
bool cpu_emit_dot_ok(const cxla_instr *instr);
cxla_status cpu_emit_dot(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                         cpu_kernel_info *out_info);

/* Window, gather and scatter kernels (emit_window.c, emit_gather.c): whether |instr| is
 * one they emit, and the kernel (as cpu_emit_kernel_info). */
bool cpu_emit_reduce_window_ok(const cxla_instr *instr);
cxla_status cpu_emit_reduce_window(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                                   cpu_kernel_info *out_info);
/* A reduce-window at the root of a fusion (an input fusion: elementwise producers of its
 * inputs inside it): emit.c's |reader| writes the statements computing input |operand| of
 * the reduce-window (init value operand - n for operand >= n) at element offset |at| into
 * |b| at |indent| and returns its C value; the kernel's inputs are the fusion's parameters
 * (in_params: "const float *restrict p0, ...", in_args: the casts of in[], in_names: "p0,
 * ...", in_count of them). */
typedef struct cpu_emit_reader {
    const char *(*read)(void *ctx, cxla_strbuf *b, int indent, int64_t operand, const char *at);
    void *ctx;
    const char *in_params, *in_args, *in_names;
    int64_t in_count;
} cpu_emit_reader;
cxla_status cpu_emit_reduce_window_fused(const cxla_instr *fusion, const char *name,
                                         cxla_strbuf *out, cpu_kernel_info *out_info,
                                         const cpu_emit_reader *reader);
bool cpu_emit_select_and_scatter_ok(const cxla_instr *instr);
cxla_status cpu_emit_select_and_scatter(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                                        cpu_kernel_info *out_info);
bool cpu_emit_scatter_ok(const cxla_instr *instr);
cxla_status cpu_emit_scatter(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                             cpu_kernel_info *out_info);

/* How a gather's operand index is made (emit_gather.c; emit.c computes gather per output
 * element, unfused or fused). For operand dimension d: start + offset, where offset is
 * output dimension offset_out[d] (-1: 0) and start is output dimension batch_out[d] (an
 * operand batching dimension), else index-vector component start_k[d] (-1: 0) converted to
 * int64_t and clamped to [0, max_start[d]]. Indices dimension j is indexed by output
 * dimension idx_out[j] (-1 for index_vector_dim, |ivd|). */
typedef struct cpu_gather_map {
    int64_t offset_out[CXLA_MAX_RANK], start_k[CXLA_MAX_RANK], batch_out[CXLA_MAX_RANK];
    int64_t max_start[CXLA_MAX_RANK];
    int64_t idx_out[CXLA_MAX_RANK];
    int64_t ivd;
} cpu_gather_map;
/* Whether |instr| is a gather of static arrays with valid dimension numbers; fills |m| (may
 * be NULL). */
bool cpu_emit_gather_map(const cxla_instr *instr, cpu_gather_map *m);

/* Scalar computations written inline (emit_scalar.c): whether every instruction of |c| has
 * a C form, with |nargs| scalar parameters and one result (a tuple root of |nres| when nres
 * > 1). The forms: parameters, constants, every elementwise operation the emitter writes
 * (compare of complex values EQ / NE, select, clamp, convert, bitcast-convert of whole
 * bytes), tuples and get-tuple-element inside, call and fusion (inlined), while and
 * conditional (C loops and branches), and arrays of up to 64 elements, one C scalar each:
 * their moves (broadcast, reshape, bitcast, transpose, reverse, slice, concatenate, pad;
 * iota), map, reduce and dot (docs/semantics.md, "Scalar computations in kernels"). */
bool cpu_emit_scalar_ok(const cxla_computation *c, int64_t nargs, int64_t nres);
/* The most results a scalar computation gives (emit_scalar.c's bound on one value's
 * scalars): so the most inputs of a variadic reduce or reduce-window kernel, whose reducer
 * gives one result per input. Above it the JIT runs the interpreter's handler and cxla
 * compile says so, naming it. */
enum { CPU_EMIT_MAX_REDUCER_RESULTS = 64 };
/* The same for a computation whose parameters, instructions and results all have the
 * dimensions of |over| (NULL: scalars), so that it computes each position on its own from
 * the same position of its parameters: cpu_emit_scalar then writes one position (scan's
 * bodies over arrays, emit_scan.c). Single-element constants only. */
bool cpu_emit_positionwise_ok(const cxla_computation *c, int64_t nargs, int64_t nres,
                              const cxla_shape *over);
/* Appends to |b| (at |indent|) the statements computing |c| on |args| (C values of its
 * parameters' compute types); out[i] gets the C value of result i. Temporaries are named
 * f<*tmp>, counting up. */
void cpu_emit_scalar(cxla_arena *arena, cxla_strbuf *b, int indent, int64_t *tmp,
                     const cxla_computation *c, const char *const *args, const char **out);
/* |c| as a C function of |nparams| scalar parameters (comparators, map functions, reducers
 * of emit_lib.c): whether cpu_emit_scalar_ok holds with scalar parameters and |nr| scalar
 * results of types |rts| (a root tuple of them when nr > 1); then the function itself,
 * `static inline RT fname(CT0 p0, ...)`, or for a root tuple `static inline void
 * fname(CT0 p0, ..., RT0 *o0, ...)`, values held as cpu_emit_ctype says. Errors: out of
 * memory. */
bool cpu_emit_scalar_function_ok(const cxla_computation *c, int64_t nparams, const cxla_type *rts,
                                 int64_t nr);
cxla_status cpu_emit_scalar_function(cxla_arena *arena, const cxla_computation *c,
                                     const char *fname, cxla_strbuf *out);

/* Pieces every kernel writer shares (emit_scalar.c): a static array of a type kernels handle
 * in the default layout; the kernel's head comment (its HLO); the entry point that clamps
 * [begin, end) to [0, |range|), runs |pre| (statements, may be NULL) and calls
 * NAME_body(|args|, begin, end). */
bool cpu_emit_static_array(const cxla_shape *s);
/* The same with sub-byte integers (one per byte) and complex values too (scatter's and
 * reduce-window's arrays). */
bool cpu_emit_held_array(const cxla_shape *s);
void cpu_emit_kernel_head(cxla_strbuf *out, const cxla_instr *instr, const char *name);
void cpu_emit_kernel_entry(cxla_strbuf *out, const char *name, int64_t range, const char *args,
                           const char *pre);

/* The convolution kernel (emit_conv.c): whether |instr| is a convolution it emits (every
 * element-type combination the interpreter takes, complex and PACKED_NIBBLE included;
 * static row-major arrays), and the kernel (an exact loop nest, bit for bit the
 * interpreter's). */
bool cpu_emit_conv_ok(const cxla_instr *instr);
cxla_status cpu_emit_conv(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                          cpu_kernel_info *out_info);
/* What dot and convolution kernels share (emit_conv.c), after the interpreter's
 * interp_linalg.c: the compute type of a product of result |r| and operands |l|, |k| (F32,
 * F64, C64, C128, or U64 for 64-bit wrapping integer sums); operand element |x| (as stored)
 * of type |from| as a value of compute type |ct| (converted to the result type |rt| first
 * where the interpreter converts it, as it does every operand of a PACKED_NIBBLE product:
 * |nibble|); whether |in| has PACKED_NIBBLE on both operands
 * (*|out_bad|: on one only, or of a non-integer result, which the interpreter refuses); and
 * the sum of the products of the low and of the high nibbles of |x| and |y| (uint64_t
 * values, split by |rt|'s signedness). */
cxla_type cpu_emit_product_type(cxla_type r, cxla_type l, cxla_type k);
const char *cpu_emit_product_operand(cxla_arena *ar, cxla_type from, cxla_type rt, cxla_type ct,
                                     bool nibble, const char *x);
bool cpu_emit_packed_nibble(const cxla_instr *in, bool *out_bad);
const char *cpu_emit_nibble_product(cxla_arena *ar, cxla_type rt, const char *x, const char *y);

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
