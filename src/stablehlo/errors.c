/* Verifier errors on a converted StableHLO module, in the user's terms. The verifier
 * speaks of the converted module ("2:8: computation 'main.1', instruction 'add.4': add:
 * ... f32[2] ..."); the user wrote functions, ops and %values. The converter notes where
 * each instruction and computation came from (cv_note_instr, cv_note_comp); here the
 * failing one is mapped back: "FILE:2:8: in function 'main', operation 'stablehlo.add'
 * (%c): ... tensor<2xf32> ...". */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "stablehlo/convert_internal.h"

void cv_note_instr(cv *c, const cxla_instr *in, const mlir_op *op) {
    if (!in || !in->name || !c->mm) return;
    cv_origin *o = cxla_arena_alloc(c->mm->arena, sizeof *o);
    if (!o) return;
    o->instr = in;
    o->op = op ? op : c->current_op;
    o->func = c->current_func;
    o->made_for = !op;
    cxla_strmap_put(&c->instr_origins, in->name, strlen(in->name), o);
}

void cv_note_comp(cv *c, const char *name, const mlir_op *op) {
    if (!name || !c->mm) return;
    cv_origin *o = cxla_arena_alloc(c->mm->arena, sizeof *o);
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->op = op;
    o->func = c->current_func;
    cxla_strmap_put(&c->comp_origins, name, strlen(name), o);
}

/* The value an op defines, as written: "%c", or "%r" for "%r#0" (results of %r:2). */
static void put_value(cxla_strbuf *b, const mlir_op *op) {
    if (!op || op->result_count == 0) return;
    const char *r = op->results[0];
    const char *hash = strchr(r, '#');
    cxla_strbuf_append(b, r, hash ? (size_t)(hash - r) : strlen(r));
}

static bool is_word(char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_';
}

/* The StableHLO element type of an HLO type name, or NULL when it is not one. */
static bool put_element_type(cxla_strbuf *b, const char *t, size_t n) {
    char w[24];
    if (n == 0 || n >= sizeof w) return false;
    memcpy(w, t, n);
    w[n] = 0;
    static const char *const same[] = {"f16", "bf16", "f32", "f64"};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++)
        if (strcmp(w, same[i]) == 0) return cxla_strbuf_puts(b, w), true;
    if (strcmp(w, "pred") == 0) return cxla_strbuf_puts(b, "i1"), true;
    if (strcmp(w, "c64") == 0) return cxla_strbuf_puts(b, "complex<f32>"), true;
    if (strcmp(w, "c128") == 0) return cxla_strbuf_puts(b, "complex<f64>"), true;
    static const char *const ints[] = {"2", "4", "8", "16", "32", "64"};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        if ((w[0] == 's' || w[0] == 'u') && strcmp(w + 1, ints[i]) == 0) {
            cxla_strbuf_printf(b, "%si%s", w[0] == 'u' ? "u" : "", ints[i]);
            return true;
        }
    }
    /* f8e4m3fn -> f8E4M3FN, f4e2m1fn -> f4E2M1FN: the letters after the width upper. */
    if (w[0] == 'f' && (w[1] == '8' || w[1] == '4' || w[1] == '6') && w[2] == 'e') {
        cxla_strbuf_append(b, w, 2);
        for (size_t i = 2; i < n; i++)
            cxla_strbuf_putc(b, (w[i] >= 'a' && w[i] <= 'z') ? (char)(w[i] - 'a' + 'A') : w[i]);
        return true;
    }
    return false;
}

/* Appends |s| with every static HLO array shape ("f32[2,3]{1,0}") written as a StableHLO
 * type ("tensor<2x3xf32>"); anything else (dynamic sizes, tuples' parentheses) as is. */
