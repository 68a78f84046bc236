/* Finishing a built plan (cpu_steps.c builds the values, classes and steps): the
 * lifetime of every buffer class over the global order of steps, the classes a plan for
 * donated arguments moves into the caller's donated buffers, the arena offsets
 * (cpu_arena_assign, cpu_plan.c), the steps' values resolved to their classes, and where
 * each dynamic class keeps its sizes in a run. */
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_steps.h"

#define OOM() CPU_STEPS_OOM()

static void resolve_seq(value *v, seq *q) {
    for (int64_t i = 0; i < q->count; i++) {
        step *sp = &q->steps[i];
        for (int64_t k = 0; k < sp->in_count; k++) sp->in[k] = cpu_value_find(v, sp->in[k]);
        for (int64_t k = 0; k < sp->out_count; k++) sp->out[k] = cpu_value_find(v, sp->out[k]);
        if (sp->kind == S_WHILE) sp->pred = cpu_value_find(v, sp->pred);
        for (int64_t k = 0; k < sp->sub_count; k++) resolve_seq(v, &sp->sub[k]);
    }
}

void cpu_steps_resolve(cpu_plan *p) {
    resolve_seq(p->values, &p->entry);
    for (int64_t c = 0; c < p->value_count; c++)
        if (p->values[c].sub_of >= 0)
            p->values[c].sub_of = cpu_value_find(p->values, p->values[c].sub_of);
}

/* The lifetime of every class over the global order (-1 for those never touched): from
 * its first event to its last, a read inside a loop that the class was written before
 * lasting until the loop ends. |first| and |last| hold value_count entries. */
static void spans(cpu_plan *p, const cpu_lives *b, int64_t *first, int64_t *last) {
    int64_t n = p->value_count;
    for (int64_t c = 0; c < n; c++) first[c] = last[c] = -1;
    for (int64_t e = 0; e < b->en; e++) {
        int64_t c = cpu_value_find(p->values, b->ev[e].v);
        if (first[c] < 0 || b->ev[e].pos < first[c]) first[c] = b->ev[e].pos;
    }
    for (int64_t e = 0; e < b->en; e++) {
        int64_t c = cpu_value_find(p->values, b->ev[e].v), u = b->ev[e].pos;
        /* A read inside a loop that the buffer was written before: until the loop ends. */
        for (int64_t l = 0; l < b->ln; l++) {
            const cpu_range *r = &b->loops[l];
            if (r->a <= u && u <= r->b && !(r->a <= first[c] && first[c] <= r->b) && r->b > u)
                u = r->b;
        }
        if (u > last[c]) last[c] = u;
    }
    /* A piece lives inside its whole: the whole's buffer spans its pieces' lives. */
    for (int64_t c = 0; c < n; c++) {
        if (p->values[c].parent != c || p->values[c].sub_of < 0 || first[c] < 0) continue;
        int64_t t = c;
        for (int depth = 0; p->values[t].sub_of >= 0 && depth < MAX_DEPTH; depth++)
            t = cpu_value_find(p->values, p->values[t].sub_of);
        if (first[t] < 0 || first[c] < first[t]) first[t] = first[c];
        if (last[c] > last[t]) last[t] = last[c];
    }
}

/* A plan for donated arguments: each aliased result leaf that is not already the donated
 * argument's buffer (an in-place update made it so) takes that buffer when the argument
 * is dead before the result's buffer is first written, so the result is computed straight
 * into the caller's donated memory. */
cxla_status cpu_steps_donate(cpu_plan *p, const cpu_lives *b, int64_t *const *params) {
    int64_t n = p->value_count;
    int64_t *first = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    int64_t *last = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    if (!first || !last) {
        free(first);
        free(last);
        return OOM();
    }
    spans(p, b, first, last);
    for (int64_t a = 0; a < p->alias_count; a++) {
        const cpu_io_alias *al = &p->aliases[a];
        int64_t leaf = al->arg - p->arg_base[al->param];
        int64_t pc = cpu_value_find(p->values, params[al->param][leaf]);
        int64_t rc = cpu_value_find(p->values, p->root[al->output]);
        if (!p->values[pc].writable) continue; /* a dynamic leaf of a tuple */
        if (rc == pc) {
            p->stats.donated++; /* in-place updates made it the argument's buffer */
            continue;
        }
        bool unique = true;
        for (int64_t k = 0; k < p->root_count; k++)
            if (k != al->output && cpu_value_find(p->values, p->root[k]) == rc) unique = false;
        const value *r = &p->values[rc];
        if (!unique || r->kind != V_ARENA || r->size != p->values[pc].size || first[rc] < 0 ||
            last[pc] >= first[rc])
            continue;
        cpu_value_merge(p->values, rc, pc);
        p->stats.in_place++;
        p->stats.donated++;
    }
    free(first);
    free(last);
    return NULL;
}

/* Lifetimes of the arena classes over the global order, then their offsets. */
cxla_status cpu_steps_place(cpu_plan *p, const cpu_lives *b) {
    int64_t n = p->value_count;
    int64_t *first = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    int64_t *last = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    int64_t *which = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    cpu_arena_buffer *bufs = calloc((size_t)(n ? n : 1), sizeof(*bufs));
    cxla_status s = first && last && which && bufs ? NULL : OOM();
    if (!s) spans(p, b, first, last);
    int64_t count = 0;
    for (int64_t c = 0; c < n && !s; c++) {
        const value *x = &p->values[c];
        if (x->parent != c || x->kind != V_ARENA || x->result >= 0 || x->sub_of >= 0 ||
            first[c] < 0)
            continue;
        which[count] = c;
        bufs[count++] = (cpu_arena_buffer){
            .size = x->size, .first = first[c], .last = last[c] > first[c] ? last[c] : first[c]};
    }
    int64_t steps = b->steps > 0 ? b->steps : 1;
    if (!s) s = cpu_arena_assign(bufs, count, steps, &p->arena_size);
    for (int64_t k = 0; k < count && !s; k++) p->values[which[k]].offset = bufs[k].offset;
    free(first);
    free(last);
    free(which);
    free(bufs);
    return s;
}

/* Where each class with a dynamic array shape keeps its current sizes in a run: a class
 * is dynamic when any of its values is (a while state declared dynamic may start from a
 * static value). */
cxla_status cpu_steps_dynamic_sizes(cpu_plan *p) {
    for (int64_t v = 0; v < p->value_count; v++) {
        const cxla_shape *sh = p->values[v].shape;
        if (!sh || !cxla_type_is_array(sh->type) || cxla_shape_is_static(sh)) continue;
        if (!p->dyn_off) {
            p->dyn_off = malloc((size_t)p->value_count * sizeof(int64_t));
            if (!p->dyn_off) return OOM();
            for (int64_t k = 0; k < p->value_count; k++) p->dyn_off[k] = -1;
        }
        int64_t c = cpu_value_find(p->values, v);
        if (p->dyn_off[c] >= 0) continue;
        p->dyn_off[c] = p->dyn_total;
        p->dyn_total += sh->rank > 0 ? sh->rank : 1;
    }
    return NULL;
}
