/* What the files that build a plan share (private to cpu_steps.c, which builds the
 * sequences and their plain steps, and cpu_steps_control.c, which builds the steps that
 * run other sequences or hold their operands: call, conditional, while, async-start,
 * copy-start): the builder's state, a sequence's frame and the helpers both use. */
#ifndef CXLA_CPU_CPU_STEPS_BUILD_H_
#define CXLA_CPU_CPU_STEPS_BUILD_H_

#include "cpu/cpu_steps.h"

/* The state of one cpu_plan_build: the plan being built, the kernels and library calls by
 * instruction id, the events and loops that liveness reads, the global position. */
typedef struct bld {
    cpu_plan *p;
    const cxla_module *m;
    cpu_kernel_fn const *kernels;
    const cpu_kernel_info *infos;
    const cpu_call *calls;
    int64_t id_count;
    int64_t vcap;
    cpu_event *ev;
    int64_t en, ecap;
    cpu_range *loops;
    int64_t ln, lcap;
    int64_t pos;
    int64_t next_seq;
    int depth;
} bld;

/* What a sequence knows of its instructions while it is built. */
typedef struct frame {
    const cxla_computation *comp;
    int64_t id; /* the sequence's number (value owners) */
    cxla_instr **order;
    int64_t n;
    int64_t *pos_of;  /* by instruction id: position in order, -1 */
    int64_t **leaves; /* by position: value ids */
    int64_t *nleaves; /* by position */
    int64_t **last;   /* by position and leaf: the last position that reads it */
} frame;

/* How each instruction runs, for cpu_plan_what: the first word set stays. */
enum {
    W_NONE,
    W_STEP,
    W_HANDLER,
    W_SVC,
    W_IN_PLACE,
    W_ALIAS,
    W_KERNEL_IN_PLACE,
    W_CONCAT_IN_PLACE,
    W_SIZES,
    W_MOVE,
    W_DYN_REDUCE,
    W_DYN_STEP,
    W_ERROR
};

/* cpu_steps.c. Values: a new one (-1: out of memory), an event of reading or writing one
 * at the current position (false: out of memory), leaves of shapes, whether an
 * instruction and its operands are static, a literal the plan keeps (and frees, also on
 * failure). */
int64_t cpu_steps_new_value(bld *b, const cxla_shape *shape, vkind kind, int64_t owner);
bool cpu_steps_note(bld *b, int64_t v, bool def);
int64_t cpu_steps_leaf_count(const cxla_shape *s);
void cpu_steps_leaf_shapes(const cxla_shape *s, const cxla_shape **out, int64_t *n);
bool cpu_steps_static_instr(const cxla_instr *in);
cxla_status cpu_steps_keep_constant(bld *b, cxla_literal *lit);
/* Steps: one more in |q| (NULL: out of memory), a copy step of |n| pairs. */
step *cpu_steps_add_step(bld *b, seq *q, step_kind kind, const cxla_instr *in,
                         const cxla_computation *comp, int64_t in_count, int64_t out_count);
cxla_status cpu_steps_add_copies(bld *b, seq *q, const cxla_instr *in, const cxla_computation *comp,
                                 const int64_t *src, const int64_t *dst, int64_t n);
/* Frames: freeing one; whether value |v| is dead after position |i| and |f|'s to
 * overwrite; the word of an instruction; fresh values for instruction |i|'s leaves; its
 * operands' leaves in order (malloc'd); how many copies of the operands' leaves lead its
 * result (async-start, copy-start). */
void cpu_steps_frame_free(frame *f);
bool cpu_steps_dies_at(const bld *b, const frame *f, int64_t v, int64_t i);
void cpu_steps_set_what(bld *b, const cxla_instr *in, uint8_t what);
cxla_status cpu_steps_fresh_leaves(bld *b, frame *f, int64_t i);
cxla_status cpu_steps_operand_leaves(frame *f, const cxla_instr *in, int64_t **out, int64_t *out_n);
int64_t cpu_steps_held_copies(const cxla_instr *in);
/* Builds the sequence of |comp| into |q| with its parameters' leaves given; returns the
 * root's leaves (*out_root, malloc'd) and, when |out_frame| is not NULL, the frame (whose
 * last reads the caller needs; cpu_steps_frame_free it). */
cxla_status cpu_steps_build_seq(bld *b, const cxla_computation *comp, int64_t *const *param_leaves,
                                const bool *param_owned, seq *q, int64_t seq_id, int64_t **out_root,
                                int64_t *out_root_count, frame *out_frame);

/* cpu_steps_control.c: the steps of instruction |i| of |f| that run other sequences
 * (while, conditional, call) or hold their operands (copy-start, async-start: *out_done
 * false, with nothing built, where their shapes do not line up and the handler reports
 * the interpreter's error). */
cxla_status cpu_steps_build_while(bld *b, frame *f, seq *q, int64_t i);
cxla_status cpu_steps_build_conditional(bld *b, frame *f, seq *q, int64_t i);
cxla_status cpu_steps_build_call(bld *b, frame *f, seq *q, int64_t i);
cxla_status cpu_steps_build_held(bld *b, frame *f, seq *q, int64_t i, bool *out_done);

#endif /* CXLA_CPU_CPU_STEPS_BUILD_H_ */
