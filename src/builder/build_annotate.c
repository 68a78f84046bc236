/* Annotations the builder attaches to the operations it adds (XLA's SetSharding,
 * SetOpMetadata, SetFrontendAttributes and their per-instruction forms), kept as the
 * attribute text the HLO format writes; and the default layouts a built module gets. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "builder/builder_internal.h"
#include "hlo/lexer.h"
#include "shape/shape_internal.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory in the builder")

/* A malloc'd copy of |len| bytes of |s| (C11 has no strndup). */
static char *dup_n(const char *s, size_t len) {
    char *d = malloc(len + 1);
    if (!d) return NULL;
    memcpy(d, s, len);
    d[len] = 0;
    return d;
}

static char *dup(const char *s) {
    return dup_n(s, strlen(s));
}

/* ---- sharding -------------------------------------------------------------------------- */

/* Appends the text of |s| (one leaf, or a tuple flattened to its leaves) to |sb| and
 * counts the leaves; false after recording an error. */
static bool sharding_text(cxla_builder *b, const char *op, const cxla_op_sharding *s,
                          cxla_strbuf *sb, int64_t *leaves, int depth) {
    switch (s->type) {
    case CXLA_SHARDING_REPLICATED: cxla_strbuf_puts(sb, "{replicated}"); break;
    case CXLA_SHARDING_MANUAL: cxla_strbuf_puts(sb, "{manual}"); break;
    case CXLA_SHARDING_MAXIMAL:
        if (s->device < 0) {
            bld_fail(b, op, "maximal sharding: device %" PRId64 " is negative", s->device);
            return false;
        }
        cxla_strbuf_printf(sb, "{maximal device=%" PRId64 "}", s->device);
        break;
    case CXLA_SHARDING_TILED: {
        if (!bld_check_list(b, op, "tile_assignment_dimensions", s->tile_assignment_dimensions,
                            s->tile_rank))
            return false;
        if (s->tile_rank < (s->replicate_on_last_tile_dim ? 2 : 1)) {
            bld_fail(b, op, "tiled sharding: %" PRId64 " tile assignment dimensions are too few",
                     s->tile_rank);
            return false;
        }
        int64_t n = 1;
        for (int64_t i = 0; i < s->tile_rank; i++) {
            int64_t d = s->tile_assignment_dimensions[i];
            if (d < 1 || n > INT32_MAX / d) {
                bld_fail(b, op,
                         "tiled sharding: tile assignment dimension %" PRId64 " is %" PRId64
                         " (must be >= 1)",
                         i, d);
                return false;
            }
            n *= d;
        }
        const int64_t *dev = s->tile_assignment_devices;
        for (int64_t i = 0; dev && i < n; i++) {
            if (dev[i] < 0) {
                bld_fail(b, op, "tiled sharding: device %" PRId64 " is negative", dev[i]);
                return false;
            }
            for (int64_t k = 0; k < i; k++)
                if (dev[k] == dev[i]) {
                    bld_fail(b, op, "tiled sharding: device %" PRId64 " is listed twice", dev[i]);
                    return false;
                }
        }
        cxla_strbuf_puts(sb, "{devices=[");
        for (int64_t i = 0; i < s->tile_rank; i++)
            cxla_strbuf_printf(sb, "%s%" PRId64, i ? "," : "", s->tile_assignment_dimensions[i]);
        cxla_strbuf_putc(sb, ']');
        for (int64_t i = 0; i < n; i++)
            cxla_strbuf_printf(sb, "%s%" PRId64, i ? "," : "", dev ? dev[i] : i);
        if (s->replicate_on_last_tile_dim) cxla_strbuf_puts(sb, " last_tile_dim_replicate");
        cxla_strbuf_putc(sb, '}');
        break;
    }
    case CXLA_SHARDING_TUPLE:
        if (!bld_check_list(b, op, "tuple_shardings", s->tuple_shardings, s->tuple_count) ||
            depth > 64)
            return false;
        /* XLA keeps one sharding per leaf: nested tuples are flattened. */
        if (depth == 0) cxla_strbuf_putc(sb, '{');
        for (int64_t i = 0; i < s->tuple_count; i++) {
            const cxla_op_sharding *e = &s->tuple_shardings[i];
            if (e->type != CXLA_SHARDING_TUPLE && *leaves > 0) cxla_strbuf_puts(sb, ", ");
            if (!sharding_text(b, op, e, sb, leaves, depth + 1)) return false;
        }
        if (depth == 0) cxla_strbuf_putc(sb, '}');
        return true;
    default: bld_fail(b, op, "unknown sharding type %d", (int)s->type); return false;
    }
    (*leaves)++;
    return true;
}

