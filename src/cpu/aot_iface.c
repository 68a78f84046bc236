/* The interface of ahead-of-time output (aot_internal.h): NAME.h (the calling convention,
 * each argument's and result's shape, element type and layout, the options and error
 * codes) and the end of NAME.c (the tables, NAME_run_with, NAME_run), around the
 * computations aot.c built.
 *
 * The entry's arguments and results are in the layouts the module declares
 * (entry_computation_layout, else its parameters' and root's layouts): the computations
 * work on row-major arrays, so an argument in another layout is copied into row-major
 * order in the scratch area first, and a result in another layout is computed into the
 * scratch area and copied out into the caller's buffer in its layout. Layouts with
 * padding, tiles or sub-byte elements have no ahead-of-time form. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/aot.h"
#include "cpu/aot_internal.h"
#include "cpu/emit.h"
#include "exec/rng.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

static size_t align64(size_t n) {
    return (n + 63) / 64 * 64;
}

static size_t alias_bytes(const cxla_shape *s) {
    size_t n = 0;
    return cxla_shape_byte_size(s, &n) ? 0 : n;
}

static bool row_major(const cxla_shape *s) {
    return !cxla_type_is_array(s->type) || s->type == CXLA_TOKEN || cxla_layout_is_default(s);
}

/* A declared leaf's layout must be a plain permutation of the dims. An element size in
 * bits (E(4): packed sub-byte integers) changes nothing: cxla keeps sub-byte elements one
 * per byte in every buffer (docs/semantics.md), the interface's included. */
static cxla_status check_layout(const cxla_shape *s, const char *what, int64_t i) {
    if (row_major(s)) return NULL;
    const cxla_layout *l = s->layout;
    if (!l->padded_dims && !l->tile_count && l->minor_to_major) return NULL;
    char *t = cxla_shape_to_string(s, CXLA_SHAPE_PRINT_DEFAULT);
    cxla_status st = cxla_error(CXLA_STATUS_UNIMPLEMENTED,
                                "cxla compile: entry %s %" PRId64
                                " has the layout %s: ahead-of-time code takes layouts that "
                                "permute the dims (no padding or tiles)",
                                what, i, t ? t : "?");
    free(t);
    return st;
}

/* Element strides of |s| in its layout, indexed by logical dim. */
static void layout_strides(const cxla_shape *s, int64_t *st) {
    int64_t m2m[CXLA_MAX_RANK];
    cxla_shape_minor_to_major(s, m2m);
    int64_t v = 1;
    for (int64_t j = 0; j < s->rank; j++) {
        st[m2m[j]] = v;
        v *= s->dims[m2m[j]];
    }
}

static void shape_comment(cxla_strbuf *b, const cxla_shape *s) {
    char *t = cxla_shape_to_string(s, CXLA_SHAPE_PRINT_NO_LAYOUT);
    size_t size = 0;
    if (cxla_shape_byte_size(s, &size)) size = 0;
    if (s->type == CXLA_TOKEN) {
        cxla_strbuf_puts(b, "token (0 bytes; any pointer, may be NULL)");
    } else if (row_major(s)) {
        cxla_strbuf_printf(b, "%s, row-major, %zu bytes", t ? t : "?", size);
    } else {
        int64_t m2m[CXLA_MAX_RANK];
        cxla_shape_minor_to_major(s, m2m);
        cxla_strbuf_printf(b, "%s, layout minor_to_major {", t ? t : "?");
        for (int64_t d = 0; d < s->rank; d++)
            cxla_strbuf_printf(b, "%s%" PRId64, d ? "," : "", m2m[d]);
        cxla_strbuf_printf(b, "} (not row-major), %zu bytes", size);
    }
    free(t);
}

