/* Test helpers for the passes (header-only; each test file is its own program):
 * generated inputs as `cxla run` makes them, bit-for-bit literal comparison, and
 * running a module on the interpreter before and after passes. */
#ifndef CXLA_TESTS_PASSES_CHECK_H_
#define CXLA_TESTS_PASSES_CHECK_H_

#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"
#include "literal/literal_internal.h"
#include "passes/passes.h"

static uint64_t pc_splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Floats uniform in [-1, 2) with some exact zeros, -0.0 and ones mixed in (the values
 * the simplifier's rewrites must keep), integers in [0, 8), pred random. */
static void pc_fill(cxla_literal *lit, uint64_t *state) {
    cxla_type t = cxla_literal_type(lit);
    if (t == CXLA_TUPLE) {
        for (int64_t i = 0; i < cxla_literal_tuple_count(lit); i++)
            pc_fill(cxla_literal_tuple_element(lit, i), state);
        return;
    }
    if (!cxla_type_is_array(t)) return;
    size_t esize = cxla_type_storage(t);
    char *data = cxla_literal_data(lit);
    int64_t n = (int64_t)(cxla_literal_byte_size(lit) / (esize ? esize : 1));
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = pc_splitmix64(state);
        void *p = data + (size_t)i * esize;
        if (t == CXLA_PRED) {
            *(uint8_t *)p = r & 1;
        } else if (cxla_type_is_integer(t)) {
            cxla_store_u64(t, p, r % 8);
        } else {
            double u = (double)(r >> 11) / 9007199254740992.0;
            double v = -1.0 + 3.0 * u;
            if ((r & 31) == 0) v = 0.0;
            if ((r & 31) == 1) v = -0.0;
            if ((r & 31) == 2) v = 1.0;
            cxla_store_c128(t, p, v, cxla_type_is_complex(t) ? v * 0.5 : 0);
        }
    }
}

static cxla_status pc_make_args(const cxla_module *m, uint64_t seed, cxla_literal ***out) {
    const cxla_computation *e = m->entry;
    cxla_literal **args = calloc((size_t)(e->param_count ? e->param_count : 1), sizeof(*args));
    if (!args) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    uint64_t state = seed;
    for (int64_t i = 0; i < e->param_count; i++) {
        cxla_shape s = m->has_entry_layout ? m->entry_param_shapes[i] : e->params[i]->shape;
        if (cxla_type_is_array(s.type)) s.layout = NULL;
        cxla_status st = cxla_literal_create(&s, &args[i]);
        if (st) {
            for (int64_t k = 0; k < i; k++) cxla_literal_free(args[k]);
            free(args);
            return st;
        }
        pc_fill(args[i], &state);
    }
    *out = args;
    return NULL;
}

/* Bit-for-bit equality (NaN payloads and signs of zeros included), in logical order. */
static bool pc_bits_equal(const cxla_literal *a, const cxla_literal *b) {
    if (cxla_literal_tuple_count(a) != cxla_literal_tuple_count(b)) return false;
    if (cxla_literal_type(a) == CXLA_TUPLE) {
        for (int64_t i = 0; i < cxla_literal_tuple_count(a); i++)
            if (!pc_bits_equal(cxla_literal_tuple_element_const(a, i),
                               cxla_literal_tuple_element_const(b, i)))
                return false;
        return true;
    }
    if (!cxla_shape_compatible(cxla_literal_shape(a), cxla_literal_shape(b))) return false;
    if (!cxla_type_is_array(cxla_literal_type(a))) return true;
    cxla_literal *ra = NULL, *rb = NULL;
    cxla_status s = cxla_literal_relayout(a, NULL, &ra);
    if (!s) s = cxla_literal_relayout(b, NULL, &rb);
    bool eq = !s && cxla_literal_byte_size(ra) == cxla_literal_byte_size(rb) &&
              (cxla_literal_byte_size(ra) == 0 ||
               memcmp(cxla_literal_data_const(ra), cxla_literal_data_const(rb),
                      cxla_literal_byte_size(ra)) == 0);
    cxla_status_free(s);
    cxla_literal_free(ra);
    cxla_literal_free(rb);
    return eq;
}

/* Runs |m| on |args| (given, or generated when NULL) before and after the passes (the
 * whole cpu pipeline when |passes| is NULL) and checks the results agree bit for bit, or
 * that both runs fail. Returns false (after a CHECK failure naming |label|) otherwise. */
static bool pc_check_passes(cxla_module *m, cxla_literal **args, const cxla_pass *const *passes,
                            int64_t count, const char *label) {
    cxla_literal **owned = NULL;
    if (!args) {
        cxla_status s = pc_make_args(m, 42, &owned);
        if (s) {
            CHECK_MSG(false, "%s: inputs: %s", label, cxla_status_message(s));
            cxla_status_free(s);
            return false;
        }
        args = owned;
    }
    int64_t n = m->entry->param_count;
    cxla_literal *before = NULL, *after = NULL;
    cxla_status sb = interp_run_module(m, NULL, (const cxla_literal *const *)args, n, &before);
    cxla_pipeline_options o = {.verify = true};
    cxla_status sp =
        passes ? cxla_pipeline_run(m, "test", passes, count, &o) : cxla_passes_cpu(m, &o);
    bool ok = true;
    if (sp) {
        CHECK_MSG(false, "%s: passes failed: %s", label, cxla_status_message(sp));
        cxla_status_free(sp);
        ok = false;
    } else {
        cxla_status sa = interp_run_module(m, NULL, (const cxla_literal *const *)args, n, &after);
        if (sb || sa) {
            if (!sb || !sa) {
                CHECK_MSG(false, "%s: %s before the passes, %s after: %s", label,
                          sb ? "failed" : "ran", sa ? "failed" : "ran",
                          cxla_status_message(sb ? sb : sa));
                ok = false;
            }
        } else if (!pc_bits_equal(before, after)) {
            char *x = cxla_literal_to_string(before, CXLA_LITERAL_PRINT_SHAPE);
            char *y = cxla_literal_to_string(after, CXLA_LITERAL_PRINT_SHAPE);
            CHECK_MSG(false,
                      "%s: results differ after the passes:\n  before: %.400s\n  after:  %.400s",
                      label, x ? x : "?", y ? y : "?");
            free(x);
            free(y);
            ok = false;
        }
        cxla_status_free(sa);
    }
    cxla_status_free(sb);
    cxla_literal_free(before);
    cxla_literal_free(after);
    if (owned) {
        for (int64_t i = 0; i < n; i++) cxla_literal_free(owned[i]);
        free(owned);
    }
    return ok;
}

#endif /* CXLA_TESTS_PASSES_CHECK_H_ */