static int64_t leaf_count(const cxla_shape *s) {
    if (s->type != CXLA_TUPLE) return 1;
    int64_t n = 0;
    for (int64_t i = 0; i < s->tuple_count; i++) n += leaf_count(&s->elements[i]);
    return n;
}

/* Whether a sharding of |type| (with |rank| / |leaves|) fits |shape|. */
static bool fits(cxla_builder *b, const char *op, cxla_sharding_type type, int64_t rank,
                 int64_t leaves, const cxla_shape *shape) {
    if (type == CXLA_SHARDING_TILED && (!cxla_shape_is_array(shape) || shape->rank != rank)) {
        bld_fail(b, op, "the tiled sharding tiles %" PRId64 " dimensions, but the result is %s",
                 rank, bld_shape_str(b, shape));
        return false;
    }
    if (type == CXLA_SHARDING_TUPLE && (shape->type != CXLA_TUPLE || leaf_count(shape) != leaves)) {
        bld_fail(b, op, "the tuple sharding has %" PRId64 " leaves, but the result is %s", leaves,
                 bld_shape_str(b, shape));
        return false;
    }
    return true;
}

/* The text and fit of |s|; *out malloc'd. */
static bool make_sharding(cxla_builder *b, const char *op, const cxla_op_sharding *s, char **out,
                          int64_t *rank, int64_t *leaves) {
    cxla_strbuf sb;
    cxla_strbuf_init(&sb);
    *leaves = 0;
    bool ok = sharding_text(b, op, s, &sb, leaves, 0);
    if (ok && (sb.failed || !sb.data)) {
        bld_fail_status(b, op, OOM());
        ok = false;
    }
    *rank = s->type == CXLA_SHARDING_TILED ? s->tile_rank - (s->replicate_on_last_tile_dim ? 1 : 0)
                                           : -1;
    *out = ok ? dup(sb.data) : NULL;
    if (ok && !*out) {
        bld_fail_status(b, op, OOM());
        ok = false;
    }
    cxla_strbuf_free(&sb);
    return ok;
}

void cxla_builder_clear_sharding(cxla_builder *b) {
    if (!b) return;
    free(b->sharding);
    b->sharding = NULL;
}

void cxla_builder_set_sharding(cxla_builder *b, const cxla_op_sharding *sharding) {
    if (!b) return;
    cxla_builder_clear_sharding(b);
    if (!sharding || !bld_ok(b)) return;
    char *text;
    int64_t rank, leaves;
    if (!make_sharding(b, "SetSharding", sharding, &text, &rank, &leaves)) return;
    b->sharding = text;
    b->sharding_type = sharding->type;
    b->sharding_rank = rank;
    b->sharding_leaves = leaves;
}

bool bld_annotation_fits(cxla_builder *b, const char *op, const cxla_shape *shape) {
    return !b->sharding ||
           fits(b, op, b->sharding_type, b->sharding_rank, b->sharding_leaves, shape);
}

/* Sets a RAW attribute with |text| copied into the module's arena. */
static cxla_status set_raw(cxla_builder *b, cxla_instr *in, cxla_attr_id id, const char *text) {
    cxla_attr a = bld_attr(id);
    a.kind = CXLA_ATTR_KIND_RAW;
    a.v.s = cxla_arena_strndup(b->module->arena, text, strlen(text));
    if (!a.v.s) return OOM();
    return cxla_instr_set_attr(in, &a);
}

/* Removes attribute |id| from |in| (no-op when absent). */
static void remove_attr(cxla_instr *in, cxla_attr_id id) {
    for (int64_t i = 0; i < in->attr_count; i++)
        if (in->attrs[i].id == id) {
            memmove(&in->attrs[i], &in->attrs[i + 1],
                    (size_t)(in->attr_count - i - 1) * sizeof(*in->attrs));
            in->attr_count--;
            return;
        }
}

