/* Donated arguments (cxla_run_options.donated, cxla_executable_run_buffers) and the
 * module's input_output_alias, on the interpreter and the cpu backend: with the result
 * buffer being the donated argument's memory the result lands there (the cpu backend
 * writes it in place, the interpreter copies it in); a buffer not donated is never written;
 * may-alias and must-alias behave alike; aliases without donation and donation without
 * aliases still give the right results; and the errors: a donated buffer shared with
 * another argument, donation on runs that take literals, aliases that name no leaf, leaves
 * of different shapes, or a parameter leaf aliased twice. */
#include <stdlib.h>

#include "cxla/cxla.h"
#include "harness.h"

static cxla_executable *compile(cxla_client *c, const char *text) {
    cxla_executable *e = NULL;
    CHECK_OK(cxla_client_compile_hlo_text(c, text, (size_t)-1, "donation.hlo", &e));
    return e;
}

/* An update of a big parameter: a dynamic-update-slice writes four elements. */
static const char dus_text[] =
    "HloModule donate_dus, input_output_alias={ {}: (0, {}, may-alias) }\n"
    "ENTRY main {\n"
    "  p = f32[1024] parameter(0)\n"
    "  u = f32[4] parameter(1)\n"
    "  i = s32[] parameter(2)\n"
    "  ROOT r = f32[1024] dynamic-update-slice(p, u, i)\n"
    "}\n";

static void fill(float *x, int64_t n, float base) {
    for (int64_t k = 0; k < n; k++) x[k] = base + (float)k;
}

/* Whether |x| is |base| + k everywhere except [at, at + 4), which holds u. */
static bool updated(const float *x, float base, int64_t at, const float *u) {
    for (int64_t k = 0; k < 1024; k++) {
        float want = k >= at && k < at + 4 ? u[k - at] : base + (float)k;
        if (x[k] != want) return false;
    }
    return true;
}

