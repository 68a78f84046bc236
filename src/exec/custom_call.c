/* The custom-call registry and calling convention shared by every backend
 * (exec/custom_call.h). */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "exec/custom_call.h"
#include "exec/exec.h"

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
_Static_assert(CXLA_ARRAY_SIZE(api_names) == CXLA_CUSTOM_CALL_API_TYPED_FFI + 1,
               "one name per cxla_custom_call_api_version");

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

bool exec_custom_call_lookup(const char *name, cxla_custom_call_fn *fn,
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

const char *exec_custom_call_api_name(cxla_custom_call_api_version api) {
    return (int)api >= 0 && (int)api < (int)CXLA_ARRAY_SIZE(api_names) ? api_names[api] : "?";
}

/* ---- status ------------------------------------------------------------------------- */

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

void exec_custom_call_status_clear(cxla_custom_call_status *status) {
    cxla_custom_call_status_set_success(status);
}

/* ---- built-in targets --------------------------------------------------------------- */

static const struct {
    const char *name;
    exec_builtin_target kind;
} builtins[] = {
    /* Sharding annotations and the SPMD partitioner's shape changes: identities on one
     * device. */
    {"Sharding", EXEC_BUILTIN_IDENTITY},
    {"SPMDFullToShardShape", EXEC_BUILTIN_IDENTITY},
    {"SPMDShardToFullShape", EXEC_BUILTIN_IDENTITY},
    {"xla.sdy.GlobalToLocalShape", EXEC_BUILTIN_IDENTITY},
    {"xla.sdy.LocalToGlobalShape", EXEC_BUILTIN_IDENTITY},
    {"xla.sdy.FuncResultSharding", EXEC_BUILTIN_IDENTITY},
    /* Memory-space annotations (host offloading): the host is all there is. */
    {"annotate_device_placement", EXEC_BUILTIN_IDENTITY},
    {"MoveToHost", EXEC_BUILTIN_IDENTITY},
    {"MoveToDevice", EXEC_BUILTIN_IDENTITY},
    {"AllocateBuffer", EXEC_BUILTIN_ALLOCATE},
    {"TopK", EXEC_BUILTIN_TOPK},
};

exec_builtin_target exec_custom_call_builtin(const char *name) {
    for (size_t i = 0; i < CXLA_ARRAY_SIZE(builtins); i++)
        if (strcmp(builtins[i].name, name) == 0) return builtins[i].kind;
    return EXEC_BUILTIN_NONE;
}

static bool is_decomposition_target(const char *target) {
    return strncmp(target, EXEC_DECOMPOSITION_PREFIX, strlen(EXEC_DECOMPOSITION_PREFIX)) == 0;
}

cxla_computation *exec_custom_call_decomposition(const cxla_instr *instr) {
    if (instr->opcode != CXLA_OP_CUSTOM_CALL) return NULL;
    const cxla_attr *a = cxla_instr_attr(instr, CXLA_ATTR_CUSTOM_CALL_TARGET);
    if (!a || a->kind != CXLA_ATTR_KIND_STRING || !a->v.s || !is_decomposition_target(a->v.s))
        return NULL;
    cxla_computation *called[2];
    return cxla_instr_called_computations(instr, called, 2) == 1 ? called[0] : NULL;
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
                return exec_error(instr, CXLA_STATUS_UNIMPLEMENTED,
                                  "custom-call target '%s' uses XLA's typed FFI "
                                  "(API_VERSION_TYPED_FFI), which cxla does not support",
                                  target);
            return NULL;
        }
    return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "unknown api_version=%s", w);
}

