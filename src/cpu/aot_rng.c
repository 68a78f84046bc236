/* Ahead-of-time rng and rng-get-and-update-state (aot_internal.h): the stateful random
 * operations, bit for bit the interpreter's (src/interp/interp_rng.c says what they
 * compute; src/exec/rng.c how; docs/aot.md how the caller sees it).
 *
 * The state. The interpreter and the JIT give each run its own 128-bit state, starting
 * at 0x7012395 (XLA CPU's per-executable initializer): an rng reads it as philox's
 * counter and advances it by its element count (in 32-bit units), and
 * rng-get-and-update-state returns it and adds its delta. The generated library keeps it
 * in NAME_run_with's frame (`uint64_t rng[2]`, low word first) and passes it to every
 * computation's function, so a while loop's body advances it from one step to the next.
 * NAME_options.rng_state, when set, is the caller's own state instead: read at the start
 * of the run and written back at its end, so that successive runs continue one sequence
 * (XLA's behaviour, where the state lives as long as the executable).
 *
 * The key. With NAME_options.seed 0 every key is 0 (as the interpreter with seed 0);
 * otherwise rng number k of the module (computations in module order, instructions in
 * post-order, counted in the module the caller gave, as the interpreter counts them) has
 * the k-th value of mt19937_64 (seed 42) xor'ed with the seed; the table is computed at
 * compile time and the xor at run time. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/aot_internal.h"
#include "cpu/emit_internal.h"
#include "exec/rng.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

bool aot_rng_takes(const cxla_instr *in) {
    return in->opcode == CXLA_OP_RNG || in->opcode == CXLA_OP_RNG_GET_AND_UPDATE_STATE;
}

/* The keys (before the seed) of the caller's module's rng instructions. */
static cxla_status rng_keys(aot *a) {
    if (a->rng_keys_ready) return NULL;
    const cxla_module *m = a->user_module;
    int64_t count = 0;
    for (int64_t c = 0; c < m->comp_count; c++)
        for (int64_t i = 0; i < m->comps[c]->instr_count; i++)
            count += m->comps[c]->instrs[i]->opcode == CXLA_OP_RNG;
    a->rng_instrs = calloc((size_t)(count ? count : 1), sizeof(*a->rng_instrs));
    a->rng_keys = calloc((size_t)(count ? count : 1), sizeof(*a->rng_keys));
    if (!a->rng_instrs || !a->rng_keys) return OOM();
    exec_mt19937_64(42, a->rng_keys, count);
    int64_t k = 0;
    for (int64_t c = 0; c < m->comp_count; c++) {
        cxla_instr **order = NULL;
        CXLA_RETURN_IF_ERROR(cxla_computation_post_order(m->comps[c], &order));
        for (int64_t i = 0; i < m->comps[c]->instr_count && k < count; i++)
            if (order[i]->opcode == CXLA_OP_RNG) a->rng_instrs[k++] = order[i];
    }
    a->rng_count = k;
    a->rng_keys_ready = true;
    return NULL;
}

