/* A two-layer perceptron trained by gradient descent, built with cxla's builder API.
 *
 * The whole training run is one computation: a while loop whose body does a forward
 * pass, the backward pass (gradients written out by hand) and the weight update, and
 * records the loss of every step. The program generates a small regression problem
 * (y = sin(3 x0) + 0.5 x1 on points in [-1, 1]^2), runs the computation on cxla's
 * default backend (the compiled cpu backend when a C compiler runs; CXLA_BACKEND=interpreter
 * for the reference interpreter) and prints the loss as it falls.
 *
 *   ./build/examples/mlp            # the loss every 50 steps
 *   ./build/examples/mlp --hlo      # also print the computation as HLO text
 *
 * Running goes through the runtime API (cxla/runtime.h): a client compiles the built
 * computation into an executable, which runs on literals.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxla/cxla.h"

enum { N = 64, D = 2, H = 16, STEPS = 500 };
static const float learning_rate = 0.2f;

/* Fails loudly on a status (this is an example: real code would clean up). */
static void check(cxla_status s, const char *what) {
    if (!s) return;
    fprintf(stderr, "mlp: %s: %s\n", what, cxla_status_message(s));
    cxla_status_destroy(s);
    exit(1);
}

static cxla_xla_computation *build(cxla_builder *b, const char *what) {
    cxla_xla_computation *c = NULL;
    check(cxla_builder_build(b, &c), what);
    cxla_builder_destroy(b);
    return c;
}

/* The loop state: (step, x, y, w1, b1, w2, b2, losses). */
enum { S_STEP, S_X, S_Y, S_W1, S_B1, S_W2, S_B2, S_LOSSES, S_COUNT };

static cxla_shape state_parts[S_COUNT];
static cxla_shape state_shape = {
    .type = CXLA_TUPLE, .tuple_count = S_COUNT, .elements = state_parts};

static void init_shapes(void) {
    static int64_t x[2] = {N, D}, y[2] = {N, 1}, w1[2] = {D, H}, b1[1] = {H}, w2[2] = {H, 1},
                   b2[1] = {1}, losses[1] = {STEPS};
    state_parts[S_STEP] = (cxla_shape){.type = CXLA_S32};
    state_parts[S_X] = (cxla_shape){.type = CXLA_F32, .rank = 2, .dims = x};
    state_parts[S_Y] = (cxla_shape){.type = CXLA_F32, .rank = 2, .dims = y};
    state_parts[S_W1] = (cxla_shape){.type = CXLA_F32, .rank = 2, .dims = w1};
    state_parts[S_B1] = (cxla_shape){.type = CXLA_F32, .rank = 1, .dims = b1};
    state_parts[S_W2] = (cxla_shape){.type = CXLA_F32, .rank = 2, .dims = w2};
    state_parts[S_B2] = (cxla_shape){.type = CXLA_F32, .rank = 1, .dims = b2};
    state_parts[S_LOSSES] = (cxla_shape){.type = CXLA_F32, .rank = 1, .dims = losses};
}

/* a . b contracting dimension |ca| of a with |cb| of b. */
static cxla_op contract(cxla_op a, cxla_op b, int64_t ca, int64_t cb) {
    cxla_dot_dimension_numbers dn = {.lhs_contracting_dimensions = &ca,
                                     .lhs_contracting_count = 1,
                                     .rhs_contracting_dimensions = &cb,
                                     .rhs_contracting_count = 1};
    return cxla_dot_general(a, b, &dn, NULL, CXLA_TYPE_INVALID);
}

static cxla_xla_computation *make_condition(void) {
    cxla_builder *b;
    check(cxla_builder_create("keep_training", &b), "builder");
    cxla_op state = cxla_parameter(b, 0, &state_shape, "state");
    cxla_lt(cxla_get_tuple_element(state, S_STEP), cxla_constant_r0(b, CXLA_S32, STEPS));
    return build(b, "condition");
}

static cxla_xla_computation *make_body(void) {
    cxla_xla_computation *add;
    {
        cxla_builder *a;
        check(cxla_builder_create("add", &a), "builder");
        cxla_shape f32 = {.type = CXLA_F32};
        cxla_add(cxla_parameter(a, 0, &f32, "x"), cxla_parameter(a, 1, &f32, "y"));
        add = build(a, "add");
    }
    cxla_builder *b;
    check(cxla_builder_create("train_step", &b), "builder");
    cxla_op state = cxla_parameter(b, 0, &state_shape, "state");
    cxla_op s[S_COUNT];
    for (int i = 0; i < S_COUNT; i++) s[i] = cxla_get_tuple_element(state, i);
    const int64_t rows = 0, cols1 = 1;

    /* Forward: h = tanh(x w1 + b1), prediction = h w2 + b2. */
    cxla_op h = cxla_tanh(cxla_add_bcast(cxla_dot(s[S_X], s[S_W1]), s[S_B1], &cols1, 1));
    cxla_op pred = cxla_add_bcast(cxla_dot(h, s[S_W2]), s[S_B2], &cols1, 1);
    cxla_op diff = cxla_sub(pred, s[S_Y]); /* [N, 1] */
    cxla_op zero = cxla_zero(b, CXLA_F32);
    cxla_op inv_n = cxla_constant_r0(b, CXLA_F32, 1.0 / N);
    cxla_op loss = cxla_mul(cxla_reduce_all(cxla_mul(diff, diff), zero, add), inv_n);

    /* Backward: gradients of the mean squared error. */
    cxla_op dpred = cxla_mul(diff, cxla_constant_r0(b, CXLA_F32, 2.0 / N)); /* [N, 1] */
    cxla_op dw2 = contract(h, dpred, 0, 0);                                 /* [H, 1] */
    cxla_op db2 = cxla_reduce(dpred, zero, add, &rows, 1);                  /* [1] */
    cxla_op dh = contract(dpred, s[S_W2], 1, 1);                            /* [N, H] */
    cxla_op dz = cxla_mul(dh, cxla_sub(cxla_one(b, CXLA_F32), cxla_mul(h, h)));
    cxla_op dw1 = contract(s[S_X], dz, 0, 0);           /* [D, H] */
    cxla_op db1 = cxla_reduce(dz, zero, add, &rows, 1); /* [H] */

    /* Update, and record this step's loss at losses[step]. */
    cxla_op lr = cxla_constant_r0(b, CXLA_F32, learning_rate);
    cxla_op next[S_COUNT];
    next[S_STEP] = cxla_add(s[S_STEP], cxla_one(b, CXLA_S32));
    next[S_X] = s[S_X];
    next[S_Y] = s[S_Y];
    next[S_W1] = cxla_sub(s[S_W1], cxla_mul(lr, dw1));
    next[S_B1] = cxla_sub(s[S_B1], cxla_mul(lr, db1));
    next[S_W2] = cxla_sub(s[S_W2], cxla_mul(lr, dw2));
    next[S_B2] = cxla_sub(s[S_B2], cxla_mul(lr, db2));
    int64_t one = 1;
    next[S_LOSSES] =
        cxla_dynamic_update_slice(s[S_LOSSES], cxla_reshape(loss, &one, 1), &s[S_STEP], 1);
    cxla_tuple(b, next, S_COUNT);
    cxla_xla_computation *body = build(b, "body");
    cxla_xla_computation_destroy(add);
    return body;
}

