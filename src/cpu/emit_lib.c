/* The emitter's library-like kernels (emit_lib.h): the dispatch, and sort, topk, map,
 * reduce-precision and bitcast-convert.
 *
 * sort and topk repeat the interpreter's bottom-up stable merge sort of a permutation
 * (src/interp/interp_sort.c) comparison for comparison, so that even a comparator that
 * is not a strict weak order (NaNs under LT) gives the interpreter's result. The
 * comparator is the interpreter's typed comparison when interp_match_comparator
 * recognizes it (written out for its type), else the comparator computation emitted as a
 * static C function of 2N scalars written by emit_scalar.c (cpu_emit_scalar_function). The
 * permutation and its merge buffer live in the scratch memory, one pair per slot (at most
 * SORT_SLOTS); the outer range runs over the slots, each sorting its block of rows. A topk
 * of small k keeps its k best in its results instead, with no scratch. map emits its computation
 * the same way and calls it per element. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/emit_lib.h"
#include "interp/interp_reduce.h"

#define F(...) cpu_emit_fmt(arena, __VA_ARGS__)

/* ---- shared --------------------------------------------------------------------------- */

void cpu_lib_head(const cxla_instr *instr, const char *name, cxla_strbuf *out) {
    cxla_strbuf text;
    cxla_strbuf_init(&text);
    cxla_hlo_print_instr(&text, instr, CXLA_HLO_STYLE_SHORT);
    for (char *p = text.data ? strstr(text.data, "*/") : NULL; p; p = strstr(p, "*/")) p[1] = ' ';
    for (char *p = text.data ? strstr(text.data, "/*") : NULL; p; p = strstr(p, "/*")) p[1] = ' ';
    for (char *p = text.data; p && *p; p++)
        if (*p == '\n') *p = ' ';
    if (text.data && text.len > 300) memcpy(text.data + 296, " ...", 5);
    cxla_strbuf_printf(out, "/* ---- %s: %s */\n", name, text.data ? text.data : instr->name);
    cpu_emit_buf_free(&text);
}

void cpu_lib_open(const char *name, int64_t range, cxla_strbuf *out) {
    cxla_strbuf_printf(out,
                       "void %s(void *const *out, const void *const *in, int64_t begin, "
                       "int64_t end);\n"
                       "void %s(void *const *out, const void *const *in, int64_t begin, "
                       "int64_t end) {\n"
                       "    (void)out;\n    (void)in;\n"
                       "    if (begin < 0) begin = 0;\n"
                       "    if (end > %" PRId64 ") end = %" PRId64 ";\n"
                       "    if (begin >= end) return;\n",
                       name, name, range, range);
}

static bool plain_shape(const cxla_shape *s) {
    return cxla_type_is_array(s->type) && s->type != CXLA_TOKEN && cxla_shape_is_static(s) &&
           cxla_layout_is_default(s);
}

bool cpu_lib_plain(const cxla_instr *instr) {
    const cxla_shape *s = &instr->shape;
    if (s->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < s->tuple_count; i++)
            if (!plain_shape(&s->elements[i])) return false;
    } else if (!plain_shape(s)) {
        return false;
    }
    for (int64_t k = 0; k < instr->operand_count; k++)
        if (!plain_shape(&instr->operands[k]->shape)) return false;
    return true;
}

int64_t cpu_lib_count(const cxla_shape *s) {
    int64_t n = 1;
    for (int64_t k = 0; k < s->rank; k++) n *= s->dims[k];
    return n;
}

static const char *uint_of(size_t bytes) {
    return bytes == 1 ? "uint8_t" : bytes == 2 ? "uint16_t" : bytes == 4 ? "uint32_t" : "uint64_t";
}

/* ---- scalar computations (comparators, map functions) as C functions ------------------ */

/* Element types kernels hold (emit_expr.c): the emitter's, sub-byte integers (one per byte)
 * and complex (cxla_c64, cxla_c128). */
static bool held_type(cxla_type t) {
    return cpu_emit_type_ok(t) || cpu_emit_subbyte(t) || cxla_type_is_complex(t);
}

/* Whether |c| (|nparams| scalar parameters) can be a C function giving |nr| scalars of
 * types |rts| (a root tuple of them when |nr| > 1): emit_scalar.c's forms. */
static bool scalar_comp_ok(const cxla_computation *c, int64_t nparams, const cxla_type *rts,
                           int64_t nr) {
    return cpu_emit_scalar_function_ok(c, nparams, rts, nr);
}

/* Writes |c| as `static inline RT fname(CT0 p0, CT1 p1, ...)` (emit_scalar.c). */
static cxla_status emit_scalar_fn(cxla_arena *arena, const cxla_computation *c, const char *fname,
                                  cxla_strbuf *out) {
    return cpu_emit_scalar_function(arena, c, fname, out);
}

/* ---- sort and topk ------------------------------------------------------------------------ */

/* The typed comparison of a recognized comparator (interp_comparator_holds) on values held
 * as the emitter holds them: `static inline int fname(CT a, CT b)`. */
static void emit_typed_less(const interp_comparator *c, const char *fname, cxla_strbuf *out) {
    cxla_type t = c->type;
    const char *CT = cpu_emit_ctype(t);
    cxla_strbuf_printf(out, "static inline int %s(%s a, %s b) {\n    int c;\n", fname, CT, CT);
    cxla_type_class k = cxla_type_class_of(t);
    if (k == CXLA_CLASS_SIGNED) {
        cxla_strbuf_puts(out, "    int64_t x = (int64_t)a, y = (int64_t)b;\n"
                              "    c = x < y ? -1 : x > y;\n");
    } else if (k != CXLA_CLASS_FLOAT) {
        cxla_strbuf_puts(out, "    uint64_t x = (uint64_t)a, y = (uint64_t)b;\n"
                              "    c = x < y ? -1 : x > y;\n");
    } else {
        if (cpu_emit_is_small(t))
            cxla_strbuf_printf(out,
                               "    double x = (double)cxla_ld_%s(a), y = (double)cxla_ld_%s(b);\n",
                               cxla_type_name(t), cxla_type_name(t));
        else
            cxla_strbuf_puts(out, "    double x = (double)a, y = (double)b;\n");
        if (c->canonical)
            cxla_strbuf_puts(
                out,
                "    x = isnan(x) ? cxla_f64_from_bits(0x7ff8000000000000ull) : x == 0 ? 0.0 : x;\n"
                "    y = isnan(y) ? cxla_f64_from_bits(0x7ff8000000000000ull) : y == 0 ? 0.0 : "
                "y;\n");
        if (c->canonical || c->total_order)
            cxla_strbuf_puts(
                out, "    int64_t kx = (int64_t)cxla_f64_bits(x), ky = (int64_t)cxla_f64_bits(y);\n"
                     "    kx = kx < 0 ? kx ^ INT64_MAX : kx;\n"
                     "    ky = ky < 0 ? ky ^ INT64_MAX : ky;\n"
                     "    c = kx < ky ? -1 : kx > ky;\n");
        else
            cxla_strbuf_puts(out, "    c = x < y ? -1 : x > y ? 1 : x == y ? 0 : 2;\n");
    }
    const char *holds = "0";
    switch (c->direction) {
    case INTERP_DIR_EQ: holds = "c == 0"; break;
    case INTERP_DIR_NE: holds = "c != 0"; break;
    case INTERP_DIR_LT: holds = "c == -1"; break;
    case INTERP_DIR_LE: holds = "c == -1 || c == 0"; break;
    case INTERP_DIR_GT: holds = "c == 1"; break;
    case INTERP_DIR_GE: holds = "c == 1 || c == 0"; break;
    default: break;
    }
    cxla_strbuf_printf(out, "    return %s;\n}\n", holds);
}

