/* The emitter's rng-bit-generator kernel (emit_lib.h): XLA's three_fry and philox bit
 * generators as src/exec/rng.c computes them for the interpreter (interp_rng.c says how
 * the state, the counters and the output positions relate), written out as C, so the bits
 * and the new state are the interpreter's exactly. The outer range runs over the cipher
 * blocks (one counter each); the new state is written by the part that starts at 0.
 * rng (uniform and normal through the interpreter's per-run state) is not emitted: it
 * reads and advances state that lives in the interpreter between runs. */
#include <inttypes.h>
#include <string.h>

#include "cpu/emit_lib.h"
#include "exec/rng.h"

typedef struct rng_form {
    bool three_fry, bits_only;
    int64_t m; /* words of state */
    const cxla_shape *bits;
} rng_form;

static bool rng_form_of(const cxla_instr *instr, rng_form *f) {
    if (instr->operand_count != 1 || !cpu_lib_plain(instr)) return false;
    const cxla_shape *ss = &instr->operands[0]->shape, *rs = &instr->shape;
    if (ss->type != CXLA_U64 || ss->rank != 1) return false;
    f->bits_only = rs->type != CXLA_TUPLE;
    if (f->bits_only) {
        f->bits = rs;
    } else {
        if (rs->tuple_count != 2 || rs->elements[0].type != CXLA_U64 || rs->elements[0].rank != 1 ||
            rs->elements[0].dims[0] != ss->dims[0])
            return false;
        f->bits = &rs->elements[1];
    }
    cxla_type t = f->bits->type;
    if (t != CXLA_U8 && t != CXLA_U16 && t != CXLA_U32 && t != CXLA_U64) return false;
    const char *alg = cxla_instr_word(instr, CXLA_ATTR_ALGORITHM);
    if (!alg) alg = "rng_default";
    f->three_fry = strcmp(alg, "rng_three_fry") == 0;
    if (!f->three_fry && strcmp(alg, "rng_philox") != 0 && strcmp(alg, "rng_default") != 0)
        return false;
    f->m = ss->dims[0];
    return f->three_fry ? f->m == 2 : f->m == 2 || f->m == 3;
}

bool cpu_emit_rng_ok(const cxla_instr *instr) {
    rng_form f;
    return instr->opcode == CXLA_OP_RNG_BIT_GENERATOR && rng_form_of(instr, &f);
}

static void emit_threefry_fn(const char *name, cxla_strbuf *out) {
    cxla_strbuf_printf(
        out,
        "/* Threefry-2x32, 20 rounds (exec_threefry2x32). */\n"
        "static inline void %s_threefry(uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1, "
        "uint32_t *o0, uint32_t *o1) {\n"
        "    static const int rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};\n"
        "    const uint32_t ks[3] = {k0, k1, 0x1BD11BDAu ^ k0 ^ k1};\n"
        "    uint32_t x0 = c0 + ks[0], x1 = c1 + ks[1];\n"
        "    for (uint32_t block = 0; block < 5; block++) {\n"
        "        for (int r = 0; r < 4; r++) {\n"
        "            const int s = rot[(block %% 2) * 4 + (uint32_t)r];\n"
        "            x0 += x1;\n"
        "            x1 = (x1 << s) | (x1 >> (32 - s));\n"
        "            x1 ^= x0;\n"
        "        }\n"
        "        const uint32_t s = block + 1;\n"
        "        x0 += ks[s %% 3];\n"
        "        x1 += ks[(s + 1) %% 3] + s;\n"
        "    }\n"
        "    *o0 = x0;\n"
        "    *o1 = x1;\n"
        "}\n",
        name);
}

static void emit_philox_fn(const char *name, cxla_strbuf *out) {
    cxla_strbuf_printf(
        out,
        "/* Philox-4x32, 10 rounds (exec_philox4x32), on the 128-bit counter (lo, hi). */\n"
        "static inline void %s_philox(uint32_t k0, uint32_t k1, uint64_t lo, uint64_t hi, "
        "uint32_t x[4]) {\n"
        "    uint32_t x0 = (uint32_t)lo, x1 = (uint32_t)(lo >> 32), x2 = (uint32_t)hi,\n"
        "             x3 = (uint32_t)(hi >> 32);\n"
        "    for (int round = 0; round < 10; round++) {\n"
        "        const uint64_t p0 = (uint64_t)0xD2511F53u * x0, p1 = (uint64_t)0xCD9E8D57u * "
        "x2;\n"
        "        const uint32_t y0 = (uint32_t)(p1 >> 32) ^ x1 ^ k0, y1 = (uint32_t)p1;\n"
        "        const uint32_t y2 = (uint32_t)(p0 >> 32) ^ x3 ^ k1, y3 = (uint32_t)p0;\n"
        "        x0 = y0;\n        x1 = y1;\n        x2 = y2;\n        x3 = y3;\n"
        "        k0 += 0x9E3779B9u;\n"
        "        k1 += 0xBB67AE85u;\n"
        "    }\n"
        "    x[0] = x0;\n    x[1] = x1;\n    x[2] = x2;\n    x[3] = x3;\n"
        "}\n",
        name);
}