/* The shapes of the entry's argument or result leaves as constant tables. */
static void leaf_tables(const aot *a, cxla_strbuf *src, const char *what,
                        const cxla_shape *const *ls, int64_t n) {
    int64_t n1 = n ? n : 1;
    cxla_strbuf_printf(src, "const size_t %s_%s_bytes[%" PRId64 "] = {", a->P, what, n1);
    for (int64_t i = 0; i < n; i++) {
        size_t size = 0;
        if (cxla_shape_byte_size(ls[i], &size)) size = 0;
        cxla_strbuf_printf(src, "%s%zu", i ? ", " : "", size);
    }
    cxla_strbuf_printf(src, "%s};\n", n ? "" : "0");
    cxla_strbuf_printf(src, "const int %s_%s_ranks[%" PRId64 "] = {", a->P, what, n1);
    for (int64_t i = 0; i < n; i++)
        cxla_strbuf_printf(src, "%s%d", i ? ", " : "", (int)ls[i]->rank);
    cxla_strbuf_printf(src, "%s};\n", n ? "" : "0");
    for (int64_t i = 0; i < n; i++) {
        cxla_strbuf_printf(src, "static const int64_t %s_%s%" PRId64 "_dims[%" PRId64 "] = {", a->P,
                           what, i, ls[i]->rank ? ls[i]->rank : 1);
        for (int64_t d = 0; d < ls[i]->rank; d++)
            cxla_strbuf_printf(src, "%s%" PRId64, d ? ", " : "", ls[i]->dims[d]);
        cxla_strbuf_printf(src, "%s};\n", ls[i]->rank ? "" : "0");
        if (!row_major(ls[i])) {
            int64_t st[CXLA_MAX_RANK];
            layout_strides(ls[i], st);
            cxla_strbuf_printf(src,
                               "static const int64_t %s_%s%" PRId64 "_strides[%" PRId64 "] = {",
                               a->P, what, i, ls[i]->rank);
            for (int64_t d = 0; d < ls[i]->rank; d++)
                cxla_strbuf_printf(src, "%s%" PRId64, d ? ", " : "", st[d]);
            cxla_strbuf_puts(src, "};\n");
        }
    }
    cxla_strbuf_printf(src, "const int64_t *const %s_%s_dims[%" PRId64 "] = {", a->P, what, n1);
    for (int64_t i = 0; i < n; i++)
        cxla_strbuf_printf(src, "%s%s_%s%" PRId64 "_dims", i ? ", " : "", a->P, what, i);
    cxla_strbuf_printf(src, "%s};\n", n ? "" : "0");
    cxla_strbuf_printf(src, "const char *const %s_%s_types[%" PRId64 "] = {", a->P, what, n1);
    for (int64_t i = 0; i < n; i++)
        cxla_strbuf_printf(src, "%s\"%s\"", i ? ", " : "", cxla_type_name(ls[i]->type));
    cxla_strbuf_printf(src, "%s};\n", n ? "" : "0");
}

/* The declared leaves of the entry: arguments and results, in the layouts the caller
 * uses. */
/* The entry's leaves as the caller passes them: in the layouts of entry_computation_layout
 * when the module has one, else row-major (as the interpreter returns results). */
static const cxla_shape *declared_param(const cxla_module *module, int64_t p) {
    if (module->has_entry_layout && module->entry_param_shapes && p < module->entry_param_count)
        return &module->entry_param_shapes[p];
    return &module->entry->params[p]->shape;
}

static cxla_status declared_leaves(const cxla_module *module, const cxla_shape ***out_as,
                                   int64_t *out_na, const cxla_shape ***out_rs, int64_t *out_nr,
                                   cxla_shape **out_copies) {
    const cxla_computation *e = module->entry;
    int64_t na = 0;
    for (int64_t p = 0; p < e->param_count; p++) na += aot_leaf_count(declared_param(module, p));
    const cxla_shape *res =
        module->has_entry_layout ? &module->entry_result_shape : &e->root->shape;
    int64_t nr = aot_leaf_count(res);
    *out_as = calloc((size_t)(na ? na : 1), sizeof(**out_as));
    *out_rs = calloc((size_t)(nr ? nr : 1), sizeof(**out_rs));
    if (!*out_as || !*out_rs) return OOM();
    int64_t k = 0;
    for (int64_t p = 0; p < e->param_count; p++)
        aot_leaf_shapes(declared_param(module, p), *out_as, &k);
    k = 0;
    aot_leaf_shapes(res, *out_rs, &k);
    *out_na = na;
    *out_nr = nr;
    if (!module->has_entry_layout) { /* row-major throughout: shallow copies without layouts */
        *out_copies = calloc((size_t)(na + nr + 1), sizeof(cxla_shape));
        if (!*out_copies) return OOM();
        for (int64_t i = 0; i < na + nr; i++) {
            const cxla_shape **x = i < na ? &(*out_as)[i] : &(*out_rs)[i - na];
            (*out_copies)[i] = **x;
            (*out_copies)[i].layout = NULL;
            *x = &(*out_copies)[i];
        }
        return NULL;
    }
    for (int64_t i = 0; i < na; i++)
        CXLA_RETURN_IF_ERROR(check_layout((*out_as)[i], "argument", i));
    for (int64_t i = 0; i < nr; i++) CXLA_RETURN_IF_ERROR(check_layout((*out_rs)[i], "result", i));
    return NULL;
}

/* A root that declares static dimensions for a dynamic value (a tuple or get-tuple-element,
 * which aot.c lets the entry's root do): the result leaf gets the value's dynamic
 * dimensions, as the interpreter returns the value in its dynamic form (docs/semantics.md,
 * "Dynamic shapes"), so its sizes go out through result_sizes (the entry's function writes
 * them from its root leaves' sizes) and its padding is zeroed. rs[k] is replaced by a copy
 * in *out_valued, whose flags live in *out_flags (both freed by the caller). */
