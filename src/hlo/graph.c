/* Drawing a module as a Graphviz graph (DOT text), for `cxla graph`.
 *
 * One node per instruction (name, opcode with its key attribute, short result shape),
 * one edge per operand (labeled with the operand's index when there are several), dotted
 * edges for control predecessors. Called computations (fusions, while bodies and
 * conditions, branches, call targets, reducers ...) are clusters, with a dashed edge from
 * the calling instruction into the cluster; a computation called from one computation only
 * is nested in that computation's cluster, one called from several is drawn at the top.
 * Each computation is drawn once however often it is called. A reducer that is one scalar
 * operation on its parameters (add, max, compare ...) is summarized in the caller's label
 * instead ("to_apply=add.1 (add)"), as XLA's graph dumps do.
 *
 * Every node is declared inside its cluster before any edge is written: an edge that named
 * a node not yet declared would pull the node into whichever subgraph holds the edge.
 * Labels are plain quoted strings: quotes and backslashes are escaped, line breaks become
 * \n, other control and non-ASCII bytes become '?', so the text is valid DOT whatever the
 * names hold. Node shapes are never "record", so braces in shapes and values are inert. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/hlo.h"
#include "literal/literal_internal.h"
#include "shape/shape_internal.h"

enum {
    DEFAULT_MAX_CONSTANT_ELEMENTS = 8,
    MAX_LINE = 60,        /* characters of one label line before it is cut with "..." */
    MAX_NAMES_LISTED = 20 /* computations named in a not-found error */
};

/* Where a computation is drawn. */
enum { PLACE_UNSEEN = -3, PLACE_ROOT = -2, PLACE_TOP = -1 }; /* >= 0: nested in that index */

typedef struct graph_comp {
    int64_t place;
    const char *caller;  /* the opcode of its first caller: "while" ... */
    const char *role;    /* the attribute that first called it: "body", "calls" ... */
    int64_t first_child; /* computations nested in this one, in discovery order */
    int64_t last_child;
    int64_t next_sibling;
} graph_comp;

typedef struct graph {
    const cxla_module *module;
    const cxla_hlo_graph_options *options;
    cxla_arena *arena;
    cxla_strmap index_by_name; /* computation name -> index + 1 */
    graph_comp *comps;
    cxla_strbuf *out;
    cxla_strbuf scratch; /* one label at a time */
    int64_t nodes;
} graph;

/* ---- text ------------------------------------------------------------------------------ */

/* Appends |s| (|len| bytes) to |b| inside a DOT quoted string. */
static void put_escaped(cxla_strbuf *b, const char *s, size_t len) {
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            cxla_strbuf_putc(b, '\\');
            cxla_strbuf_putc(b, (char)c);
        } else if (c == '\n') {
            cxla_strbuf_puts(b, "\\n");
        } else if (c < 0x20 || c >= 0x7f) {
            cxla_strbuf_putc(b, '?');
        } else {
            cxla_strbuf_putc(b, (char)c);
        }
    }
}

/* Empties |b| (a failed buffer stays failed). */
static void reset(cxla_strbuf *b) {
    b->len = 0;
    if (b->data) b->data[0] = '\0';
}

static void put_quoted(cxla_strbuf *b, const char *s) {
    cxla_strbuf_putc(b, '"');
    put_escaped(b, s, strlen(s));
    cxla_strbuf_putc(b, '"');
}

/* Appends the bytes of |b| from |start| on, cut to MAX_LINE characters. */
static void cut_line(cxla_strbuf *b, size_t start) {
    if (b->failed || b->len - start <= MAX_LINE) return;
    b->len = start + MAX_LINE - 3;
    b->data[b->len] = '\0';
    cxla_strbuf_puts(b, "...");
}

static void put_shape(cxla_strbuf *b, const cxla_shape *shape) {
    size_t start = b->len;
    cxla_shape_print(b, shape, CXLA_SHAPE_PRINT_NO_LAYOUT);
    cut_line(b, start);
}

