/* Internal to the HLO proto reader (proto_read.c, proto_read_attrs.c): one decoded
 * message, the reader's state and the helpers both files use. See proto_read.c. */
#ifndef CXLA_HLO_PROTO_READ_H_
#define CXLA_HLO_PROTO_READ_H_

#include "hlo/hlo.h"
#include "hlo/proto_wire.h"

/* One decoded message: the last value of each field number below MAXF (a scalar where a
 * message belongs reads as an empty message), and a reader over the whole message for
 * re-walking repeated fields. */
#define MAXF 96

typedef struct msg {
    pw_reader r; /* over the whole message, for re-walking repeated fields */
    bool has[MAXF];
    pw_field f[MAXF];
} msg;

typedef struct rd {
    const uint8_t *base;
    cxla_arena *arena; /* scratch: names, shapes, id maps */
    cxla_strbuf out;   /* the HLO text */
    int depth;
    /* computations: id -> name */
    int64_t comp_count;
    int64_t *comp_ids;
    const char **comp_names;
    /* instructions of the current computation: id -> name, element type */
    int64_t instr_count;
    int64_t *instr_ids;
    const char **instr_names;
    cxla_type *instr_types;
    int64_t *instr_ranks;   /* of the shape, or of a tuple's first element */
    pw_field *instr_shapes; /* each one's ShapeProto field (len 0: none) */
    bool nul_in_string;
} rd;

cxla_status pr_oom(void);
cxla_status pr_load(rd *d, msg *m, const uint8_t *p, size_t len, const char *what);
cxla_status pr_load_field(rd *d, msg *m, const msg *parent, uint32_t n, const char *what);
int64_t pr_int(const msg *m, uint32_t n);
const char *pr_str(rd *d, const msg *m, uint32_t n);
bool pr_has_bytes(const msg *m, uint32_t n);
cxla_status pr_ints(const msg *m, uint32_t n, int wire, pw_ints *out, const char *what);
cxla_status pr_list(rd *d, const msg *m, uint32_t n, pw_field **out, int64_t *count,
                    const char *what);
void pr_put_ints(cxla_strbuf *b, const int64_t *v, int64_t n);
cxla_status pr_attr_ints(rd *d, const msg *m, uint32_t n, const char *name, bool always,
                         const char *what);

/* A sub-message's repeated int fields as attributes: {field, name, always}. */
typedef struct pr_int_attr {
    uint32_t field;
    const char *name;
    bool always;
} pr_int_attr;

/* Attribute values made of sub-messages, appended to d->out as the text writes them
 * (proto_read_attrs.c). */
void pr_put_string(rd *d, const char *s);
cxla_status pr_put_metadata(rd *d, const uint8_t *p, size_t len);
cxla_status pr_put_frontend_attributes(rd *d, const uint8_t *p, size_t len);
cxla_status pr_put_sharding(rd *d, const uint8_t *p, size_t len);
cxla_status pr_put_replica_groups(rd *d, const msg *in, bool always);
cxla_status pr_put_window(rd *d, const msg *in, uint32_t n);
cxla_status pr_put_dim_labels(rd *d, const msg *in);
cxla_status pr_put_sub_ints(rd *d, const msg *in, uint32_t n, const char *what,
                            const pr_int_attr *attrs, size_t count, uint32_t index_vector);

/* HloModuleConfigProto (xla/xla.proto): the fields the text header carries. The rest
 * (seed, launch_id, debug options, device assignment, ...) has no text form and is
 * ignored. */
enum {
    PR_CFG_ENTRY_LAYOUT = 1,
    PR_CFG_REPLICA_COUNT = 4,
    PR_CFG_NUM_PARTITIONS = 5,
    PR_CFG_ALIAS_PASSTHROUGH = 17,
    PR_CFG_SPMD_TO_OUTPUT = 27,
    PR_CFG_SPMD_TO_PARAMETERS = 33,
};

/* The config's fields the header carries (all but the entry layout), appended to d->out
 * (proto_read_attrs.c). */
cxla_status pr_put_config(rd *d, const msg *cfg);
/* Finds the HloModuleProto in |*p|, |*len| by content and narrows them to it; the config
 * of an HloModuleProtoWithConfig in |out_config| (NULL when none). See proto_read_attrs.c. */
void pr_find_module(const uint8_t **p, size_t *len, const uint8_t **out_config,
                    size_t *out_config_len);

#endif /* CXLA_HLO_PROTO_READ_H_ */
