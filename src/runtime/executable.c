/* Executables: compiling a module for the client's backend, its signature, and runs on
 * literals or on caller-owned buffers. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "builder/builder_internal.h"
#include "cpu/cpu_internal.h"
#include "cxla/stablehlo.h"
#include "literal/literal_internal.h"
#include "runtime/runtime_internal.h"

static cxla_status oom(void) {
    return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
}

/* ---- compiling ---------------------------------------------------------------------- */

cxla_status cxla_client_compile(cxla_client *client, cxla_module *module,
                                cxla_executable **out_executable) {
    if (!client || !module) {
        cxla_module_destroy(module);
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "compile needs a client and a module");
    }
    cxla_status s = cxla_verify_module(module);
    /* input_output_alias is checked for every backend: the cpu backend's donated runs
     * write through it (the interpreter copies, but must accept the same modules). */
    cpu_io_alias *aliases = NULL;
    int64_t alias_count = 0;
    if (!s) s = cpu_io_aliases(module, &aliases, &alias_count);
    free(aliases);
    cxla_executable *e = s ? NULL : calloc(1, sizeof(*e));
    if (!s && !e) s = oom();
    if (s) {
        cxla_module_destroy(module);
        return s;
    }
    e->client = client;
    e->module = module;
    e->backend = client->backend;
    exec_device_needs_of(module, &e->needs);
    exec_compile_options co = {.thread_count = client->thread_count};
    s = e->backend->compile(module, &co, &e->compiled);
    if (s) {
        cxla_module_destroy(module);
        free(e);
        return s;
    }
    runtime_client_retain(client);
    *out_executable = e;
    return NULL;
}

cxla_status cxla_client_compile_hlo_text(cxla_client *client, const char *text, size_t len,
                                         const char *filename, cxla_executable **out_executable) {
    if (!text) return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "compile needs HLO text");
    if (len == (size_t)-1) len = strlen(text);
    cxla_module *m = NULL;
    CXLA_RETURN_IF_ERROR(cxla_hlo_parse(text, len, filename, &m));
    return cxla_client_compile(client, m, out_executable);
}

cxla_status cxla_client_compile_computation(cxla_client *client,
                                            const cxla_xla_computation *computation,
                                            cxla_executable **out_executable) {
    if (!computation)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "compile needs a computation");
    /* A deep copy: the executable's module is its own, and the computation may be freed
     * or compiled again. */
    cxla_module *m = NULL;
    CXLA_RETURN_IF_ERROR(cxla_module_clone(cxla_xla_computation_module(computation), &m));
    return cxla_client_compile(client, m, out_executable);
}

cxla_status cxla_client_compile_hlo_file(cxla_client *client, const char *path,
                                         cxla_executable **out_executable) {
    char *text = NULL;
    size_t size = 0;
    CXLA_RETURN_IF_ERROR(cxla_read_file(path, &text, &size));
    cxla_status s = cxla_client_compile_hlo_text(client, text, size, path, out_executable);
    free(text);
    return s;
}

cxla_status cxla_client_compile_stablehlo_text(cxla_client *client, const char *text, size_t len,
                                               const char *filename,
                                               cxla_executable **out_executable) {
    if (!text) return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "compile needs StableHLO text");
    if (len == (size_t)-1) len = strlen(text);
    cxla_module *m = NULL;
    CXLA_RETURN_IF_ERROR(cxla_stablehlo_parse(text, len, filename, &m, NULL));
    return cxla_client_compile(client, m, out_executable);
}

cxla_status cxla_client_compile_stablehlo_file(cxla_client *client, const char *path,
                                               cxla_executable **out_executable) {
    char *text = NULL;
    size_t size = 0;
    CXLA_RETURN_IF_ERROR(cxla_read_file(path, &text, &size));
    cxla_status s = cxla_client_compile_stablehlo_text(client, text, size, path, out_executable);
    free(text);
    return s;
}

void cxla_executable_destroy(cxla_executable *executable) {
    if (!executable) return;
    executable->backend->destroy(executable->compiled);
    cxla_module_destroy(executable->module);
    runtime_client_release(executable->client);
    free(executable);
}

/* ---- the signature -------------------------------------------------------------------- */

int64_t cxla_executable_parameter_count(const cxla_executable *executable) {
    return executable->module->entry ? executable->module->entry->param_count : 0;
}

