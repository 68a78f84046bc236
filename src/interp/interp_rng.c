/* Interpreter handlers: random numbers (see interp.h and docs/semantics.md, "Random
 * numbers").
 *
 * rng-bit-generator(state) follows XLA's RngBitGeneratorExpander and its bit generators
 * (xla/hlo/builder/lib/prng.cc), so that the same state and shape give XLA's bits:
 *
 *   rng_three_fry  state u64[2] = {key, counter}. Threefry-2x32 with 20 rounds, key words
 *                  (low, high) of key, counter words (low, high) of a 64-bit counter.
 *                  64-bit outputs: counter + i for element i (row-major), the value is
 *                  out0 | out1 << 32, and the counter advances by the element count.
 *                  Narrower outputs: the shape is split in two halves along its first
 *                  even dimension (else its largest, the first of equal ones; a scalar
 *                  is one pair); each position of the half shape takes one counter
 *                  (counter + its row-major index in the half shape) and its two words
 *                  go to neighbouring positions 2j, 2j+1 of the split dimension (the
 *                  second dropped past an odd end). The counter advances by the number
 *                  of half positions. Outputs below 32 bits keep the low bits.
 *   rng_philox     state u64[3] = {key, counter low, counter high}, or u64[2] = {key,
 *   rng_default    counter low} with the key doubling as the counter's high word (XLA
 *                  reverses a two-word state). Philox-4x32 with 10 rounds; 128-bit counter
 *                  c + v (carry included) gives the four words of elements 4v..4v+3
 *                  (32-bit and narrower outputs, low bits kept) or two 64-bit elements
 *                  2v, 2v+1 (words 0|1<<32 and 2|3<<32). The counter advances by the number
 *                  of blocks; a two-word state keeps only the new low word. rng_default is
 *                  philox, as on XLA's CPU and GPU backends.
 *
 * rng-get-and-update-state returns the interpreter's 128-bit state as u64[2] (low word
 * first) and adds delta (zero-extended) to it. The state starts at 0x7012395, the value
 * of XLA CPU's per-executable rng_state global.
 *
 * rng(a, b) follows XLA's RngExpander: key and state feed the philox bit generator
 * directly (no key scrambling); the state is read and advanced by the element count in
 * 32-bit units, as rng-get-and-update-state does. Uniform floats: the top 23 (f32) or
 * 52 (f64) bits as v in [0, 1), then v * (b - a) + a in the type; f16, bf16 and the other
 * small floats compute in f32 and round. Uniform integers: a + bits % (b - a) with
 * wrapping unsigned arithmetic at the type's width (bits % 0 = bits). Normal: uniform
 * pairs over the split shape above (in [0, 1)), Box-Muller z0 = sin(2 pi u1') r,
 * z1 = cos(2 pi u1') r with r = sqrt(-2 log max(u0, 1e-7)), then mu + sigma z.
 * Departures from XLA, all where the seeds fix the answer: a uniform float that rounds to
 * b (or past it) becomes the largest value of the type below b; when b - a overflows the
 * float type the value is computed in a wider form; small integer types and pred (which
 * XLA CPU rejects) use 32-bit words at their own width.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/rng.h"
#include "interp/interp.h"

#define OOM()           cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")
#define BAD(instr, ...) interp_error((instr), CXLA_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

/* ---- rng-bit-generator ------------------------------------------------------------- */