/* An op of |b| that the caller may annotate; NULL after recording an error. */
static cxla_instr *annotated_op(cxla_op op, const char *what) {
    cxla_builder *b = op.builder;
    if (!bld_ok(b)) return NULL;
    return bld_operand(b, what, op, 0);
}

void cxla_op_set_sharding(cxla_op op, const cxla_op_sharding *sharding) {
    const char *what = "SetInstructionSharding";
    cxla_builder *b = op.builder;
    cxla_instr *in = annotated_op(op, what);
    if (!in) return;
    if (!sharding) {
        remove_attr(in, CXLA_ATTR_SHARDING);
        return;
    }
    char *text;
    int64_t rank, leaves;
    if (!make_sharding(b, what, sharding, &text, &rank, &leaves)) return;
    if (fits(b, what, sharding->type, rank, leaves, &in->shape))
        bld_fail_status(b, what, set_raw(b, in, CXLA_ATTR_SHARDING, text));
    free(text);
}

/* ---- metadata -------------------------------------------------------------------------- */

void cxla_builder_clear_op_metadata(cxla_builder *b) {
    if (!b) return;
    free(b->metadata);
    b->metadata = NULL;
}

static void put_field(cxla_strbuf *sb, const char *name, const char *value) {
    if (!value || !value[0]) return;
    if (sb->len > 1) cxla_strbuf_putc(sb, ' ');
    cxla_strbuf_printf(sb, "%s=", name);
    cxla_hlo_print_string(sb, value);
}

void cxla_builder_set_op_metadata(cxla_builder *b, const cxla_op_metadata *m) {
    const char *op = "SetOpMetadata";
    if (!b) return;
    cxla_builder_clear_op_metadata(b);
    if (!m || !bld_ok(b)) return;
    if (m->source_line < 0) {
        bld_fail(b, op, "source_line %" PRId64 " is negative", m->source_line);
        return;
    }
    cxla_strbuf sb;
    cxla_strbuf_init(&sb);
    cxla_strbuf_putc(&sb, '{');
    put_field(&sb, "op_type", m->op_type);
    put_field(&sb, "op_name", m->op_name);
    put_field(&sb, "source_file", m->source_file);
    if (m->source_line > 0)
        cxla_strbuf_printf(&sb, "%ssource_line=%" PRId64, sb.len > 1 ? " " : "", m->source_line);
    cxla_strbuf_putc(&sb, '}');
    if (sb.failed || !sb.data) {
        bld_fail_status(b, op, OOM());
    } else if (sb.len > 2) { /* empty metadata is not written */
        b->metadata = dup(sb.data);
        if (!b->metadata) bld_fail_status(b, op, OOM());
    }
    cxla_strbuf_free(&sb);
}

/* ---- frontend attributes ---------------------------------------------------------------- */

static void free_frontend(cxla_builder *b) {
    for (int64_t i = 0; i < b->frontend_count; i++) {
        free(b->frontend_keys[i]);
        free(b->frontend_values[i]);
    }
    free(b->frontend_keys);
    free(b->frontend_values);
    b->frontend_keys = b->frontend_values = NULL;
    b->frontend_count = 0;
}

void cxla_builder_clear_frontend_attributes(cxla_builder *b) {
    if (b) free_frontend(b);
}

/* Keys are written bare in HLO text, so they must read back as one name. */
static bool valid_key(cxla_builder *b, const char *op, const char *key, const char *value) {
    if (!key || !key[0] || !value) {
        bld_fail(b, op, "a frontend attribute has a NULL or empty key or a NULL value");
        return false;
    }
    for (const char *p = key; *p; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '.' || c == '-';
        if (!ok) {
            bld_fail(b, op,
                     "frontend attribute key '%s' has a character other than letters, "
                     "digits, '_', '.' and '-'",
                     key);
            return false;
        }
    }
    return true;
}

