/* Ahead-of-time output (src/cpu/aot.h): the tests/hlo/cases modules that compile ahead of
 * time are written out, compiled with `-std=c11 -Wall -Wextra -Wpedantic -Werror` by gcc and
 * clang (and tcc when installed) together with a generated driver, linked without libcxla,
 * run, and their results compared bit for bit with the interpreter's. Plus the errors for
 * what has no ahead-of-time form, and the header from C++. */
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
static bool symbols_only; /* test_aot_symbols: batch_run checks objects, runs nothing */
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

#if !defined(AOT_RANDOM) && !defined(AOT_BIG_ENDIAN)
static int compare_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}
#endif

#ifndef AOT_BIG_ENDIAN
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
                char where[600];
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

static cxla_module *parse(const char *text);

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

/* ---- errors -----------------------------------------------------------------------------------
 */

static cxla_module *parse(const char *text) {
    cxla_module *m = NULL;
    cxla_status s = cxla_hlo_parse(text, strlen(text), "test", &m);
    CHECK(s == NULL);
    cxla_status_free(s);
    return m;
}

static void test_aot_errors(void) {
    cxla_strbuf h, c, d;
    cxla_strbuf_init(&h);
    cxla_strbuf_init(&c);
    cxla_strbuf_init(&d);
    /* Collectives that need another device, unbounded dynamic shapes (in the entry and in a
     * loop body), the typed FFI. (A select-and-scatter over a dynamic dimension, once here,
     * compiles: test_aot_dynwin.) */
    const char *bad[][2] = {
        {"HloModule t, replica_count=2\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
         "  ROOT s = f32[] add(x, y)\n}\nENTRY e {\n  p = f32[2] parameter(0)\n"
         "  ROOT my_ar = f32[2] all-reduce(p), replica_groups={{0,1}}, to_apply=add\n}\n",
         "my_ar (all-reduce) in computation e (the entry) has no ahead-of-time form: its group "
         "holds 2 devices"},
        {"HloModule t\nENTRY e {\n  p = f32[?] parameter(0)\n  ROOT n = f32[?] negate(p)\n}\n",
         "unbounded dynamic dimensions"},
        /* An unbounded dimension inside a loop body is named as well. */
        {"HloModule t\nbody {\n  p = (s32[], f32[?]) parameter(0)\n"
         "  i = s32[] get-tuple-element(p), index=0\n  v = f32[?] get-tuple-element(p), index=1\n"
         "  one = s32[] constant(1)\n  i2 = s32[] add(i, one)\n  my_neg = f32[?] negate(v)\n"
         "  ROOT t = (s32[], f32[?]) tuple(i2, my_neg)\n}\ncond {\n"
         "  p = (s32[], f32[?]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
         "  three = s32[] constant(3)\n  ROOT lt = pred[] compare(i, three), direction=LT\n}\n"
         "ENTRY e {\n  x = f32[?] parameter(0)\n  zero = s32[] constant(0)\n"
         "  init = (s32[], f32[?]) tuple(zero, x)\n"
         "  w = (s32[], f32[?]) while(init), condition=cond, body=body\n"
         "  ROOT r = f32[?] get-tuple-element(w), index=1\n}\n",
         "unbounded dynamic dimensions"},
        {"HloModule t\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT my_cc = f32[2] custom-call(p), "
         "custom_call_target=\"f\", api_version=API_VERSION_TYPED_FFI\n}\n",
         "my_cc (custom-call)"},
        /* collective-permute's in-place form receiving from replica 1 (the plain form's
         * refusal has the same words). */
        {"HloModule t, replica_count=2\nENTRY e {\n  a = s32[4] parameter(0)\n"
         "  b = s32[4] parameter(1)\n  i = s32[] constant(0)\n  t = (s32[]) tuple(i)\n"
         "  ROOT my_cp = s32[4] collective-permute(a, b, t, t), "
         "source_target_pairs={{0,1},{1,0}}, slice_sizes={{2}}\n}\n",
         "my_cp (collective-permute) in computation e (the entry) has no ahead-of-time form: "
         "device 0 receives from device 1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cxla_module *m = parse(bad[i][0]);
        const char *msg =
            test_expect_error(cpu_aot_generate(m, NULL, "t", &h, &c, &d), __FILE__, __LINE__);
        CHECK_MSG(strstr(msg, bad[i][1]) != NULL, "case %zu: %s", i, msg);
        cxla_module_destroy(m);
    }
    cxla_strbuf_free(&h);
    cxla_strbuf_free(&c);
    cxla_strbuf_free(&d);
}

/* The options of NAME_run_with: custom calls through the table (api_version 3 with the
 * opaque bytes; a failing one; a missing one; one entered with the wrong api_version),
 * infeed and outfeed through callbacks, entry layouts that are not row-major (an argument
 * and results in column-major order), a collective on one device, and the error codes and
 * messages. The expected numbers are worked out by hand in the comments. */
static const char *const options_module =
    "HloModule opts, entry_computation_layout={(f32[2,3]{0,1})->(f32[3,2]{0,1}, "
    "f32[2,3]{0,1}, s32[2], u32[])}\n"
    "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"
    "ENTRY e {\n"
    "  p = f32[2,3]{0,1} parameter(0)\n"
    "  t0 = token[] after-all()\n"
    "  in = (s32[2], token[]) infeed(t0), infeed_config=\"cfg\"\n"
    "  d = s32[2] get-tuple-element(in), index=0\n"
    "  t1 = token[] get-tuple-element(in), index=1\n"
    "  o = token[] outfeed(p, t1), outfeed_config=\"ocfg\"\n"
    "  ar = f32[2,3] all-reduce(p), replica_groups={{0}}, to_apply=add\n"
    "  c = f32[2,3] custom-call(ar), custom_call_target=\"my_double\", "
    "api_version=API_VERSION_STATUS_RETURNING_UNIFIED, backend_config=\"x2\"\n"
    "  tr = f32[3,2] transpose(p), dimensions={1,0}\n"
    "  id = u32[] replica-id()\n"
    "  ROOT r = (f32[3,2]{0,1}, f32[2,3]{0,1}, s32[2], u32[]) tuple(tr, c, d, id)\n"
    "}\n";

static const char *const options_driver =
    "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include \"opts.h\"\n"
    "static float outbuf[6];\n"
    "static int feed(void *user, const char *instr, const char *config, void *const *leaves,\n"
    "                const size_t *bytes, int count) {\n"
    "    int32_t v[2] = {7, -9};\n"
    "    (void)user;\n"
    "    if (count != 1 || bytes[0] != 8 || strcmp(config, \"cfg\") || strcmp(instr, \"in\")) "
    "return 1;\n"
    "    memcpy(leaves[0], v, 8);\n"
    "    return 0;\n"
    "}\n"
    "static int outf(void *user, const char *instr, const char *config, const void *const "
    "*leaves,\n"
    "                const size_t *bytes, int count) {\n"
    "    (void)user;\n"
    "    (void)instr;\n"
    "    if (count != 1 || bytes[0] != 24 || strcmp(config, \"ocfg\")) return 1;\n"
    "    memcpy(outbuf, leaves[0], 24);\n"
    "    return 0;\n"
    "}\n"
    "static void dbl(void *out, const void **in, const char *opaque, size_t len,\n"
    "                opts_custom_call_status *st) {\n"
    "    const float *x = in[0];\n"
    "    float *y = out;\n"
    "    if (len != 2 || memcmp(opaque, \"x2\", 2)) {\n"
    "        st->failed = 1;\n"
    "        return;\n"
    "    }\n"
    "    for (int i = 0; i < 6; i++) {\n"
    "        if (x[i] < 0) {\n"
    "            st->failed = 1;\n"
    "            strcpy(st->message, \"negative input\");\n"
    "            return;\n"
    "        }\n"
    "        y[i] = 2 * x[i];\n"
    "    }\n"
    "}\n"
    "int main(void) {\n"
    "    float p[6], tr[6], c[6];\n"
    "    int32_t d[2];\n"
    "    uint32_t id = 5;\n"
    "    /* p[i][j] = 3i + j + 1, column-major: at j * 2 + i */\n"
    "    for (int i = 0; i < 2; i++)\n"
    "        for (int j = 0; j < 3; j++) p[j * 2 + i] = (float)(3 * i + j + 1);\n"
    "    const void *args[1] = {p};\n"
    "    void *res[4] = {tr, c, d, &id};\n"
    "    void *scratch = malloc(opts_scratch_size() + 64);\n"
    "    char *sc = (char *)scratch + (64 - (size_t)scratch % 64) % 64;\n"
    "    char err[200] = \"\";\n"
    "    opts_custom_call table[1] = {{\"my_double\", (opts_custom_call_fn)dbl, 3}};\n"
    "    opts_options o = {table, 1, feed, outf, NULL, err, sizeof err, 0, 0, 0, 0};\n"
    "    int rc = opts_run_with(&o, args, res, sc);\n"
    "    printf(\"rc %d\\n\", rc);\n"
    "    for (int i = 0; i < 6; i++) printf(\"%g %g %g\\n\", tr[i], c[i], outbuf[i]);\n"
    "    printf(\"d %d %d id %u\\n\", (int)d[0], (int)d[1], (unsigned)id);\n"
    "    opts_options none;\n"
    "    memset(&none, 0, sizeof none);\n"
    "    none.error = err;\n"
    "    none.error_size = sizeof err;\n"
    "    none.infeed = feed;\n"
    "    none.outfeed = outf;\n"
    "    rc = opts_run_with(&none, args, res, sc);\n"
    "    printf(\"missing %d %s\\n\", rc == opts_ERROR_NO_CUSTOM_CALL, err);\n"
    "    table[0].api_version = 1;\n"
    "    rc = opts_run_with(&o, args, res, sc);\n"
    "    printf(\"api %d\\n\", rc == opts_ERROR_CUSTOM_CALL_API);\n"
    "    table[0].api_version = 3;\n"
    "    p[3] = -1;\n"
    "    rc = opts_run_with(&o, args, res, sc);\n"
    "    printf(\"failed %d %s | %s\\n\", rc == opts_ERROR_CUSTOM_CALL_FAILED, err,\n"
    "           opts_error_string(rc));\n"
    "    p[3] = 5;\n"
    "    o.infeed = 0;\n"
    "    rc = opts_run_with(&o, args, res, sc);\n"
    "    printf(\"no infeed %d\\n\", rc == opts_ERROR_NO_HOST_CALLBACK);\n"
    "    rc = opts_run_with(&o, 0, res, sc);\n"
    "    printf(\"null %d %s\\n\", rc == opts_ERROR_NULL_ARGUMENT, opts_error_string(rc));\n"
    "    free(scratch);\n"
    "    return 0;\n"
    "}\n";

static void test_aot_options(void) {
    if (!have("gcc")) test_skip_all("no gcc");
    make_tmpdir();
    cxla_module *m = parse(options_module);
    cxla_status s = cpu_aot_write(m, NULL, tmpdir, "opts");
    CHECK_MSG(s == NULL, "%s", cxla_status_message(s));
    cxla_status_free(s);
    char path[512], cmd[2048];
    snprintf(path, sizeof path, "%s/main.c", tmpdir);
    s = cxla_write_file(path, options_driver, strlen(options_driver));
    CHECK(s == NULL);
    cxla_status_free(s);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 -o prog main.c opts.c "
             "-lm 2>&1 | head -20 && ./prog > out.txt",
             tmpdir);
    CHECK(system(cmd) == 0);
    char *text = NULL;
    size_t size = 0;
    snprintf(path, sizeof path, "%s/out.txt", tmpdir);
    s = cxla_read_file(path, &text, &size);
    CHECK(s == NULL);
    cxla_status_free(s);
    /* tr = p^T in column-major order: tr[a][b] = p[b][a] at a + 3b, i.e. 3b + a + 1 = 1..6;
     * c = 2p in p's column-major order; the outfeed sees p row-major (1..6). */
    const char *want = "rc 0\n"
                       "1 2 1\n2 8 2\n3 4 3\n4 10 4\n5 6 5\n6 12 6\n"
                       "d 7 -9 id 0\n"
                       "missing 1 c (custom-call): no function for custom-call target my_double\n"
                       "api 1\n"
                       "failed 1 c (custom-call): the custom call failed: negative input | "
                       "opts_run: a custom call failed\n"
                       "no infeed 1\n"
                       "null 1 opts_run: an argument pointer is NULL\n";
    CHECK_MSG(text && strcmp(text, want) == 0, "got:\n%s\nwant:\n%s", text ? text : "(none)", want);
    free(text);
    /* 32-bit and big-endian: no such libc or emulator here, so the generated C is only
     * checked to compile (-fsyntax-only) for i386 with SSE (FLT_EVAL_METHOD 0) and for
     * 32-bit big-endian PowerPC, against the x86-64 C headers (an empty gnu/stubs-32.h
     * stands in for the missing 32-bit one). Skipped where even that does not work. */
    const char *targets[] = {"gcc -m32 -msse2 -mfpmath=sse", "clang --target=powerpc-linux-gnu"};
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/shim/gnu' && : > '%s/shim/gnu/stubs-32.h'", tmpdir,
             tmpdir);
    CHECK(system(cmd) == 0);
    for (int t = 0; t < 2; t++) {
        char flags[600];
        snprintf(flags, sizeof flags,
                 "%s -std=c11 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -I'%s/shim' "
                 "-idirafter /usr/include/x86_64-linux-gnu",
                 targets[t], tmpdir);
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && printf '#include <stdint.h>\n#include <math.h>\n#include "
                 "<string.h>\nint x;\n' > probe.c && %s probe.c >/dev/null 2>&1",
                 tmpdir, flags);
        if (system(cmd) != 0) {
            fprintf(stderr, "aot: no %s with headers here: not checked\n", targets[t]);
            continue;
        }
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && %s opts.c > err.txt 2>&1; rc=$?; head -10 err.txt; exit $rc", tmpdir,
                 flags);
        CHECK_MSG(system(cmd) == 0, "the generated code does not compile with %s", targets[t]);
    }
    cxla_module_destroy(m);
    if (!test_failures) remove_tmpdir();
}