static cxla_status op_rng_bit_generator(interp_ctx *ctx, const cxla_instr *instr,
                                        const cxla_literal *const *operands, cxla_literal **out) {
    (void)ctx;
    const cxla_shape *ss = cxla_literal_shape(operands[0]);
    if (ss->type != CXLA_U64 || ss->rank != 1)
        return BAD(instr, "the state must be a u64 vector, got %s", cxla_type_name(ss->type));
    const cxla_shape *rs = &instr->shape;
    /* A non-tuple result is the random bits alone (XLA's verifier allows it). */
    bool bits_only = rs->type != CXLA_TUPLE && cxla_type_is_unsigned(rs->type);
    if (!bits_only &&
        (rs->type != CXLA_TUPLE || rs->tuple_count != 2 || rs->elements[1].type == CXLA_TUPLE ||
         !cxla_type_is_unsigned(rs->elements[1].type)))
        return BAD(instr, "the result must be (new state, unsigned random bits) or the bits");
    const cxla_shape *bs = bits_only ? rs : &rs->elements[1];
    const char *alg = cxla_instr_word(instr, CXLA_ATTR_ALGORITHM);
    if (!alg) alg = "rng_default";
    bool three_fry = strcmp(alg, "rng_three_fry") == 0;
    if (!three_fry && strcmp(alg, "rng_philox") != 0 && strcmp(alg, "rng_default") != 0)
        return BAD(instr, "unknown algorithm=%s", alg);
    int64_t m = ss->dims[0];
    if (three_fry ? m != 2 : m != 2 && m != 3)
        return BAD(instr, "%s needs a %s state, got u64[%" PRId64 "]", alg,
                   three_fry ? "u64[2] {key, counter}"
                             : "u64[3] {key, counter low, counter high} or u64[2]",
                   m);
    const uint64_t *s = cxla_literal_data_const(operands[0]);

    cxla_literal *state = NULL, *bits = NULL;
    CXLA_RETURN_IF_ERROR(interp_new_array(ss, &state));
    cxla_status st = interp_new_array(bs, &bits);
    int64_t n = st ? 0 : cxla_literal_element_count(bits);
    int width = cxla_type_bits(bs->type);
    uint64_t *ns = state->data;
    if (!st) memcpy(ns, s, (size_t)m * sizeof(uint64_t));
    if (!st && three_fry) {
        if (width == 64)
            ns[1] = exec_threefry_wide(s[0], s[1], n, bits->data);
        else
            ns[1] =
                exec_threefry_narrow(s[0], s[1], exec_rng_split_halves(bs), bs->type, bits->data);
    } else if (!st) {
        exec_u128 c = m == 3 ? (exec_u128){s[1], s[2]} : (exec_u128){s[1], s[0]};
        if (width == 64) {
            c = exec_philox_wide(s[0], c, n, bits->data);
        } else {
            uint32_t *w = malloc((size_t)(n ? n : 1) * sizeof(uint32_t));
            if (!w) {
                st = OOM();
            } else {
                c = exec_philox_words(s[0], c, n, w);
                size_t es = cxla_type_storage(bs->type);
                for (int64_t i = 0; i < n; i++)
                    cxla_store_u64(bs->type, (char *)bits->data + (size_t)i * es, w[i]);
                free(w);
            }
        }
        ns[1] = c.lo;
        if (m == 3) ns[2] = c.hi;
    }
    if (!st && bits_only) {
        cxla_literal_free(state);
        *out = bits;
        return NULL;
    }
    if (!st) {
        cxla_literal *elements[2] = {state, bits};
        st = cxla_literal_create_tuple(elements, 2, out);
    }
    if (st) {
        cxla_literal_free(state);
        cxla_literal_free(bits);
    }
    return st;
}

/* ---- rng-get-and-update-state ------------------------------------------------------- */

static void advance_state(interp_ctx *ctx, uint64_t delta) {
    exec_u128 s = exec_u128_add((exec_u128){ctx->rng_state[0], ctx->rng_state[1]}, delta);
    ctx->rng_state[0] = s.lo;
    ctx->rng_state[1] = s.hi;
}

static cxla_status op_rng_get_and_update_state(interp_ctx *ctx, const cxla_instr *instr,
                                               const cxla_literal *const *operands,
                                               cxla_literal **out) {
    (void)operands;
    int64_t delta = 0;
    if (cxla_instr_attr(instr, CXLA_ATTR_DELTA) && !cxla_instr_int(instr, CXLA_ATTR_DELTA, &delta))
        return BAD(instr, "delta must be an integer");
    const cxla_shape *rs = &instr->shape;
    if (rs->type != CXLA_U64 || rs->rank != 1 || rs->dims[0] != 2)
        return BAD(instr, "the result must be u64[2]");
    cxla_literal *r;
    CXLA_RETURN_IF_ERROR(interp_new_array(rs, &r));
    uint64_t *v = r->data;
    v[0] = ctx->rng_state[0];
    v[1] = ctx->rng_state[1];
    advance_state(ctx, (uint64_t)delta);
    *out = r;
    return NULL;
}

/* ---- rng ---------------------------------------------------------------------------- */

/* The key of |instr|, as XLA's RngExpander builds it: the k-th value of a Mersenne
 * Twister (mt19937_64, seed 42) for the k-th rng of the module (computations callees
 * first, instructions in post-order), xor'ed with the module seed. Seed 0 gives key 0:
 * XLA then xors with a process-wide generator of the same sequence, which cancels for
 * the first module a process compiles. */
