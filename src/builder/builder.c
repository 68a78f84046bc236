/* The builder's core: life cycle, sticky errors, emitting instructions through shape
 * inference, attribute helpers, building, and the built computation object. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder/builder_internal.h"
#include "shape/shape_internal.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory in the builder")

/* Origin ids of built computations: unique in the process. */
static _Atomic uint64_t next_origin = 1;

static uint64_t new_origin(void) {
    return atomic_fetch_add(&next_origin, 1);
}

/* Copies |name| keeping only characters HLO identifiers allow. */
static char *sanitize(const char *name, const char *fallback) {
    if (!name || !name[0]) name = fallback;
    size_t n = strlen(name);
    char *s = malloc(n + 1);
    if (!s) return NULL;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-' || c == '.';
        s[i] = ok ? c : '_';
    }
    s[n] = 0;
    return s;
}

cxla_status cxla_builder_create(const char *name, cxla_builder **out_builder) {
    if (!out_builder)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "cxla_builder_create: NULL out_builder");
    *out_builder = NULL;
    cxla_builder *b = calloc(1, sizeof(*b));
    if (!b) return OOM();
    b->name = sanitize(name, "builder");
    cxla_status s = b->name ? cxla_module_create(b->name, &b->module) : OOM();
    if (!s) s = cxla_module_add_computation(b->module, b->name, &b->comp);
    if (s) {
        cxla_builder_destroy(b);
        return s;
    }
    *out_builder = b;
    return NULL;
}

cxla_status cxla_builder_create_sub_builder(const cxla_builder *parent, const char *name,
                                            cxla_builder **out_builder) {
    if (!parent || !out_builder)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "cxla_builder_create_sub_builder: NULL argument");
    const char *sub = name && name[0] ? name : "sub";
    size_t n = strlen(parent->name) + strlen(sub) + 2;
    char *full = malloc(n);
    if (!full) return OOM();
    snprintf(full, n, "%s.%s", parent->name, sub);
    cxla_status s = cxla_builder_create(full, out_builder);
    free(full);
    return s;
}

void cxla_builder_destroy(cxla_builder *b) {
    if (!b) return;
    cxla_module_destroy(b->module);
    cxla_status_free(b->status);
    free(b->params);
    free(b->import_origins);
    free(b->import_comps);
    bld_annotations_free(b);
    free(b->name);
    free(b);
}

const char *cxla_builder_name(const cxla_builder *b) {
    return b ? b->name : "";
}

static cxla_status copy_status(cxla_status s) {
    if (!s) return NULL;
    return cxla_status_create(cxla_status_code_of(s), cxla_status_file(s), cxla_status_line(s),
                              "%s", cxla_status_message(s));
}

cxla_status cxla_builder_first_error(const cxla_builder *b) {
    if (!b) return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "cxla_builder_first_error: NULL");
    return copy_status(b->status);
}

bool cxla_op_is_valid(cxla_op op) {
    return op.builder && op.id >= 0 && op.builder->comp && op.id < op.builder->comp->instr_count;
}

cxla_status cxla_op_get_shape(cxla_op op, const cxla_shape **out_shape) {
    if (!out_shape) return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "cxla_op_get_shape: NULL");
    *out_shape = NULL;
    if (!cxla_op_is_valid(op))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "cxla_op_get_shape: the op is invalid (a failed call, or its builder "
                          "was built)");
    *out_shape = &op.builder->comp->instrs[op.id]->shape;
    return NULL;
}

/* ---- errors ------------------------------------------------------------------------ */

bool bld_ok(cxla_builder *b) {
    if (!b || b->status) return false;
    if (b->built) {
        b->status =
            cxla_error(CXLA_STATUS_FAILED_PRECONDITION,
                       "builder '%s' was already built; it accepts no more operations", b->name);
        return false;
    }
    return true;
}

cxla_op bld_invalid(cxla_builder *b) {
    return (cxla_op){b, -1};
}

void bld_fail(cxla_builder *b, const char *op, const char *format, ...) {
    if (!b || b->status) return;
    cxla_strbuf sb;
    cxla_strbuf_init(&sb);
    cxla_strbuf_printf(&sb, "%s (builder '%s'): ", op, b->name);
    va_list args;
    va_start(args, format);
    cxla_strbuf_vprintf(&sb, format, args);
    va_end(args);
    b->status =
        sb.failed || !sb.data ? OOM() : cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "%s", sb.data);
    cxla_strbuf_free(&sb);
}

void bld_fail_status(cxla_builder *b, const char *op, cxla_status status) {
    if (!status) return;
    if (!b || b->status) {
        cxla_status_free(status);
        return;
    }
    b->status = cxla_status_annotate(status, "%s (builder '%s')", op, b->name);
}