cxla_status exec_custom_call_resolve(const cxla_instr *instr, const char **out_target,
                                     cxla_custom_call_fn *fn, cxla_custom_call_api_version *api,
                                     exec_builtin_target *builtin) {
    *fn = NULL;
    *builtin = EXEC_BUILTIN_NONE;
    const cxla_attr *a = cxla_instr_attr(instr, CXLA_ATTR_CUSTOM_CALL_TARGET);
    if (!a || a->kind != CXLA_ATTR_KIND_STRING || !a->v.s)
        return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT, "no custom_call_target");
    const char *target = a->v.s;
    *out_target = target;
    CXLA_RETURN_IF_ERROR(api_version_of(instr, target, api));
    cxla_custom_call_api_version registered;
    if (exec_custom_call_lookup(target, fn, &registered)) {
        if (registered != *api)
            return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                              "custom-call target '%s' was registered as %s, but the "
                              "instruction calls it as %s",
                              target, api_names[registered], api_names[*api]);
        return NULL;
    }
    *builtin = exec_custom_call_builtin(target);
    if (*builtin != EXEC_BUILTIN_NONE) return NULL;
    if (exec_custom_call_decomposition(instr)) {
        *builtin = EXEC_BUILTIN_DECOMPOSITION;
        return NULL;
    }
    if (is_decomposition_target(target))
        return exec_error(instr, CXLA_STATUS_NOT_FOUND,
                          "custom-call target '%s' is not registered "
                          "(cxla_custom_call_register) and the call carries no decomposition "
                          "(XLA's builder gives it one computation: called_computations={...})",
                          target);
    void *sym = *target ? dlsym(RTLD_DEFAULT, target) : NULL;
    if (sym) {
        _Static_assert(sizeof(sym) == sizeof(*fn), "function and data pointers differ in size");
        memcpy(fn, &sym, sizeof(*fn));
        return NULL;
    }
    return exec_error(instr, CXLA_STATUS_NOT_FOUND,
                      "custom-call target '%s' is not registered "
                      "(cxla_custom_call_register), not built in, and no symbol of that "
                      "name is in the process",
                      target);
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* The opaque bytes: backend_config's string, unescaped (C escapes, as XLA prints it), or
 * its text verbatim when it is not a quoted string. |out| is malloc'd, NUL-terminated. */
cxla_status exec_custom_call_opaque(const cxla_instr *instr, char **out, size_t *out_len) {
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

/* ---- leaves and aliasing ----------------------------------------------------------- */

int64_t exec_leaf_count(const cxla_shape *s) {
    if (s->type != CXLA_TUPLE) return 1;
    int64_t n = 0;
    for (int64_t i = 0; i < s->tuple_count; i++) n += exec_leaf_count(&s->elements[i]);
    return n;
}

/* The first leaf (depth-first) of the subshape at |index| and how many leaves it has;
 * false when the index does not name a subshape. */
static bool leaf_range(const cxla_shape *s, const int64_t *index, int64_t n, int64_t *first,
                       int64_t *count) {
    int64_t base = 0;
    for (int64_t d = 0; d < n; d++) {
        if (s->type != CXLA_TUPLE || index[d] < 0 || index[d] >= s->tuple_count) return false;
        for (int64_t i = 0; i < index[d]; i++) base += exec_leaf_count(&s->elements[i]);
        s = &s->elements[index[d]];
    }
    *first = base;
    *count = exec_leaf_count(s);
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
cxla_status exec_custom_call_aliasing(const cxla_instr *instr, int64_t *alias, int64_t out_leaves) {
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
        for (long long k = 0; k < operand; k++) base += exec_leaf_count(&instr->operands[k]->shape);
        for (int64_t k = 0; k < oc; k++) alias[of + k] = base + first + k;
    }
    if (p) return NULL;
    return exec_error(instr, CXLA_STATUS_INVALID_ARGUMENT,
                      "cannot read output_to_operand_aliasing=%s", a->v.s);
}

/* ---- calling ------------------------------------------------------------------------ */

void exec_custom_call_invoke(cxla_custom_call_fn fn, cxla_custom_call_api_version api, void *out,
                             const void **in, const char *opaque, size_t opaque_len,
                             cxla_custom_call_status *status, exec_cancel *cancel) {
    /* Saved and restored: a call inside a run that a call started (nested runs). */
    exec_cancel *outer = exec_cancel_swap_current(cancel);
    switch (api) {
    case CXLA_CUSTOM_CALL_API_STATUS_RETURNING:
        ((cxla_custom_call_status_returning_fn)fn)(out, in, status);
        break;
    case CXLA_CUSTOM_CALL_API_STATUS_RETURNING_UNIFIED:
        ((cxla_custom_call_unified_fn)fn)(out, in, opaque, opaque_len, status);
        break;
    default: ((cxla_custom_call_original_fn)fn)(out, in); break;
    }
    exec_cancel_swap_current(outer);
}