/* The types the interpreter's topk orders (interp_op_topk): every held type but complex;
 * sub-byte integers are held one per byte, sign-extended (s1, s2, s4) or zero-extended
 * (u2, u4), so the typed comparison of emit_typed_less orders them as their values. */
static bool ordered_type(cxla_type t) {
    cxla_type_class k = cxla_type_class_of(t);
    return held_type(t) && (k == CXLA_CLASS_PRED || k == CXLA_CLASS_SIGNED ||
                            k == CXLA_CLASS_UNSIGNED || k == CXLA_CLASS_FLOAT);
}

typedef struct sort_form {
    int64_t n, dim, len, inner, outer;
    interp_comparator cmp; /* direction NONE: the computation is called */
} sort_form;

static bool sort_form_of(const cxla_instr *instr, sort_form *f) {
    int64_t n = instr->operand_count;
    if (n < 1 || n > 64 || !cpu_lib_plain(instr)) return false;
    const cxla_shape *xs = &instr->operands[0]->shape;
    for (int64_t k = 0; k < n; k++) {
        const cxla_shape *s = &instr->operands[k]->shape;
        /* Payloads (and keys a comparator computation reads) may be complex. */
        if (!held_type(s->type) || s->rank != xs->rank) return false;
        for (int64_t d = 0; d < s->rank; d++)
            if (s->dims[d] != xs->dims[d]) return false;
        bool tuple = instr->shape.type == CXLA_TUPLE;
        if ((n > 1 && !tuple) || (tuple && instr->shape.tuple_count != n)) return false;
        if ((tuple ? instr->shape.elements[k].type : instr->shape.type) != s->type) return false;
    }
    int64_t nd = 0;
    const int64_t *d = cxla_instr_ints(instr, CXLA_ATTR_DIMENSIONS, &nd);
    if (nd != 1 || !d || d[0] < 0 || d[0] >= xs->rank) return false;
    const cxla_computation *comp = cxla_instr_called(instr, CXLA_ATTR_TO_APPLY);
    if (!comp) return false;
    f->n = n;
    f->dim = d[0];
    f->len = xs->dims[f->dim];
    f->inner = 1;
    f->outer = 1;
    for (int64_t j = f->dim + 1; j < xs->rank; j++) f->inner *= xs->dims[j];
    for (int64_t j = 0; j < f->dim; j++) f->outer *= xs->dims[j];
    f->cmp = interp_match_comparator(comp);
    if (f->cmp.direction != INTERP_DIR_NONE && f->cmp.type != xs->type)
        f->cmp.direction = INTERP_DIR_NONE;
    if (f->cmp.direction == INTERP_DIR_NONE) {
        static const cxla_type pred = CXLA_PRED;
        if (!scalar_comp_ok(comp, 2 * n, &pred, 1)) return false;
        for (int64_t k = 0; k < 2 * n; k++)
            if (comp->params[k]->shape.type != instr->operands[k / 2]->shape.type) return false;
    }
    return true;
}

/* The scratch of a sort (or a topk that sorts) holds SORT_SLOTS pairs of permutations at
 * most, one per iteration of the outer loop, each iteration sorting a block of rows in
 * turn: work memory of 2 x SORT_SLOTS rows, not 2 x all of them (a 1024 x 4096 sort held 32
 * MiB of permutations for 8 MiB of bf16 keys), and still enough iterations for the pool's
 * threads and for cancellation between chunks. */
enum { SORT_SLOTS = 64 };

static int64_t sort_slots(int64_t rows) {
    return rows < 1 ? 1 : rows < SORT_SLOTS ? rows : SORT_SLOTS;
}

/* The merge sort of one row (interp_sort.c's merge_sort) of |len| (a C expression)
 * elements: |less| is a C expression of two permutation entries named "P" and "Q"; the
 * sorted permutation ends in "src". */
static void emit_merge_sort(cxla_strbuf *out, const char *it, const char *len, const char *less_jm,
                            const char *less_ji) {
    cxla_strbuf_printf(out,
                       "        for (int64_t i = 0; i < %s; i++) src[i] = (%s)i;\n"
                       "        for (int64_t width = 1; width < %s; width *= 2) {\n"
                       "            for (int64_t lo = 0; lo < %s; lo += 2 * width) {\n"
                       "                const int64_t mid = lo + width < %s ? lo + width : %s;\n"
                       "                const int64_t hi = mid + width < %s ? mid + width : %s;\n"
                       "                int64_t i = lo, j = mid, k = lo;\n"
                       "                /* Runs already in order need no merging. */\n"
                       "                if (mid < hi && !(%s)) {\n"
                       "                    memcpy(dst + lo, src + lo, (size_t)(hi - lo) * "
                       "sizeof(%s));\n"
                       "                    continue;\n"
                       "                }\n"
                       "                while (i < mid && j < hi) {\n"
                       "                    if (%s)\n"
                       "                        dst[k++] = src[j++];\n"
                       "                    else\n"
                       "                        dst[k++] = src[i++];\n"
                       "                }\n"
                       "                while (i < mid) dst[k++] = src[i++];\n"
                       "                while (j < hi) dst[k++] = src[j++];\n"
                       "            }\n"
                       "            %s *t = src;\n"
                       "            src = dst;\n"
                       "            dst = t;\n"
                       "        }\n",
                       len, it, len, len, len, len, len, len, less_jm, it, less_ji, it);
}

/* The offset of the row element at permutation entry |p|. */
static const char *element_at(cxla_arena *arena, const char *p, int64_t inner) {
    return inner == 1 ? F("base + (int64_t)%s", p) : F("base + (int64_t)%s * %" PRId64, p, inner);
}