static void test_dus(const char *backend) {
    cxla_client_options co;
    cxla_client_options_init(&co);
    co.backend = backend;
    co.thread_count = 1;
    cxla_client *c = NULL;
    CHECK_OK(cxla_client_create(&co, &c));
    cxla_executable *e = c ? compile(c, dus_text) : NULL;
    if (!e) {
        cxla_client_destroy(c);
        return;
    }
    static float p[1024], out[1024];
    float u[4] = {-1, -2, -3, -4};
    int32_t i = 100;
    bool donated[3] = {true, false, false};
    cxla_run_options ro;
    cxla_run_options_init(&ro);
    ro.donated = donated;

    /* Donated, and the result buffer is the argument's memory: updated where it lies. */
    fill(p, 1024, 0.5f);
    cxla_buffer args[3] = {{NULL, p, sizeof(p)}, {NULL, u, sizeof(u)}, {NULL, &i, sizeof(i)}};
    cxla_buffer res = {NULL, p, sizeof(p)};
    CHECK_OK(cxla_executable_run_buffers(e, &ro, args, 3, &res, 1));
    CHECK_MSG(updated(p, 0.5f, 100, u), "%s: donated in place", backend);
    /* Again on the same memory: the run reads what the last one left. */
    i = 2000; /* clamped to 1020 */
    CHECK_OK(cxla_executable_run_buffers(e, &ro, args, 3, &res, 1));
    CHECK_MSG(p[100] == -1 && p[1020] == -1 && p[1023] == -4 && p[1019] == 1019.5f,
              "%s: second run", backend);

    /* Donated, the result elsewhere: the right result there. */
    fill(p, 1024, 2.0f);
    i = 7;
    res = (cxla_buffer){NULL, out, sizeof(out)};
    CHECK_OK(cxla_executable_run_buffers(e, &ro, args, 3, &res, 1));
    CHECK_MSG(updated(out, 2.0f, 7, u), "%s: donated, result elsewhere", backend);

    /* Not donated: the argument is never written, whether the result buffer is elsewhere
     * or is the argument's own memory (then written after the run). */
    fill(p, 1024, 3.0f);
    CHECK_OK(cxla_executable_run_buffers(e, NULL, args, 3, &res, 1));
    CHECK_MSG(updated(out, 3.0f, 7, u), "%s: lent", backend);
    float base[4] = {3.0f + 7, 3.0f + 8, 3.0f + 9, 3.0f + 10};
    CHECK_MSG(updated(p, 3.0f, 7, base), "%s: a lent argument was written", backend);
    donated[0] = false;
    res = (cxla_buffer){NULL, p, sizeof(p)};
    CHECK_OK(cxla_executable_run_buffers(e, &ro, args, 3, &res, 1));
    CHECK_MSG(updated(p, 3.0f, 7, u), "%s: lent, the result on the argument", backend);

    /* Errors: a donated buffer shared with another argument; donation on literal runs. */
    donated[0] = true;
    args[1] = (cxla_buffer){NULL, p + 8, sizeof(u)};
    const char *msg = CHECK_ERROR(cxla_executable_run_buffers(e, &ro, args, 3, &res, 1));
    CHECK(strstr(msg, "argument buffer 0 is donated, but argument buffer 1 shares its memory"));
    cxla_literal *a0 = NULL, *a1 = NULL, *a2 = NULL, *got = NULL;
    const int64_t d1024[1] = {1024}, d4[1] = {4};
    cxla_shape *s0 = NULL, *s1 = NULL, *s2 = NULL;
    CHECK_OK(cxla_shape_create_array(CXLA_F32, 1, d1024, &s0));
    CHECK_OK(cxla_shape_create_array(CXLA_F32, 1, d4, &s1));
    CHECK_OK(cxla_shape_create_array(CXLA_S32, 0, NULL, &s2));
    if (s0 && s1 && s2) {
        CHECK_OK(cxla_literal_create(s0, &a0));
        CHECK_OK(cxla_literal_create(s1, &a1));
        CHECK_OK(cxla_literal_create(s2, &a2));
    }
    const cxla_literal *largs[3] = {a0, a1, a2};
    if (a0 && a1 && a2) {
        msg = CHECK_ERROR(cxla_executable_run_with_options(e, &ro, largs, 3, &got));
        CHECK(strstr(msg, "donated arguments are for cxla_executable_run_buffers"));
    }
    cxla_literal_free(a0);
    cxla_literal_free(a1);
    cxla_literal_free(a2);
    cxla_literal_free(got);
    cxla_shape_free(s0);
    cxla_shape_free(s1);
    cxla_shape_free(s2);
    cxla_executable_destroy(e);
    cxla_client_destroy(c);
}

/* Two aliased outputs of a tuple, must-alias and may-alias: w is read once (by n) before
 * the result r is first written, so r may be computed in w's memory; m is updated in
 * place by a while loop that scatters into it, row by row. */
static const char two_text[] =
    "HloModule donate_two, input_output_alias={ {0}: (0, {}, must-alias), {1}: (1, {}, "
    "may-alias) }\n"
    "add {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(a, b)\n"
    "}\n"
    "cond {\n"
    "  p = (s32[], f32[16,8]) parameter(0)\n"
    "  i = s32[] get-tuple-element(p), index=0\n"
    "  n = s32[] constant(16)\n"
    "  ROOT lt = pred[] compare(i, n), direction=LT\n"
    "}\n"
    "body {\n"
    "  p = (s32[], f32[16,8]) parameter(0)\n"
    "  i = s32[] get-tuple-element(p), index=0\n"
    "  buf = f32[16,8] get-tuple-element(p), index=1\n"
    "  x = f32[] convert(i)\n"
    "  row = f32[1,8] broadcast(x), dimensions={}\n"
    "  idx = s32[1,1] reshape(i)\n"
    "  upd = f32[16,8] scatter(buf, idx, row), update_window_dims={1}, "
    "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
    "to_apply=add\n"
    "  one = s32[] constant(1)\n"
    "  next = s32[] add(i, one)\n"
    "  ROOT t = (s32[], f32[16,8]) tuple(next, upd)\n"
    "}\n"
    "ENTRY main {\n"
    "  w = f32[64] parameter(0)\n"
    "  m = f32[16,8] parameter(1)\n"
    "  g = f32[64] parameter(2)\n"
    "  n = f32[64] negate(w)\n"
    "  z = f32[] constant(0)\n"
    "  s = f32[] reduce(n, z), dimensions={0}, to_apply=add\n"
    "  sb = f32[64] broadcast(s), dimensions={}\n"
    "  r = f32[64] add(sb, g)\n"
    "  zero = s32[] constant(0)\n"
    "  t0 = (s32[], f32[16,8]) tuple(zero, m)\n"
    "  loop = (s32[], f32[16,8]) while(t0), condition=cond, body=body\n"
    "  m2 = f32[16,8] get-tuple-element(loop), index=1\n"
    "  ROOT out = (f32[64], f32[16,8]) tuple(r, m2)\n"
    "}\n";

