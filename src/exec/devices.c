/* How many devices a module names (devices.h). */
#include "exec/devices.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

/* What kind of id a collective's replica_groups hold (exec/collective.c's group modes). */
enum id_kind { ID_REPLICA, ID_PARTITION, ID_DEVICE };

/* Records that |in| names id |id| of |need|'s kind in |where|. */
static void name_id(exec_device_need *need, int64_t id, const cxla_instr *in, const char *where) {
    if (id < 0 || id == INT64_MAX || id + 1 <= need->count) return;
    need->count = id + 1;
    need->by = in;
    need->where = where;
}

static exec_device_need *need_of(exec_device_needs *n, enum id_kind k) {
    return k == ID_PARTITION ? &n->partitions : k == ID_DEVICE ? &n->devices : &n->replicas;
}

/* The kind of ids of |op|'s replica_groups or source_target_pairs; |op| is a collective
 * that names devices (false otherwise). */
static bool id_kind_of(const cxla_instr *in, cxla_opcode op, enum id_kind *out) {
    int64_t channel;
    bool has_channel = cxla_instr_int(in, CXLA_ATTR_CHANNEL_ID, &channel);
    switch (op) {
    case CXLA_OP_ALL_REDUCE:
    case CXLA_OP_ALL_REDUCE_START:
    case CXLA_OP_ALL_GATHER:
    case CXLA_OP_ALL_GATHER_START:
    case CXLA_OP_REDUCE_SCATTER:
    case CXLA_OP_COLLECTIVE_REDUCE:
        *out = !has_channel                                           ? ID_REPLICA
               : cxla_instr_bool(in, CXLA_ATTR_USE_GLOBAL_DEVICE_IDS) ? ID_DEVICE
                                                                      : ID_REPLICA;
        return true;
    case CXLA_OP_ALL_TO_ALL:
    case CXLA_OP_RAGGED_ALL_TO_ALL:
    case CXLA_OP_COLLECTIVE_BROADCAST:
    case CXLA_OP_COLLECTIVE_PERMUTE:
    case CXLA_OP_COLLECTIVE_PERMUTE_START:
        *out = has_channel ? ID_PARTITION : ID_REPLICA;
        return true;
    default: return false;
    }
}

/* ---- shardings (kept as text by the parser) ------------------------------------------ */

/* Reads a non-negative decimal at *p (after spaces); false when there is none. */
static bool read_int(const char **p, int64_t *out) {
    const char *s = *p;
    while (*s == ' ') s++;
    if (!isdigit((unsigned char)*s)) return false;
    int64_t v = 0;
    while (isdigit((unsigned char)*s)) {
        int d = *s++ - '0';
        v = v > (INT64_MAX - d) / 10 ? INT64_MAX : v * 10 + d;
    }
    *p = s;
    *out = v;
    return true;
}

/* The largest device id that sharding text |s| names (-1: none): the ids listed after
 * "devices=[dims]", every id below the product of dims in the iota form
 * "devices=[dims]<=[...]", and N in "maximal device=N", in every sharding of a tuple. */
static int64_t sharding_max_device(const char *s) {
    int64_t max = -1;
    for (const char *p = s; *p; p++) {
        bool word_start = p == s || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
        if (word_start && strncmp(p, "devices=[", 9) == 0) {
            const char *q = p + 9;
            int64_t product = 1, d;
            while (read_int(&q, &d)) {
                if (!cxla_mul_i64(product, d, &product)) product = INT64_MAX;
                while (*q == ' ') q++;
                if (*q == ',') q++;
            }
            if (*q != ']') continue;
            q++;
            while (*q == ' ') q++;
            if (q[0] == '<' && q[1] == '=') { /* iota: ids 0 .. product-1 */
                if (product > 0 && product - 1 > max) max = product - 1;
            } else {
                while (read_int(&q, &d)) {
                    if (d > max) max = d;
                    while (*q == ' ') q++;
                    if (*q != ',') break;
                    q++;
                }
            }
            p = q - 1;
        } else if (word_start && strncmp(p, "device=", 7) == 0) {
            const char *q = p + 7;
            int64_t d;
            if (read_int(&q, &d) && d > max) max = d;
        }
    }
    return max;
}

/* ---- the walk ------------------------------------------------------------------------- */

/* The first id that explicit groups |g| leave out bounds the run: a device with it would
 * be in no group. Ids past a bound that no run reaches are not looked at. */
static void bound_by_groups(exec_device_need *need, const cxla_replica_groups *g,
                            const cxla_instr *in) {
    enum { LOOKED_AT = 1 << 16 };
    uint8_t *seen = calloc(LOOKED_AT, 1);
    if (!seen) return; /* out of memory: no bound */
    for (int64_t i = 0; i < g->group_count; i++)
        for (int64_t j = 0; j < g->group_sizes[i]; j++) {
            int64_t id = g->groups[i][j];
            if (id >= 0 && id < LOOKED_AT) seen[id] = 1;
        }
    int64_t first_gap = 0;
    while (first_gap < LOOKED_AT && seen[first_gap]) first_gap++;
    free(seen);
    if (first_gap < LOOKED_AT && first_gap < need->at_most) {
        need->at_most = first_gap;
        need->at_most_by = in;
    }
}