static cxla_status value_dynamic(const acomp *entry, const cxla_shape **rs, int64_t nr,
                                 cxla_shape **out_valued, uint8_t (**out_flags)[CXLA_MAX_RANK]) {
    *out_valued = calloc((size_t)(nr ? nr : 1), sizeof(**out_valued));
    *out_flags = calloc((size_t)(nr ? nr : 1), sizeof(**out_flags));
    if (!*out_valued || !*out_flags) return OOM();
    for (int64_t k = 0; k < nr; k++) {
        const cxla_shape *v = entry->leaves[entry->root[k]].shape, *d = rs[k];
        if (!v || !v->dynamic || !cxla_type_is_array(d->type) || v->rank != d->rank ||
            v->rank > CXLA_MAX_RANK)
            continue;
        bool same = true, hides = false;
        for (int64_t i = 0; i < d->rank; i++) {
            same = same && v->dims[i] == d->dims[i];
            hides = hides || (v->dynamic[i] && !(d->dynamic && d->dynamic[i]));
        }
        if (!same || !hides) continue;
        (*out_valued)[k] = *d;
        for (int64_t i = 0; i < d->rank; i++)
            (*out_flags)[k][i] = (uint8_t)(v->dynamic[i] || (d->dynamic && d->dynamic[i]));
        (*out_valued)[k].dynamic = (*out_flags)[k];
        rs[k] = &(*out_valued)[k];
    }
    return NULL;
}