static cxla_status rng_key(interp_ctx *ctx, const cxla_instr *instr, uint64_t *out) {
    *out = 0;
    if (ctx->options.seed == 0) return NULL;
    const cxla_module *m = instr->parent ? instr->parent->module : ctx->module;
    if (!m) m = ctx->module;
    if (!ctx->rng_ops_ready && m) {
        int64_t count = 0;
        for (int64_t c = 0; c < m->comp_count; c++)
            for (int64_t i = 0; i < m->comps[c]->instr_count; i++)
                count += m->comps[c]->instrs[i]->opcode == CXLA_OP_RNG;
        const cxla_instr **ops =
            cxla_arena_alloc_array(ctx->arena, (size_t)(count ? count : 1), sizeof(*ops));
        uint64_t *keys =
            cxla_arena_alloc_array(ctx->arena, (size_t)(count ? count : 1), sizeof(*keys));
        if (!ops || !keys) return OOM();
        int64_t k = 0;
        for (int64_t c = 0; c < m->comp_count; c++) {
            cxla_instr **order;
            CXLA_RETURN_IF_ERROR(cxla_computation_post_order(m->comps[c], &order));
            for (int64_t i = 0; i < m->comps[c]->instr_count && k < count; i++)
                if (order[i]->opcode == CXLA_OP_RNG) ops[k++] = order[i];
        }
        exec_mt19937_64(42, keys, k);
        ctx->rng_ops = ops;
        ctx->rng_keys = keys;
        ctx->rng_op_count = k;
        ctx->rng_ops_ready = true;
    }
    uint64_t base = 0;
    for (int64_t k = 0; k < ctx->rng_op_count; k++)
        if (ctx->rng_ops[k] == instr) base = ctx->rng_keys[k];
    *out = base ^ ctx->options.seed;
    return NULL;
}

static double load_value(cxla_type t, const cxla_literal *lit) {
    return cxla_load_f64(t, cxla_literal_data_const(lit));
}

static cxla_status rng_uniform_float(uint64_t key, exec_u128 c, const cxla_instr *instr, double a,
                                     double b, cxla_literal *res) {
    return exec_rng_fill_uniform_float(key, c, &instr->shape, a, b, res->data) ? NULL : OOM();
}

static cxla_status rng_uniform_int(uint64_t key, exec_u128 c, const cxla_instr *instr,
                                   const cxla_literal *la, const cxla_literal *lb,
                                   cxla_literal *res) {
    return exec_rng_fill_uniform_int(key, c, &instr->shape, cxla_literal_data_const(la),
                                     cxla_literal_data_const(lb), res->data)
               ? NULL
               : OOM();
}

static cxla_status rng_normal(uint64_t key, exec_u128 c, const cxla_instr *instr, double mu,
                              double sigma, cxla_literal *res) {
    return exec_rng_fill_normal(key, c, &instr->shape, mu, sigma, res->data) ? NULL : OOM();
}

static cxla_status op_rng(interp_ctx *ctx, const cxla_instr *instr,
                          const cxla_literal *const *operands, cxla_literal **out) {
    if (instr->operand_count != 2) return BAD(instr, "expects 2 operands");
    cxla_type t = instr->shape.type;
    for (int i = 0; i < 2; i++) {
        const cxla_shape *os = cxla_literal_shape(operands[i]);
        if (os->type != t || os->rank != 0)
            return BAD(instr, "operand %d must be a %s scalar", i, cxla_type_name(t));
    }
    const char *dist = cxla_instr_word(instr, CXLA_ATTR_DISTRIBUTION);
    bool normal = dist && strcmp(dist, "rng_normal") == 0;
    if (!dist || (!normal && strcmp(dist, "rng_uniform") != 0))
        return BAD(instr, "unknown distribution=%s", dist ? dist : "(none)");
    bool is_float = cxla_type_is_float(t);
    if (normal ? !is_float : !is_float && !cxla_type_is_integer(t) && t != CXLA_PRED)
        return BAD(instr, "%s does not support %s", dist, cxla_type_name(t));

    uint64_t key;
    CXLA_RETURN_IF_ERROR(rng_key(ctx, instr, &key));
    cxla_literal *res;
    CXLA_RETURN_IF_ERROR(interp_new_array(&instr->shape, &res));
    int64_t n = cxla_literal_element_count(res);
    /* Read and advance the state by the count of 32-bit units, as the expander does. */
    exec_u128 c = {ctx->rng_state[0], ctx->rng_state[1]};
    advance_state(ctx, (uint64_t)n * (cxla_type_bits(t) == 64 ? 2u : 1u));
    cxla_status st;
    if (normal)
        st = rng_normal(key, c, instr, load_value(t, operands[0]), load_value(t, operands[1]), res);
    else if (is_float)
        st = rng_uniform_float(key, c, instr, load_value(t, operands[0]),
                               load_value(t, operands[1]), res);
    else
        st = rng_uniform_int(key, c, instr, operands[0], operands[1], res);
    if (st) {
        cxla_literal_free(res);
        return st;
    }
    *out = res;
    return NULL;
}

const interp_op_fn interp_rng_ops[CXLA_OP_COUNT] = {
    [CXLA_OP_RNG] = op_rng,
    [CXLA_OP_RNG_BIT_GENERATOR] = op_rng_bit_generator,
    [CXLA_OP_RNG_GET_AND_UPDATE_STATE] = op_rng_get_and_update_state,
};