/* send / recv through the options' callbacks, and the async forms of one-device
 * collectives and of a wrapped computation. p = {1, 2} goes to channel 5; the recv on
 * channel 6 brings {10, 20}; the async-start adds them (11, 22); the all-gather and the
 * collective-permute of a group of one pass that on. */
static const char *const hostio_module =
    "HloModule hostio\n"
    "wrapped {\n  x = f32[2] parameter(0)\n  y = f32[2] parameter(1)\n"
    "  ROOT s = f32[2] add(x, y)\n}\n"
    "ENTRY e {\n"
    "  p = f32[2] parameter(0)\n"
    "  t0 = token[] after-all()\n"
    "  snd = (f32[2], u32[], token[]) send(p, t0), channel_id=5, is_host_transfer=true\n"
    "  sd = token[] send-done(snd), channel_id=5, is_host_transfer=true\n"
    "  rcv = (f32[2], u32[], token[]) recv(sd), channel_id=6\n"
    "  rd = (f32[2], token[]) recv-done(rcv), channel_id=6\n"
    "  r = f32[2] get-tuple-element(rd), index=0\n"
    "  as = ((f32[2], f32[2]), f32[2], s32[]) async-start(p, r), calls=wrapped\n"
    "  au = ((f32[2], f32[2]), f32[2], s32[]) async-update(as), calls=wrapped\n"
    "  ad = f32[2] async-done(au), calls=wrapped\n"
    "  ags = (f32[2], f32[2]) all-gather-start(ad), replica_groups={{0}}, dimensions={0}\n"
    "  agd = f32[2] all-gather-done(ags)\n"
    "  cps = (f32[2], f32[2], u32[], u32[]) collective-permute-start(agd), "
    "source_target_pairs={{0,0}}\n"
    "  ROOT cpd = f32[2] collective-permute-done(cps)\n"
    "}\n";