static void write_header(const aot *a, const cxla_module *module, const char *name,
                         const cxla_shape *const *as, int64_t na, const cxla_shape *const *rs,
                         int64_t nr, size_t scratch, cxla_strbuf *h) {
    const char *P = a->P;
    cxla_strbuf guard;
    cxla_strbuf_init(&guard);
    for (const char *q = P; *q; q++)
        cxla_strbuf_putc(&guard, (*q >= 'a' && *q <= 'z') ? (char)(*q - 'a' + 'A') : *q);
    cxla_strbuf_printf(
        h,
        "/* %s.h: module %s compiled ahead of time by cxla (`cxla compile`). Generated code;\n"
        " * do not edit.\n"
        " *\n"
        " * Plain C11: compile %s.c (and %s_data.c when there is one) with any C11 compiler\n"
        " * and link with the math library (-lm); no cxla library is needed. The code has no\n"
        " * globals but constants, allocates nothing and starts no threads: any number of\n"
        " * calls may run at once, each with its own scratch area and results. It runs the\n"
        " * module as one device (replica 0, partition 0).\n"
        " *\n"
        " * Results are those of cxla's interpreter, bit for bit, except f32, f16 and bf16\n"
        " * transcendental functions (exp, log, tanh, ...), which are within the bounds of\n"
        " * docs/semantics.md (generate with CXLA_CPU_EXACT_MATH=1 for the interpreter's own\n"
        " * expressions), when the C compiler does not fuse multiply-adds (gcc -std=c11 and\n"
        " * clang do not by default; with gcc -std=gnu* add -ffp-contract=off) and evaluates\n"
        " * float in float (FLT_EVAL_METHOD 0, as on x86-64 and AArch64; gcc -std=c11 for\n"
        " * s390x needs -fexcess-precision=fast). For speed, compile with -O2\n"
        " * -fno-math-errno (gcc, clang): errno is never read.\n"
        " *\n"
        " * Byte order: every array (arguments, results, infeed, outfeed, send, recv and\n"
        " * custom-call buffers) holds its elements in the native byte order of the machine\n"
        " * the code runs on, little- or big-endian (a complex element: its real part, then\n"
        " * its imaginary part). Data moved between machines of different orders must be\n"
        " * converted by the caller.\n"
        " *\n"
        " * Arguments, args[i]: dense arrays in the layout each line gives (the module's\n"
        " * entry_computation_layout), tuples flattened depth first:\n",
        name, module->name, name, name);
    for (int64_t i = 0; i < na; i++) {
        cxla_strbuf_printf(h, " *   args[%" PRId64 "]: ", i);
        shape_comment(h, as[i]);
        cxla_strbuf_puts(h, "\n");
    }
    if (na == 0) cxla_strbuf_puts(h, " *   (none)\n");
    cxla_strbuf_printf(h,
                       " * Results, results[i]: buffers the caller provides, written by "
                       "%s_run;\n * they must not overlap the arguments or each other:\n",
                       P);
    for (int64_t i = 0; i < nr; i++) {
        cxla_strbuf_printf(h, " *   results[%" PRId64 "]: ", i);
        shape_comment(h, rs[i]);
        cxla_strbuf_puts(h, "\n");
    }
    if (nr == 0) cxla_strbuf_puts(h, " *   (none)\n");
    if (a->alias_count) {
        cxla_strbuf_puts(h, " * Except that the module's input_output_alias lets these results be "
                            "the very\n * same pointer as their argument (not a partial overlap); "
                            "the result is then\n * computed in that buffer, in place (the "
                            "argument's value is consumed):\n");
        for (int64_t k = 0; k < a->alias_count; k++)
            cxla_strbuf_printf(h, " *   results[%" PRId64 "] may be args[%" PRId64 "]\n",
                               a->aliases[k].output, a->aliases[k].arg);
    }
    cxla_strbuf_printf(
        h,
        " */\n#ifndef %s_H_\n#define %s_H_\n\n#include <stddef.h>\n#include <stdint.h>\n\n"
        "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
        "/* The numbers of argument and result arrays. */\n"
        "enum { %s_arg_count = %" PRId64 ", %s_result_count = %" PRId64 " };\n\n"
        "/* The size in bytes of the scratch area %s_run needs (aligned to 64 bytes). */\n"
        "#define %s_SCRATCH_SIZE ((size_t)%zu)\n"
        "size_t %s_scratch_size(void);\n\n"
        "/* Each argument's and result's size in bytes, rank, dimensions and element type\n"
        " * (\"f32\", \"s32\", \"pred\" (one byte, 0 or 1), ...), by index. */\n"
        "extern const size_t %s_arg_bytes[];\n"
        "extern const int %s_arg_ranks[];\n"
        "extern const int64_t *const %s_arg_dims[];\n"
        "extern const char *const %s_arg_types[];\n"
        "extern const size_t %s_result_bytes[];\n"
        "extern const int %s_result_ranks[];\n"
        "extern const int64_t *const %s_result_dims[];\n"
        "extern const char *const %s_result_types[];\n\n",
        guard.data, guard.data, P, na, P, nr, P, P, scratch, P, P, P, P, P, P, P, P, P);
    aot_ops_header(a, h);
    if (a->bounds) aot_dyn_header(a, as, na, rs, nr, h);
    cxla_strbuf_printf(
        h,
        "/* Runs the module: reads args[0 .. %s_arg_count), writes results[0 ..\n"
        " * %s_result_count), uses |scratch| (%s_scratch_size() bytes, 64-byte aligned;\n"
        " * may be NULL when that is 0). |options| may be NULL when the module needs none.\n"
        " * Returns 0, or one of the codes above (results are then unspecified; for the\n"
        " * NULL-pointer codes, untouched). */\n"
        "int %s_run_with(const %s_options *options, const void *const *args,\n"
        "               void *const *results, void *scratch);\n"
        "/* %s_run_with without options. */\n"
        "int %s_run(const void *const *args, void *const *results, void *scratch);\n\n"
        "/* A message for a code %s_run returned (never NULL). */\n"
        "const char *%s_error_string(int code);\n\n"
        "#ifdef __cplusplus\n}\n#endif\n\n#endif /* %s_H_ */\n",
        P, P, P, P, P, P, P, P, P, guard.data);
    cxla_strbuf_free(&guard);
}

/* NAME_run_sized's part for dynamic shapes before the entry runs: the result sizes' array
 * (zo, whatever the caller wants), and each dynamic argument below its bounds copied to
 * |at_d| in the scratch area with zeros in its padding. */
