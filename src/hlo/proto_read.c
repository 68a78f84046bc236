/* Reading XLA's binary HloModuleProto (.pb) into a module.
 *
 * Decision: the wire format is decoded by cxla's own small reader (proto_wire.c: why
 * there), not protobuf-c; the field numbers of XLA's messages are the named constants
 * below, facts of xla/xla_data.proto and xla/service/hlo.proto.
 *
 * How: the proto is turned into HLO text, which cxla_hlo_parse then reads. The text
 * parser is the one place that makes IR from attribute values (names resolved, replica
 * groups expanded, entry layout decoded, XLA's structural checks made), so a proto gives
 * exactly the module its text would: printing it gives XLA's text. The generated text is
 * an internal step; errors in it are reported against the proto (the instruction and the
 * computation by name), and a proto that decodes but makes text the parser rejects is
 * reported with the parser's message under "in the HLO made from the proto".
 *
 * Accepted, told apart by content (pr_find_module, proto_read_attrs.c): HloModuleProto, HloProto
 * (field 1 holds the module; the buffer assignment is ignored), HloModuleProtoWithConfig (field 1
 * the module, field 2 the HloModuleConfigProto: what the text header carries of it is read, see
 * pr_put_config) and HloSnapshot (field 1 an HloProto; the arguments are ignored). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/hlo.h"
#include "hlo/lexer.h"
#include "hlo/proto.h"
#include "hlo/proto_read.h"
#include "hlo/proto_wire.h"
#include "literal/literal_internal.h"
#include "shape/shape_internal.h"

/* ---- helpers on decoded messages (declared in proto_read.h) ---- */

cxla_status pr_oom(void) {
    return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory reading an HLO proto");
}

cxla_status pr_load(rd *d, msg *m, const uint8_t *p, size_t len, const char *what) {
    memset(m->has, 0, sizeof m->has);
    pw_init(&m->r, d->base, p, len);
    pw_reader r = m->r;
    for (;;) {
        pw_field f;
        bool done;
        CXLA_RETURN_IF_ERROR(pw_next(&r, &f, &done, what));
        if (done) return NULL;
        if (f.number < MAXF) {
            /* A scalar where a message or bytes belong reads as an empty one. */
            if (f.wire != PW_LEN) {
                f.data = NULL;
                f.len = 0;
            }
            m->has[f.number] = true;
            m->f[f.number] = f;
        }
    }
}

cxla_status pr_load_field(rd *d, msg *m, const msg *parent, uint32_t n, const char *what) {
    if (!parent->has[n] || parent->f[n].wire != PW_LEN) return pr_load(d, m, NULL, 0, what);
    return pr_load(d, m, parent->f[n].data, parent->f[n].len, what);
}

int64_t pr_int(const msg *m, uint32_t n) {
    return m->has[n] && m->f[n].wire != PW_LEN ? (int64_t)m->f[n].u : 0;
}

const char *pr_str(rd *d, const msg *m, uint32_t n) {
    if (!m->has[n] || m->f[n].wire != PW_LEN) return "";
    if (m->f[n].len && memchr(m->f[n].data, 0, m->f[n].len)) {
        d->nul_in_string = true; /* reported at the end: C strings cannot hold it */
        return "";
    }
    return cxla_arena_strndup(d->arena, (const char *)m->f[n].data, m->f[n].len);
}

bool pr_has_bytes(const msg *m, uint32_t n) {
    return m->has[n] && m->f[n].wire == PW_LEN && m->f[n].len > 0;
}

/* Every value of repeated scalar field |n| (packed or not). On error |out| is freed. */
cxla_status pr_ints(const msg *m, uint32_t n, int wire, pw_ints *out, const char *what) {
    pw_reader r = m->r;
    for (;;) {
        pw_field f;
        bool done;
        cxla_status st = pw_next(&r, &f, &done, what);
        if (!st && done) return NULL;
        if (!st && f.number == n) st = pw_ints_add(out, &r, &f, wire, what);
        if (st) {
            pw_ints_free(out);
            return st;
        }
    }
}

/* Every occurrence of repeated message field |n|, as fields (data, len). */
cxla_status pr_list(rd *d, const msg *m, uint32_t n, pw_field **out, int64_t *count,
                    const char *what) {
    pw_reader r = m->r;
    int64_t k = 0;
    for (int pass = 0; pass < 2; pass++) {
        r = m->r;
        k = 0;
        for (;;) {
            pw_field f;
            bool done;
            CXLA_RETURN_IF_ERROR(pw_next(&r, &f, &done, what));
            if (done) break;
            if (f.number != n) continue;
            if (f.wire != PW_LEN)
                return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                                  "%s: field %u at byte %zu should be a message", what, n,
                                  f.offset);
            if (pass) (*out)[k] = f;
            k++;
        }
        if (!pass) {
            *out = cxla_arena_alloc_array(d->arena, (size_t)(k ? k : 1), sizeof(pw_field));
            if (!*out) return pr_oom();
        }
    }
    *count = k;
    return NULL;
}

void pr_put_ints(cxla_strbuf *b, const int64_t *v, int64_t n) {
    cxla_strbuf_putc(b, '{');
    for (int64_t i = 0; i < n; i++) cxla_strbuf_printf(b, i ? ",%" PRId64 : "%" PRId64, v[i]);
    cxla_strbuf_putc(b, '}');
}

/* ", name={1,2}" from repeated field |n| of |m|; |always| prints an empty list too. */
cxla_status pr_attr_ints(rd *d, const msg *m, uint32_t n, const char *name, bool always,
                         const char *what) {
    pw_ints v = {0};
    cxla_status s = pr_ints(m, n, PW_VARINT, &v, what);
    if (!s && (v.n || always)) {
        cxla_strbuf_printf(&d->out, ", %s=", name);
        pr_put_ints(&d->out, v.v, v.n);
    }
    pw_ints_free(&v);
    return s;
}

/* ---- element types and shapes ---------------------------------------------------- */

/* XLA's PrimitiveType numbers (xla_data.proto) and cxla's types. */
static const struct {
    int number;
    cxla_type type;
} k_types[] = {
    {1, CXLA_PRED},
    {30, CXLA_S1},
    {26, CXLA_S2},
    {21, CXLA_S4},
    {2, CXLA_S8},
    {3, CXLA_S16},
    {4, CXLA_S32},
    {5, CXLA_S64},
    {31, CXLA_U1},
    {27, CXLA_U2},
    {22, CXLA_U4},
    {6, CXLA_U8},
    {7, CXLA_U16},
    {8, CXLA_U32},
    {9, CXLA_U64},
    {10, CXLA_F16},
    {11, CXLA_F32},
    {16, CXLA_BF16},
    {12, CXLA_F64},
    {19, CXLA_F8E5M2},
    {28, CXLA_F8E4M3},
    {20, CXLA_F8E4M3FN},
    {23, CXLA_F8E4M3B11FNUZ},
    {29, CXLA_F8E3M4},
    {24, CXLA_F8E5M2FNUZ},
    {25, CXLA_F8E4M3FNUZ},
    {32, CXLA_F4E2M1FN},
    {33, CXLA_F8E8M0FNU},
    {15, CXLA_C64},
    {18, CXLA_C128},
    {13, CXLA_TUPLE},
    {14, CXLA_OPAQUE},
    {17, CXLA_TOKEN},
};

cxla_type cxla_proto_type_from_number(int64_t number) {
    for (size_t i = 0; i < sizeof k_types / sizeof k_types[0]; i++)
        if (k_types[i].number == number) return k_types[i].type;
    return CXLA_TYPE_INVALID;
}

int cxla_proto_type_number(cxla_type type) {
    for (size_t i = 0; i < sizeof k_types / sizeof k_types[0]; i++)
        if (k_types[i].type == type) return k_types[i].number;
    return 0;
}

/* ShapeProto: element_type 2, dimensions 3, tuple_shapes 4, layout 5, is_dynamic 6.
 * LayoutProto: minor_to_major 1, tiles 6 (TileProto: dimensions 1), element_size_in_bits
 * 7, memory_space 8, index_primitive_type 11, pointer_primitive_type 12,
 * dynamic_shape_metadata_prefix_bytes 15, tail_padding_alignment_in_elements 16. */
enum { SH_TYPE = 2, SH_DIMS = 3, SH_TUPLE = 4, SH_LAYOUT = 5, SH_DYNAMIC = 6 };