static void instr_needs(const cxla_instr *in, exec_device_needs *n) {
    const cxla_attr *sh = cxla_instr_attr(in, CXLA_ATTR_SHARDING);
    if (sh && sh->kind == CXLA_ATTR_KIND_RAW && sh->v.s)
        name_id(&n->partitions, sharding_max_device(sh->v.s), in, "sharding");
    cxla_opcode op = in->async_wrapped != CXLA_OP_COUNT ? in->async_wrapped : in->opcode;
    enum id_kind kind;
    if (!id_kind_of(in, op, &kind)) return;
    exec_device_need *need = need_of(n, kind);
    const cxla_attr *rg = cxla_instr_attr(in, CXLA_ATTR_REPLICA_GROUPS);
    if (rg && rg->kind == CXLA_ATTR_KIND_REPLICA_GROUPS) {
        const cxla_replica_groups *g = &rg->v.groups;
        for (int64_t i = 0; i < g->group_count; i++)
            for (int64_t j = 0; j < g->group_sizes[i]; j++)
                name_id(need, g->groups[i][j], in, "replica_groups");
        bool permute = op == CXLA_OP_COLLECTIVE_PERMUTE || op == CXLA_OP_COLLECTIVE_PERMUTE_START;
        if (!permute && g->group_count > 0) bound_by_groups(need, g, in);
    }
    const cxla_attr *st = cxla_instr_attr(in, CXLA_ATTR_SOURCE_TARGET_PAIRS);
    if (st && st->kind == CXLA_ATTR_KIND_INT_LISTS)
        for (int64_t i = 0; i < st->v.int_lists.count; i++)
            for (int64_t j = 0; j < st->v.int_lists.lengths[i]; j++)
                name_id(need, st->v.int_lists.lists[i][j], in, "source_target_pairs");
}

void exec_device_needs_of(const cxla_module *m, exec_device_needs *out) {
    memset(out, 0, sizeof(*out));
    out->replicas.count = out->partitions.count = out->devices.count = 1;
    out->replicas.at_most = out->partitions.at_most = out->devices.at_most = INT64_MAX;
    if (!m) return;
    for (int64_t c = 0; c < m->comp_count; c++) {
        const cxla_computation *comp = m->comps[c];
        for (int64_t i = 0; comp && i < comp->instr_count; i++) instr_needs(comp->instrs[i], out);
    }
}

/* ---- the check ------------------------------------------------------------------------ */

/* Devices that no group of some collective holds: the first one's id names it. */
static cxla_status too_many(const exec_device_needs *n, int64_t replicas, int64_t partitions,
                            int64_t devices) {
    const exec_device_need *need = NULL;
    const char *word = NULL, *ids = NULL;
    int64_t have = 0;
    if (replicas > n->replicas.at_most) {
        need = &n->replicas, word = "replica", have = replicas;
        int64_t channel;
        ids = cxla_instr_int(need->at_most_by, CXLA_ATTR_CHANNEL_ID, &channel)
                  ? "with channel_id and without use_global_device_ids, its ids are replicas"
                  : "without channel_id, its ids are replicas";
    } else if (partitions > n->partitions.at_most) {
        need = &n->partitions, word = "partition", have = partitions;
        ids = "with channel_id, its ids are partitions";
    } else if (devices > n->devices.at_most) {
        need = &n->devices, word = "device", have = devices;
        ids = "with use_global_device_ids=true, its ids are devices: replicas x partitions";
    }
    if (!need) return NULL;
    const cxla_instr *in = need->at_most_by;
    char line[64] = "";
    if (in->line > 0) snprintf(line, sizeof(line), ", line %" PRId64, in->line);
    return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                      "%s (%s, computation %s%s): %s %" PRId64
                      " is in none of the replica_groups, and the run has %" PRId64
                      " %ss (%s): the module takes at most %" PRId64 " %s%s",
                      in->name, cxla_opcode_name(in->opcode), in->parent ? in->parent->name : "?",
                      line, word, need->at_most, have, word, ids, need->at_most, word,
                      need->at_most == 1 ? "" : "s");
}

cxla_status exec_device_needs_check(const exec_device_needs *n, int64_t replicas,
                                    int64_t partitions) {
    int64_t devices;
    if (!cxla_mul_i64(replicas, partitions, &devices)) devices = INT64_MAX;
    const exec_device_need *need = NULL;
    const char *word = NULL, *ids = NULL;
    int64_t have = 0;
    if (n->replicas.count > replicas) {
        need = &n->replicas, word = "replica", have = replicas;
        int64_t channel;
        ids = cxla_instr_int(need->by, CXLA_ATTR_CHANNEL_ID, &channel)
                  ? "with channel_id and without use_global_device_ids, its ids are replicas"
                  : "without channel_id, its ids are replicas";
    } else if (n->partitions.count > partitions) {
        need = &n->partitions, word = "partition", have = partitions;
        ids = "with channel_id, its ids are partitions";
    } else if (n->devices.count > devices) {
        need = &n->devices, word = "device", have = devices;
        ids = "with use_global_device_ids=true, its ids are devices: replicas x partitions";
    }
    if (!need) return too_many(n, replicas, partitions, devices);
    const cxla_instr *in = need->by;
    bool sharding = strcmp(need->where, "sharding") == 0;
    if (sharding) ids = "the device ids of a sharding are partitions";
    char line[64] = "";
    if (in->line > 0) snprintf(line, sizeof(line), ", line %" PRId64, in->line);
    return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                      "%s (%s, computation %s%s): %s name%s %s %" PRId64 " but the run has %" PRId64
                      " %s%s (%s): the module needs at least %" PRId64 " %ss",
                      in->name, cxla_opcode_name(in->opcode), in->parent ? in->parent->name : "?",
                      line, need->where, sharding ? "s" : "", sharding ? "device" : word,
                      need->count - 1, have, word, have == 1 ? "" : "s", ids, need->count, word);
}
