/* Ahead-of-time output (src/cpu/aot.h): the tests/hlo/cases modules that compile ahead of
 * time are written out, compiled with `-std=c11 -Wall -Wextra -Wpedantic -Werror` by gcc and
 * clang (and tcc when installed) together with a generated driver, linked without libcxla,
 * run, and their results compared bit for bit with the interpreter's; so are TopK, a few
 * case files as i386 code and the StableHLO conformance suite. The errors for what has no
 * ahead-of-time form, the generated library's API (options, host I/O, markers, symbols,
 * library operations) and the header from C++ are tests/cpu/test_aot_api.c, which, as the
 * other test_aot_*.c, includes this file for its machinery. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpu/aot.h"
#include "cpu/cpu_math.h"
#include "cpu/emit.h"
#include "cxla/stablehlo.h"
#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"
#include "literal/literal_internal.h"

/* ---- leaves of literals ---------------------------------------------------------------------- */

typedef struct leaves {
    cxla_literal **items; /* owned, row-major */
    int64_t count, cap;
} leaves;

/* The leaves of |lit| in the layouts of |shape| (the entry's declared layout: the generated
 * code's interface), or row-major when |shape| is NULL. */
static cxla_status flatten(const cxla_literal *lit, const cxla_shape *shape, leaves *out) {
    if (cxla_literal_shape(lit)->type == CXLA_TUPLE) {
        for (int64_t e = 0; e < lit->tuple_count; e++)
            CXLA_RETURN_IF_ERROR(flatten(
                lit->elements[e],
                shape && shape->type == CXLA_TUPLE && e < shape->tuple_count ? &shape->elements[e]
                                                                             : NULL,
                out));
        return NULL;
    }
    if (out->count == out->cap) {
        out->cap = out->cap ? 2 * out->cap : 8;
        out->items = realloc(out->items, (size_t)out->cap * sizeof(*out->items));
    }
    if (shape && cxla_type_is_array(shape->type) && !cxla_layout_is_default(shape))
        return interp_relayout(lit, shape, &out->items[out->count++]);
    return interp_default_layout(lit, &out->items[out->count++]);
}

static void leaves_free(leaves *l) {
    for (int64_t i = 0; i < l->count; i++) cxla_literal_free(l->items[i]);
    free(l->items);
    memset(l, 0, sizeof(*l));
}

/* ---- tools ------------------------------------------------------------------------------------
 */

static bool have(const char *tool) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
    return system(cmd) == 0;
}

static char tmpdir[256];

static void make_tmpdir(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/cxla_test_aot_XXXXXX");
    if (!mkdtemp(tmpdir)) test_skip_all("cannot make a temporary directory");
}

static void remove_tmpdir(void) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
}

/* ---- batches: modules compiled into one program per compiler ------------------------------ */

typedef struct one_case {
    char name[32];
    bool fast_math;    /* the module computes f32 functions the backend approximates */
    char where[600];   /* for messages: file:line or the model */
    leaves args, want; /* want: the interpreter's result leaves */
    /* Dynamic shapes: the result leaves with dynamic dimensions (want's are then at their
     * bounds, with zeros in the padding, and their sizes), called through NAME_run_dynamic. */
    bool *want_dynamic;
} one_case;

typedef struct batch {
    int index;
    one_case *cases;
    int64_t count;
    cxla_strbuf includes, body, sources;
    /* Cases whose code calls <complex.h> (the complex transcendental functions: an #error
     * for compilers without it, tcc) go to |complex_twin|, built by the compilers that
     * have it; with |drop_complex| they are left out (another libm than the
     * interpreter's, as the 32-bit one, may differ in the last bit). */
    struct batch *complex_twin;
    bool drop_complex;
    bool has_complex; /* holds such cases: built only by compilers with <complex.h> */
} batch;

/* Whether |cc| has C99's <complex.h> (tcc does not). */
static bool cc_has_complex(const char *cc) {
    return strstr(cc, "tcc") == NULL;
}

static int case_serial; /* case names unique across batches */

static int total_compiled, total_skipped, total_cases, total_data_files;

/* The generated library reads and writes arrays in the byte order of the machine it runs
 * on. For a target of the other order (test_aot_be: s390x under qemu-s390x) the argument
 * files are written byte-swapped and the results swapped back before they are compared;
 * |run_prefix| runs the target's programs. */
static bool swap_order;
static const char *run_prefix = "";
/* Constants bigger than this many bytes go to NAME_data.c: 64 exercises it. */
static size_t data_threshold = 64;

/* Reverses the bytes of each scalar of |shape|'s array at |data| (|bytes| long): each
 * element of its storage width, each part of a complex element. Sub-byte integers and
 * pred are one byte each. */
static void swap_elements(const cxla_shape *shape, unsigned char *data, size_t bytes) {
    size_t unit = cxla_type_storage(shape->type);
    if (cxla_type_is_complex(shape->type)) unit /= 2;
    if (unit < 2) return;
    for (size_t at = 0; at + unit <= bytes; at += unit)
        for (size_t i = 0; i < unit / 2; i++) {
            unsigned char t = data[at + i];
            data[at + i] = data[at + unit - 1 - i];
            data[at + unit - 1 - i] = t;
        }
}

/* Bit for bit, except that any NaN matches any NaN (cxla_literal_compare, as the cpu
 * backend's case test). */
static bool same_bits(const cxla_literal *w, const unsigned char *got, size_t bytes,
                      bool fast_math) {
    if (bytes != w->size) return false;
    if (bytes == 0 || memcmp(got, w->data, bytes) == 0) return true;
    cxla_literal *g = NULL;
    cxla_status s = interp_new_array(cxla_literal_shape(w), &g);
    if (!s) {
        memcpy(g->data, got, bytes);
        /* Approximated functions: test_cpu_cases's tolerance (docs/semantics.md bounds). */
        cxla_tolerance tol = {.atol = 1e-6, .rtol = 1e-5, .ulps = 2};
        s = cxla_literal_compare(g, w, fast_math ? &tol : NULL);
    }
    bool same = s == NULL;
    cxla_status_free(s);
    cxla_literal_free(g);
    return same;
}

/* ---- dynamic shapes: arguments and results at their bounds, with their sizes -------------- */

static bool shape_is_dynamic(const cxla_shape *s) {
    return cxla_type_is_array(s->type) && !cxla_shape_is_static(s);
}

static int64_t shape_leaf_count(const cxla_shape *s) {
    if (s->type != CXLA_TUPLE) return 1;
    int64_t n = 0;
    for (int64_t e = 0; e < s->tuple_count; e++) n += shape_leaf_count(&s->elements[e]);
    return n;
}

static void shape_leaves(const cxla_shape *s, const cxla_shape **out, int64_t *n) {
    if (s->type != CXLA_TUPLE) {
        out[(*n)++] = s;
        return;
    }
    for (int64_t e = 0; e < s->tuple_count; e++) shape_leaves(&s->elements[e], out, n);
}

/* The entry's leaf shapes (arguments, then the result) in the layouts of the generated
 * code's interface: the module's entry_computation_layout when it has one, else the
 * entry's own shapes, whose layouts the interface ignores (row-major: *out_laid false);
 * and whether some leaf has a dynamic dimension; false when there are more than |cap|. */
static bool entry_dynamic(const cxla_module *m, const cxla_shape **as, int64_t *na,
                          const cxla_shape **rs, int64_t *nr, int64_t cap, bool *out_laid) {
    bool dyn = false, laid = m->has_entry_layout && m->entry_param_shapes &&
                             m->entry_param_count == m->entry->param_count;
    *out_laid = laid;
    *na = *nr = 0;
    for (int64_t p = 0; p < m->entry->param_count; p++) {
        const cxla_shape *ps = laid ? &m->entry_param_shapes[p] : &m->entry->params[p]->shape;
        if (*na + shape_leaf_count(ps) > cap) return false;
        shape_leaves(ps, as, na);
    }
    const cxla_shape *ys = laid ? &m->entry_result_shape : &m->entry->root->shape;
    if (shape_leaf_count(ys) > cap) return false;
    shape_leaves(ys, rs, nr);
    for (int64_t i = 0; i < *na; i++) dyn = dyn || shape_is_dynamic(as[i]);
    for (int64_t i = 0; i < *nr; i++) dyn = dyn || shape_is_dynamic(rs[i]);
    return dyn;
}

/* Leaf |*l| (row-major) at the bounds of dynamic |shape|, zeros in the padding (what the
 * generated code gives back; its sizes stay with it). */
static cxla_status to_bounds(const cxla_shape *shape, cxla_literal **l) {
    cxla_literal *b = NULL;
    cxla_shape row = *shape; /* row-major here; bounds_to_layout puts it in its layout */
    row.layout = NULL;
    CXLA_RETURN_IF_ERROR(cxla_literal_to_bounded(*l, &row, &b));
    cxla_literal_free(*l);
    *l = b;
    return NULL;
}