static cxla_status decode_layout(rd *d, const msg *shape_msg, cxla_shape *s) {
    msg *m = malloc(sizeof *m);
    if (!m) return pr_oom();
    cxla_status st = pr_load_field(d, m, shape_msg, SH_LAYOUT, "LayoutProto");
    pw_ints mtm = {0};
    if (!st) st = pr_ints(m, 1, PW_VARINT, &mtm, "LayoutProto.minor_to_major");
    if (!st && mtm.n != s->rank)
        st = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                        "LayoutProto: minor_to_major has %" PRId64
                        " entries for a shape of rank %" PRId64,
                        mtm.n, s->rank);
    cxla_layout *l = NULL;
    if (!st) {
        l = cxla_arena_alloc(d->arena, sizeof *l);
        if (!l) st = pr_oom();
    }
    if (!st) {
        memset(l, 0, sizeof *l);
        l->minor_to_major = cxla_arena_alloc_array(d->arena, (size_t)(mtm.n ? mtm.n : 1), 8);
        if (!l->minor_to_major) st = pr_oom();
    }
    if (!st) {
        for (int64_t i = 0; i < mtm.n; i++) l->minor_to_major[i] = mtm.v[i];
        l->element_size_bits = pr_int(m, 7);
        l->memory_space = pr_int(m, 8);
        l->dynamic_metadata_prefix = pr_int(m, 15);
        l->tail_padding_alignment = pr_int(m, 16);
        l->index_type = m->has[11] ? cxla_proto_type_from_number(pr_int(m, 11)) : 0;
        l->pointer_type = m->has[12] ? cxla_proto_type_from_number(pr_int(m, 12)) : 0;
        pw_field *tiles;
        int64_t nt;
        st = pr_list(d, m, 6, &tiles, &nt, "LayoutProto.tiles");
        if (!st && nt) {
            l->tiles = cxla_arena_alloc_array(d->arena, (size_t)nt, sizeof(cxla_tile));
            if (!l->tiles) st = pr_oom();
            for (int64_t i = 0; !st && i < nt; i++) {
                msg *t = malloc(sizeof *t);
                pw_ints td = {0};
                st = t ? pr_load(d, t, tiles[i].data, tiles[i].len, "TileProto") : pr_oom();
                if (!st) st = pr_ints(t, 1, PW_VARINT, &td, "TileProto.dimensions");
                if (!st) {
                    l->tiles[i].rank = td.n;
                    l->tiles[i].dims = cxla_arena_alloc_array(d->arena, (size_t)td.n + 1, 8);
                    if (!l->tiles[i].dims) st = pr_oom();
                    /* XLA's kCombineDimension is INT64_MIN. */
                    for (int64_t j = 0; !st && j < td.n; j++)
                        l->tiles[i].dims[j] = td.v[j] == INT64_MIN ? CXLA_TILE_COMBINE : td.v[j];
                }
                pw_ints_free(&td);
                free(t);
            }
            l->tile_count = nt;
        }
    }
    if (!st) s->layout = l;
    pw_ints_free(&mtm);
    free(m);
    return st;
}

static cxla_status decode_shape(rd *d, const uint8_t *p, size_t len, cxla_shape *s) {
    if (d->depth > 64)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "ShapeProto nested too deeply");
    memset(s, 0, sizeof *s);
    msg *m = malloc(sizeof *m);
    if (!m) return pr_oom();
    d->depth++;
    pw_ints dims = {0}, dyn = {0};
    cxla_status st = pr_load(d, m, p, len, "ShapeProto");
    if (!st) {
        int64_t t = pr_int(m, SH_TYPE);
        s->type = cxla_proto_type_from_number(t);
        if (s->type == CXLA_TYPE_INVALID)
            st = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                            "ShapeProto: unknown or invalid element type %" PRId64, t);
    }
    if (!st && s->type == CXLA_TUPLE) {
        pw_field *el;
        int64_t n;
        st = pr_list(d, m, SH_TUPLE, &el, &n, "ShapeProto.tuple_shapes");
        if (!st) {
            s->tuple_count = n;
            s->elements = cxla_arena_alloc_array(d->arena, (size_t)(n ? n : 1), sizeof *s);
            if (!s->elements) st = pr_oom();
        }
        for (int64_t i = 0; !st && i < n; i++)
            st = decode_shape(d, el[i].data, el[i].len, &s->elements[i]);
    } else if (!st && s->type != CXLA_TOKEN && s->type != CXLA_OPAQUE) {
        st = pr_ints(m, SH_DIMS, PW_VARINT, &dims, "ShapeProto.dimensions");
        if (!st) st = pr_ints(m, SH_DYNAMIC, PW_VARINT, &dyn, "ShapeProto.is_dynamic_dimension");
        if (!st && dims.n > 64)
            st = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                            "ShapeProto: rank %" PRId64 " is more than cxla takes (64)", dims.n);
        if (!st && dyn.n && dyn.n != dims.n)
            st = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                            "ShapeProto: %" PRId64 " is_dynamic_dimension flags for rank %" PRId64,
                            dyn.n, dims.n);
        if (!st) {
            s->rank = dims.n;
            s->dims = cxla_arena_alloc_array(d->arena, (size_t)dims.n + 1, 8);
            if (!s->dims) st = pr_oom();
        }
        bool any_dyn = false;
        for (int64_t i = 0; !st && i < dims.n; i++) {
            /* XLA's kUnboundedSize is INT64_MIN. */
            s->dims[i] = dims.v[i] == INT64_MIN ? CXLA_DIM_UNBOUNDED : dims.v[i];
            if (s->dims[i] < 0 && s->dims[i] != CXLA_DIM_UNBOUNDED)
                st = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                                "ShapeProto: negative dimension %" PRId64, dims.v[i]);
            if (i < dyn.n && dyn.v[i]) any_dyn = true;
        }
        if (!st && any_dyn) {
            s->dynamic = cxla_arena_alloc(d->arena, (size_t)dims.n + 1);
            if (!s->dynamic) st = pr_oom();
            for (int64_t i = 0; !st && i < dims.n; i++) s->dynamic[i] = dyn.v[i] != 0;
        }
        if (!st && m->has[SH_LAYOUT]) st = decode_layout(d, m, s);
    }
    pw_ints_free(&dims);
    pw_ints_free(&dyn);
    free(m);
    d->depth--;
    return st;
}

static cxla_status put_shape_field(rd *d, const msg *m, uint32_t n, const char *what) {
    if (!m->has[n] || m->f[n].wire != PW_LEN)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "%s has no shape", what);
    cxla_shape s;
    CXLA_RETURN_IF_ERROR(decode_shape(d, m->f[n].data, m->f[n].len, &s));
    cxla_shape_print(&d->out, &s, 0);
    return NULL;
}

/* ---- literals ---------------------------------------------------------------------- */

/* LiteralProto: shape 1, tuple_literals 10, and one field of values per element type. */
static uint32_t literal_field(cxla_type t, int *wire) {
    *wire = PW_LEN; /* bytes */
    switch (t) {
    case CXLA_PRED: *wire = PW_VARINT; return 2;
    case CXLA_S1: return 30;
    case CXLA_S2: return 26;
    case CXLA_S4: return 21;
    case CXLA_S8: return 15;
    case CXLA_U1: return 31;
    case CXLA_U2: return 27;
    case CXLA_U4: return 22;
    case CXLA_U8: return 3;
    case CXLA_S32: *wire = PW_VARINT; return 4;
    case CXLA_S64: *wire = PW_VARINT; return 5;
    case CXLA_U32: *wire = PW_VARINT; return 6;
    case CXLA_U64: *wire = PW_VARINT; return 7;
    case CXLA_F32: *wire = PW_I32; return 8;
    case CXLA_F64: *wire = PW_I64; return 9;
    case CXLA_C64: *wire = PW_I32; return 12;
    case CXLA_C128: *wire = PW_I64; return 18;
    case CXLA_F16: return 11;
    case CXLA_BF16: return 13;
    case CXLA_U16: return 16;
    case CXLA_S16: return 17;
    case CXLA_F4E2M1FN: return 32;
    case CXLA_F8E3M4: return 29;
    case CXLA_F8E4M3B11FNUZ: return 23;
    case CXLA_F8E4M3FN: return 20;
    case CXLA_F8E4M3FNUZ: return 25;
    case CXLA_F8E4M3: return 28;
    case CXLA_F8E5M2FNUZ: return 24;
    case CXLA_F8E5M2: return 19;
    case CXLA_F8E8M0FNU: return 33;
    default: return 0;
    }
}

uint32_t cxla_proto_literal_field(cxla_type type, int *out_wire) {
    return literal_field(type, out_wire);
}

static cxla_status decode_literal(rd *d, const uint8_t *p, size_t len, cxla_literal **out);

/* The most positions an empty array literal may have before its first zero dimension: its
 * text (the module's, which cxla reads the proto into) holds braces for each. */
enum { EMPTY_OUTER_MAX = 1 << 20 };

static cxla_status fill_array(rd *d, const msg *m, cxla_literal *lit) {
    const cxla_shape *sh = cxla_literal_shape(lit);
    cxla_type t = sh->type;
    int64_t n = cxla_literal_element_count(lit);
    int wire;
    uint32_t fn = literal_field(t, &wire);
    if (!fn)
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED, "LiteralProto of type %s", cxla_type_name(t));
    if (n == 0) {
        /* An empty array prints a pair of braces for every position of its dimensions
         * before the last zero one: f32[99,97,108,108,0] would be 113 million of them. */
        int64_t outer = 1;
        for (int64_t i = 0; i < sh->rank && sh->dims[i] != 0; i++)
            if ((outer = outer * sh->dims[i]) > EMPTY_OUTER_MAX)
                return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                                  "LiteralProto of an empty array with over %d positions "
                                  "in its dimensions before the zero one",
                                  EMPTY_OUTER_MAX);
    }
    uint8_t *data = cxla_literal_data(lit);
    size_t storage = cxla_type_storage(t);
    if (wire == PW_LEN) {
        size_t have = m->has[fn] && m->f[fn].wire == PW_LEN ? m->f[fn].len : 0;
        const uint8_t *src = have ? m->f[fn].data : NULL;
        int bits = cxla_type_bits(t);
        if (n == 0) return NULL;
        if (have == (size_t)n * storage) {
            /* Little endian on the wire and in memory (cxla's hosts are little endian). */
            memcpy(data, src, have);
        } else if (bits < 8 && have == ((size_t)n * (size_t)bits + 7) / 8) {
            /* packed sub-byte values, low bits first */
            for (int64_t i = 0; i < n; i++) {
                size_t bit = (size_t)i * (size_t)bits;
                unsigned v = (src[bit / 8] >> (bit % 8)) & ((1u << bits) - 1);
                if (cxla_type_get_info(t)->klass == CXLA_CLASS_SIGNED && (v >> (bits - 1)))
                    v |= ~0u << bits; /* sign-extend, as cxla stores signed sub-byte ints */
                data[i] = (uint8_t)v;
            }
        } else {
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                              "LiteralProto of %s: %zu bytes of values for %" PRId64 " elements",
                              cxla_type_name(t), have, n);
        }
        return NULL;
    }
    pw_ints v = {0};
    CXLA_RETURN_IF_ERROR(pr_ints(m, fn, wire, &v, "LiteralProto values"));
    int64_t want = (t == CXLA_C64 || t == CXLA_C128) ? 2 * n : n;
    cxla_status st = NULL;
    if (v.n != want) {
        st = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                        "LiteralProto of %s: %" PRId64 " values for %" PRId64 " elements",
                        cxla_type_name(t), v.n, n);
    } else {
        for (int64_t i = 0; i < want; i++) {
            uint64_t u = (uint64_t)v.v[i];
            switch (t) {
            case CXLA_PRED: data[i] = u != 0; break;
            case CXLA_S32: {
                int32_t x = (int32_t)(uint32_t)u;
                memcpy(data + 4 * i, &x, 4);
                break;
            }
            case CXLA_U32:
            case CXLA_F32:
            case CXLA_C64: {
                uint32_t x = (uint32_t)u;
                memcpy(data + 4 * i, &x, 4);
                break;
            }
            default: memcpy(data + 8 * i, &u, 8); break;
            }
        }
    }
    pw_ints_free(&v);
    return st;
}