/* |sized|: the sort of a bounded dynamic shape (emitted at its bounds; cpu_emit_sort_sized). */
static cxla_status emit_sort(cxla_arena *arena, const cxla_instr *instr, const char *name,
                             bool sized, cxla_strbuf *out, cpu_kernel_info *info) {
    sort_form f;
    if (!sort_form_of(instr, &f))
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED, "cpu backend: cannot emit sort %s",
                          instr->name);
    const char *it = f.len <= INT32_MAX ? "int32_t" : "int64_t";
    size_t its = f.len <= INT32_MAX ? 4 : 8;
    int64_t rows = f.len > 0 ? f.outer * f.inner : 0;
    cpu_lib_head(instr, name, out);
    /* less(P, Q): the element at permutation entry P goes before the one at Q. */
    const char *less_fn = F("%s_less", name);
    if (f.cmp.direction != INTERP_DIR_NONE) {
        emit_typed_less(&f.cmp, F("%s_cmp", name), out);
        cxla_strbuf_printf(out,
                           "static inline int %s(const %s *restrict x0, int64_t p, int64_t q) {\n"
                           "    return %s_cmp(x0[p], x0[q]);\n}\n",
                           less_fn, cpu_emit_ctype(instr->operands[0]->shape.type), name);
    } else {
        CXLA_RETURN_IF_ERROR(emit_scalar_fn(arena, cxla_instr_called(instr, CXLA_ATTR_TO_APPLY),
                                            F("%s_cmp", name), out));
        cxla_strbuf_printf(out, "static inline int %s(", less_fn);
        for (int64_t k = 0; k < f.n; k++)
            cxla_strbuf_printf(out, "const %s *restrict x%" PRId64 ", ",
                               cpu_emit_ctype(instr->operands[k]->shape.type), k);
        cxla_strbuf_printf(out, "int64_t p, int64_t q) {\n    return %s_cmp(", name);
        for (int64_t k = 0; k < f.n; k++)
            cxla_strbuf_printf(out, "%sx%" PRId64 "[p], x%" PRId64 "[q]", k ? ", " : "", k, k);
        cxla_strbuf_puts(out, ") != 0;\n}\n");
    }
    int64_t nx = f.cmp.direction != INTERP_DIR_NONE ? 1 : f.n;
    cxla_strbuf xs;
    cxla_strbuf_init(&xs);
    for (int64_t k = 0; k < nx; k++) cxla_strbuf_printf(&xs, "x%" PRId64 ", ", k);
    const char *pm = element_at(arena, "src[mid]", f.inner);
    const char *pm1 = element_at(arena, "src[mid - 1]", f.inner);
    const char *pj = element_at(arena, "src[j]", f.inner),
               *pi = element_at(arena, "src[i]", f.inner);
    const char *less_jm = F("%s(%s%s, %s)", less_fn, xs.data ? xs.data : "", pm, pm1);
    const char *less_ji = F("%s(%s%s, %s)", less_fn, xs.data ? xs.data : "", pj, pi);
    cpu_emit_buf_free(&xs);

    cpu_lib_open(name, sort_slots(rows), out);
    for (int64_t k = 0; k < f.n; k++) {
        cxla_type t = instr->operands[k]->shape.type;
        size_t es = cxla_type_storage(t);
        cxla_strbuf_printf(out, "    const %s *restrict x%" PRId64 " = in[%" PRId64 "];\n",
                           cpu_emit_ctype(t), k, k);
        cxla_strbuf_printf(out, "    %s *restrict y%" PRId64 " = out[%" PRId64 "];\n",
                           es == 16 ? "cxla_c128" : uint_of(es), k, k);
    }
    cxla_strbuf_printf(out, "    %s *const scratch = out[%" PRId64 "];\n", it, f.n);
    if (sized && rows > 0) {
        /* The run-time sizes (in[n]): rows outside them and each row's tail past its size
         * are zeros, as the interpreter leaves a result's padding. */
        const cxla_shape *x0s = &instr->operands[0]->shape;
        cxla_strbuf_printf(out,
                           "    const int64_t *restrict dz = in[%" PRId64 "];\n"
                           "    const int64_t len = dz[%" PRId64 "];\n"
                           "    static const int64_t bound[%" PRId64 "] = {",
                           f.n, f.dim, x0s->rank);
        for (int64_t d = 0; d < x0s->rank; d++)
            cxla_strbuf_printf(out, "%s%" PRId64, d ? ", " : "", x0s->dims[d]);
        cxla_strbuf_puts(out, "};\n");
    }
    if (rows == 0) { /* an empty row or none: nothing to write */
        for (int64_t k = 0; k < f.n; k++)
            cxla_strbuf_printf(out, "    (void)x%" PRId64 ";\n    (void)y%" PRId64 ";\n", k, k);
        cxla_strbuf_puts(out, "    (void)scratch;\n}\n\n");
        if (info) info->range = 1;
        return NULL;
    }
    /* The outer range runs over the slots of the scratch (sort_slots); each sorts its
     * block of rows one after the other in its own pair of permutations. */
    int64_t slots = sort_slots(rows);
    cxla_strbuf_printf(
        out,
        "    for (int64_t slot = begin; slot < end && slot < %" PRId64 "; slot++) {\n"
        "    const int64_t row_end = (slot + 1) * %" PRId64 " / %" PRId64 ";\n"
        "    for (int64_t row = slot * %" PRId64 " / %" PRId64 "; row < row_end; row++) {\n"
        "        const int64_t base = row / %" PRId64 " * %" PRId64 " + row %% %" PRId64 ";\n"
        "        %s *src = scratch + slot * %" PRId64 ", *dst = src + %" PRId64 ";\n",
        slots, rows, slots, rows, slots, f.inner, f.len * f.inner, f.inner, it, 2 * f.len, f.len);
    if (sized) {
        /* Whether the row lies inside the sizes in every other dimension. */
        cxla_strbuf_printf(out,
                           "        int inside = 1;\n"
                           "        for (int64_t d = %" PRId64 ", q = row / %" PRId64
                           "; d >= 0; q /= bound[d--])\n"
                           "            inside = inside && q %% bound[d] < dz[d];\n"
                           "        for (int64_t d = %" PRId64 ", q = row %% %" PRId64
                           "; d > %" PRId64 "; q /= bound[d--])\n"
                           "            inside = inside && q %% bound[d] < dz[d];\n"
                           "        const int64_t used = inside ? len : 0;\n"
                           "        for (int64_t i = used; i < %" PRId64 "; i++) {\n"
                           "            const int64_t to = base + i * %" PRId64 ";\n",
                           f.dim - 1, f.inner, instr->operands[0]->shape.rank - 1, f.inner, f.dim,
                           f.len, f.inner);
        for (int64_t k = 0; k < f.n; k++)
            cxla_strbuf_printf(
                out, "            memset(&y%" PRId64 "[to], 0, sizeof(y%" PRId64 "[to]));\n", k, k);
        cxla_strbuf_puts(out, "        }\n        if (used == 0) continue;\n");
    }
    emit_merge_sort(out, it, sized ? "len" : F("%" PRId64, f.len), less_jm, less_ji);
    if (sized)
        cxla_strbuf_puts(out, "        for (int64_t i = 0; i < len; i++) {\n");
    else
        cxla_strbuf_printf(out, "        for (int64_t i = 0; i < %" PRId64 "; i++) {\n", f.len);
    cxla_strbuf_printf(out, "            const int64_t from = %s, to = base + i * %" PRId64 ";\n",
                       pi, f.inner);
    for (int64_t k = 0; k < f.n; k++) {
        size_t es = cxla_type_storage(instr->operands[k]->shape.type);
        cxla_strbuf_printf(out,
                           "            y%" PRId64 "[to] = ((const %s *)x%" PRId64 ")[from];\n", k,
                           es == 16 ? "cxla_c128" : uint_of(es), k);
    }
    cxla_strbuf_puts(out, "        }\n    }\n    }\n}\n\n");
    if (info) {
        info->range = slots;
        info->scratch = (size_t)slots * 2 * (size_t)(f.len ? f.len : 1) * its;
        double bytes = 0;
        for (int64_t k = 0; k < f.n; k++)
            bytes += 2.0 * (double)cpu_lib_count(&instr->operands[k]->shape) *
                     (double)cxla_type_storage(instr->operands[k]->shape.type);
        double lg = 1;
        for (int64_t l = 1; l < f.len; l *= 2) lg++;
        info->cost = bytes + (double)(rows * f.len) * lg * 16.0;
    }
    return NULL;
}

cxla_status cpu_emit_sort_sized(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                                cpu_kernel_info *out_info) {
    cpu_kernel_info local;
    cpu_kernel_info *info = out_info ? out_info : &local;
    memset(info, 0, sizeof(*info));
    sort_form f;
    if (instr->opcode != CXLA_OP_SORT || !sort_form_of(instr, &f))
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED, "cpu backend: cannot emit sort %s",
                          instr->name);
    cxla_arena *arena = cxla_arena_create();
    if (!arena) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    cpu_emit_fmt_reset();
    cxla_status s = emit_sort(arena, instr, name, true, out, info);
    if (!s && (out->failed || cpu_emit_fmt_failed()))
        s = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory emitting %s", instr->name);
    cxla_arena_destroy(arena);
    return s;
}

static bool topk_ok(const cxla_instr *instr) {
    if (instr->operand_count != 1 || !cpu_lib_plain(instr)) return false;
    const cxla_shape *xs = &instr->operands[0]->shape, *rs = &instr->shape;
    int64_t k = -1;
    cxla_instr_int(instr, CXLA_ATTR_K, &k);
    if (!ordered_type(xs->type) || xs->rank < 1 || rs->type != CXLA_TUPLE || rs->tuple_count != 2 ||
        rs->elements[0].type != xs->type || rs->elements[1].type != CXLA_S32)
        return false;
    int64_t len = xs->dims[xs->rank - 1];
    return k >= 0 && k <= len && len <= INT32_MAX;
}

