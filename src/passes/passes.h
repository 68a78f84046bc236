/* HLO-to-HLO passes over the one IR (src/hlo/hlo.h), run in named pipelines.
 *
 * A pass rewrites a module in place and keeps it valid: a module after any pass is still
 * a module the interpreter runs with bit-identical results (the tests check each pass
 * that way). A pass never removes or duplicates a side effect (infeed, outfeed, send,
 * recv, rng, custom-call, collectives ...). What each pass does and leaves alone is in
 * docs/passes.md. New instructions and computations live in the module's arena; removed
 * ones stay there until the module is destroyed.
 *
 * Errors: a pass fails only on a broken module (a cycle, a missing computation) or when
 * memory is short; cxla_pipeline_run annotates the error with the pipeline and the pass,
 * and with the verifier's message when a pass left the module invalid.
 */
#ifndef CXLA_PASSES_PASSES_H_
#define CXLA_PASSES_PASSES_H_

#include "hlo/hlo.h"

typedef struct cxla_pass {
    const char *name; /* as --dump-after names it: "dce", "cse", "fusion" ... */
    /* Rewrites |m|; *changed tells whether anything changed. */
    cxla_status (*run)(cxla_module *m, bool *changed);
} cxla_pass;

typedef struct cxla_pipeline_options {
    const char *dump_after; /* NULL, a pass name, or "all": print the module after it */
    cxla_strbuf *dump_to;   /* where dumps go (NULL: stderr) */
    bool verify; /* run cxla_verify_module between passes (default on in debug builds, and in
                    tests) */
} cxla_pipeline_options;

/* Runs |count| passes in order on |m|. |options| may be NULL: no dumps, and the verifier
 * runs between passes only in builds without NDEBUG. A dump is "// after <pass> (pipeline
 * <name>, changed|unchanged)" followed by the module in the short text style. */
cxla_status cxla_pipeline_run(cxla_module *m, const char *pipeline_name,
                              const cxla_pass *const *passes, int64_t count,
                              const cxla_pipeline_options *options);

/* The cpu backend's pipeline, in order: async desugaring, builder decompositions as calls,
 * inline calls, simplify, constant
 * folding, CSE, DCE, layout normalization, dot canonicalization, convolution canonicalization (to
 * b01f_01io->b01f where the activations are neither b01f nor bf01), output fusion (a dot or
 * convolution with its elementwise epilogue: epilogue.h), fusion (loop, input,
 * multi-output), DCE. (The cpu backend itself runs it without dot canonicalization: its
 * library calls for dot take any dimension numbers, as strides.) */
cxla_status cxla_passes_cpu(cxla_module *m, const cxla_pipeline_options *options);
/* The passes of cxla_passes_cpu, in order (for tools and tests); *out_count gets the
 * count. The array is static. */
const cxla_pass *const *cxla_passes_cpu_list(int64_t *out_count);
/* Looks a pass up by name among the cpu pipeline's passes; NULL when unknown. */
const cxla_pass *cxla_pass_find(const char *name);

/* async_desugar.c: async sugar (negate-start ...) -> async-start with calls= */
extern const cxla_pass cxla_pass_async_desugar;
/* builder_calls.c: a custom call of XLA's builder (target "xla_builder.*") that carries its
 * decomposition, and whose target no registered function takes, -> a call of it */
extern const cxla_pass cxla_pass_builder_calls;
extern const cxla_pass cxla_pass_inline;         /* inline.c: call inlining */
extern const cxla_pass cxla_pass_topk_decompose; /* topk_decompose.c: TopK -> sort + slices */
extern const cxla_pass cxla_pass_simplify;       /* simplify.c: algebraic simplifier */
extern const cxla_pass cxla_pass_constant_fold;  /* constant_fold.c */
extern const cxla_pass cxla_pass_cse;            /* cse.c */
extern const cxla_pass cxla_pass_dce;            /* dce.c */
extern const cxla_pass cxla_pass_layout;         /* layout.c: layout normalization */
extern const cxla_pass cxla_pass_dot_canon;      /* dot_canon.c: dot canonicalization */
extern const cxla_pass cxla_pass_conv_canon;     /* conv_canon.c: convolution layouts */
/* conv-canon on every convolution not already b01f_01io->b01f, NHWC and NCHW included:
 * not in the pipeline; the tests run it on every case to show the rewrite is exact. */
extern const cxla_pass cxla_pass_conv_canon_all;

/* Whether convolution |conv| has the shape of a weight gradient (conv_canon.c): one feature
 * and one batch group, spatial dims, no lhs dilation or reversal, and more window elements
 * than output positions (the window is the output gradient's spatial size). The cpu backend
 * runs it as oneDNN's backward weights, which reads JAX's f01b lhs as NHWC: conv-canon
 * leaves it alone, as it does batch-grouped convolutions. */
bool cxla_conv_is_weight_gradient(const cxla_instr *conv);
extern const cxla_pass cxla_pass_output_fusion; /* output_fusion.c: dot/conv + epilogue */
extern const cxla_pass cxla_pass_fusion;        /* fusion.c: loop, input, multi-output */
/* fusion.c: the same, and row fusion: reduces of the rows of a loop's array computed
 * inside the loop (softmax, layer norm in one pass). Not in the default pipeline: the
 * cpu backend runs it instead of cxla_pass_fusion in its fast reduction order, whose
 * order these in-loop reduces follow. Named "fusion" too, for --dump-after. */
extern const cxla_pass cxla_pass_fusion_rows;
/* reduce_split.c: a large reduce to a scalar as rows, then the rows' partials. Not in the
 * default pipeline: it reorders sums; the cpu backend runs it before fusion in its fast
 * reduction order. */
extern const cxla_pass cxla_pass_reduce_split;

#endif /* CXLA_PASSES_PASSES_H_ */
