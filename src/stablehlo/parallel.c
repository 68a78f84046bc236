#define _POSIX_C_SOURCE 200809L
/* Several devices: the collectives, host transfers (infeed, outfeed, send, recv) and the
 * reference interpreter's `interpreter.run_parallel`.
 *
 * Collectives map to the HLO op of the same meaning; where StableHLO defines more than
 * HLO does, the converter adds it around the HLO op:
 *   - all_to_all splits and concatenates along two different dimensions, HLO's array
 *     form along one: each operand is sliced into split_count parts, exchanged with the
 *     tuple form (part k to member k) and the parts received are concatenated;
 *   - collective_broadcast gives zeros to processes in none of the groups, and
 *     collective_reduce gives zeros to the members that are not their group's root: a
 *     select on a per-device flag (a constant table indexed by the device's id) zeroes
 *     them; processes in no group get a group of their own for the HLO op.
 *
 * interpreter.run_parallel(inputs...) {programs = [[@f00, @f01, ...], ...], infeed = [@q...]}
 * runs program [r][p] as replica r, partition p, with its inputs taken in turn from
 * |inputs| (device by device), and returns the results device by device. It becomes a
 * custom-call of the built-in target CV_PARALLEL_TARGET whose backend_config holds a
 * whole HLO module (the "device module") and how inputs and results are laid out. When
 * every device runs the same function, the device module's entry is that function;
 * otherwise its entry takes the inputs of all devices and dispatches on the device's
 * flattened id (replica-id * partitions + partition-id) with a conditional whose branch
 * d calls program d and fills the other devices' results with zeros. At run time the
 * target parses the device module and runs it through exec_run_devices (the runtime's
 * runner: one thread per device, collectives through the threads communicator; the
 * runtime installs it when a client is created), with a host of its own:
 * one infeed queue (the values of the infeed functions, in order), a mailbox per
 * channel whose recv waits for the matching send (the reference interpreter's send and
 * recv meet), and an outfeed that drops what it gets. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cxla/custom_call.h"
#include "cxla/hlo.h"
#include "exec/exec.h"
#include "stablehlo/convert_internal.h"

const char *const CV_PARALLEL_TARGET = "cxla.stablehlo.run_parallel";

enum { MAXV = 4096, MAXG = 4096 };

/* How long a recv waits for its send, and a collective for the other devices. */
#define PARALLEL_TIMEOUT_SECONDS 60.0

/* ---- attributes ---------------------------------------------------------------------- */

static bool flag_attr(const mlir_op *op, const char *name) {
    const mlir_attr *a = mlir_op_attr(op, name);
    return a && ((a->kind == MA_BOOL && a->b) || a->kind == MA_UNIT || (a->kind == MA_INT && a->i));
}

/* channel_handle = #stablehlo.channel_handle<handle = H, type = T>: H (0 when absent). */
static int64_t channel_handle(const mlir_op *op) {
    const mlir_attr *a = mlir_op_attr(op, "channel_handle");
    if (!a) return 0;
    if (a->kind == MA_INT) return a->i;
    const mlir_attr *h =
        (a->kind == MA_DIALECT || a->kind == MA_DICT) ? mlir_attr_get(a, "handle") : NULL;
    return h && h->kind == MA_INT ? h->i : 0;
}

/* A list of id lists (replica_groups, source_target_pairs): a 2-D dense (-1 pads rows) or
 * nested arrays. ids[] holds them row by row, row_len[r] the length of row r. */
typedef struct id_lists {
    int64_t rows;
    int64_t ids[MAXG];
    int64_t row_start[MAXG], row_len[MAXG];
} id_lists;

static bool read_id_lists(cv *c, const mlir_op *op, const char *name, id_lists *g) {
    g->rows = 0;
    const mlir_attr *a = mlir_op_attr(op, name);
    if (!a) return true;
    int64_t flat[MAXG], n = 0, cols = 0;
    if (a->kind == MA_DENSE) {
        if (a->type.rank == 2)
            cols = a->type.dims[1];
        else if (a->type.rank == 1)
            cols = a->type.dims[0];
        if (!cv_ints(c, op, a, flat, MAXG, &n)) return false;
        if (a->type.rank == 1) cols = n;
    } else if (a->kind == MA_ARRAY) {
        int64_t k = 0;
        for (int64_t r = 0; r < a->count && r < MAXG; r++) {
            int64_t m;
            if (!cv_ints(c, op, a->items[r], g->ids + k, MAXG - k, &m)) return false;
            g->row_start[r] = k;
            g->row_len[r] = m;
            k += m;
            g->rows++;
        }
        return true;
    } else {
        return cv_fail(c, op, "%s: expected a dense list of lists", name);
    }
    if (cols <= 0) return true;
    int64_t k = 0;
    for (int64_t r = 0; r * cols < n && r < MAXG; r++) {
        g->row_start[r] = k;
        int64_t m = 0;
        for (int64_t j = 0; j < cols; j++) {
            int64_t v = flat[r * cols + j];
            if (v < 0) continue; /* padding of shorter groups */
            g->ids[k++] = v;
            m++;
        }
        g->row_len[r] = m;
        g->rows++;
    }
    return true;
}

static void id_lists_text(const id_lists *g, cxla_strbuf *b) {
    cxla_strbuf_putc(b, '{');
    for (int64_t r = 0; r < g->rows; r++) {
        cxla_strbuf_puts(b, r ? ",{" : "{");
        for (int64_t j = 0; j < g->row_len[r]; j++)
            cxla_strbuf_printf(b, "%s%" PRId64, j ? "," : "", g->ids[g->row_start[r] + j]);
        cxla_strbuf_putc(b, '}');
    }
    cxla_strbuf_putc(b, '}');
}

static bool set_groups(cv *c, const mlir_op *op, cxla_instr *in, const id_lists *g) {
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    id_lists_text(g, &b);
    bool ok = cv_attr_text(c, op, in, CXLA_ATTR_REPLICA_GROUPS, b.data);
    cxla_strbuf_free(&b);
    return ok;
}

/* replica_groups, channel_id (handle > 0: StableHLO's "channel_id > 0") and
 * use_global_device_ids. With |flatten| (all_reduce, all_gather, reduce_scatter), the
 * cross_replica_and_partition mode (a channel, no use_global_device_ids) is written as
 * flattened device ids: StableHLO orders such a group partition by partition (for each
 * partition, the group's replicas), XLA replica by replica, and the order decides where
 * all_gather puts each piece. */
static bool collective_attrs(cv *c, const mlir_op *op, cxla_instr *in, const id_lists *g,
                             bool flatten) {
    if (!in) return false;
    int64_t h = channel_handle(op);
    int64_t parts = c->m->num_partitions > 0 ? c->m->num_partitions : 1;
    if (flatten && h > 0 && !flag_attr(op, "use_global_device_ids") && parts > 1) {
        id_lists *f = malloc(sizeof *f);
        if (!f) return cv_fail(c, op, "out of memory");
        f->rows = 0;
        int64_t k = 0, reps = c->m->replica_count > 0 ? c->m->replica_count : 1;
        int64_t rows = g->rows ? g->rows : 1;
        for (int64_t r = 0; r < rows; r++) {
            int64_t len = g->rows ? g->row_len[r] : reps;
            if (k + len * parts > MAXG) {
                free(f);
                return cv_fail(c, op, "too many devices");
            }
            f->row_start[r] = k;
            for (int64_t p = 0; p < parts; p++)
                for (int64_t j = 0; j < len; j++)
                    f->ids[k++] = (g->rows ? g->ids[g->row_start[r] + j] : j) * parts + p;
            f->row_len[r] = len * parts;
            f->rows++;
        }
        bool ok = set_groups(c, op, in, f) && cv_attr_int(c, op, in, CXLA_ATTR_CHANNEL_ID, h) &&
                  cv_attr_text(c, op, in, CXLA_ATTR_USE_GLOBAL_DEVICE_IDS, "true");
        free(f);
        return ok;
    }
    if (!set_groups(c, op, in, g)) return false;
    if (h > 0 && !cv_attr_int(c, op, in, CXLA_ATTR_CHANNEL_ID, h)) return false;
    if (flag_attr(op, "use_global_device_ids") &&
        !cv_attr_text(c, op, in, CXLA_ATTR_USE_GLOBAL_DEVICE_IDS, "true"))
        return false;
    return true;
}