/* A topk of k at most TOPK_SELECT_MAX keeps its k best so far in the result row itself,
 * in order (the output indices say where each lies in the input row): each element of the
 * row goes in after those not worse than it, the last falling out, when it is better than
 * the last. XLA's total order with the lower index first among equal values is a strict
 * order on (value, index), whose first k are the stable sort's first k: the same result
 * as the merge sort's, with no scratch and about one comparison per element. Larger k
 * sort the row (the insertions would cost k per element). */
enum { TOPK_SELECT_MAX = 64 };

static cxla_status emit_topk(cxla_arena *arena, const cxla_instr *instr, const char *name,
                             cxla_strbuf *out, cpu_kernel_info *info) {
    if (!topk_ok(instr))
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED, "cpu backend: cannot emit topk %s",
                          instr->name);
    const cxla_shape *xs = &instr->operands[0]->shape;
    cxla_type t = xs->type;
    int64_t k = 0, len = xs->dims[xs->rank - 1];
    cxla_instr_int(instr, CXLA_ATTR_K, &k);
    bool largest =
        !cxla_instr_attr(instr, CXLA_ATTR_LARGEST) || cxla_instr_bool(instr, CXLA_ATTR_LARGEST);
    int64_t rows = len > 0 && k > 0 ? cpu_lib_count(xs) / len : 0;
    bool select = k <= TOPK_SELECT_MAX;
    int64_t slots = select ? (rows > 0 ? rows : 1) : sort_slots(rows);
    /* XLA's total order, greater (smaller) first: the interpreter's comparator. */
    interp_comparator c = {largest ? INTERP_DIR_GT : INTERP_DIR_LT, true, false, t};
    cpu_lib_head(instr, name, out);
    emit_typed_less(&c, F("%s_cmp", name), out);
    cpu_lib_open(name, slots, out);
    size_t es = cxla_type_storage(t);
    cxla_strbuf_printf(out,
                       "    const %s *restrict x0 = in[0];\n"
                       "    %s *restrict values = out[0];\n"
                       "    int32_t *restrict indices = out[1];\n"
                       "    (void)x0;\n    (void)values;\n    (void)indices;\n",
                       cpu_emit_ctype(t), uint_of(es));
    if (select) {
        cxla_strbuf_printf(
            out,
            "    for (int64_t row = begin; row < end && row < %" PRId64 "; row++) {\n"
            "        const int64_t base = row * %" PRId64 ";\n"
            "        %s *restrict v = values + row * %" PRId64 ";\n"
            "        int32_t *restrict ix = indices + row * %" PRId64 ";\n"
            "        int64_t n = 0;\n"
            "        for (int64_t i = 0; i < %" PRId64 "; i++) {\n"
            "            if (n == %" PRId64 " && !%s_cmp(x0[base + i], x0[base + ix[n - 1]]))\n"
            "                continue; /* not better than the last kept */\n"
            "            int64_t at = n < %" PRId64 " ? n : n - 1;\n"
            "            while (at > 0 && %s_cmp(x0[base + i], x0[base + ix[at - 1]])) {\n"
            "                v[at] = v[at - 1];\n"
            "                ix[at] = ix[at - 1];\n"
            "                at--;\n"
            "            }\n"
            "            v[at] = ((const %s *)x0)[base + i];\n"
            "            ix[at] = (int32_t)i;\n"
            "            if (n < %" PRId64 ") n++;\n"
            "        }\n    }\n}\n\n",
            rows, len, uint_of(es), k, k, len, k, name, k, name, uint_of(es), k);
    } else {
        cxla_strbuf_printf(
            out,
            "    int32_t *const scratch = out[2];\n"
            "    for (int64_t slot = begin; slot < end && slot < %" PRId64 "; slot++) {\n"
            "    const int64_t row_end = (slot + 1) * %" PRId64 " / %" PRId64 ";\n"
            "    for (int64_t row = slot * %" PRId64 " / %" PRId64 "; row < row_end; row++) {\n"
            "        const int64_t base = row * %" PRId64 ";\n"
            "        int32_t *src = scratch + slot * %" PRId64 ", *dst = src + %" PRId64 ";\n",
            slots, rows, slots, rows, slots, len, 2 * len, len);
        emit_merge_sort(out, "int32_t", F("%" PRId64, len),
                        F("%s_cmp(x0[base + src[mid]], x0[base + src[mid - 1]])", name),
                        F("%s_cmp(x0[base + src[j]], x0[base + src[i]])", name));
        cxla_strbuf_printf(out,
                           "        for (int64_t i = 0; i < %" PRId64 "; i++) {\n"
                           "            values[row * %" PRId64 " + i] = ((const %s *)x0)[base + "
                           "src[i]];\n"
                           "            indices[row * %" PRId64 " + i] = src[i];\n"
                           "        }\n    }\n    }\n}\n\n",
                           k, k, uint_of(es), k);
    }
    if (info) {
        info->range = slots;
        info->scratch = select ? 0 : (size_t)slots * 2 * (size_t)(len ? len : 1) * 4;
        double lg = 1;
        for (int64_t l = 1; l < len; l *= 2) lg++;
        info->cost = (double)cpu_lib_count(xs) * ((double)es + (select ? 16.0 : lg * 16.0));
    }
    return NULL;
}

/* ---- map ---------------------------------------------------------------------------------- */

static bool map_ok(const cxla_instr *instr) {
    int64_t n = instr->operand_count;
    if (n < 1 || n > 64 || !cpu_lib_plain(instr) || instr->shape.type == CXLA_TUPLE ||
        !cpu_emit_type_ok(instr->shape.type))
        return false;
    const cxla_computation *c = cxla_instr_called(instr, CXLA_ATTR_TO_APPLY);
    if (!scalar_comp_ok(c, n, &instr->shape.type, 1)) return false;
    for (int64_t k = 0; k < n; k++) {
        const cxla_shape *s = &instr->operands[k]->shape;
        if (c->params[k]->shape.type != s->type || s->rank != instr->shape.rank) return false;
        for (int64_t d = 0; d < s->rank; d++)
            if (s->dims[d] != instr->shape.dims[d]) return false;
    }
    return true;
}

enum { MAP_BLOCK = 1024 };

static cxla_status emit_map(cxla_arena *arena, const cxla_instr *instr, const char *name,
                            cxla_strbuf *out, cpu_kernel_info *info) {
    int64_t n = instr->operand_count, count = cpu_lib_count(&instr->shape);
    int64_t blocks = (count + MAP_BLOCK - 1) / MAP_BLOCK;
    cpu_lib_head(instr, name, out);
    CXLA_RETURN_IF_ERROR(
        emit_scalar_fn(arena, cxla_instr_called(instr, CXLA_ATTR_TO_APPLY), F("%s_fn", name), out));
    cpu_lib_open(name, blocks > 0 ? blocks : 1, out);
    for (int64_t k = 0; k < n; k++)
        cxla_strbuf_printf(out, "    const %s *restrict x%" PRId64 " = in[%" PRId64 "];\n",
                           cpu_emit_ctype(instr->operands[k]->shape.type), k, k);
    cxla_strbuf_printf(out, "    %s *restrict y = out[0];\n", cpu_emit_ctype(instr->shape.type));
    cxla_strbuf_printf(out,
                       "    const int64_t lo = begin * %d, hi = end * %d < %" PRId64
                       " ? end * %d : %" PRId64 ";\n"
                       "    for (int64_t i = lo; i < hi; i++) y[i] = %s_fn(",
                       MAP_BLOCK, MAP_BLOCK, count, MAP_BLOCK, count, name);
    for (int64_t k = 0; k < n; k++) cxla_strbuf_printf(out, "%sx%" PRId64 "[i]", k ? ", " : "", k);
    cxla_strbuf_puts(out, ");\n}\n\n");
    if (info) {
        info->range = blocks > 0 ? blocks : 1;
        info->cost = (double)count * (double)(n + 1) * 8.0;
    }
    return NULL;
}

