/* Interpreter handler for custom-call: the target registry (cxla/custom_call.h), the
 * built-in targets that XLA's dumps use with a documented meaning, and calls into
 * foreign functions with XLA's CPU calling convention (buffers in the module's layouts,
 * tuple results as arrays of leaf pointers). docs/semantics.md ("Custom calls") has the
 * user-facing description. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cxla/custom_call.h"
#include "interp/interp_host.h"
#include "interp/interp_reduce.h"

static cxla_status oom(void) {
    return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
}

/* ---- the registry ------------------------------------------------------------------ */

typedef struct registry_entry {
    char *name;
    cxla_custom_call_fn fn;
    cxla_custom_call_api_version api;
} registry_entry;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static registry_entry *registry;
static size_t registry_count, registry_capacity;

static const char *const api_names[] = {
    "API_VERSION_UNSPECIFIED",      "API_VERSION_ORIGINAL",
    "API_VERSION_STATUS_RETURNING", "API_VERSION_STATUS_RETURNING_UNIFIED",
    "API_VERSION_TYPED_FFI",
};

cxla_status cxla_custom_call_register(const char *name, cxla_custom_call_fn fn,
                                      cxla_custom_call_api_version api_version) {
    if (!name || !*name)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "a custom-call target needs a name");
    if ((int)api_version < 0 || (int)api_version > CXLA_CUSTOM_CALL_API_TYPED_FFI)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "custom-call target '%s': unknown api_version %d", name,
                          (int)api_version);
    if (api_version == CXLA_CUSTOM_CALL_API_TYPED_FFI)
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED,
                          "custom-call target '%s': the typed FFI (API_VERSION_TYPED_FFI) is "
                          "not supported; use API_VERSION_STATUS_RETURNING_UNIFIED",
                          name);
    if (api_version == CXLA_CUSTOM_CALL_API_UNSPECIFIED)
        api_version = CXLA_CUSTOM_CALL_API_ORIGINAL;
    cxla_status s = NULL;
    pthread_mutex_lock(&registry_lock);
    size_t i = 0;
    while (i < registry_count && strcmp(registry[i].name, name) != 0) i++;
    if (!fn) {
        if (i < registry_count) {
            free(registry[i].name);
            registry[i] = registry[--registry_count];
        }
    } else if (i < registry_count) {
        registry[i].fn = fn;
        registry[i].api = api_version;
    } else {
        if (registry_count == registry_capacity) {
            size_t cap = registry_capacity ? 2 * registry_capacity : 16;
            registry_entry *grown = realloc(registry, cap * sizeof(*grown));
            if (grown) {
                registry = grown;
                registry_capacity = cap;
            }
        }
        char *copy = strdup(name);
        if (registry_count < registry_capacity && copy) {
            registry[registry_count++] = (registry_entry){copy, fn, api_version};
        } else {
            free(copy);
            s = oom();
        }
    }
    pthread_mutex_unlock(&registry_lock);
    return s;
}

static bool registry_lookup(const char *name, cxla_custom_call_fn *fn,
                            cxla_custom_call_api_version *api) {
    bool found = false;
    pthread_mutex_lock(&registry_lock);
    for (size_t i = 0; i < registry_count && !found; i++)
        if (strcmp(registry[i].name, name) == 0) {
            *fn = registry[i].fn;
            *api = registry[i].api;
            found = true;
        }
    pthread_mutex_unlock(&registry_lock);
    return found;
}

/* ---- status ------------------------------------------------------------------------- */

struct cxla_custom_call_status {
    bool failed;
    char *message; /* NULL: none given (or no memory for it) */
};

void cxla_custom_call_status_set_failure(cxla_custom_call_status *status, const char *message) {
    if (!status) return;
    free(status->message);
    status->message = message ? strdup(message) : NULL;
    status->failed = true;
}

