/* Attribute values of the HLO proto reader that are messages of their own (metadata,
 * frontend attributes, sharding, replica groups, windows, convolution dimension numbers):
 * each appended to the text as XLA's text writes it. Field numbers from XLA's
 * xla_data.proto. Also the wrappers around a module (HloProto, HloModuleProtoWithConfig,
 * HloSnapshot), told apart by content, and the module config. See proto_read.c. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/lexer.h"
#include "hlo/proto_read.h"

/* ---- attribute values made of sub-messages ---------------------------------------- */

/* A string as the text writes it (quoted, escaped). */
void pr_put_string(rd *d, const char *s) {
    cxla_hlo_print_string(&d->out, s);
}

/* OpMetadata: op_type 1, op_name 2, source_file 3, source_line 4, deduplicated_name 12,
 * stack_frame_id 15, scheduling_name 16, source_end_line 17, source_column 18,
 * source_end_column 19. Printed in XLA's OpMetadataToString order. */
cxla_status pr_put_metadata(rd *d, const uint8_t *p, size_t len) {
    msg *m = malloc(sizeof *m);
    if (!m) return pr_oom();
    cxla_status st = pr_load(d, m, p, len, "OpMetadata");
    if (!st) {
        cxla_strbuf *b = &d->out;
        cxla_strbuf_putc(b, '{');
        bool first = true;
        static const struct {
            uint32_t n;
            const char *name;
            bool is_str;
        } keys[] = {{1, "op_type", true},
                    {2, "op_name", true},
                    {3, "source_file", true},
                    {4, "source_line", false},
                    {17, "source_end_line", false},
                    {18, "source_column", false},
                    {19, "source_end_column", false},
                    {5, "profile_type", false},
                    {12, "deduplicated_name", true},
                    {16, "scheduling_name", true},
                    {15, "stack_frame_id", false}};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            uint32_t n = keys[i].n;
            if (!m->has[n]) continue;
            if (!first) cxla_strbuf_putc(b, ' ');
            first = false;
            cxla_strbuf_printf(b, "%s=", keys[i].name);
            if (keys[i].is_str) {
                pr_put_string(d, pr_str(d, m, n));
            } else if (n == 5) { /* repeated ProfileType */
                pw_ints v = {0};
                st = pr_ints(m, 5, PW_VARINT, &v, "OpMetadata.profile_type");
                pr_put_ints(b, v.v, v.n);
                pw_ints_free(&v);
                if (st) break;
            } else
                cxla_strbuf_printf(b, "%" PRId64, (int64_t)(int32_t)pr_int(m, n));
        }
        cxla_strbuf_putc(b, '}');
    }
    free(m);
    return st;
}

/* FrontendAttributes: map<string,string> map = 1 (entries: key 1, value 2); XLA prints
 * the keys sorted, values quoted unless they are {...} groups. */
typedef struct kv {
    const char *k, *v;
} kv;
static int kv_cmp(const void *a, const void *b) {
    return strcmp(((const kv *)a)->k, ((const kv *)b)->k);
}

/* Whether |v| is one balanced {...} group without quotes (printed as it is). */
static bool is_group(const char *v) {
    if (v[0] != '{') return false;
    int depth = 0;
    for (const char *c = v; *c; c++) {
        if (*c == '"' || *c == '\'') return false;
        if (*c == '{') depth++;
        if (*c == '}' && --depth == 0) return c[1] == 0;
    }
    return false;
}