static void put_types(cxla_strbuf *b, const char *s) {
    size_t i = 0, n = strlen(s);
    while (i < n) {
        size_t start = i;
        if (!(start == 0 || !is_word(s[start - 1])) || !is_word(s[i])) {
            cxla_strbuf_putc(b, s[i++]);
            continue;
        }
        while (i < n && is_word(s[i])) i++;
        size_t tlen = i - start, d = i;
        bool shape = i < n && s[i] == '[';
        if (shape) {
            d = i + 1;
            while (d < n && ((s[d] >= '0' && s[d] <= '9') || s[d] == ',')) d++;
            shape = d < n && s[d] == ']';
        }
        cxla_strbuf tmp;
        cxla_strbuf_init(&tmp);
        if (shape && put_element_type(&tmp, s + start, tlen) && tmp.data) {
            cxla_strbuf_puts(b, "tensor<");
            for (size_t k = i + 1; k < d; k++) cxla_strbuf_putc(b, s[k] == ',' ? 'x' : s[k]);
            if (d > i + 1) cxla_strbuf_putc(b, 'x');
            cxla_strbuf_puts(b, tmp.data);
            cxla_strbuf_putc(b, '>');
            i = d + 1;
            if (i < n && s[i] == '{') { /* the layout: StableHLO types have none */
                size_t e = i;
                while (e < n && s[e] != '}') e++;
                if (e < n) i = e + 1;
            }
        } else {
            cxla_strbuf_append(b, s + start, i - start);
        }
        cxla_strbuf_free(&tmp);
    }
}

/* Appends |s| with the converter's names in quotes ('add.4', 'main.1') replaced by the
 * user's (%c, @main), and shapes as StableHLO types. */
static void put_user_terms(cv *c, cxla_strbuf *b, const char *s) {
    cxla_strbuf out;
    cxla_strbuf_init(&out);
    const char *p = s;
    for (;;) {
        const char *q = strchr(p, '\'');
        const char *e = q ? strchr(q + 1, '\'') : NULL;
        if (!q || !e) {
            cxla_strbuf_puts(&out, p);
            break;
        }
        cxla_strbuf_append(&out, p, (size_t)(q - p) + 1);
        size_t len = (size_t)(e - q - 1);
        const cv_origin *oi = cxla_strmap_get(&c->instr_origins, q + 1, len);
        const cv_origin *oc = cxla_strmap_get(&c->comp_origins, q + 1, len);
        if (oi && oi->op && oi->op->result_count && !oi->made_for)
            put_value(&out, oi->op);
        else if (oc && !oc->op && oc->func)
            cxla_strbuf_printf(&out, "@%s", oc->func->name);
        else
            cxla_strbuf_append(&out, q + 1, len);
        cxla_strbuf_putc(&out, '\'');
        p = e + 1;
    }
    put_types(b, out.data ? out.data : s);
    cxla_strbuf_free(&out);
}

void cv_describe_op(const cv *c, cxla_strbuf *b, const mlir_op *op, const mlir_func *func) {
    if (!func) func = c->current_func;
    /* func.func stands for the function itself (defined twice, no return). */
    if (strcmp(op->name, "func.func") == 0 || !func) {
        cxla_strbuf_puts(b, op->name);
        return;
    }
    cxla_strbuf_printf(b, "in function '%s', operation '%s'", func->name, op->name);
    if (op->result_count) {
        cxla_strbuf_puts(b, " (");
        put_value(b, op);
        cxla_strbuf_putc(b, ')');
    }
}

bool cv_fail_types(cv *c, const mlir_op *op, const mlir_func *func, const char *format, ...) {
    if (c->err) return false;
    cxla_strbuf m, b;
    cxla_strbuf_init(&m);
    cxla_strbuf_init(&b);
    va_list ap;
    va_start(ap, format);
    cxla_strbuf_vprintf(&m, format, ap);
    va_end(ap);
    cv_describe_op(c, &b, op, func);
    cxla_strbuf_puts(&b, ": ");
    put_types(&b, m.data ? m.data : "");
    c->err = b.failed || !b.data ? cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")
                                 : mlir_error_at(c->mm, op->pos, "%s", b.data);
    cxla_strbuf_free(&m);
    cxla_strbuf_free(&b);
    return false;
}

/* Reads "'NAME'" at *p into name/len and moves past it. */
static bool quoted(const char **p, const char **name, size_t *len) {
    if (**p != '\'') return false;
    const char *e = strchr(*p + 1, '\'');
    if (!e) return false;
    *name = *p + 1;
    *len = (size_t)(e - *p - 1);
    *p = e + 1;
    return true;
}