void cxla_custom_call_status_set_success(cxla_custom_call_status *status) {
    if (!status) return;
    free(status->message);
    status->message = NULL;
    status->failed = false;
}

/* ---- attributes ----------------------------------------------------------------------- */

static cxla_status api_version_of(const cxla_instr *instr, const char *target,
                                  cxla_custom_call_api_version *out) {
    const char *w = cxla_instr_word(instr, CXLA_ATTR_API_VERSION);
    *out = CXLA_CUSTOM_CALL_API_ORIGINAL;
    if (!w) return NULL;
    for (int i = 0; i < (int)CXLA_ARRAY_SIZE(api_names); i++)
        if (strcmp(w, api_names[i]) == 0) {
            *out = i == 0 ? CXLA_CUSTOM_CALL_API_ORIGINAL : (cxla_custom_call_api_version)i;
            if (*out == CXLA_CUSTOM_CALL_API_TYPED_FFI)
                return interp_error(instr, CXLA_STATUS_UNIMPLEMENTED,
                                    "custom-call target '%s' uses XLA's typed FFI "
                                    "(API_VERSION_TYPED_FFI), which cxla does not support",
                                    target);
            return NULL;
        }
    return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "unknown api_version=%s", w);
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* The opaque bytes: backend_config's string, unescaped (C escapes, as XLA prints it), or
 * its text verbatim when it is not a quoted string. |out| is malloc'd, NUL-terminated. */
static cxla_status opaque_of(const cxla_instr *instr, char **out, size_t *out_len) {
    const cxla_attr *a = cxla_instr_attr(instr, CXLA_ATTR_BACKEND_CONFIG);
    const char *t = a && a->kind == CXLA_ATTR_KIND_RAW && a->v.s ? a->v.s : "";
    size_t n = strlen(t);
    char *buf = malloc(n + 1);
    if (!buf) return oom();
    size_t len = 0;
    if (n < 2 || t[0] != '"' || t[n - 1] != '"') {
        memcpy(buf, t, n);
        len = n;
    } else {
        for (size_t i = 1; i + 1 < n; i++) {
            char c = t[i];
            if (c != '\\' || i + 2 >= n) {
                buf[len++] = c;
                continue;
            }
            c = t[++i];
            switch (c) {
            case 'n': buf[len++] = '\n'; break;
            case 't': buf[len++] = '\t'; break;
            case 'r': buf[len++] = '\r'; break;
            case 'x': {
                int v = 0, d, k = 0;
                while (k < 2 && i + 2 < n && (d = hex_digit(t[i + 1])) >= 0) {
                    v = v * 16 + d;
                    i++;
                    k++;
                }
                buf[len++] = (char)v;
                break;
            }
            default:
                if (c >= '0' && c <= '7') {
                    int v = c - '0', k = 1;
                    while (k < 3 && i + 2 < n && t[i + 1] >= '0' && t[i + 1] <= '7') {
                        v = v * 8 + (t[++i] - '0');
                        k++;
                    }
                    buf[len++] = (char)v;
                } else {
                    buf[len++] = c; /* \" \' \\ and unknown escapes */
                }
            }
        }
    }
    buf[len] = 0;
    *out = buf;
    *out_len = len;
    return NULL;
}

/* ---- leaves ------------------------------------------------------------------------- */

static int64_t leaf_count(const cxla_shape *s) {
    if (s->type != CXLA_TUPLE) return 1;
    int64_t n = 0;
    for (int64_t i = 0; i < s->tuple_count; i++) n += leaf_count(&s->elements[i]);
    return n;
}

/* The layout of |s| as host memory sees it (tiles and memory spaces ignored); NULL for
 * row-major. */
static const cxla_layout *host_layout(const cxla_shape *s, cxla_layout *storage) {
    if (!s || !s->layout || cxla_layout_is_default(s)) return NULL;
    *storage = *s->layout;
    storage->tile_count = 0;
    storage->tiles = NULL;
    storage->memory_space = 0;
    return storage;
}