/* ---- reduce-precision and bitcast-convert ------------------------------------------------ */

static bool reduce_precision_ok(const cxla_instr *instr) {
    int64_t e = 0, m = 0;
    cxla_type t = instr->shape.type;
    return instr->operand_count == 1 && cpu_lib_plain(instr) && cxla_type_is_float(t) &&
           cpu_emit_type_ok(t) && instr->operands[0]->shape.type == t &&
           cxla_instr_int(instr, CXLA_ATTR_EXPONENT_BITS, &e) &&
           cxla_instr_int(instr, CXLA_ATTR_MANTISSA_BITS, &m) && e >= 1 && m >= 0 && e < 64 &&
           m < 64;
}

/* XLA's reduce-precision on the bits of an |nbits|-wide float with |se| exponent and |sm|
 * mantissa bits, to |de| and |dm| (interp_elementwise_convert.c's rp_apply, with its
 * constants folded here). */
static void emit_rp_fn(cxla_strbuf *out, const char *fname, int nbits, int se, int sm, int64_t de,
                       int64_t dm) {
    uint64_t all = nbits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << nbits) - 1;
    uint64_t sign = (uint64_t)1 << (nbits - 1), exp_mask = (((uint64_t)1 << se) - 1) << sm;
    cxla_strbuf_printf(out,
                       "static inline uint64_t %s(uint64_t x) {\n"
                       "    const uint64_t orig = x;\n"
                       "    const int is_nan = (x & 0x%" PRIx64 "ull) > 0x%" PRIx64 "ull;\n",
                       fname, ~sign & all, exp_mask);
    if (dm < sm) {
        uint64_t last_bit = (uint64_t)1 << (sm - dm), base_bias = (last_bit >> 1) - 1;
        uint64_t trunc_mask = ~(last_bit - 1) & all;
        cxla_strbuf_printf(out,
                           "    x = ((x + (((x & 0x%" PRIx64 "ull) >> %" PRId64 ") + 0x%" PRIx64
                           "ull)) & 0x%" PRIx64 "ull) & 0x%" PRIx64 "ull;\n",
                           last_bit, sm - dm, base_bias, all, trunc_mask);
    }
    if (de < se) {
        uint64_t bias = ((uint64_t)1 << (se - 1)) - 1, reduced = ((uint64_t)1 << (de - 1)) - 1;
        cxla_strbuf_printf(
            out,
            "    {\n"
            "        const uint64_t e = x & 0x%" PRIx64 "ull, signed_zero = x & 0x%" PRIx64 "ull;\n"
            "        if (e > 0x%" PRIx64 "ull) x = signed_zero | 0x%" PRIx64 "ull;\n"
            "        if (e <= 0x%" PRIx64 "ull) x = signed_zero;\n"
            "    }\n",
            exp_mask, sign, (bias + reduced) << sm, exp_mask, (bias - reduced) << sm);
    }
    if (dm > 0)
        cxla_strbuf_puts(out, "    return is_nan ? orig : x;\n}\n");
    else
        cxla_strbuf_printf(out, "    (void)orig;\n    return is_nan ? 0x%" PRIx64 "ull : x;\n}\n",
                           exp_mask);
}

static cxla_status emit_reduce_precision(cxla_arena *arena, const cxla_instr *instr,
                                         const char *name, cxla_strbuf *out,
                                         cpu_kernel_info *info) {
    cxla_type t = instr->shape.type;
    int64_t e = 0, m = 0, count = cpu_lib_count(&instr->shape);
    cxla_instr_int(instr, CXLA_ATTR_EXPONENT_BITS, &e);
    cxla_instr_int(instr, CXLA_ATTR_MANTISSA_BITS, &m);
    int64_t blocks = (count + MAP_BLOCK - 1) / MAP_BLOCK;
    cpu_lib_head(instr, name, out);
    const char *fn = F("%s_rp", name);
    /* f64 and f16 on their own bits (as XLA's CPU backend), the rest on their f32 value. */
    if (t == CXLA_F64)
        emit_rp_fn(out, fn, 64, 11, 52, e, m);
    else if (t == CXLA_F16)
        emit_rp_fn(out, fn, 16, 5, 10, e, m);
    else
        emit_rp_fn(out, fn, 32, 8, 23, e, m);
    cpu_lib_open(name, blocks > 0 ? blocks : 1, out);
    const char *ut = uint_of(cxla_type_storage(t));
    cxla_strbuf_printf(out,
                       "    const %s *restrict x = in[0];\n    %s *restrict y = out[0];\n"
                       "    const int64_t lo = begin * %d, hi = end * %d < %" PRId64
                       " ? end * %d : %" PRId64 ";\n"
                       "    for (int64_t i = lo; i < hi; i++)\n",
                       ut, ut, MAP_BLOCK, MAP_BLOCK, count, MAP_BLOCK, count);
    if (t == CXLA_F64 || t == CXLA_F16 || t == CXLA_F32)
        cxla_strbuf_printf(out, "        y[i] = (%s)%s(x[i]);\n}\n\n", ut, fn);
    else
        cxla_strbuf_printf(out,
                           "        y[i] = cxla_st_%s(cxla_f32_from_bits((uint32_t)%s("
                           "cxla_f32_bits(cxla_ld_%s(x[i])))));\n}\n\n",
                           cxla_type_name(t), fn, cxla_type_name(t));
    if (info) {
        info->range = blocks > 0 ? blocks : 1;
        info->cost = (double)count * 2.0 * (double)cxla_type_storage(t);
    }
    return NULL;
}

/* Element types bitcast-convert takes here: whole-byte ones (complex too: the buffer is the
 * result; pred as its byte, as the interpreter takes it) and the sub-byte ones (s4, u4, s2,
 * u2, s1, u1, f4e2m1fn: one per byte). */
static bool bitcast_type_ok(cxla_type t) {
    return cpu_emit_type_ok(t) || cxla_type_is_complex(t) || cpu_emit_subbyte(t);
}

static bool bitcast_convert_ok(const cxla_instr *instr) {
    if (instr->operand_count != 1 || !cpu_lib_plain(instr) || instr->shape.type == CXLA_TUPLE)
        return false;
    cxla_type a = instr->operands[0]->shape.type, b = instr->shape.type;
    if (!bitcast_type_ok(a) || !bitcast_type_ok(b)) return false;
    /* Complex only to itself (the interpreter refuses c128 <-> c64, the verifier the rest). */
    if ((cxla_type_is_complex(a) || cxla_type_is_complex(b)) && a != b) return false;
    /* pred is 8 bits here (interp_ew_bitcast_bits), with whole-byte types only. */
    int64_t wa = a == CXLA_PRED ? 8 : cxla_type_bits(a),
            wb = b == CXLA_PRED ? 8 : cxla_type_bits(b);
    if ((a == CXLA_PRED || b == CXLA_PRED) && (wa % 8 || wb % 8)) return false;
    int64_t na = cpu_lib_count(&instr->operands[0]->shape), nb = cpu_lib_count(&instr->shape);
    if (wa % 8 == 0 && wb % 8 == 0) /* whole bytes: the buffer is the result */
        return na * (int64_t)cxla_type_storage(a) == nb * (int64_t)cxla_type_storage(b);
    /* A sub-byte side: elements of at most 64 bits split or joined, as the interpreter. */
    if (wa > 64 || wb > 64 || wa < 1 || wb < 1) return false;
    return wa >= wb ? wa % wb == 0 && na * (wa / wb) == nb : wb % wa == 0 && nb * (wb / wa) == na;
}