/* Every element takes at least one bit of the message (packed one-bit values), and a
 * value of 8 bytes in memory at least one byte of it; an array that the message cannot
 * fill is refused before it is allocated (fuzz_proto turned a dimension of a 200-byte
 * module into a request for 28 GB). The byte bound leaves room for padded layouts. */
static cxla_status check_fillable(const cxla_shape *sh, size_t len) {
    int64_t n = 0;
    size_t bytes = 0;
    CXLA_RETURN_IF_ERROR(cxla_shape_element_count(sh, &n));
    CXLA_RETURN_IF_ERROR(cxla_shape_byte_size(sh, &bytes));
    uint64_t room = 8 * ((uint64_t)len + 8);
    if ((uint64_t)n > room || bytes > 8 * room)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "LiteralProto of %s: %" PRId64 " elements (%zu bytes) cannot come "
                          "from a message of %zu bytes",
                          cxla_type_name(sh->type), n, bytes, len);
    return NULL;
}

static cxla_status decode_literal(rd *d, const uint8_t *p, size_t len, cxla_literal **out) {
    if (d->depth > 64)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "LiteralProto nested too deeply");
    msg *m = malloc(sizeof *m);
    if (!m) return pr_oom();
    d->depth++;
    cxla_status st = pr_load(d, m, p, len, "LiteralProto");
    cxla_shape sh;
    if (!st && !m->has[1])
        st = cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "LiteralProto without a shape");
    if (!st) st = decode_shape(d, m->f[1].data, m->f[1].len, &sh);
    if (!st && sh.type == CXLA_TUPLE) {
        pw_field *el;
        int64_t n;
        st = pr_list(d, m, 10, &el, &n, "LiteralProto.tuple_literals");
        if (!st && n != sh.tuple_count)
            st = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                            "LiteralProto: %" PRId64 " tuple elements for a tuple of %" PRId64, n,
                            sh.tuple_count);
        cxla_literal **els = NULL;
        if (!st) {
            els = calloc((size_t)(n ? n : 1), sizeof *els);
            if (!els) st = pr_oom();
        }
        int64_t made = 0;
        for (; !st && made < n; made++)
            st = decode_literal(d, el[made].data, el[made].len, &els[made]);
        if (!st) st = cxla_literal_create_tuple(els, n, out);
        if (st) /* on success the tuple owns its elements */
            for (int64_t i = 0; i < made; i++) cxla_literal_free(els ? els[i] : NULL);
        free(els);
    } else if (!st) {
        if (sh.type == CXLA_TOKEN || sh.type == CXLA_OPAQUE) {
            st = cxla_literal_create(&sh, out);
        } else {
            cxla_literal *lit = NULL;
            st = check_fillable(&sh, len);
            if (!st) st = cxla_literal_create(&sh, &lit);
            if (!st) st = fill_array(d, m, lit);
            if (st)
                cxla_literal_free(lit);
            else
                *out = lit;
        }
    }
    free(m);
    d->depth--;
    return st;
}

/* ---- instructions ------------------------------------------------------------------ */

/* PrecisionConfig.Algorithm by number, as the text writes them. */
const char *const cxla_proto_dot_algorithms[CXLA_PROTO_DOT_ALGORITHM_COUNT] = {
    "unset",
    "dot_any_f8_any_f8_f32",
    "dot_any_f8_any_f8_f32_fast_accum",
    "dot_f16_f16_f16",
    "dot_f16_f16_f32",
    "dot_bf16_bf16_bf16",
    "dot_bf16_bf16_f32",
    "dot_bf16_bf16_f32_x3",
    "dot_bf16_bf16_f32_x6",
    "dot_tf32_tf32_f32",
    "dot_tf32_tf32_f32_x3",
    "dot_f32_f32_f32",
    "dot_f64_f64_f64",
    "dot_bf16_bf16_f32_x9",
};

/* HloInstructionProto field numbers (xla/service/hlo.proto). */
enum {
    I_NAME = 1,
    I_OPCODE = 2,
    I_SHAPE = 3,
    I_METADATA = 7,
    I_LITERAL = 8,
    I_PARAMETER = 9,
    I_FUSION_KIND = 11,
    I_TUPLE_INDEX = 13,
    I_DIMENSIONS = 14,
    I_WINDOW = 15,
    I_CONV_DIMS = 16,
    I_SLICE = 17,
    I_EXPONENT_BITS = 18,
    I_MANTISSA_BITS = 19,
    I_DYNAMIC_SLICE_SIZES = 20,
    I_PADDING = 21,
    I_OUTFEED_CONFIG = 22,
    I_DISTRIBUTION = 23,
    I_EPSILON = 24,
    I_FEATURE_INDEX = 25,
    I_CHANNEL_ID = 26,
    I_INFEED_CONFIG = 27,
    I_TARGET = 28,
    I_OUTFEED_SHAPE = 29,
    I_DOT_DIMS = 30,
    I_FFT_TYPE = 31,
    I_FFT_LENGTH = 32,
    I_GATHER_DIMS = 33,
    I_GATHER_SLICE_SIZES = 34,
    I_ID = 35,
    I_OPERANDS = 36,
    I_CONTROL = 37,
    I_CALLED = 38,
    I_SHARDING = 40,
    I_BACKEND_CONFIG = 43,
    I_IS_HOST_TRANSFER = 47,
    I_SCATTER_DIMS = 48,
    I_FEATURE_GROUPS = 50,
    I_PRECISION = 51,
    I_SOURCE_TARGET = 52,
    I_CONSTRAIN_LAYOUT = 56,
    I_OPERAND_SHAPES = 57,
    I_BATCH_GROUPS = 58,
    I_TRIANGULAR = 59,
    I_IS_STABLE = 60,
    I_PARAM_REPLICATION = 61,
    I_CHOLESKY = 62,
    I_DIRECTION = 63,
    I_SIDE_EFFECT = 65,
    I_DELTA = 66,
    I_SORTED = 67,
    I_FRONTEND = 68,
    I_UNIQUE = 69,
    I_RNG_ALGORITHM = 70,
    I_GLOBAL_IDS = 71,
    I_COMPARISON_TYPE = 72,
    I_OUTPUT_ALIASING = 74,
    I_PADDING_TYPE = 75,
    I_SCHEDULE = 76,
    I_API_VERSION = 77,
    I_ASYNC_THREAD = 79,
    I_PREFETCH = 80,
    I_K = 81,
    I_LARGEST = 85,
    I_IS_COMPOSITE = 89,
    I_RAGGED_DOT_DIMS = 90,
};

static const char *instr_name(rd *d, int64_t id) {
    for (int64_t i = 0; i < d->instr_count; i++)
        if (d->instr_ids[i] == id) return d->instr_names[i];
    return NULL;
}

static const char *comp_name(rd *d, int64_t id) {
    for (int64_t i = 0; i < d->comp_count; i++)
        if (d->comp_ids[i] == id) return d->comp_names[i];
    return NULL;
}

static cxla_status put_names(rd *d, const pw_ints *ids, bool comps, int64_t from, int64_t to,
                             bool braces) {
    if (braces) cxla_strbuf_putc(&d->out, '{');
    for (int64_t i = from; i < to; i++) {
        const char *nm = comps ? comp_name(d, ids->v[i]) : instr_name(d, ids->v[i]);
        if (!nm)
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "unknown %s id %" PRId64,
                              comps ? "computation" : "instruction", ids->v[i]);
        cxla_strbuf_puts(&d->out, i > from ? ", %" : "%");
        cxla_strbuf_puts(&d->out, nm);
    }
    if (braces) cxla_strbuf_putc(&d->out, '}');
    return NULL;
}

/* Names and enum words are written into the text as they are: refuse what the text could
 * not hold (a comma or a space would change what the parser reads). */
static cxla_status check_name(const char *s, const char *what) {
    bool ok = s && cxla_hlo_is_name_start(s[0]);
    for (const char *c = s; ok && *c; c++) ok = cxla_hlo_is_name_char(*c);
    if (!ok)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "%s '%.64s' is not a valid HLO name", what,
                          s ? s : "");
    return NULL;
}

static void put_bool(rd *d, const msg *m, uint32_t n, const char *name) {
    if (pr_int(m, n)) cxla_strbuf_printf(&d->out, ", %s=true", name);
}

static const char *enum_name(int64_t v, const char *const *names, size_t count) {
    return v >= 0 && (size_t)v < count ? names[v] : NULL;
}