static cxla_shape tuple_shape(cv *c, const cxla_shape *items, int64_t n) {
    cxla_shape sh = {.type = CXLA_TUPLE, .tuple_count = n};
    sh.elements = cxla_arena_alloc_array(c->m->arena, (size_t)(n ? n : 1), sizeof(cxla_shape));
    if (sh.elements && n) memcpy(sh.elements, items, sizeof(cxla_shape) * (size_t)n);
    return sh;
}

/* The op's results as one shape: the single result, or a tuple of them. */
static cxla_shape results_of(cv *c, const mlir_op *op) {
    if (op->out_type_count == 1) return op->out_types[0];
    return tuple_shape(c, op->out_types, op->out_type_count);
}

/* ---- zeroing the devices StableHLO gives zeros ------------------------------------ */

static cxla_instr *zeros_like(cv *c, cv_scope *s, const mlir_op *op, const cxla_shape *sh) {
    if (sh->type == CXLA_TOKEN) return cv_emit(c, s, op, CXLA_OP_AFTER_ALL, sh, 0, NULL);
    cxla_instr *z = cv_constant_scalar(c, s, sh->type, 0);
    if (!z) return NULL;
    cxla_shape plain = *sh;
    plain.layout = NULL;
    cxla_instr *b = cv_emit(c, s, op, CXLA_OP_BROADCAST, &plain, 1, &z);
    if (!b || !cv_attr_ints(c, op, b, CXLA_ATTR_DIMENSIONS, NULL, 0)) return NULL;
    return b;
}

/* The scalar s32 id of this device in |mode|: 0 replica, 1 partition, 2 flattened. */
static cxla_instr *device_id(cv *c, cv_scope *s, const mlir_op *op, int mode) {
    cxla_shape u32 = {.type = CXLA_U32}, s32 = {.type = CXLA_S32};
    cxla_instr *r = cv_emit(c, s, op, CXLA_OP_REPLICA_ID, &u32, 0, NULL);
    cxla_instr *p = cv_emit(c, s, op, CXLA_OP_PARTITION_ID, &u32, 0, NULL);
    cxla_instr *rs = r ? cv_emit(c, s, op, CXLA_OP_CONVERT, &s32, 1, &r) : NULL;
    cxla_instr *ps = p ? cv_emit(c, s, op, CXLA_OP_CONVERT, &s32, 1, &p) : NULL;
    if (!rs || !ps) return NULL;
    if (mode == 0) return rs;
    if (mode == 1) return ps;
    int64_t parts = c->m->num_partitions > 0 ? c->m->num_partitions : 1;
    cxla_instr *k = cv_constant_scalar(c, s, CXLA_S32, (double)parts);
    cxla_instr *mul[2] = {rs, k};
    cxla_instr *m = k ? cv_emit(c, s, op, CXLA_OP_MULTIPLY, &s32, 2, mul) : NULL;
    cxla_instr *add[2] = {m, ps};
    return m ? cv_emit(c, s, op, CXLA_OP_ADD, &s32, 2, add) : NULL;
}

/* A pred[] that holds when flags[id of this device] does (|n| ids): a constant table
 * indexed by the device's id. */
static cxla_instr *device_flag(cv *c, cv_scope *s, const mlir_op *op, int mode, const bool *flags,
                               int64_t n) {
    cxla_shape table = {.type = CXLA_PRED, .rank = 1, .dims = &n};
    cxla_literal *lit = NULL;
    cxla_status st = cxla_literal_create(&table, &lit);
    if (!st) {
        bool *d = cxla_literal_data(lit);
        for (int64_t i = 0; i < n; i++) d[i] = flags[i];
        st = cxla_module_adopt_literal(c->m, lit);
    }
    if (st) return cv_status(c, op, st), NULL;
    cxla_instr *k = cv_emit(c, s, op, CXLA_OP_CONSTANT, &table, 0, NULL);
    if (!k) return NULL;
    k->literal = lit;
    cxla_instr *id = device_id(c, s, op, mode);
    if (!id) return NULL;
    int64_t one = 1;
    cxla_shape p1 = {.type = CXLA_PRED, .rank = 1, .dims = &one}, p0 = {.type = CXLA_PRED};
    cxla_instr *ds_ops[2] = {k, id};
    cxla_instr *ds = cv_emit(c, s, op, CXLA_OP_DYNAMIC_SLICE, &p1, 2, ds_ops);
    if (!ds || !cv_attr_text(c, op, ds, CXLA_ATTR_DYNAMIC_SLICE_SIZES, "{1}")) return NULL;
    return cv_emit(c, s, op, CXLA_OP_RESHAPE, &p0, 1, &ds);
}

/* |value| where flags[id of this device] holds, zeros elsewhere (|n| ids). */
static cxla_instr *zero_unless(cv *c, cv_scope *s, const mlir_op *op, cxla_instr *value, int mode,
                               const bool *flags, int64_t n) {
    cxla_instr *flag = device_flag(c, s, op, mode, flags, n);
    if (!flag) return NULL;
    cxla_shape ps = value->shape;
    ps.type = CXLA_PRED;
    ps.layout = NULL;
    cxla_instr *fb = cv_emit(c, s, op, CXLA_OP_BROADCAST, &ps, 1, &flag);
    if (!fb || !cv_attr_ints(c, op, fb, CXLA_ATTR_DIMENSIONS, NULL, 0)) return NULL;
    cxla_instr *z = zeros_like(c, s, op, &value->shape);
    cxla_instr *sel[3] = {fb, value, z};
    return z ? cv_emit(c, s, op, CXLA_OP_SELECT, &value->shape, 3, sel) : NULL;
}

/* The number of ids in |mode| for the module being built. */
static int64_t id_count(cv *c, int mode) {
    int64_t r = c->m->replica_count > 0 ? c->m->replica_count : 1;
    int64_t p = c->m->num_partitions > 0 ? c->m->num_partitions : 1;
    return mode == 0 ? r : mode == 1 ? p : r * p;
}

/* The id mode of collective_broadcast / collective_reduce groups: without a channel,
 * replicas; collective_broadcast with one, partitions; collective_reduce with one,
 * replicas (or flattened with use_global_device_ids). */
static int group_mode(const mlir_op *op, bool partitions_with_channel) {
    if (channel_handle(op) <= 0) return 0;
    if (partitions_with_channel) return 1;
    return flag_attr(op, "use_global_device_ids") ? 2 : 0;
}

/* ---- the ops ------------------------------------------------------------------------ */

