/* Writing a module as XLA's binary HloModuleProto (cxla_hlo_write_proto, cxla/hlo.h).
 *
 * The field numbers are those proto_read.c names (XLA's hlo.proto and xla_data.proto).
 * Typed attributes map to their fields directly; the attributes the IR keeps as raw text
 * (metadata, sharding, frontend attributes, aliasing, parameter replication, the stack
 * frame tables) are read back from that text with the HLO lexer. A module whose header
 * holds what HloModuleProto has no field for (replica_count, num_partitions,
 * alias_passthrough_params, allow_spmd_sharding_propagation_*: XLA keeps them in the
 * HloModuleConfig) is written as an HloModuleProtoWithConfig, any other as a bare
 * HloModuleProto. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/hlo.h"
#include "hlo/lexer.h"
#include "hlo/proto.h"
#include "hlo/proto_wire.h"
#include "literal/literal_internal.h"

typedef struct wr {
    const cxla_module *m;
    cxla_module *scratch; /* the lexers' allocations */
    cxla_status error;
} wr;

static cxla_status oom(void) {
    return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory writing an HLO proto");
}

/* ---- shapes and literals ------------------------------------------------------------- */

static void put_shape(cxla_strbuf *b, uint32_t field, const cxla_shape *s);

static void shape_msg(cxla_strbuf *t, const cxla_shape *s) {
    pw_put_int_opt(t, 2, cxla_proto_type_number(s->type));
    if (s->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < s->tuple_count; i++) put_shape(t, 4, &s->elements[i]);
        return;
    }
    if (s->type == CXLA_TOKEN || s->type == CXLA_OPAQUE) return;
    int64_t dims[64];
    for (int64_t i = 0; i < s->rank && i < 64; i++)
        dims[i] = s->dims[i] == CXLA_DIM_UNBOUNDED ? INT64_MIN : s->dims[i];
    pw_put_packed(t, 3, dims, s->rank);
    if (s->dynamic) {
        int64_t dyn[64];
        for (int64_t i = 0; i < s->rank && i < 64; i++) dyn[i] = s->dynamic[i] != 0;
        pw_put_packed(t, 6, dyn, s->rank);
    }
    const cxla_layout *l = s->layout;
    if (l) {
        cxla_strbuf lb;
        cxla_strbuf_init(&lb);
        pw_put_packed(&lb, 1, l->minor_to_major, s->rank);
        for (int64_t i = 0; i < l->tile_count; i++) {
            cxla_strbuf tb;
            cxla_strbuf_init(&tb);
            int64_t td[64];
            for (int64_t j = 0; j < l->tiles[i].rank && j < 64; j++)
                td[j] = l->tiles[i].dims[j] == CXLA_TILE_COMBINE ? INT64_MIN : l->tiles[i].dims[j];
            pw_put_packed(&tb, 1, td, l->tiles[i].rank);
            pw_put_msg(&lb, 6, &tb);
            cxla_strbuf_free(&tb);
        }
        pw_put_int_opt(&lb, 7, l->element_size_bits);
        pw_put_int_opt(&lb, 8, l->memory_space);
        if (l->index_type) pw_put_int(&lb, 11, cxla_proto_type_number(l->index_type));
        if (l->pointer_type) pw_put_int(&lb, 12, cxla_proto_type_number(l->pointer_type));
        pw_put_int_opt(&lb, 15, l->dynamic_metadata_prefix);
        pw_put_int_opt(&lb, 16, l->tail_padding_alignment);
        pw_put_msg(t, 5, &lb);
        cxla_strbuf_free(&lb);
    }
}

static void put_shape(cxla_strbuf *b, uint32_t field, const cxla_shape *s) {
    cxla_strbuf t;
    cxla_strbuf_init(&t);
    shape_msg(&t, s);
    pw_put_msg(b, field, &t);
    cxla_strbuf_free(&t);
}

static void literal_msg(cxla_strbuf *t, const cxla_literal *lit) {
    const cxla_shape *s = cxla_literal_shape(lit);
    put_shape(t, 1, s);
    if (s->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < cxla_literal_tuple_count(lit); i++) {
            cxla_strbuf e;
            cxla_strbuf_init(&e);
            literal_msg(&e, cxla_literal_tuple_element_const(lit, i));
            pw_put_msg(t, 10, &e);
            cxla_strbuf_free(&e);
        }
        return;
    }
    int wire;
    uint32_t fn = cxla_proto_literal_field(s->type, &wire);
    if (!fn) return;
    const uint8_t *data = cxla_literal_data_const(lit);
    int64_t n = cxla_literal_element_count(lit);
    if (s->type == CXLA_C64 || s->type == CXLA_C128) n *= 2;
    if (wire == PW_LEN) { /* bytes, one element per storage unit, little endian */
        pw_put_bytes(t, fn, data, cxla_literal_byte_size(lit));
        return;
    }
    cxla_strbuf v;
    cxla_strbuf_init(&v);
    for (int64_t i = 0; i < n; i++) {
        switch (s->type) {
        case CXLA_PRED: pw_put_varint(&v, data[i] != 0); break;
        case CXLA_S32: {
            int32_t x;
            memcpy(&x, data + 4 * i, 4);
            pw_put_varint(&v, (uint64_t)(int64_t)x);
            break;
        }
        case CXLA_U32: {
            uint32_t x;
            memcpy(&x, data + 4 * i, 4);
            pw_put_varint(&v, x);
            break;
        }
        case CXLA_S64:
        case CXLA_U64: {
            uint64_t x;
            memcpy(&x, data + 8 * i, 8);
            pw_put_varint(&v, x);
            break;
        }
        case CXLA_F32:
        case CXLA_C64: cxla_strbuf_append(&v, (const char *)data + 4 * i, 4); break;
        default: cxla_strbuf_append(&v, (const char *)data + 8 * i, 8); break;
        }
    }
    if (n) pw_put_msg(t, fn, &v);
    cxla_strbuf_free(&v);
}

/* ---- attributes kept as text --------------------------------------------------------- */

static bool lex_error(wr *w, cxla_hlo_lexer *lx) {
    if (!w->error)
        w->error = lx->error;
    else
        cxla_status_free(lx->error);
    lx->error = NULL;
    return false;
}

static bool ints_in_brackets(cxla_hlo_lexer *lx, char open, char close, int64_t *v, int64_t *n,
                             int64_t max);