static const char *const hostio_driver =
    "#include <stdio.h>\n#include <string.h>\n#include \"hostio.h\"\n"
    "static float sent[2];\n"
    "static int snd(void *user, const char *instr, int64_t ch, int host, const void *const *l,\n"
    "               const size_t *bytes, int count) {\n"
    "    (void)user;\n"
    "    printf(\"send %s ch %d host %d count %d bytes %d\\n\", instr, (int)ch, host, count,\n"
    "           (int)bytes[0]);\n"
    "    memcpy(sent, l[0], 8);\n"
    "    return 0;\n"
    "}\n"
    "static int rcv(void *user, const char *instr, int64_t ch, int host, void *const *l,\n"
    "               const size_t *bytes, int count) {\n"
    "    float v[2] = {10, 20};\n"
    "    printf(\"recv %s ch %d host %d count %d bytes %d\\n\", instr, (int)ch, host, count,\n"
    "           (int)bytes[0]);\n"
    "    memcpy(l[0], v, 8);\n"
    "    return user != 0;\n"
    "}\n"
    "int main(void) {\n"
    "    float p[2] = {1, 2}, out[2] = {0, 0};\n"
    "    static char scratch[hostio_SCRATCH_SIZE + 64];\n"
    "    char *sc = scratch + (64 - (size_t)scratch % 64) % 64;\n"
    "    const void *args[1] = {p};\n"
    "    void *res[1] = {out};\n"
    "    char err[200] = \"\";\n"
    "    hostio_options o;\n"
    "    memset(&o, 0, sizeof o);\n"
    "    o.error = err;\n"
    "    o.error_size = sizeof err;\n"
    "    o.send = snd;\n"
    "    o.recv = rcv;\n"
    "    int rc = hostio_run_with(&o, args, res, sc);\n"
    "    printf(\"rc %d out %g %g sent %g %g\\n\", rc, out[0], out[1], sent[0], sent[1]);\n"
    "    o.user = &o;\n"
    "    rc = hostio_run_with(&o, args, res, sc);\n"
    "    printf(\"failed %d %s\\n\", rc == hostio_ERROR_RECV, err);\n"
    "    o.recv = 0;\n"
    "    rc = hostio_run_with(&o, args, res, sc);\n"
    "    printf(\"none %d %s\\n\", rc == hostio_ERROR_NO_HOST_CALLBACK, err);\n"
    "    return 0;\n"
    "}\n";