cxla_builder *bld_of(const cxla_op *ops, int64_t count) {
    for (int64_t i = 0; i < count; i++)
        if (ops[i].builder) return ops[i].builder;
    return NULL;
}

cxla_instr *bld_operand(cxla_builder *b, const char *op, cxla_op operand, int64_t index) {
    if (operand.builder != b) {
        if (!operand.builder)
            bld_fail(b, op, "operand %" PRId64 " is not an operation (a zero cxla_op)", index);
        else
            bld_fail(b, op, "operand %" PRId64 " was built by builder '%s', not '%s'", index,
                     operand.builder->name, b->name);
        return NULL;
    }
    if (operand.id < 0 || operand.id >= b->comp->instr_count) {
        bld_fail(b, op, "operand %" PRId64 " is invalid (the result of a failed call)", index);
        return NULL;
    }
    return b->comp->instrs[operand.id];
}

bool bld_operands(cxla_builder *b, const char *op, const cxla_op *ops, int64_t count,
                  cxla_instr ***out) {
    if (count < 0 || (count > 0 && !ops)) {
        bld_fail(b, op, "the operand list is NULL or has a negative count");
        return false;
    }
    cxla_instr **v =
        cxla_arena_alloc_array(b->module->arena, (size_t)(count ? count : 1), sizeof(cxla_instr *));
    if (!v) {
        bld_fail_status(b, op, OOM());
        return false;
    }
    for (int64_t i = 0; i < count; i++)
        if (!(v[i] = bld_operand(b, op, ops[i], i))) return false;
    *out = v;
    return true;
}

const char *bld_shape_str(cxla_builder *b, const cxla_shape *shape) {
    char *s = cxla_shape_to_string(shape, CXLA_SHAPE_PRINT_NO_LAYOUT);
    if (!s) return "?";
    char *t = cxla_arena_strndup(b->module->arena, s, strlen(s));
    free(s);
    return t ? t : "?";
}

bool bld_check_list(cxla_builder *b, const char *op, const char *what, const void *values,
                    int64_t count) {
    if (count < 0 || (count > 0 && !values)) {
        bld_fail(b, op, "%s: NULL list or negative count (%" PRId64 ")", what, count);
        return false;
    }
    return true;
}

/* ---- emitting -------------------------------------------------------------------------- */

cxla_op bld_emit(cxla_builder *b, const char *op, const bld_spec *spec) {
    if (!bld_ok(b)) return bld_invalid(b);
    cxla_instr tmp;
    memset(&tmp, 0, sizeof(tmp));
    tmp.opcode = spec->opcode;
    tmp.name = spec->name ? spec->name : cxla_opcode_name(spec->opcode);
    tmp.parent = b->comp;
    if (spec->shape) tmp.shape = *spec->shape;
    tmp.operand_count = spec->operand_count;
    tmp.operands = (cxla_instr **)spec->operands;
    tmp.attr_count = spec->attr_count;
    tmp.attrs = (cxla_attr *)spec->attrs;
    tmp.parameter_number = spec->opcode == CXLA_OP_PARAMETER ? spec->parameter_number : -1;
    tmp.literal = spec->literal;
    tmp.async_wrapped = CXLA_OP_COUNT;
    cxla_shape inferred;
    cxla_status s = cxla_infer_shape(&tmp, b->module->arena, &inferred);
    if (s) {
        bld_fail_status(b, op, s);
        return bld_invalid(b);
    }
    if (!bld_annotation_fits(b, op, &inferred)) return bld_invalid(b);
    char name[256];
    snprintf(name, sizeof(name), "%.200s.%" PRId64, tmp.name, ++b->counter);
    cxla_instr *in;
    s = cxla_computation_add_instr(b->comp, spec->opcode, name, &inferred, spec->operand_count,
                                   spec->operands, &in);
    for (int64_t i = 0; !s && i < spec->attr_count; i++)
        s = cxla_instr_set_attr(in, &spec->attrs[i]);
    if (!s) s = bld_annotate(b, in);
    if (s) {
        bld_fail_status(b, op, s);
        return bld_invalid(b);
    }
    in->parameter_number = tmp.parameter_number;
    in->literal = spec->literal;
    return (cxla_op){b, b->comp->instr_count - 1};
}

cxla_instr *bld_instr(cxla_builder *b, cxla_op op) {
    return b->comp->instrs[op.id];
}

cxla_op bld_emit_ops(cxla_builder *b, const char *op, cxla_opcode opcode, const cxla_shape *shape,
                     int64_t operand_count, cxla_instr *const *operands, int64_t attr_count,
                     const cxla_attr *attrs) {
    bld_spec spec = {.opcode = opcode,
                     .shape = shape,
                     .operand_count = operand_count,
                     .operands = operands,
                     .attr_count = attr_count,
                     .attrs = attrs};
    return bld_emit(b, op, &spec);
}

