/* Internal to the kernel structure of the emitter: what emit.c (loop nests, values,
 * fusion), emit_reduce.c (reductions) and emit_transpose.c (transposes through local
 * blocks, streaming stores) share: the emitter's state for one kernel, the index of an element, the
 * group of outputs a nest computes, the small helpers both write with, and the functions each file
 * offers the other. Strings come from the emitter's arena (e->arena, freed when the kernel is
 * done); errors are recorded in e->err (the first one wins). */
#ifndef CXLA_CPU_EMIT_NEST_H_
#define CXLA_CPU_EMIT_NEST_H_

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "cpu/emit_internal.h"

typedef struct ix {
    int64_t rank;
    const int64_t *dims;
    const char *d[CXLA_MAX_RANK]; /* per dimension; NULL until derived */
    const char *lin;              /* row-major offset; NULL until derived */
} ix;

typedef struct cse_entry {
    const cxla_instr *instr;
    const char *key;
    const char *var;
} cse_entry;

/* A pairwise-sum helper already written: reduce output |idx|, |m| elements. */
typedef struct sum_helper {
    int64_t idx, m;
    const char *name;
} sum_helper;

typedef struct em {
    cxla_arena *arena;
    cxla_strbuf *b;     /* where statements go now */
    cxla_strbuf *hoist; /* loop-invariant statements (NULL: inline) */
    cxla_strbuf consts; /* file-scope constants of this kernel */
    /* The constants already in |consts| (one array each, however many times the kernel
     * reads them: a constant under an instruction used twice is reached twice). */
    const cxla_instr **const_done;
    int64_t nconst_done, capconst_done;
    cxla_strbuf helpers;
    const char *name;
    int indent, hoist_indent;
    int64_t tmp;
    const cxla_instr *top;         /* the instruction the kernel computes */
    const cxla_computation *fused; /* its fused computation, or NULL */
    cse_entry *cse;
    int64_t ncse, capcse;
    /* The body's array parameters ("float *restrict o0", "const float *restrict p0"), the
     * casts of out[] and in[] that the entry point passes, the inputs' names. */
    const char *out_params, *in_params, *out_args, *in_args, *in_names;
    bool ranged; /* the outer loops run [begin, end) (else the whole range) */
    sum_helper sums[128];
    int64_t nsums;
    /* Row fusion: the output an in-loop reduce may store its operand's values in (the
     * row's elements, read back by the row's loop instead of recomputed), and the
     * operands stored so. */
    const char *row_out;
    bool row_out_local; /* row_out is a local row (indexed by the column), not the output */
    cxla_type row_out_type;
    const cxla_instr *row_stored[8];
    int64_t nrow_stored;
    /* Row fusion: the nest's shape and the offset of the row's first element while its
     * reduces are written (NULL otherwise), how many are written, and whether one of them
     * already asks for the next row (emit_rows.c). */
    const cxla_shape *row_shape;
    const char *row_start;
    int64_t row_reduces_done;
    bool row_prefetched;
    /* Mixed precision: while an instruction's operands are read, the float type its float
     * operands of another precision are converted to (interp_mixed_precision_target), else
     * CXLA_TYPE_INVALID. value() converts them; compute() sets it. */
    cxla_type mixed_to;
    /* cpu_emit_kernel_alias: the input |alias_in| lies in the buffer of output 0 and the
     * body reads it through o0 (no parameter of its own). */
    bool aliased;
    int64_t alias_in;
    /* Streaming (stream_group): while set, store_group writes output j of the group to
     * the local block obj at this index instead of oj; the nest copies the blocks out with
     * cxla_stream_line, and the kernel ends with CXLA_STREAM_FENCE when |streamed|. */
    const char *stream_at;
    bool streamed;
    cxla_status err;
} em;

#define F(...) cpu_emit_fmt(e->arena, __VA_ARGS__)

static inline void line(em *e, const char *format, ...) __attribute__((format(printf, 2, 3)));
static inline void line(em *e, const char *format, ...) {
    for (int i = 0; i < e->indent; i++) cxla_strbuf_puts(e->b, "    ");
    va_list args;
    va_start(args, format);
    cxla_strbuf_vprintf(e->b, format, args);
    va_end(args);
    cxla_strbuf_putc(e->b, '\n');
}

/* ---- indices ------------------------------------------------------------------------- */

static inline int64_t stride_of(const ix *x, int64_t k) {
    int64_t s = 1;
    for (int64_t j = k + 1; j < x->rank; j++) s *= x->dims[j];
    return s;
}