/* The called computations, under the attribute names the text uses for |op|. */
static cxla_status put_called(rd *d, cxla_opcode op, const pw_ints *c, bool pred_branch) {
    cxla_strbuf *b = &d->out;
    if (!c->n) return NULL;
    switch (op) {
    case CXLA_OP_WHILE: /* XLA keeps {body, condition} */
        if (c->n != 2)
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                              "a while calls 2 computations, not %" PRId64, c->n);
        cxla_strbuf_puts(b, ", condition=");
        CXLA_RETURN_IF_ERROR(put_names(d, c, true, 1, 2, false));
        cxla_strbuf_puts(b, ", body=");
        return put_names(d, c, true, 0, 1, false);
    case CXLA_OP_CONDITIONAL:
        if (pred_branch && c->n == 2) {
            cxla_strbuf_puts(b, ", true_computation=");
            CXLA_RETURN_IF_ERROR(put_names(d, c, true, 0, 1, false));
            cxla_strbuf_puts(b, ", false_computation=");
            return put_names(d, c, true, 1, 2, false);
        }
        cxla_strbuf_puts(b, ", branch_computations=");
        return put_names(d, c, true, 0, c->n, true);
    case CXLA_OP_SELECT_AND_SCATTER:
        if (c->n != 2)
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                              "a select-and-scatter calls 2 computations, not %" PRId64, c->n);
        cxla_strbuf_puts(b, ", select=");
        CXLA_RETURN_IF_ERROR(put_names(d, c, true, 0, 1, false));
        cxla_strbuf_puts(b, ", scatter=");
        return put_names(d, c, true, 1, 2, false);
    case CXLA_OP_FUSION:
    case CXLA_OP_ASYNC_START:
    case CXLA_OP_ASYNC_UPDATE:
    case CXLA_OP_ASYNC_DONE:
        cxla_strbuf_puts(b, ", calls=");
        return put_names(d, c, true, 0, c->n, false);
    case CXLA_OP_CUSTOM_CALL:
        cxla_strbuf_puts(b, ", called_computations=");
        return put_names(d, c, true, 0, c->n, true);
    default:
        if (c->n == 1) {
            cxla_strbuf_puts(b, ", to_apply=");
            return put_names(d, c, true, 0, 1, false);
        }
        cxla_strbuf_puts(b, ", called_computations=");
        return put_names(d, c, true, 0, c->n, true);
    }
}

/* Prints a float as the shortest decimal that reads back as the same float. */
static void put_float(rd *d, float f) {
    char buf[48];
    for (int p = 1; p <= 9; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, (double)f);
        if (strtof(buf, NULL) == f) break;
    }
    cxla_strbuf_puts(&d->out, buf);
}

/* The ranks of the buffers of instruction |id|'s result: its array, or each element of its
 * tuple (arrays; a nested tuple counts as rank 0), into *out (malloc'd), *count of them. */
static cxla_status buffer_ranks(rd *d, int64_t id, int64_t **out, int64_t *count) {
    *out = NULL;
    *count = 0;
    const pw_field *f = NULL;
    for (int64_t i = 0; i < d->instr_count; i++)
        if (d->instr_ids[i] == id) f = &d->instr_shapes[i];
    if (!f) return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "operand %" PRId64 " is unknown", id);
    msg *sm = malloc(sizeof *sm);
    cxla_status st = sm ? pr_load(d, sm, f->data, f->len, "ShapeProto") : pr_oom();
    pw_field *el = NULL;
    int64_t n = 1;
    bool tuple = !st && cxla_proto_type_from_number(pr_int(sm, SH_TYPE)) == CXLA_TUPLE;
    if (tuple) st = pr_list(d, sm, SH_TUPLE, &el, &n, "ShapeProto.tuple_shapes");
    int64_t *ranks = st ? NULL : malloc((size_t)(n ? n : 1) * sizeof(*ranks));
    if (!st && !ranks) st = pr_oom();
    for (int64_t b = 0; !st && b < n; b++) {
        if (tuple) st = pr_load(d, sm, el[b].data, el[b].len, "ShapeProto");
        pw_ints dims = {0};
        if (!st) st = pr_ints(sm, SH_DIMS, PW_VARINT, &dims, "ShapeProto.dimensions");
        if (!st) ranks[b] = dims.n;
        pw_ints_free(&dims);
    }
    free(sm);
    if (st) {
        free(ranks);
        return st;
    }
    *out = ranks;
    *count = n;
    return NULL;
}

/* The in-place collective-permute's slice sizes: XLA flattens its lists into
 * dynamic_slice_sizes, buffer by buffer and, within a buffer, slice by slice, each list of
 * the buffer's rank (HloInstruction::CreateFromProto splits them so, by operand 0's
 * buffers and the slices operand 2's start indices name). The same number of slices k
 * for every buffer, as the text's slice_sizes={{...},...} needs: k is the count over the
 * sum of the ranks. */
static cxla_status put_permute_slice_sizes(rd *d, int64_t operand, const pw_ints *v) {
    int64_t *ranks = NULL, nb = 0, sum = 0;
    CXLA_RETURN_IF_ERROR(buffer_ranks(d, operand, &ranks, &nb));
    for (int64_t b = 0; b < nb; b++) sum += ranks[b];
    if (sum <= 0 || v->n % sum) {
        cxla_strbuf r;
        cxla_strbuf_init(&r);
        pr_put_ints(&r, ranks, nb);
        cxla_status st = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                                    "%" PRId64 " slice sizes do not split into lists for the "
                                    "buffers of ranks %s, the same number of slices each",
                                    v->n, r.data ? r.data : "?");
        cxla_strbuf_free(&r);
        free(ranks);
        return st;
    }
    int64_t slices = v->n / sum, at = 0;
    cxla_strbuf *b = &d->out;
    cxla_strbuf_puts(b, ", slice_sizes={");
    for (int64_t k = 0; k < nb; k++)
        for (int64_t j = 0; j < slices; j++) {
            if (at) cxla_strbuf_putc(b, ',');
            pr_put_ints(b, v->v + at, ranks[k]);
            at += ranks[k];
        }
    cxla_strbuf_putc(b, '}');
    free(ranks);
    return NULL;
}