static void test_aot_send_recv_async(void) {
    if (!have("gcc")) test_skip_all("no gcc");
    make_tmpdir();
    cxla_module *m = parse(hostio_module);
    cxla_status s = cpu_aot_write(m, NULL, tmpdir, "hostio");
    CHECK_MSG(s == NULL, "%s", cxla_status_message(s));
    cxla_status_free(s);
    char path[512], cmd[2048];
    snprintf(path, sizeof path, "%s/main.c", tmpdir);
    CHECK_OK(cxla_write_file(path, hostio_driver, strlen(hostio_driver)));
    snprintf(cmd, sizeof cmd,
             "cd '%s' && gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 -o prog main.c "
             "hostio.c -lm 2>&1 | head -20 && ./prog > out.txt",
             tmpdir);
    CHECK(system(cmd) == 0);
    char *text = NULL;
    size_t size = 0;
    snprintf(path, sizeof path, "%s/out.txt", tmpdir);
    CHECK_OK(cxla_read_file(path, &text, &size));
    const char *want = "send snd ch 5 host 1 count 1 bytes 8\n"
                       "recv rd ch 6 host 0 count 1 bytes 8\n"
                       "rc 0 out 11 22 sent 1 2\n"
                       "send snd ch 5 host 1 count 1 bytes 8\n"
                       "recv rd ch 6 host 0 count 1 bytes 8\n"
                       "failed 1 rd (recv-done): the recv callback failed\n"
                       "send snd ch 5 host 1 count 1 bytes 8\n"
                       "none 1 rcv (recv): no recv callback in the options\n";
    CHECK_MSG(text && strcmp(text, want) == 0, "got:\n%s\nwant:\n%s", text ? text : "(none)", want);
    free(text);
    cxla_module_destroy(m);
    if (!test_failures) remove_tmpdir();
}

/* Forms the JIT leaves to the interpreter's handler (so that they stay out of
 * tests/hlo/cases, where test_cpu_handlers refuses them) but ahead-of-time code compiles,
 * bit for bit against the interpreter with gcc: the markers that are their operands on one
 * device (domain, with add-dependency, a Sharding target and opt-barrier), and a custom
 * fusion of a batched bf16 dot with two results (its fused computation run as a call). */