const cxla_shape *cxla_executable_parameter_shape(const cxla_executable *executable, int64_t i) {
    const cxla_module *m = executable->module;
    if (!m->entry || i < 0 || i >= m->entry->param_count) return NULL;
    return m->entry_param_shapes ? &m->entry_param_shapes[i] : &m->entry->params[i]->shape;
}

const cxla_shape *cxla_executable_result_shape(const cxla_executable *executable) {
    const cxla_module *m = executable->module;
    if (m->entry_param_shapes || m->has_entry_layout) return &m->entry_result_shape;
    return m->entry && m->entry->root ? &m->entry->root->shape : NULL;
}

static int64_t leaf_count(const cxla_shape *s) {
    if (!s) return 0;
    if (s->type != CXLA_TUPLE) return 1;
    int64_t n = 0;
    for (int64_t i = 0; i < s->tuple_count; i++) n += leaf_count(&s->elements[i]);
    return n;
}

int64_t cxla_executable_parameter_leaf_count(const cxla_executable *executable) {
    int64_t n = 0;
    for (int64_t i = 0; i < cxla_executable_parameter_count(executable); i++)
        n += leaf_count(cxla_executable_parameter_shape(executable, i));
    return n;
}

int64_t cxla_executable_result_leaf_count(const cxla_executable *executable) {
    return leaf_count(cxla_executable_result_shape(executable));
}

/* ---- runs on literals ----------------------------------------------------------------- */

cxla_status cxla_cancel_create(cxla_cancel **out_cancel) {
    if (!out_cancel) return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "cxla_cancel_create: NULL");
    cxla_cancel *c = malloc(sizeof(*c));
    if (!c) return oom();
    exec_cancel_init(c, NULL);
    *out_cancel = c;
    return NULL;
}

void cxla_cancel_request(cxla_cancel *cancel, cxla_status_code code, const char *reason) {
    exec_cancel_request(cancel, code == CXLA_STATUS_OK ? CXLA_STATUS_CANCELLED : code, reason);
}

bool cxla_cancel_requested(const cxla_cancel *cancel) {
    return exec_cancelled(cancel);
}

void cxla_cancel_destroy(cxla_cancel *cancel) {
    free(cancel);
}

void cxla_run_options_init(cxla_run_options *options) {
    if (options) memset(options, 0, sizeof(*options));
}

/* What a run on buffers adds to a run on literals, by result leaf, as exec_run_options
 * says: where donated results went, and the caller memory offered for results. */
typedef struct buffer_run {
    int64_t *in_place_arg;
    void *const *result_data;
    const size_t *result_size;
    bool *result_written;
} buffer_run;

/* A run on literals; |br| (NULL: none) as buffer_run says. */
static cxla_status run_literals(cxla_executable *executable, const cxla_run_options *options,
                                const cxla_literal *const *args, int64_t arg_count,
                                const buffer_run *br, cxla_literal **out_result) {
    if (!executable || !out_result || (arg_count > 0 && !args) || arg_count < 0)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "run needs an executable, the arguments and a place for the result");
    for (int64_t i = 0; i < arg_count; i++)
        if (!args[i])
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "argument %" PRId64 " is NULL", i);
    cxla_run_options defaults;
    cxla_run_options_init(&defaults);
    if (!options) options = &defaults;
    /* A run on one device has the devices the module states (its collectives see those). */
    const cxla_module *m = executable->module;
    CXLA_RETURN_IF_ERROR(exec_device_needs_check(&executable->needs,
                                                 m->replica_count > 0 ? m->replica_count : 1,
                                                 m->num_partitions > 0 ? m->num_partitions : 1));
    cxla_client *c = executable->client;
    exec_run_options ro = {
        .seed = c->seed,
        .replica_id = options->replica_id,
        .partition_id = options->partition_id,
        .check_finite = options->check_finite,
        .host = &c->host,
        .cancel = options->cancel,
        .donated = br && br->in_place_arg ? options->donated : NULL,
        .in_place_arg = br ? br->in_place_arg : NULL,
        .result_data = br ? br->result_data : NULL,
        .result_size = br ? br->result_size : NULL,
        .result_written = br ? br->result_written : NULL,
    };
    return executable->backend->execute(executable->compiled, &ro, args, arg_count, out_result);
}