static void test_two_aliases(const char *backend) {
    cxla_client_options co;
    cxla_client_options_init(&co);
    co.backend = backend;
    co.thread_count = 1;
    cxla_client *c = NULL;
    CHECK_OK(cxla_client_create(&co, &c));
    cxla_executable *e = c ? compile(c, two_text) : NULL;
    if (!e) {
        cxla_client_destroy(c);
        return;
    }
    for (int donate = 0; donate < 2; donate++) {
        float w[64], m[128], g[64], r[64], m2[128];
        float sum = 0;
        for (int k = 0; k < 64; k++) {
            w[k] = (float)k * 0.25f;
            g[k] = (float)(k % 5);
            sum -= w[k];
        }
        for (int k = 0; k < 128; k++) m[k] = (float)k;
        bool donated[3] = {true, true, false};
        cxla_run_options ro;
        cxla_run_options_init(&ro);
        ro.donated = donate ? donated : NULL;
        cxla_buffer args[3] = {{NULL, w, sizeof(w)}, {NULL, m, sizeof(m)}, {NULL, g, sizeof(g)}};
        /* Donated: the results in the arguments' memory; lent: elsewhere. */
        cxla_buffer res[2] = {{NULL, donate ? w : r, sizeof(r)},
                              {NULL, donate ? m : m2, sizeof(m2)}};
        CHECK_OK(cxla_executable_run_buffers(e, &ro, args, 3, res, 2));
        const float *rr = donate ? w : r, *mm = donate ? m : m2;
        bool ok = true;
        for (int k = 0; k < 64; k++) ok = ok && rr[k] == sum + (float)(k % 5);
        for (int k = 0; k < 128; k++) ok = ok && mm[k] == (float)k + (float)(k / 8);
        CHECK_MSG(ok, "%s, %s: results", backend, donate ? "donated" : "lent");
        if (!donate) {
            bool kept = true;
            for (int k = 0; k < 64; k++) kept = kept && w[k] == (float)k * 0.25f;
            for (int k = 0; k < 128; k++) kept = kept && m[k] == (float)k;
            CHECK_MSG(kept, "%s: a lent argument was written", backend);
        }
    }
    cxla_executable_destroy(e);
    cxla_client_destroy(c);
}