/* The operands' leaves for |in|: pointers into the values, or into relaid copies (kept
 * in |temps| to free) when the wanted layout is not row-major. |lits| holds the literal
 * of each leaf (NULL for tokens). */
typedef struct leaves {
    const void **ptrs;
    const cxla_literal **lits;
    int64_t count;
    cxla_literal **temps;
    int64_t temp_count;
} leaves;

static cxla_status add_leaves(leaves *l, const cxla_literal *lit, const cxla_shape *want) {
    cxla_type t = cxla_literal_type(lit);
    if (t == CXLA_TUPLE) {
        for (int64_t i = 0; i < cxla_literal_tuple_count(lit); i++)
            CXLA_RETURN_IF_ERROR(add_leaves(
                l, cxla_literal_tuple_element_const(lit, i),
                want && want->type == CXLA_TUPLE && i < want->tuple_count ? &want->elements[i]
                                                                          : NULL));
        return NULL;
    }
    if (!cxla_type_is_array(t)) {
        l->lits[l->count] = NULL;
        l->ptrs[l->count++] = NULL;
        return NULL;
    }
    cxla_layout storage;
    const cxla_layout *layout =
        want && want->rank == cxla_literal_shape(lit)->rank ? host_layout(want, &storage) : NULL;
    if (layout) {
        cxla_literal *copy = NULL;
        CXLA_RETURN_IF_ERROR(cxla_literal_relayout(lit, layout, &copy));
        l->temps[l->temp_count++] = copy;
        lit = copy;
    }
    l->lits[l->count] = lit;
    l->ptrs[l->count++] = cxla_literal_data_const(lit);
    return NULL;
}

/* A zero-filled literal of |shape| in its host layout. */
static cxla_status create_in_layout(const cxla_shape *shape, cxla_literal **out) {
    if (shape->type == CXLA_TUPLE) {
        int64_t n = shape->tuple_count;
        cxla_literal **elements = calloc((size_t)(n ? n : 1), sizeof(*elements));
        if (!elements) return oom();
        cxla_status s = NULL;
        for (int64_t i = 0; i < n && !s; i++)
            s = create_in_layout(&shape->elements[i], &elements[i]);
        if (!s) s = cxla_literal_create_tuple(elements, n, out);
        if (s)
            for (int64_t i = 0; i < n; i++) cxla_literal_free(elements[i]);
        free(elements);
        return s;
    }
    cxla_shape plain = *shape;
    cxla_layout storage;
    plain.layout =
        cxla_type_is_array(shape->type) ? (cxla_layout *)host_layout(shape, &storage) : NULL;
    return cxla_literal_create(&plain, out);
}

static void result_leaves(cxla_literal *lit, cxla_literal **lits, int64_t *n) {
    if (cxla_literal_type(lit) == CXLA_TUPLE) {
        for (int64_t i = 0; i < cxla_literal_tuple_count(lit); i++)
            result_leaves(cxla_literal_tuple_element(lit, i), lits, n);
        return;
    }
    lits[(*n)++] = lit;
}

/* ---- output_to_operand_aliasing --------------------------------------------------------- */

/* The first leaf (depth-first) of the subshape at |index| and how many leaves it has;
 * false when the index does not name a subshape. */
static bool leaf_range(const cxla_shape *s, const int64_t *index, int64_t n, int64_t *first,
                       int64_t *count) {
    int64_t base = 0;
    for (int64_t d = 0; d < n; d++) {
        if (s->type != CXLA_TUPLE || index[d] < 0 || index[d] >= s->tuple_count) return false;
        for (int64_t i = 0; i < index[d]; i++) base += leaf_count(&s->elements[i]);
        s = &s->elements[index[d]];
    }
    *first = base;
    *count = leaf_count(s);
    return true;
}

