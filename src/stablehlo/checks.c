#define _POSIX_C_SOURCE 200809L
/* Check operations: `check.expect_*` and `stablehlo.custom_call @check.expect_*` become a
 * custom-call of the built-in target CV_CHECK_TARGET. Its backend_config says the rule,
 * the tolerance, the element type and dimensions of the operands, and where the check was
 * written; the target compares the two operand buffers by the rules of
 * ../shared/conformance/README.md and adds the outcome to a process-wide tally (it never
 * fails the run, so that every check of a program is reported). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxla/custom_call.h"
#include "stablehlo/convert_internal.h"

const char *const CV_CHECK_TARGET = "cxla.stablehlo.check";

enum { MAX_REPORTED = 20 };

static pthread_mutex_t tally_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t tally_passed, tally_failed;
static cxla_strbuf tally_msgs;
static bool tally_init;

void cxla_stablehlo_checks_reset(void) {
    pthread_mutex_lock(&tally_lock);
    tally_passed = tally_failed = 0;
    if (tally_init) cxla_strbuf_free(&tally_msgs);
    cxla_strbuf_init(&tally_msgs);
    tally_init = true;
    pthread_mutex_unlock(&tally_lock);
}

void cxla_stablehlo_checks_get(cxla_stablehlo_check_tally *out) {
    pthread_mutex_lock(&tally_lock);
    out->passed = tally_passed;
    out->failed = tally_failed;
    out->failures = NULL;
    if (tally_init && tally_msgs.len) {
        out->failures = malloc(tally_msgs.len + 1);
        if (out->failures) memcpy(out->failures, tally_msgs.data, tally_msgs.len + 1);
    }
    pthread_mutex_unlock(&tally_lock);
}

static void record(bool passed, const char *msg) {
    pthread_mutex_lock(&tally_lock);
    if (!tally_init) {
        cxla_strbuf_init(&tally_msgs);
        tally_init = true;
    }
    if (passed) {
        tally_passed++;
    } else {
        if (tally_failed < MAX_REPORTED) {
            cxla_strbuf_puts(&tally_msgs, msg);
            cxla_strbuf_putc(&tally_msgs, '\n');
        }
        tally_failed++;
    }
    pthread_mutex_unlock(&tally_lock);
}

/* backend_config: "RULE;TOL;TYPE;D0,D1,..;FUNC;LINE;NAME" */
static void check_target(void *out, const void **in, const char *opaque, size_t opaque_len,
                         cxla_custom_call_status *status) {
    (void)out;
    (void)status;
    char cfg[512];
    size_t n = opaque_len < sizeof cfg - 1 ? opaque_len : sizeof cfg - 1;
    memcpy(cfg, opaque, n);
    cfg[n] = 0;
    char *fields[7] = {0};
    char *save = NULL;
    int k = 0;
    for (char *tok = strtok_r(cfg, ";", &save); tok && k < 7; tok = strtok_r(NULL, ";", &save))
        fields[k++] = tok;
    if (k < 7) {
        record(false, "malformed check configuration");
        return;
    }
    const char *rule = fields[0];
    double tol = strtod(fields[1], NULL);
    cxla_type type = cxla_type_from_name(fields[2], (size_t)-1);
    int64_t dims[CXLA_MAX_RANK], rank = 0;
    if (strcmp(fields[3], "-") != 0) {
        char *q = fields[3];
        while (*q && rank < CXLA_MAX_RANK) {
            dims[rank++] = strtoll(q, &q, 10);
            if (*q == ',') q++;
        }
    }
    cxla_shape sh = {.type = type, .rank = rank, .dims = dims};
    cxla_literal *a = NULL, *e = NULL;
    cxla_status st = cxla_literal_create(&sh, &a);
    if (!st) st = cxla_literal_create(&sh, &e);
    if (st) {
        record(false, cxla_status_message(st));
        cxla_status_free(st);
        cxla_literal_free(a);
        return;
    }
    size_t bytes = (size_t)cxla_literal_element_count(a) * cxla_type_storage(type);
    if (bytes) {
        memcpy(cxla_literal_data(a), in[0], bytes);
        memcpy(cxla_literal_data(e), in[1], bytes);
    }
    cxla_tolerance t = {0};
    const cxla_tolerance *tp = NULL;
    bool is_float = cxla_type_is_float(type) || cxla_type_is_complex(type);
    if (strcmp(rule, "close") == 0 && is_float) {
        t.ulps = 3;
        tp = &t;
    } else if (strcmp(rule, "almost") == 0 && is_float) {
        t.atol = tol;
        tp = &t;
    }
    st = cxla_literal_compare(a, e, tp);
    if (st) {
        char msg[1024];
        snprintf(msg, sizeof msg, "@%s line %s: %s: %s", fields[4], fields[5], fields[6],
                 cxla_status_message(st));
        record(false, msg);
        cxla_status_free(st);
    } else {
        record(true, NULL);
    }
    cxla_literal_free(a);
    cxla_literal_free(e);
}