static cxla_status put_instr_body(rd *d, const msg *m, cxla_opcode op, const char *opname) {
    cxla_strbuf *b = &d->out;
    cxla_status st = NULL;
    pw_ints operands = {0}, called = {0}, control = {0};
    CXLA_RETURN_IF_ERROR(put_shape_field(d, m, I_SHAPE, "the instruction"));
    cxla_strbuf_printf(b, " %s(", opname);
    if (op == CXLA_OP_PARAMETER) {
        cxla_strbuf_printf(b, "%" PRId64, pr_int(m, I_PARAMETER));
    } else if (op == CXLA_OP_CONSTANT) {
        if (!m->has[I_LITERAL]) { /* an elided constant, as cxla writes "{...}" */
            cxla_strbuf_puts(b, "{...}");
        } else {
            cxla_literal *lit = NULL;
            CXLA_RETURN_IF_ERROR(
                decode_literal(d, m->f[I_LITERAL].data, m->f[I_LITERAL].len, &lit));
            cxla_literal_print(b, lit, 0);
            cxla_literal_free(lit);
        }
    }
    st = pr_ints(m, I_OPERANDS, PW_VARINT, &operands, "operand_ids");
    if (!st) st = put_names(d, &operands, false, 0, operands.n, false);
    cxla_strbuf_putc(b, ')');
    if (!st) st = pr_ints(m, I_CALLED, PW_VARINT, &called, "called_computation_ids");
    if (!st) st = pr_ints(m, I_CONTROL, PW_VARINT, &control, "control_predecessor_ids");
    if (st) goto done;

    /* Operation attributes; the parser sorts them into XLA's printing order. */
    if (pr_has_bytes(m, I_FUSION_KIND)) {
        if ((st = check_name(pr_str(d, m, I_FUSION_KIND), "fusion_kind"))) goto done;
        cxla_strbuf_printf(b, ", kind=%s", pr_str(d, m, I_FUSION_KIND));
    }
    if (op == CXLA_OP_GET_TUPLE_ELEMENT)
        cxla_strbuf_printf(b, ", index=%" PRId64, pr_int(m, I_TUPLE_INDEX));
    {
        bool always = op == CXLA_OP_BROADCAST || op == CXLA_OP_CONCATENATE ||
                      op == CXLA_OP_REDUCE || op == CXLA_OP_REVERSE || op == CXLA_OP_TRANSPOSE ||
                      op == CXLA_OP_SORT || op == CXLA_OP_MAP;
        if (op == CXLA_OP_IOTA) {
            pw_ints v = {0};
            st = pr_ints(m, I_DIMENSIONS, PW_VARINT, &v, "dimensions");
            cxla_strbuf_printf(b, ", iota_dimension=%" PRId64, v.n ? v.v[0] : 0);
            pw_ints_free(&v);
        } else {
            st = pr_attr_ints(d, m, I_DIMENSIONS, "dimensions", always, "dimensions");
        }
        if (st) goto done;
    }
    if (m->has[I_WINDOW] && (st = pr_put_window(d, m, I_WINDOW))) goto done;
    if (m->has[I_CONV_DIMS] && (st = pr_put_dim_labels(d, m))) goto done;
    if (pr_int(m, I_FEATURE_GROUPS) > 1)
        cxla_strbuf_printf(b, ", feature_group_count=%" PRId64, pr_int(m, I_FEATURE_GROUPS));
    if (pr_int(m, I_BATCH_GROUPS) > 1)
        cxla_strbuf_printf(b, ", batch_group_count=%" PRId64, pr_int(m, I_BATCH_GROUPS));
    if (m->has[I_SLICE] || op == CXLA_OP_SLICE) {
        pw_field *sl;
        int64_t n;
        if ((st = pr_list(d, m, I_SLICE, &sl, &n, "slice_dimensions"))) goto done;
        msg *sm = malloc(sizeof *sm);
        if (!sm) {
            st = pr_oom();
            goto done;
        }
        cxla_strbuf_puts(b, ", slice={");
        for (int64_t i = 0; !st && i < n; i++) {
            st = pr_load(d, sm, sl[i].data, sl[i].len, "SliceDimensions");
            if (st) break;
            int64_t stride = sm->has[3] ? pr_int(sm, 3) : 1;
            cxla_strbuf_printf(b, "%s[%" PRId64 ":%" PRId64, i ? ", " : "", pr_int(sm, 1),
                               pr_int(sm, 2));
            if (stride != 1) cxla_strbuf_printf(b, ":%" PRId64, stride);
            cxla_strbuf_putc(b, ']');
        }
        cxla_strbuf_putc(b, '}');
        free(sm);
        if (st) goto done;
    }
    if (op == CXLA_OP_REDUCE_PRECISION)
        cxla_strbuf_printf(b, ", exponent_bits=%" PRId64 ", mantissa_bits=%" PRId64,
                           pr_int(m, I_EXPONENT_BITS), pr_int(m, I_MANTISSA_BITS));
    if (op == CXLA_OP_COLLECTIVE_PERMUTE || op == CXLA_OP_COLLECTIVE_PERMUTE_START) {
        pw_ints v = {0};
        st = pr_ints(m, I_DYNAMIC_SLICE_SIZES, PW_VARINT, &v, "dynamic_slice_sizes");
        if (!st && v.n) st = put_permute_slice_sizes(d, operands.n ? operands.v[0] : -1, &v);
        pw_ints_free(&v);
    } else {
        st = pr_attr_ints(d, m, I_DYNAMIC_SLICE_SIZES, "dynamic_slice_sizes",
                          op == CXLA_OP_DYNAMIC_SLICE, "dynamic_slice_sizes");
    }
    if (st) goto done;
    if (m->has[I_PADDING]) {
        pw_field *pd;
        int64_t n;
        msg *pm = malloc(sizeof *pm);
        st = pm ? pr_load_field(d, pm, m, I_PADDING, "PaddingConfig") : pr_oom();
        if (!st) st = pr_list(d, pm, 1, &pd, &n, "PaddingConfig.dimensions");
        if (!st) cxla_strbuf_puts(b, ", padding=");
        for (int64_t i = 0; !st && i < n; i++) {
            st = pr_load(d, pm, pd[i].data, pd[i].len, "PaddingConfigDimension");
            if (st) break;
            cxla_strbuf_printf(b, "%s%" PRId64 "_%" PRId64, i ? "x" : "", pr_int(pm, 1),
                               pr_int(pm, 2));
            if (pr_int(pm, 3)) cxla_strbuf_printf(b, "_%" PRId64, pr_int(pm, 3));
        }
        if (!st && n == 0) cxla_strbuf_puts(b, "{}");
        free(pm);
        if (st) goto done;
    }
    if (pr_has_bytes(m, I_OUTFEED_CONFIG)) {
        cxla_strbuf_puts(b, ", outfeed_config=");
        pr_put_string(d, pr_str(d, m, I_OUTFEED_CONFIG));
    }
    if (op == CXLA_OP_RNG) {
        static const char *const dist[] = {"rng_invalid", "rng_uniform", "rng_normal"};
        const char *w = enum_name(pr_int(m, I_DISTRIBUTION), dist, 3);
        if (w) cxla_strbuf_printf(b, ", distribution=%s", w);
    }
    if (op == CXLA_OP_BATCH_NORM_TRAINING || op == CXLA_OP_BATCH_NORM_INFERENCE ||
        op == CXLA_OP_BATCH_NORM_GRAD) {
        float eps = 0;
        uint32_t bits = (uint32_t)pr_int(m, I_EPSILON);
        memcpy(&eps, &bits, 4);
        cxla_strbuf_puts(b, ", epsilon=");
        put_float(d, eps);
        cxla_strbuf_printf(b, ", feature_index=%" PRId64, pr_int(m, I_FEATURE_INDEX));
    }
    if (pr_int(m, I_CHANNEL_ID) > 0)
        cxla_strbuf_printf(b, ", channel_id=%" PRId64, pr_int(m, I_CHANNEL_ID));
    if (pr_has_bytes(m, I_INFEED_CONFIG)) {
        cxla_strbuf_puts(b, ", infeed_config=");
        pr_put_string(d, pr_str(d, m, I_INFEED_CONFIG));
    }
    if (op == CXLA_OP_CUSTOM_CALL) {
        cxla_strbuf_puts(b, ", custom_call_target=");
        pr_put_string(d, pr_str(d, m, I_TARGET));
    }
    if (m->has[I_OUTFEED_SHAPE]) {
        cxla_strbuf_puts(b, ", outfeed_shape=");
        if ((st = put_shape_field(d, m, I_OUTFEED_SHAPE, "outfeed_shape"))) goto done;
    }
    if (m->has[I_DOT_DIMS] || m->has[I_RAGGED_DOT_DIMS]) {
        static const pr_int_attr dot[] = {{3, "lhs_batch_dims", false},
                                          {1, "lhs_contracting_dims", true},
                                          {4, "rhs_batch_dims", false},
                                          {2, "rhs_contracting_dims", true}};
        if (m->has[I_RAGGED_DOT_DIMS]) {
            static const pr_int_attr rag[] = {{2, "lhs_ragged_dims", false},
                                              {3, "rhs_group_dims", false}};
            msg *rm = malloc(sizeof *rm);
            st = rm ? pr_load_field(d, rm, m, I_RAGGED_DOT_DIMS, "RaggedDotDimensionNumbers")
                    : pr_oom();
            if (!st) st = pr_put_sub_ints(d, rm, 1, "DotDimensionNumbers", dot, 4, 0);
            if (!st)
                st = pr_put_sub_ints(d, m, I_RAGGED_DOT_DIMS, "RaggedDotDimensionNumbers", rag, 2,
                                     0);
            free(rm);
        } else {
            st = pr_put_sub_ints(d, m, I_DOT_DIMS, "DotDimensionNumbers", dot, 4, 0);
        }
        if (st) goto done;
    }
    if (op == CXLA_OP_FFT) {
        static const char *const fft[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
        const char *w = enum_name(pr_int(m, I_FFT_TYPE), fft, 4);
        if (!w) {
            st = cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "unknown fft_type %" PRId64,
                            pr_int(m, I_FFT_TYPE));
            goto done;
        }
        cxla_strbuf_printf(b, ", fft_type=%s", w);
        if ((st = pr_attr_ints(d, m, I_FFT_LENGTH, "fft_length", true, "fft_length"))) goto done;
    }
    if (pr_has_bytes(m, I_DIRECTION)) {
        if ((st = check_name(pr_str(d, m, I_DIRECTION), "comparison_direction"))) goto done;
        cxla_strbuf_printf(b, ", direction=%s", pr_str(d, m, I_DIRECTION));
    }
    if (pr_has_bytes(m, I_COMPARISON_TYPE)) {
        if ((st = check_name(pr_str(d, m, I_COMPARISON_TYPE), "comparison_type"))) goto done;
        cxla_strbuf_printf(b, ", type=%s", pr_str(d, m, I_COMPARISON_TYPE));
    }
    if (m->has[I_GATHER_DIMS]) {
        static const pr_int_attr g[] = {{1, "offset_dims", true},
                                        {2, "collapsed_slice_dims", true},
                                        {3, "start_index_map", true},
                                        {5, "operand_batching_dims", false},
                                        {6, "start_indices_batching_dims", false}};
        if ((st = pr_put_sub_ints(d, m, I_GATHER_DIMS, "GatherDimensionNumbers", g, 5,
                                  op == CXLA_OP_GATHER ? 4 : 0)))
            goto done;
    }
    if ((st = pr_attr_ints(d, m, I_GATHER_SLICE_SIZES, "slice_sizes", op == CXLA_OP_GATHER,
                           "gather_slice_sizes")))
        goto done;
    if (m->has[I_SCATTER_DIMS]) {
        static const pr_int_attr s[] = {{1, "update_window_dims", true},
                                        {2, "inserted_window_dims", true},
                                        {3, "scatter_dims_to_operand_dims", true},
                                        {5, "input_batching_dims", false},
                                        {6, "scatter_indices_batching_dims", false}};
        if ((st = pr_put_sub_ints(d, m, I_SCATTER_DIMS, "ScatterDimensionNumbers", s, 5,
                                  op == CXLA_OP_GATHER ? 0 : 4)))
            goto done;
    }
    if (op == CXLA_OP_GATHER || op == CXLA_OP_SCATTER) {
        put_bool(d, m, I_SORTED, "indices_are_sorted");
        put_bool(d, m, I_UNIQUE, "unique_indices");
    }
    {
        const cxla_opcode_info *info = cxla_opcode_get_info(op);
        bool groups = (info->flags & CXLA_OPF_COLLECTIVE) && op != CXLA_OP_COLLECTIVE_PERMUTE &&
                      op != CXLA_OP_COLLECTIVE_PERMUTE_START &&
                      op != CXLA_OP_COLLECTIVE_PERMUTE_DONE && !(info->flags & CXLA_OPF_ASYNC_DONE);
        if ((st = pr_put_replica_groups(d, m, groups))) goto done;
    }
    put_bool(d, m, I_GLOBAL_IDS, "use_global_device_ids");
    put_bool(d, m, I_IS_HOST_TRANSFER, "is_host_transfer");
    put_bool(d, m, I_IS_STABLE, "is_stable");
    if (op != CXLA_OP_CUSTOM_CALL) put_bool(d, m, I_CONSTRAIN_LAYOUT, "constrain_layout");
    if (m->has[I_PRECISION]) {
        msg *pm = malloc(sizeof *pm);
        pw_ints pv = {0};
        st = pm ? pr_load_field(d, pm, m, I_PRECISION, "PrecisionConfig") : pr_oom();
        if (!st) st = pr_ints(pm, 1, PW_VARINT, &pv, "PrecisionConfig.operand_precision");
        bool any = false;
        for (int64_t i = 0; !st && i < pv.n; i++) any = any || pv.v[i] != 0;
        if (!st && any) {
            static const char *const pr[] = {"default", "high", "highest", "packed_nibble"};
            cxla_strbuf_puts(b, ", operand_precision={");
            for (int64_t i = 0; i < pv.n; i++) {
                const char *w = enum_name(pv.v[i], pr, 4);
                cxla_strbuf_printf(b, "%s%s", i ? "," : "", w ? w : "default");
            }
            cxla_strbuf_putc(b, '}');
        }
        if (!st && pr_int(pm, 2)) {
            const char *w =
                enum_name(pr_int(pm, 2), cxla_proto_dot_algorithms, CXLA_PROTO_DOT_ALGORITHM_COUNT);
            if (w) cxla_strbuf_printf(b, ", algorithm=%s", w);
        }
        pw_ints_free(&pv);
        free(pm);
        if (st) goto done;
    }
    if (m->has[I_SOURCE_TARGET]) {
        pw_field *pairs;
        int64_t n;
        msg *pm = malloc(sizeof *pm);
        st = pm ? pr_list(d, m, I_SOURCE_TARGET, &pairs, &n, "source_target_pairs") : pr_oom();
        if (!st) cxla_strbuf_puts(b, ", source_target_pairs={");
        for (int64_t i = 0; !st && i < n; i++) {
            st = pr_load(d, pm, pairs[i].data, pairs[i].len, "SourceTarget");
            if (!st)
                cxla_strbuf_printf(b, "%s{%" PRId64 ",%" PRId64 "}", i ? "," : "", pr_int(pm, 1),
                                   pr_int(pm, 2));
        }
        if (!st) cxla_strbuf_putc(b, '}');
        free(pm);
        if (st) goto done;
    }
    if (op == CXLA_OP_CUSTOM_CALL && m->has[I_LITERAL]) {
        cxla_literal *lit = NULL;
        if ((st = decode_literal(d, m->f[I_LITERAL].data, m->f[I_LITERAL].len, &lit))) goto done;
        cxla_strbuf_puts(b, ", literal=");
        cxla_shape_print(b, cxla_literal_shape(lit), 0);
        cxla_strbuf_putc(b, ' ');
        cxla_literal_print(b, lit, 0);
        cxla_literal_free(lit);
    }
    /* A custom call's constrain_layout is written as its (maybe empty) constraints. */
    if (m->has[I_OPERAND_SHAPES] || (op == CXLA_OP_CUSTOM_CALL && pr_int(m, I_CONSTRAIN_LAYOUT))) {
        pw_field *sh;
        int64_t n;
        if ((st = pr_list(d, m, I_OPERAND_SHAPES, &sh, &n, "operand_shapes_with_layout")))
            goto done;
        cxla_strbuf_puts(b, ", operand_layout_constraints={");
        for (int64_t i = 0; !st && i < n; i++) {
            cxla_shape s;
            st = decode_shape(d, sh[i].data, sh[i].len, &s);
            if (!st) {
                if (i) cxla_strbuf_puts(b, ", ");
                cxla_shape_print(b, &s, 0);
            }
        }
        cxla_strbuf_putc(b, '}');
        if (st) goto done;
    }
    if (m->has[I_TRIANGULAR]) {
        msg *tm = malloc(sizeof *tm);
        st = tm ? pr_load_field(d, tm, m, I_TRIANGULAR, "TriangularSolveOptions") : pr_oom();
        if (!st) {
            static const char *const tr[] = {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE",
                                             "ADJOINT"};
            put_bool(d, tm, 1, "left_side");
            put_bool(d, tm, 2, "lower");
            put_bool(d, tm, 3, "unit_diagonal");
            const char *w = enum_name(pr_int(tm, 4), tr, 4);
            cxla_strbuf_printf(b, ", transpose_a=%s", w ? w : "NO_TRANSPOSE");
        }
        free(tm);
        if (st) goto done;
    }
    if (m->has[I_CHOLESKY]) {
        msg *cm = malloc(sizeof *cm);
        st = cm ? pr_load_field(d, cm, m, I_CHOLESKY, "CholeskyOptions") : pr_oom();
        if (!st) put_bool(d, cm, 1, "lower");
        free(cm);
        if (st) goto done;
    }
    if (m->has[I_PARAM_REPLICATION]) {
        msg *pm = malloc(sizeof *pm);
        pw_ints v = {0};
        st = pm ? pr_load_field(d, pm, m, I_PARAM_REPLICATION, "ParameterReplication") : pr_oom();
        if (!st) st = pr_ints(pm, 1, PW_VARINT, &v, "ParameterReplication");
        if (!st && v.n) {
            cxla_strbuf_puts(b, ", parameter_replication={");
            for (int64_t i = 0; i < v.n; i++)
                cxla_strbuf_printf(b, "%s%s", i ? "," : "", v.v[i] ? "true" : "false");
            cxla_strbuf_putc(b, '}');
        }
        pw_ints_free(&v);
        free(pm);
        if (st) goto done;
    }
    put_bool(d, m, I_SIDE_EFFECT, "custom_call_has_side_effect");
    if (m->has[I_OUTPUT_ALIASING]) {
        pw_field *al;
        int64_t n;
        msg *am = malloc(sizeof *am);
        st = am ? pr_list(d, m, I_OUTPUT_ALIASING, &al, &n, "output_operand_aliasing") : pr_oom();
        if (!st) cxla_strbuf_puts(b, ", output_to_operand_aliasing={");
        for (int64_t i = 0; !st && i < n; i++) {
            pw_ints out = {0}, in = {0};
            st = pr_load(d, am, al[i].data, al[i].len, "OutputOperandAliasing");
            if (!st) st = pr_ints(am, 1, PW_VARINT, &out, "OutputOperandAliasing");
            if (!st) st = pr_ints(am, 3, PW_VARINT, &in, "OutputOperandAliasing");
            if (!st) {
                if (i) cxla_strbuf_puts(b, ", ");
                pr_put_ints(b, out.v, out.n);
                cxla_strbuf_printf(b, ": (%" PRId64 ", ", pr_int(am, 2));
                pr_put_ints(b, in.v, in.n);
                cxla_strbuf_putc(b, ')');
            }
            pw_ints_free(&out);
            pw_ints_free(&in);
        }
        if (!st) cxla_strbuf_putc(b, '}');
        free(am);
        if (st) goto done;
    }
    if (op == CXLA_OP_CUSTOM_CALL) {
        static const char *const sched[] = {"SCHEDULE_NONE", "SCHEDULE_LATEST",
                                            "SCHEDULE_EARLIEST"};
        static const char *const api[] = {
            "API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
            "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"};
        const char *w = enum_name(pr_int(m, I_SCHEDULE), sched, 3);
        if (pr_int(m, I_SCHEDULE) && w) cxla_strbuf_printf(b, ", schedule=%s", w);
        w = enum_name(pr_int(m, I_API_VERSION), api, 5);
        if (pr_int(m, I_API_VERSION) > 1 && w) cxla_strbuf_printf(b, ", api_version=%s", w);
    }
    if (op == CXLA_OP_RNG_GET_AND_UPDATE_STATE)
        cxla_strbuf_printf(b, ", delta=%" PRId64, pr_int(m, I_DELTA));
    if (op == CXLA_OP_RNG_BIT_GENERATOR) {
        static const char *const alg[] = {"rng_default", "rng_three_fry", "rng_philox"};
        const char *w = enum_name(pr_int(m, I_RNG_ALGORITHM), alg, 3);
        cxla_strbuf_printf(b, ", algorithm=%s", w ? w : "rng_default");
    }
    if (m->has[I_PREFETCH])
        cxla_strbuf_printf(b, ", cross_program_prefetch_index=%" PRId64, pr_int(m, I_PREFETCH));
    if (pr_int(m, I_PADDING_TYPE)) {
        static const char *const pt[] = {"PADDING_INVALID", "PADDING_VALID", "PADDING_SAME"};
        const char *w = enum_name(pr_int(m, I_PADDING_TYPE), pt, 3);
        if (w) cxla_strbuf_printf(b, ", padding_type=%s", w);
    }
    if (pr_has_bytes(m, I_ASYNC_THREAD)) {
        cxla_strbuf_puts(b, ", async_execution_thread=");
        pr_put_string(d, pr_str(d, m, I_ASYNC_THREAD));
    }
    if (op == CXLA_OP_TOPK) {
        cxla_strbuf_printf(b, ", k=%" PRId64, pr_int(m, I_K));
        put_bool(d, m, I_LARGEST, "largest");
    }
    {
        bool pred_branch = false;
        if (op == CXLA_OP_CONDITIONAL && operands.n) {
            /* true/false computations when the selector is a pred: look at its shape */
            pred_branch = called.n == 2 && d->instr_count > 0;
            for (int64_t i = 0; i < d->instr_count; i++)
                if (d->instr_ids[i] == operands.v[0])
                    pred_branch =
                        d->instr_names[i] && d->instr_types && d->instr_types[i] == CXLA_PRED;
        }
        if ((st = put_called(d, op, &called, pred_branch))) goto done;
    }
    put_bool(d, m, I_IS_COMPOSITE, "is_composite");
    if (m->has[I_SHARDING]) {
        cxla_strbuf_puts(b, ", sharding=");
        if ((st = pr_put_sharding(d, m->f[I_SHARDING].data, m->f[I_SHARDING].len))) goto done;
    }
    if (m->has[I_FRONTEND]) {
        size_t mark = b->len;
        cxla_strbuf_puts(b, ", frontend_attributes=");
        size_t at = b->len;
        if ((st = pr_put_frontend_attributes(d, m->f[I_FRONTEND].data, m->f[I_FRONTEND].len)))
            goto done;
        if (b->len == at + 2 && !b->failed) { /* "{}": XLA prints nothing */
            b->len = mark;
            b->data[mark] = 0;
        }
    }
    if (control.n) {
        cxla_strbuf_puts(b, ", control-predecessors=");
        if ((st = put_names(d, &control, false, 0, control.n, true))) goto done;
    }
    if (m->has[I_METADATA] && m->f[I_METADATA].len) {
        size_t mark = b->len;
        cxla_strbuf_puts(b, ", metadata=");
        size_t at = b->len;
        if ((st = pr_put_metadata(d, m->f[I_METADATA].data, m->f[I_METADATA].len))) goto done;
        if (b->len == at + 2 && !b->failed) {
            b->len = mark;
            b->data[mark] = 0;
        }
    }
    if (pr_has_bytes(m, I_BACKEND_CONFIG)) {
        const char *cfg = pr_str(d, m, I_BACKEND_CONFIG);
        size_t n = strlen(cfg);
        cxla_strbuf_puts(b, ", backend_config=");
        if (n >= 2 && cfg[0] == '{' && cfg[n - 1] == '}')
            cxla_strbuf_puts(b, cfg);
        else
            pr_put_string(d, cfg);
    }
done:
    pw_ints_free(&operands);
    pw_ints_free(&called);
    pw_ints_free(&control);
    return st;
}

