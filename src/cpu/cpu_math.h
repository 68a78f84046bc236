/* The text of src/cpu/cxla_math.h, the cpu backend's fast f32 functions, which the C
 * emitter pastes into every generated source (and ahead-of-time output) before the
 * kernels that call cxla_f32_exp, cxla_f32_log, ... The build embeds the header
 * (cmake/cxla_embed.cmake writes the definition under the build directory), so the
 * generated code and the library's tests always see the same text. */
#ifndef CXLA_CPU_CPU_MATH_H_
#define CXLA_CPU_CPU_MATH_H_

/* A static NUL-terminated string, owned by the library; never fails. */
const char *cpu_math_source(void);

#endif /* CXLA_CPU_CPU_MATH_H_ */