static void put_ints(cxla_strbuf *b, const cxla_instr *in, cxla_attr_id id) {
    if (!cxla_instr_attr(in, id)) return;
    int64_t n = 0;
    const int64_t *v = cxla_instr_ints(in, id, &n);
    size_t start = b->len;
    cxla_strbuf_printf(b, "\n%s={", cxla_attr_get_info(id)->name);
    for (int64_t i = 0; i < n; i++) cxla_strbuf_printf(b, i ? ",%" PRId64 : "%" PRId64, v[i]);
    cxla_strbuf_putc(b, '}');
    cut_line(b, start + 1);
}

/* ---- called computations --------------------------------------------------------------- */

static int64_t comp_index(const graph *g, const cxla_computation *c) {
    void *v = cxla_strmap_get(&g->index_by_name, c->name, strlen(c->name));
    return v ? (int64_t)(intptr_t)v - 1 : -1;
}

/* The one operation of a reducer that applies a single scalar operation to its scalar
 * parameters, or NULL when |c| is anything bigger. */
static const cxla_instr *scalar_reducer_op(const cxla_computation *c) {
    const cxla_instr *root = c->root;
    if (!root || c->param_count < 1 || c->instr_count != c->param_count + 1 ||
        root->opcode == CXLA_OP_PARAMETER || !cxla_type_is_array(root->shape.type) ||
        root->shape.rank != 0)
        return NULL;
    for (int64_t i = 0; i < c->param_count; i++) {
        const cxla_instr *p = c->params[i];
        if (!p || !cxla_type_is_array(p->shape.type) || p->shape.rank != 0) return NULL;
    }
    for (int64_t i = 0; i < root->operand_count; i++)
        if (!root->operands[i] || root->operands[i]->opcode != CXLA_OP_PARAMETER) return NULL;
    return root;
}

/* Whether the call of |c| by |in| through attribute |a| is summarized in |in|'s label. */
static bool summarized(const cxla_instr *in, const cxla_attr *a, const cxla_computation *c) {
    if (a->id != CXLA_ATTR_TO_APPLY && a->id != CXLA_ATTR_SELECT && a->id != CXLA_ATTR_SCATTER)
        return false;
    if (in->opcode == CXLA_OP_CALL || in->opcode == CXLA_OP_CUSTOM_CALL) return false;
    return scalar_reducer_op(c) != NULL;
}

static void add_child(graph *g, int64_t parent, int64_t child) {
    graph_comp *p = &g->comps[parent];
    g->comps[child].next_sibling = -1;
    if (p->last_child < 0)
        p->first_child = child;
    else
        g->comps[p->last_child].next_sibling = child;
    p->last_child = child;
}

/* Finds every computation drawn from |root| and where each goes: nested in its only
 * calling computation, or at the top when several computations call it. */
static cxla_status place_computations(graph *g, int64_t root) {
    int64_t n = g->module->comp_count;
    int64_t *stack = cxla_arena_alloc_array(g->arena, (size_t)(n ? n : 1), sizeof(int64_t));
    int64_t *order = cxla_arena_alloc_array(g->arena, (size_t)(n ? n : 1), sizeof(int64_t));
    if (!stack || !order) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    int64_t depth = 0, found = 0;
    g->comps[root].place = PLACE_ROOT;
    stack[depth++] = root;
    order[found++] = root;
    /* Depth-first; every computation is pushed once (when first seen). */
    while (depth > 0) {
        int64_t ci = stack[--depth];
        const cxla_computation *comp = g->module->comps[ci];
        for (int64_t i = 0; i < comp->instr_count; i++) {
            const cxla_instr *in = comp->instrs[i];
            for (int64_t k = 0; k < in->attr_count; k++) {
                const cxla_attr *a = &in->attrs[k];
                if (a->kind != CXLA_ATTR_KIND_COMPUTATION && a->kind != CXLA_ATTR_KIND_COMPUTATIONS)
                    continue;
                for (int64_t j = 0; j < a->v.comps.count; j++) {
                    const cxla_computation *callee = a->v.comps.items[j];
                    int64_t x = callee ? comp_index(g, callee) : -1;
                    if (x < 0 || x == root || summarized(in, a, callee)) continue;
                    graph_comp *gc = &g->comps[x];
                    if (gc->place == PLACE_UNSEEN) {
                        gc->place = ci;
                        gc->caller = cxla_opcode_name(in->opcode);
                        gc->role = a->name;
                        stack[depth++] = x;
                        order[found++] = x;
                    } else if (gc->place != ci) {
                        gc->place = PLACE_TOP;
                    }
                }
            }
        }
    }
    for (int64_t i = 1; i < found; i++) {
        int64_t place = g->comps[order[i]].place;
        add_child(g, place == PLACE_TOP ? root : place, order[i]);
    }
    return NULL;
}