cxla_status aot_rng_build(aot *a, acomp *c, const cxla_instr *in, const int64_t *ins, int64_t nin,
                          const cxla_shape *const *shapes, int64_t count, int64_t *lv) {
    const cxla_shape *rs = &in->shape;
    int64_t key = 0;
    if (in->opcode == CXLA_OP_RNG_GET_AND_UPDATE_STATE) {
        int64_t delta = 0;
        if (cxla_instr_attr(in, CXLA_ATTR_DELTA) && !cxla_instr_int(in, CXLA_ATTR_DELTA, &delta))
            return aot_no(in, "delta must be an integer");
        if (rs->type != CXLA_U64 || rs->rank != 1 || rs->dims[0] != 2)
            return aot_no(in, "the result must be u64[2]");
    } else {
        cxla_type t = rs->type;
        if (nin != 2 || in->operand_count != 2) return aot_no(in, "rng takes 2 operands");
        for (int i = 0; i < 2; i++) {
            const cxla_shape *os = &in->operands[i]->shape;
            if (os->type != t || os->rank != 0)
                return aot_no(in, "the operands must be scalars of the result's type");
        }
        const char *dist = cxla_instr_word(in, CXLA_ATTR_DISTRIBUTION);
        bool normal = dist && strcmp(dist, "rng_normal") == 0;
        if (!dist || (!normal && strcmp(dist, "rng_uniform") != 0))
            return aot_no(in, "unknown distribution");
        bool is_float = cxla_type_is_float(t);
        if (normal ? !is_float : !is_float && !cxla_type_is_integer(t) && t != CXLA_PRED)
            return aot_no(in, "the distribution does not take this element type");
        /* Sub-byte integers too: one element a byte, as the interpreter stores them. */
        if (!cpu_emit_type_ok(t) && !cpu_emit_subbyte(t))
            return aot_no(in, "the element type has no C form here");
        CXLA_RETURN_IF_ERROR(rng_keys(a));
        /* Which rng of the caller's module this one is: the same name, or (a copy the
         * passes made, say by inlining a call) the same position in the module text. */
        key = -1;
        for (int64_t k = 0; k < a->rng_count && key < 0; k++)
            if (strcmp(a->rng_instrs[k]->name, in->name) == 0) key = k;
        for (int64_t k = 0; k < a->rng_count && key < 0 && in->line > 0; k++)
            if (a->rng_instrs[k]->line == in->line && a->rng_instrs[k]->column == in->column)
                key = k;
        /* The rng an rng-start wraps (the async-desugar pass's, at the start's position):
         * key 0 before the seed, as the interpreter's, whose list of rngs does not hold it. */
        const cxla_module *u = a->user_module;
        for (int64_t uc = 0; uc < u->comp_count && key < 0 && in->line > 0; uc++)
            for (int64_t j = 0; j < u->comps[uc]->instr_count && key < 0; j++) {
                const cxla_instr *x = u->comps[uc]->instrs[j];
                if (x->opcode == CXLA_OP_ASYNC_START && x->async_wrapped == CXLA_OP_RNG &&
                    x->line == in->line && x->column == in->column)
                    key = AOT_RNG_KEY_ZERO;
            }
        if (key == -1)
            return aot_no(in, "which rng of the module it was copied from (its key under a "
                              "seed) is unknown");
    }
    int64_t *outs = NULL;
    CXLA_RETURN_IF_ERROR(aot_add_step(c, S_RNG, in, ins, nin, shapes, count, &outs));
    memcpy(lv, outs, (size_t)count * sizeof(int64_t));
    c->steps[c->step_count - 1].rng_key = key;
    a->rng = true;
    return NULL;
}

/* The statements of a uniform float rng of type |t| (f32 or a small float) over |n|
 * elements, as exec_rng_fill_uniform_float (exec_rng_uniform_f32). */
static void uniform_small(cxla_arena *ar, cxla_strbuf *b, const char *P, cxla_type t, int64_t n,
                          const char *pa, const char *pb, const char *po) {
    const char *st = cpu_emit_stype(t);
    bool f32 = t == CXLA_F32;
    cxla_strbuf_printf(b,
                       "        const float a = %s, b = %s;\n"
                       "        const float range = b - a;\n"
                       "        const int wide = isinf(range) && isfinite(a) && isfinite(b);\n",
                       cpu_emit_decode(ar, t, pa), cpu_emit_decode(ar, t, pb));
    if (f32)
        cxla_strbuf_puts(b, "        const float below = nextafterf(b, -INFINITY);\n");
    else
        cxla_strbuf_printf(b, "        %s below = 0;\n        int have_below = 0;\n", st);
    cxla_strbuf_printf(b,
                       "        %s *o = (%s *)%s;\n"
                       "        for (int64_t i = 0; i < %" PRId64 "; i++) {\n"
                       "            float v = (float)(%s_rng_word(&s, i) >> 9) * 0x1p-23f;\n"
                       "            float r;\n"
                       "            if (wide) {\n"
                       "                double p = (double)v * ((double)b - (double)a);\n"
                       "                r = (float)(p + (double)a);\n"
                       "            } else {\n"
                       "                float p = v * range;\n"
                       "                r = p + a;\n"
                       "            }\n",
                       st, st, po, n, P);
    if (f32) {
        cxla_strbuf_puts(b, "            if (a < b && r >= b) r = below;\n"
                            "            o[i] = r;\n        }\n");
        return;
    }
    /* Rounded to the type; one that rounds up to b becomes the largest value below b
     * (the first bit pattern that holds it, as the interpreter's search finds it). */
    cxla_strbuf_printf(b,
                       "            %s e = %s;\n"
                       "            if (a < b && %s >= b) {\n"
                       "                if (!have_below) {\n"
                       "                    float best = NAN;\n"
                       "                    for (uint32_t p = 0; p < %uu; p++) {\n"
                       "                        float x = %s;\n"
                       "                        if (x < b && !(x <= best)) {\n"
                       "                            best = x;\n"
                       "                            below = (%s)p;\n"
                       "                        }\n"
                       "                    }\n"
                       "                    have_below = 1;\n"
                       "                }\n"
                       "                e = below;\n"
                       "            }\n"
                       "            o[i] = e;\n"
                       "        }\n",
                       st, cpu_emit_convert(ar, CXLA_F32, t, "r"), cpu_emit_decode(ar, t, "e"),
                       1u << cxla_type_bits(t),
                       cpu_emit_decode(ar, t, cpu_emit_fmt(ar, "((%s)p)", st)), st);
}