/* ---- computations and the module ---------------------------------------------------- */

enum { C_NAME = 1, C_INSTRUCTIONS = 2, C_ID = 5, C_ROOT_ID = 6, C_THREAD = 8 };
enum {
    M_NAME = 1,
    M_ENTRY_NAME = 2,
    M_COMPUTATIONS = 3,
    M_HOST_SHAPE = 4,
    M_ENTRY_ID = 6,
    M_SCHEDULE = 7,
    M_ALIAS = 8,
    M_STACK_FRAMES = 17,
    M_BUFFER_DONOR = 18,
    M_FRONTEND = 19,
};

/* The first element type of a ShapeProto (for a conditional's selector). */
static cxla_type shape_type(rd *d, const msg *m, int64_t *out_rank) {
    *out_rank = 0;
    if (!m->has[I_SHAPE] || m->f[I_SHAPE].wire != PW_LEN) return CXLA_TYPE_INVALID;
    msg *sm = malloc(sizeof *sm);
    cxla_type t = CXLA_TYPE_INVALID;
    cxla_status st = sm ? pr_load_field(d, sm, m, I_SHAPE, "ShapeProto") : pr_oom();
    if (!st) t = cxla_proto_type_from_number(pr_int(sm, SH_TYPE));
    if (!st && t == CXLA_TUPLE &&
        sm->has[SH_TUPLE]) /* an element (the last: they share a rank in practice) */
        st = pr_load(d, sm, sm->f[SH_TUPLE].data, sm->f[SH_TUPLE].len, "ShapeProto");
    pw_ints dims = {0};
    if (!st) st = pr_ints(sm, SH_DIMS, PW_VARINT, &dims, "ShapeProto.dimensions");
    *out_rank = dims.n;
    pw_ints_free(&dims);
    cxla_status_free(st);
    free(sm);
    return t;
}