static bool all_to_all(cv *c, cv_scope *s, const mlir_op *op, const id_lists *g) {
    cxla_instr *ops[MAXV];
    int64_t n;
    if (!cv_operands(c, s, op, ops, MAXV, &n)) return false;
    int64_t split = 0, concat = 0, count = 0;
    const mlir_attr *a;
    if ((a = mlir_op_attr(op, "split_dimension"))) split = a->i;
    if ((a = mlir_op_attr(op, "concat_dimension"))) concat = a->i;
    if ((a = mlir_op_attr(op, "split_count"))) count = a->i;
    if (count < 1 || count > MAXV) return cv_fail(c, op, "split_count must be positive");
    if (op->out_type_count != n) return cv_fail(c, op, "expected one result per operand");
    cxla_instr *res[MAXV];
    for (int64_t i = 0; i < n; i++) {
        const cxla_shape *x = &ops[i]->shape;
        if (!cxla_type_is_array(x->type) || split < 0 || split >= x->rank || concat < 0 ||
            concat >= x->rank || x->dims[split] % count != 0)
            return cv_fail(c, op,
                           "split_dimension %" PRId64 " of operand %" PRId64
                           " does not split into %" PRId64 " parts",
                           split, i, count);
        int64_t dims[CXLA_MAX_RANK];
        memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
        int64_t step = x->dims[split] / count;
        dims[split] = step;
        cxla_shape part = {.type = x->type, .rank = x->rank, .dims = dims};
        cxla_instr **parts = cxla_arena_alloc_array(c->m->arena, (size_t)count, sizeof(*parts));
        cxla_shape *shapes = cxla_arena_alloc_array(c->m->arena, (size_t)count, sizeof(*shapes));
        if (!parts || !shapes) return cv_fail(c, op, "out of memory");
        for (int64_t k = 0; k < count; k++) {
            cxla_strbuf b;
            cxla_strbuf_init(&b);
            cxla_strbuf_putc(&b, '{');
            for (int64_t d = 0; d < x->rank; d++) {
                int64_t lo = d == split ? k * step : 0, hi = d == split ? lo + step : x->dims[d];
                cxla_strbuf_printf(&b, "%s[%" PRId64 ":%" PRId64 ":1]", d ? "," : "", lo, hi);
            }
            cxla_strbuf_putc(&b, '}');
            parts[k] = cv_emit(c, s, op, CXLA_OP_SLICE, &part, 1, &ops[i]);
            bool ok = parts[k] && cv_attr_text(c, op, parts[k], CXLA_ATTR_SLICE, b.data);
            cxla_strbuf_free(&b);
            if (!ok) return false;
            shapes[k] = parts[k]->shape;
        }
        cxla_shape ts = tuple_shape(c, shapes, count);
        cxla_instr *x2 = cv_emit(c, s, op, CXLA_OP_ALL_TO_ALL, &ts, count, parts);
        if (!x2 || !set_groups(c, op, x2, g)) return false;
        int64_t h = channel_handle(op);
        if (h > 0 && !cv_attr_int(c, op, x2, CXLA_ATTR_CHANNEL_ID, h)) return false;
        for (int64_t k = 0; k < count; k++)
            if (!(parts[k] = cv_gte(c, s, x2, k))) return false;
        res[i] = cv_emit(c, s, op, CXLA_OP_CONCATENATE, &op->out_types[i], count, parts);
        if (!res[i] || !cv_attr_ints(c, op, res[i], CXLA_ATTR_DIMENSIONS, &concat, 1)) return false;
    }
    return cv_bind_results(c, s, op, n == 1 ? res[0] : cv_tuple(c, s, res, n));
}

/* The HLO collective_broadcast / collective_reduce of |ops| (in scope |s|). */
static cxla_instr *emit_broadcast_or_reduce(cv *c, cv_scope *s, const mlir_op *op,
                                            const id_lists *g, bool is_reduce,
                                            cxla_instr *const *ops, int64_t n) {
    cxla_shape rs = results_of(c, op);
    cxla_instr *in =
        cv_emit(c, s, op, is_reduce ? CXLA_OP_COLLECTIVE_REDUCE : CXLA_OP_COLLECTIVE_BROADCAST, &rs,
                n, ops);
    if (!collective_attrs(c, op, in, g, false)) return NULL;
    if (is_reduce) {
        if (op->region_count != 1) return cv_fail(c, op, "expected a reducer region"), NULL;
        cxla_computation *comp = cv_apply_region(c, s, op, op->regions[0], "reducer");
        if (!comp || !cv_attr_comps(c, op, in, CXLA_ATTR_TO_APPLY, &comp, 1)) return NULL;
    }
    return in;
}

/* select(flag, a, b) with a pred[] |flag|. */
static cxla_instr *select_on(cv *c, cv_scope *s, const mlir_op *op, cxla_instr *flag, cxla_instr *a,
                             cxla_instr *b) {
    cxla_shape ps = a->shape;
    ps.type = CXLA_PRED;
    ps.layout = NULL;
    cxla_instr *fb = cv_emit(c, s, op, CXLA_OP_BROADCAST, &ps, 1, &flag);
    if (!fb || !cv_attr_ints(c, op, fb, CXLA_ATTR_DIMENSIONS, NULL, 0)) return NULL;
    cxla_instr *sel[3] = {fb, a, b};
    return cv_emit(c, s, op, CXLA_OP_SELECT, &a->shape, 3, sel);
}

/* collective_broadcast whose groups leave some processes out, which HLO's
 * collective-broadcast cannot say (its groups cover every device): the root sends to the
 * k-th member of its group with one collective-permute per position k (sources and
 * targets stay unique), each member keeps what its permute brought, the root its own
 * operand, and the processes in no group zeros. */
static bool broadcast_by_permutes(cv *c, cv_scope *s, const mlir_op *op, const id_lists *g,
                                  int mode, int64_t ids, const bool *in_group, const bool *is_root,
                                  cxla_instr *const *ops, int64_t n) {
    (void)in_group;
    int64_t maxlen = 0;
    for (int64_t r = 0; r < g->rows; r++)
        if (g->row_len[r] > maxlen) maxlen = g->row_len[r];
    if (op->out_type_count != n) return cv_fail(c, op, "expected one result per operand");
    int64_t h = channel_handle(op);
    cxla_instr *root = device_flag(c, s, op, mode, is_root, ids);
    if (!root) return false;
    cxla_instr *res[MAXV];
    bool pos_k[MAXG];
    for (int64_t i = 0; i < n; i++) {
        cxla_instr *v = zeros_like(c, s, op, &op->out_types[i]);
        for (int64_t k = 1; v && k < maxlen; k++) {
            cxla_strbuf b;
            cxla_strbuf_init(&b);
            cxla_strbuf_putc(&b, '{');
            bool first = true;
            memset(pos_k, 0, sizeof(bool) * (size_t)ids);
            for (int64_t r = 0; r < g->rows; r++) {
                if (g->row_len[r] <= k) continue;
                int64_t src = g->ids[g->row_start[r]], dst = g->ids[g->row_start[r] + k];
                cxla_strbuf_printf(&b, "%s{%" PRId64 ",%" PRId64 "}", first ? "" : ",", src, dst);
                first = false;
                if (dst >= 0 && dst < ids) pos_k[dst] = true;
            }
            cxla_strbuf_putc(&b, '}');
            cxla_instr *perm =
                cv_emit(c, s, op, CXLA_OP_COLLECTIVE_PERMUTE, &op->out_types[i], 1, &ops[i]);
            bool ok = perm && cv_attr_text(c, op, perm, CXLA_ATTR_SOURCE_TARGET_PAIRS, b.data);
            cxla_strbuf_free(&b);
            if (ok && h > 0) ok = cv_attr_int(c, op, perm, CXLA_ATTR_CHANNEL_ID, h);
            cxla_instr *flag = ok ? device_flag(c, s, op, mode, pos_k, ids) : NULL;
            v = flag ? select_on(c, s, op, flag, perm, v) : NULL;
        }
        if (!v || !(res[i] = select_on(c, s, op, root, ops[i], v))) return false;
    }
    return cv_bind_results(c, s, op, n == 1 ? res[0] : cv_tuple(c, s, res, n));
}

/* collective_broadcast with has_dynamic_root: the last operand holds, per data operand,
 * the position of the root in the group, known only at run time. Every member gathers
 * the group's values (all-gather along a new leading dimension) and keeps the root's. */