static const char *skip_space(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

/* Reads "{i, j, ...}" into |index| (up to CXLA_MAX_RANK entries); NULL when malformed. */
static const char *read_index(const char *p, int64_t *index, int64_t *n) {
    *n = 0;
    p = skip_space(p);
    if (*p != '{') return NULL;
    p = skip_space(p + 1);
    while (*p != '}') {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p || *n >= CXLA_MAX_RANK) return NULL;
        index[(*n)++] = v;
        p = skip_space(end);
        if (*p == ',') p = skip_space(p + 1);
    }
    return p + 1;
}

/* Reads "C" from |p| into |c| and returns the text after it (NULL when absent). */
static const char *expect_char(const char *p, char c) {
    p = skip_space(p);
    return *p == c ? p + 1 : NULL;
}

/* Parses output_to_operand_aliasing={{out}: (operand, {in}), ...} and, for each aliased
 * output leaf, records the input leaf it shares a buffer with (alias[out_leaf] = in_leaf,
 * -1 for none). */
static cxla_status parse_aliasing(const cxla_instr *instr, int64_t *alias, int64_t out_leaves) {
    for (int64_t i = 0; i < out_leaves; i++) alias[i] = -1;
    const cxla_attr *a = cxla_instr_attr(instr, CXLA_ATTR_OUTPUT_TO_OPERAND_ALIASING);
    if (!a || a->kind != CXLA_ATTR_KIND_RAW || !a->v.s) return NULL;
    const char *p = expect_char(a->v.s, '{');
    while (p && *(p = skip_space(p)) != '}') {
        int64_t out_index[CXLA_MAX_RANK], in_index[CXLA_MAX_RANK], on = 0, in_n = 0;
        long long operand = -1;
        char *end = NULL;
        p = read_index(p, out_index, &on);
        if (p) p = expect_char(p, ':');
        if (p) p = expect_char(p, '(');
        if (p) {
            operand = strtoll(p, &end, 10);
            p = end == p ? NULL : expect_char(end, ',');
        }
        if (p) p = read_index(p, in_index, &in_n);
        if (p) p = expect_char(p, ')');
        if (!p || operand < 0 || operand >= instr->operand_count) break;
        p = skip_space(p);
        if (*p == ',') p++;
        int64_t of, oc, first, count, base = 0;
        if (!leaf_range(&instr->shape, out_index, on, &of, &oc) ||
            !leaf_range(&instr->operands[operand]->shape, in_index, in_n, &first, &count) ||
            oc != count || of + oc > out_leaves) {
            p = NULL;
            break;
        }
        for (long long k = 0; k < operand; k++) base += leaf_count(&instr->operands[k]->shape);
        for (int64_t k = 0; k < oc; k++) alias[of + k] = base + first + k;
    }
    if (p) return NULL;
    return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                        "cannot read output_to_operand_aliasing=%s", a->v.s);
}

/* Starts aliased output leaf |out| as a copy of input leaf |in| (in the output's layout). */
static cxla_status prefill(const cxla_instr *instr, cxla_literal *out, const cxla_literal *in) {
    if (!in || !cxla_type_is_array(cxla_literal_type(out))) return NULL;
    const cxla_shape *os = cxla_literal_shape(out), *is = cxla_literal_shape(in);
    if (!cxla_shape_compatible(os, is))
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "output_to_operand_aliasing pairs leaves of different shapes");
    if (cxla_shape_equal(os, is)) {
        if (cxla_literal_byte_size(out))
            memcpy(cxla_literal_data(out), cxla_literal_data_const(in),
                   cxla_literal_byte_size(out));
        return NULL;
    }
    cxla_literal *copy = NULL;
    CXLA_RETURN_IF_ERROR(cxla_literal_relayout(in, os->layout, &copy));
    if (cxla_literal_byte_size(out))
        memcpy(cxla_literal_data(out), cxla_literal_data_const(copy), cxla_literal_byte_size(out));
    cxla_literal_free(copy);
    return NULL;
}