/* {op_name="..." source_file="..." source_line=N ...} -> OpMetadata */
static bool metadata_msg(wr *w, const char *text, cxla_strbuf *t) {
    static const struct {
        const char *key;
        uint32_t field;
        bool is_str;
    } keys[] = {{"op_type", 1, true},
                {"op_name", 2, true},
                {"source_file", 3, true},
                {"source_line", 4, false},
                {"source_end_line", 17, false},
                {"source_column", 18, false},
                {"source_end_column", 19, false},
                {"deduplicated_name", 12, true},
                {"scheduling_name", 16, true},
                {"stack_frame_id", 15, false},
                {"profile_type", 5, false}};
    cxla_hlo_lexer lx;
    cxla_hlo_lexer_init(&lx, text, strlen(text), "metadata", w->scratch);
    if (!cxla_hlo_expect(&lx, '{', "to open the metadata")) return lex_error(w, &lx);
    while (!cxla_hlo_accept(&lx, '}')) {
        const char *k;
        size_t kn = cxla_hlo_word(&lx, &k);
        if (!kn || !cxla_hlo_expect(&lx, '=', "after a metadata key")) {
            if (!kn) cxla_hlo_error_found(&lx, lx.pos, "expected a metadata key");
            return lex_error(w, &lx);
        }
        size_t i = 0;
        for (; i < sizeof keys / sizeof keys[0]; i++)
            if (strlen(keys[i].key) == kn && memcmp(keys[i].key, k, kn) == 0) break;
        if (i == sizeof keys / sizeof keys[0]) { /* not in OpMetadata: skipped */
            size_t a, e;
            if (!cxla_hlo_raw(&lx, &a, &e, "metadata value")) return lex_error(w, &lx);
            continue;
        }
        if (keys[i].field == 5) { /* {1,2}: repeated ProfileType */
            int64_t v[64], n;
            if (!ints_in_brackets(&lx, '{', '}', v, &n, 64)) return lex_error(w, &lx);
            pw_put_packed(t, 5, v, n);
        } else if (keys[i].is_str) {
            const char *s;
            if (!cxla_hlo_string(&lx, &s)) return lex_error(w, &lx);
            pw_put_bytes(t, keys[i].field, s, strlen(s)); /* even "": the text said it */
        } else {
            int64_t v;
            if (!cxla_hlo_int(&lx, &v, "metadata value")) return lex_error(w, &lx);
            pw_put_int(t, keys[i].field, v); /* even 0: the text said it */
        }
    }
    return true;
}

static bool ints_in_brackets(cxla_hlo_lexer *lx, char open, char close, int64_t *v, int64_t *n,
                             int64_t max) {
    *n = 0;
    if (!cxla_hlo_expect(lx, open, "in the sharding")) return false;
    if (cxla_hlo_accept(lx, close)) return true;
    do {
        if (*n >= max) return cxla_hlo_error(lx, lx->pos, "too many values");
        if (!cxla_hlo_int(lx, &v[(*n)++], "sharding value")) return false;
    } while (cxla_hlo_accept(lx, ','));
    return cxla_hlo_expect(lx, close, "in the sharding");
}

static int sharding_type(const char *wd, size_t n) {
    static const char *const names[] = {"replicated", "maximal", "tuple",    "other",
                                        "manual",     "unknown", "unreduced"};
    for (int i = 0; i < 7; i++)
        if (strlen(names[i]) == n && memcmp(names[i], wd, n) == 0) return i;
    return -1;
}

/* One sharding {..} at the cursor -> OpSharding. */
static bool sharding_msg(cxla_hlo_lexer *lx, cxla_strbuf *t, int depth) {
    if (depth > 64) return cxla_hlo_error(lx, lx->pos, "sharding nested too deeply");
    if (!cxla_hlo_expect(lx, '{', "to open a sharding")) return false;
    if (cxla_hlo_at(lx, '{') || cxla_hlo_at(lx, '}')) {
        pw_put_int(t, 1, 2); /* TUPLE */
        if (cxla_hlo_accept(lx, '}')) return true;
        do {
            cxla_strbuf e;
            cxla_strbuf_init(&e);
            bool ok = sharding_msg(lx, &e, depth + 1);
            pw_put_msg(t, 5, &e);
            cxla_strbuf_free(&e);
            if (!ok) return false;
        } while (cxla_hlo_accept(lx, ','));
        return cxla_hlo_expect(lx, '}', "to close the tuple sharding");
    }
    int64_t type = 0;
    int64_t v[4096], n;
    while (!cxla_hlo_accept(lx, '}')) {
        const char *wd;
        size_t q = cxla_hlo_skip(lx);
        size_t wn = cxla_hlo_word(lx, &wd);
        if (!wn) return cxla_hlo_error_found(lx, q, "expected a word in the sharding");
        int st = sharding_type(wd, wn);
        if (st >= 0) {
            type = st;
        } else if (wn == 6 && memcmp(wd, "device", 6) == 0) {
            int64_t dev;
            if (!cxla_hlo_expect(lx, '=', "after device") || !cxla_hlo_int(lx, &dev, "device"))
                return false;
            pw_put_int(t, 4, dev);
        } else if (wn == 7 && memcmp(wd, "devices", 7) == 0) {
            type = 3;
            if (!cxla_hlo_expect(lx, '=', "after devices") ||
                !ints_in_brackets(lx, '[', ']', v, &n, 4096))
                return false;
            pw_put_packed(t, 3, v, n);
            if (cxla_hlo_accept_str(lx, "<=")) {
                if (!ints_in_brackets(lx, '[', ']', v, &n, 4096)) return false;
                pw_put_packed(t, 9, v, n);
                int64_t rank = n;
                if (cxla_hlo_accept(lx, 'T')) {
                    if (!ints_in_brackets(lx, '(', ')', v, &n, 4096)) return false;
                } else {
                    for (n = 0; n < rank; n++) v[n] = n;
                }
                pw_put_packed(t, 10, v, n);
            } else {
                n = 0;
                do {
                    if (n >= 4096) return cxla_hlo_error(lx, lx->pos, "too many devices");
                    if (!cxla_hlo_int(lx, &v[n++], "device id")) return false;
                } while (cxla_hlo_accept(lx, ','));
                pw_put_packed(t, 4, v, n);
            }
        } else if (wn == 23 && memcmp(wd, "last_tile_dim_replicate", 23) == 0) {
            pw_put_int(t, 6, 1);
        } else if (wn == 14 && memcmp(wd, "last_tile_dims", 14) == 0) {
            if (!cxla_hlo_expect(lx, '=', "after last_tile_dims") ||
                !cxla_hlo_expect(lx, '{', "after last_tile_dims="))
                return false;
            n = 0;
            do {
                const char *ld;
                size_t ln = cxla_hlo_word(lx, &ld);
                int lt = ln ? sharding_type(ld, ln) : -1;
                if (lt < 0 || n >= 4096)
                    return cxla_hlo_error_found(lx, lx->pos, "expected a sharding type");
                v[n++] = lt;
            } while (cxla_hlo_accept(lx, ','));
            if (!cxla_hlo_expect(lx, '}', "after last_tile_dims")) return false;
            pw_put_packed(t, 8, v, n);
        } else {
            /* metadata=..., shard_as N, ...: not kept */
            if (cxla_hlo_accept(lx, '=')) {
                size_t a, e;
                if (!cxla_hlo_raw(lx, &a, &e, "sharding value")) return false;
            }
        }
    }
    if (type) pw_put_int(t, 1, type);
    return true;
}