static inline ix ix_new(int64_t rank, const int64_t *dims) {
    ix x;
    memset(&x, 0, sizeof x);
    x.rank = rank;
    x.dims = dims;
    if (rank == 0) x.lin = "0";
    return x;
}

/* The index of dimension |k| of |x| (derived from its linear offset when not set). */
static inline const char *ix_dim(em *e, ix *x, int64_t k) {
    if (x->d[k]) return x->d[k];
    if (x->dims[k] == 1) return x->d[k] = "0";
    int64_t s = stride_of(x, k);
    if (k == 0)
        x->d[k] = s == 1 ? x->lin : F("(%s / %" PRId64 ")", x->lin, s);
    else if (s == 1)
        x->d[k] = F("(%s %% %" PRId64 ")", x->lin, x->dims[k]);
    else
        x->d[k] = F("(%s / %" PRId64 " %% %" PRId64 ")", x->lin, s, x->dims[k]);
    return x->d[k];
}

/* The row-major linear offset of |x| (derived from its dimensions when not set). */
static inline const char *ix_lin(em *e, ix *x) {
    if (x->lin) return x->lin;
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    for (int64_t k = 0; k < x->rank; k++) {
        if (x->dims[k] == 1) continue;
        int64_t s = stride_of(x, k);
        if (b.len) cxla_strbuf_puts(&b, " + ");
        if (s == 1)
            cxla_strbuf_puts(&b, x->d[k]);
        else
            cxla_strbuf_printf(&b, "%s * %" PRId64, x->d[k], s);
    }
    x->lin = b.len ? F("(%s)", b.data) : "0";
    cpu_emit_buf_free(&b);
    return x->lin;
}

/* The element count of |s|. */
static inline int64_t elements_of(const cxla_shape *s) {
    int64_t n = 1;
    for (int64_t k = 0; k < s->rank; k++) n *= s->dims[k];
    return n;
}

/* The dimensions of |s| larger than 1 (a nest skips the others: their index is 0). */
static inline int64_t big_dims(const cxla_shape *s, int64_t *which) {
    int64_t n = 0;
    for (int64_t k = 0; k < s->rank; k++)
        if (s->dims[k] > 1) which[n++] = k;
    return n;
}

static inline bool same_dims(const cxla_shape *a, const cxla_shape *b) {
    if (a->rank != b->rank) return false;
    for (int64_t k = 0; k < a->rank; k++)
        if (a->dims[k] != b->dims[k]) return false;
    return true;
}

/* ---- loops --------------------------------------------------------------------------- */

static inline void close_loops(em *e, int n) {
    for (int i = 0; i < n; i++) {
        e->indent--;
        line(e, "}");
    }
}

/* Drops the reusable values recorded since |mark|, except those at a rank-0 index (they
 * were hoisted before the loops and stay in scope). */
static inline void cse_reset(em *e, int64_t mark) {
    int64_t n = mark;
    for (int64_t i = mark; i < e->ncse; i++)
        if (e->cse[i].key[0] == '\0') e->cse[n++] = e->cse[i];
    e->ncse = n;
}

/* The upper bound of a ranged outer loop of |range| iterations. */
static inline const char *hi_of(em *e, int64_t range) {
    return e->ranged ? "end" : F("%" PRId64, range);
}
static inline const char *lo_of(em *e) {
    return e->ranged ? "begin" : "0";
}

/* "(void)p0;" ... for inputs a function may leave unread. */
static inline void void_inputs(em *e) {
    int64_t n = e->fused ? e->fused->param_count : e->top->operand_count;
    for (int64_t k = 0; k < n; k++) line(e, "(void)p%" PRId64 ";", k);
}

/* The outputs a nest computes: outs[idx[0..count)]. */
typedef struct group {
    const cxla_instr *const *outs;
    const int64_t *idx;
    int64_t count;
} group;

/* The reducer of a reduce this emitter handles (one input, a recognized reducer defined
 * on the type), else NONE. Mirrors interp_match_reducer and interp_reducer_supports. */
typedef enum reducer {
    RED_NONE,
    RED_ADD,
    RED_MUL,
    RED_MAX,
    RED_MIN,
    RED_AND,
    RED_OR,
    RED_XOR
} reducer;

/* ---- emit.c ---------------------------------------------------------------------------- */

