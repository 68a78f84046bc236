/* cxla run: parse a module, take or generate inputs, run it through the runtime API
 * (cxla/runtime.h), print or save the result and what the module outfed. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "literal/literal_internal.h"
#include "progress.h"
#include "tool.h"

/* ---- generated inputs --------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Fills an array literal the way XLA's fake arguments do: floats uniform in
 * [-0.1, 0.2), integers in [0, 8), pred random. */
static void fill_random(cxla_literal *lit, uint64_t *state) {
    cxla_type t = cxla_literal_type(lit);
    size_t esize = cxla_type_storage(t);
    char *data = cxla_literal_data(lit);
    int64_t n = (int64_t)(cxla_literal_byte_size(lit) / (esize ? esize : 1));
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = splitmix64(state);
        void *p = data + (size_t)i * esize;
        if (t == CXLA_PRED) {
            *(uint8_t *)p = r & 1;
        } else if (cxla_type_is_integer(t)) {
            cxla_store_u64(t, p, r % 8);
        } else {
            double u = (double)(r >> 11) / 9007199254740992.0;
            double re = -0.1 + 0.3 * u;
            double im = -0.1 + 0.3 * ((double)(splitmix64(state) >> 11) / 9007199254740992.0);
            cxla_store_c128(t, p, re, cxla_type_is_complex(t) ? im : 0);
        }
    }
}

/* Fills every array leaf of a (possibly tuple) literal. */
static void fill_leaves(cxla_literal *lit, uint64_t *state) {
    if (cxla_literal_type(lit) == CXLA_TUPLE) {
        for (int64_t i = 0; i < cxla_literal_tuple_count(lit); i++)
            fill_leaves(cxla_literal_tuple_element(lit, i), state);
    } else if (cxla_type_is_array(cxla_literal_type(lit))) {
        fill_random(lit, state);
    }
}

/* A literal of |shape| (row-major) with generated values in every array leaf. */
static cxla_status make_random(const cxla_shape *shape, uint64_t *state, cxla_literal **out) {
    cxla_shape s = *shape;
    if (cxla_type_is_array(s.type)) s.layout = NULL;
    CXLA_RETURN_IF_ERROR(cxla_literal_create(&s, out));
    fill_leaves(*out, state);
    return NULL;
}

/* ---- inputs from the command line ----------------------------------------------------- */

static bool ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Builds the argument for parameter shape |s| from inputs[*next ...]. */
static cxla_status build_arg(const cxla_shape *s, char **inputs, int64_t *next,
                             cxla_literal **out) {
    if (s->type == CXLA_TUPLE) {
        int64_t n = s->tuple_count;
        cxla_literal **elements = calloc((size_t)(n ? n : 1), sizeof(*elements));
        if (!elements) return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        cxla_status st = NULL;
        for (int64_t i = 0; i < n && !st; i++)
            st = build_arg(&s->elements[i], inputs, next, &elements[i]);
        if (!st) st = cxla_literal_create_tuple(elements, n, out);
        if (st)
            for (int64_t i = 0; i < n; i++) cxla_literal_free(elements[i]);
        free(elements);
        return st;
    }
    const char *in = inputs[(*next)++];
    int64_t index = *next - 1;
    cxla_literal *lit = NULL;
    cxla_status st;
    if (ends_with(in, ".npy"))
        st = cxla_npy_read_file(in, s->type, &lit);
    else
        st = cxla_literal_parse(in, (size_t)-1, NULL, &lit);
    if (st) return cxla_status_annotate(st, "input %" PRId64, index);
    /* A dynamic parameter takes any size up to its bounds (the interpreter checks). */
    if (cxla_shape_is_static(s) && !cxla_shape_compatible(cxla_literal_shape(lit), s)) {
        char *want = cxla_shape_to_string(s, CXLA_SHAPE_PRINT_NO_LAYOUT);
        char *got = cxla_shape_to_string(cxla_literal_shape(lit), CXLA_SHAPE_PRINT_NO_LAYOUT);
        st = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                        "input %" PRId64 " ('%s') has shape %s, but the parameter needs %s", index,
                        in, got ? got : "?", want ? want : "?");
        free(want);
        free(got);
        cxla_literal_free(lit);
        return st;
    }
    *out = lit;
    return NULL;
}