cxla_status cxla_executable_run_with_options(cxla_executable *executable,
                                             const cxla_run_options *options,
                                             const cxla_literal *const *args, int64_t arg_count,
                                             cxla_literal **out_result) {
    if (options && options->donated)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "donated arguments are for cxla_executable_run_buffers (a run on "
                          "literals borrows them)");
    return run_literals(executable, options, args, arg_count, NULL, out_result);
}

cxla_status cxla_executable_run(cxla_executable *executable, const cxla_literal *const *args,
                                int64_t arg_count, cxla_literal **out_result) {
    return cxla_executable_run_with_options(executable, NULL, args, arg_count, out_result);
}

/* ---- runs on buffers -------------------------------------------------------------------- */

/* A literal that borrows |data| (never freed by it: see free_view). */
static cxla_status make_view(const cxla_shape *shape, void *data, cxla_literal **out) {
    cxla_literal *v = calloc(1, sizeof(*v));
    if (!v) return oom();
    int64_t m2m[CXLA_MAX_RANK];
    cxla_layout layout = {.minor_to_major = m2m};
    cxla_shape with = *shape;
    if (!shape->layout && cxla_type_is_array(shape->type)) {
        for (int64_t i = 0; i < shape->rank; i++) m2m[i] = shape->rank - 1 - i;
        with.layout = &layout;
    }
    cxla_status s = cxla_shape_clone(&with, &v->shape);
    if (s) {
        free(v);
        return s;
    }
    if (cxla_type_is_array(shape->type)) {
        s = cxla_shape_byte_size(shape, &v->size);
        if (!s) s = cxla_shape_element_count(shape, &v->count);
        v->data = v->size ? data : NULL;
    }
    if (s) {
        cxla_shape_free(v->shape);
        free(v);
        return s;
    }
    *out = v;
    return NULL;
}

static void free_view(cxla_literal *v) {
    if (!v) return;
    for (int64_t i = 0; i < v->tuple_count; i++) free_view(v->elements[i]);
    free(v->elements);
    free(v->dyn_sizes);
    cxla_shape_free(v->shape);
    free(v);
}

static char *shape_text(const cxla_shape *s) {
    return cxla_shape_to_string(s, CXLA_SHAPE_PRINT_DEFAULT);
}

/* Checks buffer |b| against the leaf shape |want|; |what| names it ("argument 3"). The
 * shape it stands for is stored in |out_shape|. */
static cxla_status check_buffer(const cxla_buffer *b, const cxla_shape *want, const char *what,
                                int64_t index, const cxla_shape **out_shape) {
    const cxla_shape *shape = b->shape ? b->shape : want;
    *out_shape = shape;
    if (!cxla_shape_compatible(shape, want)) {
        char *g = shape_text(shape), *w = shape_text(want);
        cxla_status s = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                                   "%s buffer %" PRId64 " has shape %s, but the leaf is %s", what,
                                   index, g ? g : "?", w ? w : "?");
        free(g);
        free(w);
        return s;
    }
    if (!cxla_type_is_array(shape->type)) return NULL;
    CXLA_RETURN_IF_ERROR(cxla_shape_validate(shape));
    if (shape->layout && shape->layout->tile_count > 0)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "%s buffer %" PRId64 " has a tiled layout; host buffers must be untiled",
                          what, index);
    size_t need = 0;
    CXLA_RETURN_IF_ERROR(cxla_shape_byte_size(shape, &need));
    if (b->size < need || (need > 0 && !b->data))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "%s buffer %" PRId64 " holds %zu bytes at %p, but its shape needs %zu",
                          what, index, b->size, b->data, need);
    return NULL;
}

/* The sizes of a dynamic array in a buffer (XLA CPU's layout of a dynamic shape, PJRT's
 * "suffix" metadata): after the elements at the bounds, one s32 per dimension, when the
 * buffer has room for them. How many bytes they take for |shape| (0 when it is static),
 * and where they start (the bytes at the bounds). */
static size_t sizes_bytes(const cxla_shape *shape) {
    if (!cxla_type_is_array(shape->type) || !shape->dynamic) return 0;
    return (size_t)shape->rank * sizeof(int32_t);
}

/* Whether buffer |b| of array shape |shape| carries sizes; their offset in *out_at. */
static bool has_sizes(const cxla_buffer *b, const cxla_shape *shape, size_t *out_at) {
    size_t n = sizes_bytes(shape), at = 0;
    if (!n || cxla_shape_byte_size(shape, &at) || !b->data) return false;
    *out_at = at;
    return b->size >= at && b->size - at >= n;
}