/* The C variable holding |instr| at |x| (its statements written first). */
const char *cpu_nest_value(em *e, const cxla_instr *instr, ix *x);
/* Stores every output of |g| at |x| (into the streaming blocks while e->stream_at is set). */
void cpu_nest_store_group(em *e, const group *g, ix *x);
/* Records |var| as the value of |instr| at index key |key| in the current scope. */
void cpu_nest_cse_add(em *e, const cxla_instr *instr, const char *key, const char *var);
/* The row-major linear offset of |x| (derived from its dimensions when not set). */
const char *cpu_nest_ix_lin(em *e, ix *x);
/* The kernel input |instr| is (p<k>), or -1. */
int64_t cpu_nest_input_index(const em *e, const cxla_instr *instr);
/* Whether the kernel's fused computation computes a reduce inside its loop (row fusion). */
bool cpu_nest_has_inline_reduce(const em *e);
/* The iterations of the outer loop of an elementwise nest over |s|. */
int64_t cpu_nest_elementwise_range(const cxla_shape *s, bool dims);
/* Records that |instr| has no C form (|why|) in e->err, unless an error is there already. */
void cpu_nest_fail(em *e, const cxla_instr *instr, const char *why);
/* Writes the HLO text of |instr| as a comment line. */
void cpu_nest_comment(em *e, const cxla_instr *instr);

/* ---- emit_reduce.c --------------------------------------------------------------------- */

/* The reducer of |instr| (a reduce), RED_NONE when the emitter has none for it. */
reducer cpu_nest_match_reducer(const cxla_instr *instr);
/* The value of the in-loop reduce |instr| (row fusion, the fast order) at output index |x|:
 * its lanes and tree written where the value is needed. */
const char *cpu_nest_inline_reduce(em *e, const cxla_instr *instr, ix *x);
/* Whether |reduce| may be computed inside a fusion's loop (cpu_nest_inline_reduce). */
bool cpu_nest_reduce_in_loop(const cxla_instr *reduce);
/* The iterations of the outer loop of the loops of |reduce| (cpu_nest_reduce). */
int64_t cpu_nest_reduce_range(const cxla_instr *reduce);
/* Writes the loops of |reduce|, a kernel output, into output o|idx| (its helpers into
 * e->helpers). */
void cpu_nest_reduce(em *e, const cxla_instr *reduce, int64_t idx);

/* ---- emit_rows.c ------------------------------------------------------------------------ */

/* Row fusion's streamed rows (emit_rows.c): the elements of a row per block of
 * CPU_ROW_BLOCK, streamed out. Whether the nest over |s| (its innermost loop over
 * dimension |last|) of group |g| writes its rows so; then the statements before a row's
 * reduces (the local row the reduces store their costly operands in), and the row's loop
 * at |x| (its outer indices set) with the row starting at linear index |start|. */
enum { CPU_ROW_BLOCK = 64 };
bool cpu_nest_rows_stream(const em *e, const group *g, const cxla_shape *s, int64_t last);
void cpu_nest_rows_begin(em *e, const group *g, const cxla_shape *s);
void cpu_nest_rows_loop(em *e, const group *g, const cxla_shape *s, ix *x, const char *start);

/* ---- emit_transpose.c ------------------------------------------------------------------ */

/* Streaming stores: whether a flat nest's blocks of group |g| stream; whether runs of |count|
 * elements of each output are whole lines; the local blocks ob<j> of |count| elements; the
 * statements that stream |count| elements of each block from block index |from| to the
 * output at |at| (and mark the kernel as streamed). */
bool cpu_nest_stream_flat(const em *e, const group *g);
/* Whether the outputs of |g| hold enough bytes together to stream (CXLA_CPU_STREAM_BYTES). */
bool cpu_nest_stream_group(const group *g);
/* Whether the kernel's inputs hold at least twice the bytes of the outputs of |g|. */
bool cpu_nest_stream_reads_twice(const em *e, const group *g);
bool cpu_nest_stream_lines(const group *g, int64_t count);
void cpu_nest_stream_blocks(em *e, const group *g, int64_t count);
void cpu_nest_stream_out(em *e, const group *g, const char *at, const char *from, int64_t count);
/* Writes the nest over |s| that reads transposes through local blocks and returns true, or
 * writes nothing and returns false when no transpose of the nest needs it. */
bool cpu_nest_transpose(em *e, const group *g, const cxla_shape *s);
/* The iterations of the outer loop of the nest over |s| (tiles of K for a transposing nest
 * whose first dimension is tk, else cpu_nest_elementwise_range). */
int64_t cpu_nest_range(const em *e, const cxla_shape *s, bool dims);

#endif /* CXLA_CPU_EMIT_NEST_H_ */