static cxla_status put_computation(rd *d, const pw_field *cf, bool is_entry) {
    msg *c = malloc(sizeof *c), *m = malloc(sizeof *m);
    cxla_status st = c && m ? pr_load(d, c, cf->data, cf->len, "HloComputationProto") : pr_oom();
    pw_field *ins = NULL;
    int64_t n = 0;
    const char *name = st ? "" : pr_str(d, c, C_NAME);
    if (!st) st = pr_list(d, c, C_INSTRUCTIONS, &ins, &n, "HloComputationProto.instructions");
    if (!st) {
        d->instr_count = 0;
        d->instr_ids = cxla_arena_alloc_array(d->arena, (size_t)(n ? n : 1), 8);
        d->instr_names = cxla_arena_alloc_array(d->arena, (size_t)(n ? n : 1), sizeof(char *));
        d->instr_types = cxla_arena_alloc_array(d->arena, (size_t)(n ? n : 1), sizeof(cxla_type));
        d->instr_ranks = cxla_arena_alloc_array(d->arena, (size_t)(n ? n : 1), 8);
        d->instr_shapes =
            cxla_arena_alloc_array(d->arena, (size_t)(n ? n : 1), sizeof(*d->instr_shapes));
        if (!d->instr_ids || !d->instr_names || !d->instr_types || !d->instr_ranks ||
            !d->instr_shapes)
            st = pr_oom();
    }
    /* First the names of every instruction, so that operands may be looked up. */
    for (int64_t i = 0; !st && i < n; i++) {
        st = pr_load(d, m, ins[i].data, ins[i].len, "HloInstructionProto");
        if (st) break;
        const char *nm = pr_str(d, m, I_NAME);
        st = check_name(nm, "instruction name");
        d->instr_ids[i] = pr_int(m, I_ID);
        d->instr_names[i] = nm;
        d->instr_types[i] = shape_type(d, m, &d->instr_ranks[i]);
        d->instr_shapes[i] = m->has[I_SHAPE] && m->f[I_SHAPE].wire == PW_LEN
                                 ? m->f[I_SHAPE]
                                 : (pw_field){.number = I_SHAPE, .wire = PW_LEN};
        d->instr_count = i + 1;
    }
    int64_t root_id = st ? 0 : pr_int(c, C_ROOT_ID);
    bool root_known = !st && c->has[C_ROOT_ID];
    if (!st) {
        cxla_strbuf_printf(&d->out, "%s%%%s {\n", is_entry ? "ENTRY " : "", name);
        for (int64_t i = 0; !st && i < n; i++) {
            st = pr_load(d, m, ins[i].data, ins[i].len, "HloInstructionProto");
            if (st) break;
            const char *opname = pr_str(d, m, I_OPCODE);
            cxla_opcode op = cxla_opcode_from_name(opname, strlen(opname));
            if (op == CXLA_OP_COUNT) {
                st = cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "unknown opcode '%s'", opname);
            } else {
                bool root = root_known ? d->instr_ids[i] == root_id : i == n - 1;
                cxla_strbuf_printf(&d->out, "  %s%%%s = ", root ? "ROOT " : "", d->instr_names[i]);
                st = put_instr_body(d, m, op, opname);
                cxla_strbuf_putc(&d->out, '\n');
            }
            if (st)
                st = cxla_status_annotate(st, "instruction '%s' (%s)", d->instr_names[i], opname);
        }
        cxla_strbuf_putc(&d->out, '}');
        if (!st && pr_has_bytes(c, C_THREAD)) {
            cxla_strbuf_puts(&d->out, ", execution_thread=");
            pr_put_string(d, pr_str(d, c, C_THREAD));
        }
        cxla_strbuf_puts(&d->out, "\n\n");
    }
    if (st) st = cxla_status_annotate(st, "computation '%s'", name ? name : "");
    free(c);
    free(m);
    return st;
}

/* HloInputOutputAliasProto: entries 1 (output_shape_index 1, parameter_number 2,
 * parameter_shape_index 3, kind 4: MAY 1, MUST 2). HloBufferDonorProto: entries 1
 * (parameter_number 1, parameter_shape_index 2). */
static cxla_status put_aliasing(rd *d, const msg *mod, uint32_t field, bool donor) {
    msg *a = malloc(sizeof *a), *e = malloc(sizeof *e);
    pw_field *en = NULL;
    int64_t n = 0;
    cxla_status st = a && e ? pr_load_field(d, a, mod, field, "aliasing") : pr_oom();
    if (!st) st = pr_list(d, a, 1, &en, &n, "aliasing entries");
    if (!st && n)
        cxla_strbuf_printf(&d->out, ", %s={ ", donor ? "buffer_donor" : "input_output_alias");
    for (int64_t i = 0; !st && i < n; i++) {
        pw_ints out = {0}, in = {0};
        st = pr_load(d, e, en[i].data, en[i].len, "alias entry");
        if (!st && !donor) st = pr_ints(e, 1, PW_VARINT, &out, "output_shape_index");
        if (!st) st = pr_ints(e, donor ? 2 : 3, PW_VARINT, &in, "parameter_shape_index");
        if (!st) {
            if (i) cxla_strbuf_puts(&d->out, ", ");
            if (!donor) {
                pr_put_ints(&d->out, out.v, out.n);
                cxla_strbuf_puts(&d->out, ": ");
            }
            cxla_strbuf_printf(&d->out, "(%" PRId64 ", ", pr_int(e, donor ? 1 : 2));
            pr_put_ints(&d->out, in.v, in.n);
            if (!donor)
                cxla_strbuf_puts(&d->out, pr_int(e, 4) == 2 ? ", must-alias" : ", may-alias");
            cxla_strbuf_putc(&d->out, ')');
        }
        pw_ints_free(&out);
        pw_ints_free(&in);
    }
    if (!st && n) cxla_strbuf_puts(&d->out, " }");
    free(a);
    free(e);
    return st;
}

