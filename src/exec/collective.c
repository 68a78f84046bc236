/* The collectives' shared part: devices, groups and exchanges (collective.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/collective.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

/* ---- devices and groups ----------------------------------------------------------- */

cxla_status exec_collective_devices(const exec_run_options *options, const cxla_module *m,
                                    const cxla_instr *instr, exec_devices *d) {
    const exec_comm *c = options->comm;
    if (instr->parent && instr->parent->module) m = instr->parent->module;
    if (c) {
        d->replicas = c->replica_count;
        d->partitions = c->partition_count;
    } else {
        d->replicas = m && m->replica_count > 0 ? m->replica_count : 1;
        d->partitions = m && m->num_partitions > 0 ? m->num_partitions : 1;
    }
    d->replica = options->replica_id;
    d->partition = options->partition_id;
    if (c && (d->replicas < 1 || d->partitions < 1 || d->replica < 0 || d->replica >= d->replicas ||
              d->partition < 0 || d->partition >= d->partitions))
        return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                          "this device (replica %" PRId64 ", partition %" PRId64
                          ") is outside the run's %" PRId64 " replicas x %" PRId64 " partitions",
                          d->replica, d->partition, d->replicas, d->partitions);
    d->self = d->replica * d->partitions + d->partition;
    return NULL;
}

typedef enum group_mode {
    CROSS_REPLICA,               /* no channel_id: ids are replicas */
    CROSS_PARTITION,             /* channel_id, no use_global_device_ids attribute */
    CROSS_REPLICA_AND_PARTITION, /* channel_id, use_global_device_ids=false */
    FLATTENED,                   /* use_global_device_ids=true: ids are devices */
} group_mode;

static const char *const id_words[] = {"replica", "partition", "replica", "device"};

/* |global_ids_meaningful|: the opcode has use_global_device_ids (all-reduce, all-gather,
 * reduce-scatter); the others read channel_id as "ids are partitions". */
static group_mode mode_of(const cxla_instr *instr, bool global_ids_meaningful) {
    int64_t channel;
    if (!cxla_instr_int(instr, CXLA_ATTR_CHANNEL_ID, &channel)) return CROSS_REPLICA;
    if (!global_ids_meaningful) return CROSS_PARTITION;
    return cxla_instr_bool(instr, CXLA_ATTR_USE_GLOBAL_DEVICE_IDS) ? FLATTENED
                                                                   : CROSS_REPLICA_AND_PARTITION;
}

void exec_group_free(exec_group *g) {
    free(g->members);
    g->members = NULL;
}

cxla_status exec_collective_one_device_error(const cxla_instr *instr, int64_t n) {
    return exec_error(instr, CXLA_STATUS_UNIMPLEMENTED,
                      "this collective needs %" PRId64
                      " devices but this run is on one device (run the module on several "
                      "replicas)",
                      n);
}