static void test_aot_markers(void) {
    if (!have("gcc")) test_skip_all("no gcc");
    const char *gcc[1] = {"gcc"};
    make_tmpdir();
    static const struct {
        const char *module, *args[2];
    } cases[] = {
        {"HloModule markers\n"
         "ENTRY e {\n"
         "  p = f32[3] parameter(0)\n"
         "  q = s8[2,2] parameter(1)\n"
         "  d = f32[3] domain(p), domain={kind=\"sharding\", entry={maximal device=0}, "
         "exit={replicated}}\n"
         "  n = f32[3] negate(d)\n"
         "  t = token[] after-all()\n"
         "  a = s8[2,2] add-dependency(q, t)\n"
         "  s = s8[2,2] custom-call(a), custom_call_target=\"Sharding\", sharding={replicated}\n"
         "  b = (f32[3], s8[2,2]) tuple(n, s)\n"
         "  o = (f32[3], s8[2,2]) opt-barrier(b)\n"
         "  o0 = f32[3] get-tuple-element(o), index=0\n"
         "  o1 = s8[2,2] get-tuple-element(o), index=1\n"
         "  ROOT r = (f32[3], s8[2,2], f32[3]) tuple(o0, o1, d)\n"
         "}\n",
         {"f32[3] {1.5, -0, nan}", "s8[2,2] {{-128, 127}, {0, 5}}"}},
        /* 514.5 and -1015.125 round once to bf16 (516, -1016); the reduce adds in bf16. */
        {"HloModule fused_dot_tuple\n"
         "add {\n  x = bf16[] parameter(0)\n  y = bf16[] parameter(1)\n"
         "  ROOT s = bf16[] add(x, y)\n}\n"
         "fused {\n  a = bf16[2,2,3] parameter(0)\n  b = bf16[2,3,2] parameter(1)\n"
         "  d = bf16[2,2,2] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, "
         "lhs_contracting_dims={2}, rhs_contracting_dims={1}\n"
         "  z = bf16[] constant(0)\n"
         "  r = bf16[2] reduce(d, z), dimensions={1,2}, to_apply=add\n"
         "  ROOT t = (bf16[2,2,2], bf16[2]) tuple(d, r)\n}\n"
         "ENTRY main {\n  a = bf16[2,2,3] parameter(0)\n  b = bf16[2,3,2] parameter(1)\n"
         "  ROOT f = (bf16[2,2,2], bf16[2]) fusion(a, b), kind=kCustom, calls=fused\n}\n",
         {"bf16[2,2,3] {{{1, 2, 3}, {4, 5, 6}}, {{0.5, -1, 2}, {3, 0.125, -4}}}",
          "bf16[2,3,2] {{{1, 0}, {0, 1}, {1, 1}}, {{2, 3}, {1, -1}, {0.5, 256}}}"}},
    };
    batch b;
    memset(&b, 0, sizeof b);
    b.index = 9100;
    cxla_strbuf_init(&b.includes);
    cxla_strbuf_init(&b.body);
    cxla_strbuf_init(&b.sources);
    int count = (int)(sizeof cases / sizeof cases[0]), skipped = total_skipped;
    int compiled = total_compiled;
    for (int i = 0; i < count; i++) {
        cxla_literal *args[2] = {NULL, NULL};
        for (int k = 0; k < 2; k++)
            CHECK_OK(cxla_literal_parse(cases[i].args[k], (size_t)-1, NULL, &args[k]));
        cxla_module *m = parse(cases[i].module);
        char where[64];
        snprintf(where, sizeof where, "markers case %d", i);
        CHECK_OK(batch_add(&b, m, args, 2, where));
        cxla_module_destroy(m);
        cxla_literal_free(args[0]);
        cxla_literal_free(args[1]);
    }
    CHECK_MSG(total_skipped == skipped && b.count == count,
              "a case does not compile ahead of time");
    batch_run(&b, "markers", gcc, 1);
    CHECK(total_compiled - compiled == count);
    if (!test_failures) remove_tmpdir();
}

/* ragged-all-to-all on one device fails as the interpreter fails, with its message: sizes
 * that recv_sizes does not expect, rows outside the input, rows outside the output. */
static const char *const ragged_module =
    "HloModule rg\n"
    "ENTRY e {\n"
    "  x = s32[4] parameter(0)\n  o = s32[3] parameter(1)\n  io = s32[2] parameter(2)\n"
    "  ss = s32[2] parameter(3)\n  oo = s32[2] parameter(4)\n  rs = s32[2] parameter(5)\n"
    "  ROOT my_r = s32[3] ragged-all-to-all(x, o, io, ss, oo, rs), replica_groups={}\n"
    "}\n";

