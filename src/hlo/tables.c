/* The opcode and attribute tables, generated from opcodes.def and attrs.def. */
#include <string.h>

#include "hlo/hlo.h"

static const cxla_opcode_info opcode_table[CXLA_OP_COUNT] = {
#define X(e, nm, ar, fl, rule, sh)                                                                 \
    [CXLA_OP_##                                                                                    \
        e] = {.name = nm, .arity = ar, .flags = fl, .type_rule = CXLA_TR_##rule, .stablehlo = sh},
#include "hlo/opcodes.def"
#undef X
};

static const cxla_opcode_info unknown_opcode = {.name = "unknown", .arity = -1};

const cxla_opcode_info *cxla_opcode_get_info(cxla_opcode op) {
    if ((int)op < 0 || op >= CXLA_OP_COUNT) return &unknown_opcode;
    return &opcode_table[op];
}

const char *cxla_opcode_name(cxla_opcode op) {
    return cxla_opcode_get_info(op)->name;
}

/* Names that older XLA versions printed for operations that still exist. */
static const struct {
    const char *name;
    cxla_opcode op;
} legacy_names[] = {
    {"cross-replica-sum", CXLA_OP_ALL_REDUCE},
    {"optimization-barrier", CXLA_OP_OPTIMIZATION_BARRIER},
};

cxla_opcode cxla_opcode_from_name(const char *name, size_t len) {
    for (int i = 0; i < CXLA_OP_COUNT; i++) {
        const char *n = opcode_table[i].name;
        if (strlen(n) == len && memcmp(n, name, len) == 0) return (cxla_opcode)i;
    }
    for (size_t i = 0; i < CXLA_ARRAY_SIZE(legacy_names); i++)
        if (strlen(legacy_names[i].name) == len && memcmp(legacy_names[i].name, name, len) == 0)
            return legacy_names[i].op;
    return CXLA_OP_COUNT;
}

cxla_opcode cxla_opcode_from_stablehlo_name(const char *name) {
    for (int i = 0; i < CXLA_OP_COUNT; i++)
        if (opcode_table[i].stablehlo && strcmp(opcode_table[i].stablehlo, name) == 0)
            return (cxla_opcode)i;
    return CXLA_OP_COUNT;
}

static const cxla_attr_info attr_table[CXLA_ATTR_COUNT] = {
#define X(e, nm, kd) [CXLA_ATTR_##e] = {.name = nm, .kind = CXLA_ATTR_KIND_##kd},
#include "hlo/attrs.def"
#undef X
    [CXLA_ATTR_UNKNOWN] = {.name = "unknown", .kind = CXLA_ATTR_KIND_RAW},
};

const cxla_attr_info *cxla_attr_get_info(cxla_attr_id id) {
    if ((int)id < 0 || id >= CXLA_ATTR_COUNT) return &attr_table[CXLA_ATTR_UNKNOWN];
    return &attr_table[id];
}

cxla_attr_id cxla_attr_from_name(const char *name, size_t len) {
    for (int i = 0; i < CXLA_ATTR_UNKNOWN; i++) {
        const char *n = attr_table[i].name;
        if (strlen(n) == len && memcmp(n, name, len) == 0) return (cxla_attr_id)i;
    }
    return CXLA_ATTR_UNKNOWN;
}

/* ---- suggestions for misspelled names ------------------------------------------------ */

size_t cxla_edit_distance(const char *a, size_t na, const char *b, size_t nb) {
    enum { MAX = 64 };
    if (na > MAX || nb > MAX) return (size_t)-1;
    size_t row[MAX + 1];
    for (size_t j = 0; j <= nb; j++) row[j] = j;
    for (size_t i = 1; i <= na; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[nb];
}

/* Close enough to be a misspelling: a third of the name's letters, at least two. */
static size_t suggestion_limit(size_t len) {
    return len / 3 > 2 ? len / 3 : 2;
}

const char *cxla_attr_suggest(const char *name, size_t len) {
    const char *best = NULL;
    size_t best_d = suggestion_limit(len) + 1;
    for (int i = 0; i < CXLA_ATTR_COUNT; i++) {
        const char *n = attr_table[i].name;
        if (!n || i == CXLA_ATTR_UNKNOWN) continue;
        size_t d = cxla_edit_distance(name, len, n, strlen(n));
        if (d < best_d) {
            best_d = d;
            best = n;
        }
    }
    return best;
}

const char *cxla_type_suggest(const char *name, size_t len) {
    const char *best = NULL;
    size_t best_d = suggestion_limit(len) + 1;
    for (int t = 0; t < CXLA_TYPE_COUNT; t++) {
        if (!cxla_type_is_array((cxla_type)t)) continue;
        const char *n = cxla_type_name((cxla_type)t);
        size_t d = cxla_edit_distance(name, len, n, strlen(n));
        if (d < best_d) {
            best_d = d;
            best = n;
        }
    }
    return best;
}