cxla_status exec_collective_group(const exec_run_options *options, const cxla_instr *instr,
                                  bool global_ids_meaningful, const exec_devices *dv,
                                  exec_group *g) {
    memset(g, 0, sizeof(*g));
    group_mode mode = mode_of(instr, global_ids_meaningful);
    const char *word = id_words[mode];
    int64_t space = mode == CROSS_PARTITION ? dv->partitions
                    : mode == FLATTENED     ? dv->replicas * dv->partitions
                                            : dv->replicas;
    int64_t my_id = mode == CROSS_PARTITION ? dv->partition
                    : mode == FLATTENED     ? dv->self
                                            : dv->replica;
    const cxla_attr *a = cxla_instr_attr(instr, CXLA_ATTR_REPLICA_GROUPS);
    const cxla_replica_groups *rg =
        a && a->kind == CXLA_ATTR_KIND_REPLICA_GROUPS ? &a->v.groups : NULL;
    const int64_t *ids = NULL;
    int64_t id_count = 0;
    int64_t *all = NULL;
    if (rg && rg->group_count == 0 && rg->text) {
        if (dv->replicas * dv->partitions > 1)
            return exec_error(instr, CXLA_STATUS_UNIMPLEMENTED,
                              "replica groups in the mesh form (%s) are not supported yet",
                              rg->text);
        ids = &my_id;
        id_count = 1;
    } else if (!rg || rg->group_count == 0) {
        if (mode == FLATTENED)
            return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                              "use_global_device_ids=true needs replica_groups");
        all = malloc((size_t)space * sizeof(*all));
        if (!all) return OOM();
        for (int64_t i = 0; i < space; i++) all[i] = i;
        ids = all;
        id_count = space;
    } else {
        for (int64_t i = 0; i < rg->group_count; i++) {
            for (int64_t j = 0; j < rg->group_sizes[i]; j++) {
                int64_t id = rg->groups[i][j];
                if (id < 0 || id >= space)
                    return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                      "replica_groups name %s %" PRId64 " but the run has %" PRId64
                                      " %ss",
                                      word, id, space, word);
                if (id != my_id) continue;
                if (ids)
                    return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                      "%s %" PRId64 " appears twice in replica_groups", word, id);
                ids = rg->groups[i];
                id_count = rg->group_sizes[i];
            }
        }
        if (!ids)
            return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                              "%s %" PRId64 " is in none of the replica_groups", word, my_id);
    }
    int64_t per = mode == CROSS_REPLICA_AND_PARTITION ? dv->partitions : 1;
    g->count = id_count * per;
    g->members = malloc((size_t)(g->count ? g->count : 1) * sizeof(*g->members));
    if (!g->members) {
        free(all);
        return OOM();
    }
    /* Which devices are in the group already: a bitmap, so that groups of thousands
     * are checked in linear time. */
    int64_t total = dv->replicas * dv->partitions;
    uint8_t *seen = calloc((size_t)total, 1);
    if (!seen) {
        free(all);
        exec_group_free(g);
        return OOM();
    }
    g->me = -1;
    int64_t k = 0;
    for (int64_t i = 0; i < id_count; i++) {
        for (int64_t p = 0; p < per; p++) {
            int64_t id = ids[i], dev;
            switch (mode) {
            case CROSS_REPLICA: dev = id * dv->partitions + dv->partition; break;
            case CROSS_PARTITION: dev = dv->replica * dv->partitions + id; break;
            case CROSS_REPLICA_AND_PARTITION: dev = id * dv->partitions + p; break;
            default: dev = id; break;
            }
            if (dev < 0 || dev >= total || seen[dev]) {
                free(all);
                free(seen);
                exec_group_free(g);
                return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                  "%s %" PRId64 " appears twice in its replica group", word, id);
            }
            seen[dev] = 1;
            if (dev == dv->self) g->me = k;
            g->members[k++] = dev;
        }
    }
    free(all);
    free(seen);
    if (g->me < 0) { /* only the mesh form of one device gets here without this device */
        exec_group_free(g);
        return exec_error(instr, CXLA_STATUS_INTERNAL, "this device is not in its group");
    }
    if (g->count > 1 && !options->comm) {
        int64_t n = g->count;
        exec_group_free(g);
        return exec_collective_one_device_error(instr, n);
    }
    return NULL;
}

/* ---- exchanges -------------------------------------------------------------------- */

static cxla_status annotate(cxla_status s, const cxla_instr *instr) {
    if (!s) return NULL;
    if (instr->line > 0)
        return cxla_status_annotate(s, "%s (%s, line %" PRId64 ")", instr->name,
                                    cxla_opcode_name(instr->opcode), instr->line);
    return cxla_status_annotate(s, "%s (%s)", instr->name, cxla_opcode_name(instr->opcode));
}