static bool broadcast_dynamic_root(cv *c, cv_scope *s, const mlir_op *op, const id_lists *g,
                                   cxla_instr *const *ops, int64_t n) {
    int64_t nd = n - 1;
    if (nd < 1 || op->out_type_count != nd || !cxla_type_is_integer(ops[nd]->shape.type) ||
        ops[nd]->shape.rank != 1 || ops[nd]->shape.dims[0] < nd)
        return cv_fail(c, op, "has_dynamic_root: expected data operands and a root per operand");
    int64_t size = g->rows ? g->row_len[0] : id_count(c, 0);
    cxla_shape s32 = {.type = CXLA_S32};
    int64_t one = 1;
    cxla_shape s32_1 = {.type = CXLA_S32, .rank = 1, .dims = &one};
    cxla_instr *root_ops = ops[nd];
    if (root_ops->shape.type != CXLA_S32) {
        cxla_shape cs = root_ops->shape;
        cs.type = CXLA_S32;
        cs.layout = NULL;
        root_ops = cv_emit(c, s, op, CXLA_OP_CONVERT, &cs, 1, &root_ops);
        if (!root_ops) return false;
    }
    cxla_instr *zero = cv_constant_scalar(c, s, CXLA_S32, 0);
    if (!zero) return false;
    cxla_instr *res[MAXV];
    for (int64_t i = 0; i < nd; i++) {
        const cxla_shape *x = &ops[i]->shape;
        if (!cxla_type_is_array(x->type) || x->rank + 1 > CXLA_MAX_RANK)
            return cv_fail(c, op, "has_dynamic_root: operand %" PRId64 " is not a tensor", i);
        char slice[96];
        snprintf(slice, sizeof slice, "{[%" PRId64 ":%" PRId64 ":1]}", i, i + 1);
        cxla_instr *r1 = cv_emit(c, s, op, CXLA_OP_SLICE, &s32_1, 1, &root_ops);
        if (!r1 || !cv_attr_text(c, op, r1, CXLA_ATTR_SLICE, slice)) return false;
        cxla_instr *r = cv_emit(c, s, op, CXLA_OP_RESHAPE, &s32, 1, &r1);
        int64_t dims[CXLA_MAX_RANK], sizes[CXLA_MAX_RANK];
        dims[0] = 1;
        memcpy(dims + 1, x->dims, sizeof(int64_t) * (size_t)x->rank);
        cxla_shape lead = {.type = x->type, .rank = x->rank + 1, .dims = dims};
        cxla_instr *xr = r ? cv_emit(c, s, op, CXLA_OP_RESHAPE, &lead, 1, &ops[i]) : NULL;
        memcpy(sizes, dims, sizeof(int64_t) * (size_t)lead.rank);
        dims[0] = size;
        cxla_instr *ag = xr ? cv_emit(c, s, op, CXLA_OP_ALL_GATHER, &lead, 1, &xr) : NULL;
        int64_t d0 = 0;
        if (!ag || !collective_attrs(c, op, ag, g, false) ||
            !cv_attr_ints(c, op, ag, CXLA_ATTR_DIMENSIONS, &d0, 1))
            return false;
        cxla_instr *dso[CXLA_MAX_RANK + 1];
        dso[0] = ag;
        dso[1] = r;
        for (int64_t k = 1; k < lead.rank; k++) dso[k + 1] = zero;
        dims[0] = 1;
        cxla_instr *ds = cv_emit(c, s, op, CXLA_OP_DYNAMIC_SLICE, &lead, lead.rank + 1, dso);
        if (!ds || !cv_attr_ints(c, op, ds, CXLA_ATTR_DYNAMIC_SLICE_SIZES, sizes, lead.rank))
            return false;
        if (!(res[i] = cv_emit(c, s, op, CXLA_OP_RESHAPE, &op->out_types[i], 1, &ds))) return false;
    }
    return cv_bind_results(c, s, op, nd == 1 ? res[0] : cv_tuple(c, s, res, nd));
}

/* collective_broadcast and collective_reduce. */
static bool broadcast_or_reduce(cv *c, cv_scope *s, const mlir_op *op, const id_lists *g,
                                bool is_reduce) {
    cxla_instr *ops[MAXV];
    int64_t n;
    if (!cv_operands(c, s, op, ops, MAXV, &n)) return false;
    if (flag_attr(op, "has_dynamic_root")) {
        if (is_reduce || channel_handle(op) > 0)
            return cv_fail(c, op, "not supported: has_dynamic_root with %s",
                           is_reduce ? "collective_reduce" : "a channel (cross-partition)");
        return broadcast_dynamic_root(c, s, op, g, ops, n);
    }
    int mode = group_mode(op, !is_reduce);
    int64_t ids = id_count(c, mode);
    if (ids > MAXG) return cv_fail(c, op, "too many devices");
    bool in_group[MAXG], is_root[MAXG];
    memset(in_group, 0, sizeof(bool) * (size_t)ids);
    memset(is_root, 0, sizeof(bool) * (size_t)ids);
    bool all_roots = true;
    for (int64_t r = 0; r < g->rows; r++)
        for (int64_t j = 0; j < g->row_len[r]; j++) {
            int64_t v = g->ids[g->row_start[r] + j];
            if (v < 0 || v >= ids) continue;
            in_group[v] = true;
            is_root[v] = j == 0;
            if (j > 0) all_roots = false;
        }
    bool missing = false;
    for (int64_t i = 0; i < ids && g->rows > 0; i++)
        if (!in_group[i]) missing = true;
    if (missing && is_reduce)
        return cv_fail(c, op,
                       "not supported: collective_reduce whose replica_groups leave out some "
                       "processes");
    if (missing) return broadcast_by_permutes(c, s, op, g, mode, ids, in_group, is_root, ops, n);
    cxla_instr *in = emit_broadcast_or_reduce(c, s, op, g, is_reduce, ops, n);
    if (!in) return false;
    /* collective_reduce: only each group's root (its first member) keeps the reduction. */
    if (!is_reduce || all_roots) return cv_bind_results(c, s, op, in);
    cxla_instr *res[MAXV];
    for (int64_t i = 0; i < n; i++) {
        cxla_instr *v = n == 1 ? in : cv_gte(c, s, in, i);
        if (!v || !(res[i] = zero_unless(c, s, op, v, mode, is_root, ids))) return false;
    }
    return cv_bind_results(c, s, op, n == 1 ? res[0] : cv_tuple(c, s, res, n));
}