void cv_register_check_target(void) {
    static bool done;
    if (done) return;
    cxla_status st = cxla_custom_call_register(CV_CHECK_TARGET, (cxla_custom_call_fn)check_target,
                                               CXLA_CUSTOM_CALL_API_STATUS_RETURNING_UNIFIED);
    cxla_status_free(st);
    done = true;
}

static cxla_instr *const_operand(cv *c, cv_scope *s, const mlir_op *op) {
    const mlir_attr *v = mlir_op_attr(op, "value");
    for (int64_t i = 0; !v && i < op->word_count; i++)
        if (op->words[i]->kind == MA_DENSE) v = op->words[i];
    if (!v || v->kind != MA_DENSE) return cv_fail(c, op, "expected a dense value"), NULL;
    cxla_literal *lit = NULL;
    cxla_status st = cv_dense_literal(c->mm, v, &v->type, &lit);
    if (!st) st = cxla_module_adopt_literal(c->m, lit);
    if (st) return cv_status(c, op, st), NULL;
    cxla_instr *in = cv_emit(c, s, op, CXLA_OP_CONSTANT, &v->type, 0, NULL);
    if (in) in->literal = lit;
    return in;
}

bool cv_check(cv *c, cv_scope *s, const mlir_op *op, bool *handled) {
    *handled = true;
    const char *name = op->callee && strncmp(op->callee, "check.", 6) == 0 ? op->callee : op->name;
    const char *kind = name + 6;
    const char *rule;
    double tol = 0;
    bool is_const = false, custom = op->callee && strcmp(op->name, "stablehlo.custom_call") == 0;
    if (strcmp(kind, "expect_serialized_eq") == 0) {
        c->skip_reason = "expect_serialized_eq compares values that interpreter.probe wrote to "
                         "files (the reference interpreter's instrumentation)";
        return true;
    }
    if (strcmp(kind, "expect_eq") == 0) {
        rule = "exact";
    } else if (strcmp(kind, "expect_eq_const") == 0) {
        rule = "exact";
        is_const = true;
    } else if (strcmp(kind, "expect_close") == 0) {
        rule = "close";
    } else if (strcmp(kind, "expect_almost_eq") == 0) {
        rule = "almost";
        tol = custom ? 1e-3 : 1e-4;
    } else if (strcmp(kind, "expect_almost_eq_const") == 0) {
        rule = "almost";
        tol = 1e-4;
        is_const = true;
    } else {
        *handled = false;
        return cv_fail(c, op, "unknown check '%s'", name);
    }
    const mlir_attr *ta = mlir_op_attr(op, "tolerance");
    if (ta && (ta->kind == MA_FLOAT || ta->kind == MA_INT)) tol = ta->f;
    cxla_instr *ops[2] = {NULL, NULL};
    if (op->operand_count < 1) return cv_fail(c, op, "a check needs an operand");
    ops[0] = cv_lookup(c, s, op, op->operands[0]);
    if (!ops[0]) return false;
    if (is_const) {
        ops[1] = const_operand(c, s, op);
    } else {
        if (op->operand_count != 2) return cv_fail(c, op, "expected 2 operands");
        ops[1] = cv_lookup(c, s, op, op->operands[1]);
    }
    if (!ops[1]) return false;
    const cxla_shape *a = &ops[0]->shape, *e = &ops[1]->shape;
    if (!cxla_type_is_array(a->type) || !cxla_shape_same_dims(a, e) || a->type != e->type)
        return cv_fail(c, op, "the checked value and the expected value differ in shape");
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_strbuf_printf(&b, "\"%s;%.17g;%s;", rule, tol, cxla_type_name(a->type));
    if (a->rank == 0) cxla_strbuf_putc(&b, '-');
    for (int64_t i = 0; i < a->rank; i++)
        cxla_strbuf_printf(&b, "%s%" PRId64, i ? "," : "", a->dims[i]);
    cxla_strbuf_printf(&b, ";%s;%" PRId64 ";%s\"", c->current_func ? c->current_func->name : "?",
                       op->line, name);
    cxla_shape empty = {.type = CXLA_TUPLE};
    cxla_instr *in = cv_emit(c, s, op, CXLA_OP_CUSTOM_CALL, &empty, 2, ops);
    char target[64];
    snprintf(target, sizeof target, "\"%s\"", CV_CHECK_TARGET);
    bool ok =
        cv_attr_text(c, op, in, CXLA_ATTR_CUSTOM_CALL_TARGET, target) &&
        cv_attr_text(c, op, in, CXLA_ATTR_CUSTOM_CALL_HAS_SIDE_EFFECT, "true") &&
        cv_attr_text(c, op, in, CXLA_ATTR_API_VERSION, "API_VERSION_STATUS_RETURNING_UNIFIED") &&
        cv_attr_text(c, op, in, CXLA_ATTR_BACKEND_CONFIG, b.data);
    cxla_strbuf_free(&b);
    if (ok) c->check_count++;
    return ok;
}
