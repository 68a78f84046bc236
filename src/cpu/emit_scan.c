/* The emitter's scan kernel (emit_lib.h): scan(inputs..., inits...) as the loop of the
 * interpreter (src/interp/interp_scan.c), for bodies that compute each position of their
 * arrays on its own (cpu_emit_positionwise_ok: scalars, or arrays of the slice's dimensions
 * with elementwise operations, compare, select and convert). Such a scan is independent
 * per position of the slice: each position runs its own carries through the steps t =
 * 0..n-1 (index n-1-t when reversed), the body written inline once per step, in the
 * interpreter's order, so the results are its results bit for bit. The outer range runs
 * over the positions of the slice.
 *
 * Other bodies (a dot, a reduce, a broadcast inside) are not taken here: the JIT runs the
 * interpreter's handler and `cxla compile` refuses them. */
#include <inttypes.h>
#include <string.h>

#include "cpu/emit_lib.h"

#define F(...) cpu_emit_fmt(arena, __VA_ARGS__)

/* What a scan is, once its attributes are checked. */
typedef struct scan_form {
    const cxla_computation *body;
    int64_t d, len, ni, nc, no, outer, inner;
    bool reverse, tuple;
    cxla_shape slice; /* input 0 without dimension d (its dims in slice_dims) */
    int64_t slice_dims[CXLA_MAX_RANK];
} scan_form;

static const cxla_shape *result_at(const cxla_instr *instr, int64_t k) {
    return instr->shape.type == CXLA_TUPLE ? &instr->shape.elements[k] : &instr->shape;
}

static bool same_dims(const cxla_shape *a, const cxla_shape *b) {
    if (a->rank != b->rank) return false;
    for (int64_t k = 0; k < a->rank; k++)
        if (a->dims[k] != b->dims[k]) return false;
    return true;
}

static bool scan_form_of(const cxla_instr *instr, scan_form *f) {
    memset(f, 0, sizeof(*f));
    if (instr->opcode != CXLA_OP_SCAN || !cpu_lib_plain(instr)) return false;
    f->body = cxla_instr_called(instr, CXLA_ATTR_TO_APPLY);
    int64_t nd = 0;
    const int64_t *dd = cxla_instr_ints(instr, CXLA_ATTR_DIMENSIONS, &nd);
    if (!cxla_instr_int(instr, CXLA_ATTR_NUM_CARRIES, &f->nc)) f->nc = 0;
    f->reverse = cxla_instr_bool(instr, CXLA_ATTR_IS_REVERSE);
    f->ni = instr->operand_count - f->nc;
    if (!f->body || !dd || nd != 1 || f->nc < 0 || f->ni < 1 ||
        f->body->param_count != instr->operand_count)
        return false;
    const cxla_shape *s0 = &instr->operands[0]->shape;
    f->d = dd[0];
    if (f->d < 0 || f->d >= s0->rank) return false;
    f->len = s0->dims[f->d];
    f->slice = *s0;
    f->slice.rank = s0->rank - 1;
    f->slice.dims = f->slice_dims; /* not input 0's own array */
    f->slice.layout = NULL;
    f->outer = f->inner = 1;
    for (int64_t k = 0, q = 0; k < s0->rank; k++) {
        if (k == f->d) continue;
        f->slice.dims[q++] = s0->dims[k];
        if (k < f->d)
            f->outer *= s0->dims[k];
        else
            f->inner *= s0->dims[k];
    }
    /* Inputs: input 0's dimensions; every parameter (slices and carries) the slice's. */
    for (int64_t k = 0; k < instr->operand_count; k++) {
        const cxla_shape *s = &instr->operands[k]->shape, *p = &f->body->params[k]->shape;
        if (s->type != p->type || !same_dims(p, &f->slice)) return false;
        if (k < f->ni && !same_dims(s, s0)) return false;
        if (k >= f->ni && !same_dims(s, &f->slice)) return false;
    }
    f->tuple = instr->shape.type == CXLA_TUPLE;
    int64_t nres = f->tuple ? instr->shape.tuple_count : 1;
    f->no = nres - f->nc;
    if (f->no < 0) return false;
    /* The body's values: as many as the result has (else the interpreter's error), each of
     * the type and dimensions of its output's slice or its carry. */
    const cxla_instr *root = f->body->root;
    bool body_tuple = root && root->opcode == CXLA_OP_TUPLE;
    if (!root || (body_tuple ? root->operand_count : 1) != nres) return false;
    if (!cpu_emit_positionwise_ok(f->body, instr->operand_count, nres, &f->slice)) return false;
    for (int64_t k = 0; k < nres; k++) {
        const cxla_shape *v = body_tuple ? &root->operands[k]->shape : &root->shape;
        const cxla_shape *r = result_at(instr, k);
        if (v->type != r->type) return false;
        if (k < f->no && !same_dims(r, s0)) return false;
        if (k >= f->no &&
            (!same_dims(r, &f->slice) || r->type != instr->operands[f->ni + k - f->no]->shape.type))
            return false;
    }
    return true;
}