/* ---- calling a foreign function ----------------------------------------------------- */

static cxla_status call_foreign(const cxla_instr *instr, const char *target, cxla_custom_call_fn fn,
                                cxla_custom_call_api_version api,
                                const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_attr *constraints = cxla_instr_attr(instr, CXLA_ATTR_OPERAND_LAYOUT_CONSTRAINTS);
    if (constraints && (constraints->kind != CXLA_ATTR_KIND_SHAPES ||
                        constraints->v.shapes.count != instr->operand_count))
        constraints = NULL;
    int64_t in_total = 0, out_total = leaf_count(&instr->shape);
    for (int64_t k = 0; k < instr->operand_count; k++)
        in_total += leaf_count(cxla_literal_shape(operands[k]));
    size_t in_cap = (size_t)(in_total ? in_total : 1),
           out_cap = (size_t)(out_total ? out_total : 1);
    leaves in = {0};
    in.ptrs = calloc(in_cap, sizeof(*in.ptrs));
    in.lits = calloc(in_cap, sizeof(*in.lits));
    in.temps = calloc(in_cap, sizeof(*in.temps));
    void **outs = calloc(out_cap, sizeof(*outs));
    cxla_literal **out_lits = calloc(out_cap, sizeof(*out_lits));
    int64_t *alias = calloc(out_cap, sizeof(*alias));
    char *opaque = NULL;
    size_t opaque_len = 0;
    cxla_literal *result = NULL;
    cxla_custom_call_status st = {0};
    cxla_status s = in.ptrs && in.lits && in.temps && outs && out_lits && alias ? NULL : oom();
    for (int64_t k = 0; k < instr->operand_count && !s; k++)
        s = add_leaves(&in, operands[k],
                       constraints ? &constraints->v.shapes.items[k] : &instr->operands[k]->shape);
    if (!s) s = create_in_layout(&instr->shape, &result);
    int64_t nout = 0;
    if (!s) {
        result_leaves(result, out_lits, &nout);
        for (int64_t i = 0; i < nout; i++) outs[i] = cxla_literal_data(out_lits[i]);
        s = parse_aliasing(instr, alias, nout);
    }
    /* An aliased output starts as its operand and is passed for both: XLA's in-place
     * update, where the two are one buffer. */
    for (int64_t i = 0; i < nout && !s; i++) {
        if (alias[i] < 0 || alias[i] >= in.count) continue;
        s = prefill(instr, out_lits[i], in.lits[alias[i]]);
        in.ptrs[alias[i]] = outs[i];
    }
    if (!s) s = opaque_of(instr, &opaque, &opaque_len);
    if (!s) {
        void *out_arg = instr->shape.type == CXLA_TUPLE ? (void *)outs : outs[0];
        switch (api) {
        case CXLA_CUSTOM_CALL_API_STATUS_RETURNING:
            ((cxla_custom_call_status_returning_fn)fn)(out_arg, in.ptrs, &st);
            break;
        case CXLA_CUSTOM_CALL_API_STATUS_RETURNING_UNIFIED:
            ((cxla_custom_call_unified_fn)fn)(out_arg, in.ptrs, opaque, opaque_len, &st);
            break;
        default: ((cxla_custom_call_original_fn)fn)(out_arg, in.ptrs); break;
        }
        if (st.failed)
            s = interp_error(instr, CXLA_STATUS_FAILED_PRECONDITION,
                             "custom-call target '%s' failed: %s", target,
                             st.message ? st.message : "(no message)");
    }
    if (!s && interp_is_row_major(result)) {
        *out = result;
        result = NULL;
    } else if (!s) {
        s = interp_relayout_tree(result, NULL, out);
    }
    free(st.message);
    free(opaque);
    cxla_literal_free(result);
    for (int64_t i = 0; i < in.temp_count; i++) cxla_literal_free(in.temps[i]);
    free(in.temps);
    free(in.lits);
    free(in.ptrs);
    free(outs);
    free(out_lits);
    free(alias);
    return s;
}