cxla_status cpu_emit_rng(const cxla_instr *instr, const char *name, cxla_strbuf *out,
                         cpu_kernel_info *info) {
    rng_form f;
    if (!rng_form_of(instr, &f))
        return cxla_error(CXLA_STATUS_UNIMPLEMENTED, "cpu backend: cannot emit %s (%s)",
                          instr->name, cxla_opcode_name(instr->opcode));
    cxla_type t = f.bits->type;
    int width = cxla_type_bits(t);
    int64_t n = cpu_lib_count(f.bits);
    const char *T = cpu_emit_ctype(t);
    int64_t units; /* blocks of the cipher: the range */
    exec_halves hv = exec_rng_split_halves(f.bits);
    if (f.three_fry)
        units = width == 64 ? n : (n > 0 ? exec_rng_halves_pairs(hv) : 0);
    else
        units = width == 64 ? (n + 1) / 2 : (n + 3) / 4;
    cpu_lib_head(instr, name, out);
    if (f.three_fry)
        emit_threefry_fn(name, out);
    else
        emit_philox_fn(name, out);
    cpu_lib_open(name, units > 0 ? units : 1, out);
    const char *bits_out = f.bits_only ? "out[0]" : "out[1]";
    cxla_strbuf_printf(out,
                       "    const uint64_t *restrict s = in[0];\n"
                       "    %s *restrict bits = %s;\n"
                       "    (void)bits;\n"
                       "    const uint32_t k0 = (uint32_t)s[0], k1 = (uint32_t)(s[0] >> 32);\n",
                       T, bits_out);
    if (f.three_fry) {
        cxla_strbuf_puts(out, "    const uint64_t ctr = s[1];\n");
    } else {
        cxla_strbuf_printf(out, "    const uint64_t clo = s[1], chi = %s;\n",
                           f.m == 3 ? "s[2]" : "s[0]");
    }
    if (!f.bits_only) {
        /* The new state: the counter advanced by the blocks used. */
        cxla_strbuf_printf(out,
                           "    if (begin == 0) {\n"
                           "        uint64_t *restrict ns = out[0];\n"
                           "        for (int i = 0; i < %" PRId64 "; i++) ns[i] = s[i];\n",
                           f.m);
        if (f.three_fry) {
            cxla_strbuf_printf(out, "        ns[1] = ctr + %" PRIu64 "u;\n", (uint64_t)units);
        } else {
            cxla_strbuf_printf(out,
                               "        const uint64_t lo = clo + %" PRIu64 "u;\n"
                               "        ns[1] = lo;\n",
                               (uint64_t)units);
            if (f.m == 3) cxla_strbuf_puts(out, "        ns[2] = chi + (lo < clo);\n");
        }
        cxla_strbuf_puts(out, "    }\n");
    }
    if (units == 0) {
        /* No bits (an empty shape): only the state. */
        cxla_strbuf_puts(out, "    (void)k0;\n    (void)k1;\n");
        cxla_strbuf_puts(out,
                         f.three_fry ? "    (void)ctr;\n" : "    (void)clo;\n    (void)chi;\n");
    } else if (f.three_fry && width == 64) {
        cxla_strbuf_puts(out, "    for (int64_t i = begin; i < end; i++) {\n"
                              "        const uint64_t c = ctr + (uint64_t)i;\n"
                              "        uint32_t x0, x1;\n");
        cxla_strbuf_printf(out,
                           "        %s_threefry(k0, k1, (uint32_t)c, (uint32_t)(c >> 32), &x0, "
                           "&x1);\n"
                           "        bits[i] = (uint64_t)x0 | (uint64_t)x1 << 32;\n    }\n",
                           name);
    } else if (f.three_fry) {
        /* Pair p of the half shape writes positions 2j and 2j + 1 of the split dimension. */
        cxla_strbuf_printf(out,
                           "    for (int64_t p = begin; p < end; p++) {\n"
                           "        const int64_t i = p / %" PRId64 ", j = (p / %" PRId64
                           ") %% %" PRId64 ", kk = p %% %" PRId64 ";\n"
                           "        const uint64_t c = ctr + (uint64_t)p;\n"
                           "        uint32_t x[2];\n"
                           "        %s_threefry(k0, k1, (uint32_t)c, (uint32_t)(c >> 32), &x[0], "
                           "&x[1]);\n"
                           "        for (int b = 0; b < 2; b++) {\n"
                           "            const int64_t jj = 2 * j + b;\n"
                           "            if (jj >= %" PRId64 ") break;\n"
                           "            bits[(i * %" PRId64 " + jj) * %" PRId64
                           " + kk] = (%s)x[b];\n"
                           "        }\n    }\n",
                           hv.h * hv.post, hv.post, hv.h, hv.post, name, hv.d, hv.d, hv.post, T);
    } else {
        cxla_strbuf_printf(out,
                           "    for (int64_t v = begin; v < end; v++) {\n"
                           "        const uint64_t lo = clo + (uint64_t)v;\n"
                           "        uint32_t x[4];\n"
                           "        %s_philox(k0, k1, lo, chi + (lo < clo), x);\n",
                           name);
        if (width == 64)
            cxla_strbuf_printf(
                out,
                "        bits[2 * v] = (uint64_t)x[0] | (uint64_t)x[1] << 32;\n"
                "        if (2 * v + 1 < %" PRId64
                ") bits[2 * v + 1] = (uint64_t)x[2] | (uint64_t)x[3] << 32;\n    }\n",
                n);
        else
            cxla_strbuf_printf(out,
                               "        for (int w = 0; w < 4 && 4 * v + w < %" PRId64
                               "; w++) bits[4 * v + w] = (%s)x[w];\n    }\n",
                               n, T);
    }
    cxla_strbuf_puts(out, "}\n\n");
    if (info) {
        info->range = units > 0 ? units : 1;
        info->cost = (double)n * (double)cxla_type_storage(t) + (double)units * 64.0;
    }
    return NULL;
}