/* Gives view |v| of argument buffer |b| (index |index|) the sizes the buffer carries, each
 * checked against its bound (INVALID_ARGUMENT naming the buffer and dimension). */
static cxla_status read_sizes(const cxla_buffer *b, int64_t index, cxla_literal *v) {
    size_t at = 0;
    if (!has_sizes(b, v->shape, &at)) return NULL; /* at its bounds */
    for (int64_t d = 0; d < v->shape->rank; d++) {
        int32_t size;
        memcpy(&size, (const char *)b->data + at + (size_t)d * sizeof(int32_t), sizeof(size));
        bool dynamic = v->shape->dynamic[d] != 0;
        if (size < 0 || size > v->shape->dims[d] || (!dynamic && size != v->shape->dims[d]))
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                              "argument buffer %" PRId64 " gives dimension %" PRId64
                              " the size %" PRId32 " (its s32 sizes follow the %zu bytes of its "
                              "elements), but the dimension is %s%" PRId64,
                              index, d, size, at, dynamic ? "at most " : "", v->shape->dims[d]);
        if (size != v->shape->dims[d])
            CXLA_RETURN_IF_ERROR(cxla_literal_set_dynamic_size(v, d, size));
    }
    return NULL;
}

/* Writes the sizes of result leaf |lit| after its elements in buffer |b| (of shape
 * |shape|), when the leaf is dynamic and the buffer has room for them. */
static void write_sizes(const cxla_buffer *b, const cxla_shape *shape, const cxla_literal *lit) {
    size_t at = 0;
    if (!has_sizes(b, shape, &at) || shape->rank != cxla_literal_shape(lit)->rank) return;
    for (int64_t d = 0; d < shape->rank; d++) {
        int32_t size = (int32_t)cxla_literal_dynamic_size(lit, d);
        memcpy((char *)b->data + at + (size_t)d * sizeof(int32_t), &size, sizeof(size));
    }
}

/* Builds the argument for parameter shape |want| from buffers args[*next ...]. */
static cxla_status build_view(const cxla_shape *want, const cxla_buffer *args, int64_t count,
                              int64_t *next, cxla_literal **out) {
    if (want->type == CXLA_TUPLE) {
        int64_t n = want->tuple_count;
        cxla_literal *t = calloc(1, sizeof(*t));
        cxla_literal **elements = calloc((size_t)(n ? n : 1), sizeof(*elements));
        cxla_status s = t && elements ? NULL : oom();
        const cxla_shape **shapes = calloc((size_t)(n ? n : 1), sizeof(*shapes));
        if (!s && !shapes) s = oom();
        for (int64_t i = 0; i < n && !s; i++) {
            s = build_view(&want->elements[i], args, count, next, &elements[i]);
            if (!s) shapes[i] = elements[i]->shape;
        }
        if (!s) s = cxla_shape_create_tuple(n, shapes, &t->shape);
        free(shapes);
        if (s) {
            for (int64_t i = 0; i < n; i++) free_view(elements[i]);
            free(elements);
            free(t);
            return s;
        }
        t->tuple_count = n;
        t->elements = elements;
        *out = t;
        return NULL;
    }
    int64_t i = (*next)++;
    if (i >= count)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "too few argument buffers (%" PRId64 ")",
                          count);
    const cxla_shape *shape;
    CXLA_RETURN_IF_ERROR(check_buffer(&args[i], want, "argument", i, &shape));
    CXLA_RETURN_IF_ERROR(make_view(shape, args[i].data, out));
    cxla_status s = read_sizes(&args[i], i, *out);
    if (s) {
        free_view(*out);
        *out = NULL;
    }
    return s;
}

/* Copies the leaves of |lit| into results[*next ...]; a leaf the backend left in a
 * donated argument's buffer (in_place_arg[i] >= 0) is read from there instead. Those go
 * first (|in_place| true), before any other result buffer is written, since a result
 * buffer may be the memory of another donated argument. */