/* ---- printing results ------------------------------------------------------------- */

enum { SUMMARY_THRESHOLD = 1000, EDGE_ITEMS = 3 };

static void print_summary_dim(cxla_strbuf *b, const cxla_literal *lit, int64_t dim,
                              int64_t *index) {
    const cxla_shape *s = cxla_literal_shape(lit);
    int64_t n = cxla_literal_dynamic_size(lit, dim);
    cxla_strbuf_putc(b, '{');
    for (int64_t i = 0; i < n; i++) {
        if (n > 2 * EDGE_ITEMS && i == EDGE_ITEMS) {
            cxla_strbuf_puts(b, ", ...");
            i = n - EDGE_ITEMS - 1;
            continue;
        }
        if (i) cxla_strbuf_puts(b, ", ");
        index[dim] = i;
        if (dim + 1 < s->rank) {
            print_summary_dim(b, lit, dim + 1, index);
        } else {
            int64_t linear = cxla_shape_linear_index(s, index);
            cxla_literal_print_element(b, s->type,
                                       (const char *)cxla_literal_data_const(lit) +
                                           (size_t)linear * cxla_type_storage(s->type));
        }
    }
    cxla_strbuf_putc(b, '}');
}

static void print_result(const cxla_literal *lit) {
    const cxla_shape *s = cxla_literal_shape(lit);
    if (cxla_type_is_array(s->type) && s->rank > 0 &&
        cxla_literal_element_count(lit) > SUMMARY_THRESHOLD) {
        cxla_strbuf b;
        cxla_strbuf_init(&b);
        char *shape = cxla_shape_to_string(s, CXLA_SHAPE_PRINT_NO_LAYOUT);
        cxla_strbuf_puts(&b, shape ? shape : "?");
        free(shape);
        if (!cxla_shape_is_static(s)) { /* the dynamic sizes, as literal text has them */
            for (int64_t i = 0; i < s->rank; i++)
                cxla_strbuf_printf(&b, "%c%" PRId64, i ? ',' : '(',
                                   cxla_literal_dynamic_size(lit, i));
            cxla_strbuf_putc(&b, ')');
        }
        cxla_strbuf_putc(&b, ' ');
        int64_t index[CXLA_MAX_RANK] = {0};
        print_summary_dim(&b, lit, 0, index);
        printf("%s\n", b.data ? b.data : "");
        cxla_strbuf_free(&b);
        return;
    }
    if (s->type == CXLA_TUPLE) {
        for (int64_t i = 0; i < cxla_literal_tuple_count(lit); i++)
            print_result(cxla_literal_tuple_element_const(lit, i));
        return;
    }
    char *text = cxla_literal_to_string(lit, CXLA_LITERAL_PRINT_SHAPE);
    printf("%s\n", text ? text : "?");
    free(text);
}

/* Writes each leaf of |lit| to DIR/<prefix>N.npy, N counting from *next. */
static cxla_status write_leaves(const cxla_literal *lit, const char *dir, const char *prefix,
                                int64_t *next) {
    if (cxla_literal_type(lit) == CXLA_TUPLE) {
        for (int64_t i = 0; i < cxla_literal_tuple_count(lit); i++)
            CXLA_RETURN_IF_ERROR(
                write_leaves(cxla_literal_tuple_element_const(lit, i), dir, prefix, next));
        return NULL;
    }
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s%" PRId64 ".npy", dir, prefix, (*next)++);
    if (!cxla_type_is_array(cxla_literal_type(lit))) return NULL; /* tokens have no data */
    return cxla_npy_write_file(path, lit);
}