static void emit_rng(aot *a, const acomp *c, const astep *st, cxla_arena *ar, cxla_strbuf *b) {
    const cxla_instr *in = st->instr;
    const char *P = a->P;
    cxla_type t = in->shape.type;
    int64_t n = 1;
    for (int64_t d = 0; d < in->shape.rank; d++) n *= in->shape.dims[d];
    const char *dist = cxla_instr_word(in, CXLA_ATTR_DISTRIBUTION);
    bool normal = dist && strcmp(dist, "rng_normal") == 0;
    bool wide64 = cxla_type_bits(t) == 64;
    uint64_t base = st->rng_key == AOT_RNG_KEY_ZERO ? 0 : a->rng_keys[st->rng_key];
    cxla_strbuf pa, pb, po;
    cxla_strbuf_init(&pa);
    cxla_strbuf_init(&pb);
    cxla_strbuf_init(&po);
    aot_put_leaf(a, c, st->in[0], &pa);
    aot_put_leaf(a, c, st->in[1], &pb);
    aot_put_leaf(a, c, st->out[0], &po);
    const char *A = "av", *B = "bv";
    const char *O = po.data ? po.data : "0";
    /* The counter is the state before the op; the state advances by the element count
     * in 32-bit units (whatever the distribution draws). */
    cxla_strbuf_printf(b,
                       "        %s_rng_stream s = {opt && opt->seed ? 0x%" PRIx64
                       "u ^ opt->seed : 0, rng[0], rng[1], -1, {0, 0, 0, 0}};\n"
                       "        %s_rng_advance(rng, %" PRIu64 "u);\n",
                       P, base, P, (uint64_t)n * (wide64 ? 2u : 1u));
    /* The operands by value (a constant is an array of integers of the element's width:
     * memcpy, not a typed pointer, reads it without breaking the aliasing rules). */
    cxla_strbuf_printf(b,
                       "        %s av, bv;\n"
                       "        memcpy(&av, %s, sizeof av);\n"
                       "        memcpy(&bv, %s, sizeof bv);\n",
                       cpu_emit_stype(t), pa.data ? pa.data : "0", pb.data ? pb.data : "0");
    if (normal) {
        exec_halves hv = exec_rng_split_halves(&in->shape);
        bool f64 = t == CXLA_F64;
        const char *ft = f64 ? "double" : "float", *sf = f64 ? "" : "f";
        const char *st_ = cpu_emit_stype(t);
        cxla_strbuf_printf(
            b,
            "        const %s mu = (%s)%s, sigma = (%s)%s;\n"
            "        %s *o = (%s *)%s;\n"
            "        /* Box-Muller over pairs of the shape split in halves along dim of size "
            "%" PRId64 " */\n"
            "        for (int64_t p = 0; p < %" PRId64 "; p++) {\n"
            "            int64_t i = p / %" PRId64 ", j = (p / %" PRId64 ") %% %" PRId64
            ", k = p %% %" PRId64 ";\n"
            "            int64_t at = ((i * %" PRId64 " + j) * 2) * %" PRId64 " + k;\n",
            ft, ft, cpu_emit_decode(ar, t, A), ft, cpu_emit_decode(ar, t, B), st_, st_, O, hv.d,
            hv.pre * hv.h * hv.post, hv.h * hv.post, hv.post, hv.h, hv.post, hv.h, hv.post);
        if (f64)
            cxla_strbuf_printf(b,
                               "            double x0 = (double)(%s_rng_wide(&s, at) >> 12) * "
                               "0x1p-52;\n"
                               "            double x1 = (double)(%s_rng_wide(&s, at + %" PRId64
                               ") >> 12) * 0x1p-52;\n"
                               "            double u1 = fmax(x0, (double)1.0e-7f);\n"
                               "            double v1 = 6.283185307179586 * x1;\n",
                               P, P, hv.post);
        else
            cxla_strbuf_printf(b,
                               "            float x0 = (float)(%s_rng_word(&s, at) >> 9) * "
                               "0x1p-23f;\n"
                               "            float x1 = (float)(%s_rng_word(&s, at + %" PRId64
                               ") >> 9) * 0x1p-23f;\n"
                               "            float u1 = fmaxf(x0, 1.0e-7f);\n"
                               "            float v1 = (float)6.283185307179586 * x1;\n",
                               P, P, hv.post);
        cxla_strbuf_printf(b,
                           "            %s u2 = sqrt%s(-2.0%s * log%s(u1));\n"
                           "            %s z[2];\n"
                           "            z[0] = sin%s(v1) * u2;\n"
                           "            z[1] = cos%s(v1) * u2;\n"
                           "            for (int h = 0; h < 2 && 2 * j + h < %" PRId64 "; h++) {\n"
                           "                %s sz = sigma * z[h];\n"
                           "                %s r = mu + sz;\n"
                           "                o[(i * %" PRId64 " + 2 * j + h) * %" PRId64
                           " + k] = %s;\n"
                           "            }\n"
                           "        }\n",
                           ft, sf, f64 ? "" : "f", sf, ft, sf, sf, hv.d, ft, ft, hv.d, hv.post,
                           f64 || t == CXLA_F32 ? "r" : cpu_emit_convert(ar, CXLA_F32, t, "r"));
    } else if (t == CXLA_F64) {
        cxla_strbuf_printf(b,
                           "        const double a = %s, b = %s;\n"
                           "        const double range = b - a;\n"
                           "        const int wide = isinf(range) && isfinite(a) && isfinite(b);\n"
                           "        const double below = nextafter(b, -INFINITY);\n"
                           "        double *o = (double *)%s;\n"
                           "        for (int64_t i = 0; i < %" PRId64 "; i++) {\n"
                           "            double v = (double)(%s_rng_wide(&s, i) >> 12) * 0x1p-52;\n"
                           "            double r;\n"
                           "            if (wide) {\n"
                           "                double ta = a - a * v, tb = b * v;\n"
                           "                r = ta + tb;\n"
                           "            } else {\n"
                           "                double p = v * range;\n"
                           "                r = p + a;\n"
                           "            }\n"
                           "            if (a < b && r >= b) r = below;\n"
                           "            o[i] = r;\n"
                           "        }\n",
                           A, B, O, n, P);
    } else if (cxla_type_is_float(t)) {
        uniform_small(ar, b, P, t, n, A, B, O);
    } else {
        /* Integers and pred: a + bits %% (b - a), wrapping at the type's width (pred: 1);
         * a signed sub-byte value stored sign-extended in its byte, as cxla_store_u64
         * stores it (the operands are read so too). */
        int width = t == CXLA_PRED ? 1 : cxla_type_bits(t);
        uint64_t sign =
            cpu_emit_subbyte(t) && cxla_type_is_signed(t) ? (uint64_t)1 << (width - 1) : 0;
        const char *ct = cpu_emit_ctype(t);
        bool sgn = cxla_type_is_signed(t);
        const char *ut = cxla_type_storage(t) == 1   ? "uint8_t"
                         : cxla_type_storage(t) == 2 ? "uint16_t"
                         : cxla_type_storage(t) == 4 ? "uint32_t"
                                                     : "uint64_t";
        cxla_strbuf_printf(b,
                           "        const uint64_t mask = 0x%" PRIx64 "u;\n"
                           "        const uint64_t ua = (uint64_t)%s(%s)%s;\n"
                           "        const uint64_t ub = (uint64_t)%s(%s)%s;\n"
                           "        const uint64_t range = (ub - ua) & mask;\n"
                           "        %s *o = (%s *)%s;\n"
                           "        for (int64_t i = 0; i < %" PRId64 "; i++) {\n"
                           "            uint64_t bits = %s_rng_%s(&s, i);\n"
                           "            uint64_t dist = range ? bits %% range : bits;\n",
                           width == 64 ? ~(uint64_t)0 : ((uint64_t)1 << width) - 1,
                           sgn ? "(int64_t)" : "", ct, A, sgn ? "(int64_t)" : "", ct, B, ut, ut, O,
                           n, P, width == 64 ? "wide" : "word");
        if (sign)
            cxla_strbuf_printf(b,
                               "            o[i] = (%s)((((ua + dist) & mask) ^ 0x%" PRIx64
                               "u) - 0x%" PRIx64 "u);\n        }\n",
                               ut, sign, sign);
        else
            cxla_strbuf_printf(b, "            o[i] = (%s)((ua + dist) & mask);\n        }\n", ut);
    }
    cpu_emit_buf_free(&pa);
    cpu_emit_buf_free(&pb);
    cpu_emit_buf_free(&po);
}