/* ---- nodes ------------------------------------------------------------------------------ */

/* The detail that follows the opcode on its label line. */
static void put_opcode_line(cxla_strbuf *b, const cxla_instr *in) {
    size_t start = b->len;
    cxla_strbuf_puts(b, cxla_opcode_name(in->opcode));
    int64_t v;
    const char *w;
    if (in->opcode == CXLA_OP_PARAMETER) {
        cxla_strbuf_printf(b, " %" PRId64, in->parameter_number);
    } else if (in->opcode == CXLA_OP_GET_TUPLE_ELEMENT && cxla_instr_int(in, CXLA_ATTR_INDEX, &v)) {
        cxla_strbuf_printf(b, " %" PRId64, v);
    } else if ((w = cxla_instr_word(in, CXLA_ATTR_DIRECTION)) != NULL) {
        cxla_strbuf_printf(b, " %s", w);
    } else if (in->opcode == CXLA_OP_FUSION && (w = cxla_instr_word(in, CXLA_ATTR_KIND)) != NULL) {
        cxla_strbuf_printf(b, " %s", w);
    } else if (in->opcode == CXLA_OP_CUSTOM_CALL) {
        const cxla_attr *a = cxla_instr_attr(in, CXLA_ATTR_CUSTOM_CALL_TARGET);
        if (a && a->kind == CXLA_ATTR_KIND_STRING) cxla_strbuf_printf(b, " \"%s\"", a->v.s);
    }
    cut_line(b, start);
}

static void put_constant_value(graph *g, cxla_strbuf *b, const cxla_instr *in) {
    int64_t max = g->options->max_constant_elements;
    if (max == 0) max = DEFAULT_MAX_CONSTANT_ELEMENTS;
    if (!in->literal) {
        if (in->literal_elided) cxla_strbuf_puts(b, "\n{...}");
        return;
    }
    if (!cxla_type_is_array(cxla_literal_type(in->literal)) ||
        cxla_literal_element_count(in->literal) > max)
        return;
    cxla_strbuf_putc(b, '\n');
    size_t start = b->len;
    cxla_literal_print(b, in->literal, CXLA_LITERAL_PRINT_DEFAULT);
    cut_line(b, start);
}

static void put_summaries(cxla_strbuf *b, const cxla_instr *in) {
    for (int64_t k = 0; k < in->attr_count; k++) {
        const cxla_attr *a = &in->attrs[k];
        if (a->kind != CXLA_ATTR_KIND_COMPUTATION) continue;
        const cxla_computation *c = a->v.comps.count ? a->v.comps.items[0] : NULL;
        if (!c || !summarized(in, a, c)) continue;
        const cxla_instr *op = scalar_reducer_op(c);
        size_t start = b->len + 1;
        cxla_strbuf_printf(b, "\n%s=%s", a->name, c->name);
        const char *opname = cxla_opcode_name(op->opcode);
        const char *dir = cxla_instr_word(op, CXLA_ATTR_DIRECTION);
        if (dir)
            cxla_strbuf_printf(b, " (%s %s)", opname, dir);
        else if (strcmp(c->name, opname) != 0)
            cxla_strbuf_printf(b, " (%s)", opname);
        cut_line(b, start);
    }
}