void cxla_builder_set_frontend_attributes(cxla_builder *b, const cxla_frontend_attribute *attrs,
                                          int64_t count) {
    const char *op = "SetFrontendAttributes";
    if (!b) return;
    free_frontend(b);
    if (!bld_ok(b) || count == 0 || !bld_check_list(b, op, "attributes", attrs, count)) return;
    if (count < 0 || count > 1 << 20) {
        bld_fail(b, op, "%" PRId64 " frontend attributes are too many", count);
        return;
    }
    for (int64_t i = 0; i < count; i++) {
        if (!valid_key(b, op, attrs[i].key, attrs[i].value)) return;
        for (int64_t k = 0; k < i; k++)
            if (strcmp(attrs[k].key, attrs[i].key) == 0) {
                bld_fail(b, op, "frontend attribute key '%s' is given twice", attrs[i].key);
                return;
            }
    }
    b->frontend_keys = calloc((size_t)count, sizeof(char *));
    b->frontend_values = calloc((size_t)count, sizeof(char *));
    bool ok = b->frontend_keys && b->frontend_values;
    for (int64_t i = 0; ok && i < count; i++) {
        b->frontend_keys[i] = dup(attrs[i].key);
        b->frontend_values[i] = dup(attrs[i].value);
        b->frontend_count = i + 1;
        ok = b->frontend_keys[i] && b->frontend_values[i];
    }
    if (!ok) {
        free_frontend(b);
        bld_fail_status(b, op, OOM());
    }
}

/* Entries are "key=\"escaped value\""; they sort by key, as XLA prints them. */
static size_t key_len(const char *entry) {
    return strcspn(entry, "=");
}

static int by_key(const void *x, const void *y) {
    const char *a = *(const char *const *)x, *c = *(const char *const *)y;
    size_t na = key_len(a), nc = key_len(c);
    int r = memcmp(a, c, na < nc ? na : nc);
    return r ? r : (na > nc) - (na < nc);
}

static char *entry_of(const char *key, const char *value) {
    cxla_strbuf sb;
    cxla_strbuf_init(&sb);
    cxla_strbuf_printf(&sb, "%s=", key);
    cxla_hlo_print_string(&sb, value);
    char *out = sb.failed || !sb.data ? NULL : dup(sb.data);
    cxla_strbuf_free(&sb);
    return out;
}

/* {entry,entry,...} sorted by key; NULL when memory is short. Sorts |entries|. */
static char *entries_text(int64_t n, char **entries) {
    qsort(entries, (size_t)n, sizeof(char *), by_key);
    cxla_strbuf sb;
    cxla_strbuf_init(&sb);
    cxla_strbuf_putc(&sb, '{');
    for (int64_t i = 0; i < n; i++) {
        if (i) cxla_strbuf_putc(&sb, ',');
        cxla_strbuf_puts(&sb, entries[i]);
    }
    cxla_strbuf_putc(&sb, '}');
    char *out = sb.failed || !sb.data ? NULL : dup(sb.data);
    cxla_strbuf_free(&sb);
    return out;
}

static char *frontend_text(int64_t n, char *const *keys, char *const *values) {
    char **entries = calloc((size_t)(n ? n : 1), sizeof(char *));
    bool ok = entries != NULL;
    for (int64_t i = 0; ok && i < n; i++) ok = (entries[i] = entry_of(keys[i], values[i])) != NULL;
    char *out = ok ? entries_text(n, entries) : NULL;
    for (int64_t i = 0; entries && i < n; i++) free(entries[i]);
    free(entries);
    return out;
}

/* Splits "{e1,e2,...}" (as entries_text writes it: commas inside quoted values are
 * escaped-free but may occur, so quotes are tracked) into malloc'd entries. */
static int64_t split_entries(const char *text, char **out, int64_t max) {
    int64_t n = 0;
    const char *p = text;
    if (*p == '{') p++;
    while (*p && *p != '}' && n < max) {
        const char *start = p;
        bool quoted = false;
        for (; *p; p++) {
            if (quoted && *p == '\\' && p[1]) {
                p++;
                continue;
            }
            if (*p == '"') quoted = !quoted;
            if (!quoted && (*p == ',' || *p == '}')) break;
        }
        out[n] = dup_n(start, (size_t)(p - start));
        if (!out[n]) return -1;
        n++;
        if (*p == ',') p++;
    }
    return n;
}