static bool host_op(cv *c, cv_scope *s, const mlir_op *op, const char *sh) {
    cxla_instr *ops[MAXV];
    int64_t n;
    if (!cv_operands(c, s, op, ops, MAXV, &n)) return false;
    cxla_shape token = {.type = CXLA_TOKEN};
    cxla_shape u32 = {.type = CXLA_U32};
    int64_t h = channel_handle(op);
    bool host = flag_attr(op, "is_host_transfer");
    if (strcmp(sh, "infeed") == 0 || strcmp(sh, "recv") == 0) {
        if (n != 1 || op->out_type_count < 1)
            return cv_fail(c, op, "expected (token) -> (..., token)");
        int64_t nd = op->out_type_count - 1;
        cxla_shape data = tuple_shape(c, op->out_types, nd);
        bool is_recv = sh[0] == 'r';
        /* recv's data is its one value, or a tuple of several; infeed's is a tuple. */
        if (is_recv && nd == 1) data = op->out_types[0];
        cxla_instr *v;
        if (is_recv) {
            cxla_shape st3[3] = {data, u32, token};
            cxla_shape rs = tuple_shape(c, st3, 3);
            cxla_instr *r = cv_emit(c, s, op, CXLA_OP_RECV, &rs, 1, ops);
            if (!r || !cv_attr_int(c, op, r, CXLA_ATTR_CHANNEL_ID, h)) return false;
            if (host && !cv_attr_text(c, op, r, CXLA_ATTR_IS_HOST_TRANSFER, "true")) return false;
            cxla_shape st2[2] = {data, token};
            cxla_shape ds = tuple_shape(c, st2, 2);
            v = cv_emit(c, s, op, CXLA_OP_RECV_DONE, &ds, 1, &r);
            if (!v || !cv_attr_int(c, op, v, CXLA_ATTR_CHANNEL_ID, h)) return false;
            if (host && !cv_attr_text(c, op, v, CXLA_ATTR_IS_HOST_TRANSFER, "true")) return false;
        } else {
            cxla_shape st2[2] = {data, token};
            cxla_shape rs = tuple_shape(c, st2, 2);
            v = cv_emit(c, s, op, CXLA_OP_INFEED, &rs, 1, ops);
            const mlir_attr *cfg = mlir_op_attr(op, "infeed_config");
            if (v && cfg && cfg->kind == MA_STRING && cfg->slen) {
                cxla_strbuf b;
                cxla_strbuf_init(&b);
                cxla_strbuf_putc(&b, '"');
                for (size_t i = 0; i < cfg->slen; i++) {
                    if (cfg->s[i] == '"' || cfg->s[i] == '\\') cxla_strbuf_putc(&b, '\\');
                    cxla_strbuf_putc(&b, cfg->s[i]);
                }
                cxla_strbuf_putc(&b, '"');
                bool ok = cv_attr_text(c, op, v, CXLA_ATTR_INFEED_CONFIG, b.data);
                cxla_strbuf_free(&b);
                if (!ok) return false;
            }
        }
        cxla_instr *d = cv_gte(c, s, v, 0), *t = cv_gte(c, s, v, 1);
        if (!d || !t) return false;
        cxla_instr *res[MAXV];
        if (nd >= MAXV) return cv_fail(c, op, "too many results");
        for (int64_t i = 0; i < nd; i++)
            if (!(res[i] = (is_recv && nd == 1) ? d : cv_gte(c, s, d, i))) return false;
        res[nd] = t;
        return cv_bind_results(c, s, op, nd == 0 ? t : cv_tuple(c, s, res, nd + 1));
    }
    /* send / outfeed (inputs..., token) -> token */
    if (n < 1 || ops[n - 1]->shape.type != CXLA_TOKEN)
        return cv_fail(c, op, "expected (inputs..., token)");
    cxla_instr *data = n == 2 && sh[0] == 's' ? ops[0] : cv_tuple(c, s, ops, n - 1);
    if (!data) return false;
    cxla_instr *two[2] = {data, ops[n - 1]};
    cxla_instr *done;
    if (sh[0] == 's') {
        cxla_shape st3[3] = {data->shape, u32, token};
        cxla_shape rs = tuple_shape(c, st3, 3);
        cxla_instr *snd = cv_emit(c, s, op, CXLA_OP_SEND, &rs, 2, two);
        if (!snd || !cv_attr_int(c, op, snd, CXLA_ATTR_CHANNEL_ID, h)) return false;
        if (host && !cv_attr_text(c, op, snd, CXLA_ATTR_IS_HOST_TRANSFER, "true")) return false;
        done = cv_emit(c, s, op, CXLA_OP_SEND_DONE, &token, 1, &snd);
        if (!done || !cv_attr_int(c, op, done, CXLA_ATTR_CHANNEL_ID, h)) return false;
        if (host && !cv_attr_text(c, op, done, CXLA_ATTR_IS_HOST_TRANSFER, "true")) return false;
    } else {
        done = cv_emit(c, s, op, CXLA_OP_OUTFEED, &token, 2, two);
        if (!done) return false;
    }
    return cv_bind_results(c, s, op, done);
}

bool cv_collective(cv *c, cv_scope *s, const mlir_op *op, const char *sh, bool *handled) {
    *handled = true;
    if (strcmp(sh, "infeed") == 0 || strcmp(sh, "outfeed") == 0 || strcmp(sh, "send") == 0 ||
        strcmp(sh, "recv") == 0)
        return host_op(c, s, op, sh);
    static const struct {
        const char *name;
        cxla_opcode opcode;
        const char *dim; /* the dimension attribute, if any */
        bool region;
    } kinds[] = {
        {"all_reduce", CXLA_OP_ALL_REDUCE, NULL, true},
        {"all_gather", CXLA_OP_ALL_GATHER, "all_gather_dim", false},
        {"reduce_scatter", CXLA_OP_REDUCE_SCATTER, "scatter_dimension", true},
    };
    id_lists *g = malloc(sizeof *g);
    if (!g) return cv_fail(c, op, "out of memory");
    bool ok = false;
    if (strcmp(sh, "collective_permute") == 0) {
        cxla_instr *x;
        if (!(x = cv_one_operand(c, s, op))) goto done;
        if (op->out_type_count != 1) {
            cv_fail(c, op, "expected one result type");
            goto done;
        }
        if (!read_id_lists(c, op, "source_target_pairs", g)) goto done;
        cxla_instr *in = cv_emit(c, s, op, CXLA_OP_COLLECTIVE_PERMUTE, &op->out_types[0], 1, &x);
        cxla_strbuf b;
        cxla_strbuf_init(&b);
        id_lists_text(g, &b);
        ok = in && cv_attr_text(c, op, in, CXLA_ATTR_SOURCE_TARGET_PAIRS, b.data);
        cxla_strbuf_free(&b);
        int64_t h = channel_handle(op);
        if (ok && h > 0) ok = cv_attr_int(c, op, in, CXLA_ATTR_CHANNEL_ID, h);
        ok = ok && cv_bind_results(c, s, op, in);
        goto done;
    }
    if (!read_id_lists(c, op, "replica_groups", g)) goto done;
    if (strcmp(sh, "all_to_all") == 0) {
        ok = all_to_all(c, s, op, g);
        goto done;
    }
    if (strcmp(sh, "collective_broadcast") == 0 || strcmp(sh, "collective_reduce") == 0) {
        ok = broadcast_or_reduce(c, s, op, g, sh[11] == 'r');
        goto done;
    }
    for (size_t k = 0; k < CXLA_ARRAY_SIZE(kinds); k++) {
        if (strcmp(sh, kinds[k].name) != 0) continue;
        cxla_instr *ops[MAXV];
        int64_t n;
        if (!cv_operands(c, s, op, ops, MAXV, &n)) goto done;
        cxla_shape rs = results_of(c, op);
        cxla_instr *in = cv_emit(c, s, op, kinds[k].opcode, &rs, n, ops);
        if (!collective_attrs(c, op, in, g, true)) goto done;
        if (kinds[k].dim) {
            const mlir_attr *a = mlir_op_attr(op, kinds[k].dim);
            int64_t d = a ? a->i : 0;
            if (!cv_attr_ints(c, op, in, CXLA_ATTR_DIMENSIONS, &d, 1)) goto done;
        }
        if (kinds[k].region) {
            if (op->region_count != 1) {
                cv_fail(c, op, "expected a reducer region");
                goto done;
            }
            cxla_computation *comp = cv_apply_region(c, s, op, op->regions[0], "reducer");
            if (!comp || !cv_attr_comps(c, op, in, CXLA_ATTR_TO_APPLY, &comp, 1)) goto done;
        }
        ok = cv_bind_results(c, s, op, in);
        goto done;
    }
    *handled = false;
    ok = true;
done:
    free(g);
    return ok;
}

/* ---- interpreter.run_parallel: conversion ------------------------------------------- */

static void put_shape(cxla_strbuf *b, const char *what, const cxla_shape *sh) {
    cxla_strbuf_printf(b, "%s %s ", what,
                       sh->type == CXLA_TOKEN ? "token" : cxla_type_name(sh->type));
    if (sh->rank == 0) cxla_strbuf_putc(b, '-');
    for (int64_t i = 0; i < sh->rank; i++)
        cxla_strbuf_printf(b, "%s%" PRId64, i ? "," : "", sh->dims[i]);
    cxla_strbuf_putc(b, '\n');
}