static void test_aot_ragged_errors(void) {
    if (!have("gcc")) test_skip_all("no gcc");
    make_tmpdir();
    cxla_module *m = parse(ragged_module);
    cxla_status s = cpu_aot_write(m, NULL, tmpdir, "rg");
    CHECK_MSG(s == NULL, "%s", cxla_status_message(s));
    cxla_status_free(s);
    /* io, ss, oo, rs for each run: one that succeeds, then the three failures. */
    static const int32_t meta[4][4][2] = {
        {{0, 2}, {2, 1}, {0, 2}, {2, 1}},  /* rows 0..1 -> 0..1, row 2 -> 2 */
        {{0, 2}, {2, 1}, {0, 2}, {2, 2}},  /* update 1 sends 1 row, 2 expected */
        {{0, 3}, {2, 2}, {0, 0}, {2, 2}},  /* update 1: rows 3..5 of a 4-row input */
        {{0, 0}, {1, 1}, {0, -1}, {1, 1}}, /* update 1: to row -1 of the output */
    };
    cxla_strbuf prog;
    cxla_strbuf_init(&prog);
    cxla_strbuf_puts(&prog, "#include <stdio.h>\n#include <string.h>\n#include \"rg.h\"\n"
                            "int main(void) {\n"
                            "    int32_t x[4] = {10, 11, 12, 13}, o[3], r[3];\n"
                            "    static char scratch[rg_SCRATCH_SIZE + 64];\n"
                            "    char *sc = scratch + (64 - (size_t)scratch % 64) % 64;\n"
                            "    char err[300];\n"
                            "    rg_options opt;\n"
                            "    memset(&opt, 0, sizeof opt);\n"
                            "    opt.error = err;\n"
                            "    opt.error_size = sizeof err;\n");
    for (int k = 0; k < 4; k++) {
        cxla_strbuf_puts(&prog, "    {\n");
        for (int j = 0; j < 4; j++)
            cxla_strbuf_printf(&prog, "        int32_t m%d[2] = {%d, %d};\n", j, meta[k][j][0],
                               meta[k][j][1]);
        cxla_strbuf_puts(
            &prog, "        const void *args[6] = {x, o, m0, m1, m2, m3};\n"
                   "        void *res[1] = {r};\n"
                   "        o[0] = o[1] = o[2] = -1;\n"
                   "        err[0] = 0;\n"
                   "        int rc = rg_run_with(&opt, args, res, sc);\n"
                   "        printf(\"%d %d %d %d|%s\\n\", rc, (int)r[0], (int)r[1], (int)r[2],\n"
                   "               rc ? err : \"\");\n"
                   "    }\n");
    }
    cxla_strbuf_puts(&prog, "    return 0;\n}\n");
    char path[512], cmd[2048];
    snprintf(path, sizeof path, "%s/main.c", tmpdir);
    CHECK_OK(cxla_write_file(path, prog.data, prog.len));
    cxla_strbuf_free(&prog);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 -o prog main.c rg.c "
             "-lm 2>&1 | head -20 && ./prog > out.txt",
             tmpdir);
    CHECK(system(cmd) == 0);
    char *text = NULL;
    size_t size = 0;
    snprintf(path, sizeof path, "%s/out.txt", tmpdir);
    CHECK_OK(cxla_read_file(path, &text, &size));
    /* The interpreter's results and messages for the same runs. */
    cxla_strbuf want;
    cxla_strbuf_init(&want);
    for (int k = 0; k < 4; k++) {
        cxla_literal *args[6] = {0}, *got = NULL;
        const char *texts[2] = {"s32[4] {10, 11, 12, 13}", "s32[3] {-1, -1, -1}"};
        for (int j = 0; j < 2; j++)
            CHECK_OK(cxla_literal_parse(texts[j], (size_t)-1, NULL, &args[j]));
        for (int j = 0; j < 4; j++) {
            char lit[64];
            snprintf(lit, sizeof lit, "s32[2] {%d, %d}", meta[k][j][0], meta[k][j][1]);
            CHECK_OK(cxla_literal_parse(lit, (size_t)-1, NULL, &args[2 + j]));
        }
        cxla_status e = interp_run_module(m, NULL, (const cxla_literal *const *)args, 6, &got);
        if (e) {
            cxla_strbuf_printf(&want, "15 ");
            /* the results are unspecified after a failure: the driver prints them anyway */
            const char *bar = text ? text : "";
            for (int line = 0; line < k && bar; line++)
                bar = strchr(bar, '\n') ? strchr(bar, '\n') + 1 : NULL;
            const char *sp = bar ? strchr(bar, ' ') : NULL;
            const char *pipe = bar ? strchr(bar, '|') : NULL;
            if (sp && pipe && pipe > sp) cxla_strbuf_append(&want, sp + 1, (size_t)(pipe - sp - 1));
            cxla_strbuf_printf(&want, "|%s\n", cxla_status_message(e));
        } else {
            const int32_t *v = cxla_literal_data_const(got);
            cxla_strbuf_printf(&want, "0 %d %d %d|\n", (int)v[0], (int)v[1], (int)v[2]);
        }
        cxla_status_free(e);
        cxla_literal_free(got);
        for (int j = 0; j < 6; j++) cxla_literal_free(args[j]);
    }
    CHECK_MSG(text && want.data && strcmp(text, want.data) == 0, "got:\n%s\nwant:\n%s",
              text ? text : "(none)", want.data ? want.data : "");
    /* The first run succeeds and the others fail: the test is not vacuous. */
    CHECK(text && strncmp(text, "0 10 11 12|", 11) == 0);
    if (getenv("CXLA_TEST_VERBOSE")) fprintf(stderr, "%s", want.data ? want.data : "");
    /* Three failures, each with code 15. */
    int failures = 0;
    for (const char *p = text; p && (p = strstr(p, "\n15 ")); p++) failures++;
    CHECK(failures == 3);
    free(text);
    cxla_strbuf_free(&want);
    cxla_module_destroy(m);
    if (!test_failures) remove_tmpdir();
}

/* docs/aot.md's promises about what the generated code links against (check_objects): the
 * hand-written modules with custom calls, infeed, outfeed, send, recv and async steps, and
 * the modules of some case files (CXLA_AOT_SYMBOL_FILES="a.hlo b.hlo" for others, "all" for
 * every one), compiled with gcc: no writable data, no symbol but libm's and memcpy's kin. */