/* Leaf |x| of dynamic |shape| (row-major, at its bounds) into |shape|'s layout when that is
 * not row-major: the whole array at its bounds permuted, as the generated code takes and
 * gives such a leaf (its sizes travel beside it). */
static cxla_status bounds_to_layout(const cxla_shape *shape, cxla_literal *x) {
    if (!cxla_type_is_array(shape->type) || cxla_layout_is_default(shape) || !x->size) return NULL;
    int64_t rank = shape->rank, m2m[CXLA_MAX_RANK], st[CXLA_MAX_RANK], idx[CXLA_MAX_RANK] = {0};
    int64_t count = 1, stride = 1;
    cxla_shape_minor_to_major(shape, m2m);
    for (int64_t i = 0; i < rank; i++) {
        st[m2m[i]] = stride;
        stride *= shape->dims[m2m[i]];
    }
    for (int64_t d = 0; d < rank; d++) count *= shape->dims[d];
    size_t elem = count ? x->size / (size_t)count : 0;
    unsigned char *tmp = malloc(x->size);
    if (!tmp) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    memcpy(tmp, x->data, x->size);
    for (int64_t e = 0; e < count; e++) {
        int64_t off = 0;
        for (int64_t d = 0; d < rank; d++) off += idx[d] * st[d];
        memcpy((unsigned char *)x->data + (size_t)off * elem, tmp + (size_t)e * elem, elem);
        for (int64_t d = rank - 1; d >= 0 && ++idx[d] == shape->dims[d]; d--) idx[d] = 0;
    }
    free(tmp);
    return NULL;
}

/* A leaf that flatten put into an entry layout back in row-major order. */
static cxla_status to_row_major(cxla_literal **l) {
    cxla_literal *r = NULL;
    CXLA_RETURN_IF_ERROR(interp_default_layout(*l, &r));
    cxla_literal_free(*l);
    *l = r;
    return NULL;
}

/* A dynamic result: its sizes (read from |f| after its bytes) and its values below them as
 * |w|'s, and (in exact math) its padding zero, the bytes of |w| at its bounds. */
static bool same_dynamic(const cxla_literal *w, const unsigned char *got, size_t bytes, FILE *f,
                         bool fast_math) {
    const cxla_shape *ws = cxla_literal_shape(w);
    int64_t z[CXLA_MAX_RANK];
    if (ws->rank && fread(z, sizeof(int64_t), (size_t)ws->rank, f) != (size_t)ws->rank)
        return false;
    for (int64_t d = 0; swap_order && d < ws->rank; d++) { /* written in the target's order */
        uint64_t u = (uint64_t)z[d], v = 0;
        for (int i = 0; i < 8; i++) v |= ((u >> (8 * i)) & 0xff) << (8 * (7 - i));
        z[d] = (int64_t)v;
    }
    bool same = bytes == w->size;
    for (int64_t d = 0; d < ws->rank; d++) same = same && z[d] == cxla_literal_dynamic_size(w, d);
    if (!same) return false;
    if (!fast_math) return bytes == 0 || memcmp(got, w->data, bytes) == 0;
    cxla_literal *g = NULL;
    cxla_status s = interp_new_array(ws, &g);
    if (!s && bytes) memcpy(g->data, got, bytes);
    for (int64_t d = 0; !s && d < ws->rank; d++)
        if (ws->dynamic && ws->dynamic[d]) s = cxla_literal_set_dynamic_size(g, d, z[d]);
    cxla_tolerance tol = {.atol = 1e-6, .rtol = 1e-5, .ulps = 2};
    if (!s) s = cxla_literal_compare(g, w, &tol);
    same = s == NULL;
    cxla_status_free(s);
    cxla_literal_free(g);
    return same;
}

/* Adds module |m| run on |args| to |b|: the interpreter's result, the generated files,
 * the argument files and the driver's code. Modules without an ahead-of-time form, and
 * modules the interpreter refuses (test_hlo_cases reports those), are skipped. */
static bool aot_no_passes; /* batch_add compiles without the pass pipeline */
/* `test_aot count`: batch_add only generates the C (no C compiler runs) and prints each
 * refusal, for docs/aot.md's count of the cases that compile ahead of time. */
static bool count_only;
static int total_interp_refused;