bool cpu_emit_scan_ok(const cxla_instr *instr) {
    scan_form f;
    return scan_form_of(instr, &f);
}

cxla_status cpu_emit_scan(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                          cpu_kernel_info *info) {
    scan_form f;
    if (!scan_form_of(instr, &f))
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED, "cpu backend: cannot emit %s (scan)",
                          instr->name);
    cxla_arena *arena = cxla_arena_create();
    if (!arena) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    int64_t n = instr->operand_count, nres = f.no + f.nc, positions = f.outer * f.inner;
    const char **args = cxla_arena_alloc_array(arena, (size_t)n + 1, sizeof(char *));
    const char **res = cxla_arena_alloc_array(arena, (size_t)nres + 1, sizeof(char *));
    if (!args || !res) {
        cxla_arena_destroy(arena);
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    }
    cpu_lib_head(instr, name, out);
    cpu_lib_open(name, positions > 0 ? positions : 1, out);
    for (int64_t k = 0; k < n; k++) {
        const char *ct = cpu_emit_ctype(instr->operands[k]->shape.type);
        cxla_strbuf_printf(out, "    const %s *restrict %s%" PRId64 " = in[%" PRId64 "];\n", ct,
                           k < f.ni ? "x" : "init", k < f.ni ? k : k - f.ni, k);
        if (k < f.ni) cxla_strbuf_printf(out, "    (void)x%" PRId64 ";\n", k);
    }
    for (int64_t k = 0; k < nres; k++)
        cxla_strbuf_printf(out, "    %s *restrict y%" PRId64 " = out[%" PRId64 "];\n",
                           cpu_emit_ctype(result_at(instr, k)->type), k, k);
    cxla_strbuf_printf(out,
                       "    for (int64_t p = begin; p < end && p < %" PRId64 "; p++) {\n"
                       "        const int64_t o = p / %" PRId64 ", q = p %% %" PRId64 ";\n"
                       "        (void)o;\n        (void)q;\n",
                       positions, f.inner, f.inner);
    /* The carries of this position, from the initial values. */
    for (int64_t k = 0; k < f.nc; k++)
        cxla_strbuf_printf(out, "        %s c%" PRId64 " = init%" PRId64 "[p];\n",
                           cpu_emit_ctype(instr->operands[f.ni + k]->shape.type), k, k);
    cxla_strbuf_printf(out,
                       "        for (int64_t t = 0; t < %" PRId64 "; t++) {\n"
                       "            const int64_t at = (o * %" PRId64 " + %s) * %" PRId64 " + q;\n"
                       "            (void)at;\n",
                       f.len, f.len, f.reverse ? F("(%" PRId64 " - t)", f.len - 1) : "t", f.inner);
    for (int64_t k = 0; k < n; k++)
        args[k] = k < f.ni ? F("x%" PRId64 "[at]", k) : F("c%" PRId64, k - f.ni);
    int64_t tmp = 0;
    cpu_emit_scalar(arena, out, 3, &tmp, f.body, args, res);
    /* Every value is read before any carry changes (a body may swap its carries). */
    for (int64_t k = 0; k < nres; k++)
        cxla_strbuf_printf(out, "            const %s r%" PRId64 " = %s;\n",
                           cpu_emit_ctype(result_at(instr, k)->type), k, res[k]);
    for (int64_t k = 0; k < f.no; k++)
        cxla_strbuf_printf(out, "            y%" PRId64 "[at] = r%" PRId64 ";\n", k, k);
    for (int64_t k = 0; k < f.nc; k++)
        cxla_strbuf_printf(out, "            c%" PRId64 " = r%" PRId64 ";\n", k, f.no + k);
    cxla_strbuf_puts(out, "        }\n");
    for (int64_t k = 0; k < f.nc; k++)
        cxla_strbuf_printf(out, "        y%" PRId64 "[p] = c%" PRId64 ";\n", f.no + k, k);
    cxla_strbuf_puts(out, "    }\n}\n\n");
    if (info) {
        info->range = positions > 0 ? positions : 1;
        info->cost = (double)positions * (double)(f.len > 0 ? f.len : 1) *
                     (double)(f.body->instr_count + n) * 4.0;
    }
    cxla_status s = NULL;
    if (out->failed || cpu_emit_fmt_failed())
        s = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory emitting %s", instr->name);
    cxla_arena_destroy(arena);
    return s;
}