/* The device module's entry for devices that run different programs (see the top). */
static cxla_computation *dispatch_entry(cv *sub, const mlir_op *op, cxla_computation **comps,
                                        const mlir_func **funcs, int64_t devices,
                                        cxla_instr *const *inputs, int64_t input_count) {
    cv_scope *e = cv_new_scope(sub, NULL, "run_parallel_entry", op);
    if (!e) return NULL;
    cxla_instr **params =
        cxla_arena_alloc_array(sub->m->arena, (size_t)input_count + 1, sizeof(*params));
    if (!params) return cv_fail(sub, op, "out of memory"), NULL;
    for (int64_t k = 0; k < input_count; k++)
        if (!(params[k] = cv_add_param(sub, e, op, &inputs[k]->shape, k))) return NULL;
    cxla_instr *all = cv_tuple(sub, e, params, input_count);
    cxla_instr *index = device_id(sub, e, op, 2);
    if (!all || !index) return NULL;
    int64_t nres = op->out_type_count;
    cxla_shape rs = tuple_shape(sub, op->out_types, nres);
    cxla_computation **branches =
        cxla_arena_alloc_array(sub->m->arena, (size_t)devices, sizeof(*branches));
    cxla_instr **cond_ops =
        cxla_arena_alloc_array(sub->m->arena, (size_t)devices + 1, sizeof(*cond_ops));
    cxla_instr **vals = cxla_arena_alloc_array(sub->m->arena, (size_t)nres + 1, sizeof(*vals));
    if (!branches || !cond_ops || !vals) return cv_fail(sub, op, "out of memory"), NULL;
    cond_ops[0] = index;
    int64_t a_off = 0, r_off = 0;
    for (int64_t d = 0; d < devices; d++) {
        char name[64];
        snprintf(name, sizeof name, "device_%" PRId64, d);
        cv_scope *b = cv_new_scope(sub, NULL, name, op);
        if (!b) return NULL;
        cxla_instr *p = cv_add_param(sub, b, op, &all->shape, 0);
        int64_t na = funcs[d]->body->arg_count, nr = funcs[d]->result_count;
        cxla_instr **args = cxla_arena_alloc_array(sub->m->arena, (size_t)na + 1, sizeof(*args));
        if (!p || !args) return cv_fail(sub, op, "out of memory"), NULL;
        for (int64_t k = 0; k < na; k++)
            if (!(args[k] = cv_gte(sub, b, p, a_off + k))) return NULL;
        cxla_instr *call = cv_emit(sub, b, op, CXLA_OP_CALL, &comps[d]->root->shape, na, args);
        if (!call || !cv_attr_comps(sub, op, call, CXLA_ATTR_TO_APPLY, &comps[d], 1)) return NULL;
        for (int64_t j = 0; j < nres; j++) {
            if (j >= r_off && j < r_off + nr)
                vals[j] = nr == 1 ? call : cv_gte(sub, b, call, j - r_off);
            else
                vals[j] = zeros_like(sub, b, op, &op->out_types[j]);
            if (!vals[j]) return NULL;
        }
        if (!cv_finish_comp(sub, b, op, cv_tuple(sub, b, vals, nres))) return NULL;
        branches[d] = b->comp;
        cond_ops[d + 1] = all;
        a_off += na;
        r_off += nr;
    }
    cxla_instr *cond = cv_emit(sub, e, op, CXLA_OP_CONDITIONAL, &rs, devices + 1, cond_ops);
    if (!cond || !cv_attr_comps(sub, op, cond, CXLA_ATTR_BRANCH_COMPUTATIONS, branches, devices))
        return NULL;
    if (!cv_finish_comp(sub, e, op, cond)) return NULL;
    return e->comp;
}

bool cv_run_parallel(cv *c, cv_scope *s, const mlir_op *op) {
    if (c->parallel_depth >= 4)
        return cv_fail(c, op, "run_parallel nested more than 4 deep (a program that runs itself?)");
    const mlir_attr *pa = mlir_op_attr(op, "programs");
    if (!pa || pa->kind != MA_ARRAY || pa->count < 1 || pa->items[0]->kind != MA_ARRAY ||
        pa->items[0]->count < 1)
        return cv_fail(c, op, "programs must be a non-empty list of lists of functions");
    int64_t R = pa->count, P = pa->items[0]->count, n_dev;
    if (!cxla_mul_i64(R, P, &n_dev) || n_dev > MAXV) return cv_fail(c, op, "too many devices");
    const mlir_func **funcs = cxla_arena_alloc_array(c->m->arena, (size_t)n_dev, sizeof(*funcs));
    if (!funcs) return cv_fail(c, op, "out of memory");
    bool same = true;
    int64_t n_in = 0, n_out = 0;
    for (int64_t r = 0; r < R; r++) {
        const mlir_attr *row = pa->items[r];
        if (row->kind != MA_ARRAY || row->count != P)
            return cv_fail(c, op, "every row of programs must have %" PRId64 " entries", P);
        for (int64_t p = 0; p < P; p++) {
            const mlir_attr *f = row->items[p];
            if (f->kind != MA_SYMBOL) return cv_fail(c, op, "programs must name functions");
            const mlir_func *fn = cxla_strmap_get(&c->funcs, f->s, strlen(f->s));
            if (!fn) return cv_fail(c, op, "programs: unknown function @%s", f->s);
            funcs[r * P + p] = fn;
            if (fn != funcs[0]) same = false;
            n_in += fn->body->arg_count;
            n_out += fn->result_count;
        }
    }
    cxla_instr *ops[MAXV];
    int64_t n;
    if (!cv_operands(c, s, op, ops, MAXV, &n)) return false;
    if (n != n_in)
        return cv_fail(c, op, "%" PRId64 " inputs, but the programs take %" PRId64, n, n_in);
    if (op->out_type_count != n_out)
        return cv_fail(c, op, "%" PRId64 " results, but the programs return %" PRId64,
                       op->out_type_count, n_out);
    for (int64_t k = 0; k < n; k++)
        if (!cxla_type_is_array(ops[k]->shape.type) && ops[k]->shape.type != CXLA_TOKEN)
            return cv_fail(c, op, "input %" PRId64 " is neither a tensor nor a token", k);
    for (int64_t j = 0; j < n_out; j++)
        if (!cxla_type_is_array(op->out_types[j].type) && op->out_types[j].type != CXLA_TOKEN)
            return cv_fail(c, op, "result %" PRId64 " is neither a tensor nor a token", j);
    /* The infeed functions, called here: their values feed the devices' infeed queue. */
    int64_t n_feed = 0;
    const mlir_attr *fa = mlir_op_attr(op, "infeed");
    if (fa && fa->kind == MA_ARRAY) {
        for (int64_t i = 0; i < fa->count; i++) {
            if (fa->items[i]->kind != MA_SYMBOL || n + n_feed >= MAXV)
                return cv_fail(c, op, "infeed must name functions");
            cxla_computation *q = cv_func(c, op, fa->items[i]->s);
            if (!q) return false;
            if (!cxla_type_is_array(q->root->shape.type))
                return cv_fail(c, op, "infeed function @%s must return one tensor",
                               fa->items[i]->s);
            cxla_instr *call = cv_emit(c, s, op, CXLA_OP_CALL, &q->root->shape, 0, NULL);
            if (!call || !cv_attr_comps(c, op, call, CXLA_ATTR_TO_APPLY, &q, 1)) return false;
            ops[n + n_feed++] = call;
        }
    }

    /* The device module. */
    cv sub;
    memset(&sub, 0, sizeof sub);
    sub.mm = c->mm;
    sub.funcs = c->funcs;
    sub.parallel_depth = c->parallel_depth + 1;
    sub.block_depth = c->block_depth;
    cxla_status st = cxla_module_create("run_parallel", &sub.m);
    if (st) return cv_status(c, op, st);
    cxla_strmap_init(&sub.func_comps, sub.m->arena);
    cxla_strmap_init(&sub.instr_origins, c->mm->arena);
    cxla_strmap_init(&sub.comp_origins, c->mm->arena);
    sub.m->replica_count = R;
    sub.m->num_partitions = P;
    cxla_computation **comps = cxla_arena_alloc_array(sub.m->arena, (size_t)n_dev, sizeof(*comps));
    cxla_computation *entry = NULL;
    if (!comps) {
        cv_fail(&sub, op, "out of memory");
    } else {
        for (int64_t d = 0; d < n_dev && !sub.err; d++)
            comps[d] = cv_func(&sub, op, funcs[d]->name);
        if (!sub.err)
            entry = same ? comps[0] : dispatch_entry(&sub, op, comps, funcs, n_dev, ops, n);
    }
    if (entry && !sub.err) cv_order_module(&sub, entry);
    if (!sub.err) {
        cxla_status v = cxla_verify_module(sub.m);
        if (v) sub.err = cv_verifier_error(&sub, v); /* in the device functions' terms */
    }
    char *text = sub.err ? NULL : cxla_hlo_print(sub.m, CXLA_HLO_STYLE_LONG);
    cxla_module_destroy(sub.m);
    if (sub.err) {
        if (!c->err)
            c->err = sub.err;
        else
            cxla_status_free(sub.err);
        return false;
    }
    if (!text) return cv_fail(c, op, "out of memory");

    /* backend_config: the layout of inputs and results, then the device module. */
    cxla_strbuf cfg;
    cxla_strbuf_init(&cfg);
    cxla_strbuf_printf(&cfg, "replicas %" PRId64 "\npartitions %" PRId64 "\ndispatch %d\n", R, P,
                       same ? 0 : 1);
    cxla_strbuf_printf(&cfg, "inputs %" PRId64 "\ninfeed %" PRId64 "\nresults %" PRId64 "\n", n,
                       n_feed, n_out);
    int64_t a_off = 0, r_off = 0;
    for (int64_t d = 0; d < n_dev; d++) {
        cxla_strbuf_printf(&cfg, "device %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 "\n", a_off,
                           funcs[d]->body->arg_count, r_off, funcs[d]->result_count);
        a_off += funcs[d]->body->arg_count;
        r_off += funcs[d]->result_count;
    }
    for (int64_t k = 0; k < n + n_feed; k++) put_shape(&cfg, "operand", &ops[k]->shape);
    for (int64_t j = 0; j < n_out; j++) put_shape(&cfg, "result", &op->out_types[j]);
    cxla_strbuf_puts(&cfg, "module\n");
    cxla_strbuf_puts(&cfg, text);
    free(text);
    cxla_strbuf quoted;
    cxla_strbuf_init(&quoted);
    cxla_strbuf_putc(&quoted, '"');
    for (size_t i = 0; i < cfg.len; i++) {
        char ch = cfg.data[i];
        if (ch == '"' || ch == '\\') {
            cxla_strbuf_putc(&quoted, '\\');
            cxla_strbuf_putc(&quoted, ch);
        } else if (ch == '\n') {
            cxla_strbuf_puts(&quoted, "\\n");
        } else if ((unsigned char)ch < 0x20) {
            cxla_strbuf_printf(&quoted, "\\x%02x", (unsigned char)ch);
        } else {
            cxla_strbuf_putc(&quoted, ch);
        }
    }
    cxla_strbuf_putc(&quoted, '"');
    cxla_strbuf_free(&cfg);

    cv_register_parallel_target();
    cxla_shape rs = n_out == 1 ? op->out_types[0] : tuple_shape(c, op->out_types, n_out);
    cxla_instr *in = cv_emit(c, s, op, CXLA_OP_CUSTOM_CALL, &rs, n + n_feed, ops);
    char target[64];
    snprintf(target, sizeof target, "\"%s\"", CV_PARALLEL_TARGET);
    bool ok =
        in && cv_attr_text(c, op, in, CXLA_ATTR_CUSTOM_CALL_TARGET, target) &&
        cv_attr_text(c, op, in, CXLA_ATTR_CUSTOM_CALL_HAS_SIDE_EFFECT, "true") &&
        cv_attr_text(c, op, in, CXLA_ATTR_API_VERSION, "API_VERSION_STATUS_RETURNING_UNIFIED") &&
        cv_attr_text(c, op, in, CXLA_ATTR_BACKEND_CONFIG, quoted.data);
    cxla_strbuf_free(&quoted);
    return ok && (n_out == 0 || cv_bind_results(c, s, op, in));
}

