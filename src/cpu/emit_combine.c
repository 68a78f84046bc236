/* The combine function of a collective's reducer (emit_combine.h): a loop over two buffers
 * with the reducer written inline by emit_scalar.c's scalar writer, the first argument the
 * accumulated value and the second the next member's, as the interpreter's reduce_in_order
 * calls it. */
#include "cpu/emit_combine.h"
#include "cpu/emit_internal.h"

bool cpu_emit_combine_ok(const cxla_computation *reducer) {
    if (!reducer || !reducer->root || reducer->param_count != 2 ||
        !cpu_emit_scalar_ok(reducer, 2, 1))
        return false;
    const cxla_shape *r = &reducer->root->shape;
    if (r->rank != 0 || !cxla_type_is_array(r->type)) return false;
    if (!cpu_emit_type_ok(r->type) && !cpu_emit_subbyte(r->type) && !cxla_type_is_complex(r->type))
        return false;
    for (int64_t i = 0; i < reducer->instr_count; i++) {
        const cxla_instr *in = reducer->instrs[i];
        if (in->opcode == CXLA_OP_PARAMETER && (in->shape.type != r->type || in->shape.rank != 0))
            return false;
    }
    return true;
}

cxla_status cpu_emit_combine(const cxla_instr *instr, const cxla_computation *reducer,
                             const char *name, cxla_strbuf *out) {
    if (!cpu_emit_combine_ok(reducer))
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED,
                          "cpu backend: cannot write the reducer of %s as a combine function",
                          instr->name);
    cxla_arena *arena = cxla_arena_create();
    if (!arena) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    cpu_emit_fmt_reset();
    cpu_emit_complex_libm_reset();
    size_t at = out->len;
    const char *ct = cpu_emit_ctype(reducer->root->shape.type);
    cpu_emit_kernel_head(out, instr, name);
    cxla_strbuf_printf(out,
                       "/* acc[j] = %s(acc[j], x[j]) for j < n. */\n"
                       "void %s(void *acc_, const void *x_, int64_t n);\n"
                       "void %s(void *acc_, const void *x_, int64_t n) {\n"
                       "    %s *restrict acc = acc_;\n"
                       "    const %s *restrict x = x_;\n"
                       "    for (int64_t j = 0; j < n; j++) {\n"
                       "        const %s a0 = acc[j], a1 = x[j];\n",
                       reducer->name, name, name, ct, ct, ct);
    /* The parameters by number: a reducer may declare them in any order. */
    const char *args[2] = {"a0", "a1"};
    const char *res[1] = {"0"};
    int64_t tmp = 0;
    cpu_emit_scalar(arena, out, 2, &tmp, reducer, args, res);
    cxla_strbuf_printf(out, "        acc[j] = %s;\n    }\n}\n\n", res[0]);
    cpu_emit_complex_libm_guard(name, out, at);
    cxla_status s = NULL;
    if (out->failed || cpu_emit_fmt_failed())
        s = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory emitting %s", instr->name);
    cxla_arena_destroy(arena);
    return s;
}