/* A bitcast-convert with a sub-byte side: interp_ew_bitcast_convert's loops. A wider element
 * (its stored bits, the low |wa| of its byte when sub-byte) splits into wa / wb parts, lowest
 * bits first; narrower ones join, the first in the lowest bits. Signed sub-byte results are
 * sign-extended into their byte (interp_ew_int_wrap). */
static void emit_bitcast_subbyte(const cxla_instr *instr, cxla_strbuf *out) {
    cxla_type a = instr->operands[0]->shape.type, b = instr->shape.type;
    int64_t wa = cxla_type_bits(a), wb = cxla_type_bits(b);
    int64_t na = cpu_lib_count(&instr->operands[0]->shape), nb = cpu_lib_count(&instr->shape);
    const char *ta = uint_of(cxla_type_storage(a)), *tb = uint_of(cxla_type_storage(b));
    uint64_t ma = wa >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << wa) - 1;
    uint64_t mb = wb >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << wb) - 1;
    cxla_strbuf_printf(out, "    const %s *restrict x = (const %s *)in[0];\n", ta, ta);
    cxla_strbuf_printf(out, "    %s *restrict y = (%s *)out[0];\n", tb, tb);
    /* The result from its low |wb| bits u: sign-extended for a signed sub-byte type. */
    const char *store = "(%s)u";
    char ext[160];
    if (wb < 8 && cxla_type_is_signed(b)) {
        snprintf(ext, sizeof ext, "(%%s)(((u ^ %" PRIu64 "u) - %" PRIu64 "u) & 255u)",
                 (uint64_t)1 << (wb - 1), (uint64_t)1 << (wb - 1));
        store = ext;
    }
    char stmt[256];
    snprintf(stmt, sizeof stmt, store, tb);
    if (wa >= wb) {
        int64_t r = wa / wb;
        cxla_strbuf_printf(out,
                           "    for (int64_t i = 0; i < %" PRId64 "; i++) {\n"
                           "        const uint64_t v = (uint64_t)x[i] & 0x%" PRIx64 "u;\n"
                           "        for (int64_t k = 0; k < %" PRId64 "; k++) {\n"
                           "            const uint64_t u = (v >> (k * %" PRId64 ")) & 0x%" PRIx64
                           "u;\n"
                           "            y[i * %" PRId64 " + k] = %s;\n"
                           "        }\n"
                           "    }\n}\n\n",
                           na, ma, r, wb, mb, r, stmt);
    } else {
        int64_t r = wb / wa;
        cxla_strbuf_printf(out,
                           "    for (int64_t j = 0; j < %" PRId64 "; j++) {\n"
                           "        uint64_t u = 0;\n"
                           "        for (int64_t k = 0; k < %" PRId64 "; k++)\n"
                           "            u |= ((uint64_t)x[j * %" PRId64 " + k] & 0x%" PRIx64
                           "u) << (k * %" PRId64 ");\n"
                           "        y[j] = %s;\n"
                           "    }\n}\n\n",
                           nb, r, r, ma, wa, stmt);
    }
}

static const char *uint_type(size_t bytes) {
    return bytes == 1 ? "uint8_t" : bytes == 2 ? "uint16_t" : bytes == 4 ? "uint32_t" : "uint64_t";
}

static cxla_status emit_bitcast_convert(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                                        cpu_kernel_info *info) {
    int64_t bytes = cpu_lib_count(&instr->shape) * (int64_t)cxla_type_storage(instr->shape.type);
    cxla_type ta = instr->operands[0]->shape.type, tb = instr->shape.type;
    if ((tb != CXLA_PRED && cxla_type_bits(tb) % 8) ||
        (ta != CXLA_PRED && cxla_type_bits(ta) % 8)) {
        cpu_lib_head(instr, name, out);
        cpu_lib_open(name, 1, out);
        emit_bitcast_subbyte(instr, out);
        if (info) {
            info->range = 1;
            info->cost = 2.0 * (double)bytes;
        }
        return NULL;
    }
    int64_t blocks = (bytes + 65535) / 65536;
    size_t sa = cxla_type_storage(instr->operands[0]->shape.type);
    size_t sb = cxla_type_storage(instr->shape.type);
    cpu_lib_head(instr, name, out);
    cpu_lib_open(name, blocks > 0 ? blocks : 1, out);
    cxla_strbuf_printf(out,
                       "    const int64_t lo = begin * 65536, hi = end * 65536 < %" PRId64
                       " ? end * 65536 : %" PRId64 ";\n",
                       bytes, bytes);
    if (sa == sb) {
        /* One element for one: its bits unchanged, in the machine's byte order. */
        cxla_strbuf_puts(out, "    if (hi > lo) memcpy((char *)out[0] + lo, (const char *)in[0] + "
                              "lo, (size_t)(hi - lo));\n");
    } else {
        /* Between widths, a wide element's parts go lowest bits first (docs/semantics.md, as
         * the interpreter): the order of its bytes on a little-endian machine only, so the
         * parts are cut and joined as numbers, the same on every byte order. A block of
         * 65536 bytes holds whole wide elements. */
        size_t w = sa > sb ? sa : sb, n = sa > sb ? sb : sa;
        const char *wt = uint_type(w), *nt = uint_type(n);
        cxla_strbuf_printf(out,
                           "    const char *src = (const char *)in[0];\n"
                           "    char *dst = (char *)out[0];\n"
                           "    for (int64_t i = lo / %zu; i < hi / %zu; i++) {\n"
                           "        %s wide = 0;\n"
                           "        %s part;\n",
                           w, w, wt, nt);
        if (sa > sb)
            cxla_strbuf_printf(out,
                               "        memcpy(&wide, src + i * %zu, %zu);\n"
                               "        for (int k = 0; k < %zu; k++) {\n"
                               "            part = (%s)(wide >> (%zu * k));\n"
                               "            memcpy(dst + (i * %zu + k) * %zu, &part, %zu);\n"
                               "        }\n",
                               w, w, w / n, nt, 8 * n, w / n, n, n);
        else
            cxla_strbuf_printf(out,
                               "        for (int k = 0; k < %zu; k++) {\n"
                               "            memcpy(&part, src + (i * %zu + k) * %zu, %zu);\n"
                               "            wide |= (%s)part << (%zu * k);\n"
                               "        }\n"
                               "        memcpy(dst + i * %zu, &wide, %zu);\n",
                               w / n, w / n, n, n, wt, 8 * n, w, w);
        cxla_strbuf_puts(out, "    }\n");
    }
    /* A pred result holds 0 or 1: any nonzero byte is true (interp_ew_int_wrap). */
    if (tb == CXLA_PRED)
        cxla_strbuf_puts(out, "    for (int64_t i = lo; i < hi; i++)\n"
                              "        ((uint8_t *)out[0])[i] = ((uint8_t *)out[0])[i] != 0;\n");
    cxla_strbuf_puts(out, "}\n\n");
    if (info) {
        info->range = blocks > 0 ? blocks : 1;
        info->cost = 2.0 * (double)bytes;
    }
    return NULL;
}

/* A bitcast left after layout normalization (passes/layout.c turns those of non-default
 * layouts into transposes around a reshape): the same bytes as another element type, which
 * the interpreter copies as they lie. Not into pred or sub-byte types (a copied byte need
 * not be the 0/1 or sign-extended value those hold). */