static void put_dynamic_in(const aot *a, cxla_strbuf *c, const cxla_shape *const *as, int64_t na,
                           const cxla_shape *const *rs, int64_t nr, const size_t *at_d) {
    const char *P = a->P;
    int64_t total = 0;
    for (int64_t k = 0; k < nr; k++)
        if (cxla_type_is_array(rs[k]->type) && !cxla_shape_is_static(rs[k])) total += rs[k]->rank;
    /* Zeros first: the entry's function writes every one before a success, but gcc's
     * -Wmaybe-uninitialized cannot always see that once it is inlined (a root a tuple of
     * one set-dimension-size). */
    cxla_strbuf_printf(c, "    int64_t zr[%" PRId64 "] = {0};\n    int64_t *zo[%" PRId64 "] = {",
                       total ? total : 1, nr ? nr : 1);
    total = 0;
    for (int64_t k = 0; k < nr; k++) {
        bool dyn = cxla_type_is_array(rs[k]->type) && !cxla_shape_is_static(rs[k]);
        if (k) cxla_strbuf_puts(c, ", ");
        if (dyn)
            cxla_strbuf_printf(c, "zr + %" PRId64, total);
        else
            cxla_strbuf_puts(c, "0");
        if (dyn) total += rs[k]->rank;
    }
    cxla_strbuf_puts(c, nr ? "};\n" : "0};\n");
    cxla_strbuf_puts(c, "    (void)zr;\n    (void)zin;\n    (void)zout;\n");
    /* The padding filler is written with the dynamic helpers whether or not a step or an
     * argument needs it (a module whose dynamic values all stay inside sized kernels). */
    cxla_strbuf_printf(c, "    (void)%s_dfill;\n", a->P);
    for (int64_t i = 0; i < na; i++) {
        const cxla_shape *s = as[i];
        if (!cxla_type_is_array(s->type) || cxla_shape_is_static(s) || !alias_bytes(s)) continue;
        cxla_strbuf_printf(c, "    if (zin && zin[%" PRId64 "] && (0", i);
        for (int64_t d = 0; d < s->rank; d++)
            if (s->dynamic && s->dynamic[d])
                cxla_strbuf_printf(c, " || zin[%" PRId64 "][%" PRId64 "] < %" PRId64, i, d,
                                   s->dims[d]);
        cxla_strbuf_printf(c,
                           ")) {\n"
                           "        memcpy(sc + %zu, in[%" PRId64 "], %zu);\n"
                           "        %s_dfill(sc + %zu, %d, %s_arg%" PRId64 "_dims, zin[%" PRId64
                           "], %zu, 0);\n"
                           "        in[%" PRId64 "] = sc + %zu;\n"
                           "    }\n",
                           at_d[i], i, alias_bytes(s), P, at_d[i], (int)s->rank, P, i, i,
                           cxla_type_storage(s->type), i, at_d[i]);
    }
}

/* After the entry ran: the dynamic results' padding zeroed, their sizes to the caller; a
 * static result's sizes are its dims (docs/aot.md: result_sizes[k] receives them too). */
static void put_dynamic_out(const aot *a, cxla_strbuf *c, const cxla_shape *const *rs, int64_t nr) {
    for (int64_t k = 0; k < nr; k++) {
        const cxla_shape *s = rs[k];
        if (!cxla_type_is_array(s->type) || s->type == CXLA_TOKEN) continue;
        if (cxla_shape_is_static(s)) {
            if (s->rank == 0) continue;
            cxla_strbuf_printf(c,
                               "    if (zout && zout[%" PRId64 "]) memcpy(zout[%" PRId64
                               "], (const int64_t[]){",
                               k, k);
            for (int64_t d = 0; d < s->rank; d++)
                cxla_strbuf_printf(c, "%s%" PRId64, d ? ", " : "", s->dims[d]);
            cxla_strbuf_printf(c, "}, %" PRId64 " * sizeof(int64_t));\n", s->rank);
            continue;
        }
        if (alias_bytes(s))
            cxla_strbuf_printf(c,
                               "    %s_dfill(out[%" PRId64 "], %d, %s_result%" PRId64
                               "_dims, zo[%" PRId64 "], %zu, 0);\n",
                               a->P, k, (int)s->rank, a->P, k, k, cxla_type_storage(s->type));
        cxla_strbuf_printf(c,
                           "    if (zout && zout[%" PRId64 "]) memcpy(zout[%" PRId64
                           "], zo[%" PRId64 "], %" PRId64 " * sizeof(int64_t));\n",
                           k, k, k, s->rank);
    }
}

