/* Internal to the emitter's library-like kernels (emit_lib.c, emit_linalg.c, emit_rng.c,
 * emit_fft.c, emit_ragged.c, emit_scan.c): operations that the interpreter computes with loops of
 * its own (a merge sort, a substitution, a block cipher, an FFT) written out as generated C that
 * repeats the interpreter's arithmetic in the same order, so that the JIT and `cxla compile` run
 * them with no runtime library. Each kernel has the signature of emit.h; the outer range
 * runs over independent rows, matrices or blocks; a kernel that needs work memory asks
 * for it in cpu_kernel_info.scratch and finds it in out[results]. */
#ifndef CXLA_CPU_EMIT_LIB_H_
#define CXLA_CPU_EMIT_LIB_H_

#include "cpu/emit_internal.h"

/* The comment that opens a kernel: its name and the instruction's HLO text on one line. */
void cpu_lib_head(const cxla_instr *instr, const char *name, cxla_strbuf *out);
/* Opens the kernel's entry point: the signature, and begin/end clamped to [0, |range|)
 * (returning when empty). The caller writes the body and the closing brace. */
void cpu_lib_open(const char *name, int64_t range, cxla_strbuf *out);
/* Whether every array of |instr| (result elements, operands) is a static array of the
 * default layout. */
bool cpu_lib_plain(const cxla_instr *instr);
/* The number of elements of |s|. */
int64_t cpu_lib_count(const cxla_shape *s);

/* cholesky and triangular-solve of real floats (emit_linalg.c). */
bool cpu_emit_linalg_ok(const cxla_instr *instr);
cxla_status cpu_emit_linalg(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                            cpu_kernel_info *out_info);
/* rng-bit-generator, three_fry and philox (emit_rng.c). */
bool cpu_emit_rng_ok(const cxla_instr *instr);
cxla_status cpu_emit_rng(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                         cpu_kernel_info *out_info);
/* fft of c64/c128 and the real transforms over f32/f64 (emit_fft.c). */
bool cpu_emit_fft_ok(const cxla_instr *instr);
cxla_status cpu_emit_fft(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                         cpu_kernel_info *out_info);

/* ragged-dot and scaled-dot of real floats and integers (emit_ragged.c). */
bool cpu_emit_ragged_ok(const cxla_instr *instr);
cxla_status cpu_emit_ragged(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                            cpu_kernel_info *out_info);
/* scan whose body computes each position on its own (emit_scan.c). */
bool cpu_emit_scan_ok(const cxla_instr *instr);
cxla_status cpu_emit_scan(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                          cpu_kernel_info *out_info);

#endif /* CXLA_CPU_EMIT_LIB_H_ */
