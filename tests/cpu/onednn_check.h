/* What tests/cpu/test_onednn.c and test_onednn_conv.c share (onednn_check.c).
 *
 * The bound: |cpu - interpreter| <= 2 * gamma(n) * sum |a_i * b_i| per element, plus one
 * unit in the last place of the result type when it is narrower than f32, where n is the
 * number of products summed into the element and gamma(n) = n*u / (1 - n*u), u = 2^-24.
 * The sum of magnitudes is the interpreter's result for |a| and |b| with an f32 result. */
#ifndef CXLA_TESTS_CPU_ONEDNN_CHECK_H_
#define CXLA_TESTS_CPU_ONEDNN_CHECK_H_

#include <stdint.h>

#include "base/base.h"
#include "hlo/hlo.h"

enum { MAX_PARAMS = 6 };

/* The random generator's state (each test sets its seed). */
extern uint64_t rng_state;
/* Elementwise operations fused after the product: the bound grows by one f32 ulp each. */
extern int fused_ops;
/* When set, the magnitudes come from this module instead of the one tested. */
extern const char *mag_text;
/* Floats are drawn in [-2, 2) times this. */
extern double fill_scale;

/* A uniform double in [0, 1); an int in [0, n). */
double uniform(void);
int pick(int n);
/* |lit| filled with random values (see fill_scale). */
void fill(cxla_literal *lit);
/* |text| (owned by the caller, free) with "$R" replaced by |rtype| and "$T" by |ttype|. */
char *with_types(const char *text, const char *rtype, const char *ttype);
char *with_type(const char *text, const char *rtype);
/* |text| parsed and verified (NULL, the test failed, when rejected). */
cxla_module *parse(const char *text);

/* Runs module |text| (the root named "r"; "$R" is the result element type |rtype|) on the
 * interpreter and the cpu backend and compares. |n|: the products per result element
 * (0: exact comparison). |want_what|: how the root must run: "onednn" (when the build has
 * oneDNN; "loops" without), "loops", or NULL (either: oneDNN may lack a type on a CPU). */
void check(const char *text, const char *rtype, int64_t n, const char *want_what);

/* |v| shuffled in place; "{a,b,...}" and "type[a,b,...]" appended to |b|. */
void shuffle(int64_t *v, int64_t n);
void ints_text(cxla_strbuf *b, const int64_t *v, int64_t n);
void dims_text(cxla_strbuf *b, const char *type, const int64_t *d, int64_t n);

#endif /* CXLA_TESTS_CPU_ONEDNN_CHECK_H_ */