/* Aliases that XLA would refuse are refused when compiling, on every backend. */
static void test_bad_aliases(const char *backend) {
    cxla_client_options co;
    cxla_client_options_init(&co);
    co.backend = backend;
    cxla_client *c = NULL;
    CHECK_OK(cxla_client_create(&co, &c));
    if (!c) return;
    static const char *const bad[][2] = {
        {"HloModule b, input_output_alias={ {0}: (0, {}, may-alias), {1}: (0, {}, may-alias) }\n"
         "ENTRY e {\n  p = f32[4] parameter(0)\n  n = f32[4] negate(p)\n"
         "  ROOT t = (f32[4], f32[4]) tuple(n, n)\n}\n",
         "a parameter leaf is aliased twice"},
        {"HloModule b, input_output_alias={ {}: (0, {}, may-alias) }\n"
         "ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[2] slice(p), slice={[0:2]}\n}\n",
         "different shapes"},
        {"HloModule b, input_output_alias={ {3}: (0, {}) }\n"
         "ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = (f32[4]) tuple(p)\n}\n",
         "names no array of the result"},
        {"HloModule b, input_output_alias={ {}: (2, {}) }\n"
         "ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n",
         "parameter 2 does not exist"},
    };
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        cxla_executable *e = NULL;
        const char *msg =
            CHECK_ERROR(cxla_client_compile_hlo_text(c, bad[k][0], (size_t)-1, "bad.hlo", &e));
        CHECK_MSG(strstr(msg, bad[k][1]) && strstr(msg, "input_output_alias"), "%s: %s", backend,
                  msg);
        cxla_executable_destroy(e);
    }
    cxla_client_destroy(c);
}

/* ---- dynamic leaves ---------------------------------------------------------------------- */

/* A buffer of f32[<=8]: the elements at the bound, then the size as an s32 (XLA CPU's layout
 * of a dynamic array, which cxla_executable_run_buffers reads and writes). */
typedef struct dyn8 {
    float x[8];
    int32_t size;
} dyn8;

/* The aliased result is first written after the argument's last read (the reduce reads p,
 * the add writes r): the cpu backend computes r in p's memory. g's size is r's. */
static const char dyn_in_place_text[] =
    "HloModule donate_dyn, input_output_alias={ {}: (0, {}, may-alias) }\n"
    "add {\n"
    "  a = f32[] parameter(0)\n"
    "  b = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(a, b)\n"
    "}\n"
    "ENTRY main {\n"
    "  p = f32[<=8] parameter(0)\n"
    "  g = f32[<=8] parameter(1)\n"
    "  z = f32[] constant(0)\n"
    "  s = f32[] reduce(p, z), dimensions={0}, to_apply=add\n"
    "  sb = f32[8] broadcast(s), dimensions={}\n"
    "  ROOT r = f32[<=8] add(sb, g)\n"
    "}\n";

/* A reverse reads the whole argument while it writes its result: the result may not be
 * computed in the donated argument (a reverse in place would read elements it already
 * overwrote), so it is computed elsewhere and copied in. */
static const char dyn_reverse_text[] =
    "HloModule donate_dyn_reverse, input_output_alias={ {}: (0, {}, may-alias) }\n"
    "ENTRY main {\n"
    "  p = f32[<=8] parameter(0)\n"
    "  ROOT r = f32[<=8] reverse(p), dimensions={0}\n"
    "}\n";

/* A while loop whose state starts as the donated argument: the state takes its buffer,
 * and its sizes travel with it (the add keeps them). */
static const char dyn_loop_text[] =
    "HloModule donate_dyn_loop, input_output_alias={ {}: (0, {}, may-alias) }\n"
    "cond {\n"
    "  p = (s32[], f32[<=8]) parameter(0)\n"
    "  i = s32[] get-tuple-element(p), index=0\n"
    "  n = s32[] constant(3)\n"
    "  ROOT lt = pred[] compare(i, n), direction=LT\n"
    "}\n"
    "body {\n"
    "  p = (s32[], f32[<=8]) parameter(0)\n"
    "  i = s32[] get-tuple-element(p), index=0\n"
    "  v = f32[<=8] get-tuple-element(p), index=1\n"
    "  d = f32[<=8] add(v, v)\n"
    "  one = s32[] constant(1)\n"
    "  next = s32[] add(i, one)\n"
    "  ROOT t = (s32[], f32[<=8]) tuple(next, d)\n"
    "}\n"
    "ENTRY main {\n"
    "  p = f32[<=8] parameter(0)\n"
    "  zero = s32[] constant(0)\n"
    "  t0 = (s32[], f32[<=8]) tuple(zero, p)\n"
    "  w = (s32[], f32[<=8]) while(t0), condition=cond, body=body\n"
    "  ROOT r = f32[<=8] get-tuple-element(w), index=1\n"
    "}\n";