cxla_status aot_write_interface(aot *a, const cxla_module *module, const cpu_aot_options *o,
                                const char *name, const acomp *entry, const acomp *donated,
                                cxla_strbuf *out_header, cxla_strbuf *out_source,
                                cxla_strbuf *out_data) {
    const char *P = a->P;
    const cxla_shape **as = NULL, **rs = NULL;
    int64_t na = 0, nr = 0;
    cxla_shape *copies = NULL;
    cxla_status s = declared_leaves(module, &as, &na, &rs, &nr, &copies);
    if (!s && (na != entry->param_leaves || nr != entry->root_count))
        s = cxla_error(CXLA_STATUS_INTERNAL,
                       "cxla compile: the entry's declared signature does not match its code");
    cxla_shape *valued = NULL;
    uint8_t(*flags)[CXLA_MAX_RANK] = NULL;
    if (!s) s = value_dynamic(entry, rs, nr, &valued, &flags);
    /* Scratch: the computations', then a row-major copy of each leaf in another layout. */
    size_t scratch = align64(entry->total);
    if (donated && align64(donated->total) > scratch) scratch = align64(donated->total);
    size_t *at_a = calloc((size_t)(na ? na : 1), sizeof(size_t));
    size_t *at_r = calloc((size_t)(nr ? nr : 1), sizeof(size_t));
    if (!s && (!at_a || !at_r)) s = OOM();
    bool relayout = false;
    for (int64_t i = 0; !s && i < na + nr; i++) {
        const cxla_shape *x = i < na ? as[i] : rs[i - na];
        /* A dynamic leaf too: the whole array at its bounds, in its layout (the sizes say
         * which elements count, as in row-major order). */
        if (row_major(x)) continue;
        size_t size = 0;
        if (cxla_shape_byte_size(x, &size)) size = 0;
        (i < na ? at_a : at_r)[i < na ? i : i - na] = scratch;
        scratch += align64(size);
        relayout = true;
    }
    /* Dynamic arguments below their bounds: a copy with zeros in the padding (the
     * caller's padding may hold anything; set-dimension-size can bring it back). */
    size_t *at_d = calloc((size_t)(na ? na : 1), sizeof(size_t));
    if (!s && !at_d) s = OOM();
    for (int64_t i = 0; !s && a->bounds && i < na; i++) {
        if (!cxla_type_is_array(as[i]->type) || cxla_shape_is_static(as[i])) continue;
        at_d[i] = scratch;
        scratch += align64(alias_bytes(as[i]));
    }
    if (!s) write_header(a, module, name, as, na, rs, nr, scratch, out_header);
    cxla_strbuf *c = out_source;
    if (!s) {
        cxla_strbuf_printf(c,
                           "/* %s.c: module %s compiled ahead of time by cxla (see %s.h). "
                           "Generated code. */\n",
                           name, module->name, name);
        if (o->target == CPU_AOT_PORTABLE)
            cxla_strbuf_puts(c, "#define CXLA_PORTABLE 1 /* --target portable: no builtins */\n");
        cxla_strbuf_printf(c, "#include \"%s.h\"\n\n", name);
        cpu_emit_prelude(c);
        aot_ops_source(a, c);
        if (a->bounds) aot_dyn_helpers(a, c);
        aot_blas_source(a, c);
        aot_rng_source(a, c);
        cxla_strbuf_puts(c, "/* ---- constants ---- */\n");
        cxla_strbuf_append(c, a->consts.data ? a->consts.data : "", a->consts.len);
        cxla_strbuf_puts(c, "\n/* ---- kernels ---- */\n");
        cxla_strbuf_append(c, a->kernels.data ? a->kernels.data : "", a->kernels.len);
        cxla_strbuf_puts(c, "/* ---- computations (callees first) ---- */\n");
        cxla_strbuf_append(c, a->funcs.data ? a->funcs.data : "", a->funcs.len);
        cxla_strbuf_puts(c, "/* ---- the interface (see the header) ---- */\n");
        leaf_tables(a, c, "arg", as, na);
        leaf_tables(a, c, "result", rs, nr);
        if (relayout)
            cxla_strbuf_printf(
                c,
                "\n/* Copies an array of |rank| dims between row-major order and the layout\n"
                " * whose element strides are |strides| (to_layout: row-major -> layout). */\n"
                "static void %s_relayout(void *dst, const void *src, size_t es, int rank,\n"
                "                        const int64_t *dims, const int64_t *strides, int "
                "to_layout) {\n"
                "    int64_t idx[%d], n = 1, off = 0;\n"
                "    for (int d = 0; d < rank; d++) {\n"
                "        n *= dims[d];\n"
                "        idx[d] = 0;\n"
                "    }\n"
                "    for (int64_t i = 0; i < n; i++) {\n"
                "        if (to_layout)\n"
                "            memcpy((char *)dst + (size_t)off * es, (const char *)src + "
                "(size_t)i * es, es);\n"
                "        else\n"
                "            memcpy((char *)dst + (size_t)i * es, (const char *)src + "
                "(size_t)off * es, es);\n"
                "        for (int d = rank - 1; d >= 0; d--) {\n"
                "            off += strides[d];\n"
                "            if (++idx[d] < dims[d]) break;\n"
                "            off -= strides[d] * dims[d];\n"
                "            idx[d] = 0;\n"
                "        }\n"
                "    }\n"
                "}\n",
                P, CXLA_MAX_RANK);
        cxla_strbuf_printf(
            c,
            "\nsize_t %s_scratch_size(void) {\n    return %s_SCRATCH_SIZE;\n}\n\n"
            "const char *%s_error_string(int code) {\n"
            "    switch (code) {\n"
            "    case %s_OK: return \"ok\";\n"
            "    case %s_ERROR_NULL_ARGUMENT: return \"%s_run: an argument pointer is NULL\";\n"
            "    case %s_ERROR_NULL_RESULT: return \"%s_run: a result pointer is NULL\";\n"
            "    case %s_ERROR_NULL_SCRATCH: return \"%s_run: the scratch area is NULL\";\n"
            "    case %s_ERROR_NO_CUSTOM_CALL: return \"%s_run: a custom-call target is not in "
            "the options' table\";\n"
            "    case %s_ERROR_CUSTOM_CALL_API: return \"%s_run: a custom-call function was "
            "entered with another api_version than the instruction's\";\n"
            "    case %s_ERROR_CUSTOM_CALL_FAILED: return \"%s_run: a custom call failed\";\n"
            "    case %s_ERROR_NO_HOST_CALLBACK: return \"%s_run: the module needs an infeed, "
            "outfeed, send or recv callback that the options lack\";\n"
            "    case %s_ERROR_INFEED: return \"%s_run: the infeed callback failed\";\n"
            "    case %s_ERROR_OUTFEED: return \"%s_run: the outfeed callback failed\";\n"
            "    case %s_ERROR_ONEDNN: return \"%s_run: a oneDNN call failed\";\n"
            "    case %s_ERROR_SEND: return \"%s_run: the send callback failed\";\n"
            "    case %s_ERROR_RECV: return \"%s_run: the recv callback failed\";\n"
            "    case %s_ERROR_DYNAMIC_SIZE: return \"%s_run: a dynamic size is outside its "
            "bounds\";\n"
            "    case %s_ERROR_DYNAMIC_MISMATCH: return \"%s_run: dynamic sizes that an "
            "operation cannot take\";\n"
            "    case %s_ERROR_COLLECTIVE: return \"%s_run: a collective's sizes or offsets are "
            "wrong\";\n"
            "    default: return \"%s_run: unknown error code\";\n"
            "    }\n}\n\n",
            P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P,
            P, P, P, P, P, P);
        int64_t na1 = na ? na : 1, nr1 = nr ? nr : 1;
        /* Dynamic shapes: the body is NAME_run_sized's, which NAME_run_with and
         * NAME_run_dynamic call (aot_dyn_interface). */
        if (a->bounds)
            cxla_strbuf_printf(c,
                               "static int %s_run_sized(const %s_options *opt, const void *const "
                               "*args,\n"
                               "                        const int64_t *const *zin, void *const "
                               "*results,\n"
                               "                        int64_t *const *zout, void *scratch) {\n",
                               P, P);
        else
            cxla_strbuf_printf(c,
                               "int %s_run_with(const %s_options *opt, const void *const *args, "
                               "void *const *results,\n               void *scratch) {\n",
                               P, P);
        cxla_strbuf_printf(
            c,
            "    char none[1];\n"
            "    const void *in[%" PRId64 "];\n"
            "    void *out[%" PRId64 "];\n"
            "    if (%s_arg_count > 0 && !args)\n"
            "        return %s_fail(opt, %s_ERROR_NULL_ARGUMENT, \"%s_run: args is NULL\", 0);\n"
            "    for (int i = 0; i < %s_arg_count; i++)\n"
            "        if (!args[i] && %s_arg_bytes[i] > 0)\n"
            "            return %s_fail(opt, %s_ERROR_NULL_ARGUMENT, \"%s_run: an argument "
            "pointer is NULL\", 0);\n"
            "    if (%s_result_count > 0 && !results)\n"
            "        return %s_fail(opt, %s_ERROR_NULL_RESULT, \"%s_run: results is NULL\", 0);\n"
            "    for (int i = 0; i < %s_result_count; i++)\n"
            "        if (!results[i] && %s_result_bytes[i] > 0)\n"
            "            return %s_fail(opt, %s_ERROR_NULL_RESULT, \"%s_run: a result pointer "
            "is NULL\", 0);\n"
            "    if (!scratch && %s_SCRATCH_SIZE > 0)\n"
            "        return %s_fail(opt, %s_ERROR_NULL_SCRATCH, \"%s_run: the scratch area is "
            "NULL\", 0);\n"
            "    char *sc = scratch ? (char *)scratch : none;\n"
            "    for (int i = 0; i < %s_arg_count; i++) in[i] = args[i] ? args[i] : (const void "
            "*)none;\n"
            "    for (int i = 0; i < %s_result_count; i++) out[i] = results[i] ? results[i] : "
            "(void *)none;\n",
            na1, nr1, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P);
        for (int64_t i = 0; i < na; i++) {
            if (row_major(as[i])) continue;
            cxla_strbuf_printf(c,
                               "    /* args[%" PRId64 "] into row-major order */\n"
                               "    %s_relayout(sc + %zu, args[%" PRId64
                               "], %zu, %d, %s_arg%" PRId64 "_dims, %s_arg%" PRId64
                               "_strides, 0);\n"
                               "    in[%" PRId64 "] = sc + %zu;\n",
                               i, P, at_a[i], i, cxla_type_storage(as[i]->type), (int)as[i]->rank,
                               P, i, P, i, i, at_a[i]);
        }
        for (int64_t i = 0; i < nr; i++)
            if (!row_major(rs[i]))
                cxla_strbuf_printf(c, "    out[%" PRId64 "] = sc + %zu;\n", i, at_r[i]);
        if (a->bounds) put_dynamic_in(a, c, as, na, rs, nr, at_d);
        cxla_strbuf_printf(
            c,
            "    /* The random state of rng (the same per run, or the caller's). */\n"
            "    uint64_t rng[2] = {0x%" PRIx64 "u, 0};\n"
            "    if (opt && opt->rng_state) {\n"
            "        rng[0] = opt->rng_state[0];\n"
            "        rng[1] = opt->rng_state[1];\n"
            "    }\n"
            "    int rc;\n",
            (uint64_t)EXEC_RNG_INITIAL_STATE);
        if (donated) {
            /* Results the caller gave their aliased arguments' buffers: the entry built for
             * that; the pairs with two buffers then get a copy of the argument first. */
            cxla_strbuf_puts(c, "    if (");
            for (int64_t k = 0; k < a->alias_count; k++)
                cxla_strbuf_printf(c, "%sout[%" PRId64 "] == in[%" PRId64 "]", k ? " || " : "",
                                   a->aliases[k].output, a->aliases[k].arg);
            cxla_strbuf_puts(c, ") {\n");
            for (int64_t k = 0; k < a->alias_count; k++)
                cxla_strbuf_printf(c,
                                   "        if (out[%" PRId64 "] != in[%" PRId64 "]) {\n"
                                   "            memcpy(out[%" PRId64 "], in[%" PRId64 "], %zu);\n"
                                   "            in[%" PRId64 "] = out[%" PRId64 "];\n"
                                   "        }\n",
                                   a->aliases[k].output, a->aliases[k].arg, a->aliases[k].output,
                                   a->aliases[k].arg, alias_bytes(rs[a->aliases[k].output]),
                                   a->aliases[k].arg, a->aliases[k].output);
            cxla_strbuf_printf(c,
                               "        rc = %s_f%" PRId64 "(opt, rng, in, out, sc%s);\n"
                               "    } else {\n"
                               "        rc = %s_f%" PRId64 "(opt, rng, in, out, sc%s);\n"
                               "    }\n",
                               P, donated->fn, a->bounds ? ", zin, zo" : "", P, entry->fn,
                               a->bounds ? ", zin, zo" : "");
        } else {
            cxla_strbuf_printf(c, "    rc = %s_f%" PRId64 "(opt, rng, in, out, sc%s);\n", P,
                               entry->fn, a->bounds ? ", zin, zo" : "");
        }
        cxla_strbuf_printf(c, "    if (rc) return rc;\n"
                              "    if (opt && opt->rng_state) {\n"
                              "        opt->rng_state[0] = rng[0];\n"
                              "        opt->rng_state[1] = rng[1];\n"
                              "    }\n");
        /* Dynamic results: their padding zeroed in row-major order first (a result in
         * another layout is then copied out whole). */
        if (a->bounds) put_dynamic_out(a, c, rs, nr);
        for (int64_t i = 0; i < nr; i++) {
            if (row_major(rs[i])) continue;
            cxla_strbuf_printf(c,
                               "    /* results[%" PRId64 "] from row-major order */\n"
                               "    %s_relayout(results[%" PRId64 "], sc + %zu, %zu, %d, "
                               "%s_result%" PRId64 "_dims, %s_result%" PRId64 "_strides, 1);\n",
                               i, P, i, at_r[i], cxla_type_storage(rs[i]->type), (int)rs[i]->rank,
                               P, i, P, i);
        }
        cxla_strbuf_puts(c, "    return 0;\n}\n\n");
        if (a->bounds) aot_dyn_interface(a, as, na, rs, nr, c);
        cxla_strbuf_printf(c,
                           "int %s_run(const void *const *args, void *const *results, void "
                           "*scratch) {\n"
                           "    return %s_run_with(0, args, results, scratch);\n}\n",
                           P, P);
        if (a->data.len) {
            cxla_strbuf_printf(out_data,
                               "/* %s_data.c: the big constants of module %s (see %s.h). "
                               "Generated code. */\n#include <stdint.h>\n\n",
                               name, module->name, name);
            cxla_strbuf_append(out_data, a->data.data, a->data.len);
        }
    }
    if (!s && (out_header->failed || out_source->failed || out_data->failed || a->funcs.failed ||
               a->kernels.failed || a->consts.failed || a->data.failed || a->targets.failed))
        s = OOM();
    free(as);
    free(rs);
    free(at_a);
    free(at_r);
    free(at_d);
    free(copies);
    free(valued);
    free(flags);
    return s;
}