/* ---- built-in targets --------------------------------------------------------------------- */

/* The result is the operand (one operand), or the tuple of the operands: annotations
 * that mean nothing on one device. A shape change means a sharded program. */
static cxla_status builtin_identity(interp_ctx *ctx, const cxla_instr *instr, const char *target,
                                    const cxla_literal *const *operands, cxla_literal **out) {
    int64_t n = instr->operand_count;
    const cxla_shape *r = &instr->shape;
    if (n == 1 && cxla_shape_compatible(r, cxla_literal_shape(operands[0]))) {
        cxla_literal *taken = interp_take_operand(ctx, 0);
        if (taken) {
            *out = taken;
            return NULL;
        }
        return cxla_literal_clone(operands[0], out);
    }
    bool tuple = r->type == CXLA_TUPLE && r->tuple_count == n;
    for (int64_t i = 0; tuple && i < n; i++)
        tuple = cxla_shape_compatible(&r->elements[i], cxla_literal_shape(operands[i]));
    if (!tuple) {
        char *rs = cxla_shape_to_string(r, CXLA_SHAPE_PRINT_NO_LAYOUT);
        cxla_status s = interp_error(
            instr, CXLA_STATUS_UNIMPLEMENTED,
            "custom-call target '%s' changes the shape of its %" PRId64
            " operand(s) to %s: that happens in a program sharded over several devices, "
            "and the interpreter runs one",
            target, n, rs ? rs : "?");
        free(rs);
        return s;
    }
    cxla_literal **elements = calloc((size_t)n, sizeof(*elements));
    if (!elements) return oom();
    cxla_status s = NULL;
    for (int64_t i = 0; i < n && !s; i++) s = cxla_literal_clone(operands[i], &elements[i]);
    if (!s) s = cxla_literal_create_tuple(elements, n, out);
    if (s)
        for (int64_t i = 0; i < n; i++) cxla_literal_free(elements[i]);
    free(elements);
    return s;
}

/* AllocateBuffer: a fresh buffer of the result shape (zeros; XLA leaves it undefined). */
static cxla_status builtin_allocate(interp_ctx *ctx, const cxla_instr *instr, const char *target,
                                    const cxla_literal *const *operands, cxla_literal **out) {
    cxla_literal *lit = NULL;
    CXLA_RETURN_IF_ERROR(create_in_layout(&instr->shape, &lit));
    if (interp_is_row_major(lit)) {
        *out = lit;
        return NULL;
    }
    cxla_status s = interp_relayout_tree(lit, NULL, out);
    cxla_literal_free(lit);
    return s;
}

/* TopK (XLA's TopkRewriter): (values, s32 indices) of the k first elements along the
 * last dimension in the order of the comparator (to_apply / called_computations), which
 * must be a plain greater-than (largest first) or less-than; k is the result's last
 * dimension. Runs the topk operation. */
static cxla_status builtin_topk(interp_ctx *ctx, const cxla_instr *instr, const char *target,
                                const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_shape *r = &instr->shape;
    if (instr->operand_count != 1 || r->type != CXLA_TUPLE || r->tuple_count != 2 ||
        !cxla_type_is_array(r->elements[0].type) || r->elements[0].rank < 1)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                            "custom-call target 'TopK' takes one array and returns "
                            "(values, indices)");
    bool largest = true;
    cxla_computation *comp = cxla_instr_called(instr, CXLA_ATTR_TO_APPLY);
    if (!comp) {
        cxla_computation *called[1];
        if (cxla_instr_called_computations(instr, called, 1) == 1) comp = called[0];
    }
    if (comp) {
        interp_comparator c = interp_match_comparator(comp);
        if (c.direction != INTERP_DIR_GT && c.direction != INTERP_DIR_LT)
            return interp_error(instr, CXLA_STATUS_UNIMPLEMENTED,
                                "custom-call target 'TopK': the comparator '%s' is not a plain "
                                "greater-than or less-than",
                                comp->name);
        largest = c.direction == INTERP_DIR_GT;
    }
    const cxla_shape *v = &r->elements[0];
    cxla_attr attrs[2] = {
        {.id = CXLA_ATTR_K, .name = "k", .kind = CXLA_ATTR_KIND_INT, .v.i = v->dims[v->rank - 1]},
        {.id = CXLA_ATTR_LARGEST, .name = "largest", .kind = CXLA_ATTR_KIND_BOOL, .v.b = largest},
    };
    cxla_instr topk = *instr;
    topk.opcode = CXLA_OP_TOPK;
    topk.attrs = attrs;
    topk.attr_count = 2;
    return interp_op_topk(ctx, &topk, operands, out);
}