static cxla_client *client_for(const char *backend) {
    cxla_client_options co;
    cxla_client_options_init(&co);
    co.backend = backend;
    co.thread_count = 1;
    cxla_client *c = NULL;
    CHECK_OK(cxla_client_create(&co, &c));
    return c;
}

/* Runs |text| on |backend| with p (donated, sizes after its elements) and, when the module
 * takes it, g; the result goes to |res| (which may be p itself). */
static void run_dyn(const char *backend, const char *text, dyn8 *p, const dyn8 *g, dyn8 *res,
                    bool donate) {
    cxla_client *c = client_for(backend);
    cxla_executable *e = c ? compile(c, text) : NULL;
    if (e) {
        bool donated[2] = {donate, false};
        cxla_run_options ro;
        cxla_run_options_init(&ro);
        ro.donated = donated;
        int64_t n = cxla_executable_parameter_count(e);
        cxla_buffer args[2] = {{NULL, p, sizeof(*p)}, {NULL, (void *)g, sizeof(*g)}};
        cxla_buffer out = {NULL, res, sizeof(*res)};
        CHECK_OK(cxla_executable_run_buffers(e, &ro, args, n, &out, 1));
    }
    cxla_executable_destroy(e);
    cxla_client_destroy(c);
}

static void fill_dyn(dyn8 *d, int32_t size, float base) {
    for (int k = 0; k < 8; k++) d->x[k] = k < size ? base + (float)k : 99.0f; /* 99: padding */
    d->size = size;
}

/* Whether |a| and |b| hold the same value: the same size, the same elements below it. */
static bool same_dyn(const dyn8 *a, const dyn8 *b) {
    if (a->size != b->size) return false;
    for (int k = 0; k < a->size; k++)
        if (a->x[k] != b->x[k]) return false;
    return true;
}

static void test_dynamic_in_place(void) {
    /* The interpreter's answer (it never writes an argument), then the cpu backend's: in
     * place (the result buffer is p), and with the result elsewhere, where p's memory
     * shows that the cpu backend computed the result there. */
    dyn8 p, g, want, got, p2;
    fill_dyn(&p, 3, 1.0f); /* 1 + 2 + 3 = 6 */
    fill_dyn(&g, 5, 10.0f);
    run_dyn("interpreter", dyn_in_place_text, &p, &g, &want, true);
    CHECK_EQ_I64(want.size, 5);
    CHECK(want.x[0] == 16 && want.x[4] == 20);
    CHECK_MSG(p.x[0] == 1 && p.size == 3, "the interpreter wrote a donated argument");

    run_dyn("cpu", dyn_in_place_text, &p, &g, &p, true); /* the result in p itself */
    CHECK_MSG(same_dyn(&p, &want), "cpu in place: size %d, %g %g", p.size, p.x[0], p.x[4]);
    for (int k = 5; k < 8; k++) CHECK(p.x[k] == 0); /* the result's padding */

    fill_dyn(&p2, 3, 1.0f);
    memset(&got, 0, sizeof(got));
    run_dyn("cpu", dyn_in_place_text, &p2, &g, &got, true);
    CHECK(same_dyn(&got, &want));
    /* The result was computed in the donated argument's memory (then copied out). */
    CHECK_MSG(p2.x[0] == 16 && p2.x[4] == 20, "cpu: not computed in the donated argument");

    /* Not donated: p is left as it was, and the result is the same. */
    fill_dyn(&p2, 3, 1.0f);
    run_dyn("cpu", dyn_in_place_text, &p2, &g, &got, false);
    CHECK(same_dyn(&got, &want));
    CHECK(p2.x[0] == 1 && p2.x[3] == 99 && p2.size == 3);
}