/* Reports (to stderr) each result leaf holding NaN or Inf; returns how many do. */
static int64_t report_non_finite(const cxla_literal *lit, int64_t *leaf) {
    if (cxla_literal_type(lit) == CXLA_TUPLE) {
        int64_t n = 0;
        for (int64_t i = 0; i < cxla_literal_tuple_count(lit); i++)
            n += report_non_finite(cxla_literal_tuple_element_const(lit, i), leaf);
        return n;
    }
    int64_t index = (*leaf)++;
    cxla_type t = cxla_literal_type(lit);
    if (!cxla_type_is_float(t) && !cxla_type_is_complex(t)) return 0;
    size_t esize = cxla_type_storage(t);
    int64_t n = (int64_t)(cxla_literal_byte_size(lit) / esize), bad = 0;
    const char *p = cxla_literal_data_const(lit);
    for (int64_t i = 0; i < n; i++) {
        double re, im;
        cxla_load_c128(t, p + (size_t)i * esize, &re, &im);
        bad += !isfinite(re) || !isfinite(im);
    }
    if (bad)
        fprintf(stderr,
                "cxla: result %" PRId64 " has %" PRId64 " non-finite elements of %" PRId64 "\n",
                index, bad, n);
    return bad ? 1 : 0;
}

/* ---- the command ---------------------------------------------------------------------- */

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void print_phase(const char *name, double *t, int n) {
    qsort(t, (size_t)n, sizeof(double), compare_doubles);
    fprintf(stderr, "%-8s median %10.3f ms   min %10.3f ms   max %10.3f ms\n", name, t[n / 2] * 1e3,
            t[0] * 1e3, t[n - 1] * 1e3);
}

/* Reads an input or infeed value: a .npy file (|type| resolves dtypes NumPy lacks) or a
 * literal in text form. */
static cxla_status read_value(const char *in, cxla_type type, cxla_literal **out) {
    if (ends_with(in, ".npy")) return cxla_npy_read_file(in, type, out);
    return cxla_literal_parse(in, (size_t)-1, NULL, out);
}

/* The element type of the module's first infeed with array data: the hint for .npy
 * files of types NumPy lacks. */
static cxla_type first_infeed_type(const cxla_module *m) {
    for (int64_t c = 0; c < m->comp_count; c++)
        for (int64_t i = 0; i < m->comps[c]->instr_count; i++) {
            const cxla_instr *in = m->comps[c]->instrs[i];
            if (in->opcode == CXLA_OP_INFEED && in->shape.type == CXLA_TUPLE &&
                in->shape.tuple_count == 2 && cxla_type_is_array(in->shape.elements[0].type))
                return in->shape.elements[0].type;
        }
    return CXLA_TYPE_INVALID;
}

/* Elided constants get generated values, with a warning. */
static cxla_status fill_elided_constants(cxla_module *m, uint64_t *state) {
    for (int64_t c = 0; c < m->comp_count; c++)
        for (int64_t i = 0; i < m->comps[c]->instr_count; i++) {
            cxla_instr *in = m->comps[c]->instrs[i];
            if (in->opcode != CXLA_OP_CONSTANT || !in->literal_elided || in->literal) continue;
            fprintf(stderr, "cxla: warning: constant %s was elided; using generated values\n",
                    in->name);
            cxla_literal *lit;
            CXLA_RETURN_IF_ERROR(make_random(&in->shape, state, &lit));
            CXLA_RETURN_IF_ERROR(cxla_module_adopt_literal(m, lit));
            in->literal = lit;
        }
    return NULL;
}

/* Writes the array leaves of each outfed value to DIR/outfeed0.npy, outfeed1.npy, ... */
static cxla_status write_outfeed(cxla_literal **values, int64_t count, const char *dir) {
    int64_t next = 0;
    for (int64_t v = 0; v < count; v++) {
        CXLA_RETURN_IF_ERROR(write_leaves(values[v], dir, "outfeed", &next));
    }
    return NULL;
}

