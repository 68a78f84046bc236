/* Where the optimized module's instructions came from (cpu_internal.h, cpu_origins): the
 * passes copy instructions under new names (fusion puts "m.14" in a fused computation for
 * the user's m, inlining copies a callee's instructions into the caller), so a message
 * that names the copy names something the user never wrote. The copy keeps the line and
 * column of the text it came from; the user's instruction at that position (of the same
 * opcode, or an async-start in sugar form wrapping that opcode) is its origin. Modules built in
 * memory have no positions: their copies keep their own names, and a fusion is described by the
 * instructions it holds. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_internal.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

struct cpu_origins {
    int64_t count;    /* instruction ids of the optimized module */
    int64_t *name_at; /* by id: the user's name in |text|, -1 when it has no origin */
    int64_t *comp_at; /* by id: the user's computation's name in |text| */
    char *text;       /* the names, each NUL-terminated */
};

static int by_position(const void *a, const void *b) {
    const cxla_instr *x = *(const cxla_instr *const *)a, *y = *(const cxla_instr *const *)b;
    if (x->line != y->line) return x->line < y->line ? -1 : 1;
    return x->column < y->column ? -1 : x->column > y->column;
}

/* The user's instruction written at |in|'s line and column, among the |n| of |sorted|. */
static const cxla_instr *at_position(const cxla_instr *const *sorted, int64_t n,
                                     const cxla_instr *in) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        int c = by_position(&sorted[mid], &in);
        if (c == 0) return sorted[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

cxla_status cpu_origins_build(const cxla_module *user, const cxla_module *m, cpu_origins **out) {
    *out = NULL;
    int64_t n = 0;
    for (int64_t c = 0; c < user->comp_count; c++)
        for (int64_t i = 0; i < user->comps[c]->instr_count; i++)
            n += user->comps[c]->instrs[i]->line > 0;
    if (n == 0) return NULL; /* built in memory: nothing to map */
    const cxla_instr **sorted = malloc((size_t)n * sizeof(*sorted));
    cpu_origins *o = calloc(1, sizeof(*o));
    int64_t count = m->next_id;
    if (o) {
        o->count = count;
        o->name_at = malloc((size_t)(count ? count : 1) * sizeof(int64_t));
        o->comp_at = malloc((size_t)(count ? count : 1) * sizeof(int64_t));
    }
    if (!sorted || !o || !o->name_at || !o->comp_at) {
        free(sorted);
        cpu_origins_free(o);
        return OOM();
    }
    int64_t k = 0;
    for (int64_t c = 0; c < user->comp_count; c++)
        for (int64_t i = 0; i < user->comps[c]->instr_count; i++)
            if (user->comps[c]->instrs[i]->line > 0) sorted[k++] = user->comps[c]->instrs[i];
    qsort(sorted, (size_t)n, sizeof(*sorted), by_position);
    for (int64_t i = 0; i < count; i++) o->name_at[i] = o->comp_at[i] = -1;
    cxla_strbuf text;
    cxla_strbuf_init(&text);
    for (int64_t c = 0; c < m->comp_count; c++) {
        const cxla_computation *comp = m->comps[c];
        for (int64_t i = 0; i < comp->instr_count; i++) {
            const cxla_instr *in = comp->instrs[i];
            if (in->line <= 0 || in->id < 0 || in->id >= count) continue;
            const cxla_instr *u = at_position(sorted, n, in);
            /* The async-desugar pass's wrapped operation keeps its sugar start's position. */
            bool wrapped = u && u->opcode == CXLA_OP_ASYNC_START && u->async_wrapped == in->opcode;
            if (!u || (u->opcode != in->opcode && !wrapped) || !u->parent) continue;
            o->name_at[in->id] = (int64_t)text.len;
            cxla_strbuf_puts(&text, u->name);
            cxla_strbuf_putc(&text, '\0');
            o->comp_at[in->id] = (int64_t)text.len;
            cxla_strbuf_puts(&text, u->parent->name);
            cxla_strbuf_putc(&text, '\0');
        }
    }
    free(sorted);
    bool failed = text.failed;
    o->text = cxla_strbuf_take(&text);
    if (failed || !o->text) {
        cpu_origins_free(o);
        return OOM();
    }
    *out = o;
    return NULL;
}

void cpu_origins_free(cpu_origins *o) {
    if (!o) return;
    free(o->name_at);
    free(o->comp_at);
    free(o->text);
    free(o);
}

/* The user's name and computation of |in|, where it has an origin. */
static bool origin_of(const cpu_origins *o, const cxla_instr *in, const char **name,
                      const char **comp) {
    if (!o || in->id < 0 || in->id >= o->count || o->name_at[in->id] < 0) return false;
    *name = o->text + o->name_at[in->id];
    *comp = o->text + o->comp_at[in->id];
    return true;
}

const char *cpu_origins_name(const cpu_origins *o, const cxla_instr *in) {
    const char *name = in->name, *comp = NULL;
    origin_of(o, in, &name, &comp);
    return name;
}

/* The op_name of |in|'s metadata (metadata={op_name="..." ...}), into |buf|; false when it
 * has none. */
static bool op_name(const cxla_instr *in, char *buf, size_t size) {
    const cxla_attr *a = cxla_instr_attr(in, CXLA_ATTR_METADATA);
    const char *text = a && a->kind == CXLA_ATTR_KIND_RAW ? a->v.s : NULL;
    const char *at = text ? strstr(text, "op_name=\"") : NULL;
    if (!at) return false;
    at += strlen("op_name=\"");
    size_t len = 0;
    while (at[len] && !(at[len] == '"' && (len == 0 || at[len - 1] != '\\'))) len++;
    snprintf(buf, size, "%.*s", (int)len, at);
    return len > 0;
}

/* Appends ", op_name \"...\"" for |in| when its metadata has one. */
static void put_op_name(cxla_strbuf *b, const cxla_instr *in) {
    char name[256];
    if (op_name(in, name, sizeof(name))) cxla_strbuf_printf(b, ", op_name \"%s\"", name);
}

enum { LISTED = 8 }; /* the fused instructions a description lists by name */

/* "NAME (OPCODE, computation C, line L" of |in| (inside |fusion| when not NULL), without
 * the closing parenthesis. */
static void put_instr(cxla_strbuf *b, const cpu_origins *o, const cxla_instr *in,
                      const cxla_instr *fusion) {
    const char *name = in->name;
    const char *comp = in->parent ? in->parent->name : "?";
    /* An instruction inside a fusion belongs, for the user, where the fusion is. */
    if (fusion && fusion->parent) comp = fusion->parent->name;
    origin_of(o, in, &name, &comp);
    cxla_strbuf_printf(b, "%s (%s, computation %s, line %" PRId64, name,
                       cxla_opcode_name(in->opcode), comp, in->line);
    if (fusion) cxla_strbuf_printf(b, ", fused into %s", fusion->name);
}

char *cpu_origins_describe(const cpu_origins *o, const cxla_instr *in, const cxla_instr *fusion) {
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    /* A fusion the passes made (one the user wrote is named as written). */
    const char *name = NULL, *comp = NULL;
    const cxla_computation *fc =
        !fusion && in->opcode == CXLA_OP_FUSION && !origin_of(o, in, &name, &comp)
            ? cxla_instr_called(in, CXLA_ATTR_CALLS)
            : NULL;
    if (fc && fc->root) {
        /* A fusion: its root as the user wrote it (the fusion itself when the root is a
         * tuple of several results), with the others it holds. */
        bool single = fc->root->opcode != CXLA_OP_TUPLE && fc->root->opcode != CXLA_OP_PARAMETER;
        if (single)
            put_instr(&b, o, fc->root, in);
        else
            put_instr(&b, o, in, NULL);
        int64_t listed = 0, more = 0;
        for (int64_t i = 0; i < fc->instr_count; i++) {
            const cxla_instr *f = fc->instrs[i];
            if ((single && f == fc->root) || f->opcode == CXLA_OP_PARAMETER ||
                f->opcode == CXLA_OP_CONSTANT || f->opcode == CXLA_OP_TUPLE)
                continue;
            if (listed == LISTED) {
                more++;
                continue;
            }
            cxla_strbuf_puts(&b, listed++ ? ", " : single ? " with " : ", of ");
            cxla_strbuf_puts(&b, cpu_origins_name(o, f));
        }
        if (more) cxla_strbuf_printf(&b, " and %" PRId64 " more", more);
        if (single) put_op_name(&b, fc->root);
    } else {
        put_instr(&b, o, in, fusion);
        if (fusion) put_op_name(&b, in);
    }
    cxla_strbuf_putc(&b, ')');
    return cxla_strbuf_take(&b);
}