static void test_dynamic_loop(void) {
    dyn8 p, want, got;
    fill_dyn(&p, 6, 1.0f);
    run_dyn("interpreter", dyn_loop_text, &p, NULL, &want, true);
    CHECK(want.size == 6 && want.x[0] == 8 && want.x[5] == 48);
    fill_dyn(&p, 6, 1.0f);
    run_dyn("cpu", dyn_loop_text, &p, NULL, &p, true);
    CHECK_MSG(same_dyn(&p, &want), "cpu loop in place: size %d, %g %g", p.size, p.x[0], p.x[5]);
    fill_dyn(&p, 6, 1.0f);
    memset(&got, 0, sizeof(got));
    run_dyn("cpu", dyn_loop_text, &p, NULL, &got, true);
    CHECK(same_dyn(&got, &want));
    CHECK_MSG(p.x[0] == 8 && p.x[5] == 48, "cpu loop: the state was not the donated argument");
}

static void test_dynamic_no_alias(void) {
    dyn8 p, want, got;
    fill_dyn(&p, 5, 1.0f);
    run_dyn("interpreter", dyn_reverse_text, &p, NULL, &want, true);
    CHECK_EQ_I64(want.size, 5);
    CHECK(want.x[0] == 5 && want.x[4] == 1);
    for (int pass = 0; pass < 2; pass++) {
        /* The result in p's memory, then elsewhere. */
        fill_dyn(&p, 5, 1.0f);
        memset(&got, 0, sizeof(got));
        run_dyn("cpu", dyn_reverse_text, &p, NULL, pass ? &got : &p, true);
        const dyn8 *r = pass ? &got : &p;
        CHECK_MSG(same_dyn(r, &want), "cpu reverse (%s): size %d, %g %g %g",
                  pass ? "elsewhere" : "in p", r->size, r->x[0], r->x[2], r->x[4]);
    }
}

/* Sizes in buffers: a buffer with no room for them is at its bounds (and a result buffer
 * without room just gets the elements); a size beyond the bound is refused. */
static void test_dynamic_sizes(const char *backend) {
    cxla_client *c = client_for(backend);
    cxla_executable *e = c ? compile(c, dyn_reverse_text) : NULL;
    if (!e) {
        cxla_client_destroy(c);
        return;
    }
    dyn8 p, r;
    fill_dyn(&p, 8, 1.0f);
    float bare[8];
    cxla_buffer arg = {NULL, p.x, sizeof(p.x)}, out = {NULL, &r, sizeof(r)};
    p.size = 2; /* not read: the buffer ends before it */
    CHECK_OK(cxla_executable_run_buffers(e, NULL, &arg, 1, &out, 1));
    CHECK_MSG(r.size == 8 && r.x[0] == 8 && r.x[7] == 1, "%s: at the bounds", backend);
    out = (cxla_buffer){NULL, bare, sizeof(bare)};
    arg.size = sizeof(p);
    CHECK_OK(cxla_executable_run_buffers(e, NULL, &arg, 1, &out, 1));
    CHECK_MSG(bare[0] == 2 && bare[1] == 1, "%s: a result without room for its size", backend);
    p.size = 9;
    CHECK_ERROR_HAS(cxla_executable_run_buffers(e, NULL, &arg, 1, &out, 1),
                    "argument buffer 0 gives dimension 0 the size 9");
    p.size = -1;
    CHECK_ERROR_HAS(cxla_executable_run_buffers(e, NULL, &arg, 1, &out, 1), "at most 8");
    cxla_executable_destroy(e);
    cxla_client_destroy(c);
}

static void test_interpreter(void) {
    test_dus("interpreter");
    test_two_aliases("interpreter");
    test_bad_aliases("interpreter");
    test_dynamic_sizes("interpreter");
}

static void test_cpu(void) {
    test_dus("cpu");
    test_two_aliases("cpu");
    test_bad_aliases("cpu");
    test_dynamic_sizes("cpu");
}

TEST_MAIN(TEST(test_interpreter), TEST(test_cpu), TEST(test_dynamic_in_place),
          TEST(test_dynamic_loop), TEST(test_dynamic_no_alias))