static bool same_array(const cxla_shape *a, const cxla_shape *b) {
    if (a->type != b->type || a->rank != b->rank) return false;
    for (int64_t i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

/* One exchange through the communicator; received arrays are checked against
 * |expect[j * parts + i]| (the shape this device would send itself). */
cxla_status exec_collective_exchange(const exec_run_options *options, const cxla_instr *instr,
                                     int64_t seq, int64_t parts, int64_t send_count,
                                     const int64_t *to, const cxla_literal *const *sends,
                                     int64_t recv_count, const int64_t *from,
                                     const cxla_literal *const *expect, cxla_literal **recvs,
                                     int64_t wait_rounds) {
    exec_comm *c = options->comm;
    if (!c) {
        if (recv_count > 0) return exec_collective_one_device_error(instr, recv_count + 1);
        return NULL; /* one device: what goes elsewhere is dropped */
    }
    if (send_count == 0 && recv_count == 0) return NULL;
    exec_exchange x = {
        .instr = instr,
        .op_id = instr->id,
        .sequence = seq,
        .parts = parts,
        .send_count = send_count,
        .to = to,
        .sends = sends,
        .recv_count = recv_count,
        .from = from,
        .recvs = recvs,
        .wait_rounds = wait_rounds,
    };
    cxla_status s = annotate(c->exchange(c, &x), instr);
    for (int64_t j = 0; j < recv_count && !s; j++) {
        for (int64_t i = 0; i < parts && !s; i++) {
            const cxla_literal *got = recvs[j * parts + i];
            const cxla_shape *want = cxla_literal_shape(expect[j * parts + i]);
            if (got && same_array(cxla_literal_shape(got), want)) continue;
            char who[64];
            exec_device_name(c->partition_count, from[j], who, sizeof(who));
            char *g =
                got ? cxla_shape_to_string(cxla_literal_shape(got), CXLA_SHAPE_PRINT_NO_LAYOUT)
                    : NULL;
            char *w = cxla_shape_to_string(want, CXLA_SHAPE_PRINT_NO_LAYOUT);
            s = exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                           "%s sent %s where %s was expected (the devices must run the same "
                           "module)",
                           who, g ? g : "nothing", w ? w : "?");
            free(g);
            free(w);
        }
    }
    if (s)
        for (int64_t k = 0; k < recv_count * parts; k++) {
            cxla_literal_free(recvs[k]);
            recvs[k] = NULL;
        }
    return s;
}

/* Every member of |g| sends outgoing[k * parts ...] to member k and receives what each
 * other member sends it. |table| gets count * parts values in group order: received ones
 * (owned, listed in |owned| for freeing) and, at this device's place, its own
 * outgoing[me * parts ...] (borrowed). */
void exec_gathered_free(exec_gathered *t) {
    for (int64_t i = 0; i < t->owned_count; i++) cxla_literal_free(t->owned[i]);
    free(t->owned);
    free(t->table);
    memset(t, 0, sizeof(*t));
}

cxla_status exec_collective_exchange_in_group(const exec_run_options *options,
                                              const cxla_instr *instr, int64_t seq,
                                              const exec_group *g, int64_t parts,
                                              const cxla_literal *const *outgoing,
                                              exec_gathered *out) {
    memset(out, 0, sizeof(*out));
    int64_t others = g->count - 1;
    size_t n = (size_t)(others > 0 ? others : 1);
    int64_t *peers = malloc(n * sizeof(*peers));
    const cxla_literal **sends = malloc(n * (size_t)parts * sizeof(*sends) + 1);
    const cxla_literal **expect = malloc(n * (size_t)parts * sizeof(*expect) + 1);
    out->owned = calloc(n * (size_t)parts + 1, sizeof(*out->owned));
    out->table = calloc((size_t)g->count * (size_t)parts + 1, sizeof(*out->table));
    cxla_status s = NULL;
    if (!peers || !sends || !expect || !out->owned || !out->table) s = OOM();
    for (int64_t k = 0, j = 0; k < g->count && !s; k++) {
        if (k == g->me) continue;
        peers[j] = g->members[k];
        for (int64_t i = 0; i < parts; i++) {
            sends[j * parts + i] = outgoing[k * parts + i];
            expect[j * parts + i] = outgoing[g->me * parts + i];
        }
        j++;
    }
    if (!s)
        s = exec_collective_exchange(options, instr, seq, parts, others, peers, sends, others,
                                     peers, expect, out->owned, 1);
    if (!s) {
        out->owned_count = others * parts;
        for (int64_t k = 0; k < g->count; k++)
            for (int64_t i = 0; i < parts; i++)
                out->table[k * parts + i] = k == g->me
                                                ? outgoing[k * parts + i]
                                                : out->owned[(k < g->me ? k : k - 1) * parts + i];
    }
    free(peers);
    free(sends);
    free(expect);
    if (s) exec_gathered_free(out);
    return s;
}