/* ProgramShapeProto: parameters 1, result 2. */
/* The ProgramShapeProto in field |field| of |holder| (the module's host_program_shape or
 * the config's entry_computation_layout) as the header's entry_computation_layout. */
static cxla_status put_entry_layout(rd *d, const msg *holder, uint32_t field) {
    msg *p = malloc(sizeof *p);
    pw_field *params = NULL;
    int64_t n = 0;
    cxla_status st = p ? pr_load_field(d, p, holder, field, "ProgramShapeProto") : pr_oom();
    if (!st) st = pr_list(d, p, 1, &params, &n, "ProgramShapeProto.parameters");
    if (!st) cxla_strbuf_puts(&d->out, ", entry_computation_layout={(");
    for (int64_t i = 0; !st && i < n; i++) {
        cxla_shape s;
        st = decode_shape(d, params[i].data, params[i].len, &s);
        if (!st) {
            if (i) cxla_strbuf_puts(&d->out, ", ");
            cxla_shape_print(&d->out, &s, 0);
        }
    }
    if (!st) {
        cxla_strbuf_puts(&d->out, ")->");
        st = put_shape_field(d, p, 2, "ProgramShapeProto");
        cxla_strbuf_putc(&d->out, '}');
    }
    free(p);
    return st;
}

/* StackFrameIndexProto: file_names 1, function_names 2, file_locations 3 (file_name_id 1,
 * function_name_id 2, line 3, column 4, end_line 5, end_column 6), stack_frames 4
 * (file_location_id 1, parent_frame_id 2); printed as XLA's text tables. */
static cxla_status put_stack_frames(rd *d, const msg *mod) {
    msg *s = malloc(sizeof *s), *e = malloc(sizeof *e);
    cxla_status st =
        s && e ? pr_load_field(d, s, mod, M_STACK_FRAMES, "StackFrameIndexProto") : pr_oom();
    static const char *const titles[] = {"FileNames", "FunctionNames", "FileLocations",
                                         "StackFrames"};
    bool any = false;
    for (uint32_t t = 1; !st && t <= 4; t++) {
        pw_field *items;
        int64_t n;
        st = pr_list(d, s, t, &items, &n, titles[t - 1]);
        if (st || !n) continue;
        cxla_strbuf_printf(&d->out, "%s%s\n", any ? "\n" : "", titles[t - 1]);
        any = true;
        for (int64_t i = 0; !st && i < n; i++) {
            cxla_strbuf_printf(&d->out, "%" PRId64 " ", i + 1);
            if (t <= 2) {
                char *str = cxla_arena_strndup(d->arena, (const char *)items[i].data, items[i].len);
                if (!str) {
                    st = pr_oom();
                    break;
                }
                pr_put_string(d, str);
            } else if ((st = pr_load(d, e, items[i].data, items[i].len, titles[t - 1]))) {
                break;
            } else if (t == 3) {
                cxla_strbuf_printf(&d->out,
                                   "{file_name_id=%d function_name_id=%d line=%d end_line=%d "
                                   "column=%d end_column=%d}",
                                   (int)pr_int(e, 1), (int)pr_int(e, 2), (int)pr_int(e, 3),
                                   (int)pr_int(e, 5), (int)pr_int(e, 4), (int)pr_int(e, 6));
            } else {
                cxla_strbuf_printf(&d->out, "{file_location_id=%d parent_frame_id=%d}",
                                   (int)pr_int(e, 1), (int)pr_int(e, 2));
            }
            cxla_strbuf_putc(&d->out, '\n');
        }
    }
    free(s);
    free(e);
    return st;
}

bool cxla_hlo_looks_like_proto(const void *bytes, size_t size) {
    const uint8_t *p = bytes;
    if (!p || size < 2) return false;
    /* A proto starts with a field tag: HloModuleProto's name (0x0a), HloProto's module
     * (0x0a) or another length-delimited or integer field of the first few. */
    uint8_t c = p[0];
    if (c != 0x0a && c != 0x12 && c != 0x1a && c != 0x22 && c != 0x28 && c != 0x30) return false;
    if (pw_is_message(p, size)) return true;
    /* A truncated or damaged proto: HLO text never holds control bytes other than
     * whitespace, so one of those near the start says binary (and the proto reader then
     * says what is wrong with it). */
    size_t n = size < 4096 ? size : 4096;
    for (size_t i = 0; i < n; i++)
        if (p[i] < 0x20 && p[i] != '\n' && p[i] != '\r' && p[i] != '\t') return true;
    return false;
}

cxla_status cxla_hlo_proto_to_text(const void *bytes, size_t size, char **out_text) {
    *out_text = NULL;
    if (!bytes && size) return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "no proto bytes (NULL)");
    const uint8_t *p = bytes ? bytes : (const uint8_t *)"";
    size_t len = size;
    const uint8_t *config;
    size_t config_len;
    pr_find_module(&p, &len, &config, &config_len);
    rd d;
    memset(&d, 0, sizeof d);
    d.base = bytes ? bytes : p;
    d.arena = cxla_arena_create();
    cxla_strbuf_init(&d.out);
    msg *mod = malloc(sizeof *mod);
    cxla_status st = d.arena && mod ? NULL : pr_oom();
    pw_field *comps = NULL;
    int64_t n = 0;
    msg *cfg = NULL;
    if (!st && config) {
        cfg = malloc(sizeof *cfg);
        st = cfg ? pr_load(&d, cfg, config, config_len, "HloModuleConfigProto") : pr_oom();
    }
    if (!st) st = pr_load(&d, mod, p, len, "HloModuleProto");
    if (!st) st = pr_list(&d, mod, M_COMPUTATIONS, &comps, &n, "HloModuleProto.computations");
    if (!st && n == 0)
        st = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                        "the proto holds no computations: not an HloModuleProto or HloProto");
    if (!st) {
        d.comp_ids = cxla_arena_alloc_array(d.arena, (size_t)n, 8);
        d.comp_names = cxla_arena_alloc_array(d.arena, (size_t)n, sizeof(char *));
        if (!d.comp_ids || !d.comp_names) st = pr_oom();
    }
    msg *c = malloc(sizeof *c);
    if (!c && !st) st = pr_oom();
    for (int64_t i = 0; !st && i < n; i++) {
        st = pr_load(&d, c, comps[i].data, comps[i].len, "HloComputationProto");
        if (st) break;
        d.comp_ids[i] = pr_int(c, C_ID);
        d.comp_names[i] = pr_str(&d, c, C_NAME);
        st = check_name(d.comp_names[i], "computation name");
        d.comp_count = i + 1;
    }
    free(c);
    int64_t entry = n - 1;
    if (!st) {
        const char *en = pr_str(&d, mod, M_ENTRY_NAME);
        for (int64_t i = 0; i < n; i++) {
            if (mod->has[M_ENTRY_ID] ? d.comp_ids[i] == pr_int(mod, M_ENTRY_ID)
                                     : (en && *en && strcmp(en, d.comp_names[i]) == 0))
                entry = i;
        }
        const char *name = pr_str(&d, mod, M_NAME);
        if (name && *name) st = check_name(name, "module name");
        cxla_strbuf_printf(&d.out, "HloModule %s", name && *name ? name : "module");
        if (mod->has[M_SCHEDULE]) cxla_strbuf_puts(&d.out, ", is_scheduled=true");
        if (!st && mod->has[M_ALIAS]) st = put_aliasing(&d, mod, M_ALIAS, false);
        if (!st && mod->has[M_BUFFER_DONOR]) st = put_aliasing(&d, mod, M_BUFFER_DONOR, true);
        if (!st && cfg && pr_has_bytes(cfg, PR_CFG_ENTRY_LAYOUT))
            st = put_entry_layout(&d, cfg, PR_CFG_ENTRY_LAYOUT);
        else if (!st && mod->has[M_HOST_SHAPE])
            st = put_entry_layout(&d, mod, M_HOST_SHAPE);
        if (!st && cfg) st = pr_put_config(&d, cfg);
        if (!st && mod->has[M_FRONTEND] && mod->f[M_FRONTEND].len) {
            cxla_strbuf_puts(&d.out, ", frontend_attributes=");
            st = pr_put_frontend_attributes(&d, mod->f[M_FRONTEND].data, mod->f[M_FRONTEND].len);
        }
        cxla_strbuf_puts(&d.out, "\n\n");
        if (!st && mod->has[M_STACK_FRAMES]) {
            st = put_stack_frames(&d, mod);
            cxla_strbuf_putc(&d.out, '\n');
        }
    }
    for (int64_t i = 0; !st && i < n; i++) st = put_computation(&d, &comps[i], i == entry);
    if (!st && d.nul_in_string)
        st = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                        "a string field of the proto holds a NUL byte, which HLO names and "
                        "strings cannot");
    if (!st && d.out.failed) st = pr_oom();
    if (!st) *out_text = cxla_strbuf_take(&d.out);
    cxla_strbuf_free(&d.out);
    free(mod);
    free(cfg);
    cxla_arena_destroy(d.arena);
    return st;
}

cxla_status cxla_hlo_parse_proto(const void *bytes, size_t size, const char *filename,
                                 cxla_module **out_module) {
    *out_module = NULL;
    char *text = NULL;
    cxla_status st = cxla_hlo_proto_to_text(bytes, size, &text);
    if (st) return cxla_status_annotate(st, "%s", filename ? filename : "HLO proto");
    st = cxla_hlo_parse(text, strlen(text), filename ? filename : "HLO proto", out_module);
    free(text);
    if (st) st = cxla_status_annotate(st, "in the HLO made from the proto");
    return st;
}