static void test_aot_symbols(void) {
    if (!have("gcc") || !have("nm")) test_skip_all("no gcc or nm");
    make_tmpdir();
    const char *const mods[][2] = {{options_module, "opts"}, {hostio_module, "hostio"}};
    for (size_t i = 0; i < sizeof mods / sizeof mods[0]; i++) {
        cxla_module *m = parse(mods[i][0]);
        cxla_status s = cpu_aot_write(m, NULL, tmpdir, mods[i][1]);
        CHECK_MSG(s == NULL, "%s", cxla_status_message(s));
        cxla_status_free(s);
        char src[700];
        snprintf(src, sizeof src, " '%s/%s.c'", tmpdir, mods[i][1]);
        CHECK(check_objects(mods[i][1], src) == 1);
        cxla_module_destroy(m);
    }
    /* While loops and conditionals, rng, sort, fft, complex linear algebra (libm's complex
     * functions), scan, topk, collectives on one device, dynamic shapes (sizes in the
     * functions' frames), the column sums of reduce (stack partials), fused dots. */
    const char *files = getenv("CXLA_AOT_SYMBOL_FILES");
    if (!files)
        files = "control.hlo rng.hlo sort.hlo fft.hlo linalg2_complex.hlo scan.hlo topk.hlo "
                "single_device.hlo collectives_in_place.hlo dynamic_control.hlo "
                "dynamic_moves.hlo reduce.hlo fusion_dot.hlo elementwise_unary_float.hlo";
    const char *dir = CXLA_SOURCE_DIR "/tests/hlo/cases";
    char *list = NULL;
    if (strcmp(files, "all") == 0) {
        cxla_strbuf all;
        cxla_strbuf_init(&all);
        DIR *d = opendir(dir);
        for (struct dirent *e; d && (e = readdir(d));) {
            size_t len = strlen(e->d_name);
            if (len > 4 && strcmp(e->d_name + len - 4, ".hlo") == 0)
                cxla_strbuf_printf(&all, "%s ", e->d_name);
        }
        if (d) closedir(d);
        list = all.data ? strdup(all.data) : strdup("");
        cxla_strbuf_free(&all);
    } else {
        list = strdup(files);
    }
    const char *gcc[1] = {"gcc"};
    int index = 0, before = total_compiled;
    symbols_only = true;
    for (char *save = NULL, *name = strtok_r(list, " ", &save); name;
         name = strtok_r(NULL, " ", &save)) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        run_file(path, 5000 + index++, gcc, 1, false);
    }
    symbols_only = false;
    free(list);
    fprintf(stderr, "aot: the objects of %d cases hold no writable data and call only libm\n",
            total_compiled - before);
    CHECK(total_compiled - before >= 50 || getenv("CXLA_AOT_SYMBOL_FILES"));
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

/* The header compiles as C++ too (extern "C"), and the files land where cpu_aot_write says. */
/* The library-like operations have generated kernels (src/cpu/emit_lib.c), so they compile
 * ahead of time (test_aot_cases runs them against the interpreter); those that need work
 * memory get it as a leaf of the scratch arena, passed after their results. */
static void test_aot_library_ops(void) {
    static const char *const modules[] = {
        "HloModule s\nlt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT c = pred[] compare(a, b), direction=LT\n}\n"
        "ENTRY e {\n  p = f32[4,6] parameter(0)\n"
        "  ROOT op = f32[4,6] sort(p), dimensions={1}, to_apply=lt\n}\n",
        "HloModule t\nENTRY e {\n  p = f32[3,90] parameter(0)\n"
        "  ROOT op = (f32[3,70], s32[3,70]) topk(p), k=70, largest=true\n}\n",
        "HloModule f\nENTRY e {\n  p = f32[2,40] parameter(0)\n"
        "  ROOT op = c64[2,21] fft(p), fft_type=RFFT, fft_length={40}\n}\n",
        "HloModule c\nENTRY e {\n  p = f64[2,3,3] parameter(0)\n"
        "  ROOT op = f64[2,3,3] cholesky(p), lower=true\n}\n",
        "HloModule t\nENTRY e {\n  a = f32[4,4] parameter(0)\n  b = f32[4,2] parameter(1)\n"
        "  ROOT op = f32[4,2] triangular-solve(a, b), left_side=true, lower=true, "
        "transpose_a=NO_TRANSPOSE\n}\n",
        "HloModule g\nENTRY e {\n  s = u64[2] parameter(0)\n"
        "  ROOT op = (u64[2], u32[5]) rng-bit-generator(s), algorithm=rng_three_fry\n}\n",
        "HloModule m\nf {\n  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n}\n"
        "ENTRY e {\n  p = f32[5] parameter(0)\n"
        "  ROOT op = f32[5] map(p), dimensions={0}, to_apply=f\n}\n",
        /* a topk of small k keeps its best in its results: no work memory */
        "HloModule t\nENTRY e {\n  p = f32[3,9] parameter(0)\n"
        "  ROOT op = (f32[3,2], s32[3,2]) topk(p), k=2, largest=true\n}\n",
    };
    static const bool scratch[] = {true, true, true, true, true, false, false, false};
    for (size_t i = 0; i < sizeof modules / sizeof *modules; i++) {
        cxla_module *m = parse(modules[i]);
        if (!m) continue;
        cxla_strbuf h, c, d;
        cxla_strbuf_init(&h);
        cxla_strbuf_init(&c);
        cxla_strbuf_init(&d);
        cxla_status s = cpu_aot_generate(m, NULL, "lib", &h, &c, &d);
        CHECK_MSG(s == NULL, "%s\n%s", s ? cxla_status_message(s) : "", modules[i]);
        cxla_status_free(s);
        /* The kernel is called with its results and, when it needs it, its work memory. */
        const char *call = c.data ? strstr(c.data, "void *r[") : NULL;
        CHECK_MSG(call != NULL, "no kernel call:\n%s", modules[i]);
        int64_t results =
            m->entry->root->shape.type == CXLA_TUPLE ? m->entry->root->shape.tuple_count : 1;
        if (call)
            CHECK_MSG(strtoll(call + 8, NULL, 10) == results + (scratch[i] ? 1 : 0),
                      "the kernel's out[] has the wrong length:\n%s", modules[i]);
        cxla_strbuf_free(&h);
        cxla_strbuf_free(&c);
        cxla_strbuf_free(&d);
        cxla_module_destroy(m);
    }
}