/* {key="value",key={...}} -> FrontendAttributes */
static bool frontend_msg(wr *w, const char *text, cxla_strbuf *t) {
    cxla_hlo_lexer lx;
    cxla_hlo_lexer_init(&lx, text, strlen(text), "frontend_attributes", w->scratch);
    if (!cxla_hlo_expect(&lx, '{', "to open frontend_attributes")) return lex_error(w, &lx);
    if (cxla_hlo_accept(&lx, '}')) return true;
    do {
        const char *k;
        size_t kn = cxla_hlo_name(&lx, &k);
        if (!kn) {
            size_t q = cxla_hlo_skip(&lx);
            if (q < lx.len && lx.text[q] == '"') {
                if (!cxla_hlo_string(&lx, &k)) return lex_error(w, &lx);
                kn = strlen(k);
            } else {
                cxla_hlo_error_found(&lx, q, "expected a frontend attribute name");
                return lex_error(w, &lx);
            }
        }
        if (!cxla_hlo_expect(&lx, '=', "after a frontend attribute name")) return lex_error(w, &lx);
        size_t q = cxla_hlo_skip(&lx);
        cxla_strbuf e;
        cxla_strbuf_init(&e);
        pw_put_bytes(&e, 1, k, kn);
        if (q < lx.len && lx.text[q] == '"') {
            const char *s;
            if (!cxla_hlo_string(&lx, &s)) {
                cxla_strbuf_free(&e);
                return lex_error(w, &lx);
            }
            pw_put_bytes(&e, 2, s, strlen(s));
        } else {
            size_t a, z;
            if (!cxla_hlo_raw(&lx, &a, &z, "frontend attribute value")) {
                cxla_strbuf_free(&e);
                return lex_error(w, &lx);
            }
            pw_put_bytes(&e, 2, lx.text + a, z - a);
        }
        pw_put_msg(t, 1, &e);
        cxla_strbuf_free(&e);
    } while (cxla_hlo_accept(&lx, ','));
    if (!cxla_hlo_expect(&lx, '}', "to close frontend_attributes")) return lex_error(w, &lx);
    return true;
}

/* {1,2} */
static bool shape_index(cxla_hlo_lexer *lx, int64_t *v, int64_t *n) {
    return ints_in_brackets(lx, '{', '}', v, n, 64);
}

/* input_output_alias / output_to_operand_aliasing / buffer_donor text -> entries. */
static bool aliasing_msgs(wr *w, const char *text, cxla_strbuf *t, uint32_t field, int kind) {
    /* kind 0: input_output_alias, 1: output_to_operand_aliasing, 2: buffer_donor */
    cxla_hlo_lexer lx;
    cxla_hlo_lexer_init(&lx, text, strlen(text), "aliasing", w->scratch);
    if (!cxla_hlo_expect(&lx, '{', "to open the aliasing")) return lex_error(w, &lx);
    if (cxla_hlo_accept(&lx, '}')) return true;
    do {
        int64_t out[64], on = 0, in[64], inn = 0, param;
        int64_t alias_kind = 1;
        if (kind != 2 &&
            (!shape_index(&lx, out, &on) || !cxla_hlo_expect(&lx, ':', "after the index")))
            return lex_error(w, &lx);
        if (!cxla_hlo_expect(&lx, '(', "before the parameter") ||
            !cxla_hlo_int(&lx, &param, "parameter") || !cxla_hlo_expect(&lx, ',', "after it") ||
            !shape_index(&lx, in, &inn))
            return lex_error(w, &lx);
        if (kind == 0 && cxla_hlo_accept(&lx, ',')) {
            if (cxla_hlo_accept_str(&lx, "must-alias"))
                alias_kind = 2;
            else
                cxla_hlo_accept_str(&lx, "may-alias");
        }
        if (!cxla_hlo_expect(&lx, ')', "after the aliased parameter")) return lex_error(w, &lx);
        cxla_strbuf e;
        cxla_strbuf_init(&e);
        if (kind == 0) {
            pw_put_packed(&e, 1, out, on);
            pw_put_int_opt(&e, 2, param);
            pw_put_packed(&e, 3, in, inn);
            pw_put_int(&e, 4, alias_kind);
        } else if (kind == 1) {
            pw_put_packed(&e, 1, out, on);
            pw_put_int_opt(&e, 2, param);
            pw_put_packed(&e, 3, in, inn);
        } else {
            pw_put_int_opt(&e, 1, param);
            pw_put_packed(&e, 2, in, inn);
        }
        pw_put_msg(t, field, &e);
        cxla_strbuf_free(&e);
    } while (cxla_hlo_accept(&lx, ','));
    if (!cxla_hlo_expect(&lx, '}', "to close the aliasing")) return lex_error(w, &lx);
    return true;
}

/* The FileNames / FunctionNames / FileLocations / StackFrames tables -> StackFrameIndex. */
static bool stack_frames_msg(wr *w, const char *text, cxla_strbuf *t) {
    static const char *const titles[] = {"FileNames", "FunctionNames", "FileLocations",
                                         "StackFrames"};
    cxla_hlo_lexer lx;
    cxla_hlo_lexer_init(&lx, text, strlen(text), "stack frames", w->scratch);
    uint32_t table = 0;
    for (;;) {
        size_t q = cxla_hlo_skip(&lx);
        if (q >= lx.len) return true;
        const char *wd;
        size_t wn = lx.text[q] >= '0' && lx.text[q] <= '9' ? 0 : cxla_hlo_word(&lx, &wd);
        if (wn) {
            table = 0;
            for (uint32_t i = 0; i < 4; i++)
                if (strlen(titles[i]) == wn && memcmp(titles[i], wd, wn) == 0) table = i + 1;
            if (!table) {
                cxla_hlo_error(&lx, q, "unknown stack frame table '%.*s'", (int)wn, wd);
                return lex_error(w, &lx);
            }
            continue;
        }
        int64_t index;
        if (!table) {
            cxla_hlo_error(&lx, q, "a stack frame entry before its table's title");
            return lex_error(w, &lx);
        }
        if (!cxla_hlo_int(&lx, &index, "table index")) return lex_error(w, &lx);
        if (table <= 2) {
            const char *s;
            if (!cxla_hlo_string(&lx, &s)) return lex_error(w, &lx);
            pw_put_bytes(t, table, s, strlen(s));
            continue;
        }
        static const char *const loc_keys[] = {"file_name_id", "function_name_id", "line",
                                               "column",       "end_line",         "end_column"};
        static const char *const frame_keys[] = {"file_location_id", "parent_frame_id"};
        const char *const *keys = table == 3 ? loc_keys : frame_keys;
        int nkeys = table == 3 ? 6 : 2;
        cxla_strbuf e;
        cxla_strbuf_init(&e);
        bool ok = cxla_hlo_expect(&lx, '{', "to open a stack frame entry");
        while (ok && !cxla_hlo_accept(&lx, '}')) {
            const char *k;
            size_t kn = cxla_hlo_word(&lx, &k);
            int64_t v;
            ok = kn && cxla_hlo_expect(&lx, '=', "after a key") && cxla_hlo_int(&lx, &v, "value");
            if (!kn) cxla_hlo_error_found(&lx, lx.pos, "expected a key");
            for (int i = 0; ok && i < nkeys; i++)
                if (strlen(keys[i]) == kn && memcmp(keys[i], k, kn) == 0)
                    pw_put_int_opt(&e, (uint32_t)i + 1, v);
        }
        if (ok) pw_put_msg(t, table, &e);
        cxla_strbuf_free(&e);
        if (!ok) return lex_error(w, &lx);
    }
}