cxla_status cv_verifier_error(cv *c, cxla_status v) {
    const char *file = c->mm->filename ? c->mm->filename : "<text>";
    /* The verifier's form: ["L:C: "] "computation 'C'" [", instruction 'I'"] ": " rest. */
    const char *msg = cxla_status_message(v), *p = msg;
    while (*p >= '0' && *p <= '9') p++;
    if (p > msg && *p == ':') {
        const char *q = ++p;
        while (*p >= '0' && *p <= '9') p++;
        p = p > q && p[0] == ':' && p[1] == ' ' ? p + 2 : msg;
    } else {
        p = msg;
    }
    const char *comp = NULL, *instr = NULL;
    size_t comp_len = 0, instr_len = 0;
    const cv_origin *oi = NULL, *oc = NULL;
    static const char kComp[] = "computation ", kInstr[] = ", instruction ";
    if (strncmp(p, kComp, sizeof kComp - 1) == 0) {
        p += sizeof kComp - 1;
        if (quoted(&p, &comp, &comp_len)) oc = cxla_strmap_get(&c->comp_origins, comp, comp_len);
        if (comp && strncmp(p, kInstr, sizeof kInstr - 1) == 0) {
            p += sizeof kInstr - 1;
            if (quoted(&p, &instr, &instr_len))
                oi = cxla_strmap_get(&c->instr_origins, instr, instr_len);
        }
    }
    if (!comp || strncmp(p, ": ", 2) != 0 || (!oi && !oc))
        return cxla_status_annotate(v, "%s: the converted module does not verify", file);
    p += 2;
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    const mlir_func *func = oi ? oi->func : oc->func;
    const mlir_op *op = oi ? oi->op : oc->op;
    size_t pos = op ? op->pos : func ? func->pos : 0;
    if (op && oi) {
        cv_describe_op(c, &b, op, func);
    } else {
        cxla_strbuf_printf(&b, "in function '%s'", func ? func->name : "?");
        if (op) {
            cxla_strbuf_printf(&b, ", a region of operation '%s'", op->name);
            if (op->result_count) {
                cxla_strbuf_puts(&b, " (");
                put_value(&b, op);
                cxla_strbuf_putc(&b, ')');
            }
        }
    }
    /* An op inside a region (a reducer, a while body) says whose region it is. */
    if (oi && oc && oc->op && oc->op != op) {
        cxla_strbuf_printf(&b, ", in a region of '%s'", oc->op->name);
        if (oc->op->result_count) {
            cxla_strbuf_puts(&b, " (");
            put_value(&b, oc->op);
            cxla_strbuf_putc(&b, ')');
        }
    }
    if (oi) {
        /* The verifier's message starts with the HLO opcode; an instruction the converter
         * added (a broadcast of a scalar, a get-tuple-element) says which it is. */
        const char *opcode = cxla_opcode_name(oi->instr->opcode);
        size_t olen = strlen(opcode);
        if (strncmp(p, opcode, olen) == 0 && strncmp(p + olen, ": ", 2) == 0) p += olen + 2;
        const char *sh = op && strncmp(op->name, "stablehlo.", 10) == 0 ? op->name + 10 : NULL;
        bool same = sh && strlen(sh) == olen;
        for (size_t k = 0; same && k < olen; k++)
            same = sh[k] == opcode[k] || (sh[k] == '_' && opcode[k] == '-');
        if (!op)
            cxla_strbuf_printf(&b, ", its HLO %s", opcode);
        else if (oi->made_for || !same)
            cxla_strbuf_printf(&b, ", in the HLO %s made for it", opcode);
    }
    cxla_strbuf_puts(&b, ": ");
    put_user_terms(c, &b, p);
    cxla_status r = b.failed || !b.data
                        ? cxla_status_annotate(v, "%s: the converted module does not verify", file)
                        : mlir_error_at(c->mm, pos, "%s", b.data);
    if (r != v) cxla_status_free(v);
    cxla_strbuf_free(&b);
    return r;
}