cxla_status pr_put_frontend_attributes(rd *d, const uint8_t *p, size_t len) {
    msg *m = malloc(sizeof *m);
    if (!m) return pr_oom();
    pw_field *e = NULL;
    int64_t n = 0;
    cxla_status st = pr_load(d, m, p, len, "FrontendAttributes");
    if (!st) st = pr_list(d, m, 1, &e, &n, "FrontendAttributes.map");
    kv *items = NULL;
    if (!st) {
        items = cxla_arena_alloc_array(d->arena, (size_t)(n ? n : 1), sizeof *items);
        if (!items) st = pr_oom();
    }
    for (int64_t i = 0; !st && i < n; i++) {
        st = pr_load(d, m, e[i].data, e[i].len, "FrontendAttributes entry");
        if (!st) {
            items[i].k = pr_str(d, m, 1);
            items[i].v = pr_str(d, m, 2);
            if (!items[i].k || !items[i].v) st = pr_oom();
        }
    }
    if (!st) {
        qsort(items, (size_t)n, sizeof *items, kv_cmp);
        cxla_strbuf_putc(&d->out, '{');
        for (int64_t i = 0; i < n; i++) {
            if (i) cxla_strbuf_putc(&d->out, ',');
            /* A key that is not a plain name is quoted (the writer reads both). */
            bool plain = cxla_hlo_is_name_start(items[i].k[0]);
            for (const char *c = items[i].k; plain && *c; c++) plain = cxla_hlo_is_name_char(*c);
            if (plain)
                cxla_strbuf_puts(&d->out, items[i].k);
            else
                pr_put_string(d, items[i].k);
            cxla_strbuf_putc(&d->out, '=');
            if (is_group(items[i].v))
                cxla_strbuf_puts(&d->out, items[i].v);
            else
                pr_put_string(d, items[i].v);
        }
        cxla_strbuf_putc(&d->out, '}');
    }
    free(m);
    return st;
}

/* OpSharding: type 1 (REPLICATED 0, MAXIMAL 1, TUPLE 2, OTHER 3, MANUAL 4, UNKNOWN 5,
 * UNREDUCED 6), tile_assignment_dimensions 3, tile_assignment_devices 4, tuple_shardings
 * 5, replicate_on_last_tile_dim 6, metadata 7, last_tile_dims 8, iota_reshape_dims 9,
 * iota_transpose_perm 10. */
static const char *const k_sharding_types[] = {"replicated", "maximal", "tuple",    "other",
                                               "manual",     "unknown", "unreduced"};

cxla_status pr_put_sharding(rd *d, const uint8_t *p, size_t len) {
    if (d->depth > 64)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "OpSharding nested too deeply");
    msg *m = malloc(sizeof *m);
    if (!m) return pr_oom();
    d->depth++;
    cxla_strbuf *b = &d->out;
    pw_ints dims = {0}, devs = {0}, last = {0}, reshape = {0}, perm = {0};
    cxla_status st = pr_load(d, m, p, len, "OpSharding");
    int64_t type = st ? 0 : pr_int(m, 1);
    if (!st) st = pr_ints(m, 3, PW_VARINT, &dims, "OpSharding");
    if (!st) st = pr_ints(m, 4, PW_VARINT, &devs, "OpSharding");
    if (!st) st = pr_ints(m, 8, PW_VARINT, &last, "OpSharding");
    if (!st) st = pr_ints(m, 9, PW_VARINT, &reshape, "OpSharding");
    if (!st) st = pr_ints(m, 10, PW_VARINT, &perm, "OpSharding");
    if (!st && (type < 0 || type > 6))
        st = cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "OpSharding: unknown type %" PRId64, type);
    if (!st && type == 2) {
        pw_field *el;
        int64_t n;
        st = pr_list(d, m, 5, &el, &n, "OpSharding.tuple_shardings");
        cxla_strbuf_putc(b, '{');
        for (int64_t i = 0; !st && i < n; i++) {
            if (i) cxla_strbuf_puts(b, ", ");
            st = pr_put_sharding(d, el[i].data, el[i].len);
        }
        cxla_strbuf_putc(b, '}');
    } else if (!st && type == 1) {
        cxla_strbuf_printf(b, "{maximal device=%" PRId64 "}", devs.n ? devs.v[0] : 0);
    } else if (!st && type == 3) {
        cxla_strbuf_puts(b, "{devices=[");
        for (int64_t i = 0; i < dims.n; i++)
            cxla_strbuf_printf(b, i ? ",%" PRId64 : "%" PRId64, dims.v[i]);
        cxla_strbuf_putc(b, ']');
        if (reshape.n) {
            cxla_strbuf_puts(b, "<=[");
            for (int64_t i = 0; i < reshape.n; i++)
                cxla_strbuf_printf(b, i ? ",%" PRId64 : "%" PRId64, reshape.v[i]);
            cxla_strbuf_putc(b, ']');
            bool identity = true;
            for (int64_t i = 0; i < perm.n; i++) identity = identity && perm.v[i] == i;
            if (!identity) {
                cxla_strbuf_puts(b, "T(");
                for (int64_t i = 0; i < perm.n; i++)
                    cxla_strbuf_printf(b, i ? ",%" PRId64 : "%" PRId64, perm.v[i]);
                cxla_strbuf_putc(b, ')');
            }
        } else {
            for (int64_t i = 0; i < devs.n; i++)
                cxla_strbuf_printf(b, i ? ",%" PRId64 : "%" PRId64, devs.v[i]);
        }
        if (pr_int(m, 6)) cxla_strbuf_puts(b, " last_tile_dim_replicate");
        if (last.n) {
            cxla_strbuf_puts(b, " last_tile_dims={");
            for (int64_t i = 0; i < last.n; i++) {
                int64_t t = last.v[i];
                cxla_strbuf_printf(b, "%s%s", i ? ", " : "",
                                   t >= 0 && t <= 6 ? k_sharding_types[t] : "unknown");
            }
            cxla_strbuf_putc(b, '}');
        }
        cxla_strbuf_putc(b, '}');
    } else if (!st) {
        cxla_strbuf_printf(b, "{%s}", k_sharding_types[type]);
    }
    pw_ints_free(&dims);
    pw_ints_free(&devs);
    pw_ints_free(&last);
    pw_ints_free(&reshape);
    pw_ints_free(&perm);
    free(m);
    d->depth--;
    return st;
}

