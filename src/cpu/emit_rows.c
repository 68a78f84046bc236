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

#include "cpu/emit_nest.h"

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

/* Whether the row value |v| is at least the maximum of the row of |a| (an f32 array of
 * rank |rank|) or NaN: a reduce of |a| with maximum over the last dimension (its init
 * value included), or the maximum of such a value and anything (JAX's softmax takes
 * maximum(reduce, -inf)). */
static bool at_least_row_max(const cxla_instr *v, const cxla_instr *a, int64_t rank, int depth) {
    if (v->shape.type != CXLA_F32 || depth > 4) return false;
    if (v->opcode == CXLA_OP_MAXIMUM)
        return at_least_row_max(v->operands[0], a, rank, depth + 1) ||
               at_least_row_max(v->operands[1], a, rank, depth + 1);
    int64_t nd = 0;
    if (v->opcode != CXLA_OP_REDUCE || v->operand_count != 2 || v->operands[0] != a ||
        cpu_nest_match_reducer(v) != RED_MAX)
        return false;
    const int64_t *rdims = cxla_instr_ints(v, CXLA_ATTR_DIMENSIONS, &nd);
    return nd == 1 && rdims[0] == rank - 1;
}

/* Whether |d| is a row's element minus the maximum of its row, as softmax computes it:
 * subtract(a, broadcast(m) along the rows) with m at least the maximum of a's row
 * (at_least_row_max), one f32 instruction |a| on both sides. Each difference is then
 * <= 0 (+-0 included: a - a) or NaN (a NaN in the row, or Inf - Inf): exactly the
 * arguments for which cxla_m_exp_nonpos is cxla_f32_exp to the bit. */
static bool minus_row_max(const cxla_instr *d) {
    if (d->opcode != CXLA_OP_SUBTRACT || d->shape.type != CXLA_F32 || d->shape.rank < 1)
        return false;
    const cxla_instr *b = d->operands[1];
    int64_t rank = d->shape.rank, nd = 0;
    if (b->opcode != CXLA_OP_BROADCAST) return false;
    const int64_t *bdims = cxla_instr_ints(b, CXLA_ATTR_DIMENSIONS, &nd);
    if (nd != rank - 1) return false;
    for (int64_t k = 0; k < nd; k++)
        if (bdims[k] != k) return false;
    return at_least_row_max(b->operands[0], d->operands[0], rank, 0);
}

const char *cpu_emit_row_exp(cxla_arena *arena, const cxla_instr *exp, const char *call) {
    static const char fast[] = "cxla_f32_exp(";
    if (!call || exp->opcode != CXLA_OP_EXP || exp->shape.type != CXLA_F32 ||
        strncmp(call, fast, sizeof fast - 1) != 0 || !minus_row_max(exp->operands[0]))
        return call;
    return cpu_emit_fmt(arena, "cxla_m_exp_nonpos(%s", call + sizeof fast - 1);
}

/* ---- streamed rows ---------------------------------------------------------------------
 *
 * A row fusion whose result is far larger than the last-level cache (softmax over
 * 4096x4096: 64 MiB) writes each row once, at the end of its row's work, and nothing reads
 * it back: its plain stores first read every output line from memory (write-allocate).
 * So the row's last loop can compute its elements in blocks of CPU_ROW_BLOCK in a local
 * block and stream each block out (cxla_stream_line, emit_transpose.c's streaming stores),
 * with the costly values a reduce keeps for that loop (softmax's exponentials,
 * inline_reduce) in a local row rather than in the output. The values and their order are
 * unchanged. As for flat kernels (cpu_nest_stream_flat), it pays on the 2-core EPYC only
 * where the kernel reads at least twice what it writes (a residual add before a layer
 * norm): softmax 4096x4096 and layer norm 8192x1024, one input, ran 0-15% slower streamed
 * (docs/performance.md). Rows of at most ROW_LOCAL_BYTES: the local row and the input row
 * then stay in L1 (48 KiB on the machines measured) with the next row's prefetched
 * lines. */
enum { ROW_LOCAL_BYTES = 32768 };

bool cpu_nest_rows_stream(const em *e, const group *g, const cxla_shape *s, int64_t last) {
    if (g->count != 1 || last != s->rank - 1 || !cpu_nest_has_inline_reduce(e)) return false;
    const cxla_instr *o = g->outs[g->idx[0]];
    int64_t d = s->dims[last], size = (int64_t)cxla_type_storage(o->shape.type);
    if (cxla_type_bits(o->shape.type) < 8 || d % CPU_ROW_BLOCK != 0 || d * size > ROW_LOCAL_BYTES ||
        !cpu_nest_stream_lines(g, CPU_ROW_BLOCK))
        return false;
    return cpu_nest_stream_group(g) && cpu_nest_stream_reads_twice(e, g);
}

void cpu_nest_rows_begin(em *e, const group *g, const cxla_shape *s) {
    const cxla_instr *o = g->outs[g->idx[0]];
    line(e, "_Alignas(64) %s row[%" PRId64 "];", cpu_emit_stype(o->shape.type),
         s->dims[s->rank - 1]);
    line(e, "(void)row; /* unused when no reduce keeps its operand */");
    e->row_out = "row";
    e->row_out_local = true;
}

void cpu_nest_rows_loop(em *e, const group *g, const cxla_shape *s, ix *x, const char *start) {
    int64_t last = s->rank - 1, d = s->dims[last];
    const char *i = cpu_emit_fmt(e->arena, "i%" PRId64, last);
    const char *c = cpu_emit_fmt(e->arena, "c%" PRId64, last);
    line(e, "for (int64_t %s = 0; %s < %" PRId64 "; %s += %d) {", c, c, d, c, CPU_ROW_BLOCK);
    e->indent++;
    cpu_nest_stream_blocks(e, g, CPU_ROW_BLOCK);
    line(e, "for (int64_t k = 0; k < %d; k++) {", CPU_ROW_BLOCK);
    e->indent++;
    line(e, "const int64_t %s = %s + k;", i, c);
    int64_t mark = e->ncse;
    ix y = *x;
    y.d[last] = i;
    y.lin = NULL;
    e->stream_at = "k";
    cpu_nest_store_group(e, g, &y);
    e->stream_at = NULL;
    cse_reset(e, mark);
    close_loops(e, 1);
    cpu_nest_stream_out(e, g, cpu_emit_fmt(e->arena, "%s + %s", start, c), "0", CPU_ROW_BLOCK);
    close_loops(e, 1);
}