static const char *fill_color(const cxla_instr *in) {
    unsigned flags = cxla_opcode_get_info(in->opcode)->flags;
    switch (in->opcode) {
    case CXLA_OP_PARAMETER: return "#fff2cc";
    case CXLA_OP_CONSTANT:
    case CXLA_OP_IOTA: return "#eeeeee";
    case CXLA_OP_FUSION:
    case CXLA_OP_CALL:
    case CXLA_OP_WHILE:
    case CXLA_OP_CONDITIONAL:
    case CXLA_OP_CUSTOM_CALL: return "#dae8fc";
    case CXLA_OP_TUPLE:
    case CXLA_OP_GET_TUPLE_ELEMENT: return "#f5f5f5";
    case CXLA_OP_DOT:
    case CXLA_OP_CONVOLUTION: return "#d5e8d4";
    default: break;
    }
    if (flags & (CXLA_OPF_COLLECTIVE | CXLA_OPF_SIDE_EFFECT)) return "#f8cecc";
    if (flags & (CXLA_OPF_ASYNC_START | CXLA_OPF_ASYNC_DONE)) return "#dae8fc";
    return "#ffffff";
}

static void write_node(graph *g, const cxla_instr *in, const char *indent) {
    cxla_strbuf *b = &g->scratch;
    reset(b);
    bool is_root = in->parent && in->parent->root == in;
    size_t start = b->len;
    cxla_strbuf_printf(b, "%s%s", is_root ? "ROOT " : "", in->name);
    cut_line(b, start);
    cxla_strbuf_putc(b, '\n');
    put_opcode_line(b, in);
    if (in->opcode == CXLA_OP_CONSTANT) put_constant_value(g, b, in);
    put_summaries(b, in);
    if (in->opcode != CXLA_OP_CONSTANT && in->opcode != CXLA_OP_PARAMETER)
        put_ints(b, in, CXLA_ATTR_DIMENSIONS);
    cxla_strbuf_putc(b, '\n');
    put_shape(b, &in->shape);
    if (b->failed) {
        g->out->failed = true;
        return;
    }

    cxla_strbuf *o = g->out;
    cxla_strbuf_printf(o, "%sn%" PRId64 " [label=", indent, in->id);
    put_quoted(o, b->data);
    if (in->opcode == CXLA_OP_PARAMETER)
        cxla_strbuf_puts(o, ", shape=ellipse");
    else if (in->opcode == CXLA_OP_CONSTANT)
        cxla_strbuf_puts(o, ", style=filled, fontsize=9");
    cxla_strbuf_printf(o, ", fillcolor=\"%s\"", fill_color(in));
    if (is_root) cxla_strbuf_puts(o, ", penwidth=2.5, color=\"#b85450\"");
    cxla_strbuf_puts(o, "];\n");
    g->nodes++;
}

static const char *cluster_color(const char *role) {
    if (strcmp(role, "calls") == 0) return "#eef4fc";
    if (strcmp(role, "body") == 0 || strcmp(role, "condition") == 0) return "#fdf6e7";
    if (strstr(role, "computation")) return "#f1f8ee"; /* branches, true/false, called */
    return "#f6f6f6";
}

static void write_computation(graph *g, int64_t ci, int depth);

/* Computation |c| as a cluster in the subgraph of nesting |depth|. */
static void write_cluster(graph *g, int64_t c, int depth, const char *indent) {
    cxla_strbuf *o = g->out, *b = &g->scratch;
    cxla_strbuf_printf(o, "%ssubgraph cluster_%" PRId64 " {\n%s  label=", indent, c, indent);
    reset(b);
    cxla_strbuf_printf(b, "%s %s: %s", g->comps[c].caller, g->comps[c].role,
                       g->module->comps[c]->name);
    put_quoted(o, b->failed ? "" : b->data);
    cxla_strbuf_printf(o, ";\n%s  style=\"rounded,filled\";\n%s  fillcolor=\"%s\";\n", indent,
                       indent, cluster_color(g->comps[c].role));
    write_computation(g, c, depth + 1);
    cxla_strbuf_printf(o, "%s}\n", indent);
}