/* ---- attributes -------------------------------------------------------------------------- */

cxla_attr bld_attr(cxla_attr_id id) {
    cxla_attr a;
    memset(&a, 0, sizeof(a));
    a.id = id;
    a.name = cxla_attr_get_info(id)->name;
    a.kind = cxla_attr_get_info(id)->kind;
    return a;
}

cxla_attr bld_attr_int(cxla_attr_id id, int64_t value) {
    cxla_attr a = bld_attr(id);
    a.v.i = value;
    return a;
}

cxla_attr bld_attr_bool(cxla_attr_id id, bool value) {
    cxla_attr a = bld_attr(id);
    a.v.b = value;
    return a;
}

cxla_attr bld_attr_float(cxla_attr_id id, double value) {
    cxla_attr a = bld_attr(id);
    a.v.f = value;
    return a;
}

cxla_attr bld_attr_word(cxla_attr_id id, const char *word) {
    cxla_attr a = bld_attr(id);
    a.v.s = word;
    return a;
}

int64_t *bld_copy_ints(cxla_builder *b, const int64_t *values, int64_t count) {
    int64_t *v =
        cxla_arena_alloc_array(b->module->arena, (size_t)(count > 0 ? count : 1), sizeof(int64_t));
    if (v && count > 0 && values) memcpy(v, values, (size_t)count * sizeof(int64_t));
    return v;
}

bool bld_attr_ints(cxla_builder *b, cxla_attr_id id, const int64_t *values, int64_t count,
                   cxla_attr *out) {
    *out = bld_attr(id);
    out->v.ints.count = count;
    out->v.ints.values = bld_copy_ints(b, values, count);
    if (!out->v.ints.values) {
        bld_fail_status(b, "attribute", OOM());
        return false;
    }
    return true;
}

bool bld_attr_comps(cxla_builder *b, cxla_attr_id id, cxla_computation *const *comps, int64_t count,
                    cxla_attr *out) {
    *out = bld_attr(id);
    cxla_computation **items = cxla_arena_alloc_array(
        b->module->arena, (size_t)(count > 0 ? count : 1), sizeof(cxla_computation *));
    if (!items) {
        bld_fail_status(b, "attribute", OOM());
        return false;
    }
    for (int64_t i = 0; i < count; i++) items[i] = comps[i];
    out->v.comps.count = count;
    out->v.comps.items = items;
    return true;
}

bool bld_attr_string(cxla_builder *b, cxla_attr_id id, const char *s, cxla_attr *out) {
    *out = bld_attr(id);
    out->v.s = cxla_arena_strndup(b->module->arena, s, strlen(s));
    if (!out->v.s) {
        bld_fail_status(b, "attribute", OOM());
        return false;
    }
    return true;
}

bool bld_attr_replica_groups(cxla_builder *b, const cxla_replica_group *groups, int64_t count,
                             cxla_attr *out) {
    *out = bld_attr(CXLA_ATTR_REPLICA_GROUPS);
    cxla_replica_groups *g = &out->v.groups;
    cxla_arena *ar = b->module->arena;
    size_t n = (size_t)(count > 0 ? count : 1);
    g->group_count = count;
    g->group_sizes = cxla_arena_alloc_array(ar, n, sizeof(int64_t));
    g->groups = cxla_arena_alloc_array(ar, n, sizeof(int64_t *));
    if (!g->group_sizes || !g->groups) {
        bld_fail_status(b, "attribute", OOM());
        return false;
    }
    for (int64_t i = 0; i < count; i++) {
        if (groups[i].count < 0 || (groups[i].count > 0 && !groups[i].ids)) {
            bld_fail(b, "replica_groups", "group %" PRId64 " is NULL or has a negative count", i);
            return false;
        }
        g->group_sizes[i] = groups[i].count;
        g->groups[i] = bld_copy_ints(b, groups[i].ids, groups[i].count);
        if (!g->groups[i]) {
            bld_fail_status(b, "attribute", OOM());
            return false;
        }
    }
    return true;
}

cxla_shape bld_array_shape(cxla_builder *b, cxla_type type, int64_t rank, const int64_t *dims) {
    cxla_shape s;
    memset(&s, 0, sizeof(s));
    s.type = type;
    s.rank = rank;
    s.dims = bld_copy_ints(b, dims, rank);
    return s;
}

/* ---- building ------------------------------------------------------------------------- */

