/* Row fusion's kernels (src/passes/fusion.c forms them; emit.c's dims_nest computes each
 * row's reductions before the row's elements): what is specific to working a row at a
 * time.
 *
 * A row fusion reads its input row from memory once, in its first pass over the row (say
 * softmax's maximum); the passes after it (the exponentials and their sum, the division)
 * work on the row in L1 and are bound by arithmetic. While a thread computes, nothing
 * reads memory for it: the hardware prefetcher follows misses, and there are none. So the
 * second pass over a row asks for the next row, a few cache lines per block of columns,
 * and the next row's first pass finds it in cache: memory and arithmetic overlap instead
 * of taking turns (softmax 4096x4096 on one thread of the AMD EPYC: 9.3 -> 7.5 ms, its
 * memory floor 4.6; docs/performance.md). The prefetch changes no value. */
#include <inttypes.h>
#include <string.h>

#include "cpu/emit_internal.h"

enum { LINE_BYTES = 64, MAX_PREFETCHED = 4 };

/* Whether every user of |p| reads it at the element the nest is at (elementwise work or a
 * reduce of it), so that its rows are the nest's rows. */
static bool read_by_rows(const cxla_instr *p) {
    for (int64_t u = 0; u < p->user_count; u++) {
        const cxla_instr *user = p->users[u];
        if (user->opcode == CXLA_OP_REDUCE) continue;
        if (!(cxla_opcode_get_info(user->opcode)->flags & CXLA_OPF_ELEMENTWISE)) return false;
    }
    return p->user_count > 0;
}

const char *cpu_emit_row_prefetch(cxla_arena *arena, const cxla_computation *fused,
                                  const cxla_shape *s, const char *start, const char *col,
                                  int64_t lanes) {
    if (!fused || s->rank < 1) return NULL;
    int64_t d = s->dims[s->rank - 1], total = 1;
    for (int64_t k = 0; k < s->rank; k++) total *= s->dims[k];
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    int64_t n = 0;
    for (int64_t i = 0; i < fused->instr_count && n < MAX_PREFETCHED; i++) {
        const cxla_instr *p = fused->instrs[i];
        if (p->opcode != CXLA_OP_PARAMETER || p->shape.rank != s->rank || !read_by_rows(p))
            continue;
        if (memcmp(p->shape.dims, s->dims, (size_t)s->rank * sizeof(int64_t)) != 0) continue;
        size_t size = cxla_type_storage(p->shape.type);
        if (size == 0 || cxla_type_bits(p->shape.type) < 8) continue; /* sub-byte: packed */
        int64_t per_line = (int64_t)(LINE_BYTES / size);
        if (per_line < 1) per_line = 1;
        for (int64_t q = 0; q < lanes; q += per_line)
            cxla_strbuf_printf(
                &b, " CXLA_PREFETCH(&p%" PRId64 "[%s + %" PRId64 " + %s + %" PRId64 "]);",
                p->parameter_number, start, d, col, q);
        n++;
    }
    const char *out = NULL;
    if (n > 0 && !b.failed)
        out = cpu_emit_fmt(arena, "if (%s + %" PRId64 " < %" PRId64 ") {%s }", start, d, total,
                           b.data);
    cxla_strbuf_free(&b);
    return out;
}