/* ---- interpreter.run_parallel: the run ----------------------------------------------- */

typedef struct mailbox_item {
    int64_t channel;
    cxla_literal *value;
    struct mailbox_item *next;
} mailbox_item;

typedef struct par_host {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    cxla_literal **feed; /* the infeed queue; taken items are NULL */
    int64_t feed_count, feed_next;
    mailbox_item *head, *tail; /* sends not yet received, oldest first */
} par_host;

static cxla_status host_infeed(void *user, const cxla_shape *shape, const char *config,
                               cxla_literal **out) {
    (void)config;
    par_host *h = user;
    int64_t want = shape->type == CXLA_TUPLE ? shape->tuple_count : 1;
    pthread_mutex_lock(&h->lock);
    if (h->feed_count - h->feed_next < want) {
        pthread_mutex_unlock(&h->lock);
        return cxla_error(CXLA_STATUS_OUT_OF_RANGE,
                          "the infeed queue of run_parallel has %" PRId64
                          " values left, the infeed reads %" PRId64,
                          h->feed_count - h->feed_next, want);
    }
    cxla_literal *items[MAXV];
    for (int64_t i = 0; i < want && i < MAXV; i++) {
        items[i] = h->feed[h->feed_next];
        h->feed[h->feed_next++] = NULL;
    }
    pthread_mutex_unlock(&h->lock);
    if (shape->type != CXLA_TUPLE) {
        *out = items[0];
        return NULL;
    }
    cxla_status s = cxla_literal_create_tuple(items, want, out);
    if (s)
        for (int64_t i = 0; i < want; i++) cxla_literal_free(items[i]);
    return s;
}

static cxla_status host_outfeed(void *user, const cxla_literal *data, const cxla_shape *shape,
                                const char *config) {
    (void)user;
    (void)data;
    (void)shape;
    (void)config;
    return NULL; /* run_parallel returns no outfeed */
}

static cxla_status host_send(void *user, int64_t channel_id, bool is_host_transfer,
                             const cxla_literal *data) {
    (void)is_host_transfer;
    par_host *h = user;
    mailbox_item *m = calloc(1, sizeof *m);
    if (!m) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    cxla_status s = cxla_literal_clone(data, &m->value);
    if (s) {
        free(m);
        return s;
    }
    m->channel = channel_id;
    pthread_mutex_lock(&h->lock);
    if (h->tail)
        h->tail->next = m;
    else
        h->head = m;
    h->tail = m;
    pthread_cond_broadcast(&h->changed);
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

static cxla_status host_recv(void *user, int64_t channel_id, bool is_host_transfer,
                             const cxla_shape *shape, cxla_literal **out) {
    (void)is_host_transfer;
    (void)shape;
    par_host *h = user;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)PARALLEL_TIMEOUT_SECONDS;
    pthread_mutex_lock(&h->lock);
    for (;;) {
        mailbox_item *prev = NULL;
        for (mailbox_item *m = h->head; m; prev = m, m = m->next) {
            if (m->channel != channel_id) continue;
            if (prev)
                prev->next = m->next;
            else
                h->head = m->next;
            if (h->tail == m) h->tail = prev;
            pthread_mutex_unlock(&h->lock);
            *out = m->value;
            free(m);
            return NULL;
        }
        if (pthread_cond_timedwait(&h->changed, &h->lock, &until) == ETIMEDOUT) break;
    }
    pthread_mutex_unlock(&h->lock);
    return cxla_error(CXLA_STATUS_DEADLINE_EXCEEDED,
                      "recv on channel %" PRId64 " waited %g s and no send came", channel_id,
                      PARALLEL_TIMEOUT_SECONDS);
}

/* Reads "WORD N" from the configuration at |*p|. */
static bool read_field(const char **p, const char *word, int64_t *out, int64_t count) {
    size_t n = strlen(word);
    if (strncmp(*p, word, n) != 0 || (*p)[n] != ' ') return false;
    char *e = (char *)*p + n;
    for (int64_t i = 0; i < count; i++) {
        out[i] = strtoll(e, &e, 10);
        if (*e != ' ' && *e != '\n') return false;
    }
    if (*e != '\n') return false;
    *p = e + 1;
    return true;
}