/* ReplicaGroup: replica_ids 1. CollectiveDeviceListProto: replica_groups 1,
 * iota_replica_group_list 2 (num_replica_groups 1, num_devices_per_group 2,
 * iota_reshape_dims 3, iota_transpose_perm 4). */
static cxla_status put_group_list(rd *d, const msg *m, uint32_t n) {
    pw_field *g;
    int64_t count;
    CXLA_RETURN_IF_ERROR(pr_list(d, m, n, &g, &count, "ReplicaGroup"));
    msg *gm = malloc(sizeof *gm);
    if (!gm) return pr_oom();
    cxla_status st = NULL;
    cxla_strbuf_putc(&d->out, '{');
    for (int64_t i = 0; !st && i < count; i++) {
        pw_ints ids = {0};
        st = pr_load(d, gm, g[i].data, g[i].len, "ReplicaGroup");
        if (!st) st = pr_ints(gm, 1, PW_VARINT, &ids, "ReplicaGroup.replica_ids");
        if (!st) {
            if (i) cxla_strbuf_putc(&d->out, ',');
            pr_put_ints(&d->out, ids.v, ids.n);
        }
        pw_ints_free(&ids);
    }
    cxla_strbuf_putc(&d->out, '}');
    free(gm);
    return st;
}

cxla_status pr_put_replica_groups(rd *d, const msg *in, bool always) {
    enum { F_REPLICA_GROUPS = 49, F_DEVICE_LIST = 87 };
    if (in->has[F_DEVICE_LIST]) {
        msg *m = malloc(sizeof *m);
        if (!m) return pr_oom();
        cxla_status st = pr_load_field(d, m, in, F_DEVICE_LIST, "CollectiveDeviceListProto");
        if (!st && m->has[2]) {
            msg *io = malloc(sizeof *io);
            pw_ints rs = {0}, pm = {0};
            st = io ? pr_load_field(d, io, m, 2, "IotaReplicaGroupListProto") : pr_oom();
            if (!st) st = pr_ints(io, 3, PW_VARINT, &rs, "IotaReplicaGroupListProto");
            if (!st) st = pr_ints(io, 4, PW_VARINT, &pm, "IotaReplicaGroupListProto");
            if (!st) {
                cxla_strbuf *b = &d->out;
                cxla_strbuf_printf(b, ", replica_groups=[%" PRId64 ",%" PRId64 "]<=[",
                                   pr_int(io, 1), pr_int(io, 2));
                for (int64_t i = 0; i < rs.n; i++)
                    cxla_strbuf_printf(b, i ? ",%" PRId64 : "%" PRId64, rs.v[i]);
                cxla_strbuf_putc(b, ']');
                bool identity = true;
                for (int64_t i = 0; i < pm.n; i++) identity = identity && pm.v[i] == i;
                if (!identity) {
                    cxla_strbuf_puts(b, "T(");
                    for (int64_t i = 0; i < pm.n; i++)
                        cxla_strbuf_printf(b, i ? ",%" PRId64 : "%" PRId64, pm.v[i]);
                    cxla_strbuf_putc(b, ')');
                }
            }
            pw_ints_free(&rs);
            pw_ints_free(&pm);
            free(io);
        } else if (!st) {
            cxla_strbuf_puts(&d->out, ", replica_groups=");
            st = put_group_list(d, m, 1);
        }
        free(m);
        return st;
    }
    bool any = false;
    for (uint32_t n = F_REPLICA_GROUPS; n == F_REPLICA_GROUPS; n++) any = in->has[n];
    if (!any && !always) return NULL;
    cxla_strbuf_puts(&d->out, ", replica_groups=");
    return put_group_list(d, in, F_REPLICA_GROUPS);
}