enum { MAX_OP_ATTRIBUTES = 256 };

void cxla_op_set_frontend_attribute(cxla_op op, const char *key, const char *value) {
    const char *what = "SetInstructionFrontendAttribute";
    cxla_builder *b = op.builder;
    cxla_instr *in = annotated_op(op, what);
    if (!in || !valid_key(b, what, key, value)) return;
    char **entries = calloc(MAX_OP_ATTRIBUTES + 1, sizeof(char *));
    if (!entries) {
        bld_fail_status(b, what, OOM());
        return;
    }
    const cxla_attr *cur = cxla_instr_attr(in, CXLA_ATTR_FRONTEND_ATTRIBUTES);
    int64_t n = cur && cur->v.s ? split_entries(cur->v.s, entries, MAX_OP_ATTRIBUTES) : 0;
    char *mine = entry_of(key, value);
    bool ok = n >= 0 && mine;
    int64_t at = n;
    for (int64_t i = 0; ok && i < n; i++)
        if (key_len(entries[i]) == strlen(key) && memcmp(entries[i], key, strlen(key)) == 0) at = i;
    if (ok && at == n && n == MAX_OP_ATTRIBUTES) {
        bld_fail(b, what, "more than %d frontend attributes on one operation", MAX_OP_ATTRIBUTES);
        ok = false;
    }
    char *text = NULL;
    if (ok) {
        free(entries[at]);
        entries[at] = mine;
        mine = NULL;
        if (at == n) n++;
        text = entries_text(n, entries);
        if (!text) bld_fail_status(b, what, OOM());
    } else if (n < 0 || !mine) {
        bld_fail_status(b, what, OOM());
    }
    if (text) bld_fail_status(b, what, set_raw(b, in, CXLA_ATTR_FRONTEND_ATTRIBUTES, text));
    free(text);
    free(mine);
    for (int64_t i = 0; i < (n > 0 ? n : 0); i++) free(entries[i]);
    free(entries);
}

/* ---- attaching ------------------------------------------------------------------------- */

cxla_status bld_annotate(cxla_builder *b, cxla_instr *in) {
    if (b->sharding) CXLA_RETURN_IF_ERROR(set_raw(b, in, CXLA_ATTR_SHARDING, b->sharding));
    if (b->metadata) CXLA_RETURN_IF_ERROR(set_raw(b, in, CXLA_ATTR_METADATA, b->metadata));
    if (b->frontend_count > 0) {
        char *text = frontend_text(b->frontend_count, b->frontend_keys, b->frontend_values);
        if (!text) return OOM();
        cxla_status s = set_raw(b, in, CXLA_ATTR_FRONTEND_ATTRIBUTES, text);
        free(text);
        return s;
    }
    return NULL;
}

void bld_annotations_free(cxla_builder *b) {
    free(b->sharding);
    free(b->metadata);
    free_frontend(b);
}

/* ---- default layouts ------------------------------------------------------------------ */

static cxla_status lay_out(cxla_arena *arena, cxla_shape *s) {
    if (s->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < s->tuple_count; i++)
            CXLA_RETURN_IF_ERROR(lay_out(arena, &s->elements[i]));
        return NULL;
    }
    if (!cxla_shape_is_array(s) || s->layout) return NULL;
    return cxla_layout_make_default(arena, s->rank, &s->layout);
}

cxla_status bld_default_layouts(cxla_module *m) {
    for (int64_t c = 0; c < m->comp_count; c++) {
        cxla_computation *comp = m->comps[c];
        for (int64_t i = 0; i < comp->instr_count; i++) {
            cxla_instr *in = comp->instrs[i];
            CXLA_RETURN_IF_ERROR(lay_out(m->arena, &in->shape));
            for (int64_t k = 0; k < in->attr_count; k++) {
                cxla_attr *a = &in->attrs[k];
                if (a->kind != CXLA_ATTR_KIND_SHAPE && a->kind != CXLA_ATTR_KIND_SHAPES) continue;
                for (int64_t j = 0; j < a->v.shapes.count; j++)
                    CXLA_RETURN_IF_ERROR(lay_out(m->arena, &a->v.shapes.items[j]));
            }
        }
    }
    return NULL;
}
