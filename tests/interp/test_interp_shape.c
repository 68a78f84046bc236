/* The interpreter's shape family, gather and scatter, checked against naive reference
 * loops written here from the operation semantics (one output element at a time):
 * randomized transposes (tiled and not), slices, pads, reverses, broadcasts,
 * concatenations, dynamic slices and updates, bitcasts between layouts, gathers and
 * scatters with batching dims, clamped and skipped out-of-range indices, on every element
 * size. Modules are built with the IR API, so no text parser is involved. */
#include <stdlib.h>

#include "harness.h"
#include "hlo/hlo.h"
#include "interp/interp.h"

/* ---- random numbers --------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Uniform in [lo, hi]. */
static int64_t rnd_in(int64_t lo, int64_t hi) {
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

static void shuffle(int64_t *v, int64_t n) {
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = rnd_in(0, i), t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

/* One type per storage size: these operations move bytes. */
static cxla_type rnd_type(void) {
    static const cxla_type types[] = {CXLA_S8, CXLA_BF16, CXLA_F32, CXLA_U64, CXLA_C128};
    return types[rnd_in(0, 4)];
}

/* ---- building modules --------------------------------------------------------------- */

static int name_counter;

static cxla_instr *param(cxla_computation *c, int64_t number, const cxla_shape *s) {
    char name[32];
    snprintf(name, sizeof(name), "p%d", (int)number);
    cxla_instr *in = NULL;
    CHECK_OK(cxla_computation_add_instr(c, CXLA_OP_PARAMETER, name, s, 0, NULL, &in));
    in->parameter_number = number;
    return in;
}

static void set_params(cxla_computation *c, int64_t n, cxla_instr **ps) {
    c->params = cxla_arena_alloc_array(c->module->arena, (size_t)(n ? n : 1), sizeof(*ps));
    memcpy(c->params, ps, (size_t)n * sizeof(*ps));
    c->param_count = n;
}

static cxla_instr *op(cxla_computation *c, cxla_opcode opcode, const cxla_shape *s, int64_t n,
                      cxla_instr *const *ops) {
    char name[32];
    snprintf(name, sizeof(name), "i%d", name_counter++);
    cxla_instr *in = NULL;
    CHECK_OK(cxla_computation_add_instr(c, opcode, name, s, n, ops, &in));
    return in;
}

static void set_ints(cxla_instr *in, cxla_attr_id id, int64_t n, const int64_t *v) {
    cxla_attr a = {.id = id, .name = cxla_attr_get_info(id)->name, .kind = CXLA_ATTR_KIND_INTS};
    a.v.ints.count = n;
    a.v.ints.values =
        cxla_arena_alloc_array(in->parent->module->arena, (size_t)(n ? n : 1), sizeof(int64_t));
    memcpy(a.v.ints.values, v, (size_t)n * sizeof(int64_t));
    CHECK_OK(cxla_instr_set_attr(in, &a));
}

static void set_int(cxla_instr *in, cxla_attr_id id, int64_t v) {
    cxla_attr a = {.id = id, .name = cxla_attr_get_info(id)->name, .kind = CXLA_ATTR_KIND_INT};
    a.v.i = v;
    CHECK_OK(cxla_instr_set_attr(in, &a));
}

static void set_comp(cxla_instr *in, cxla_attr_id id, cxla_computation *comp) {
    cxla_attr a = {
        .id = id, .name = cxla_attr_get_info(id)->name, .kind = CXLA_ATTR_KIND_COMPUTATION};
    a.v.comps.count = 1;
    a.v.comps.items = cxla_arena_alloc_array(in->parent->module->arena, 1, sizeof(comp));
    a.v.comps.items[0] = comp;
    CHECK_OK(cxla_instr_set_attr(in, &a));
}

static void set_slice(cxla_instr *in, int64_t rank, const cxla_slice_dim *dims) {
    cxla_attr a = {.id = CXLA_ATTR_SLICE, .name = "slice", .kind = CXLA_ATTR_KIND_SLICE};
    a.v.slice.rank = rank;
    a.v.slice.dims =
        cxla_arena_alloc_array(in->parent->module->arena, (size_t)(rank ? rank : 1), sizeof(*dims));
    memcpy(a.v.slice.dims, dims, (size_t)rank * sizeof(*dims));
    CHECK_OK(cxla_instr_set_attr(in, &a));
}

static void set_padding(cxla_instr *in, int64_t rank, const cxla_pad_dim *dims) {
    cxla_attr a = {.id = CXLA_ATTR_PADDING, .name = "padding", .kind = CXLA_ATTR_KIND_PADDING};
    a.v.padding.rank = rank;
    a.v.padding.dims =
        cxla_arena_alloc_array(in->parent->module->arena, (size_t)(rank ? rank : 1), sizeof(*dims));
    memcpy(a.v.padding.dims, dims, (size_t)rank * sizeof(*dims));
    CHECK_OK(cxla_instr_set_attr(in, &a));
}

/* A module whose entry "main" has |n| parameters of |shapes|. */
typedef struct built {
    cxla_module *m;
    cxla_computation *main;
    cxla_instr *p[8];
} built;

static void begin(built *b) {
    memset(b, 0, sizeof(*b));
    CHECK_OK(cxla_module_create("test", &b->m));
}

static void begin_main(built *b, int64_t n, const cxla_shape *const *shapes) {
    CHECK_OK(cxla_module_add_computation(b->m, "main", &b->main));
    for (int64_t i = 0; i < n; i++) b->p[i] = param(b->main, i, shapes[i]);
    set_params(b->main, n, b->p);
    b->m->entry = b->main;
    b->main->is_entry = true;
}

/* Runs the module with |root| as the entry's root; NULL (and a failed check) on error. */
static cxla_literal *run(built *b, cxla_instr *root, int64_t n, cxla_literal *const *args) {
    b->main->root = root;
    cxla_literal *out = NULL;
    cxla_status s = interp_run_module(b->m, NULL, (const cxla_literal *const *)args, n, &out);
    if (s) {
        test_fail(__FILE__, __LINE__, "run failed: %s", cxla_status_message(s));
        cxla_status_free(s);
        return NULL;
    }
    return out;
}

static cxla_literal *random_literal(const cxla_shape *s) {
    cxla_literal *lit = NULL;
    CHECK_OK(cxla_literal_create(s, &lit));
    unsigned char *d = cxla_literal_data(lit);
    for (size_t i = 0; i < cxla_literal_byte_size(lit); i++) d[i] = (unsigned char)rnd();
    return lit;
}

static cxla_literal *int_literal(cxla_type type, int64_t rank, const int64_t *dims, int64_t lo,
                                 int64_t hi) {
    cxla_shape s = {.type = type, .rank = rank, .dims = (int64_t *)dims};
    cxla_literal *lit = NULL;
    CHECK_OK(cxla_literal_create(&s, &lit));
    int64_t n = cxla_literal_element_count(lit);
    size_t es = cxla_type_storage(type);
    for (int64_t i = 0; i < n; i++)
        cxla_store_s64(type, (char *)cxla_literal_data(lit) + (size_t)i * es, rnd_in(lo, hi));
    return lit;
}

static void row_major_strides(int64_t rank, const int64_t *dims, int64_t *strides) {
    int64_t s = 1;
    for (int64_t i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= dims[i];
    }
}

static int64_t linear(int64_t rank, const int64_t *strides, const int64_t *index) {
    int64_t l = 0;
    for (int64_t i = 0; i < rank; i++) l += strides[i] * index[i];
    return l;
}

static int64_t count_of(int64_t rank, const int64_t *dims) {
    int64_t n = 1;
    for (int64_t i = 0; i < rank; i++) n *= dims[i];
    return n;
}

/* Compares |got| with the expected bytes. */
static void check_bytes(const cxla_literal *got, const void *want, size_t size, const char *what,
                        int iter) {
    if (!got) return;
    CHECK_MSG(cxla_literal_byte_size(got) == size, "%s #%d: size %zu vs %zu", what, iter,
              cxla_literal_byte_size(got), size);
    if (cxla_literal_byte_size(got) == size && size > 0)
        CHECK_MSG(memcmp(cxla_literal_data_const(got), want, size) == 0, "%s #%d: values differ",
                  what, iter);
}

/* Random dims in [lo, hi], with an occasional zero when |zeros|. */
static void rnd_dims(int64_t rank, int64_t *dims, int64_t lo, int64_t hi, bool zeros) {
    for (int64_t i = 0; i < rank; i++) dims[i] = zeros && rnd_in(0, 30) == 0 ? 0 : rnd_in(lo, hi);
}

/* ---- transpose, reverse, slice, pad, broadcast, concatenate ------------------------ */

static void test_transpose(void) {
    for (int iter = 0; iter < 300; iter++) {
        int64_t r = rnd_in(1, 5), xd[8], yd[8], perm[8], xstr[8], ystr[8], o[8] = {0};
        rnd_dims(r, xd, 1, r <= 2 ? 70 : 9, true);
        if (iter < 5) { /* big enough for the tiled path with odd edges */
            r = 2 + iter % 2;
            xd[0] = 67, xd[1] = 45, xd[2] = 33;
        }
        for (int64_t i = 0; i < r; i++) perm[i] = i;
        shuffle(perm, r);
        for (int64_t i = 0; i < r; i++) yd[i] = xd[perm[i]];
        cxla_type t = rnd_type();
        cxla_shape xs = {.type = t, .rank = r, .dims = xd}, ys = {.type = t, .rank = r, .dims = yd};
        built b;
        begin(&b);
        begin_main(&b, 1, (const cxla_shape *[]){&xs});
        cxla_instr *tr = op(b.main, CXLA_OP_TRANSPOSE, &ys, 1, b.p);
        set_ints(tr, CXLA_ATTR_DIMENSIONS, r, perm);
        cxla_literal *x = random_literal(&xs);
        cxla_literal *y = run(&b, tr, 1, &x);
        size_t es = cxla_type_storage(t), size = (size_t)count_of(r, yd) * es;
        char *want = malloc(size ? size : 1);
        row_major_strides(r, xd, xstr);
        row_major_strides(r, yd, ystr);
        if (size) do {
                int64_t xi[8];
                for (int64_t i = 0; i < r; i++) xi[perm[i]] = o[i];
                memcpy(want + linear(r, ystr, o) * (int64_t)es,
                       (const char *)cxla_literal_data_const(x) + linear(r, xstr, xi) * (int64_t)es,
                       es);
            } while (cxla_index_next(r, yd, o));
        check_bytes(y, want, size, "transpose", iter);
        free(want);
        cxla_literal_free(x);
        cxla_literal_free(y);
        cxla_module_destroy(b.m);
    }
}

static void test_reverse_slice_pad(void) {
    for (int iter = 0; iter < 300; iter++) {
        int64_t r = rnd_in(0, 4), xd[8], xstr[8];
        rnd_dims(r, xd, 1, 6, true);
        cxla_type t = rnd_type();
        size_t es = cxla_type_storage(t);
        cxla_shape xs = {.type = t, .rank = r, .dims = xd}, vs = {.type = t};
        row_major_strides(r, xd, xstr);
        int kind = iter % 3;
        int64_t yd[8], rev_dims[8], nrev = 0;
        cxla_slice_dim sl[8];
        cxla_pad_dim pd[8];
        for (int64_t i = 0; i < r; i++) {
            if (kind == 0) {
                yd[i] = xd[i];
                if (rnd_in(0, 1)) rev_dims[nrev++] = i;
            } else if (kind == 1) {
                sl[i].start = rnd_in(0, xd[i]);
                sl[i].limit = rnd_in(sl[i].start, xd[i]);
                sl[i].stride = rnd_in(1, 3);
                yd[i] = (sl[i].limit - sl[i].start + sl[i].stride - 1) / sl[i].stride;
            } else {
                pd[i].interior = rnd_in(0, 2);
                int64_t base = xd[i] + (xd[i] > 0 ? xd[i] - 1 : 0) * pd[i].interior;
                pd[i].low = rnd_in(-3, 3);
                pd[i].high = rnd_in(-3, 3);
                if (base + pd[i].low + pd[i].high < 0) pd[i].high = -base - pd[i].low;
                yd[i] = base + pd[i].low + pd[i].high;
            }
        }
        cxla_shape ys = {.type = t, .rank = r, .dims = yd};
        built b;
        begin(&b);
        begin_main(&b, 2, (const cxla_shape *[]){&xs, &vs});
        cxla_instr *in;
        if (kind == 0) {
            in = op(b.main, CXLA_OP_REVERSE, &ys, 1, b.p);
            set_ints(in, CXLA_ATTR_DIMENSIONS, nrev, rev_dims);
        } else if (kind == 1) {
            in = op(b.main, CXLA_OP_SLICE, &ys, 1, b.p);
            set_slice(in, r, sl);
        } else {
            in = op(b.main, CXLA_OP_PAD, &ys, 2, b.p);
            set_padding(in, r, pd);
        }
        cxla_literal *args[2] = {random_literal(&xs), random_literal(&vs)};
        cxla_literal *y = run(&b, in, 2, args);
        int64_t n = count_of(r, yd), o[8] = {0}, ystr[8];
        row_major_strides(r, yd, ystr);
        char *want = malloc((size_t)(n ? n : 1) * es);
        const char *xb = cxla_literal_data_const(args[0]), *vb = cxla_literal_data_const(args[1]);
        if (n) do {
                int64_t xi[8];
                bool pad = false;
                for (int64_t i = 0; i < r; i++) {
                    if (kind == 0) {
                        bool rev = false;
                        for (int64_t k = 0; k < nrev; k++) rev = rev || rev_dims[k] == i;
                        xi[i] = rev ? xd[i] - 1 - o[i] : o[i];
                    } else if (kind == 1) {
                        xi[i] = sl[i].start + o[i] * sl[i].stride;
                    } else {
                        int64_t tt = o[i] - pd[i].low, step = pd[i].interior + 1;
                        if (tt < 0 || tt % step != 0 || tt / step >= xd[i]) pad = true;
                        xi[i] = tt / step;
                    }
                }
                memcpy(want + linear(r, ystr, o) * (int64_t)es,
                       pad ? vb : xb + linear(r, xstr, xi) * (int64_t)es, es);
            } while (cxla_index_next(r, yd, o));
        check_bytes(y, want, (size_t)n * es,
                    kind == 0   ? "reverse"
                    : kind == 1 ? "slice"
                                : "pad",
                    iter);
        free(want);
        cxla_literal_free(args[0]);
        cxla_literal_free(args[1]);
        cxla_literal_free(y);
        cxla_module_destroy(b.m);
    }
}

static void test_broadcast_concatenate(void) {
    for (int iter = 0; iter < 200; iter++) {
        cxla_type t = rnd_type();
        size_t es = cxla_type_storage(t);
        built b;
        begin(&b);
        if (iter % 2 == 0) { /* broadcast */
            int64_t yr = rnd_in(0, 4), yd[8], xr = rnd_in(0, yr), map[8], xd[8], all[8];
            rnd_dims(yr, yd, 1, 7, true);
            for (int64_t i = 0; i < yr; i++) all[i] = i;
            shuffle(all, yr);
            /* A sorted subset of the result dims. */
            for (int64_t i = 0; i < xr; i++) map[i] = all[i];
            for (int64_t i = 0; i < xr; i++)
                for (int64_t j = i + 1; j < xr; j++)
                    if (map[j] < map[i]) {
                        int64_t tmp = map[i];
                        map[i] = map[j];
                        map[j] = tmp;
                    }
            for (int64_t i = 0; i < xr; i++) xd[i] = yd[map[i]];
            cxla_shape xs = {.type = t, .rank = xr, .dims = xd},
                       ys = {.type = t, .rank = yr, .dims = yd};
            begin_main(&b, 1, (const cxla_shape *[]){&xs});
            cxla_instr *in = op(b.main, CXLA_OP_BROADCAST, &ys, 1, b.p);
            set_ints(in, CXLA_ATTR_DIMENSIONS, xr, map);
            cxla_literal *x = random_literal(&xs);
            cxla_literal *y = run(&b, in, 1, &x);
            int64_t n = count_of(yr, yd), o[8] = {0}, xstr[8], ystr[8];
            row_major_strides(xr, xd, xstr);
            row_major_strides(yr, yd, ystr);
            char *want = malloc((size_t)(n ? n : 1) * es);
            if (n) do {
                    int64_t xi[8];
                    for (int64_t i = 0; i < xr; i++) xi[i] = o[map[i]];
                    memcpy(want + linear(yr, ystr, o) * (int64_t)es,
                           (const char *)cxla_literal_data_const(x) +
                               linear(xr, xstr, xi) * (int64_t)es,
                           es);
                } while (cxla_index_next(yr, yd, o));
            check_bytes(y, want, (size_t)n * es, "broadcast", iter);
            free(want);
            cxla_literal_free(x);
            cxla_literal_free(y);
        } else { /* concatenate */
            int64_t r = rnd_in(1, 4), k = rnd_in(1, 3), d = rnd_in(0, r - 1), base[8];
            int64_t xd[3][8], yd[8];
            rnd_dims(r, base, 1, 5, false);
            cxla_shape xs[3];
            memcpy(yd, base, sizeof(base));
            yd[d] = 0;
            for (int64_t j = 0; j < k; j++) {
                memcpy(xd[j], base, sizeof(base));
                xd[j][d] = rnd_in(0, 4);
                yd[d] += xd[j][d];
                xs[j] = (cxla_shape){.type = t, .rank = r, .dims = xd[j]};
            }
            cxla_shape ys = {.type = t, .rank = r, .dims = yd};
            begin_main(&b, k, (const cxla_shape *[]){&xs[0], &xs[1], &xs[2]});
            cxla_instr *in = op(b.main, CXLA_OP_CONCATENATE, &ys, k, b.p);
            set_ints(in, CXLA_ATTR_DIMENSIONS, 1, &d);
            cxla_literal *x[3];
            for (int64_t j = 0; j < k; j++) x[j] = random_literal(&xs[j]);
            cxla_literal *y = run(&b, in, k, x);
            int64_t n = count_of(r, yd), o[8] = {0}, ystr[8];
            row_major_strides(r, yd, ystr);
            char *want = malloc((size_t)(n ? n : 1) * es);
            if (n) do {
                    int64_t j = 0, xi[8], xstr[8];
                    memcpy(xi, o, sizeof(xi));
                    while (xi[d] >= xd[j][d]) xi[d] -= xd[j++][d];
                    row_major_strides(r, xd[j], xstr);
                    memcpy(want + linear(r, ystr, o) * (int64_t)es,
                           (const char *)cxla_literal_data_const(x[j]) +
                               linear(r, xstr, xi) * (int64_t)es,
                           es);
                } while (cxla_index_next(r, yd, o));
            check_bytes(y, want, (size_t)n * es, "concatenate", iter);
            free(want);
            for (int64_t j = 0; j < k; j++) cxla_literal_free(x[j]);
            cxla_literal_free(y);
        }
        cxla_module_destroy(b.m);
    }
}

/* ---- dynamic-slice, dynamic-update-slice --------------------------------------------- */

static int64_t clamp(int64_t v, int64_t lo, int64_t hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

static void test_dynamic_slices(void) {
    static const cxla_type index_types[] = {CXLA_S32, CXLA_S8, CXLA_U8, CXLA_S64, CXLA_U32};
    for (int iter = 0; iter < 300; iter++) {
        int64_t r = rnd_in(0, 4), xd[8], sd[8], xstr[8], sstr[8];
        rnd_dims(r, xd, 1, 6, true);
        for (int64_t i = 0; i < r; i++) sd[i] = rnd_in(0, xd[i]);
        cxla_type t = rnd_type(), it = index_types[rnd_in(0, 4)];
        bool unsigned_index = it == CXLA_U8 || it == CXLA_U32;
        bool update = iter % 2 == 1, vector_form = r > 0 && rnd_in(0, 3) == 0;
        size_t es = cxla_type_storage(t);
        cxla_shape xs = {.type = t, .rank = r, .dims = xd}, ss = {.type = t, .rank = r, .dims = sd};
        cxla_shape is = {.type = it}, vs = {.type = it, .rank = 1, .dims = &r};
        const cxla_shape *shapes[12] = {&xs};
        int64_t np = 1;
        if (update) shapes[np++] = &ss;
        int64_t first = np;
        if (vector_form)
            shapes[np++] = &vs;
        else
            for (int64_t i = 0; i < r; i++) shapes[np++] = &is;
        built b;
        begin(&b);
        begin_main(&b, np, shapes);
        cxla_instr *in;
        if (update) {
            in = op(b.main, CXLA_OP_DYNAMIC_UPDATE_SLICE, &xs, np, b.p);
        } else {
            in = op(b.main, CXLA_OP_DYNAMIC_SLICE, &ss, np, b.p);
            set_ints(in, CXLA_ATTR_DYNAMIC_SLICE_SIZES, r, sd);
        }
        cxla_literal *args[12];
        int64_t starts[8];
        args[0] = random_literal(&xs);
        if (update) args[1] = random_literal(&ss);
        int64_t lo = unsigned_index ? 0 : -4, hi = it == CXLA_S8 ? 100 : 9;
        if (vector_form) {
            args[first] = int_literal(it, 1, &r, lo, hi);
            for (int64_t i = 0; i < r; i++)
                starts[i] = cxla_load_s64(it, (char *)cxla_literal_data(args[first]) +
                                                  (size_t)i * cxla_type_storage(it));
        } else {
            for (int64_t i = 0; i < r; i++) {
                args[first + i] = int_literal(it, 0, NULL, lo, hi);
                starts[i] = cxla_load_s64(it, cxla_literal_data(args[first + i]));
            }
        }
        cxla_literal *y = run(&b, in, np, args);
        for (int64_t i = 0; i < r; i++) starts[i] = clamp(starts[i], 0, xd[i] - sd[i]);
        row_major_strides(r, xd, xstr);
        row_major_strides(r, sd, sstr);
        int64_t nx = count_of(r, xd), ns = count_of(r, sd), o[8] = {0};
        size_t size = (size_t)(update ? nx : ns) * es;
        char *want = malloc(size ? size : 1);
        const char *xb = cxla_literal_data_const(args[0]);
        if (update && size) memcpy(want, xb, size);
        if (ns) do {
                int64_t xi[8];
                for (int64_t i = 0; i < r; i++) xi[i] = starts[i] + o[i];
                if (update)
                    memcpy(want + linear(r, xstr, xi) * (int64_t)es,
                           (const char *)cxla_literal_data_const(args[1]) +
                               linear(r, sstr, o) * (int64_t)es,
                           es);
                else
                    memcpy(want + linear(r, sstr, o) * (int64_t)es,
                           xb + linear(r, xstr, xi) * (int64_t)es, es);
            } while (cxla_index_next(r, sd, o));
        check_bytes(y, want, size, update ? "dynamic-update-slice" : "dynamic-slice", iter);
        free(want);
        for (int64_t i = 0; i < np; i++) cxla_literal_free(args[i]);
        cxla_literal_free(y);
        cxla_module_destroy(b.m);
    }
}

/* ---- bitcast ------------------------------------------------------------------------- */

static void test_bitcast_layouts(void) {
    for (int iter = 0; iter < 200; iter++) {
        /* Same element count and type, or a same-size reinterpretation. */
        int64_t xr = rnd_in(0, 4), xd[8], yr, yd[8], n;
        rnd_dims(xr, xd, 1, 5, false);
        n = count_of(xr, xd);
        cxla_type xt = rnd_type(), yt = xt;
        if (rnd_in(0, 2) == 0) {
            static const cxla_type same4[] = {CXLA_F32, CXLA_S32, CXLA_U32};
            xt = same4[rnd_in(0, 2)];
            yt = same4[rnd_in(0, 2)];
        }
        /* Factor n into a random result shape. */
        yr = 0;
        int64_t rest = n;
        while (rest > 1 && yr < 4) {
            int64_t f = rnd_in(1, rest);
            while (rest % f) f--;
            yd[yr++] = f;
            rest /= f;
        }
        if (rest > 1) yd[yr++] = rest;
        if (rnd_in(0, 3) == 0 && yr < 6) yd[yr++] = 1;
        int64_t xm[8], ym[8];
        for (int64_t i = 0; i < xr; i++) xm[i] = i;
        for (int64_t i = 0; i < yr; i++) ym[i] = i;
        shuffle(xm, xr);
        shuffle(ym, yr);
        cxla_layout xl = {.minor_to_major = xm}, yl = {.minor_to_major = ym};
        cxla_shape xs = {.type = xt, .rank = xr, .dims = xd, .layout = &xl};
        cxla_shape ys = {.type = yt, .rank = yr, .dims = yd, .layout = &yl};
        cxla_shape xs_plain = xs;
        xs_plain.layout = NULL;
        built b;
        begin(&b);
        begin_main(&b, 1, (const cxla_shape *[]){&xs});
        cxla_instr *in = op(b.main, CXLA_OP_BITCAST, &ys, 1, b.p);
        cxla_literal *x = random_literal(&xs_plain);
        cxla_literal *y = run(&b, in, 1, &x);
        /* Physical buffer of x in its layout, read back in y's layout. */
        size_t es = cxla_type_storage(xt);
        char *phys = malloc((size_t)n * es), *want = malloc((size_t)n * es);
        int64_t idx[8] = {0}, str[8];
        row_major_strides(xr, xd, str);
        do {
            memcpy(phys + cxla_shape_linear_index(&xs, idx) * (int64_t)es,
                   (const char *)cxla_literal_data_const(x) + linear(xr, str, idx) * (int64_t)es,
                   es);
        } while (cxla_index_next(xr, xd, idx));
        memset(idx, 0, sizeof(idx));
        row_major_strides(yr, yd, str);
        do {
            memcpy(want + linear(yr, str, idx) * (int64_t)es,
                   phys + cxla_shape_linear_index(&ys, idx) * (int64_t)es, es);
        } while (cxla_index_next(yr, yd, idx));
        check_bytes(y, want, (size_t)n * es, "bitcast", iter);
        free(phys);
        free(want);
        cxla_literal_free(x);
        cxla_literal_free(y);
        cxla_module_destroy(b.m);
    }
}

/* ---- gather and scatter ------------------------------------------------------------- */

/* A random index configuration shared by gather and scatter. The operand dims each get a
 * role: 0 window (kept in the slice / update window), 1 collapsed / inserted,
 * 2 batching. */
typedef struct index_config {
    int64_t xr, xd[8], role[8];
    int64_t map_n, map[8];      /* start_index_map / scatter_dims_to_operand_dims */
    int64_t ir, id[8], ivd;     /* indices shape and index_vector_dim */
    int64_t nbatch, bpos[8];    /* batch dims of the indices: their indices dims */
    int64_t ob_n, ob[8], ib[8]; /* operand and indices batching dims */
    int64_t w_n, wdims[8];      /* window operand dims in order */
} index_config;

static void random_config(index_config *c) {
    memset(c, 0, sizeof(*c));
    c->xr = rnd_in(1, 4);
    rnd_dims(c->xr, c->xd, 1, 5, false);
    int64_t cand[8], nc = 0;
    for (int64_t d = 0; d < c->xr; d++) {
        c->role[d] = rnd_in(0, 4) < 3 ? 0 : rnd_in(1, 2);
        if (c->role[d] == 2)
            c->ob[c->ob_n++] = d;
        else
            cand[nc++] = d;
        if (c->role[d] == 0) c->wdims[c->w_n++] = d;
    }
    shuffle(cand, nc);
    c->map_n = rnd_in(0, nc);
    memcpy(c->map, cand, sizeof(cand));
    /* Batch dims of the indices: the batching ones (sizes of their operand dims) and
     * some others, in random order. */
    int64_t extra = rnd_in(0, 2), sizes[8], which[8];
    c->nbatch = extra + c->ob_n;
    for (int64_t j = 0; j < c->nbatch; j++) which[j] = j;
    shuffle(which, c->nbatch);
    for (int64_t j = 0; j < c->nbatch; j++)
        sizes[j] = which[j] < c->ob_n ? c->xd[c->ob[which[j]]] : rnd_in(0, 3);
    bool implicit = c->map_n == 1 && rnd_in(0, 1);
    c->ir = c->nbatch + (implicit ? 0 : 1);
    c->ivd = implicit ? c->ir : rnd_in(0, c->nbatch);
    for (int64_t j = 0, d = 0; d < c->ir; d++) {
        if (d == c->ivd) {
            c->id[d] = c->map_n;
            continue;
        }
        c->id[d] = sizes[j];
        c->bpos[j] = d;
        if (which[j] < c->ob_n) c->ib[which[j]] = d;
        j++;
    }
}

/* The index vector for batch index |g| (nbatch entries). */
static void index_vector(const index_config *c, const int64_t *iv, const int64_t *g, int64_t *s) {
    int64_t str[8], idx[8] = {0};
    row_major_strides(c->ir, c->id, str);
    for (int64_t j = 0; j < c->nbatch; j++) idx[c->bpos[j]] = g[j];
    for (int64_t k = 0; k < c->map_n; k++) {
        if (c->ivd < c->ir) idx[c->ivd] = k;
        s[k] = iv[linear(c->ir, str, idx)];
    }
}

static int64_t *load_all(const cxla_literal *lit) {
    int64_t n = cxla_literal_element_count(lit);
    int64_t *v = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    size_t es = cxla_type_storage(cxla_literal_type(lit));
    for (int64_t i = 0; i < n; i++)
        v[i] = cxla_load_s64(cxla_literal_type(lit),
                             (const char *)cxla_literal_data_const(lit) + (size_t)i * es);
    return v;
}

static void test_gather(void) {
    for (int iter = 0; iter < 400; iter++) {
        index_config c;
        random_config(&c);
        cxla_type t = rnd_type();
        size_t es = cxla_type_storage(t);
        int64_t ss[8];
        for (int64_t d = 0; d < c.xr; d++) ss[d] = c.role[d] == 0 ? rnd_in(0, c.xd[d]) : 1;
        if (iter % 4 == 0)
            for (int64_t d = 0; d < c.xr; d++) ss[d] = c.role[d] == 0 ? rnd_in(1, c.xd[d]) : 1;
        /* Result: offset dims at random sorted positions among the batch dims. */
        int64_t yr = c.w_n + c.nbatch, yd[16], offset[8], pos[16] = {0};
        for (int64_t i = 0; i < yr; i++) pos[i] = i;
        shuffle(pos, yr);
        bool is_offset[16] = {false};
        for (int64_t k = 0; k < c.w_n; k++) is_offset[pos[k]] = true;
        for (int64_t i = 0, k = 0, j = 0; i < yr; i++) {
            if (is_offset[i]) {
                offset[k] = i;
                yd[i] = ss[c.wdims[k++]];
            } else {
                yd[i] = c.id[c.bpos[j++]];
            }
        }
        int64_t collapsed[8], nco = 0;
        for (int64_t d = 0; d < c.xr; d++)
            if (c.role[d] == 1) collapsed[nco++] = d;
        cxla_type it = rnd_in(0, 1) ? CXLA_S32 : CXLA_S64;
        cxla_shape xs = {.type = t, .rank = c.xr, .dims = c.xd};
        cxla_shape is = {.type = it, .rank = c.ir, .dims = c.id};
        cxla_shape ys = {.type = t, .rank = yr, .dims = yd};
        built b;
        begin(&b);
        begin_main(&b, 2, (const cxla_shape *[]){&xs, &is});
        cxla_instr *g = op(b.main, CXLA_OP_GATHER, &ys, 2, b.p);
        set_ints(g, CXLA_ATTR_OFFSET_DIMS, c.w_n, offset);
        set_ints(g, CXLA_ATTR_COLLAPSED_SLICE_DIMS, nco, collapsed);
        set_ints(g, CXLA_ATTR_START_INDEX_MAP, c.map_n, c.map);
        set_ints(g, CXLA_ATTR_OPERAND_BATCHING_DIMS, c.ob_n, c.ob);
        set_ints(g, CXLA_ATTR_START_INDICES_BATCHING_DIMS, c.ob_n, c.ib);
        set_int(g, CXLA_ATTR_INDEX_VECTOR_DIM, c.ivd);
        set_ints(g, CXLA_ATTR_SLICE_SIZES, c.xr, ss);
        cxla_literal *args[2] = {random_literal(&xs), int_literal(it, c.ir, c.id, -3, 7)};
        cxla_literal *y = run(&b, g, 2, args);
        /* The formal semantics, one output element at a time. */
        int64_t n = count_of(yr, yd), out[16] = {0}, xstr[8], ystr[16];
        int64_t *iv = load_all(args[1]);
        row_major_strides(c.xr, c.xd, xstr);
        row_major_strides(yr, yd, ystr);
        char *want = calloc((size_t)(n ? n : 1), es);
        if (n) do {
                int64_t gidx[8], s[8], in[8] = {0};
                for (int64_t i = 0, j = 0; i < yr; i++)
                    if (!is_offset[i]) gidx[j++] = out[i];
                index_vector(&c, iv, gidx, s);
                for (int64_t k = 0; k < c.map_n; k++)
                    in[c.map[k]] = clamp(s[k], 0, c.xd[c.map[k]] - ss[c.map[k]]);
                for (int64_t i = 0; i < c.ob_n; i++) {
                    int64_t jb = c.ib[i] > c.ivd ? c.ib[i] - 1 : c.ib[i];
                    in[c.ob[i]] += gidx[jb];
                }
                for (int64_t k = 0; k < c.w_n; k++) in[c.wdims[k]] += out[offset[k]];
                memcpy(want + linear(yr, ystr, out) * (int64_t)es,
                       (const char *)cxla_literal_data_const(args[0]) +
                           linear(c.xr, xstr, in) * (int64_t)es,
                       es);
            } while (cxla_index_next(yr, yd, out));
        check_bytes(y, want, (size_t)n * es, "gather", iter);
        free(want);
        free(iv);
        cxla_literal_free(args[0]);
        cxla_literal_free(args[1]);
        cxla_literal_free(y);
        cxla_module_destroy(b.m);
    }
}

/* A scalar computation (p0, p1) -> op(p0, p1), or -> p1 with CXLA_OP_PARAMETER. */
static cxla_computation *binary_comp(cxla_module *m, const char *name, cxla_opcode opcode,
                                     cxla_type t) {
    cxla_computation *c;
    CHECK_OK(cxla_module_add_computation(m, name, &c));
    cxla_shape s = {.type = t};
    cxla_instr *p[2] = {param(c, 0, &s), param(c, 1, &s)};
    set_params(c, 2, p);
    c->root = opcode == CXLA_OP_PARAMETER ? p[1] : op(c, opcode, &s, 2, p);
    return c;
}

/* Scatter modes checked: 0 add on s32, 1 max on u16, 2 or on pred, 3 assignment (f32),
 * 4 a two-array computation the interpreter must call (s32, f32) -> (update0, old1). */
static void test_scatter(void) {
    for (int iter = 0; iter < 500; iter++) {
        int mode = iter % 5;
        index_config c;
        random_config(&c);
        /* Assignment with repeated indices depends on the order: make the window dims
         * trailing so that row-major order over the updates is the interpreter's. */
        bool trailing = mode >= 3;
        int64_t ue[8];
        for (int64_t k = 0; k < c.w_n; k++) ue[k] = rnd_in(0, c.xd[c.wdims[k]]);
        if (iter % 3 == 0)
            for (int64_t k = 0; k < c.w_n; k++) ue[k] = rnd_in(1, c.xd[c.wdims[k]]);
        int64_t ur = c.w_n + c.nbatch, ud[16], uwd[8], pos[16] = {0};
        for (int64_t i = 0; i < ur; i++) pos[i] = i;
        if (!trailing) shuffle(pos, ur);
        bool is_window[16] = {false};
        for (int64_t k = 0; k < c.w_n; k++) is_window[trailing ? c.nbatch + k : pos[k]] = true;
        for (int64_t i = 0, k = 0, j = 0; i < ur; i++) {
            if (is_window[i]) {
                uwd[k] = i;
                ud[i] = ue[k++];
            } else {
                ud[i] = c.id[c.bpos[j++]];
            }
        }
        int64_t inserted[8], nin = 0;
        for (int64_t d = 0; d < c.xr; d++)
            if (c.role[d] == 1) inserted[nin++] = d;
        static const cxla_type types[] = {CXLA_S32, CXLA_U16, CXLA_PRED, CXLA_F32, CXLA_S32};
        static const cxla_opcode ops[] = {CXLA_OP_ADD, CXLA_OP_MAXIMUM, CXLA_OP_OR,
                                          CXLA_OP_PARAMETER, CXLA_OP_PARAMETER};
        cxla_type t = types[mode], t2 = CXLA_F32;
        int64_t n_arrays = mode == 4 ? 2 : 1;
        cxla_type it = rnd_in(0, 1) ? CXLA_S32 : CXLA_U8;
        cxla_shape xs = {.type = t, .rank = c.xr, .dims = c.xd};
        cxla_shape x2s = {.type = t2, .rank = c.xr, .dims = c.xd};
        cxla_shape is = {.type = it, .rank = c.ir, .dims = c.id};
        cxla_shape us = {.type = t, .rank = ur, .dims = ud};
        cxla_shape u2s = {.type = t2, .rank = ur, .dims = ud};
        built b;
        begin(&b);
        cxla_computation *comp;
        if (mode < 4) {
            comp = binary_comp(b.m, "combine", ops[mode], t);
        } else {
            CHECK_OK(cxla_module_add_computation(b.m, "combine", &comp));
            cxla_shape a = {.type = t}, f = {.type = t2};
            cxla_instr *p[4] = {param(comp, 0, &a), param(comp, 1, &f), param(comp, 2, &a),
                                param(comp, 3, &f)};
            set_params(comp, 4, p);
            cxla_shape tup = {
                .type = CXLA_TUPLE, .tuple_count = 2, .elements = (cxla_shape[]){a, f}};
            comp->root = op(comp, CXLA_OP_TUPLE, &tup, 2, (cxla_instr *[]){p[2], p[1]});
        }
        const cxla_shape *shapes[5];
        if (n_arrays == 1) {
            shapes[0] = &xs, shapes[1] = &is, shapes[2] = &us;
        } else {
            shapes[0] = &xs, shapes[1] = &x2s, shapes[2] = &is, shapes[3] = &us, shapes[4] = &u2s;
        }
        int64_t np = 2 * n_arrays + 1;
        begin_main(&b, np, shapes);
        cxla_shape pair[2] = {xs, x2s}, rs = xs;
        if (n_arrays == 2)
            rs = (cxla_shape){.type = CXLA_TUPLE, .tuple_count = 2, .elements = pair};
        cxla_instr *sc = op(b.main, CXLA_OP_SCATTER, &rs, np, b.p);
        set_ints(sc, CXLA_ATTR_UPDATE_WINDOW_DIMS, c.w_n, uwd);
        set_ints(sc, CXLA_ATTR_INSERTED_WINDOW_DIMS, nin, inserted);
        set_ints(sc, CXLA_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS, c.map_n, c.map);
        set_ints(sc, CXLA_ATTR_INPUT_BATCHING_DIMS, c.ob_n, c.ob);
        set_ints(sc, CXLA_ATTR_SCATTER_INDICES_BATCHING_DIMS, c.ob_n, c.ib);
        set_int(sc, CXLA_ATTR_INDEX_VECTOR_DIM, c.ivd);
        set_comp(sc, CXLA_ATTR_TO_APPLY, comp);
        cxla_literal *args[5];
        int64_t lo = t == CXLA_PRED ? 0 : t == CXLA_U16 ? 0 : -1000;
        int64_t hi = t == CXLA_PRED ? 1 : 60000;
        args[0] = int_literal(t, c.xr, c.xd, lo, t == CXLA_S32 ? 1000 : hi);
        if (n_arrays == 2) args[1] = random_literal(&x2s);
        args[n_arrays] = int_literal(it, c.ir, c.id, it == CXLA_U8 ? 0 : -2, 6);
        args[n_arrays + 1] = int_literal(t, ur, ud, lo, t == CXLA_S32 ? 1000 : hi);
        if (n_arrays == 2) args[4] = random_literal(&u2s);
        if (t == CXLA_S32 && mode == 0) { /* large values: exercise wrap-around */
            int32_t *v = cxla_literal_data(args[2]);
            if (cxla_literal_element_count(args[2]) > 0) v[0] = INT32_MAX;
        }
        cxla_literal *y = run(&b, sc, np, args);
        /* Reference: every update element in row-major order, windows that do not fit
         * entirely are skipped. */
        size_t es = cxla_type_storage(t);
        int64_t nx = count_of(c.xr, c.xd), nu = count_of(ur, ud), u[16] = {0}, xstr[8], ustr[16];
        row_major_strides(c.xr, c.xd, xstr);
        row_major_strides(ur, ud, ustr);
        char *want = malloc((size_t)(nx ? nx : 1) * es);
        if (nx) memcpy(want, cxla_literal_data_const(args[0]), (size_t)nx * es);
        int64_t *iv = load_all(args[n_arrays]);
        const char *ub = cxla_literal_data_const(args[n_arrays + 1]);
        if (nu) do {
                int64_t gidx[8], s[8], in[8] = {0}, wext[8];
                for (int64_t i = 0, j = 0; i < ur; i++)
                    if (!is_window[i]) gidx[j++] = u[i];
                index_vector(&c, iv, gidx, s);
                for (int64_t k = 0; k < c.map_n; k++) in[c.map[k]] = s[k];
                for (int64_t i = 0; i < c.ob_n; i++) {
                    int64_t jb = c.ib[i] > c.ivd ? c.ib[i] - 1 : c.ib[i];
                    in[c.ob[i]] = gidx[jb];
                }
                for (int64_t d = 0; d < c.xr; d++) wext[d] = 1;
                for (int64_t k = 0; k < c.w_n; k++) wext[c.wdims[k]] = ue[k];
                bool fits = true;
                for (int64_t d = 0; d < c.xr; d++)
                    fits = fits && in[d] >= 0 && in[d] + wext[d] <= c.xd[d];
                if (!fits) continue;
                for (int64_t k = 0; k < c.w_n; k++) in[c.wdims[k]] += u[uwd[k]];
                char *dp = want + linear(c.xr, xstr, in) * (int64_t)es;
                const char *sp = ub + linear(ur, ustr, u) * (int64_t)es;
                if (mode == 0) {
                    int32_t a, v;
                    memcpy(&a, dp, 4);
                    memcpy(&v, sp, 4);
                    a = (int32_t)((uint32_t)a + (uint32_t)v);
                    memcpy(dp, &a, 4);
                } else if (mode == 1) {
                    uint16_t a, v;
                    memcpy(&a, dp, 2);
                    memcpy(&v, sp, 2);
                    if (v > a) memcpy(dp, &v, 2);
                } else if (mode == 2) {
                    *dp = (char)(*dp || *sp);
                } else {
                    memcpy(dp, sp, es);
                }
            } while (cxla_index_next(ur, ud, u));
        if (n_arrays == 1) {
            check_bytes(y, want, (size_t)nx * es, "scatter", iter);
        } else if (y) {
            CHECK_EQ_I64(cxla_literal_tuple_count(y), 2);
            check_bytes(cxla_literal_tuple_element_const(y, 0), want, (size_t)nx * es,
                        "variadic scatter 0", iter);
            check_bytes(cxla_literal_tuple_element_const(y, 1), cxla_literal_data_const(args[1]),
                        cxla_literal_byte_size(args[1]), "variadic scatter 1", iter);
        }
        free(want);
        free(iv);
        for (int64_t i = 0; i < np; i++) cxla_literal_free(args[i]);
        cxla_literal_free(y);
        cxla_module_destroy(b.m);
    }
}

/* dynamic-reshape to runtime sizes below the bounds: the elements fill the region
 * [0, size) in row-major order of the sizes; the rest of the bounded buffer is zero.
 * (Built in memory: the verifier compares bounded element counts.) */
static void test_dynamic_reshape(void) {
    cxla_shape xs = {.type = CXLA_S32, .rank = 1, .dims = (int64_t[]){4}};
    cxla_shape sz = {.type = CXLA_S32};
    cxla_shape ys = {
        .type = CXLA_S32, .rank = 2, .dims = (int64_t[]){3, 2}, .dynamic = (uint8_t[]){1, 1}};
    built b;
    begin(&b);
    begin_main(&b, 3, (const cxla_shape *[]){&xs, &sz, &sz});
    cxla_instr *r = op(b.main, CXLA_OP_DYNAMIC_RESHAPE, &ys, 3, b.p);
    cxla_literal *args[3] = {int_literal(CXLA_S32, 1, xs.dims, 0, 0), NULL, NULL};
    for (int32_t i = 0; i < 4; i++) ((int32_t *)cxla_literal_data(args[0]))[i] = i + 1;
    CHECK_OK(cxla_literal_create_scalar(CXLA_S32, 2, &args[1]));
    CHECK_OK(cxla_literal_create_scalar(CXLA_S32, 2, &args[2]));
    cxla_literal *y = run(&b, r, 3, args);
    const int32_t want[6] = {1, 2, 3, 4, 0, 0};
    check_bytes(y, want, sizeof(want), "dynamic-reshape", 0);
    cxla_literal_free(y);
    /* Sizes that do not hold the operand's elements, or exceed a bound, are errors. */
    cxla_literal_free(args[2]);
    CHECK_OK(cxla_literal_create_scalar(CXLA_S32, 1, &args[2]));
    CHECK_ERROR_HAS(interp_run_module(b.m, NULL, (const cxla_literal *const *)args, 3, &y),
                    "hold 2 elements");
    cxla_literal_free(args[1]);
    CHECK_OK(cxla_literal_create_scalar(CXLA_S32, 4, &args[1]));
    CHECK_ERROR_HAS(interp_run_module(b.m, NULL, (const cxla_literal *const *)args, 3, &y),
                    "outside its bound");
    for (int i = 0; i < 3; i++) cxla_literal_free(args[i]);
    cxla_module_destroy(b.m);
}

/* Errors come back as statuses: a bad shape for the handler (as a module that skipped
 * the verifier could have). */
static void test_errors(void) {
    cxla_shape xs = {.type = CXLA_F32, .rank = 1, .dims = (int64_t[]){4}};
    cxla_shape ys = {.type = CXLA_F32, .rank = 1, .dims = (int64_t[]){5}};
    cxla_literal *x = random_literal(&xs), *y = NULL;
    built b;
    begin(&b);
    begin_main(&b, 1, (const cxla_shape *[]){&xs});
    b.main->root = op(b.main, CXLA_OP_RESHAPE, &ys, 1, b.p);
    CHECK_ERROR_HAS(interp_run_module(b.m, NULL, (const cxla_literal *const *)&x, 1, &y),
                    "reshapes 4 elements into 5");
    cxla_module_destroy(b.m);
    begin(&b);
    begin_main(&b, 1, (const cxla_shape *[]){&xs});
    b.main->root = op(b.main, CXLA_OP_TRANSPOSE, &xs, 1, b.p);
    set_ints(b.main->root, CXLA_ATTR_DIMENSIONS, 1, (int64_t[]){1});
    CHECK_ERROR_HAS(interp_run_module(b.m, NULL, (const cxla_literal *const *)&x, 1, &y),
                    "permutation");
    cxla_module_destroy(b.m);
    cxla_literal_free(x);
}

TEST_MAIN(TEST(test_transpose), TEST(test_reverse_slice_pad), TEST(test_broadcast_concatenate),
          TEST(test_dynamic_slices), TEST(test_bitcast_layouts), TEST(test_gather),
          TEST(test_scatter), TEST(test_dynamic_reshape), TEST(test_errors))