/* The nodes of computation |ci|, then the clusters nested in it. */
static void write_computation(graph *g, int64_t ci, int depth) {
    char indent[64];
    int width = 2 * (depth + 1) < (int)sizeof(indent) - 1 ? 2 * (depth + 1) : 62;
    memset(indent, ' ', (size_t)width);
    indent[width] = '\0';
    const cxla_computation *comp = g->module->comps[ci];
    for (int64_t i = 0; i < comp->instr_count && !g->out->failed; i++)
        write_node(g, comp->instrs[i], indent);
    for (int64_t c = g->comps[ci].first_child; c >= 0 && !g->out->failed;
         c = g->comps[c].next_sibling)
        write_cluster(g, c, depth, indent);
}

/* ---- edges ------------------------------------------------------------------------------ */

/* A node inside |c|'s cluster for a call edge to point at (with lhead), or NULL. */
static const cxla_instr *entry_node(const cxla_computation *c) {
    if (c->param_count > 0 && c->params[0]) return c->params[0];
    if (c->instr_count > 0) return c->instrs[0];
    return NULL;
}

static void write_edges(graph *g, int64_t ci) {
    cxla_strbuf *o = g->out;
    const cxla_computation *comp = g->module->comps[ci];
    for (int64_t i = 0; i < comp->instr_count; i++) {
        const cxla_instr *in = comp->instrs[i];
        for (int64_t k = 0; k < in->operand_count; k++) {
            if (!in->operands[k]) continue;
            cxla_strbuf_printf(o, "  n%" PRId64 " -> n%" PRId64, in->operands[k]->id, in->id);
            if (in->operand_count > 1) cxla_strbuf_printf(o, " [label=\"%" PRId64 "\"]", k);
            cxla_strbuf_puts(o, ";\n");
        }
        for (int64_t k = 0; k < in->attr_count; k++) {
            const cxla_attr *a = &in->attrs[k];
            if (a->id == CXLA_ATTR_CONTROL_PREDECESSORS && a->kind == CXLA_ATTR_KIND_INSTRUCTIONS) {
                for (int64_t j = 0; j < a->v.instrs.count; j++)
                    if (a->v.instrs.items[j])
                        cxla_strbuf_printf(o,
                                           "  n%" PRId64 " -> n%" PRId64
                                           " [style=dotted, color=\"#888888\"];\n",
                                           a->v.instrs.items[j]->id, in->id);
                continue;
            }
            if (a->kind != CXLA_ATTR_KIND_COMPUTATION && a->kind != CXLA_ATTR_KIND_COMPUTATIONS)
                continue;
            for (int64_t j = 0; j < a->v.comps.count; j++) {
                const cxla_computation *callee = a->v.comps.items[j];
                int64_t x = callee ? comp_index(g, callee) : -1;
                if (x < 0 || g->comps[x].place < PLACE_TOP || summarized(in, a, callee)) continue;
                const cxla_instr *target = entry_node(callee);
                if (!target) continue;
                cxla_strbuf_printf(o, "  n%" PRId64 " -> n%" PRId64 " [lhead=cluster_%" PRId64,
                                   in->id, target->id, x);
                if (a->kind == CXLA_ATTR_KIND_COMPUTATIONS && a->v.comps.count > 1)
                    cxla_strbuf_printf(o, ", label=\"%s %" PRId64 "\"", a->name, j);
                else
                    cxla_strbuf_printf(o, ", label=\"%s\"", a->name);
                cxla_strbuf_puts(o, ", style=dashed, color=\"#6c8ebf\", fontcolor=\"#6c8ebf\"];\n");
            }
        }
    }
}

/* ---- the graph ---------------------------------------------------------------------------- */