/* ---- instructions ------------------------------------------------------------------- */

static bool module_has_attr(const cxla_module *m, cxla_attr_id id) {
    for (int64_t i = 0; i < m->attr_count; i++)
        if (m->attrs[i].id == id) return true;
    return false;
}

static int64_t comp_id(const wr *w, const cxla_computation *c) {
    for (int64_t i = 0; i < w->m->comp_count; i++)
        if (w->m->comps[i] == c) return i + 1;
    return 0;
}

static int64_t word_index(const char *const *words, int64_t count, const char *w) {
    for (int64_t i = 0; i < count; i++)
        if (words[i] && w && strcmp(words[i], w) == 0) return i;
    return -1;
}

static void put_called(wr *w, cxla_strbuf *t, const cxla_instr *in) {
    static const cxla_attr_id order[] = {CXLA_ATTR_BODY,
                                         CXLA_ATTR_CONDITION,
                                         CXLA_ATTR_SELECT,
                                         CXLA_ATTR_SCATTER,
                                         CXLA_ATTR_TRUE_COMPUTATION,
                                         CXLA_ATTR_FALSE_COMPUTATION,
                                         CXLA_ATTR_BRANCH_COMPUTATIONS,
                                         CXLA_ATTR_TO_APPLY,
                                         CXLA_ATTR_CALLED_COMPUTATIONS,
                                         CXLA_ATTR_CALLS};
    int64_t ids[256], n = 0;
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        const cxla_attr *a = cxla_instr_attr(in, order[k]);
        if (!a) continue;
        for (int64_t i = 0; i < a->v.comps.count && n < 256; i++)
            ids[n++] = comp_id(w, a->v.comps.items[i]);
    }
    pw_put_packed(t, 38, ids, n);
}

static void put_ints_attr(cxla_strbuf *t, uint32_t field, const cxla_attr *a) {
    pw_put_packed(t, field, a->v.ints.values, a->v.ints.count);
}

/* The attributes of |in| that belong in sub-messages, gathered first. */
typedef struct subs {
    cxla_strbuf dot, ragged, gather, scatter, precision, tri, chol;
    bool has_dot, has_ragged, has_gather, has_scatter, has_precision, has_tri, has_chol;
} subs;