static cxla_status batch_add(batch *b, const cxla_module *m, cxla_literal *const *args,
                             int64_t nargs, const char *where) {
    one_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "f%dc%d", b->index, case_serial++);
    snprintf(c.where, sizeof c.where, "%.500s", where);
    for (int64_t ci = 0; ci < m->comp_count && cpu_emit_fast_math(); ci++)
        for (int64_t i = 0; i < m->comps[ci]->instr_count; i++) {
            const cxla_instr *x = m->comps[ci]->instrs[i];
            if (cxla_type_is_float(x->shape.type) && x->shape.type != CXLA_F64 &&
                cpu_math_f32_bound_ulp(x->opcode) >= 0)
                c.fast_math = true;
        }
    total_cases++;
    cxla_literal *oracle = NULL;
    cxla_status s = interp_run_module(m, NULL, (const cxla_literal *const *)args, nargs, &oracle);
    if (s) {
        if (getenv("CXLA_TEST_VERBOSE") || count_only)
            fprintf(stderr, "%s: the interpreter refuses it: %s\n", where, cxla_status_message(s));
        total_interp_refused++;
        cxla_status_free(s);
        return NULL;
    }
    cxla_strbuf h, src, dat;
    cxla_strbuf_init(&h);
    cxla_strbuf_init(&src);
    cxla_strbuf_init(&dat);
    cpu_aot_options o = {.data_threshold = data_threshold, .no_passes = aot_no_passes};
    s = cpu_aot_generate(m, &o, c.name, &h, &src, &dat);
    bool skip = false;
    if (s && cxla_status_code_of(s) == CXLA_STATUS_UNIMPLEMENTED) {
        if (getenv("CXLA_TEST_VERBOSE") || count_only)
            fprintf(count_only ? stdout : stderr, "%s: not ahead of time: %s\n", where,
                    cxla_status_message(s));
        /* `test_aot count` (cpu/test_aot_count): a refusal other than the limits that stay
         * (docs/aot.md, "What compiles ahead of time") fails. */
        static const char *const limits[] = {
            "has unbounded dynamic dimensions", /* no bound to lay the array out at */
            "devices need the runtime",         /* collectives across devices */
            "the constant's value is elided",   /* the values are not in the module */
        };
        bool known = false;
        for (size_t k = 0; k < sizeof limits / sizeof limits[0]; k++)
            known = known || strstr(cxla_status_message(s), limits[k]) != NULL;
        CHECK_MSG(known || !count_only, "%s: refused for a reason that is no known limit: %s",
                  where, cxla_status_message(s));
        total_skipped++;
        cxla_status_free(s);
        s = NULL;
        skip = true;
    }
    if (count_only) { /* nothing is compiled: the generation alone counts */
        if (!skip && !s) total_compiled++;
        cxla_strbuf_free(&h);
        cxla_strbuf_free(&src);
        cxla_strbuf_free(&dat);
        cxla_literal_free(oracle);
        return s;
    }
    if (!skip && !s && src.data && strstr(src.data, "#ifndef CXLA_HAVE_COMPLEX")) {
        if (b->drop_complex) skip = true;
        if (b->complex_twin) b = b->complex_twin;
        b->has_complex = true;
    }
    for (int64_t i = 0; !skip && !s && i < nargs; i++)
        s = flatten(args[i],
                    m->has_entry_layout && m->entry_param_shapes && i < m->entry_param_count
                        ? &m->entry_param_shapes[i]
                        : NULL,
                    &c.args);
    if (!skip && !s)
        s = flatten(oracle, m->has_entry_layout ? &m->entry_result_shape : NULL, &c.want);
    /* Dynamic shapes: every leaf at its bounds; arguments below them get garbage in their
     * padding (which must not reach the results), results are compared with their sizes
     * and zeros in the padding. */
    const cxla_shape *das[64], *drs[64];
    int64_t dna = 0, dnr = 0;
    bool laid = false; /* the leaves in their layouts (else row-major) */
    bool dynamic = !skip && !s && entry_dynamic(m, das, &dna, drs, &dnr, 64, &laid);
    /* A result declared static over a dynamic value (the root a tuple or get-tuple-element
     * of it): the interpreter returns the value in its dynamic form, and the generated code
     * marks that leaf dynamic in NAME_result_dynamic, so it takes the value's marks. */
    cxla_shape valued[64];
    uint8_t vflags[64][CXLA_MAX_RANK];
    leaves marks; /* the oracle's leaves row-major, their dynamic marks kept (a relayout
                   * into the declared static layout drops them) */
    memset(&marks, 0, sizeof marks);
    if (!skip && !s) s = flatten(oracle, NULL, &marks);
    for (int64_t k = 0; !skip && !s && k < dnr && k < c.want.count && k < marks.count; k++) {
        const cxla_shape *w = cxla_literal_shape(marks.items[k]);
        if (!w->dynamic || !cxla_type_is_array(drs[k]->type) || w->rank != drs[k]->rank ||
            w->rank > CXLA_MAX_RANK)
            continue;
        bool more = false;
        for (int64_t d = 0; d < w->rank; d++) {
            bool declared = drs[k]->dynamic && drs[k]->dynamic[d];
            vflags[k][d] = (uint8_t)(declared || w->dynamic[d]);
            more = more || (w->dynamic[d] && !declared);
        }
        if (!more) continue;
        valued[k] = *drs[k];
        valued[k].dynamic = vflags[k];
        drs[k] = &valued[k];
        dynamic = true;
        cxla_literal_free(c.want.items[k]); /* row-major: put in its layout below */
        c.want.items[k] = marks.items[k];
        marks.items[k] = NULL;
    }
    leaves_free(&marks);
    dynamic = dynamic && dna == c.args.count && dnr == c.want.count;
    cxla_strbuf zdecl;
    cxla_strbuf_init(&zdecl);
    for (int64_t i = 0; dynamic && !s && i < dna; i++) {
        if (!shape_is_dynamic(das[i])) continue;
        if (laid && !cxla_layout_is_default(das[i])) s = to_row_major(&c.args.items[i]);
        if (!s) s = to_bounds(das[i], &c.args.items[i]);
        cxla_literal *x = c.args.items[i];
        cxla_strbuf_printf(&zdecl, "        static const int64_t za%" PRId64 "[] = {", i);
        int64_t count = 1, idx[CXLA_MAX_RANK] = {0};
        for (int64_t d = 0; !s && d < das[i]->rank; d++) {
            cxla_strbuf_printf(&zdecl, "%s%" PRId64, d ? ", " : "",
                               cxla_literal_dynamic_size(x, d));
            count *= das[i]->dims[d];
        }
        cxla_strbuf_puts(&zdecl, das[i]->rank ? "};\n" : "0};\n");
        size_t elem = count ? x->size / (size_t)count : 0;
        for (int64_t e = 0; !s && e < count; e++) { /* 0xA5 in the padding */
            bool pad = false;
            for (int64_t d = 0; d < das[i]->rank; d++)
                pad = pad || idx[d] >= cxla_literal_dynamic_size(x, d);
            if (pad) memset((char *)x->data + (size_t)e * elem, 0xA5, elem);
            for (int64_t d = das[i]->rank - 1; d >= 0 && ++idx[d] == das[i]->dims[d]; d--)
                idx[d] = 0;
        }
        if (!s && laid) s = bounds_to_layout(das[i], x);
    }
    if (dynamic) c.want_dynamic = calloc((size_t)(dnr + 1), sizeof(bool));
    for (int64_t k = 0; dynamic && !s && k < dnr; k++) {
        c.want_dynamic[k] = shape_is_dynamic(drs[k]);
        if (c.want_dynamic[k] && laid && !cxla_layout_is_default(drs[k]))
            s = to_row_major(&c.want.items[k]);
        if (!s && c.want_dynamic[k]) s = to_bounds(drs[k], &c.want.items[k]);
        if (!s && c.want_dynamic[k] && laid) s = bounds_to_layout(drs[k], c.want.items[k]);
    }
    char file[512];
    if (!skip && !s) {
        snprintf(file, sizeof file, "%s/%s.h", tmpdir, c.name);
        s = cxla_write_file(file, h.data, h.len);
        snprintf(file, sizeof file, "%s/%s.c", tmpdir, c.name);
        if (!s) s = cxla_write_file(file, src.data, src.len);
        cxla_strbuf_printf(&b->sources, " '%s'", file);
        if (!s && dat.len) {
            snprintf(file, sizeof file, "%s/%s_data.c", tmpdir, c.name);
            s = cxla_write_file(file, dat.data, dat.len);
            cxla_strbuf_printf(&b->sources, " '%s'", file);
            total_data_files++;
        }
    }
    for (int64_t i = 0; !skip && !s && i < c.args.count; i++) {
        snprintf(file, sizeof file, "%s/%s_in%d.bin", tmpdir, c.name, (int)i);
        const cxla_literal *arg = c.args.items[i];
        unsigned char *bytes = malloc(arg->size + 1);
        if (arg->size) memcpy(bytes, arg->data, arg->size);
        if (swap_order) swap_elements(cxla_literal_shape(arg), bytes, arg->size);
        s = cxla_write_file(file, bytes, arg->size);
        free(bytes);
    }
    if (!skip && !s && dynamic) {
        /* NAME_run_dynamic with the arguments' sizes; each dynamic result's sizes after
         * its bytes. */
        const char *N = c.name;
        cxla_strbuf_printf(&b->includes, "#include \"%s.h\"\n", N);
        cxla_strbuf_printf(&b->body, "    {\n%s", zdecl.data ? zdecl.data : "");
        cxla_strbuf_printf(&b->body, "        const int64_t *zin[%s_arg_count + 1] = {", N);
        for (int64_t i = 0; i < dna; i++)
            if (shape_is_dynamic(das[i]))
                cxla_strbuf_printf(&b->body, "%sza%" PRId64, i ? ", " : "", i);
            else
                cxla_strbuf_printf(&b->body, "%s0", i ? ", " : "");
        cxla_strbuf_printf(
            &b->body,
            "%s};\n"
            "        int64_t zs[%s_result_count + 1][8];\n"
            "        int64_t *zout[%s_result_count + 1];\n"
            "        for (int i = 0; i < %s_result_count; i++) zout[i] = zs[i];\n"
            "        const void *args[%s_arg_count + 1] = {0};\n"
            "        void *res[%s_result_count + 1] = {0};\n"
            "        for (int i = 0; i < %s_arg_count; i++) {\n"
            "            char path[600];\n"
            "            snprintf(path, sizeof path, \"%%s/%s_in%%d.bin\", dir, i);\n"
            "            args[i] = load(path, %s_arg_bytes[i]);\n"
            "            if (!args[i]) return 11;\n"
            "        }\n"
            "        for (int i = 0; i < %s_result_count; i++) {\n"
            "            res[i] = malloc(%s_result_bytes[i] + 1);\n"
            "            memset(res[i], 0x5A, %s_result_bytes[i] + 1);\n"
            "        }\n"
            "        void *scratch = aligned_alloc(64, %s_scratch_size() / 64 * 64 + 64);\n"
            "        int rc = %s_run_dynamic(0, args, zin, res, zout, scratch);\n"
            "        fprintf(f, \"%s %%d %%d\\n\", rc, %s_result_count);\n"
            "        for (int i = 0; i < %s_result_count; i++) {\n"
            "            fprintf(f, \"%%zu\\n\", %s_result_bytes[i]);\n"
            "            fwrite(res[i], 1, %s_result_bytes[i], f);\n"
            "            if (%s_result_dynamic[i]) fwrite(zs[i], sizeof(int64_t), "
            "(size_t)%s_result_ranks[i], f);\n"
            "            free(res[i]);\n"
            "        }\n"
            "        for (int i = 0; i < %s_arg_count; i++) free((void *)args[i]);\n"
            "        free(scratch);\n"
            "    }\n",
            dna ? "" : "0", N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N);
    } else if (!skip && !s) {
        const char *N = c.name;
        cxla_strbuf_printf(&b->includes, "#include \"%s.h\"\n", N);
        cxla_strbuf_printf(
            &b->body,
            "    {\n"
            "        const void *args[%s_arg_count + 1] = {0};\n"
            "        void *res[%s_result_count + 1] = {0};\n"
            "        if (%s_arg_count != %" PRId64 ") return 10;\n"
            "        for (int i = 0; i < %s_arg_count; i++) {\n"
            "            char path[600];\n"
            "            snprintf(path, sizeof path, \"%%s/%s_in%%d.bin\", dir, i);\n"
            "            args[i] = load(path, %s_arg_bytes[i]);\n"
            "            if (!args[i]) return 11;\n"
            "        }\n"
            "        for (int i = 0; i < %s_result_count; i++) res[i] = "
            "calloc(1, %s_result_bytes[i] + 1);\n"
            "        void *scratch = aligned_alloc(64, %s_scratch_size() / 64 * 64 + 64);\n"
            "        int rc = %s_run(args, res, scratch);\n"
            "        fprintf(f, \"%s %%d %%d\\n\", rc, %s_result_count);\n"
            "        for (int i = 0; i < %s_result_count; i++) {\n"
            "            fprintf(f, \"%%zu\\n\", %s_result_bytes[i]);\n"
            "            fwrite(res[i], 1, %s_result_bytes[i], f);\n"
            "            free(res[i]);\n"
            "        }\n"
            "        for (int i = 0; i < %s_arg_count; i++) free((void *)args[i]);\n"
            "        free(scratch);\n"
            "    }\n",
            N, N, N, c.args.count, N, N, N, N, N, N, N, N, N, N, N, N, N);
    }
    if (!skip && !s) {
        b->cases = realloc(b->cases, (size_t)(b->count + 1) * sizeof(*b->cases));
        b->cases[b->count++] = c;
        memset(&c, 0, sizeof c);
    }
    leaves_free(&c.args);
    leaves_free(&c.want);
    free(c.want_dynamic);
    cxla_strbuf_free(&zdecl);
    cxla_strbuf_free(&h);
    cxla_strbuf_free(&src);
    cxla_strbuf_free(&dat);
    cxla_literal_free(oracle);
    return s;
}