static cxla_status copy_out(const cxla_literal *lit, const cxla_buffer *results, int64_t count,
                            const cxla_buffer *args, const int64_t *in_place_arg,
                            const bool *written, bool in_place, int64_t *next) {
    if (cxla_literal_type(lit) == CXLA_TUPLE) {
        for (int64_t i = 0; i < cxla_literal_tuple_count(lit); i++)
            CXLA_RETURN_IF_ERROR(copy_out(cxla_literal_tuple_element_const(lit, i), results, count,
                                          args, in_place_arg, written, in_place, next));
        return NULL;
    }
    int64_t i = (*next)++;
    if (i >= count) return NULL;            /* counted before the run */
    if (written && written[i]) return NULL; /* the backend wrote it there */
    if (in_place != (in_place_arg && in_place_arg[i] >= 0)) return NULL; /* the other pass */
    if (in_place) {
        /* Row-major in the argument's memory (cpu_plan_can_donate); usually that memory
         * is results[i] itself, and nothing moves. */
        cxla_literal *view = NULL;
        const cxla_buffer *a = &args[in_place_arg[i]];
        cxla_shape rm = *cxla_literal_shape(lit);
        rm.layout = NULL;
        CXLA_RETURN_IF_ERROR(make_view(&rm, a->data, &view));
        const cxla_shape *shape = NULL;
        int64_t at = i;
        cxla_status s = NULL;
        /* A dynamic leaf: the sizes are the result's (the argument's own were read). */
        for (int64_t d = 0; d < rm.rank && rm.dynamic && !s; d++)
            if (cxla_literal_dynamic_size(lit, d) != rm.dims[d])
                s = cxla_literal_set_dynamic_size(view, d, cxla_literal_dynamic_size(lit, d));
        if (!s) s = check_buffer(&results[i], view->shape, "result", i, &shape);
        if (!s && results[i].data == a->data && cxla_shape_equal(shape, view->shape))
            write_sizes(&results[i], shape, view);
        else if (!s)
            s = copy_out(view, results, count, NULL, NULL, NULL, false, &at);
        free_view(view);
        return s;
    }
    const cxla_shape *shape, *have = cxla_literal_shape(lit);
    CXLA_RETURN_IF_ERROR(check_buffer(&results[i], have, "result", i, &shape));
    if (!cxla_type_is_array(have->type)) return NULL;
    write_sizes(&results[i], shape, lit);
    if (!cxla_literal_byte_size(lit)) return NULL;
    if (cxla_shape_equal(shape, have)) {
        memcpy(results[i].data, cxla_literal_data_const(lit), cxla_literal_byte_size(lit));
        return NULL;
    }
    cxla_literal *relaid = NULL;
    CXLA_RETURN_IF_ERROR(cxla_literal_relayout(lit, shape->layout, &relaid));
    memcpy(results[i].data, cxla_literal_data_const(relaid), cxla_literal_byte_size(relaid));
    cxla_literal_free(relaid);
    return NULL;
}

static bool overlap(const cxla_buffer *a, const cxla_buffer *b) {
    if (!a->data || !b->data || !a->size || !b->size) return false;
    const char *x = a->data, *y = b->data;
    return x < y + b->size && y < x + a->size;
}

/* Whether result buffer |i| (of shape |shape|, checked against the leaf |want|) may be
 * offered to the backend to write the leaf straight into (exec_run_options.result_data):
 * a static array in the leaf's own layout, aligned to its element, sharing no memory with
 * an argument buffer (the run may still read that one, or, donated, write it) or with
 * another result buffer (a result may be an operand of another). The others are
 * computed in the backend's memory and copied after the run. */
static bool can_offer(const cxla_shape *shape, const cxla_shape *want, const cxla_buffer *results,
                      int64_t count, int64_t i, const cxla_buffer *args, int64_t arg_count) {
    const cxla_buffer *b = &results[i];
    if (!cxla_type_is_array(want->type) || !cxla_shape_is_static(want) || !b->data || !b->size ||
        !cxla_shape_equal(shape, want))
        return false;
    size_t align = cxla_type_storage(want->type);
    if (align > 8) align = 8;
    if (align > 1 && (uintptr_t)b->data % align != 0) return false;
    for (int64_t j = 0; j < arg_count; j++)
        if (overlap(b, &args[j])) return false;
    for (int64_t j = 0; j < count; j++)
        if (j != i && overlap(b, &results[j])) return false;
    return true;
}

/* Checks results[*next ...] against the leaves of the result shape |want| before the run,
 * so that a bad buffer fails before any work, and fills |offer| (by leaf; NULL: none) with
 * the buffers the backend may write directly (can_offer). */