static cxla_status not_found(const cxla_module *m, const char *name) {
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    for (int64_t i = 0; i < m->comp_count && i < MAX_NAMES_LISTED; i++)
        cxla_strbuf_printf(&b, "%s%s", i ? ", " : "", m->comps[i]->name);
    if (m->comp_count > MAX_NAMES_LISTED)
        cxla_strbuf_printf(&b, ", ... (%" PRId64 " in all)", m->comp_count);
    cxla_status s =
        cxla_error(CXLA_STATUS_NOT_FOUND, "module '%s' has no computation named '%s' (it has: %s)",
                   m->name, name, b.data ? b.data : "");
    cxla_strbuf_free(&b);
    return s;
}

static cxla_status draw(graph *g, int64_t root) {
    const cxla_module *m = g->module;
    for (int64_t i = 0; i < m->comp_count; i++) {
        g->comps[i] = (graph_comp){.place = PLACE_UNSEEN,
                                   .caller = "",
                                   .role = "",
                                   .first_child = -1,
                                   .last_child = -1,
                                   .next_sibling = -1};
        if (!cxla_strmap_put(&g->index_by_name, m->comps[i]->name, strlen(m->comps[i]->name),
                             (void *)(intptr_t)(i + 1)))
            return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    }
    CXLA_RETURN_IF_ERROR(place_computations(g, root));

    cxla_strbuf *o = g->out;
    const cxla_computation *rc = m->comps[root];
    cxla_strbuf_puts(o, "digraph ");
    put_quoted(o, m->name ? m->name : "module");
    cxla_strbuf_puts(o,
                     " {\n  graph [compound=true, rankdir=TB, labelloc=t, fontname=\"Helvetica\", "
                     "label=");
    reset(&g->scratch);
    cxla_strbuf_printf(&g->scratch, "%s: %s%s", m->name ? m->name : "module",
                       rc->is_entry ? "ENTRY " : "", rc->name);
    put_quoted(o, g->scratch.failed ? "" : g->scratch.data);
    cxla_strbuf_puts(o, "];\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", "
                        "fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=8];\n");
    /* Computations called from several others hang from the root, outside any cluster. */
    write_computation(g, root, 0);
    for (int64_t i = 0; i < m->comp_count; i++)
        if (g->comps[i].place != PLACE_UNSEEN) write_edges(g, i);
    cxla_strbuf_puts(o, "}\n");
    if (o->failed || g->scratch.failed)
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory drawing module '%s'",
                          m->name ? m->name : "");
    return NULL;
}

cxla_status cxla_hlo_graph(const cxla_module *module, const cxla_hlo_graph_options *options,
                           cxla_strbuf *out, int64_t *out_node_count) {
    cxla_hlo_graph_options defaults = {0};
    if (!options) options = &defaults;
    if (options->max_constant_elements < 0)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "max_constant_elements must not be negative, got %" PRId64,
                          options->max_constant_elements);
    const cxla_computation *rc = module->entry;
    if (options->computation) {
        rc = cxla_module_find_computation(module, options->computation);
        if (!rc) return not_found(module, options->computation);
    } else if (!rc) {
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "module '%s' has no entry computation to draw (name one)",
                          module->name ? module->name : "");
    }
    graph g = {.module = module, .options = options, .out = out};
    g.arena = cxla_arena_create();
    if (!g.arena) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    cxla_strmap_init(&g.index_by_name, g.arena);
    cxla_strbuf_init(&g.scratch);
    cxla_status s = NULL;
    int64_t n = module->comp_count;
    g.comps = cxla_arena_alloc_array(g.arena, (size_t)(n ? n : 1), sizeof(graph_comp));
    if (!g.comps) s = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    int64_t root = -1;
    for (int64_t i = 0; !s && i < n; i++)
        if (module->comps[i] == rc) root = i;
    if (!s && root < 0)
        s = cxla_error(CXLA_STATUS_INTERNAL, "computation '%s' is not in module '%s'", rc->name,
                       module->name ? module->name : "");
    if (!s) s = draw(&g, root);
    if (!s && out_node_count) *out_node_count = g.nodes;
    cxla_strbuf_free(&g.scratch);
    cxla_arena_destroy(g.arena);
    return s;
}