static void test_aot_write_and_cplusplus(void) {
    make_tmpdir();
    cxla_module *m = parse("HloModule w\n"
                           "ENTRY e {\n  x = f32[3] parameter(0)\n  y = f32[3] parameter(1)\n"
                           "  ROOT s = f32[3] add(x, y)\n}\n");
    cpu_aot_options o = {.prefix = "my_model", .target = CPU_AOT_NATIVE};
    cxla_status s = cpu_aot_write(m, &o, tmpdir, "w");
    CHECK(s == NULL);
    cxla_status_free(s);
    char path[512];
    snprintf(path, sizeof path, "%s/w.h", tmpdir);
    CHECK(access(path, R_OK) == 0);
    snprintf(path, sizeof path, "%s/w.c", tmpdir);
    CHECK(access(path, R_OK) == 0);
    snprintf(path, sizeof path, "%s/w_data.c", tmpdir);
    CHECK(access(path, R_OK) != 0); /* no big constants */
    char *text = NULL;
    size_t size = 0;
    snprintf(path, sizeof path, "%s/w.h", tmpdir);
    s = cxla_read_file(path, &text, &size);
    CHECK(s == NULL);
    cxla_status_free(s);
    CHECK(text && strstr(text, "int my_model_run(const void *const *args"));
    CHECK(text && strstr(text, "extern \"C\""));
    CHECK(text && strstr(text, "f32[3], row-major, 12 bytes"));
    free(text);
    if (have("g++")) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd,
                 "printf '#include \"w.h\"\\nint main() { return my_model_arg_count - 2; }\\n' > "
                 "'%s/main.cc' && g++ -std=c++11 -Wall -Wextra -Werror -I'%s' -c -o '%s/main.o' "
                 "'%s/main.cc'",
                 tmpdir, tmpdir, tmpdir, tmpdir);
        CHECK(system(cmd) == 0);
    }
    /* --target native compiled by gcc with -march=native, called from a C++ program: the
     * header's extern "C" gives the C symbols (a C++ name would not link). */
    if (have("g++") && have("gcc")) {
        static const char *const prog =
            "#include <cstdio>\n#include <cstdlib>\n#include \"w.h\"\n"
            "int main() {\n"
            "    float x[3] = {1, 2, 3}, y[3] = {0.5f, -4, 8}, r[3] = {0, 0, 0};\n"
            "    const void *args[2] = {x, y};\n"
            "    void *res[1] = {r};\n"
            "    void *scratch = std::malloc(my_model_scratch_size() + 64);\n"
            "    int rc = my_model_run(args, res, scratch);\n"
            "    std::free(scratch);\n"
            "    std::printf(\"%d %g %g %g %s\\n\", rc, r[0], r[1], r[2],\n"
            "                my_model_error_string(0));\n"
            "    return 0;\n"
            "}\n";
        snprintf(path, sizeof path, "%s/run.cc", tmpdir);
        CHECK_OK(cxla_write_file(path, prog, strlen(prog)));
        char cmd[2048];
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 -march=native -c "
                 "w.c -o w.o && g++ -std=c++11 -Wall -Wextra -Werror -I. run.cc w.o -lm -o run && "
                 "./run > run.txt",
                 tmpdir);
        CHECK(system(cmd) == 0);
        snprintf(path, sizeof path, "%s/run.txt", tmpdir);
        text = NULL;
        if (cxla_read_file(path, &text, &size) == NULL) {
            CHECK_MSG(strncmp(text, "0 1.5 -2 11 ", 12) == 0, "got %s", text);
        } else {
            test_fail(__FILE__, __LINE__, "no output from the C++ program");
        }
        free(text);
    }
    cxla_module_destroy(m);
    if (!test_failures) remove_tmpdir();
}

#endif /* AOT_BIG_ENDIAN */
#endif

#if defined(AOT_RANDOM) || defined(AOT_BIG_ENDIAN)
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
        TEST(test_aot_errors),      TEST(test_aot_library_ops),
        TEST(test_aot_options),     TEST(test_aot_send_recv_async),
        TEST(test_aot_topk),        TEST(test_aot_write_and_cplusplus),
        TEST(test_aot_symbols),     TEST(test_aot_ragged_errors),
        TEST(test_aot_markers),     TEST(test_aot_i386),
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
