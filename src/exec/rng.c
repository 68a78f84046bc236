/* Random-number algorithms shared by the backends (exec/rng.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/rng.h"
#include "literal/literal_internal.h"

/* ---- the block functions ---------------------------------------------------------- */

static uint32_t rotl32(uint32_t v, int r) {
    return (v << r) | (v >> (32 - r));
}

void exec_threefry2x32(const uint32_t key[2], const uint32_t ctr[2], uint32_t out[2]) {
    static const int rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
    const uint32_t ks[3] = {key[0], key[1], 0x1BD11BDAu ^ key[0] ^ key[1]};
    uint32_t x0 = ctr[0] + ks[0], x1 = ctr[1] + ks[1];
    for (uint32_t block = 0; block < 5; block++) {
        for (int r = 0; r < 4; r++) {
            x0 += x1;
            x1 = rotl32(x1, rot[(block % 2) * 4 + (uint32_t)r]);
            x1 ^= x0;
        }
        uint32_t s = block + 1; /* key injection s */
        x0 += ks[s % 3];
        x1 += ks[(s + 1) % 3] + s;
    }
    out[0] = x0;
    out[1] = x1;
}

void exec_philox4x32(const uint32_t key[2], const uint32_t ctr[4], uint32_t out[4]) {
    uint32_t k0 = key[0], k1 = key[1];
    uint32_t x0 = ctr[0], x1 = ctr[1], x2 = ctr[2], x3 = ctr[3];
    for (int round = 0; round < 10; round++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * x0, p1 = (uint64_t)0xCD9E8D57u * x2;
        uint32_t y0 = (uint32_t)(p1 >> 32) ^ x1 ^ k0, y1 = (uint32_t)p1;
        uint32_t y2 = (uint32_t)(p0 >> 32) ^ x3 ^ k1, y3 = (uint32_t)p0;
        x0 = y0, x1 = y1, x2 = y2, x3 = y3;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    out[0] = x0, out[1] = x1, out[2] = x2, out[3] = x3;
}

void exec_mt19937_64(uint64_t seed, uint64_t *out, int64_t count) {
    enum { N = 312, M = 156 };
    uint64_t mt[N];
    mt[0] = seed;
    for (int i = 1; i < N; i++)
        mt[i] = 6364136223846793005ull * (mt[i - 1] ^ (mt[i - 1] >> 62)) + (uint64_t)i;
    int next = N;
    for (int64_t k = 0; k < count; k++) {
        if (next == N) {
            for (int i = 0; i < N; i++) {
                uint64_t x = (mt[i] & 0xFFFFFFFF80000000ull) | (mt[(i + 1) % N] & 0x7FFFFFFFull);
                uint64_t xa = (x >> 1) ^ ((x & 1) ? 0xB5026F5AA96619E9ull : 0);
                mt[i] = mt[(i + M) % N] ^ xa;
            }
            next = 0;
        }
        uint64_t y = mt[next++];
        y ^= (y >> 29) & 0x5555555555555555ull;
        y ^= (y << 17) & 0x71D67FFFEDA60000ull;
        y ^= (y << 37) & 0xFFF7EEE000000000ull;
        y ^= y >> 43;
        out[k] = y;
    }
}

/* ---- bit generators over shapes ----------------------------------------------------- */

exec_u128 exec_u128_add(exec_u128 a, uint64_t b) {
    exec_u128 r = {a.lo + b, a.hi};
    if (r.lo < a.lo) r.hi++;
    return r;
}

exec_halves exec_rng_split_halves(const cxla_shape *s) {
    exec_halves hv = {1, 1, 1, 1};
    if (s->rank == 0) return hv;
    int64_t split = -1;
    for (int64_t i = 0; i < s->rank && split < 0; i++)
        if (s->dims[i] % 2 == 0) split = i;
    if (split < 0) {
        split = 0;
        for (int64_t i = 1; i < s->rank; i++)
            if (s->dims[i] > s->dims[split]) split = i;
    }
    for (int64_t i = 0; i < split; i++) hv.pre *= s->dims[i];
    for (int64_t i = split + 1; i < s->rank; i++) hv.post *= s->dims[i];
    hv.d = s->dims[split];
    hv.h = (hv.d + 1) / 2;
    return hv;
}

int64_t exec_rng_halves_pairs(exec_halves hv) {
    return hv.pre * hv.h * hv.post;
}

static void key_words(uint64_t key, uint32_t out[2]) {
    out[0] = (uint32_t)key;
    out[1] = (uint32_t)(key >> 32);
}

/* Threefry words for an output of 32 bits or fewer: pair p of the half shape takes
 * counter ctr + p and writes element (i, 2j + b, k) of the output. Returns the new
 * counter. */
uint64_t exec_threefry_narrow(uint64_t key, uint64_t ctr, exec_halves hv, cxla_type t, void *out) {
    uint32_t k[2];
    key_words(key, k);
    size_t es = cxla_type_storage(t);
    char *o = out;
    int64_t pairs = exec_rng_halves_pairs(hv);
    for (int64_t p = 0; p < pairs; p++) {
        int64_t i = p / (hv.h * hv.post), j = (p / hv.post) % hv.h, kk = p % hv.post;
        uint64_t c = ctr + (uint64_t)p;
        uint32_t cw[2] = {(uint32_t)c, (uint32_t)(c >> 32)}, x[2];
        exec_threefry2x32(k, cw, x);
        for (int b = 0; b < 2; b++) {
            int64_t jj = 2 * j + b;
            if (jj >= hv.d) break;
            cxla_store_u64(t, o + (size_t)((i * hv.d + jj) * hv.post + kk) * es, x[b]);
        }
    }
    return ctr + (uint64_t)pairs;
}

uint64_t exec_threefry_wide(uint64_t key, uint64_t ctr, int64_t n, uint64_t *out) {
    uint32_t k[2];
    key_words(key, k);
    for (int64_t i = 0; i < n; i++) {
        uint64_t c = ctr + (uint64_t)i;
        uint32_t cw[2] = {(uint32_t)c, (uint32_t)(c >> 32)}, x[2];
        exec_threefry2x32(k, cw, x);
        out[i] = (uint64_t)x[0] | (uint64_t)x[1] << 32;
    }
    return ctr + (uint64_t)n;
}

static void philox_block(const uint32_t k[2], exec_u128 c, uint32_t x[4]) {
    uint32_t cw[4] = {(uint32_t)c.lo, (uint32_t)(c.lo >> 32), (uint32_t)c.hi,
                      (uint32_t)(c.hi >> 32)};
    exec_philox4x32(k, cw, x);
}

/* |n| philox words (blocks of four in order); returns the advanced counter. */
exec_u128 exec_philox_words(uint64_t key, exec_u128 ctr, int64_t n, uint32_t *out) {
    uint32_t k[2];
    key_words(key, k);
    int64_t blocks = (n + 3) / 4;
    for (int64_t v = 0; v < blocks; v++) {
        uint32_t x[4];
        philox_block(k, exec_u128_add(ctr, (uint64_t)v), x);
        for (int w = 0; w < 4 && 4 * v + w < n; w++) out[4 * v + w] = x[w];
    }
    return exec_u128_add(ctr, (uint64_t)blocks);
}

/* |n| 64-bit philox values, two per block; returns the advanced counter. */
exec_u128 exec_philox_wide(uint64_t key, exec_u128 ctr, int64_t n, uint64_t *out) {
    uint32_t k[2];
    key_words(key, k);
    int64_t blocks = (n + 1) / 2;
    for (int64_t v = 0; v < blocks; v++) {
        uint32_t x[4];
        philox_block(k, exec_u128_add(ctr, (uint64_t)v), x);
        out[2 * v] = (uint64_t)x[0] | (uint64_t)x[1] << 32;
        if (2 * v + 1 < n) out[2 * v + 1] = (uint64_t)x[2] | (uint64_t)x[3] << 32;
    }
    return exec_u128_add(ctr, (uint64_t)blocks);
}

/* The largest value of small float type |t| below |b| (NaN when there is none). */
double exec_rng_small_float_below(cxla_type t, double b) {
    double best = NAN;
    uint32_t patterns = 1u << cxla_type_bits(t);
    for (uint32_t p = 0; p < patterns; p++) {
        double v = cxla_float_to_double(t, p);
        if (v < b && !(v <= best)) best = v;
    }
    return best;
}

void exec_rng_uniform_f64(const uint64_t *bits, int64_t n, double a, double b, double *out) {
    double range = b - a;
    bool wide = isinf(range) && isfinite(a) && isfinite(b);
    double below = nextafter(b, -INFINITY);
    for (int64_t i = 0; i < n; i++) {
        double v = (double)(bits[i] >> 12) * 0x1p-52;
        double r;
        if (wide) {
            double ta = a - a * v, tb = b * v; /* a (1 - v) + b v: no overflow */
            r = ta + tb;
        } else {
            double p = v * range;
            r = p + a;
        }
        if (a < b && r >= b) r = below;
        out[i] = r;
    }
}

/* f32 results (before rounding to a small type). */
void exec_rng_uniform_f32(const uint32_t *bits, int64_t n, float a, float b, bool clamp,
                          float *out) {
    float range = b - a;
    bool wide = isinf(range) && isfinite(a) && isfinite(b);
    float below = nextafterf(b, -INFINITY);
    for (int64_t i = 0; i < n; i++) {
        float v = (float)(bits[i] >> 9) * 0x1p-23f;
        float r;
        if (wide) {
            double p = (double)v * ((double)b - (double)a);
            r = (float)(p + (double)a);
        } else {
            float p = v * range;
            r = p + a;
        }
        if (clamp && a < b && r >= b) r = below;
        out[i] = r;
    }
}

/* ---- rng's distributions ------------------------------------------------------------ */

static int64_t element_count(const cxla_shape *s) {
    int64_t n = 1;
    for (int64_t i = 0; i < s->rank; i++) n *= s->dims[i];
    return n;
}

bool exec_rng_fill_uniform_float(uint64_t key, exec_u128 c, const cxla_shape *shape, double a,
                                 double b, void *res) {
    cxla_type t = shape->type;
    int64_t n = element_count(shape);
    size_t count = (size_t)(n ? n : 1);
    if (t == CXLA_F64) {
        uint64_t *bits = malloc(count * sizeof(uint64_t));
        if (!bits) return false;
        exec_philox_wide(key, c, n, bits);
        exec_rng_uniform_f64(bits, n, a, b, res);
        free(bits);
        return true;
    }
    uint32_t *bits = malloc(count * sizeof(uint32_t));
    float *vals = malloc(count * sizeof(float));
    if (!bits || !vals) {
        free(bits);
        free(vals);
        return false;
    }
    exec_philox_words(key, c, n, bits);
    exec_rng_uniform_f32(bits, n, (float)a, (float)b, t == CXLA_F32, t == CXLA_F32 ? res : vals);
    if (t != CXLA_F32) {
        size_t es = cxla_type_storage(t);
        char *o = res;
        double below = NAN;
        bool have_below = false;
        for (int64_t i = 0; i < n; i++) {
            char *p = o + (size_t)i * es;
            cxla_store_f64(t, p, vals[i]);
            if (a < b && cxla_load_f64(t, p) >= b) { /* rounded up to b */
                if (!have_below) below = exec_rng_small_float_below(t, b), have_below = true;
                cxla_store_f64(t, p, below);
            }
        }
    }
    free(bits);
    free(vals);
    return true;
}

bool exec_rng_fill_uniform_int(uint64_t key, exec_u128 c, const cxla_shape *shape, const void *la,
                               const void *lb, void *res) {
    cxla_type t = shape->type;
    int width = t == CXLA_PRED ? 1 : cxla_type_bits(t);
    uint64_t mask = width == 64 ? ~0ull : (1ull << width) - 1;
    uint64_t ua = cxla_load_u64(t, la);
    uint64_t ub = cxla_load_u64(t, lb);
    if (cxla_type_is_signed(t)) {
        ua = (uint64_t)cxla_load_s64(t, la);
        ub = (uint64_t)cxla_load_s64(t, lb);
    }
    uint64_t range = (ub - ua) & mask;
    int64_t n = element_count(shape);
    size_t count = (size_t)(n ? n : 1);
    uint64_t *bits = malloc(count * sizeof(uint64_t));
    if (!bits) return false;
    if (width == 64) {
        exec_philox_wide(key, c, n, bits);
    } else {
        uint32_t *w = malloc(count * sizeof(uint32_t));
        if (!w) {
            free(bits);
            return false;
        }
        exec_philox_words(key, c, n, w);
        for (int64_t i = 0; i < n; i++) bits[i] = w[i];
        free(w);
    }
    size_t es = cxla_type_storage(t);
    char *o = res;
    for (int64_t i = 0; i < n; i++) {
        uint64_t dist = range ? bits[i] % range : bits[i];
        cxla_store_u64(t, o + (size_t)i * es, (ua + dist) & mask);
    }
    free(bits);
    return true;
}

bool exec_rng_fill_normal(uint64_t key, exec_u128 c, const cxla_shape *shape, double mu,
                          double sigma, void *res) {
    cxla_type t = shape->type;
    exec_halves hv = exec_rng_split_halves(shape);
    int64_t pairs = exec_rng_halves_pairs(hv), n = 2 * pairs;
    size_t es = cxla_type_storage(t);
    char *o = res;
    if (t == CXLA_F64) {
        uint64_t *bits = malloc((size_t)(n ? n : 1) * sizeof(uint64_t));
        if (!bits) return false;
        exec_philox_wide(key, c, n, bits);
        for (int64_t p = 0; p < pairs; p++) {
            int64_t i = p / (hv.h * hv.post), j = (p / hv.post) % hv.h, k = p % hv.post;
            int64_t base = ((i * hv.h + j) * 2) * hv.post + k;
            double x0 = (double)(bits[base] >> 12) * 0x1p-52;
            double x1 = (double)(bits[base + hv.post] >> 12) * 0x1p-52;
            double u1 = fmax(x0, (double)1.0e-7f);
            double v1 = 6.283185307179586 * x1;
            double u2 = sqrt(-2.0 * log(u1));
            double z[2] = {sin(v1) * u2, cos(v1) * u2};
            for (int b = 0; b < 2 && 2 * j + b < hv.d; b++) {
                double sz = sigma * z[b];
                double r = mu + sz;
                memcpy(o + (size_t)((i * hv.d + 2 * j + b) * hv.post + k) * es, &r, sizeof(r));
            }
        }
        free(bits);
        return true;
    }
    uint32_t *bits = malloc((size_t)(n ? n : 1) * sizeof(uint32_t));
    if (!bits) return false;
    exec_philox_words(key, c, n, bits);
    float fmu = (float)mu, fsigma = (float)sigma;
    for (int64_t p = 0; p < pairs; p++) {
        int64_t i = p / (hv.h * hv.post), j = (p / hv.post) % hv.h, k = p % hv.post;
        int64_t base = ((i * hv.h + j) * 2) * hv.post + k;
        float x0 = (float)(bits[base] >> 9) * 0x1p-23f;
        float x1 = (float)(bits[base + hv.post] >> 9) * 0x1p-23f;
        float u1 = fmaxf(x0, 1.0e-7f);
        float v1 = (float)6.283185307179586 * x1;
        float u2 = sqrtf(-2.0f * logf(u1));
        float z[2] = {sinf(v1) * u2, cosf(v1) * u2};
        for (int b = 0; b < 2 && 2 * j + b < hv.d; b++) {
            float sz = fsigma * z[b];
            float r = fmu + sz;
            char *dst = o + (size_t)((i * hv.d + 2 * j + b) * hv.post + k) * es;
            if (t == CXLA_F32)
                memcpy(dst, &r, sizeof(r));
            else
                cxla_store_f64(t, dst, r);
        }
    }
    free(bits);
    return true;
}