/* ---- what the generated code links against ---------------------------------------------------
 *
 * docs/aot.md promises that NAME.c keeps no state but constants (so that calls may run at once
 * from several threads), allocates nothing and calls nothing but libm, memcpy and friends, the
 * caller's callbacks (through pointers, no symbols) and, with --blas onednn, oneDNN.
 * check_objects compiles generated sources with gcc into objects and reads their symbols
 * (nm -P): no writable data (nm's D, B, C, G, S, V: .data, .bss, common ...; -fno-pic, since
 * position-independent code puts the header's tables of pointers, `const char *const
 * NAME_arg_types[]`, into .data.rel.ro, which nm shows as data but which is read-only
 * once the loader has relocated it), and every
 * undefined symbol a function of libm (the libm.so.6 gcc links), one of the C library's
 * memory and string functions below or the compiler's complex-arithmetic helpers. */
/* test_aot_symbols (test_aot_api.c): batch_run checks objects, runs nothing. */
static bool symbols_only;
static char **libm_names;
static size_t libm_count;

static bool in_libm(const char *name) {
    if (!libm_names) {
        char cmd[512], line[512];
        snprintf(cmd, sizeof cmd,
                 "nm -D --defined-only \"$(gcc -print-file-name=libm.so.6)\" 2>/dev/null");
        FILE *f = popen(cmd, "r");
        size_t cap = 0;
        while (f && fgets(line, sizeof line, f)) {
            char value[64], type[8], sym[400];
            if (sscanf(line, "%63s %7s %399s", value, type, sym) != 3) continue;
            char *at = strchr(sym, '@');
            if (at) *at = 0;
            if (libm_count == cap) {
                cap = cap ? 2 * cap : 1024;
                libm_names = realloc(libm_names, cap * sizeof(char *));
            }
            libm_names[libm_count++] = strdup(sym);
        }
        if (f) pclose(f);
        if (!libm_names) libm_names = calloc(1, sizeof(char *));
    }
    for (size_t i = 0; i < libm_count; i++)
        if (strcmp(libm_names[i], name) == 0) return true;
    return false;
}

/* Compiles |sources| (a list of quoted paths, generated NAME.c and NAME_data.c files; their
 * headers in tmpdir) with gcc into objects in a folder of their own and checks their symbols
 * as above; returns the number of objects checked. */
static int check_objects(const char *what, const char *sources) {
    static int serial;
    char dir[600];
    snprintf(dir, sizeof dir, "%s/sym%d", tmpdir, serial++);
    size_t cap = strlen(sources) + 2048;
    char *cmd = malloc(cap);
    snprintf(
        cmd, cap,
        "mkdir -p '%s' && cd '%s' && gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 -fno-pic "
        "-I'%s' -c %s 2>&1 | head -30",
        dir, dir, tmpdir, sources);
    if (system(cmd) != 0) fprintf(stderr, "%s: the compile command failed\n", what);
    snprintf(cmd, cap, "cd '%s' && nm -P -A *.o 2>&1", dir);
    FILE *f = popen(cmd, "r");
    free(cmd);
    char line[1024];
    int objects = 0;
    char last[600] = "";
    /* The C library's memory and string functions, and the compiler's runtime support of
     * C99 complex products and quotients (libgcc's; the complex functions' kernels, which
     * compute as the interpreter does through <complex.h>, multiply double _Complex). */
    static const char *const libc[] = {"memcpy", "memmove",  "memset",   "memcmp",   "strcmp",
                                       "strlen", "__muldc3", "__mulsc3", "__divdc3", "__divsc3"};
    while (f && fgets(line, sizeof line, f)) {
        char file[600], sym[400], type[8];
        /* "x.o: name type value size" */
        if (sscanf(line, "%599[^:]: %399s %7s", file, sym, type) != 3) {
            test_fail(__FILE__, __LINE__, "%s: nm says: %s", what, line);
            continue;
        }
        if (strcmp(file, last) != 0) {
            objects++;
            snprintf(last, sizeof last, "%s", file);
        }
        char t = type[0];
        bool writable = strchr("DdBbCGgSsVv", t) != NULL;
        CHECK_MSG(!writable, "%s: %s holds writable data: %s (%c)", what, file, sym, t);
        if (t != 'U' && t != 'w') continue;
        bool allowed = in_libm(sym);
        for (size_t k = 0; k < sizeof libc / sizeof libc[0]; k++)
            allowed = allowed || strcmp(sym, libc[k]) == 0;
        CHECK_MSG(allowed, "%s: %s calls %s, which is not in libm", what, file, sym);
    }
    if (f) pclose(f);
    CHECK_MSG(objects > 0, "%s: no object to check", what);
    return objects;
}

/* Writes the driver of |b|, builds it with each compiler, runs it and compares; frees. */
static void batch_run(batch *b, const char *what, const char *const *compilers, int ncc) {
    cxla_status s = NULL;
    batch *twin = b->complex_twin;
    const char *with_complex[8];
    int nwc = 0;
    for (int k = 0; k < ncc && nwc < 8; k++)
        if (!b->has_complex || cc_has_complex(compilers[k])) with_complex[nwc++] = compilers[k];
    compilers = with_complex;
    ncc = nwc;
    if (b->count > 0 && symbols_only) {
        total_compiled += check_objects(what, b->sources.data) > 0 ? (int)b->count : 0;
    } else if (b->count > 0) {
        cxla_strbuf driver;
        cxla_strbuf_init(&driver);
        cxla_strbuf_puts(&driver, "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n");
        cxla_strbuf_append(&driver, b->includes.data, b->includes.len);
        cxla_strbuf_puts(&driver, "\nstatic void *load(const char *path, size_t n) {\n"
                                  "    FILE *f = fopen(path, \"rb\");\n"
                                  "    void *q = malloc(n + 1);\n"
                                  "    size_t got = f && q ? fread(q, 1, n, f) : 0;\n"
                                  "    if (f) fclose(f);\n"
                                  "    if (got != n) {\n"
                                  "        free(q);\n"
                                  "        return NULL;\n"
                                  "    }\n"
                                  "    return q;\n"
                                  "}\n\n"
                                  "int main(int argc, char **argv) {\n"
                                  "    if (argc != 3) return 2;\n"
                                  "    const char *dir = argv[2];\n"
                                  "    FILE *f = fopen(argv[1], \"wb\");\n"
                                  "    if (!f) return 3;\n");
        cxla_strbuf_append(&driver, b->body.data, b->body.len);
        cxla_strbuf_puts(&driver, "    return fclose(f) != 0;\n}\n");
        char file[512];
        snprintf(file, sizeof file, "%s/driver%d.c", tmpdir, b->index);
        s = cxla_write_file(file, driver.data, driver.len);
        CHECK(s == NULL);
        cxla_status_free(s);
        cxla_strbuf_free(&driver);
        for (int k = 0; k < ncc; k++) {
            char out[512], res[512];
            size_t cap = b->sources.len + 4096;
            char *cmd = malloc(cap);
            snprintf(out, sizeof out, "%s/prog%d_%d", tmpdir, b->index, k);
            snprintf(res, sizeof res, "%s/res%d_%d", tmpdir, b->index, k);
            int n = snprintf(cmd, cap,
                             "%s -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 -I'%s' -o '%s' "
                             "'%s'%s -lm 2>&1 | head -30",
                             compilers[k], tmpdir, out, file, b->sources.data);
            if (n <= 0 || (size_t)n >= cap) {
                test_fail(__FILE__, __LINE__, "%s: command too long", what);
                free(cmd);
                continue;
            }
            /* A failing compile prints its errors; the missing program fails below. */
            if (system(cmd) != 0) fprintf(stderr, "%s: the compile command failed\n", what);
            snprintf(cmd, cap, "%s'%s' '%s' '%s'", run_prefix, out, res, tmpdir);
            int rc = access(out, X_OK) == 0 ? system(cmd) : -1;
            free(cmd);
            CHECK_MSG(rc == 0, "%s with %s: the generated program failed (%d)", what, compilers[k],
                      rc);
            if (rc != 0) continue;
            FILE *f = fopen(res, "rb");
            CHECK(f != NULL);
            for (int64_t ci = 0; f && ci < b->count; ci++) {
                one_case *c = &b->cases[ci];
                char nm[64];
                int code = -1, nres = -1;
                if (fscanf(f, "%63s %d %d\n", nm, &code, &nres) != 3 || strcmp(nm, c->name)) {
                    test_fail(__FILE__, __LINE__, "%s: bad results file", what);
                    break;
                }
                CHECK_MSG(code == 0 && nres == c->want.count,
                          "%s (%s): run returned %d with %d results, want %" PRId64, c->where,
                          compilers[k], code, nres, c->want.count);
                for (int64_t r = 0; r < nres; r++) {
                    size_t bytes = 0;
                    if (fscanf(f, "%zu", &bytes) != 1 || fgetc(f) != '\n') break;
                    unsigned char *got = malloc(bytes + 1);
                    size_t read = fread(got, 1, bytes, f);
                    const cxla_literal *w = r < c->want.count ? c->want.items[r] : NULL;
                    if (w && swap_order) swap_elements(cxla_literal_shape(w), got, read);
                    bool same = w && read == bytes;
                    if (same && c->want_dynamic && c->want_dynamic[r])
                        same = same_dynamic(w, got, bytes, f, c->fast_math);
                    else
                        same = same && same_bits(w, got, bytes, c->fast_math);
                    CHECK_MSG(same, "%s (%s): result %" PRId64 " differs from the interpreter",
                              c->where, compilers[k], r);
                    free(got);
                }
                if (k == 0) total_compiled++;
            }
            if (f) fclose(f);
        }
    }
    for (int64_t i = 0; i < b->count; i++) {
        leaves_free(&b->cases[i].args);
        leaves_free(&b->cases[i].want);
        free(b->cases[i].want_dynamic);
    }
    free(b->cases);
    cxla_strbuf_free(&b->includes);
    cxla_strbuf_free(&b->body);
    cxla_strbuf_free(&b->sources);
    memset(b, 0, sizeof(*b));
    if (twin) batch_run(twin, what, compilers, ncc);
}