/* Reads "WORD TYPE DIMS" into a shape (dims in |dims|). */
static bool read_shape(const char **p, const char *word, cxla_shape *sh, int64_t *dims) {
    size_t n = strlen(word);
    if (strncmp(*p, word, n) != 0 || (*p)[n] != ' ') return false;
    const char *t = *p + n + 1;
    const char *sp = strchr(t, ' ');
    if (!sp) return false;
    memset(sh, 0, sizeof *sh);
    sh->dims = dims;
    if ((size_t)(sp - t) == 5 && strncmp(t, "token", 5) == 0)
        sh->type = CXLA_TOKEN;
    else
        sh->type = cxla_type_from_name(t, (size_t)(sp - t));
    if (sh->type == CXLA_TYPE_INVALID) return false;
    char *e = (char *)sp + 1;
    if (*e == '-') {
        e++;
    } else {
        while (*e != '\n' && sh->rank < CXLA_MAX_RANK) {
            dims[sh->rank++] = strtoll(e, &e, 10);
            if (*e == ',')
                e++;
            else if (*e != '\n')
                return false;
        }
    }
    if (*e != '\n') return false;
    *p = e + 1;
    return true;
}

static cxla_status bad_config(void) {
    return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "malformed run_parallel configuration");
}

static cxla_status run_parallel(void *out, const void **in, const char *cfg) {
    const char *p = cfg;
    int64_t R, P, dispatch, n_in, n_feed, n_out;
    if (!read_field(&p, "replicas", &R, 1) || !read_field(&p, "partitions", &P, 1) ||
        !read_field(&p, "dispatch", &dispatch, 1) || !read_field(&p, "inputs", &n_in, 1) ||
        !read_field(&p, "infeed", &n_feed, 1) || !read_field(&p, "results", &n_out, 1) || R < 1 ||
        P < 1 || R * P > MAXV || n_in < 0 || n_feed < 0 || n_out < 0 || n_in + n_feed > MAXV ||
        n_out > MAXV)
        return bad_config();
    int64_t n_dev = R * P, n_ops = n_in + n_feed;
    int64_t *layout = calloc((size_t)n_dev * 4, sizeof(int64_t));
    cxla_literal **lits = calloc((size_t)n_ops + 1, sizeof(*lits));
    cxla_literal **results = calloc((size_t)n_dev, sizeof(*results));
    const cxla_literal ***args = calloc((size_t)n_dev, sizeof(*args));
    cxla_shape *res_shapes = calloc((size_t)n_out + 1, sizeof(*res_shapes));
    int64_t *res_dims = calloc(((size_t)n_out + 1) * CXLA_MAX_RANK, sizeof(int64_t));
    cxla_module *m = NULL;
    par_host host;
    memset(&host, 0, sizeof host);
    pthread_mutex_init(&host.lock, NULL);
    pthread_cond_init(&host.changed, NULL);
    cxla_status s = NULL;
    if (!layout || !lits || !results || !args || !res_shapes || !res_dims)
        s = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    for (int64_t d = 0; d < n_dev && !s; d++)
        if (!read_field(&p, "device", &layout[4 * d], 4)) s = bad_config();
    for (int64_t k = 0; k < n_ops && !s; k++) {
        cxla_shape sh;
        int64_t dims[CXLA_MAX_RANK];
        if (!read_shape(&p, "operand", &sh, dims)) {
            s = bad_config();
            break;
        }
        s = cxla_literal_create(&sh, &lits[k]);
        if (!s && sh.type != CXLA_TOKEN) {
            size_t bytes = (size_t)cxla_literal_element_count(lits[k]) * cxla_type_storage(sh.type);
            if (bytes) memcpy(cxla_literal_data(lits[k]), in[k], bytes);
        }
    }
    for (int64_t j = 0; j < n_out && !s; j++)
        if (!read_shape(&p, "result", &res_shapes[j], res_dims + j * CXLA_MAX_RANK))
            s = bad_config();
    if (!s && strncmp(p, "module\n", 7) != 0) s = bad_config();
    if (!s) s = cxla_hlo_parse(p + 7, (size_t)-1, "run_parallel device module", &m);
    if (!s) s = cxla_verify_module(m);
    for (int64_t d = 0; d < n_dev && !s; d++) {
        int64_t a_off = layout[4 * d], a_cnt = layout[4 * d + 1];
        if (a_off < 0 || a_cnt < 0 || a_off + a_cnt > n_in)
            s = bad_config();
        else
            args[d] = (const cxla_literal **)(dispatch ? lits : lits + a_off);
    }
    int64_t arg_count = dispatch ? n_in : (n_dev ? layout[1] : 0);
    if (!s) {
        host.feed = lits + n_in;
        host.feed_count = n_feed;
        exec_host ih = {.user = &host,
                        .infeed = host_infeed,
                        .outfeed = host_outfeed,
                        .send = host_send,
                        .recv = host_recv};
        exec_devices_options o = {.replica_count = R,
                                  .partition_count = P,
                                  .timeout_seconds = PARALLEL_TIMEOUT_SECONDS,
                                  .host = &ih,
                                  .cancel = exec_cancel_current()};
        s = exec_run_devices(m, &o, (const cxla_literal *const *const *)args, arg_count, results);
    }
    /* Device d's results, into the custom call's result leaves. */
    for (int64_t d = 0; d < n_dev && !s; d++) {
        int64_t r_off = layout[4 * d + 2], r_cnt = layout[4 * d + 3];
        for (int64_t j = r_off; j < r_off + r_cnt && !s; j++) {
            if (j < 0 || j >= n_out) {
                s = bad_config();
                break;
            }
            const cxla_literal *v = results[d];
            if (dispatch)
                v = cxla_literal_tuple_element_const(v, j);
            else if (r_cnt > 1)
                v = cxla_literal_tuple_element_const(v, j - r_off);
            if (!v) {
                s = cxla_error(CXLA_STATUS_INTERNAL, "run_parallel: a result is missing");
                break;
            }
            if (res_shapes[j].type == CXLA_TOKEN) continue;
            void *dst = n_out == 1 ? out : ((void **)out)[j];
            size_t bytes = cxla_literal_byte_size(v);
            if (dst && bytes) memcpy(dst, cxla_literal_data_const(v), bytes);
        }
    }
    for (int64_t d = 0; results && d < n_dev; d++) cxla_literal_free(results[d]);
    for (int64_t k = 0; lits && k < n_ops; k++) cxla_literal_free(lits[k]);
    while (host.head) {
        mailbox_item *nx = host.head->next;
        cxla_literal_free(host.head->value);
        free(host.head);
        host.head = nx;
    }
    pthread_cond_destroy(&host.changed);
    pthread_mutex_destroy(&host.lock);
    cxla_module_destroy(m);
    free(layout);
    free(lits);
    free(results);
    free(args);
    free(res_shapes);
    free(res_dims);
    return s;
}

static void parallel_target(void *out, const void **in, const char *opaque, size_t opaque_len,
                            cxla_custom_call_status *status) {
    char *cfg = malloc(opaque_len + 1);
    if (!cfg) {
        cxla_custom_call_status_set_failure(status, "out of memory");
        return;
    }
    memcpy(cfg, opaque, opaque_len);
    cfg[opaque_len] = 0;
    cxla_status s = run_parallel(out, in, cfg);
    free(cfg);
    if (s) {
        cxla_custom_call_status_set_failure(status, cxla_status_message(s));
        cxla_status_free(s);
    }
}

void cv_register_parallel_target(void) {
    static bool done;
    if (done) return;
    cxla_status st =
        cxla_custom_call_register(CV_PARALLEL_TARGET, (cxla_custom_call_fn)parallel_target,
                                  CXLA_CUSTOM_CALL_API_STATUS_RETURNING_UNIFIED);
    cxla_status_free(st);
    done = true;
}