static bool bitcast_ok(const cxla_instr *instr) {
    if (instr->operand_count != 1 || !cpu_lib_plain(instr) || instr->shape.type == CXLA_TUPLE)
        return false;
    cxla_type a = instr->operands[0]->shape.type, b = instr->shape.type;
    if (b == CXLA_PRED || cpu_emit_subbyte(b) || cxla_type_bits(b) % 8 ||
        (!cpu_emit_type_ok(b) && !cxla_type_is_complex(b)) ||
        (!cpu_emit_type_ok(a) && !cxla_type_is_complex(a) && !cpu_emit_subbyte(a)))
        return false;
    return cpu_lib_count(&instr->operands[0]->shape) * (int64_t)cxla_type_storage(a) ==
           cpu_lib_count(&instr->shape) * (int64_t)cxla_type_storage(b);
}

static cxla_status emit_bitcast(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                                cpu_kernel_info *info) {
    int64_t bytes = cpu_lib_count(&instr->shape) * (int64_t)cxla_type_storage(instr->shape.type);
    int64_t blocks = (bytes + 65535) / 65536;
    cpu_lib_head(instr, name, out);
    cpu_lib_open(name, blocks > 0 ? blocks : 1, out);
    cxla_strbuf_printf(out,
                       "    const int64_t lo = begin * 65536, hi = end * 65536 < %" PRId64
                       " ? end * 65536 : %" PRId64 ";\n"
                       "    if (hi > lo) memcpy((char *)out[0] + lo, (const char *)in[0] + lo, "
                       "(size_t)(hi - lo));\n}\n\n",
                       bytes, bytes);
    if (info) {
        info->range = blocks > 0 ? blocks : 1;
        info->cost = 2.0 * (double)bytes;
    }
    return NULL;
}

/* ---- reduce with any reducer ---------------------------------------------------------------
 *
 * What emit_reduce.c's reduce does not take (several inputs, as an argmax; a reducer it does not
 * recognize): the interpreter's general path, acc = f(acc..., x...) over the reduced
 * elements of each output element in row-major order, the reducer emitted as a C function.
 * The outer range runs over the output elements. */

static bool general_reduce_ok(const cxla_instr *instr) {
    int64_t count = instr->operand_count, n = count / 2;
    if (count < 2 || count % 2 || !cpu_lib_plain(instr)) return false;
    const cxla_shape *xs = &instr->operands[0]->shape;
    bool tuple = instr->shape.type == CXLA_TUPLE;
    if ((n > 1 && !tuple) || (tuple && instr->shape.tuple_count != n)) return false;
    for (int64_t i = 0; i < n; i++) {
        const cxla_shape *s = &instr->operands[i]->shape, *init = &instr->operands[n + i]->shape;
        if (!held_type(s->type) || !held_type(init->type) || s->rank != xs->rank || init->rank != 0)
            return false;
        for (int64_t d = 0; d < s->rank; d++)
            if (s->dims[d] != xs->dims[d]) return false;
        if ((tuple ? instr->shape.elements[i].type : instr->shape.type) != init->type) return false;
    }
    int64_t nd = 0;
    const int64_t *d = cxla_instr_ints(instr, CXLA_ATTR_DIMENSIONS, &nd);
    bool seen[CXLA_MAX_RANK] = {false};
    for (int64_t i = 0; i < nd; i++) {
        if (d[i] < 0 || d[i] >= xs->rank || seen[d[i]]) return false;
        seen[d[i]] = true;
    }
    const cxla_computation *c = cxla_instr_called(instr, CXLA_ATTR_TO_APPLY);
    cxla_type acc0 = instr->operands[n]->shape.type;
    /* Only where the interpreter's order is the computation's: its typed loops take a
     * recognized reducer of one input, and sum floats pairwise; complex and sub-byte
     * integer ones fold in row-major order from the init value, as a call does. */
    interp_reducer kind = n == 1 ? interp_match_reducer(c) : INTERP_REDUCER_NONE;
    bool sequential = cxla_type_is_complex(xs->type) || cpu_emit_subbyte(xs->type);
    if (kind != INTERP_REDUCER_NONE && xs->type == acc0 &&
        interp_reducer_supports(kind, xs->type) && !sequential)
        return false;
    /* The accumulators' types (any number of inputs: the interpreter has no limit). */
    cxla_type *acc = malloc((size_t)n * sizeof(*acc));
    if (!acc) return false;
    for (int64_t i = 0; i < n; i++) acc[i] = instr->operands[n + i]->shape.type;
    bool ok = scalar_comp_ok(c, 2 * n, acc, n);
    free(acc);
    for (int64_t k = 0; ok && k < 2 * n; k++)
        if (c->params[k]->shape.type != instr->operands[k < n ? n + k : k - n]->shape.type ||
            c->params[k]->shape.rank != 0)
            ok = false;
    return ok;
}

/* |sized|: the reduced loops run to the input's run-time sizes, in[2n] (int64_t, one per
 * dimension; cpu_emit_sized_reduce), not to its bounds. */