#if !defined(AOT_RANDOM) && !defined(AOT_BIG_ENDIAN) && !defined(AOT_API)
static int compare_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}
#endif

#if !defined(AOT_BIG_ENDIAN) && !defined(AOT_API)
static int64_t compilers_found(const char **out) {
    const char *candidates[] = {"gcc", "clang", "tcc"};
    int ncc = 0;
    for (int i = 0; i < 3; i++)
        if (have(candidates[i])) out[ncc++] = candidates[i];
    return ncc;
}
#endif

#if defined(AOT_RANDOM)
/* tests/cpu/test_aot_random.c: only the machinery above. */
#elif defined(AOT_MODELS)
/* ---- the shared models (tests/models/test_aot_models.c runs this) ------------------------------
 */

/* Whether |m| sums 128 or more f32 or f64 elements per result element in a reduce: the
 * cpu backend's fast reduction order (docs/semantics.md) then gives another sum than the
 * interpreter's pairwise one, within its bound, unless CXLA_CPU_EXACT_MATH=1. */
static bool long_float_sum(const cxla_module *m) {
    for (int64_t c = 0; c < m->comp_count; c++)
        for (int64_t i = 0; i < m->comps[c]->instr_count; i++) {
            const cxla_instr *x = m->comps[c]->instrs[i];
            if (x->opcode != CXLA_OP_REDUCE || x->operand_count < 1) continue;
            const cxla_shape *o = &x->operands[0]->shape;
            if (o->type != CXLA_F32 && o->type != CXLA_F64) continue;
            int64_t nd = 0, n = 1;
            const int64_t *dims = cxla_instr_ints(x, CXLA_ATTR_DIMENSIONS, &nd);
            for (int64_t k = 0; k < nd; k++)
                if (dims[k] >= 0 && dims[k] < o->rank) n *= o->dims[dims[k]];
            if (n >= 128) return true;
        }
    return false;
}

/* Deterministic inputs of moderate size: floats in [-1, 1), integers in [0, 8). */
static cxla_status model_input(const cxla_shape *shape, cxla_literal **out) {
    if (shape->type == CXLA_TUPLE) {
        cxla_literal **e = calloc((size_t)(shape->tuple_count + 1), sizeof(*e));
        cxla_status s = e ? NULL : cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        for (int64_t i = 0; i < shape->tuple_count && !s; i++)
            s = model_input(&shape->elements[i], &e[i]);
        if (!s) s = cxla_literal_create_tuple(e, shape->tuple_count, out);
        if (s)
            for (int64_t i = 0; i < shape->tuple_count; i++) cxla_literal_free(e[i]);
        free(e);
        return s;
    }
    CXLA_RETURN_IF_ERROR(interp_new_array(shape, out));
    cxla_literal *l = *out;
    int64_t n = cxla_literal_element_count(l);
    size_t es = cxla_type_storage(shape->type);
    for (int64_t i = 0; i < n; i++) {
        uint64_t h = (uint64_t)i * 0x9e3779b97f4a7c15u;
        h ^= h >> 29;
        unsigned char *p = (unsigned char *)l->data + (size_t)i * es;
        if (cxla_type_is_float(shape->type))
            cxla_store_f64(shape->type, p, (double)(int64_t)(h % 2048) / 1024.0 - 1.0);
        else
            cxla_store_u64(shape->type, p, shape->type == CXLA_PRED ? h % 2 : h % 8);
    }
    return NULL;
}

static void test_aot_models(void) {
    const char *shared = test_shared_dir();
    if (!shared) test_skip_all("no ../shared folder");
    const char *compilers[3];
    int ncc = (int)compilers_found(compilers);
    if (ncc == 0) test_skip_all("no C compiler (gcc, clang, tcc) found");
    ncc = 1; /* the models are big: one compiler (the cases test runs all of them) */
    make_tmpdir();
    char dir[600];
    snprintf(dir, sizeof dir, "%s/models", shared);
    DIR *d = opendir(dir);
    if (!d) test_skip_all("no ../shared/models");
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".hlo")) continue;
        /* CXLA_AOT_CASES=word: only the files whose names hold it (for a quick look). */
        if (getenv("CXLA_AOT_CASES") && !strstr(e->d_name, getenv("CXLA_AOT_CASES"))) continue;
        names = realloc(names, sizeof(char *) * (n + 1));
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n) qsort(names, n, sizeof(char *), compare_names);
    for (size_t i = 0; i < n; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        cxla_module *m = NULL;
        cxla_status s = cxla_hlo_parse_file(path, &m);
        if (!s) s = cxla_verify_module(m);
        cxla_literal **args = NULL;
        int64_t na = m ? m->entry->param_count : 0;
        if (!s) {
            args = calloc((size_t)(na + 1), sizeof(*args));
            for (int64_t p = 0; p < na && !s; p++)
                s = model_input(&m->entry->params[p]->shape, &args[p]);
        }
        batch b;
        memset(&b, 0, sizeof b);
        b.index = (int)i;
        cxla_strbuf_init(&b.includes);
        cxla_strbuf_init(&b.body);
        cxla_strbuf_init(&b.sources);
        /* Long f32 / f64 sums: generated with the interpreter's order (CXLA_CPU_EXACT_MATH,
         * read as the code is generated), so that the comparison stays bit for bit. */
        bool exact = !s && long_float_sum(m) && cpu_emit_fast_math();
        if (exact) {
            setenv("CXLA_CPU_EXACT_MATH", "1", 1);
            fprintf(stderr,
                    "aot: %s sums 128 or more floats: generated with "
                    "CXLA_CPU_EXACT_MATH=1\n",
                    names[i]);
        }
        if (!s) s = batch_add(&b, m, args, na, path);
        if (exact) unsetenv("CXLA_CPU_EXACT_MATH");
        CHECK_MSG(s == NULL, "%s: %s", path, cxla_status_message(s));
        cxla_status_free(s);
        if (b.count) fprintf(stderr, "aot: %s compiles ahead of time\n", names[i]);
        batch_run(&b, path, compilers, ncc);
        for (int64_t p = 0; args && p < na; p++) cxla_literal_free(args[p]);
        free(args);
        cxla_module_destroy(m);
        free(names[i]);
    }
    free(names);
    fprintf(stderr, "aot: %d of %d models compile ahead of time and match the interpreter\n",
            total_compiled, total_cases);
    CHECK(total_compiled >= 1);
    if (!test_failures) remove_tmpdir();
}

#else

/* ---- the tests/hlo cases ----------------------------------------------------------------------
 */

/* Whether |s| has a leaf of a packed sub-byte layout (E(n)) or one not row-major; sets
 * *packed and *other. */