static cxla_status check_results(const cxla_shape *want, const cxla_buffer *results, int64_t count,
                                 const cxla_buffer *args, int64_t arg_count, void **offer,
                                 size_t *offer_size, int64_t *next) {
    if (want->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < want->tuple_count; i++)
            CXLA_RETURN_IF_ERROR(check_results(&want->elements[i], results, count, args, arg_count,
                                               offer, offer_size, next));
        return NULL;
    }
    int64_t i = (*next)++;
    const cxla_shape *shape;
    if (i >= count) return NULL;
    CXLA_RETURN_IF_ERROR(check_buffer(&results[i], want, "result", i, &shape));
    if (offer && can_offer(shape, want, results, count, i, args, arg_count)) {
        offer[i] = results[i].data;
        offer_size[i] = results[i].size;
    }
    return NULL;
}

/* A donated argument buffer is written by the run: no other argument buffer may share
 * any of its memory (it would be read after it changed). */
static cxla_status check_donated(const bool *donated, const cxla_buffer *args, int64_t count) {
    for (int64_t j = 0; j < count; j++) {
        if (!donated[j] || !args[j].data || !args[j].size) continue;
        const char *a = args[j].data;
        for (int64_t i = 0; i < count; i++) {
            if (i == j || !args[i].data || !args[i].size) continue;
            const char *b = args[i].data;
            if (a < b + args[i].size && b < a + args[j].size)
                return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                                  "argument buffer %" PRId64
                                  " is donated, but argument buffer %" PRId64 " shares its memory",
                                  j, i);
        }
    }
    return NULL;
}

cxla_status cxla_executable_run_buffers(cxla_executable *executable,
                                        const cxla_run_options *options, const cxla_buffer *args,
                                        int64_t arg_count, const cxla_buffer *results,
                                        int64_t result_count) {
    if (!executable || (arg_count > 0 && !args) || (result_count > 0 && !results))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "run_buffers needs an executable and the buffers");
    int64_t want_args = cxla_executable_parameter_leaf_count(executable);
    int64_t want_results = cxla_executable_result_leaf_count(executable);
    if (arg_count != want_args || result_count != want_results)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "the module takes %" PRId64 " argument buffers and gives %" PRId64
                          " result buffers (leaves, depth-first); got %" PRId64 " and %" PRId64,
                          want_args, want_results, arg_count, result_count);
    const cxla_shape *rs = cxla_executable_result_shape(executable);
    int64_t n = cxla_executable_parameter_count(executable);
    cxla_literal **views = calloc((size_t)(n ? n : 1), sizeof(*views));
    if (!views) return oom();
    cxla_status s = NULL;
    int64_t next = 0;
    for (int64_t p = 0; p < n && !s; p++)
        s = build_view(cxla_executable_parameter_shape(executable, p), args, arg_count, &next,
                       &views[p]);
    /* The result buffers the backend may write into directly, and which it did. */
    size_t rn = (size_t)(result_count ? result_count : 1);
    void **offer = calloc(rn, sizeof(*offer));
    size_t *offer_size = calloc(rn, sizeof(*offer_size));
    bool *written = calloc(rn, sizeof(*written));
    if (!s && (!offer || !offer_size || !written)) s = oom();
    next = 0;
    if (!s && rs)
        s = check_results(rs, results, result_count, args, arg_count, offer, offer_size, &next);
    if (!s && options && options->donated) s = check_donated(options->donated, args, arg_count);
    int64_t *in_place = NULL;
    if (!s && options && options->donated) {
        in_place = malloc(rn * sizeof(int64_t));
        if (!in_place) s = oom();
        for (int64_t k = 0; in_place && k < result_count; k++) in_place[k] = -1;
    }
    buffer_run br = {.in_place_arg = in_place,
                     .result_data = offer,
                     .result_size = offer_size,
                     .result_written = written};
    cxla_literal *result = NULL;
    if (!s)
        s = run_literals(executable, options, (const cxla_literal *const *)views, n, &br, &result);
    for (int pass = 0; pass < 2 && !s; pass++) {
        next = 0;
        s = copy_out(result, results, result_count, args, in_place, written, pass == 0, &next);
    }
    free(in_place);
    free(offer);
    free(offer_size);
    free(written);
    cxla_literal_free(result);
    for (int64_t p = 0; p < n; p++) free_view(views[p]);
    free(views);
    return s;
}