typedef cxla_status (*builtin_fn)(interp_ctx *ctx, const cxla_instr *instr, const char *target,
                                  const cxla_literal *const *operands, cxla_literal **out);

static const struct {
    const char *name;
    builtin_fn fn;
} builtins[] = {
    /* Sharding annotations and the SPMD partitioner's shape changes: identities on one
     * device. */
    {"Sharding", builtin_identity},
    {"SPMDFullToShardShape", builtin_identity},
    {"SPMDShardToFullShape", builtin_identity},
    {"xla.sdy.GlobalToLocalShape", builtin_identity},
    {"xla.sdy.LocalToGlobalShape", builtin_identity},
    {"xla.sdy.FuncResultSharding", builtin_identity},
    /* Memory-space annotations (host offloading): the host is all there is. */
    {"annotate_device_placement", builtin_identity},
    {"MoveToHost", builtin_identity},
    {"MoveToDevice", builtin_identity},
    {"AllocateBuffer", builtin_allocate},
    {"TopK", builtin_topk},
};

/* ---- the handler -------------------------------------------------------------------------- */

static cxla_status op_custom_call(interp_ctx *ctx, const cxla_instr *instr,
                                  const cxla_literal *const *operands, cxla_literal **out) {
    const cxla_attr *a = cxla_instr_attr(instr, CXLA_ATTR_CUSTOM_CALL_TARGET);
    if (!a || a->kind != CXLA_ATTR_KIND_STRING || !a->v.s)
        return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "no custom_call_target");
    const char *target = a->v.s;
    cxla_custom_call_api_version api;
    CXLA_RETURN_IF_ERROR(api_version_of(instr, target, &api));
    cxla_custom_call_fn fn = NULL;
    cxla_custom_call_api_version registered;
    if (registry_lookup(target, &fn, &registered)) {
        if (registered != api)
            return interp_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                                "custom-call target '%s' was registered as %s, but the "
                                "instruction calls it as %s",
                                target, api_names[registered], api_names[api]);
        return call_foreign(instr, target, fn, api, operands, out);
    }
    for (size_t i = 0; i < CXLA_ARRAY_SIZE(builtins); i++)
        if (strcmp(builtins[i].name, target) == 0)
            return builtins[i].fn(ctx, instr, target, operands, out);
    void *sym = *target ? dlsym(RTLD_DEFAULT, target) : NULL;
    if (sym) {
        _Static_assert(sizeof(sym) == sizeof(fn), "function and data pointers differ in size");
        memcpy(&fn, &sym, sizeof(fn));
        return call_foreign(instr, target, fn, api, operands, out);
    }
    return interp_error(instr, CXLA_STATUS_NOT_FOUND,
                        "custom-call target '%s' is not registered "
                        "(cxla_custom_call_register), not built in, and no symbol of that "
                        "name is in the process",
                        target);
}

const interp_op_fn interp_custom_call_ops[CXLA_OP_COUNT] = {
    [CXLA_OP_CUSTOM_CALL] = op_custom_call,
};