static bool instr_msg(wr *w, const cxla_instr *in, cxla_strbuf *t) {
    cxla_opcode op = in->opcode;
    pw_put_str_opt(t, 1, in->name);
    pw_put_str_opt(t, 2, cxla_opcode_name(op));
    put_shape(t, 3, &in->shape);
    if (op == CXLA_OP_PARAMETER) pw_put_int_opt(t, 9, in->parameter_number);
    if (op == CXLA_OP_CONSTANT && in->literal) {
        cxla_strbuf l;
        cxla_strbuf_init(&l);
        literal_msg(&l, in->literal);
        pw_put_msg(t, 8, &l);
        cxla_strbuf_free(&l);
    }
    pw_put_int(t, 35, in->id);
    {
        int64_t *ids = malloc((size_t)(in->operand_count ? in->operand_count : 1) * 8);
        if (!ids) {
            t->failed = true;
            return true;
        }
        for (int64_t i = 0; i < in->operand_count; i++) ids[i] = in->operands[i]->id;
        pw_put_packed(t, 36, ids, in->operand_count);
        free(ids);
    }
    put_called(w, t, in);
    subs s;
    memset(&s, 0, sizeof s);
    cxla_strbuf_init(&s.dot);
    cxla_strbuf_init(&s.ragged);
    cxla_strbuf_init(&s.gather);
    cxla_strbuf_init(&s.scatter);
    cxla_strbuf_init(&s.precision);
    cxla_strbuf_init(&s.tri);
    cxla_strbuf_init(&s.chol);
    bool ok = true;
    bool is_gather = op == CXLA_OP_GATHER;
    for (int64_t i = 0; ok && i < in->attr_count; i++) {
        const cxla_attr *a = &in->attrs[i];
        switch (a->id) {
        case CXLA_ATTR_KIND: pw_put_str_opt(t, 11, a->v.s); break;
        case CXLA_ATTR_INDEX: pw_put_int_opt(t, 13, a->v.i); break;
        case CXLA_ATTR_IOTA_DIMENSION: pw_put_packed(t, 14, &a->v.i, 1); break;
        case CXLA_ATTR_DIMENSIONS: put_ints_attr(t, 14, a); break;
        case CXLA_ATTR_WINDOW: {
            cxla_strbuf win;
            cxla_strbuf_init(&win);
            for (int64_t k = 0; k < a->v.window.rank; k++) {
                const cxla_window_dim *d = &a->v.window.dims[k];
                cxla_strbuf e;
                cxla_strbuf_init(&e);
                pw_put_int_opt(&e, 1, d->size);
                pw_put_int(&e, 2, d->stride); /* always: absent reads as 1 */
                pw_put_int_opt(&e, 3, d->pad_low);
                pw_put_int_opt(&e, 4, d->pad_high);
                pw_put_int(&e, 5, d->rhs_dilation);
                pw_put_int(&e, 6, d->lhs_dilation);
                pw_put_int_opt(&e, 7, d->reversal);
                pw_put_msg(&win, 1, &e);
                cxla_strbuf_free(&e);
            }
            pw_put_msg(t, 15, &win);
            cxla_strbuf_free(&win);
            break;
        }
        case CXLA_ATTR_DIM_LABELS: {
            const cxla_conv_dims *c = &a->v.conv;
            cxla_strbuf e;
            cxla_strbuf_init(&e);
            pw_put_int_opt(&e, 7, c->input_batch);
            pw_put_int_opt(&e, 8, c->input_feature);
            pw_put_packed(&e, 11, c->input_spatial, c->spatial_count);
            pw_put_int_opt(&e, 3, c->kernel_input_feature);
            pw_put_int_opt(&e, 4, c->kernel_output_feature);
            pw_put_packed(&e, 6, c->kernel_spatial, c->spatial_count);
            pw_put_int_opt(&e, 9, c->output_batch);
            pw_put_int_opt(&e, 10, c->output_feature);
            pw_put_packed(&e, 12, c->output_spatial, c->spatial_count);
            pw_put_msg(t, 16, &e);
            cxla_strbuf_free(&e);
            break;
        }
        case CXLA_ATTR_FEATURE_GROUP_COUNT: pw_put_int_opt(t, 50, a->v.i); break;
        case CXLA_ATTR_BATCH_GROUP_COUNT: pw_put_int_opt(t, 58, a->v.i); break;
        case CXLA_ATTR_SLICE:
            for (int64_t k = 0; k < a->v.slice.rank; k++) {
                cxla_strbuf e;
                cxla_strbuf_init(&e);
                pw_put_int_opt(&e, 1, a->v.slice.dims[k].start);
                pw_put_int_opt(&e, 2, a->v.slice.dims[k].limit);
                pw_put_int(&e, 3, a->v.slice.dims[k].stride); /* absent reads as 1 */
                pw_put_msg(t, 17, &e);
                cxla_strbuf_free(&e);
            }
            break;
        case CXLA_ATTR_EXPONENT_BITS: pw_put_int_opt(t, 18, a->v.i); break;
        case CXLA_ATTR_MANTISSA_BITS: pw_put_int_opt(t, 19, a->v.i); break;
        case CXLA_ATTR_DYNAMIC_SLICE_SIZES: put_ints_attr(t, 20, a); break;
        case CXLA_ATTR_PADDING: {
            cxla_strbuf pc;
            cxla_strbuf_init(&pc);
            for (int64_t k = 0; k < a->v.padding.rank; k++) {
                cxla_strbuf e;
                cxla_strbuf_init(&e);
                pw_put_int_opt(&e, 1, a->v.padding.dims[k].low);
                pw_put_int_opt(&e, 2, a->v.padding.dims[k].high);
                pw_put_int_opt(&e, 3, a->v.padding.dims[k].interior);
                pw_put_msg(&pc, 1, &e);
                cxla_strbuf_free(&e);
            }
            pw_put_msg(t, 21, &pc);
            cxla_strbuf_free(&pc);
            break;
        }
        case CXLA_ATTR_OUTFEED_CONFIG: pw_put_str_opt(t, 22, a->v.s); break;
        case CXLA_ATTR_DISTRIBUTION: {
            static const char *const dist[] = {"rng_invalid", "rng_uniform", "rng_normal"};
            pw_put_int_opt(t, 23, word_index(dist, 3, a->v.s));
            break;
        }
        case CXLA_ATTR_EPSILON: {
            float f = (float)a->v.f;
            uint32_t bits;
            memcpy(&bits, &f, 4);
            pw_put_fixed32(t, 24, bits);
            break;
        }
        case CXLA_ATTR_FEATURE_INDEX: pw_put_int_opt(t, 25, a->v.i); break;
        case CXLA_ATTR_CHANNEL_ID: pw_put_int_opt(t, 26, a->v.i); break;
        case CXLA_ATTR_INFEED_CONFIG: pw_put_str_opt(t, 27, a->v.s); break;
        case CXLA_ATTR_CUSTOM_CALL_TARGET: pw_put_str_opt(t, 28, a->v.s); break;
        case CXLA_ATTR_OUTFEED_SHAPE: put_shape(t, 29, &a->v.shapes.items[0]); break;
        case CXLA_ATTR_LHS_BATCH_DIMS:
            s.has_dot = true;
            put_ints_attr(&s.dot, 3, a);
            break;
        case CXLA_ATTR_LHS_CONTRACTING_DIMS:
            s.has_dot = true;
            put_ints_attr(&s.dot, 1, a);
            break;
        case CXLA_ATTR_RHS_BATCH_DIMS:
            s.has_dot = true;
            put_ints_attr(&s.dot, 4, a);
            break;
        case CXLA_ATTR_RHS_CONTRACTING_DIMS:
            s.has_dot = true;
            put_ints_attr(&s.dot, 2, a);
            break;
        case CXLA_ATTR_LHS_RAGGED_DIMS:
            s.has_ragged = true;
            put_ints_attr(&s.ragged, 2, a);
            break;
        case CXLA_ATTR_RHS_GROUP_DIMS:
            s.has_ragged = true;
            put_ints_attr(&s.ragged, 3, a);
            break;
        case CXLA_ATTR_FFT_TYPE: {
            static const char *const fft[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
            pw_put_int_opt(t, 31, word_index(fft, 4, a->v.s));
            break;
        }
        case CXLA_ATTR_FFT_LENGTH: put_ints_attr(t, 32, a); break;
        case CXLA_ATTR_DIRECTION: pw_put_str_opt(t, 63, a->v.s); break;
        case CXLA_ATTR_COMPARISON_TYPE: pw_put_str_opt(t, 72, a->v.s); break;
        case CXLA_ATTR_OFFSET_DIMS:
            s.has_gather = true;
            put_ints_attr(&s.gather, 1, a);
            break;
        case CXLA_ATTR_COLLAPSED_SLICE_DIMS:
            s.has_gather = true;
            put_ints_attr(&s.gather, 2, a);
            break;
        case CXLA_ATTR_START_INDEX_MAP:
            s.has_gather = true;
            put_ints_attr(&s.gather, 3, a);
            break;
        case CXLA_ATTR_OPERAND_BATCHING_DIMS:
            s.has_gather = true;
            put_ints_attr(&s.gather, 5, a);
            break;
        case CXLA_ATTR_START_INDICES_BATCHING_DIMS:
            s.has_gather = true;
            put_ints_attr(&s.gather, 6, a);
            break;
        case CXLA_ATTR_UPDATE_WINDOW_DIMS:
            s.has_scatter = true;
            put_ints_attr(&s.scatter, 1, a);
            break;
        case CXLA_ATTR_INSERTED_WINDOW_DIMS:
            s.has_scatter = true;
            put_ints_attr(&s.scatter, 2, a);
            break;
        case CXLA_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS:
            s.has_scatter = true;
            put_ints_attr(&s.scatter, 3, a);
            break;
        case CXLA_ATTR_INPUT_BATCHING_DIMS:
            s.has_scatter = true;
            put_ints_attr(&s.scatter, 5, a);
            break;
        case CXLA_ATTR_SCATTER_INDICES_BATCHING_DIMS:
            s.has_scatter = true;
            put_ints_attr(&s.scatter, 6, a);
            break;
        case CXLA_ATTR_INDEX_VECTOR_DIM:
            if (is_gather) {
                s.has_gather = true;
                pw_put_int_opt(&s.gather, 4, a->v.i);
            } else {
                s.has_scatter = true;
                pw_put_int_opt(&s.scatter, 4, a->v.i);
            }
            break;
        case CXLA_ATTR_SLICE_SIZES:
            if (a->kind == CXLA_ATTR_KIND_INTS) {
                put_ints_attr(t, 34, a);
            } else { /* collective-permute: flattened into dynamic_slice_sizes, as XLA does */
                for (int64_t k = 0; k < a->v.int_lists.count; k++)
                    pw_put_packed(t, 20, a->v.int_lists.lists[k], a->v.int_lists.lengths[k]);
            }
            break;
        case CXLA_ATTR_LITERAL: {
            cxla_strbuf l;
            cxla_strbuf_init(&l);
            literal_msg(&l, a->v.literal);
            pw_put_msg(t, 8, &l);
            cxla_strbuf_free(&l);
            break;
        }
        case CXLA_ATTR_INDICES_ARE_SORTED: pw_put_int_opt(t, 67, a->v.b); break;
        case CXLA_ATTR_UNIQUE_INDICES: pw_put_int_opt(t, 69, a->v.b); break;
        case CXLA_ATTR_REPLICA_GROUPS: {
            const cxla_replica_groups *g = &a->v.groups;
            cxla_strbuf dl;
            cxla_strbuf_init(&dl);
            if (g->iota_form) {
                cxla_strbuf io;
                cxla_strbuf_init(&io);
                pw_put_int_opt(&io, 1, g->iota_group_count);
                pw_put_int_opt(&io, 2, g->iota_group_size);
                pw_put_packed(&io, 3, g->iota_reshape_dims, g->iota_reshape_rank);
                if (g->iota_transpose_rank) {
                    pw_put_packed(&io, 4, g->iota_transpose_perm, g->iota_transpose_rank);
                } else {
                    for (int64_t k = 0; k < g->iota_reshape_rank; k++) pw_put_int(&io, 4, k);
                }
                pw_put_msg(&dl, 2, &io);
                cxla_strbuf_free(&io);
            } else {
                for (int64_t k = 0; k < g->group_count; k++) {
                    cxla_strbuf e;
                    cxla_strbuf_init(&e);
                    pw_put_packed(&e, 1, g->groups[k], g->group_sizes[k]);
                    pw_put_msg(&dl, 1, &e);
                    cxla_strbuf_free(&e);
                }
            }
            pw_put_msg(t, 87, &dl);
            cxla_strbuf_free(&dl);
            break;
        }
        case CXLA_ATTR_USE_GLOBAL_DEVICE_IDS: pw_put_int_opt(t, 71, a->v.b); break;
        case CXLA_ATTR_IS_HOST_TRANSFER: pw_put_int_opt(t, 47, a->v.b); break;
        case CXLA_ATTR_IS_STABLE: pw_put_int_opt(t, 60, a->v.b); break;
        case CXLA_ATTR_CONSTRAIN_LAYOUT: pw_put_int_opt(t, 56, a->v.b); break;
        case CXLA_ATTR_OPERAND_PRECISION:
            s.has_precision = true;
            for (int64_t k = 0; k < a->v.precisions.count; k++)
                pw_put_int(&s.precision, 1, (int64_t)a->v.precisions.items[k]);
            break;
        case CXLA_ATTR_ALGORITHM:
            if (op == CXLA_OP_RNG_BIT_GENERATOR) {
                static const char *const alg[] = {"rng_default", "rng_three_fry", "rng_philox"};
                pw_put_int_opt(t, 70, word_index(alg, 3, a->v.s));
            } else {
                s.has_precision = true;
                pw_put_int_opt(
                    &s.precision, 2,
                    word_index(cxla_proto_dot_algorithms, CXLA_PROTO_DOT_ALGORITHM_COUNT, a->v.s));
            }
            break;
        case CXLA_ATTR_SOURCE_TARGET_PAIRS:
            for (int64_t k = 0; k < a->v.int_lists.count; k++) {
                if (a->v.int_lists.lengths[k] != 2) continue;
                cxla_strbuf e;
                cxla_strbuf_init(&e);
                pw_put_int_opt(&e, 1, a->v.int_lists.lists[k][0]);
                pw_put_int_opt(&e, 2, a->v.int_lists.lists[k][1]);
                pw_put_msg(t, 52, &e);
                cxla_strbuf_free(&e);
            }
            break;
        case CXLA_ATTR_OPERAND_LAYOUT_CONSTRAINTS:
            pw_put_int(t, 56, 1); /* constrain_layout */
            for (int64_t k = 0; k < a->v.shapes.count; k++) put_shape(t, 57, &a->v.shapes.items[k]);
            break;
        case CXLA_ATTR_LEFT_SIDE:
            s.has_tri = true;
            pw_put_int_opt(&s.tri, 1, a->v.b);
            break;
        case CXLA_ATTR_LOWER:
            if (op == CXLA_OP_CHOLESKY) {
                s.has_chol = true;
                pw_put_int_opt(&s.chol, 1, a->v.b);
            } else {
                s.has_tri = true;
                pw_put_int_opt(&s.tri, 2, a->v.b);
            }
            break;
        case CXLA_ATTR_UNIT_DIAGONAL:
            s.has_tri = true;
            pw_put_int_opt(&s.tri, 3, a->v.b);
            break;
        case CXLA_ATTR_TRANSPOSE_A: {
            static const char *const tr[] = {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE",
                                             "ADJOINT"};
            s.has_tri = true;
            pw_put_int_opt(&s.tri, 4, word_index(tr, 4, a->v.s));
            break;
        }
        case CXLA_ATTR_PARAMETER_REPLICATION: {
            cxla_hlo_lexer lx;
            cxla_hlo_lexer_init(&lx, a->v.s, strlen(a->v.s), "parameter_replication", w->scratch);
            cxla_strbuf e;
            cxla_strbuf_init(&e);
            ok = cxla_hlo_expect(&lx, '{', "to open parameter_replication");
            if (ok && !cxla_hlo_accept(&lx, '}')) {
                do {
                    if (cxla_hlo_accept_keyword(&lx, "true")) {
                        pw_put_int(&e, 1, 1);
                    } else if (cxla_hlo_accept_keyword(&lx, "false")) {
                        pw_put_int(&e, 1, 0);
                    } else {
                        ok = cxla_hlo_error_found(&lx, lx.pos, "expected true or false");
                    }
                } while (ok && cxla_hlo_accept(&lx, ','));
                ok = ok && cxla_hlo_expect(&lx, '}', "to close parameter_replication");
            }
            if (ok) pw_put_msg(t, 61, &e);
            cxla_strbuf_free(&e);
            if (!ok) lex_error(w, &lx);
            break;
        }
        case CXLA_ATTR_CUSTOM_CALL_HAS_SIDE_EFFECT: pw_put_int_opt(t, 65, a->v.b); break;
        case CXLA_ATTR_OUTPUT_TO_OPERAND_ALIASING: ok = aliasing_msgs(w, a->v.s, t, 74, 1); break;
        case CXLA_ATTR_SCHEDULE: {
            static const char *const sch[] = {"SCHEDULE_NONE", "SCHEDULE_LATEST",
                                              "SCHEDULE_EARLIEST"};
            pw_put_int_opt(t, 76, word_index(sch, 3, a->v.s));
            break;
        }
        case CXLA_ATTR_API_VERSION: {
            static const char *const api[] = {
                "API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
                "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"};
            pw_put_int_opt(t, 77, word_index(api, 5, a->v.s));
            break;
        }
        case CXLA_ATTR_DELTA: pw_put_int_opt(t, 66, a->v.i); break;
        case CXLA_ATTR_CROSS_PROGRAM_PREFETCH_INDEX: pw_put_int(t, 80, a->v.i); break;
        case CXLA_ATTR_PADDING_TYPE: {
            static const char *const pt[] = {"PADDING_INVALID", "PADDING_VALID", "PADDING_SAME"};
            pw_put_int_opt(t, 75, word_index(pt, 3, a->v.s));
            break;
        }
        case CXLA_ATTR_ASYNC_EXECUTION_THREAD: pw_put_str_opt(t, 79, a->v.s); break;
        case CXLA_ATTR_K: pw_put_int_opt(t, 81, a->v.i); break;
        case CXLA_ATTR_LARGEST: pw_put_int_opt(t, 85, a->v.b); break;
        case CXLA_ATTR_IS_COMPOSITE: pw_put_int_opt(t, 89, a->v.b); break;
        case CXLA_ATTR_SHARDING: {
            cxla_hlo_lexer lx;
            cxla_hlo_lexer_init(&lx, a->v.s, strlen(a->v.s), "sharding", w->scratch);
            cxla_strbuf e;
            cxla_strbuf_init(&e);
            ok = sharding_msg(&lx, &e, 0);
            if (ok) pw_put_msg(t, 40, &e);
            cxla_strbuf_free(&e);
            if (!ok) lex_error(w, &lx);
            break;
        }
        case CXLA_ATTR_FRONTEND_ATTRIBUTES: {
            cxla_strbuf e;
            cxla_strbuf_init(&e);
            ok = frontend_msg(w, a->v.s, &e);
            if (ok) pw_put_msg(t, 68, &e);
            cxla_strbuf_free(&e);
            break;
        }
        case CXLA_ATTR_CONTROL_PREDECESSORS: {
            int64_t ids[1024], n = 0;
            for (int64_t k = 0; k < a->v.instrs.count && n < 1024; k++)
                if (a->v.instrs.items[k]) ids[n++] = a->v.instrs.items[k]->id;
            pw_put_packed(t, 37, ids, n);
            break;
        }
        case CXLA_ATTR_METADATA: {
            cxla_strbuf e;
            cxla_strbuf_init(&e);
            ok = metadata_msg(w, a->v.s, &e);
            if (ok) pw_put_msg(t, 7, &e);
            cxla_strbuf_free(&e);
            break;
        }
        case CXLA_ATTR_BACKEND_CONFIG: {
            const char *v = a->v.s;
            if (v[0] == '"') { /* a quoted string: its value */
                cxla_hlo_lexer lx;
                cxla_hlo_lexer_init(&lx, v, strlen(v), "backend_config", w->scratch);
                const char *u;
                ok = cxla_hlo_string(&lx, &u);
                if (ok)
                    pw_put_str_opt(t, 43, u);
                else
                    lex_error(w, &lx);
            } else {
                pw_put_str_opt(t, 43, v);
            }
            break;
        }
        default: break; /* no HloInstructionProto field cxla fills (yet) */
        }
    }
    if (s.has_ragged || op == CXLA_OP_RAGGED_DOT) {
        cxla_strbuf r;
        cxla_strbuf_init(&r);
        pw_put_msg(&r, 1, &s.dot);
        cxla_strbuf_append(&r, s.ragged.data ? s.ragged.data : "", s.ragged.len);
        pw_put_msg(t, 90, &r);
        cxla_strbuf_free(&r);
    } else if (s.has_dot) {
        pw_put_msg(t, 30, &s.dot);
    }
    if (s.has_gather) pw_put_msg(t, 33, &s.gather);
    if (s.has_scatter) pw_put_msg(t, 48, &s.scatter);
    if (s.has_precision) pw_put_msg(t, 51, &s.precision);
    if (s.has_tri) pw_put_msg(t, 59, &s.tri);
    if (s.has_chol) pw_put_msg(t, 62, &s.chol);
    cxla_strbuf_free(&s.dot);
    cxla_strbuf_free(&s.ragged);
    cxla_strbuf_free(&s.gather);
    cxla_strbuf_free(&s.scatter);
    cxla_strbuf_free(&s.precision);
    cxla_strbuf_free(&s.tri);
    cxla_strbuf_free(&s.chol);
    return ok;
}

/* ---- computations and the module ------------------------------------------------------ */

static bool computation_msg(wr *w, const cxla_computation *c, cxla_strbuf *t) {
    pw_put_str_opt(t, 1, c->name);
    for (int64_t i = 0; i < c->instr_count; i++) {
        cxla_strbuf e;
        cxla_strbuf_init(&e);
        bool ok = instr_msg(w, c->instrs[i], &e);
        pw_put_msg(t, 2, &e);
        cxla_strbuf_free(&e);
        if (!ok) {
            w->error = cxla_status_annotate(w->error, "instruction '%s' of computation '%s'",
                                            c->instrs[i]->name, c->name);
            return false;
        }
    }
    cxla_strbuf ps;
    cxla_strbuf_init(&ps);
    for (int64_t i = 0; i < c->param_count; i++)
        if (c->params[i]) put_shape(&ps, 1, &c->params[i]->shape);
    if (c->root) put_shape(&ps, 2, &c->root->shape);
    pw_put_msg(t, 4, &ps);
    cxla_strbuf_free(&ps);
    pw_put_int(t, 5, comp_id(w, c));
    if (c->root) pw_put_int(t, 6, c->root->id);
    pw_put_str_opt(t, 8, c->execution_thread);
    return true;
}

/* ---- the module config ------------------------------------------------------------- */

static const cxla_attr *find_module_attr(const cxla_module *m, cxla_attr_id id) {
    for (int64_t i = 0; i < m->attr_count; i++)
        if (m->attrs[i].id == id) return &m->attrs[i];
    return NULL;
}

static bool has_entry_layout(const cxla_module *m) {
    return m->has_entry_layout && module_has_attr(m, CXLA_ATTR_ENTRY_COMPUTATION_LAYOUT);
}

/* ProgramShapeProto: parameters 1, result 2. */
static void put_program_shape(cxla_strbuf *b, uint32_t field, const cxla_module *m) {
    cxla_strbuf ps;
    cxla_strbuf_init(&ps);
    for (int64_t i = 0; i < m->entry_param_count; i++) put_shape(&ps, 1, &m->entry_param_shapes[i]);
    put_shape(&ps, 2, &m->entry_result_shape);
    pw_put_msg(b, field, &ps);
    cxla_strbuf_free(&ps);
}

/* Whether |m| has a config that HloModuleProto cannot carry: a header attribute that
 * lives in XLA's HloModuleConfig. */
static bool has_config(const cxla_module *m) {
    const cxla_attr *alias = find_module_attr(m, CXLA_ATTR_ALIAS_PASSTHROUGH_PARAMS);
    return m->replica_count != 1 || m->num_partitions != 1 || (alias && alias->v.b) ||
           find_module_attr(m, CXLA_ATTR_ALLOW_SPMD_SHARDING_PROPAGATION_TO_PARAMETERS) ||
           find_module_attr(m, CXLA_ATTR_ALLOW_SPMD_SHARDING_PROPAGATION_TO_OUTPUT);
}

/* A header's `{true,false}` (kept as raw text) as a packed repeated bool. */
static cxla_status put_bool_list(cxla_strbuf *b, uint32_t field, const cxla_attr *a) {
    const char *s = a->v.s;
    int64_t *v = malloc((strlen(s) / 4 + 1) * sizeof *v); /* each value takes 4+ chars */
    if (!v) return oom();
    int64_t n = 0;
    while (*s == ' ' || *s == '{') s++;
    while (*s && *s != '}') {
        size_t len = strcspn(s, ",} ");
        if (len == 4 && strncmp(s, "true", 4) == 0) {
            v[n++] = 1;
        } else if (len == 5 && strncmp(s, "false", 5) == 0) {
            v[n++] = 0;
        } else {
            cxla_status st =
                cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                           "module attribute %s: '%.*s' is not true or false (in '%.60s')", a->name,
                           (int)len, s, a->v.s);
            free(v);
            return st;
        }
        s += len;
        while (*s == ' ' || *s == ',') s++;
    }
    pw_put_packed(b, field, v, n);
    free(v);
    return NULL;
}

