/* How many devices a module names: the replicas, partitions and flattened device ids
 * that its collectives (replica_groups, source_target_pairs, in every computation, called
 * ones included) and its shardings ({devices=[...]...}, {maximal device=N}) refer to, so
 * that a run on fewer devices fails before it starts (before inputs are made or the
 * module compiled) instead of at its first collective.
 *
 * The ids are read as the collectives read them (exec/collective.h): without channel_id
 * the ids of replica_groups and source_target_pairs are replicas; with channel_id they
 * are partitions for all-to-all, ragged-all-to-all, collective-broadcast and
 * collective-permute, replicas for the others, and flattened device ids (replica *
 * partitions + partition) with use_global_device_ids=true. Sharding device ids are
 * partitions (SPMD). The mesh form of replica_groups names no ids here. */
#ifndef CXLA_EXEC_DEVICES_H_
#define CXLA_EXEC_DEVICES_H_

#include "cxla/status.h"
#include "hlo/hlo.h"

/* The largest id of one kind that the module names, plus one (at least 1), and the first
 * instruction (in computation order) that names it; |by| is NULL when none names any.
 * And the most devices of that kind a run may have: replica groups must hold every
 * device of the run (one in no group fails at the collective), so the first id that a
 * collective's explicit groups leave out bounds the run (INT64_MAX and NULL when no
 * collective bounds it; collective-permute and empty groups do not). */
typedef struct exec_device_need {
    int64_t count;
    const cxla_instr *by;
    const char *where; /* "replica_groups", "source_target_pairs", "sharding" */
    int64_t at_most;
    const cxla_instr *at_most_by;
} exec_device_need;

typedef struct exec_device_needs {
    exec_device_need replicas;   /* ids that are replicas */
    exec_device_need partitions; /* ids that are partitions */
    exec_device_need devices;    /* flattened ids: replicas x partitions devices */
} exec_device_needs;

/* What |module| names (never fails: what it cannot read names nothing). */
void exec_device_needs_of(const cxla_module *module, exec_device_needs *out);

/* Whether a run of |replicas| x |partitions| devices has every device that |needs| names;
 * and no more than its groups hold; INVALID_ARGUMENT otherwise, naming the instruction,
 * the id, the run's count and the count needed: "ar (all-reduce, computation main, line
 * 9): replica_groups name partition 3 but the run has 1 partition (with channel_id, its
 * ids are partitions): the module needs at least 4 partitions", or "... replica 2 is in
 * none of the replica_groups, and the run has 4 replicas (...): the module takes at most
 * 2 replicas". */
cxla_status exec_device_needs_check(const exec_device_needs *needs, int64_t replicas,
                                    int64_t partitions);

#endif /* CXLA_EXEC_DEVICES_H_ */