static void layout_kinds(const cxla_shape *s, bool *packed, bool *other) {
    if (s->type == CXLA_TUPLE) {
        for (int64_t e = 0; e < s->tuple_count; e++) layout_kinds(&s->elements[e], packed, other);
        return;
    }
    if (!cxla_type_is_array(s->type)) return;
    *packed = *packed || (s->layout && s->layout->element_size_bits > 0);
    *other = *other || !cxla_layout_is_default(s);
}

/* Whether module |m| holds packed sub-byte layouts (E(n)) and is otherwise row-major: such
 * a module compiles without the pass pipeline too (the layout pass would unpack them), so
 * that the packed shapes reach the dynamic steps of aot_dyn.c and the kernels as written. */
static bool packed_row_major(const cxla_module *m) {
    bool packed = false, other = false;
    for (int64_t c = 0; c < m->comp_count; c++)
        for (int64_t i = 0; i < m->comps[c]->instr_count; i++)
            layout_kinds(&m->comps[c]->instrs[i]->shape, &packed, &other);
    for (int64_t p = 0; m->has_entry_layout && m->entry_param_shapes && p < m->entry_param_count;
         p++)
        layout_kinds(&m->entry_param_shapes[p], &packed, &other);
    if (m->has_entry_layout) layout_kinds(&m->entry_result_shape, &packed, &other);
    return packed && !other;
}

static char *directive(const char *text, const char *key, int64_t nth) {
    size_t klen = strlen(key);
    int64_t seen = 0;
    for (const char *p = text; p && *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        const char *q = p;
        while (q < p + len && (*q == ' ' || *q == '\t')) q++;
        if ((size_t)(p + len - q) > klen + 3 && strncmp(q, "// ", 3) == 0 &&
            strncmp(q + 3, key, klen) == 0 && q[3 + klen] == ':' && seen++ == nth) {
            const char *v = q + 4 + klen;
            while (*v == ' ') v++;
            return strndup(v, (size_t)(p + len - v));
        }
        p = eol ? eol + 1 : NULL;
    }
    return NULL;
}

/* `test_aot count`: the modules run a second time without the passes, and those with an
 * EXPECT on several devices (REPLICAS), which test_aot leaves to test_hlo_cases. */
static int total_no_pass_runs, total_several_devices;

/* Adds the cases of |path| that have an EXPECT to one batch (those calling <complex.h> to a
 * second one, or none with |drop_complex|) and runs it. */
static void run_file(const char *path, int file_index, const char *const *compilers, int ncc,
                     bool drop_complex) {
    char *data;
    size_t size;
    cxla_status s = cxla_read_file(path, &data, &size);
    if (s) {
        test_fail(__FILE__, __LINE__, "%s", cxla_status_message(s));
        cxla_status_free(s);
        return;
    }
    batch b, bc;
    memset(&b, 0, sizeof b);
    memset(&bc, 0, sizeof bc);
    b.index = file_index;
    bc.index = file_index + 3000; /* its own driver and programs */
    cxla_strbuf_init(&b.includes);
    cxla_strbuf_init(&b.body);
    cxla_strbuf_init(&b.sources);
    cxla_strbuf_init(&bc.includes);
    cxla_strbuf_init(&bc.body);
    cxla_strbuf_init(&bc.sources);
    b.complex_twin = &bc;
    b.drop_complex = drop_complex;
    char *start = data;
    int64_t line = 1, start_line = 1;
    for (char *p = data;; p++) {
        bool end = *p == 0;
        bool sep = !end && (p == data || p[-1] == '\n') && strncmp(p, "// -----", 8) == 0 &&
                   (p[8] == '\n' || p[8] == 0);
        if (end || sep) {
            char saved = *p;
            *p = 0;
            char *expect = directive(start, "EXPECT", 0);
            bool usable = (strstr(start, "ENTRY") || strstr(start, "HloModule")) && expect &&
                          !strstr(start, "// EXPECT_ERROR") && !strstr(start, "// REJECT") &&
                          !strstr(start, "// REPLICAS:"); /* several devices: test_hlo_cases */
            if (expect && strstr(start, "// REPLICAS:") && !strstr(start, "// EXPECT_ERROR"))
                total_several_devices++;
            free(expect);
            cxla_module *m = NULL;
            cxla_literal **args = NULL;
            int64_t nargs = 0;
            if (usable) {
                s = cxla_hlo_parse(start, strlen(start), path, &m);
                if (!s) s = cxla_verify_module(m);
                for (char *in; !s && (in = directive(start, "INPUT", nargs)); nargs++) {
                    args = realloc(args, (size_t)(nargs + 1) * sizeof(*args));
                    s = cxla_literal_parse(in, (size_t)-1, NULL, &args[nargs]);
                    free(in);
                    if (s) break;
                }
                /* A case that does not parse is test_hlo_cases's to report. */
                cxla_status_free(s);
                if (s) usable = false;
                s = NULL;
            }
            if (usable) {
                char where[700]; /* |path|, a line number and " (no passes)" */
                snprintf(where, sizeof where, "%s:%" PRId64, path, start_line);
                s = batch_add(&b, m, args, nargs, where);
                if (!s && packed_row_major(m)) {
                    snprintf(where, sizeof where, "%s:%" PRId64 " (no passes)", path, start_line);
                    aot_no_passes = true;
                    total_no_pass_runs++;
                    s = batch_add(&b, m, args, nargs, where);
                    aot_no_passes = false;
                }
                if (s) {
                    test_fail(__FILE__, __LINE__, "%s: %s", where, cxla_status_message(s));
                    cxla_status_free(s);
                    s = NULL;
                }
            }
            for (int64_t i = 0; i < nargs; i++) cxla_literal_free(args[i]);
            free(args);
            cxla_module_destroy(m);
            *p = saved;
            if (end) break;
            while (*p && *p != '\n') p++;
            if (!*p) break;
            start = p + 1;
            start_line = line + 1;
        }
        if (*p == '\n') line++;
    }
    free(data);
    batch_run(&b, path, compilers, ncc);
}

#ifndef AOT_BIG_ENDIAN /* tests/cpu/test_aot_be.c: the machinery and run_file only */
static cxla_module *parse(const char *text) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "test", &m);
    CHECK(s == NULL);
    cxla_status_free(s);
    return m;
}
#endif

#if !defined(AOT_BIG_ENDIAN) && !defined(AOT_API) /* tests/cpu/test_aot_api.c: up to here */
/* `test_aot cases K/N` runs part K (0-based) of N of the case files, so that CTest runs the
 * parts side by side (CMakeLists.txt); without it, all of them. */
static int cases_part = 0, cases_parts = 1;

/* The parts: each file, biggest first, to the part with the fewest bytes so far (the time
 * goes roughly with a file's size), ties to the lowest part; a file that cannot be read
 * counts 0 bytes. Deterministic for a given tree. */
static void assign_parts(const char *dir, char **names, size_t n, int parts, int *out) {
    int64_t *bytes = calloc(n + 1, sizeof(int64_t)), load[64] = {0};
    size_t *order = calloc(n + 1, sizeof(size_t));
    for (size_t i = 0; i < n; i++) {
        char path[512];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        bytes[i] = stat(path, &st) == 0 ? (int64_t)st.st_size : 0;
        order[i] = i;
    }
    for (size_t i = 1; i < n; i++) /* by size, descending; by name among equals */
        for (size_t j = i; j > 0 && bytes[order[j]] > bytes[order[j - 1]]; j--) {
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (size_t i = 0; i < n; i++) {
        int best = 0;
        for (int p = 1; p < parts; p++)
            if (load[p] < load[best]) best = p;
        out[order[i]] = best;
        load[best] += bytes[order[i]];
    }
    free(bytes);
    free(order);
}

static void test_aot_cases(void) {
    const char *compilers[3];
    int ncc = (int)compilers_found(compilers);
    if (ncc == 0 && !count_only) test_skip_all("no C compiler (gcc, clang, tcc) found");
    make_tmpdir();
    const char *dir = CXLA_SOURCE_DIR "/tests/hlo/cases";
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".hlo")) continue;
        /* CXLA_AOT_CASES=word: only the files whose names hold it (for a quick look). */
        if (getenv("CXLA_AOT_CASES") && !strstr(e->d_name, getenv("CXLA_AOT_CASES"))) continue;
        names = realloc(names, sizeof(char *) * (n + 1));
        names[n++] = strdup(e->d_name);
    }
    if (d) closedir(d);
    if (n) qsort(names, n, sizeof(char *), compare_names);
    int *part = calloc(n + 1, sizeof(int));
    if (cases_parts > 1) assign_parts(dir, names, n, cases_parts, part);
    int files = 0;
    for (size_t i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (part[i] == cases_part) {
            run_file(path, (int)i, compilers, ncc, false);
            files++;
        }
        free(names[i]);
    }
    free(names);
    free(part);
    if (count_only) {
        /* Each module once (its second, pass-less run of packed layouts counts apart). */
        printf("aot count: %d cases in %d files (the modules with an EXPECT on one device, %d "
               "of them a second time without the passes): %d compile ahead of time, %d do "
               "not, %d the interpreter refuses; besides, %d modules with an EXPECT run on "
               "several devices (REPLICAS: test_hlo_cases, test_cpu_cases)\n",
               total_cases, files, total_no_pass_runs, total_compiled, total_skipped,
               total_interp_refused, total_several_devices);
        CHECK(total_compiled + total_skipped + total_interp_refused == total_cases);
        remove_tmpdir();
        return;
    }
    fprintf(stderr,
            "aot: %d of %d cases in %d files (part %d of %d) compile ahead of time (run with %d "
            "compilers), %d do not; %d with a NAME_data.c (constants over 64 bytes)\n",
            total_compiled, total_cases, files, cases_part + 1, cases_parts, ncc, total_skipped,
            total_data_files);
    /* A floor, so that a regression that makes everything UNIMPLEMENTED fails (each part
     * holds about its share of the cases). */
    CHECK(total_compiled >= 100 / cases_parts || getenv("CXLA_AOT_CASES"));
    if (!test_failures) remove_tmpdir();
}