static cxla_status emit_general_reduce(cxla_arena *arena, const cxla_instr *instr, const char *name,
                                       cxla_strbuf *out, cpu_kernel_info *info, bool sized) {
    int64_t n = instr->operand_count / 2;
    const cxla_shape *xs = &instr->operands[0]->shape;
    int64_t nd = 0;
    const int64_t *d = cxla_instr_ints(instr, CXLA_ATTR_DIMENSIONS, &nd);
    bool reduced[CXLA_MAX_RANK] = {false};
    for (int64_t i = 0; i < nd; i++) reduced[d[i]] = true;
    int64_t stride[CXLA_MAX_RANK], outs = 1, inner = 1;
    for (int64_t k = xs->rank - 1, st = 1; k >= 0; k--) {
        stride[k] = st;
        st *= xs->dims[k];
        if (reduced[k])
            inner *= xs->dims[k];
        else
            outs *= xs->dims[k];
    }
    cpu_lib_head(instr, name, out);
    CXLA_RETURN_IF_ERROR(
        emit_scalar_fn(arena, cxla_instr_called(instr, CXLA_ATTR_TO_APPLY), F("%s_fn", name), out));
    cpu_lib_open(name, outs > 0 ? outs : 1, out);
    for (int64_t i = 0; i < n; i++) {
        const char *xt = cpu_emit_ctype(instr->operands[i]->shape.type);
        const char *at = cpu_emit_ctype(instr->operands[n + i]->shape.type);
        cxla_strbuf_printf(out,
                           "    const %s *restrict x%" PRId64 " = in[%" PRId64 "];\n"
                           "    const %s *restrict init%" PRId64 " = in[%" PRId64 "];\n"
                           "    %s *restrict y%" PRId64 " = out[%" PRId64 "];\n"
                           "    (void)x%" PRId64 ";\n",
                           xt, i, i, at, i, n + i, at, i, i, i);
    }
    if (sized)
        cxla_strbuf_printf(out,
                           "    const int64_t *restrict sz = in[%" PRId64 "];\n"
                           "    (void)sz;\n",
                           2 * n);
    cxla_strbuf_printf(out,
                       "    for (int64_t e = begin; e < end && e < %" PRId64 "; e++) {\n"
                       "        int64_t rest = e, base = 0;\n",
                       outs);
    /* The kept indices of output element e, last first, as an offset into the inputs. */
    for (int64_t k = xs->rank - 1; k >= 0; k--)
        if (!reduced[k])
            cxla_strbuf_printf(out,
                               "        base += rest %% %" PRId64 " * %" PRId64 ";\n"
                               "        rest /= %" PRId64 ";\n",
                               xs->dims[k], stride[k], xs->dims[k]);
    cxla_strbuf_puts(out, "        (void)rest;\n        (void)base;\n");
    for (int64_t i = 0; i < n; i++)
        cxla_strbuf_printf(out, "        %s a%" PRId64 " = init%" PRId64 "[0];\n",
                           cpu_emit_ctype(instr->operands[n + i]->shape.type), i, i);
    /* The reduced elements in row-major order. */
    int depth = 2;
    cxla_strbuf body;
    cxla_strbuf_init(&body);
    cxla_strbuf_puts(&body, "base");
    for (int64_t k = 0; k < xs->rank && inner > 0; k++) {
        if (!reduced[k]) continue;
        if (sized)
            cxla_strbuf_printf(out,
                               "%*sfor (int64_t r%" PRId64 " = 0; r%" PRId64 " < sz[%" PRId64
                               "]; r%" PRId64 "++) {\n",
                               4 * depth, "", k, k, k, k);
        else
            cxla_strbuf_printf(out,
                               "%*sfor (int64_t r%" PRId64 " = 0; r%" PRId64 " < %" PRId64
                               "; r%" PRId64 "++) {\n",
                               4 * depth, "", k, k, xs->dims[k], k);
        cxla_strbuf_printf(&body, " + r%" PRId64 " * %" PRId64, k, stride[k]);
        depth++;
    }
    if (inner > 0) {
        cxla_strbuf_printf(out, "%*sconst int64_t at = %s;\n%*s", 4 * depth, "",
                           body.data ? body.data : "base", 4 * depth, "");
        /* A scalar reducer returns the new accumulator, a variadic one writes them all. */
        if (n == 1) cxla_strbuf_puts(out, "a0 = ");
        cxla_strbuf_printf(out, "%s_fn(", name);
        for (int64_t i = 0; i < n; i++) cxla_strbuf_printf(out, "a%" PRId64 ", ", i);
        for (int64_t i = 0; i < n; i++)
            cxla_strbuf_printf(out, "%sx%" PRId64 "[at]", i ? ", " : "", i);
        for (int64_t i = 0; n > 1 && i < n; i++) cxla_strbuf_printf(out, ", &a%" PRId64, i);
        cxla_strbuf_puts(out, ");\n");
    }
    cpu_emit_buf_free(&body);
    for (depth--; depth >= 2; depth--) cxla_strbuf_printf(out, "%*s}\n", 4 * depth, "");
    for (int64_t i = 0; i < n; i++)
        cxla_strbuf_printf(out, "        y%" PRId64 "[e] = a%" PRId64 ";\n", i, i);
    cxla_strbuf_puts(out, "    }\n}\n\n");
    if (info) {
        info->range = outs > 0 ? outs : 1;
        info->cost = (double)outs * (double)inner * (double)n * 16.0;
    }
    return NULL;
}

/* ---- dispatch ------------------------------------------------------------------------------ */

bool cpu_emit_lib_ok(const cxla_instr *instr) {
    sort_form f;
    switch (instr->opcode) {
    case CXLA_OP_SORT: return sort_form_of(instr, &f);
    case CXLA_OP_TOPK: return topk_ok(instr);
    case CXLA_OP_MAP: return map_ok(instr);
    case CXLA_OP_REDUCE_PRECISION: return reduce_precision_ok(instr);
    case CXLA_OP_BITCAST_CONVERT: return bitcast_convert_ok(instr);
    case CXLA_OP_BITCAST: return bitcast_ok(instr);
    case CXLA_OP_CHOLESKY:
    case CXLA_OP_TRIANGULAR_SOLVE:
    case CXLA_OP_BATCH_NORM_TRAINING:
    case CXLA_OP_BATCH_NORM_INFERENCE:
    case CXLA_OP_BATCH_NORM_GRAD: return cpu_emit_linalg_ok(instr);
    case CXLA_OP_RNG_BIT_GENERATOR: return cpu_emit_rng_ok(instr);
    case CXLA_OP_FFT: return cpu_emit_fft_ok(instr);
    case CXLA_OP_REDUCE: return general_reduce_ok(instr);
    case CXLA_OP_RAGGED_DOT:
    case CXLA_OP_SCALED_DOT: return cpu_emit_ragged_ok(instr);
    case CXLA_OP_SCAN: return cpu_emit_scan_ok(instr);
    default: return false;
    }
}

cxla_status cpu_emit_lib(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                         cpu_kernel_info *out_info) {
    cpu_kernel_info local;
    cpu_kernel_info *info = out_info ? out_info : &local;
    memset(info, 0, sizeof(*info));
    if (!cpu_emit_lib_ok(instr))
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED, "cpu backend: cannot emit %s (%s)",
                          instr->name, cxla_opcode_name(instr->opcode));
    cxla_arena *arena = cxla_arena_create();
    if (!arena) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    cpu_emit_fmt_reset();
    cxla_status s = NULL;
    switch (instr->opcode) {
    case CXLA_OP_SORT: s = emit_sort(arena, instr, name, false, out, info); break;
    case CXLA_OP_TOPK: s = emit_topk(arena, instr, name, out, info); break;
    case CXLA_OP_MAP: s = emit_map(arena, instr, name, out, info); break;
    case CXLA_OP_REDUCE_PRECISION: s = emit_reduce_precision(arena, instr, name, out, info); break;
    case CXLA_OP_BITCAST_CONVERT: s = emit_bitcast_convert(instr, name, out, info); break;
    case CXLA_OP_BITCAST: s = emit_bitcast(instr, name, out, info); break;
    case CXLA_OP_CHOLESKY:
    case CXLA_OP_TRIANGULAR_SOLVE:
    case CXLA_OP_BATCH_NORM_TRAINING:
    case CXLA_OP_BATCH_NORM_INFERENCE:
    case CXLA_OP_BATCH_NORM_GRAD: s = cpu_emit_linalg(instr, name, out, info); break;
    case CXLA_OP_RNG_BIT_GENERATOR: s = cpu_emit_rng(instr, name, out, info); break;
    case CXLA_OP_FFT: s = cpu_emit_fft(instr, name, out, info); break;
    case CXLA_OP_REDUCE: s = emit_general_reduce(arena, instr, name, out, info, false); break;
    case CXLA_OP_RAGGED_DOT:
    case CXLA_OP_SCALED_DOT: s = cpu_emit_ragged(instr, name, out, info); break;
    case CXLA_OP_SCAN: s = cpu_emit_scan(instr, name, out, info); break;
    default: break;
    }
    if (!s && (out->failed || cpu_emit_fmt_failed()))
        s = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory emitting %s", instr->name);
    cxla_arena_destroy(arena);
    return s;
}

/* ---- reduces over run-time sizes ----------------------------------------------------------- */

bool cpu_emit_sized_reduce_ok(const cxla_instr *instr) {
    return instr->opcode == CXLA_OP_REDUCE && general_reduce_ok(instr) &&
           instr->operands[0]->shape.rank <= 8;
}

cxla_status cpu_emit_sized_reduce(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                                  cpu_kernel_info *out_info) {
    cpu_kernel_info local;
    cpu_kernel_info *info = out_info ? out_info : &local;
    memset(info, 0, sizeof(*info));
    if (!cpu_emit_sized_reduce_ok(instr))
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED, "cpu backend: cannot emit %s (%s)",
                          instr->name, cxla_opcode_name(instr->opcode));
    cxla_arena *arena = cxla_arena_create();
    if (!arena) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    cpu_emit_fmt_reset();
    cxla_status s = emit_general_reduce(arena, instr, name, out, info, true);
    if (!s && (out->failed || cpu_emit_fmt_failed()))
        s = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory emitting %s", instr->name);
    cxla_arena_destroy(arena);
    return s;
}