/* HloModuleConfigProto (xla/xla.proto): entry_computation_layout 1, replica_count 4,
 * num_partitions 5, use_spmd_partitioning 7 (set with num_partitions != 1, as XLA's text
 * parser does), alias_passthrough_params 17, allow_spmd_sharding_propagation_to_output 27,
 * allow_spmd_sharding_propagation_to_parameters 33. */
static cxla_status config_msg(const cxla_module *m, cxla_strbuf *b) {
    if (has_entry_layout(m)) put_program_shape(b, 1, m);
    pw_put_int(b, 4, m->replica_count);
    pw_put_int(b, 5, m->num_partitions);
    if (m->num_partitions != 1) pw_put_int(b, 7, 1);
    const cxla_attr *a = find_module_attr(m, CXLA_ATTR_ALIAS_PASSTHROUGH_PARAMS);
    if (a && a->v.b) pw_put_int(b, 17, 1);
    cxla_status st = NULL;
    a = find_module_attr(m, CXLA_ATTR_ALLOW_SPMD_SHARDING_PROPAGATION_TO_OUTPUT);
    if (a) st = put_bool_list(b, 27, a);
    a = find_module_attr(m, CXLA_ATTR_ALLOW_SPMD_SHARDING_PROPAGATION_TO_PARAMETERS);
    if (a && !st) st = put_bool_list(b, 33, a);
    return st;
}