/* Window: dimensions 1 (WindowDimension: size 1, stride 2, padding_low 3, padding_high 4,
 * window_dilation 5, base_dilation 6, window_reversal 7), printed by the attribute
 * printer so that the text is the parser's own. */
cxla_status pr_put_window(rd *d, const msg *in, uint32_t n) {
    msg *m = malloc(sizeof *m);
    if (!m) return pr_oom();
    pw_field *dims;
    int64_t count = 0;
    cxla_status st = pr_load_field(d, m, in, n, "Window");
    if (!st) st = pr_list(d, m, 1, &dims, &count, "Window.dimensions");
    cxla_attr a = {.id = CXLA_ATTR_WINDOW, .name = "window", .kind = CXLA_ATTR_KIND_WINDOW};
    if (!st) {
        a.v.window.rank = count;
        a.v.window.dims =
            cxla_arena_alloc_array(d->arena, (size_t)(count ? count : 1), sizeof(cxla_window_dim));
        if (!a.v.window.dims) st = pr_oom();
    }
    for (int64_t i = 0; !st && i < count; i++) {
        st = pr_load(d, m, dims[i].data, dims[i].len, "WindowDimension");
        if (st) break;
        cxla_window_dim *w = &a.v.window.dims[i];
        w->size = pr_int(m, 1);
        w->stride = m->has[2] ? pr_int(m, 2) : 1;
        w->pad_low = pr_int(m, 3);
        w->pad_high = pr_int(m, 4);
        w->rhs_dilation = m->has[5] ? pr_int(m, 5) : 1;
        w->lhs_dilation = m->has[6] ? pr_int(m, 6) : 1;
        w->reversal = pr_int(m, 7) != 0;
    }
    if (!st && count) {
        cxla_strbuf_puts(&d->out, ", window=");
        cxla_hlo_print_attr_value(&d->out, &a, CXLA_HLO_STYLE_SHORT);
    }
    free(m);
    return st;
}

/* ConvolutionDimensionNumbers: input_batch 7, input_feature 8, input_spatial 11,
 * kernel_input_feature 3, kernel_output_feature 4, kernel_spatial 6, output_batch 9,
 * output_feature 10, output_spatial 12. */