int cmd_run(int argc, char **argv) {
    const char *module_path = NULL, *out_dir = NULL, *outfeed_dir = NULL, *backend = "interp";
    uint64_t seed = 42;
    long repeat = 0;
    bool check_finite = false;
    char **inputs = calloc((size_t)argc, sizeof(char *));
    char **infeeds = calloc((size_t)argc, sizeof(char *));
    int64_t ninputs = 0, ninfeeds = 0;
    int rc = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if ((strcmp(a, "-o") == 0 || strcmp(a, "--backend") == 0 || strcmp(a, "--seed") == 0 ||
             strcmp(a, "--repeat") == 0 || strcmp(a, "--infeed") == 0 ||
             strcmp(a, "--outfeed-dir") == 0) &&
            i + 1 >= argc) {
            fprintf(stderr, "cxla run: %s needs a value\n", a);
            goto usage_done;
        }
        if (strcmp(a, "--check-finite") == 0) {
            check_finite = true;
        } else if (strcmp(a, "-o") == 0) {
            out_dir = argv[++i];
        } else if (strcmp(a, "--outfeed-dir") == 0) {
            outfeed_dir = argv[++i];
        } else if (strcmp(a, "--infeed") == 0) {
            infeeds[ninfeeds++] = argv[++i];
        } else if (strcmp(a, "--backend") == 0) {
            backend = argv[++i];
        } else if (strcmp(a, "--seed") == 0) {
            seed = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(a, "--repeat") == 0) {
            repeat = strtol(argv[++i], NULL, 10);
            if (repeat < 1) {
                fprintf(stderr, "cxla run: --repeat needs a positive count\n");
                goto usage_done;
            }
        } else if (!module_path) {
            module_path = a;
        } else {
            inputs[ninputs++] = argv[i];
        }
    }
    if (!module_path) {
        fprintf(stderr, "usage: cxla run MODULE [INPUT...] [-o DIR] [--backend NAME] "
                        "[--seed N] [--repeat N] [--infeed FILE]... [--outfeed-dir DIR]\n");
        goto usage_done;
    }
    cxla_client_options copts;
    cxla_client_options_init(&copts);
    copts.backend = backend;
    copts.seed = seed;
    cxla_client *client = NULL;
    cxla_status s = cxla_client_create(&copts, &client);
    if (s) {
        fprintf(stderr, "cxla run: %s\n", cxla_status_message(s));
        cxla_status_free(s);
        goto usage_done;
    }

    double t0 = tool_now();
    char *text = NULL;
    size_t size = 0;
    cxla_module *m = NULL;
    cxla_executable *exe = NULL;
    s = cxla_read_file(module_path, &text, &size);
    if (!s) s = tool_parse_text(text, size, module_path, &m);
    double t_parse = tool_now() - t0;
    if (!s && m->warnings.len) fprintf(stderr, "%s", m->warnings.data);
    uint64_t state = seed;
    if (!s) s = fill_elided_constants(m, &state);
    cxla_type infeed_type = m ? first_infeed_type(m) : CXLA_TYPE_INVALID;
    t0 = tool_now();
    if (!s) {
        s = cxla_client_compile(client, m, &exe); /* takes the module */
        if (s) s = cxla_status_annotate(s, "%s", module_path);
    } else {
        cxla_module_destroy(m);
    }
    m = NULL;
    double t_compile = tool_now() - t0;
    /* Arguments. */
    int64_t nparams = exe ? cxla_executable_parameter_count(exe) : 0;
    cxla_literal **args = calloc((size_t)(nparams ? nparams : 1), sizeof(*args));
    if (!s) {
        int64_t leaves = cxla_executable_parameter_leaf_count(exe);
        if (ninputs == 0) {
            for (int64_t p = 0; p < nparams && !s; p++)
                s = make_random(cxla_executable_parameter_shape(exe, p), &state, &args[p]);
        } else if (ninputs != leaves) {
            s = cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                           "the module takes %" PRId64
                           " input arrays (parameter leaves), got %" PRId64,
                           leaves, ninputs);
        } else {
            int64_t next = 0;
            for (int64_t p = 0; p < nparams && !s; p++)
                s = build_arg(cxla_executable_parameter_shape(exe, p), inputs, &next, &args[p]);
        }
    }
    /* Infeed values, read once and queued again for each run. */
    cxla_literal **infeed_values =
        calloc((size_t)(ninfeeds ? ninfeeds : 1), sizeof(cxla_literal *));
    for (int64_t i = 0; i < ninfeeds && !s; i++) {
        s = read_value(infeeds[i], infeed_type, &infeed_values[i]);
        if (s) s = cxla_status_annotate(s, "--infeed %s", infeeds[i]);
    }
    cxla_literal *result = NULL;
    cxla_literal **outfed = NULL;
    int64_t noutfed = 0;
    int runs = repeat > 0 ? (int)repeat : 1;
    double *times = calloc((size_t)runs, sizeof(double));
    /* A progress line on a terminal while the runs go (nothing when not a terminal). */
    tool_progress progress = {0};
    if (!s && repeat > 0) tool_progress_start(&progress, "run", repeat);
    cxla_run_options ropts;
    cxla_run_options_init(&ropts);
    ropts.check_finite = check_finite;
    for (int r = 0; r < runs && !s; r++) {
        cxla_literal_free(result);
        result = NULL;
        for (int64_t i = 0; i < noutfed; i++) cxla_literal_free(outfed[i]);
        free(outfed);
        outfed = NULL;
        noutfed = 0;
        cxla_client_infeed_clear(client); /* what the last run left */
        for (int64_t i = 0; i < ninfeeds && !s; i++) {
            cxla_literal *copy = NULL;
            s = cxla_literal_clone(infeed_values[i], &copy);
            if (!s) s = cxla_client_infeed_push(client, copy);
        }
        t0 = tool_now();
        if (!s)
            s = cxla_executable_run_with_options(exe, &ropts, (const cxla_literal *const *)args,
                                                 nparams, &result);
        if (s) s = cxla_status_annotate(s, "%s", module_path);
        times[r] = tool_now() - t0;
        noutfed = cxla_client_outfeed_count(client);
        outfed = calloc((size_t)(noutfed ? noutfed : 1), sizeof(*outfed));
        for (int64_t i = 0; i < noutfed; i++)
            cxla_status_free(cxla_client_outfeed_pop(client, &outfed[i]));
        if (repeat > 0) tool_progress_update(&progress, r + 1, NULL);
    }
    if (repeat > 0) tool_progress_finish(&progress);
    if (!s && repeat > 0) {
        double parse_times[1] = {t_parse}, compile_times[1] = {t_compile};
        fprintf(stderr, "%ld runs of %s\n", repeat, module_path);
        print_phase("parse", parse_times, 1);
        print_phase("compile", compile_times, 1);
        print_phase("run", times, runs);
    }
    if (!s) print_result(result);
    if (!s && check_finite) {
        int64_t leaf = 0;
        report_non_finite(result, &leaf);
    }
    if (!s && out_dir) {
        mkdir(out_dir, 0777);
        int64_t next = 0;
        s = write_leaves(result, out_dir, "out", &next);
    }
    if (!s && outfeed_dir) {
        mkdir(outfeed_dir, 0777);
        s = write_outfeed(outfed, noutfed, outfeed_dir);
    } else if (!s && noutfed > 0) {
        fprintf(stderr,
                "cxla: the module outfed %" PRId64 " value(s); --outfeed-dir DIR saves them\n",
                noutfed);
    }
    if (!s && cxla_client_infeed_count(client) > 0)
        fprintf(stderr, "cxla: warning: %" PRId64 " infeed value(s) were not read\n",
                cxla_client_infeed_count(client));
    for (int64_t p = 0; p < nparams; p++) cxla_literal_free(args[p]);
    for (int64_t i = 0; i < ninfeeds; i++) cxla_literal_free(infeed_values[i]);
    for (int64_t i = 0; i < noutfed; i++) cxla_literal_free(outfed[i]);
    free(outfed);
    free(infeed_values);
    free(args);
    free(times);
    free(text);
    cxla_literal_free(result);
    cxla_executable_destroy(exe);
    cxla_client_destroy(client);
    free(inputs);
    free(infeeds);
    if (s) return tool_fail(s);
    return 0;
usage_done:
    free(inputs);
    free(infeeds);
    return rc;
}