cxla_status aot_rng_emit(aot *a, const acomp *c, const astep *st, cxla_strbuf *b) {
    const cxla_instr *in = st->instr;
    if (in->opcode == CXLA_OP_RNG_GET_AND_UPDATE_STATE) {
        int64_t delta = 0;
        if (!cxla_instr_int(in, CXLA_ATTR_DELTA, &delta)) delta = 0;
        cxla_strbuf_puts(b, "        uint64_t *o = (uint64_t *)");
        aot_put_leaf(a, c, st->out[0], b);
        cxla_strbuf_printf(b,
                           ";\n        o[0] = rng[0];\n        o[1] = rng[1];\n"
                           "        %s_rng_advance(rng, %" PRIu64 "u);\n",
                           a->P, (uint64_t)delta);
        return NULL;
    }
    cxla_arena *ar = cxla_arena_create();
    if (!ar) return OOM();
    cpu_emit_fmt_reset();
    emit_rng(a, c, st, ar, b);
    cxla_arena_destroy(ar);
    if (cpu_emit_fmt_failed())
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory emitting %s", in->name);
    return NULL;
}

void aot_rng_source(const aot *a, cxla_strbuf *c) {
    if (!a->rng) return;
    const char *P = a->P;
    cxla_strbuf_printf(
        c,
        "/* ---- rng: philox-4x32 over the run's 128-bit state (src/exec/rng.c) ---- */\n"
        "static inline void %s_rng_advance(uint64_t *state, uint64_t delta) {\n"
        "    uint64_t lo = state[0] + delta;\n"
        "    if (lo < state[0]) state[1]++;\n"
        "    state[0] = lo;\n"
        "}\n\n"
        "/* The stream of one rng: its key, the counter it starts at, the last block made. */\n"
        "typedef struct %s_rng_stream {\n"
        "    uint64_t key, lo, hi;\n"
        "    int64_t block;\n"
        "    uint32_t x[4];\n"
        "} %s_rng_stream;\n\n"
        "/* Philox-4x32, 10 rounds, of block |v| (the counter plus v, with carry). */\n"
        "static inline void %s_rng_block(%s_rng_stream *s, int64_t v) {\n"
        "    uint64_t lo = s->lo + (uint64_t)v, hi = s->hi + (lo < s->lo);\n"
        "    uint32_t k0 = (uint32_t)s->key, k1 = (uint32_t)(s->key >> 32);\n"
        "    uint32_t x0 = (uint32_t)lo, x1 = (uint32_t)(lo >> 32);\n"
        "    uint32_t x2 = (uint32_t)hi, x3 = (uint32_t)(hi >> 32);\n"
        "    for (int round = 0; round < 10; round++) {\n"
        "        uint64_t p0 = (uint64_t)0xD2511F53u * x0, p1 = (uint64_t)0xCD9E8D57u * x2;\n"
        "        uint32_t y0 = (uint32_t)(p1 >> 32) ^ x1 ^ k0, y1 = (uint32_t)p1;\n"
        "        uint32_t y2 = (uint32_t)(p0 >> 32) ^ x3 ^ k1, y3 = (uint32_t)p0;\n"
        "        x0 = y0;\n"
        "        x1 = y1;\n"
        "        x2 = y2;\n"
        "        x3 = y3;\n"
        "        k0 += 0x9E3779B9u;\n"
        "        k1 += 0xBB67AE85u;\n"
        "    }\n"
        "    s->x[0] = x0;\n"
        "    s->x[1] = x1;\n"
        "    s->x[2] = x2;\n"
        "    s->x[3] = x3;\n"
        "    s->block = v;\n"
        "}\n\n"
        "/* Word |i| of the stream (outputs of 32 bits or fewer: four per block). */\n"
        "static inline uint32_t %s_rng_word(%s_rng_stream *s, int64_t i) {\n"
        "    if (s->block != i / 4) %s_rng_block(s, i / 4);\n"
        "    return s->x[i %% 4];\n"
        "}\n\n"
        "/* 64-bit value |i| of the stream (two per block). */\n"
        "static inline uint64_t %s_rng_wide(%s_rng_stream *s, int64_t i) {\n"
        "    if (s->block != i / 2) %s_rng_block(s, i / 2);\n"
        "    int w = i %% 2 ? 2 : 0;\n"
        "    return (uint64_t)s->x[w] | (uint64_t)s->x[w + 1] << 32;\n"
        "}\n\n",
        P, P, P, P, P, P, P, P, P, P, P);
}