cxla_status pr_put_dim_labels(rd *d, const msg *in) {
    msg *m = malloc(sizeof *m);
    if (!m) return pr_oom();
    pw_ints is = {0}, ks = {0}, os = {0};
    cxla_status st = pr_load_field(d, m, in, 16, "ConvolutionDimensionNumbers");
    if (!st) st = pr_ints(m, 11, PW_VARINT, &is, "ConvolutionDimensionNumbers");
    if (!st) st = pr_ints(m, 6, PW_VARINT, &ks, "ConvolutionDimensionNumbers");
    if (!st) st = pr_ints(m, 12, PW_VARINT, &os, "ConvolutionDimensionNumbers");
    if (!st && (ks.n != is.n || os.n != is.n))
        st = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                        "ConvolutionDimensionNumbers: %" PRId64 " input, %" PRId64
                        " kernel and %" PRId64 " output spatial dimensions",
                        is.n, ks.n, os.n);
    if (!st) {
        cxla_attr a = {
            .id = CXLA_ATTR_DIM_LABELS, .name = "dim_labels", .kind = CXLA_ATTR_KIND_DIM_LABELS};
        cxla_conv_dims *c = &a.v.conv;
        c->spatial_count = is.n;
        c->input_batch = pr_int(m, 7);
        c->input_feature = pr_int(m, 8);
        c->kernel_input_feature = pr_int(m, 3);
        c->kernel_output_feature = pr_int(m, 4);
        c->output_batch = pr_int(m, 9);
        c->output_feature = pr_int(m, 10);
        c->input_spatial = is.v;
        c->kernel_spatial = ks.v;
        c->output_spatial = os.v;
        int64_t rank = is.n + 2;
        bool ok = true; /* the label printer indexes by dimension: keep them in range */
        int64_t all[] = {c->input_batch,           c->input_feature, c->kernel_input_feature,
                         c->kernel_output_feature, c->output_batch,  c->output_feature};
        for (size_t i = 0; i < 6; i++) ok = ok && all[i] >= 0 && all[i] < rank;
        for (int64_t i = 0; i < is.n; i++)
            ok = ok && is.v[i] >= 0 && is.v[i] < rank && ks.v[i] >= 0 && ks.v[i] < rank &&
                 os.v[i] >= 0 && os.v[i] < rank;
        if (!ok)
            st = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                            "ConvolutionDimensionNumbers: a dimension number is out of range "
                            "for rank %" PRId64,
                            rank);
        if (!st) {
            cxla_strbuf_puts(&d->out, ", dim_labels=");
            cxla_hlo_print_attr_value(&d->out, &a, CXLA_HLO_STYLE_SHORT);
        }
    }
    pw_ints_free(&is);
    pw_ints_free(&ks);
    pw_ints_free(&os);
    free(m);
    return st;
}

cxla_status pr_put_sub_ints(rd *d, const msg *in, uint32_t n, const char *what,
                            const pr_int_attr *attrs, size_t count, uint32_t index_vector) {
    msg *m = malloc(sizeof *m);
    if (!m) return pr_oom();
    cxla_status st = pr_load_field(d, m, in, n, what);
    for (size_t i = 0; !st && i < count; i++)
        st = pr_attr_ints(d, m, attrs[i].field, attrs[i].name, attrs[i].always, what);
    if (!st && index_vector)
        cxla_strbuf_printf(&d->out, ", index_vector_dim=%" PRId64, pr_int(m, index_vector));
    free(m);
    return st;
}

/* ---- the wrappers and the module config ---------------------------------------- */

/* HloModuleProto's name (1) and computations (3), as the wrapper detection reads them. */
enum { MOD_NAME = 1, MOD_COMPUTATIONS = 3 };

/* A repeated bool of the config as the header writes it: {true,false}. */
static cxla_status put_bools(rd *d, const msg *cfg, uint32_t field, const char *name) {
    pw_ints v = {0};
    cxla_status st = pr_ints(cfg, field, PW_VARINT, &v, name);
    if (!st && v.n) {
        cxla_strbuf_printf(&d->out, ", %s={", name);
        for (int64_t i = 0; i < v.n; i++)
            cxla_strbuf_printf(&d->out, "%s%s", i ? "," : "", v.v[i] ? "true" : "false");
        cxla_strbuf_putc(&d->out, '}');
    }
    pw_ints_free(&v);
    return st;
}

/* The config's fields that the text header carries (the entry layout is written by
 * put_entry_layout). A count of 0 is proto3's "unset": the default, 1. */