cxla_status cxla_hlo_write_proto(const cxla_module *module, char **out_bytes, size_t *out_size) {
    *out_bytes = NULL;
    *out_size = 0;
    if (!module) return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "no module to write");
    wr w = {.m = module};
    CXLA_RETURN_IF_ERROR(cxla_module_create("proto scratch", &w.scratch));
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    bool ok = true;
    pw_put_str_opt(&b, 1, module->name);
    if (module->entry) {
        pw_put_str_opt(&b, 2, module->entry->name);
        pw_put_int(&b, 6, comp_id(&w, module->entry));
    }
    for (int64_t i = 0; ok && i < module->comp_count; i++) {
        cxla_strbuf e;
        cxla_strbuf_init(&e);
        ok = computation_msg(&w, module->comps[i], &e);
        pw_put_msg(&b, 3, &e);
        cxla_strbuf_free(&e);
    }
    if (ok && has_entry_layout(module)) put_program_shape(&b, 4, module);
    for (int64_t i = 0; ok && i < module->attr_count; i++) {
        const cxla_attr *a = &module->attrs[i];
        cxla_strbuf e;
        cxla_strbuf_init(&e);
        switch (a->id) {
        case CXLA_ATTR_IS_SCHEDULED:
            if (a->v.b) {
                /* HloScheduleProto: sequences 1 (map<int64, InstructionSequence>: key 1,
                 * value 2 with instruction_ids 1), one per non-fusion computation in the
                 * order the text lists the instructions. */
                for (int64_t c = 0; c < module->comp_count; c++) {
                    const cxla_computation *comp = module->comps[c];
                    cxla_strbuf seq, entry;
                    cxla_strbuf_init(&seq);
                    cxla_strbuf_init(&entry);
                    int64_t *ids = malloc((size_t)(comp->instr_count + 1) * 8);
                    if (!ids) {
                        ok = false;
                        w.error = oom();
                    } else {
                        for (int64_t k = 0; k < comp->instr_count; k++)
                            ids[k] = comp->instrs[k]->id;
                        pw_put_packed(&seq, 1, ids, comp->instr_count);
                        free(ids);
                        pw_put_int(&entry, 1, comp_id(&w, comp));
                        pw_put_msg(&entry, 2, &seq);
                        pw_put_msg(&e, 1, &entry);
                    }
                    cxla_strbuf_free(&seq);
                    cxla_strbuf_free(&entry);
                }
                pw_put_msg(&b, 7, &e);
            }
            break;
        case CXLA_ATTR_INPUT_OUTPUT_ALIAS:
            ok = aliasing_msgs(&w, a->v.s, &e, 1, 0);
            if (ok) pw_put_msg(&b, 8, &e);
            break;
        case CXLA_ATTR_BUFFER_DONOR:
            ok = aliasing_msgs(&w, a->v.s, &e, 1, 2);
            if (ok) pw_put_msg(&b, 18, &e);
            break;
        case CXLA_ATTR_FRONTEND_ATTRIBUTES:
            ok = frontend_msg(&w, a->v.s, &e);
            if (ok) pw_put_msg(&b, 19, &e);
            break;
        default: break;
        }
        cxla_strbuf_free(&e);
        if (!ok && w.error) w.error = cxla_status_annotate(w.error, "module attribute %s", a->name);
    }
    if (ok && module->stack_frames) {
        cxla_strbuf e;
        cxla_strbuf_init(&e);
        ok = stack_frames_msg(&w, module->stack_frames, &e);
        if (ok) pw_put_msg(&b, 17, &e);
        cxla_strbuf_free(&e);
    }
    cxla_module_destroy(w.scratch);
    cxla_status st = w.error;
    if (!ok && !st) st = cxla_error(CXLA_STATUS_INTERNAL, "writing the proto failed");
    if (!st && b.failed) st = oom();
    if (st) {
        cxla_strbuf_free(&b);
        return st;
    }
    if (has_config(module)) {
        /* HloModuleProtoWithConfig: hlo_module 1, config 2. */
        cxla_strbuf wc, cfg;
        cxla_strbuf_init(&wc);
        cxla_strbuf_init(&cfg);
        st = config_msg(module, &cfg);
        pw_put_msg(&wc, 1, &b);
        pw_put_msg(&wc, 2, &cfg);
        cxla_strbuf_free(&cfg);
        cxla_strbuf_free(&b);
        if (!st && wc.failed) st = oom();
        if (st) {
            cxla_strbuf_free(&wc);
            return st;
        }
        b = wc;
    }
    *out_size = b.len;
    *out_bytes = b.data ? b.data : calloc(1, 1);
    if (!*out_bytes) return oom();
    return NULL;
}