/* 32-bit x86 (i386 with SSE: FLT_EVAL_METHOD 0), run for real: this machine has the 32-bit
 * C library (Debian's libc6-i386) but not its development files, so the program is linked
 * by hand against /usr/lib32's libc, libm and libgcc_s (64-bit division; the -lm at the end
 * of the command finds them through a linker script) with a 12-line _start
 * (argc, argv, main, exit) and the x86-64 headers (an empty gnu/stubs-32.h stands in for the
 * missing one). A few case files run there, bit for bit against the interpreter. Skipped, saying
 * why, where gcc -m32 or the 32-bit libc is missing. Big-endian: tests/cpu/test_aot_be.c. */
static bool i386_compiler(char *out, size_t n) {
    if (!have("gcc") || access("/usr/lib32/libc.so.6", R_OK) ||
        access("/usr/lib32/libm.so.6", R_OK) || access("/usr/lib32/libgcc_s.so.1", R_OK))
        return false;
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s/i386/gnu' && : > '%s/i386/gnu/stubs-32.h' && "
             "echo 'INPUT(/usr/lib32/libm.so.6 /usr/lib32/libc.so.6 /usr/lib32/libgcc_s.so.1)' "
             "> '%s/i386/libm.so'",
             tmpdir, tmpdir, tmpdir);
    if (system(cmd) != 0) return false;
    static const char start[] = "    .text\n    .globl _start\n_start:\n    xor %ebp, %ebp\n"
                                "    mov (%esp), %eax\n    lea 4(%esp), %ecx\n"
                                "    and $-16, %esp\n    sub $8, %esp\n    push %ecx\n"
                                "    push %eax\n    call main\n    mov %eax, (%esp)\n"
                                "    call exit\n    hlt\n"
                                "    .section .note.GNU-stack,\"\",@progbits\n";
    char path[600];
    snprintf(path, sizeof path, "%s/i386/start.S", tmpdir);
    cxla_status s = cxla_write_file(path, start, strlen(start));
    cxla_status_free(s);
    if (s) return false;
    snprintf(out, n,
             "gcc -m32 -msse2 -mfpmath=sse -no-pie -nostartfiles -nostdlib -I'%s/i386' "
             "-idirafter /usr/include/x86_64-linux-gnu -L'%s/i386' "
             "-Wl,-dynamic-linker,/usr/lib32/ld-linux.so.2 '%s/i386/start.S'",
             tmpdir, tmpdir, tmpdir);
    /* A probe: a program that prints through libc and libm, and returns what it printed. */
    snprintf(cmd, sizeof cmd,
             "cd '%s/i386' && printf '#include <stdio.h>\n#include <math.h>\nint main(int c, "
             "char **v) { (void)v; return printf(\"%%d\", (int)(sizeof(void *) + sqrt(c))) == "
             "1 ? 0 : 1; }\n' > probe.c && %s -std=c11 -o probe probe.c -lm >/dev/null 2>&1 && "
             "./probe >/dev/null",
             tmpdir, out);
    return system(cmd) == 0;
}

static void test_aot_i386(void) {
    make_tmpdir();
    char cc[1024];
    if (!i386_compiler(cc, sizeof cc))
        test_skip_all("no gcc -m32 or 32-bit C library (libc6-i386) to run i386 code");
    const char *compilers[1] = {cc};
    static const char *const files[] = {"elementwise_int.hlo", "dot.hlo", "rng.hlo", "fft.hlo",
                                        "elementwise_complex.hlo"};
    int before = total_compiled;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/tests/hlo/cases/%s", CXLA_SOURCE_DIR, files[i]);
        /* The 32-bit libm's complex functions differ from the 64-bit one's (another libm,
         * docs/aot.md): those cases are left out here. */
        run_file(path, 500 + (int)i, compilers, 1, true);
    }
    fprintf(stderr, "aot: %d cases run as i386 code\n", total_compiled - before);
    CHECK(total_compiled - before >= 50);
    if (!test_failures) remove_tmpdir();
}

/* XLA's TopK custom call (the built-in target): floats in total order with NaN, -0 and
 * infinities, ties, a 2-d operand, a less-than comparator, small floats and unsigned
 * integers, each checked bit for bit against the interpreter. */
static void test_aot_topk(void) {
    const char *compilers[3];
    int ncc = (int)compilers_found(compilers);
    if (ncc == 0) test_skip_all("no C compiler (gcc, clang, tcc) found");
    ncc = 1; /* the cases' compilers are covered by test_aot_cases */
    make_tmpdir();
    static const struct {
        const char *type, *dir, *in, *rshape;
        int k;
    } cases[] = {
        {"f32", "GT", "f32[2,6] {{1, nan, -0, 0, 1, -inf}, {-nan, 3, 3, 2, inf, -1}}", "[2,4]", 4},
        {"f32", "LT", "f32[2,6] {{1, nan, -0, 0, 1, -inf}, {-nan, 3, 3, 2, inf, -1}}", "[2,3]", 3},
        {"f16", "GT", "f16[5] {0.5, -0.5, 0.5, 65504, -inf}", "[3]", 3},
        {"bf16", "LT", "bf16[3,2] {{2, 2}, {nan, -1}, {0, -0}}", "[3,2]", 2},
        {"u8", "LT", "u8[7] {7, 255, 0, 7, 1, 200, 3}", "[7]", 7},
        {"s64", "GT", "s64[4] {-5, 9223372036854775807, -9223372036854775808, 0}", "[1]", 1},
    };
    batch b;
    memset(&b, 0, sizeof b);
    b.index = 9000;
    cxla_strbuf_init(&b.includes);
    cxla_strbuf_init(&b.body);
    cxla_strbuf_init(&b.sources);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cxla_literal *arg = NULL;
        CHECK_OK(cxla_literal_parse(cases[i].in, (size_t)-1, NULL, &arg));
        if (!arg) continue;
        char *shape = cxla_shape_to_string(cxla_literal_shape(arg), CXLA_SHAPE_PRINT_NO_LAYOUT);
        char text[1200], where[64];
        snprintf(text, sizeof text,
                 "HloModule topk\ncmp {\n  x = %s[] parameter(0)\n  y = %s[] parameter(1)\n"
                 "  ROOT c = pred[] compare(x, y), direction=%s\n}\n"
                 "ENTRY e {\n  a = %s parameter(0)\n"
                 "  ROOT t = (%s%s, s32%s) custom-call(a), custom_call_target=\"TopK\", "
                 "to_apply=cmp\n}\n",
                 cases[i].type, cases[i].type, cases[i].dir, shape, cases[i].type, cases[i].rshape,
                 cases[i].rshape);
        free(shape);
        snprintf(where, sizeof where, "topk case %d", (int)i);
        cxla_module *m = parse(text);
        int skipped = total_skipped;
        CHECK_OK(batch_add(&b, m, &arg, 1, where));
        CHECK_MSG(total_skipped == skipped, "%s does not compile ahead of time", where);
        cxla_module_destroy(m);
        cxla_literal_free(arg);
    }
    CHECK(b.count == (int64_t)(sizeof cases / sizeof cases[0]));
    int compiled = total_compiled;
    batch_run(&b, "topk", compilers, ncc);
    CHECK(total_compiled - compiled == (int)(sizeof cases / sizeof cases[0]));
    if (!test_failures) remove_tmpdir();
}

/* ---- the StableHLO conformance suite's interpreter cases ----------------------------------------
 *
 * ../shared/conformance/stablehlo/interpret: programs of constants whose checks
 * (check.expect_*) cxla turns into custom calls of a built-in target (src/stablehlo/checks.c)
 * that compare two buffers at run time. Ahead of time a custom call goes through the
 * caller's table, so each program is turned into one whose result is every check's two
 * operands (the value checked, the value expected), the checks removed; test_aot compiles
 * it like a case and compares that result with the interpreter's, bit for bit (or within
 * the fast f32 functions' bounds, as for the cases): the generated code then passes every
 * check the interpreter passes (`cxla conformance` runs the checks themselves). */