static cxla_status finish(cxla_builder *b, cxla_instr *root, cxla_xla_computation **out) {
    cxla_computation *c = b->comp;
    cxla_module *m = b->module;
    int64_t n = 0;
    for (int64_t i = 0; i < b->param_capacity; i++)
        if (b->params[i]) n = i + 1;
    for (int64_t i = 0; i < n; i++)
        if (!b->params[i])
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                              "Build (builder '%s'): parameter %" PRId64
                              " is missing; parameters must be numbered 0..%" PRId64
                              " without gaps",
                              b->name, i, n - 1);
    c->params = cxla_arena_alloc_array(m->arena, (size_t)(n ? n : 1), sizeof(cxla_instr *));
    if (!c->params) return OOM();
    for (int64_t i = 0; i < n; i++) c->params[i] = b->params[i];
    c->param_count = n;
    c->root = root;
    cxla_status ls = bld_default_layouts(m);
    if (ls) return ls;
    /* Callees first, the entry last. */
    int64_t at = 0;
    while (m->comps[at] != c) at++;
    memmove(&m->comps[at], &m->comps[at + 1], (size_t)(m->comp_count - at - 1) * sizeof(*m->comps));
    m->comps[m->comp_count - 1] = c;
    m->entry = c;
    c->is_entry = true;
    cxla_status s = cxla_verify_module(m);
    if (s)
        return cxla_status_annotate(s,
                                    "Build (builder '%s'): internal error, the built module "
                                    "does not verify",
                                    b->name);
    cxla_xla_computation *x = calloc(1, sizeof(*x));
    uint64_t *origins = malloc((size_t)m->comp_count * sizeof(uint64_t));
    if (!x || !origins) {
        free(x);
        free(origins);
        return OOM();
    }
    for (int64_t i = 0; i < m->comp_count; i++) {
        origins[i] = 0;
        for (int64_t k = 0; k < b->import_count; k++)
            if (b->import_comps[k] == m->comps[i]) origins[i] = b->import_origins[k];
        if (!origins[i]) origins[i] = new_origin();
    }
    x->module = m;
    x->origins = origins;
    b->module = NULL;
    b->comp = NULL;
    b->built = true;
    *out = x;
    return NULL;
}

static cxla_status build(cxla_builder *b, const cxla_op *root, cxla_xla_computation **out) {
    if (!b || !out) return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "Build: NULL argument");
    *out = NULL;
    if (b->status) return copy_status(b->status);
    if (b->built)
        return cxla_error(CXLA_STATUS_FAILED_PRECONDITION, "Build (builder '%s'): already built",
                          b->name);
    cxla_instr *r = NULL;
    if (root) {
        r = bld_operand(b, "Build", *root, 0);
        if (!r) return copy_status(b->status);
    } else {
        if (b->comp->instr_count == 0)
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                              "Build (builder '%s'): the computation has no operations", b->name);
        r = b->comp->instrs[b->comp->instr_count - 1];
    }
    return finish(b, r, out);
}

cxla_status cxla_builder_build(cxla_builder *builder, cxla_xla_computation **out_computation) {
    return build(builder, NULL, out_computation);
}

cxla_status cxla_builder_build_with_root(cxla_builder *builder, cxla_op root,
                                         cxla_xla_computation **out_computation) {
    return build(builder, &root, out_computation);
}

/* ---- built computations --------------------------------------------------------------- */

void cxla_xla_computation_destroy(cxla_xla_computation *c) {
    cxla_xla_computation_free(c);
}

void cxla_xla_computation_free(cxla_xla_computation *c) {
    if (!c) return;
    cxla_module_destroy(c->module);
    free(c->origins);
    free(c);
}

const cxla_module *cxla_xla_computation_module(const cxla_xla_computation *c) {
    return c ? c->module : NULL;
}

const char *cxla_xla_computation_name(const cxla_xla_computation *c) {
    return c ? c->module->entry->name : "";
}

int64_t cxla_xla_computation_parameter_count(const cxla_xla_computation *c) {
    return c ? c->module->entry->param_count : 0;
}

const cxla_shape *cxla_xla_computation_parameter_shape(const cxla_xla_computation *c,
                                                       int64_t number) {
    if (!c || number < 0 || number >= c->module->entry->param_count) return NULL;
    return &c->module->entry->params[number]->shape;
}

const cxla_shape *cxla_xla_computation_result_shape(const cxla_xla_computation *c) {
    return c ? &c->module->entry->root->shape : NULL;
}

cxla_status cxla_xla_computation_to_hlo_text(const cxla_xla_computation *c, char **out_text) {
    if (!c || !out_text)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "cxla_xla_computation_to_hlo_text: NULL argument");
    *out_text = cxla_hlo_print(c->module, CXLA_HLO_STYLE_SHORT);
    return *out_text ? NULL : OOM();
}
