/* What every backend's collectives share (the interpreter's: src/interp/interp_collective.c;
 * the cpu backend's steps: src/cpu/cpu_collective.c): who the devices of a run are, which
 * of them take part with this one in a collective (XLA's CollectiveOpGroupMode over
 * replica_groups), and the exchange of arrays through the run's communicator
 * (exec_comm), with what arrives checked against what this device would send.
 *
 * Groups: without channel_id the ids in replica_groups are replicas (each partition has
 * its own groups); with channel_id they are partitions for all-to-all,
 * collective-broadcast and collective-permute, replicas of every partition for the
 * others, and flattened device ids (replica * num_partitions + partition) with
 * use_global_device_ids=true. Without a communicator the run is one device: groups of
 * one member are the identity and larger ones fail. Errors name the instruction. */
#ifndef CXLA_EXEC_COLLECTIVE_H_
#define CXLA_EXEC_COLLECTIVE_H_

#include "exec/exec.h"

typedef struct exec_devices {
    int64_t replicas, partitions; /* of the run */
    int64_t replica, partition;   /* this device */
    int64_t self;                 /* replica * partitions + partition */
} exec_devices;

/* The devices of the run of |options| (its communicator's, else the module's
 * replica_count and num_partitions; |m| may be NULL: then |instr|'s module). Errors:
 * INVALID_ARGUMENT when this device lies outside the run. */
cxla_status exec_collective_devices(const exec_run_options *options, const cxla_module *m,
                                    const cxla_instr *instr, exec_devices *out);

/* The devices that take part in a collective with this one, in group order. */
typedef struct exec_group {
    int64_t count;
    int64_t *members; /* devices, malloc'd: exec_group_free */
    int64_t me;       /* position of this device */
} exec_group;
void exec_group_free(exec_group *g);

/* The group of |instr| for this device. |global_ids_meaningful|: the opcode has
 * use_global_device_ids (all-reduce, all-gather, reduce-scatter); the others read
 * channel_id as "ids are partitions". Errors (INVALID_ARGUMENT, UNIMPLEMENTED): ids out
 * of range or repeated, this device in no group, the mesh form of replica_groups on
 * several devices, a group of several members in a run without communicator. */
cxla_status exec_collective_group(const exec_run_options *options, const cxla_instr *instr,
                                  bool global_ids_meaningful, const exec_devices *dv,
                                  exec_group *out);

/* "this collective needs |n| devices but this run is on one device". */
cxla_status exec_collective_one_device_error(const cxla_instr *instr, int64_t n);

/* One exchange through |options|' communicator (exec_exchange): |parts| arrays to each
 * of the |send_count| devices |to|, |parts| from each of the |recv_count| devices
 * |from| into |recvs| (new literals, the caller's), each checked to have the dims and
 * type of expect[j * parts + i]. Without a communicator sends are dropped and a receive
 * fails. On failure no recvs are set. */
cxla_status exec_collective_exchange(const exec_run_options *options, const cxla_instr *instr,
                                     int64_t seq, int64_t parts, int64_t send_count,
                                     const int64_t *to, const cxla_literal *const *sends,
                                     int64_t recv_count, const int64_t *from,
                                     const cxla_literal *const *expect, cxla_literal **recvs,
                                     int64_t wait_rounds);

/* Every member of |g| sends outgoing[k * parts ...] to member k and receives what each
 * other member sends it. |table| gets count * parts values in group order: received ones
 * (owned, listed in |owned| for freeing) and, at this device's place, its own
 * outgoing[me * parts ...] (borrowed). */
typedef struct exec_gathered {
    const cxla_literal **table;
    cxla_literal **owned;
    int64_t owned_count;
} exec_gathered;
void exec_gathered_free(exec_gathered *t);
cxla_status exec_collective_exchange_in_group(const exec_run_options *options,
                                              const cxla_instr *instr, int64_t seq,
                                              const exec_group *g, int64_t parts,
                                              const cxla_literal *const *outgoing,
                                              exec_gathered *out);

#endif /* CXLA_EXEC_COLLECTIVE_H_ */
