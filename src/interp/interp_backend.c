/* The interpreter behind the backend interface (exec.h): compiling keeps the module,
 * running interprets it. */
#include "interp/interp.h"

static cxla_status interp_backend_compile(const cxla_module *module,
                                          const exec_compile_options *options,
                                          void **out_compiled) {
    (void)options;
    *out_compiled = (void *)module;
    return NULL;
}

static cxla_status interp_backend_execute(void *compiled, const exec_run_options *options,
                                          const cxla_literal *const *args, int64_t arg_count,
                                          cxla_literal **out_result) {
    return interp_run_module(compiled, options, args, arg_count, out_result);
}

static void interp_backend_destroy(void *compiled) {
    (void)compiled; /* the module is the caller's */
}

const exec_backend interp_backend = {
    .name = "interpreter",
    .alias = "interp",
    .compile = interp_backend_compile,
    .execute = interp_backend_execute,
    .destroy = interp_backend_destroy,
};