cxla_status pr_put_config(rd *d, const msg *cfg) {
    int64_t replicas = pr_int(cfg, PR_CFG_REPLICA_COUNT);
    int64_t partitions = pr_int(cfg, PR_CFG_NUM_PARTITIONS);
    if (replicas != 0 && replicas != 1)
        cxla_strbuf_printf(&d->out, ", replica_count=%" PRId64, replicas);
    if (partitions != 0 && partitions != 1)
        cxla_strbuf_printf(&d->out, ", num_partitions=%" PRId64, partitions);
    if (pr_int(cfg, PR_CFG_ALIAS_PASSTHROUGH))
        cxla_strbuf_puts(&d->out, ", alias_passthrough_params=true");
    cxla_status st = put_bools(d, cfg, PR_CFG_SPMD_TO_PARAMETERS,
                               "allow_spmd_sharding_propagation_to_parameters");
    if (!st)
        st = put_bools(d, cfg, PR_CFG_SPMD_TO_OUTPUT, "allow_spmd_sharding_propagation_to_output");
    return st;
}

/* Whether |p| holds an HloModuleProto: computations (field 3) that are messages, at least
 * one, and a name (field 1) that is printable text. The name is what tells a module from
 * an HloProto, whose field 1 is a binary HloModuleProto and whose field 3 (the buffer
 * assignment) is a message too. */
static bool is_module(const uint8_t *p, size_t len) {
    pw_reader r;
    pw_init(&r, p, p, len);
    int64_t computations = 0;
    for (;;) {
        pw_field f;
        bool done;
        cxla_status s = pw_next(&r, &f, &done, "");
        if (s) {
            cxla_status_free(s);
            return false;
        }
        if (done) return computations > 0;
        if (f.number == MOD_NAME) {
            if (f.wire != PW_LEN) return false;
            for (size_t i = 0; i < f.len; i++)
                if (f.data[i] < 0x20 || f.data[i] == 0x7f) return false;
        } else if (f.number == MOD_COMPUTATIONS) {
            if (f.wire != PW_LEN || !pw_is_message(f.data, f.len)) return false;
            computations++;
        }
    }
}

/* Finds the HloModuleProto in |bytes| by content: itself; field 1 of an HloProto
 * (hlo_module 1, buffer_assignment 3) or of an HloModuleProtoWithConfig (hlo_module 1,
 * config 2: returned in |out_config|, NULL when there is none); or field 1 of the HloProto
 * in field 1 of an HloSnapshot (hlo 1, arguments 2, result 3). When nothing fits, the
 * bytes are left as they are and the module reader says what is wrong with them. */
void pr_find_module(const uint8_t **p, size_t *len, const uint8_t **out_config,
                    size_t *out_config_len) {
    *out_config = NULL;
    *out_config_len = 0;
    const uint8_t *q = *p;
    size_t n = *len;
    for (int depth = 0; depth < 2; depth++) {
        if (is_module(q, n)) break;
        pw_reader r;
        pw_init(&r, q, q, n);
        pw_field f, one = {0}, two = {0};
        bool done, has_one = false, has_two = false;
        for (;;) {
            cxla_status s = pw_next(&r, &f, &done, "");
            if (s) {
                cxla_status_free(s);
                return;
            }
            if (done) break;
            if (f.number == 1 && f.wire == PW_LEN) {
                one = f;
                has_one = true;
            } else if (f.number == 2 && f.wire == PW_LEN && !has_two) {
                two = f;
                has_two = true;
            }
        }
        if (!has_one || !pw_is_message(one.data, one.len)) return;
        if (depth == 0 && has_two && is_module(one.data, one.len)) {
            /* HloModuleProtoWithConfig; an HloSnapshot's field 2 holds literals and its
             * field 1 an HloProto, which is not a module. */
            *out_config = two.data;
            *out_config_len = two.len;
        }
        q = one.data;
        n = one.len;
    }
    if (!is_module(q, n)) {
        *out_config = NULL;
        *out_config_len = 0;
        return;
    }
    *p = q;
    *len = n;
}
