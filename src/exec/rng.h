/* The random-number algorithms every backend shares, bit-exact with XLA (the meaning of
 * rng, rng-bit-generator and rng-get-and-update-state over them is written in
 * src/interp/interp_rng.c and docs/semantics.md, "Random numbers"): the Random123 block
 * functions, std::mt19937_64, the bit generators over shapes of rng-bit-generator
 * (XLA's prng library) and the bits-to-uniform-float conversions of rng. Pure functions
 * of their arguments; no errors. */
#ifndef CXLA_EXEC_RNG_H_
#define CXLA_EXEC_RNG_H_

#include <stdbool.h>
#include <stdint.h>

#include "cxla/shape.h"
#include "cxla/types.h"

/* The Random123 block functions: Threefry-2x32 with 20 rounds and Philox-4x32 with 10
 * rounds, as XLA's prng library computes them (word 0 is the low word). */
void exec_threefry2x32(const uint32_t key[2], const uint32_t ctr[2], uint32_t out[2]);
void exec_philox4x32(const uint32_t key[2], const uint32_t ctr[4], uint32_t out[4]);
/* The first |count| outputs of C++'s std::mt19937_64 seeded with |seed|. */
void exec_mt19937_64(uint64_t seed, uint64_t *out, int64_t count);
/* The initial rng state (low word), XLA CPU's per-executable rng_state initializer. */
#define EXEC_RNG_INITIAL_STATE 0x7012395ull

/* A 128-bit counter. */
typedef struct exec_u128 {
    uint64_t lo, hi;
} exec_u128;
exec_u128 exec_u128_add(exec_u128 a, uint64_t b);

/* XLA's SplitShapeIntoHalves: the shape seen as [pre, d, post] around the split dimension
 * (the first even one, else the largest, the first of equal ones; a scalar is [1, 1, 1]);
 * h = ceil(d / 2) pairs along it. */
typedef struct exec_halves {
    int64_t pre, d, h, post;
} exec_halves;
exec_halves exec_rng_split_halves(const cxla_shape *s);
/* Positions of the half shape: pre * h * post. */
int64_t exec_rng_halves_pairs(exec_halves hv);

/* rng_three_fry into |out| (row-major elements of |t|, 32 bits or fewer): pair p of the
 * half shape takes counter ctr + p and writes elements (i, 2j + b, k). Returns the new
 * counter. */
uint64_t exec_threefry_narrow(uint64_t key, uint64_t ctr, exec_halves hv, cxla_type t, void *out);
/* rng_three_fry, |n| 64-bit values (counter + i each); returns the new counter. */
uint64_t exec_threefry_wide(uint64_t key, uint64_t ctr, int64_t n, uint64_t *out);
/* |n| philox words (blocks of four in order); returns the advanced counter. */
exec_u128 exec_philox_words(uint64_t key, exec_u128 ctr, int64_t n, uint32_t *out);
/* |n| 64-bit philox values, two per block; returns the advanced counter. */
exec_u128 exec_philox_wide(uint64_t key, exec_u128 ctr, int64_t n, uint64_t *out);

/* rng's uniform floats in [a, b) from bits: the top 52 (f64) or 23 (f32) bits as v in
 * [0, 1), then v * (b - a) + a, computed in a wider form when b - a overflows. The f64
 * form (and the f32 form when |clamp|) turns a value that rounds to b or past it into
 * the largest value below b. */
void exec_rng_uniform_f64(const uint64_t *bits, int64_t n, double a, double b, double *out);
void exec_rng_uniform_f32(const uint32_t *bits, int64_t n, float a, float b, bool clamp,
                          float *out);
/* The largest value of the small float type |t| (16 bits or fewer) below |b|; NaN when
 * there is none. */
double exec_rng_small_float_below(cxla_type t, double b);

/* rng's distributions (src/interp/interp_rng.c says how, docs/semantics.md "Random
 * numbers") into |out|, the row-major elements of |shape| (a static array of its type),
 * from philox with |key| and counter |c|: uniform floats in [a, b), uniform integers
 * a + bits % (b - a) (|a| and |b| point to scalars of the type), normal floats
 * mu + sigma z by Box-Muller. False when out of memory (nothing else fails). */
bool exec_rng_fill_uniform_float(uint64_t key, exec_u128 c, const cxla_shape *shape, double a,
                                 double b, void *out);
bool exec_rng_fill_uniform_int(uint64_t key, exec_u128 c, const cxla_shape *shape, const void *a,
                               const void *b, void *out);
bool exec_rng_fill_normal(uint64_t key, exec_u128 c, const cxla_shape *shape, double mu,
                          double sigma, void *out);

#endif /* CXLA_EXEC_RNG_H_ */