/* train(x, y, w1, b1, w2, b2) -> the final state of the loop. */
static cxla_xla_computation *make_training(void) {
    cxla_xla_computation *cond = make_condition(), *body = make_body();
    cxla_builder *b;
    check(cxla_builder_create("train_mlp", &b), "builder");
    cxla_op init[S_COUNT];
    init[S_STEP] = cxla_zero(b, CXLA_S32);
    static const char *const names[S_COUNT] = {"", "x", "y", "w1", "b1", "w2", "b2", ""};
    for (int i = S_X; i <= S_B2; i++)
        init[i] = cxla_parameter(b, i - S_X, &state_parts[i], names[i]);
    int64_t steps = STEPS;
    init[S_LOSSES] = cxla_broadcast(cxla_zero(b, CXLA_F32), &steps, 1);
    cxla_while(cond, body, cxla_tuple(b, init, S_COUNT));
    cxla_xla_computation *c = build(b, "training");
    cxla_xla_computation_destroy(cond);
    cxla_xla_computation_destroy(body);
    return c;
}

/* Deterministic pseudo-random numbers in [-1, 1). */
static uint64_t rng = 0x2545F4914F6CDD1Dull;
static float uniform(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static cxla_literal *array(int64_t rank, const int64_t *dims, float scale, bool target,
                           const float *x) {
    cxla_shape shape = {.type = CXLA_F32, .rank = rank, .dims = (int64_t *)dims};
    cxla_literal *l;
    check(cxla_literal_create(&shape, &l), "literal");
    float *p = cxla_literal_data(l);
    int64_t n = cxla_literal_element_count(l);
    for (int64_t i = 0; i < n; i++)
        p[i] = target ? sinf(3 * x[i * D]) + 0.5f * x[i * D + 1] : scale * uniform();
    return l;
}

int main(int argc, char **argv) {
    init_shapes();
    cxla_xla_computation *train = make_training();
    if (argc > 1 && strcmp(argv[1], "--hlo") == 0) {
        char *text;
        check(cxla_xla_computation_to_hlo_text(train, &text), "printing");
        fputs(text, stdout);
        free(text);
    }

    cxla_literal *args[6];
    args[0] = array(2, (int64_t[]){N, D}, 1.0f, false, NULL);
    args[1] = array(2, (int64_t[]){N, 1}, 0, true, cxla_literal_data(args[0]));
    args[2] = array(2, (int64_t[]){D, H}, 1.0f, false, NULL);
    args[3] = array(1, (int64_t[]){H}, 0.1f, false, NULL);
    args[4] = array(2, (int64_t[]){H, 1}, 0.5f, false, NULL);
    args[5] = array(1, (int64_t[]){1}, 0.0f, false, NULL);

    cxla_client *client = NULL;
    cxla_executable *exe = NULL;
    cxla_literal *result = NULL;
    check(cxla_client_create(NULL, &client), "creating a client");
    check(cxla_client_compile_computation(client, train, &exe), "compiling");
    check(cxla_executable_run(exe, (const cxla_literal *const *)args, 6, &result), "running");
    const cxla_literal *losses = cxla_literal_tuple_element_const(result, S_LOSSES);
    const float *loss = cxla_literal_data_const(losses);
    printf("training a %d-%d-1 perceptron on %d points, learning rate %g\n", D, H, N,
           (double)learning_rate);
    for (int i = 0; i < STEPS; i += 50) printf("step %3d  loss %.5f\n", i, (double)loss[i]);
    printf("step %3d  loss %.5f\n", STEPS - 1, (double)loss[STEPS - 1]);
    int ok = loss[STEPS - 1] < loss[0] / 4;
    printf(ok ? "the loss fell by %.1fx\n" : "the loss did not fall enough (%.1fx)\n",
           (double)(loss[0] / loss[STEPS - 1]));

    cxla_literal_destroy(result);
    for (int i = 0; i < 6; i++) cxla_literal_destroy(args[i]);
    cxla_executable_destroy(exe);
    cxla_client_destroy(client);
    cxla_xla_computation_destroy(train);
    return ok ? 0 : 1;
}