/* The module of conformance case |path| as above, or NULL with *why: a case skipped (its
 * reason), one with checks outside its entry, one with arguments. */
static cxla_module *conformance_module(const char *path, const char **why) {
    char *text = NULL;
    size_t size = 0;
    cxla_module *m = NULL;
    cxla_stablehlo_info info;
    memset(&info, 0, sizeof info);
    cxla_status s = cxla_read_file(path, &text, &size);
    if (!s) s = cxla_stablehlo_parse(text, size, path, &m, &info);
    free(text);
    *why = s ? "does not convert" : info.skip_reason ? info.skip_reason : NULL;
    if (!*why && info.check_count == 0) *why = "checks nothing";
    cxla_status_free(s);
    cxla_computation *e = m && !*why ? m->entry : NULL;
    if (e && e->param_count) *why = "takes arguments";
    cxla_instr **checks = NULL, **ops = NULL;
    int64_t n = 0;
    for (int64_t c = 0; m && !*why && c < m->comp_count; c++)
        for (int64_t i = 0; !*why && i < m->comps[c]->instr_count; i++) {
            cxla_instr *x = m->comps[c]->instrs[i];
            const cxla_attr *t = cxla_instr_attr(x, CXLA_ATTR_CUSTOM_CALL_TARGET);
            if (x->opcode != CXLA_OP_CUSTOM_CALL || !t || t->kind != CXLA_ATTR_KIND_STRING ||
                strcmp(t->v.s, "cxla.stablehlo.check") != 0)
                continue;
            if (m->comps[c] != e || x->operand_count != 2 || x->user_count) {
                *why = "checks outside the entry";
                break;
            }
            checks = realloc(checks, (size_t)(n + 1) * sizeof(*checks));
            ops = realloc(ops, (size_t)(2 * n + 2) * sizeof(*ops));
            checks[n] = x;
            ops[2 * n] = x->operands[0];
            ops[2 * n + 1] = x->operands[1];
            n++;
        }
    if (m && !*why) {
        cxla_shape *el = cxla_arena_alloc(m->arena, (size_t)(2 * n) * sizeof(cxla_shape));
        for (int64_t k = 0; el && k < 2 * n; k++) el[k] = ops[k]->shape;
        cxla_shape ts = {.type = CXLA_TUPLE, .tuple_count = 2 * n, .elements = el};
        cxla_instr *root = NULL, *old = e->root;
        s = el ? cxla_computation_add_instr(e, CXLA_OP_TUPLE, "aot_checked", &ts, 2 * n, ops, &root)
               : cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        if (!s) e->root = root;
        for (int64_t k = 0; !s && k < n; k++) s = cxla_computation_remove_instr(e, checks[k]);
        if (!s && old != root && old->user_count == 0 && old->opcode == CXLA_OP_TUPLE)
            s = cxla_computation_remove_instr(e, old);
        m->has_entry_layout = false; /* the interface is the new root's */
        if (!s) s = cxla_computation_sort(e);
        if (!s) s = cxla_verify_module(m);
        if (s) *why = "cannot be rewritten";
        cxla_status_free(s);
    }
    free(checks);
    free(ops);
    if (*why) {
        cxla_module_destroy(m);
        return NULL;
    }
    return m;
}

static void test_aot_conformance(void) {
    const char *shared = CXLA_SHARED_DIR;
    char dir[600];
    snprintf(dir, sizeof dir, "%s/conformance/stablehlo/interpret", shared);
    DIR *d = opendir(dir);
    if (!d) test_skip_all("no ../shared/conformance/stablehlo/interpret");
    const char *compilers[3];
    int ncc = (int)compilers_found(compilers);
    if (ncc == 0) test_skip_all("no C compiler (gcc, clang, tcc) found");
    make_tmpdir();
    char **names = NULL;
    size_t count = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".mlir")) continue;
        if (getenv("CXLA_AOT_CASES") && !strstr(e->d_name, getenv("CXLA_AOT_CASES"))) continue;
        names = realloc(names, sizeof(char *) * (count + 1));
        names[count++] = strdup(e->d_name);
    }
    closedir(d);
    if (count) qsort(names, count, sizeof(char *), compare_names);
    int skipped = 0, before = total_compiled, before_refused = total_skipped, batches = 0;
    int before_interp = total_interp_refused;
    batch b, bc;
    bool open = false;
    for (size_t i = 0; i <= count; i++) {
        /* Batches of 40 programs, each built and run once per compiler. */
        if (open && (i == count || b.count >= 40)) {
            batch_run(&b, "conformance", compilers, ncc);
            open = false;
        }
        if (i == count) break;
        if (!open) {
            memset(&b, 0, sizeof b);
            memset(&bc, 0, sizeof bc);
            b.index = 7000 + batches;
            bc.index = 7000 + batches + 3000;
            batches++;
            cxla_strbuf_init(&b.includes);
            cxla_strbuf_init(&b.body);
            cxla_strbuf_init(&b.sources);
            cxla_strbuf_init(&bc.includes);
            cxla_strbuf_init(&bc.body);
            cxla_strbuf_init(&bc.sources);
            b.complex_twin = &bc;
            open = true;
        }
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        const char *why = NULL;
        cxla_module *m = conformance_module(path, &why);
        if (!m) {
            if (getenv("CXLA_TEST_VERBOSE")) fprintf(stderr, "%s: skipped: %s\n", path, why);
            skipped++;
        } else {
            cxla_status s = batch_add(&b, m, NULL, 0, path);
            CHECK_MSG(s == NULL, "%s: %s", path, cxla_status_message(s));
            cxla_status_free(s);
        }
        cxla_module_destroy(m);
        free(names[i]);
    }
    free(names);
    fprintf(stderr,
            "aot: %d of %zu conformance interpreter cases compile ahead of time and match the "
            "interpreter (run with %d compilers); %d do not compile, %d the interpreter "
            "refuses alone (several devices: run_parallel), %d skipped (no checks, checks of "
            "the suite's interpreter probes, checks outside the entry, arguments)\n",
            total_compiled - before, count, ncc, total_skipped - before_refused,
            total_interp_refused - before_interp, skipped);
    /* Every case the interpreter runs alone compiles (a refusal fails it). */
    CHECK(total_skipped == before_refused || getenv("CXLA_AOT_CASES"));
    CHECK(total_compiled - before >= (int)count / 2 || getenv("CXLA_AOT_CASES"));
    if (!test_failures) remove_tmpdir();
}

#endif /* AOT_BIG_ENDIAN, AOT_API */
#endif

#if defined(AOT_RANDOM) || defined(AOT_BIG_ENDIAN) || defined(AOT_API)
#elif defined(AOT_MODELS)
TEST_MAIN(TEST(test_aot_models))
#else
/* `test_aot`: every test. `test_aot others`: all but test_aot_cases and
 * test_aot_conformance (`test_aot conformance`). `test_aot cases K/N`:
 * test_aot_cases over part K of N of the case files (CMakeLists.txt runs N of them, so that
 * ctest -j runs them side by side). `test_aot count`: test_aot_cases without compiling,
 * each refusal on stdout with its reason and the count last (docs/aot.md). Else the
 * harness's filter (a part of a test's name). */
int main(int argc, char **argv) {
    static const test_case all[] = {
        TEST(test_aot_topk), TEST(test_aot_i386),
        TEST(test_aot_conformance), /* `test_aot conformance` */
        TEST(test_aot_cases),       /* last */
    };
    int count = (int)(sizeof all / sizeof all[0]);
    if (argc > 1 && strcmp(argv[1], "others") == 0) return test_run_all(all, count - 2, 1, argv);
    if (argc > 1 && strcmp(argv[1], "conformance") == 0) /* cpu/test_aot_conformance */
        return test_run_all(&all[count - 2], 1, 1, argv);
    if (argc > 1 && strcmp(argv[1], "count") == 0) { /* docs/aot.md's count, no compiler */
        count_only = true;
        return test_run_all(&all[count - 1], 1, 1, argv);
    }
    if (argc > 1 && strcmp(argv[1], "cases") == 0) {
        if (argc < 3 || sscanf(argv[2], "%d/%d", &cases_part, &cases_parts) != 2 ||
            cases_parts < 1 || cases_parts > 64 || cases_part < 0 || cases_part >= cases_parts) {
            fprintf(stderr, "usage: %s cases K/N (0 <= K < N <= 64)\n", argv[0]);
            return 2;
        }
        return test_run_all(&all[count - 1], 1, 1, argv);
    }
    return test_run_all(all, count, argc, argv);
}
#endif
