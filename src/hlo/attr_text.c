/* Attribute values in HLO text: one parser and one printer per kind of attrs.def
 * (hlo-text-format.md section 9), and the syntax checks XLA's parser makes on the values
 * cxla keeps as text (sharding, aliasing, result_accuracy, origin, mesh replica groups).
 *
 * Printing follows XLA: int lists "{1,2}", lists of lists "{{0,1},{2,3}}", computation
 * lists "{%a, %b}" (calls= without braces), windows "{size=3x3 stride=2x2 pad=0_1x0_1}"
 * with only the non-default fields, padding "0_1x2_3" (interior on every dimension when
 * any is non-zero), slices "{[0:4], [0:2:2]}" (strides on every dimension when any is not
 * 1), floats with six significant digits, strings C-escaped. */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/lexer.h"
#include "literal/literal_internal.h"
#include "shape/shape_internal.h"

/* Replica groups expanded from the iota form may not exceed this many ids (a guard against
 * absurd texts; real programs have at most tens of thousands of devices). */
enum { MAX_IOTA_DEVICES = 1 << 18 };

/* ---- growable vectors (malloc'd while parsing, copied into the arena at the end) ---- */

typedef struct vec {
    int64_t *v;
    size_t n, cap;
} vec;

static bool vec_push(vec *a, int64_t x) {
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 8;
        int64_t *p = realloc(a->v, cap * sizeof(*p));
        if (!p) return false;
        a->v = p;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    return true;
}

static int64_t *vec_to_arena(cxla_arena *arena, const vec *a) {
    int64_t *p = cxla_arena_alloc_array(arena, a->n ? a->n : 1, sizeof(int64_t));
    if (p && a->n) memcpy(p, a->v, a->n * sizeof(int64_t));
    return p;
}

static cxla_arena *arena_of(cxla_hlo_lexer *lx) {
    return lx->module->arena;
}

/* True when the character right at the cursor (no skipping) is |c|. */
static bool here(const cxla_hlo_lexer *lx, char c) {
    return lx->pos < lx->len && lx->text[lx->pos] == c;
}

/* ---- int lists ------------------------------------------------------------------- */

/* '{' [int (',' int)*] '}' into a vector. */
static bool parse_int_vec(cxla_hlo_lexer *lx, vec *out, const char *what) {
    if (!cxla_hlo_expect(lx, '{', what)) return false;
    if (cxla_hlo_accept(lx, '}')) return true;
    do {
        int64_t x;
        if (!cxla_hlo_int(lx, &x, what)) return false;
        if (!vec_push(out, x)) return cxla_hlo_oom(lx);
    } while (cxla_hlo_accept(lx, ','));
    return cxla_hlo_expect(lx, '}', "to close the list");
}

static bool parse_ints(cxla_hlo_lexer *lx, cxla_attr *a) {
    vec v = {0};
    bool ok = parse_int_vec(lx, &v, a->name);
    if (ok) {
        a->v.ints.count = (int64_t)v.n;
        a->v.ints.values = vec_to_arena(arena_of(lx), &v);
        if (!a->v.ints.values) ok = cxla_hlo_oom(lx);
    }
    free(v.v);
    return ok;
}

static bool parse_int_lists(cxla_hlo_lexer *lx, cxla_attr *a) {
    if (!cxla_hlo_expect(lx, '{', a->name)) return false;
    vec all = {0}, lengths = {0};
    bool ok = true;
    if (!cxla_hlo_accept(lx, '}')) {
        do {
            size_t before = all.n;
            ok = parse_int_vec(lx, &all, a->name) &&
                 (vec_push(&lengths, (int64_t)(all.n - before)) || cxla_hlo_oom(lx));
        } while (ok && cxla_hlo_accept(lx, ','));
        ok = ok && cxla_hlo_expect(lx, '}', "to close the list of lists");
    }
    if (ok) {
        cxla_arena *ar = arena_of(lx);
        int64_t count = (int64_t)lengths.n;
        a->v.int_lists.count = count;
        a->v.int_lists.lengths = vec_to_arena(ar, &lengths);
        a->v.int_lists.lists =
            cxla_arena_alloc_array(ar, lengths.n ? lengths.n : 1, sizeof(int64_t *));
        int64_t *flat = vec_to_arena(ar, &all);
        if (!a->v.int_lists.lengths || !a->v.int_lists.lists || !flat) {
            ok = cxla_hlo_oom(lx);
        } else {
            for (int64_t i = 0, off = 0; i < count; off += lengths.v[i], i++)
                a->v.int_lists.lists[i] = flat + off;
        }
    }
    free(all.v);
    free(lengths.v);
    return ok;
}

static void print_int_list(cxla_strbuf *b, const int64_t *v, int64_t n) {
    cxla_strbuf_putc(b, '{');
    for (int64_t i = 0; i < n; i++) cxla_strbuf_printf(b, i ? ",%" PRId64 : "%" PRId64, v[i]);
    cxla_strbuf_putc(b, '}');
}

/* ---- enum words ------------------------------------------------------------------- */

static const char *const direction_words[] = {"EQ", "NE", "GE", "GT", "LE", "LT", NULL};
static const char *const comparison_type_words[] = {"FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED",
                                                    NULL};
static const char *const fft_type_words[] = {"FFT", "IFFT", "RFFT", "IRFFT", NULL};
static const char *const distribution_words[] = {"rng_uniform", "rng_normal", NULL};
static const char *const algorithm_words[] = {"rng_default",
                                              "rng_three_fry",
                                              "rng_philox",
                                              "unset",
                                              "dot_any_f8_any_f8_f32",
                                              "dot_any_f8_any_f8_f32_fast_accum",
                                              "dot_any_f8_any_f8_any",
                                              "dot_f16_f16_f16",
                                              "dot_f16_f16_f32",
                                              "dot_bf16_bf16_bf16",
                                              "dot_bf16_bf16_f32",
                                              "dot_bf16_bf16_f32_x3",
                                              "dot_bf16_bf16_f32_x6",
                                              "dot_bf16_bf16_f32_x9",
                                              "dot_tf32_tf32_f32",
                                              "dot_tf32_tf32_f32_x3",
                                              "dot_f32_f32_f32",
                                              "dot_f64_f64_f64",
                                              NULL};
static const char *const transpose_words[] = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT", NULL};
/* The last three are 2017-era fusion kinds old dumps still carry. */
static const char *const fusion_kind_words[] = {"kLoop",
                                                "kInput",
                                                "kOutput",
                                                "kCustom",
                                                "kTransposeDot",
                                                "kConvBackwardFilter",
                                                "kConvBackwardInput",
                                                NULL};
static const char *const schedule_words[] = {"SCHEDULE_NONE", "SCHEDULE_LATEST",
                                             "SCHEDULE_EARLIEST", NULL};
static const char *const api_version_words[] = {
    "API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING", "API_VERSION_STATUS_RETURNING_UNIFIED",
    "API_VERSION_TYPED_FFI", NULL};
static const char *const padding_type_words[] = {"PADDING_VALID", "PADDING_SAME", NULL};

static const char *const *words_for(cxla_attr_id id) {
    switch (id) {
    case CXLA_ATTR_DIRECTION: return direction_words;
    case CXLA_ATTR_COMPARISON_TYPE: return comparison_type_words;
    case CXLA_ATTR_FFT_TYPE: return fft_type_words;
    case CXLA_ATTR_DISTRIBUTION: return distribution_words;
    case CXLA_ATTR_ALGORITHM: return algorithm_words;
    case CXLA_ATTR_TRANSPOSE_A: return transpose_words;
    case CXLA_ATTR_KIND: return fusion_kind_words;
    case CXLA_ATTR_SCHEDULE: return schedule_words;
    case CXLA_ATTR_API_VERSION: return api_version_words;
    case CXLA_ATTR_PADDING_TYPE: return padding_type_words;
    default: return NULL;
    }
}

static bool word_in(const char *const *words, const char *w, size_t n) {
    for (; *words; words++)
        if (strlen(*words) == n && memcmp(*words, w, n) == 0) return true;
    return false;
}

static bool eq_nocase(const char *s, size_t n, const char *word) {
    size_t i = 0;
    while (i < n && word[i] && tolower((unsigned char)s[i]) == word[i]) i++;
    return i == n && !word[i];
}

static bool parse_word(cxla_hlo_lexer *lx, cxla_attr *a) {
    size_t start = cxla_hlo_skip(lx);
    const char *w;
    size_t n = cxla_hlo_word(lx, &w);
    if (!n) return cxla_hlo_error_found(lx, start, "expected a word for %s", a->name);
    const char *const *words = words_for(a->id);
    if (words && !word_in(words, w, n)) {
        if (a->id == CXLA_ATTR_API_VERSION && n == 23 &&
            memcmp(w, "API_VERSION_UNSPECIFIED", n) == 0)
            return cxla_hlo_error(lx, start, "Invalid API version: API_VERSION_UNSPECIFIED");
        cxla_strbuf b;
        cxla_strbuf_init(&b);
        for (const char *const *p = words; *p; p++)
            cxla_strbuf_printf(&b, "%s%s", p == words ? "" : ", ", *p);
        cxla_hlo_error(lx, start, "%s '%.*s' for %s: expected one of %s",
                       a->id == CXLA_ATTR_API_VERSION ? "Unknown API version" : "unknown value",
                       (int)(n > 64 ? 64 : n), w, a->name, b.data ? b.data : "");
        cxla_strbuf_free(&b);
        return false;
    }
    a->v.s = cxla_arena_strndup(arena_of(lx), w, n);
    return a->v.s ? true : cxla_hlo_oom(lx);
}

/* ---- window, padding, slice ------------------------------------------------------- */

/* DxD: ints joined by 'x' with nothing between them. */
static bool parse_dxd(cxla_hlo_lexer *lx, vec *out, const char *what) {
    do {
        int64_t x;
        if (!cxla_hlo_int(lx, &x, what)) return false;
        if (!vec_push(out, x)) return cxla_hlo_oom(lx);
    } while (here(lx, 'x') && (lx->pos++, true));
    return true;
}

/* low_high[_interior] joined by 'x'; |max_parts| 2 for windows, 3 for pad. */
static bool parse_pad_list(cxla_hlo_lexer *lx, vec *out, int max_parts, const char *what) {
    do {
        size_t start = cxla_hlo_skip(lx);
        int64_t parts[3] = {0, 0, 0};
        int n = 0;
        do {
            if (n == 3) break;
            if (!cxla_hlo_int(lx, &parts[n], what)) return false;
            n++;
        } while (here(lx, '_') && (lx->pos++, true));
        if (n < 2 || n > max_parts || here(lx, '_'))
            return cxla_hlo_error(lx, start,
                                  max_parts == 2
                                      ? "expects padding_low and padding_high separated by '_' "
                                        "in %s"
                                      : "expects padding_low, padding_high and optionally "
                                        "padding_interior separated by '_' in %s",
                                  what);
        for (int i = 0; i < 3; i++)
            if (!vec_push(out, parts[i])) return cxla_hlo_oom(lx);
    } while (here(lx, 'x') && (lx->pos++, true));
    return true;
}

static bool parse_window(cxla_hlo_lexer *lx, cxla_attr *a) {
    static const char *const fields[] = {"size",       "stride",     "pad",
                                         "lhs_dilate", "rhs_dilate", "rhs_reversal"};
    vec v[6] = {{0}};
    bool seen[6] = {false};
    size_t field_pos[6] = {0};
    bool ok = cxla_hlo_expect(lx, '{', "to open the window");
    while (ok && !cxla_hlo_accept(lx, '}')) {
        size_t start = cxla_hlo_skip(lx);
        const char *w;
        size_t n = cxla_hlo_word(lx, &w);
        int f = -1;
        for (int i = 0; i < 6 && n; i++)
            if (strlen(fields[i]) == n && memcmp(fields[i], w, n) == 0) f = i;
        if (f < 0) {
            ok = cxla_hlo_error_found(lx, start,
                                      "expected a window field (size, stride, pad, lhs_dilate, "
                                      "rhs_dilate, rhs_reversal) or '}'");
            break;
        }
        if (seen[f]) {
            ok = cxla_hlo_error(lx, start, "window field '%s' given twice", fields[f]);
            break;
        }
        seen[f] = true;
        field_pos[f] = start;
        if (!here(lx, '=')) {
            ok = cxla_hlo_error_found(lx, lx->pos, "expected '=' after '%s'", fields[f]);
            break;
        }
        lx->pos++;
        ok = f == 2 ? parse_pad_list(lx, &v[f], 2, "window pad") : parse_dxd(lx, &v[f], fields[f]);
    }
    int64_t rank = (int64_t)v[0].n;
    for (int f = 1; ok && f < 6; f++) {
        if (!seen[f]) continue;
        int64_t count = (int64_t)(f == 2 ? v[f].n / 3 : v[f].n);
        if (!seen[0])
            ok = cxla_hlo_error(lx, field_pos[f], "the window has %s but no size", fields[f]);
        else if (count != rank)
            ok = cxla_hlo_error(lx, field_pos[f],
                                "window %s has %" PRId64 " entries but size has %" PRId64,
                                fields[f], count, rank);
    }
    for (int64_t i = 0; ok && seen[5] && i < rank; i++)
        if (v[5].v[i] != 0 && v[5].v[i] != 1)
            ok = cxla_hlo_error(lx, field_pos[5], "window rhs_reversal entries must be 0 or 1");
    if (ok) {
        cxla_window_dim *d =
            cxla_arena_alloc_array(arena_of(lx), (size_t)(rank ? rank : 1), sizeof(*d));
        if (!d) ok = cxla_hlo_oom(lx);
        for (int64_t i = 0; ok && i < rank; i++) {
            d[i].size = v[0].v[i];
            d[i].stride = seen[1] ? v[1].v[i] : 1;
            d[i].pad_low = seen[2] ? v[2].v[3 * i] : 0;
            d[i].pad_high = seen[2] ? v[2].v[3 * i + 1] : 0;
            d[i].lhs_dilation = seen[3] ? v[3].v[i] : 1;
            d[i].rhs_dilation = seen[4] ? v[4].v[i] : 1;
            d[i].reversal = seen[5] && v[5].v[i] != 0;
        }
        a->v.window.rank = rank;
        a->v.window.dims = d;
    }
    for (int f = 0; f < 6; f++) free(v[f].v);
    return ok;
}

static void print_window(cxla_strbuf *b, const cxla_attr *a) {
    int64_t r = a->v.window.rank;
    const cxla_window_dim *d = a->v.window.dims;
    bool stride = false, pad = false, lhs = false, rhs = false, rev = false;
    for (int64_t i = 0; i < r; i++) {
        stride |= d[i].stride != 1;
        pad |= d[i].pad_low != 0 || d[i].pad_high != 0;
        lhs |= d[i].lhs_dilation != 1;
        rhs |= d[i].rhs_dilation != 1;
        rev |= d[i].reversal;
    }
    cxla_strbuf_putc(b, '{');
    if (r > 0) {
        cxla_strbuf_puts(b, "size=");
        for (int64_t i = 0; i < r; i++)
            cxla_strbuf_printf(b, i ? "x%" PRId64 : "%" PRId64, d[i].size);
    }
#define FIELD(flag, label, expr)                                                                   \
    if (flag) {                                                                                    \
        cxla_strbuf_puts(b, " " label "=");                                                        \
        for (int64_t i = 0; i < r; i++) cxla_strbuf_printf(b, i ? "x%" PRId64 : "%" PRId64, expr); \
    }
    FIELD(stride, "stride", d[i].stride)
    if (pad) {
        cxla_strbuf_puts(b, " pad=");
        for (int64_t i = 0; i < r; i++)
            cxla_strbuf_printf(b, "%s%" PRId64 "_%" PRId64, i ? "x" : "", d[i].pad_low,
                               d[i].pad_high);
    }
    FIELD(lhs, "lhs_dilate", d[i].lhs_dilation)
    FIELD(rhs, "rhs_dilate", d[i].rhs_dilation)
    FIELD(rev, "rhs_reversal", (int64_t)d[i].reversal)
#undef FIELD
    cxla_strbuf_putc(b, '}');
}

static bool parse_padding(cxla_hlo_lexer *lx, cxla_attr *a) {
    vec v = {0};
    bool ok = parse_pad_list(lx, &v, 3, "padding");
    if (ok) {
        int64_t rank = (int64_t)(v.n / 3);
        cxla_pad_dim *d =
            cxla_arena_alloc_array(arena_of(lx), (size_t)(rank ? rank : 1), sizeof(*d));
        if (!d) ok = cxla_hlo_oom(lx);
        for (int64_t i = 0; ok && i < rank; i++)
            d[i] = (cxla_pad_dim){v.v[3 * i], v.v[3 * i + 1], v.v[3 * i + 2]};
        a->v.padding.rank = rank;
        a->v.padding.dims = d;
    }
    free(v.v);
    return ok;
}

static void print_padding(cxla_strbuf *b, const cxla_attr *a) {
    bool interior = false;
    for (int64_t i = 0; i < a->v.padding.rank; i++) interior |= a->v.padding.dims[i].interior != 0;
    for (int64_t i = 0; i < a->v.padding.rank; i++) {
        const cxla_pad_dim *d = &a->v.padding.dims[i];
        cxla_strbuf_printf(b, "%s%" PRId64 "_%" PRId64, i ? "x" : "", d->low, d->high);
        if (interior) cxla_strbuf_printf(b, "_%" PRId64, d->interior);
    }
}

static bool parse_slice(cxla_hlo_lexer *lx, cxla_attr *a) {
    vec v = {0};
    bool ok = cxla_hlo_expect(lx, '{', "to open the slice ranges");
    if (ok && !cxla_hlo_accept(lx, '}')) {
        do {
            int64_t start, limit, stride = 1;
            ok = cxla_hlo_expect(lx, '[', "to open a slice range") &&
                 cxla_hlo_int(lx, &start, "slice start") &&
                 cxla_hlo_expect(lx, ':', "after the slice start") &&
                 cxla_hlo_int(lx, &limit, "slice limit");
            if (ok && cxla_hlo_accept(lx, ':')) ok = cxla_hlo_int(lx, &stride, "slice stride");
            ok = ok && cxla_hlo_expect(lx, ']', "to close a slice range");
            if (ok && !(vec_push(&v, start) && vec_push(&v, limit) && vec_push(&v, stride)))
                ok = cxla_hlo_oom(lx);
        } while (ok && cxla_hlo_accept(lx, ','));
        ok = ok && cxla_hlo_expect(lx, '}', "to close the slice ranges");
    }
    if (ok) {
        int64_t rank = (int64_t)(v.n / 3);
        cxla_slice_dim *d =
            cxla_arena_alloc_array(arena_of(lx), (size_t)(rank ? rank : 1), sizeof(*d));
        if (!d) ok = cxla_hlo_oom(lx);
        for (int64_t i = 0; ok && i < rank; i++)
            d[i] = (cxla_slice_dim){v.v[3 * i], v.v[3 * i + 1], v.v[3 * i + 2]};
        a->v.slice.rank = rank;
        a->v.slice.dims = d;
    }
    free(v.v);
    return ok;
}

static void print_slice(cxla_strbuf *b, const cxla_attr *a) {
    bool strides = false;
    for (int64_t i = 0; i < a->v.slice.rank; i++) strides |= a->v.slice.dims[i].stride != 1;
    cxla_strbuf_putc(b, '{');
    for (int64_t i = 0; i < a->v.slice.rank; i++) {
        const cxla_slice_dim *d = &a->v.slice.dims[i];
        cxla_strbuf_printf(b, "%s[%" PRId64 ":%" PRId64, i ? ", " : "", d->start, d->limit);
        if (strides) cxla_strbuf_printf(b, ":%" PRId64, d->stride);
        cxla_strbuf_putc(b, ']');
    }
    cxla_strbuf_putc(b, '}');
}

/* ---- dim_labels --------------------------------------------------------------------- */

static bool is_label_char(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '?';
}

/* Decodes one group of dim labels: |letters| are the two non-spatial labels ("bf" or "io");
 * their positions go to *first / *second, digit d's position to spatial[d]. */
static bool decode_labels(cxla_hlo_lexer *lx, size_t start, const char *s, size_t n,
                          const char *letters, int64_t *first, int64_t *second, int64_t *spatial,
                          int64_t *spatial_count) {
    *first = *second = -1;
    int64_t count = 0;
    for (size_t i = 0; i < n; i++) spatial[i] = -1;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == letters[0] || c == letters[1]) {
            int64_t *slot = c == letters[0] ? first : second;
            if (*slot >= 0)
                return cxla_hlo_error(lx, start,
                                      "invalid convolution dimension numbers: '%c' "
                                      "appears twice in '%.*s'",
                                      c, (int)n, s);
            *slot = (int64_t)i;
        } else if (c >= '0' && c <= '9') {
            count++;
        } else if (c != '?') {
            return cxla_hlo_error(lx, start,
                                  "invalid convolution dimension numbers: unexpected "
                                  "'%c' in '%.*s' (expected %c, %c, digits or ?)",
                                  c, (int)n, s, letters[0], letters[1]);
        }
    }
    if (*first < 0 || *second < 0)
        return cxla_hlo_error(lx, start,
                              "invalid convolution dimension numbers: '%.*s' needs "
                              "exactly one '%c' and one '%c'",
                              (int)n, s, letters[0], letters[1]);
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c < '0' || c > '9') continue;
        int64_t d = c - '0';
        if (d >= count || spatial[d] >= 0)
            return cxla_hlo_error(lx, start,
                                  "invalid convolution dimension numbers: spatial "
                                  "dimension %c of '%.*s' is out of range or repeated "
                                  "(%" PRId64 " spatial dimensions)",
                                  c, (int)n, s, count);
        spatial[d] = (int64_t)i;
    }
    *spatial_count = count;
    return true;
}

static bool parse_dim_labels(cxla_hlo_lexer *lx, cxla_attr *a) {
    size_t start = cxla_hlo_skip(lx), q = start;
    size_t part[3][2];
    int np = 0;
    part[0][0] = q;
    while (q < lx->len && np < 3) {
        char c = lx->text[q];
        if (is_label_char(c)) {
            q++;
        } else if (c == '_' && np == 0) {
            part[np][1] = q;
            part[++np][0] = ++q;
        } else if (c == '-' && np == 1 && q + 1 < lx->len && lx->text[q + 1] == '>') {
            part[np][1] = q;
            q += 2;
            part[++np][0] = q;
        } else {
            break;
        }
    }
    if (np != 2) return cxla_hlo_error_found(lx, start, "expected dim_labels like b01f_01io->b01f");
    part[2][1] = q;
    lx->pos = q;
    size_t n0 = part[0][1] - part[0][0], n1 = part[1][1] - part[1][0], n2 = part[2][1] - part[2][0];
    cxla_arena *ar = arena_of(lx);
    cxla_conv_dims *c = &a->v.conv;
    int64_t *sp[3];
    for (int i = 0; i < 3; i++) {
        size_t n = part[i][1] - part[i][0];
        sp[i] = cxla_arena_alloc_array(ar, n ? n : 1, sizeof(int64_t));
        if (!sp[i]) return cxla_hlo_oom(lx);
    }
    int64_t counts[3];
    if (!decode_labels(lx, start, lx->text + part[0][0], n0, "bf", &c->input_batch,
                       &c->input_feature, sp[0], &counts[0]) ||
        !decode_labels(lx, start, lx->text + part[1][0], n1, "io", &c->kernel_input_feature,
                       &c->kernel_output_feature, sp[1], &counts[1]) ||
        !decode_labels(lx, start, lx->text + part[2][0], n2, "bf", &c->output_batch,
                       &c->output_feature, sp[2], &counts[2]))
        return false;
    if (counts[0] != counts[1] || counts[0] != counts[2])
        return cxla_hlo_error(lx, start,
                              "invalid convolution dimension numbers: the input, kernel and "
                              "output have %" PRId64 ", %" PRId64 " and %" PRId64
                              " spatial dimensions",
                              counts[0], counts[1], counts[2]);
    c->spatial_count = counts[0];
    c->input_spatial = sp[0];
    c->kernel_spatial = sp[1];
    c->output_spatial = sp[2];
    return true;
}

static void print_label_group(cxla_strbuf *b, int64_t first, char fc, int64_t second, char sc,
                              const int64_t *spatial, int64_t count) {
    int64_t n = (first > second ? first : second) + 1;
    for (int64_t i = 0; i < count; i++)
        if (spatial[i] + 1 > n) n = spatial[i] + 1;
    char buf[80];
    if (n > (int64_t)sizeof(buf) - 1 || first < 0 || second < 0) {
        cxla_strbuf_puts(b, "?");
        return;
    }
    memset(buf, '?', (size_t)n);
    buf[first] = fc;
    buf[second] = sc;
    for (int64_t i = 0; i < count; i++)
        if (spatial[i] >= 0 && i < 10) buf[spatial[i]] = (char)('0' + i);
    cxla_strbuf_append(b, buf, (size_t)n);
}

static void print_dim_labels(cxla_strbuf *b, const cxla_conv_dims *c) {
    print_label_group(b, c->input_batch, 'b', c->input_feature, 'f', c->input_spatial,
                      c->spatial_count);
    cxla_strbuf_putc(b, '_');
    print_label_group(b, c->kernel_input_feature, 'i', c->kernel_output_feature, 'o',
                      c->kernel_spatial, c->spatial_count);
    cxla_strbuf_puts(b, "->");
    print_label_group(b, c->output_batch, 'b', c->output_feature, 'f', c->output_spatial,
                      c->spatial_count);
}

/* ---- precisions --------------------------------------------------------------------- */

static bool parse_precisions(cxla_hlo_lexer *lx, cxla_attr *a) {
    static const char *const names[] = {"default", "high", "highest", "packed_nibble"};
    vec v = {0};
    bool ok = cxla_hlo_expect(lx, '{', "to open the precision list");
    if (ok && !cxla_hlo_accept(lx, '}')) {
        do {
            size_t start = cxla_hlo_skip(lx);
            const char *w;
            size_t n = cxla_hlo_word(lx, &w);
            int found = -1;
            for (int i = 0; i < 4 && n; i++)
                if (eq_nocase(w, n, names[i])) found = i;
            if (found < 0)
                ok = cxla_hlo_error_found(lx, start,
                                          "expected a precision (default, high, highest)");
            else if (!vec_push(&v, found))
                ok = cxla_hlo_oom(lx);
        } while (ok && cxla_hlo_accept(lx, ','));
        ok = ok && cxla_hlo_expect(lx, '}', "to close the precision list");
    }
    if (ok) {
        cxla_precision *p = cxla_arena_alloc_array(arena_of(lx), v.n ? v.n : 1, sizeof(*p));
        if (!p) ok = cxla_hlo_oom(lx);
        for (size_t i = 0; ok && i < v.n; i++) p[i] = (cxla_precision)v.v[i];
        a->v.precisions.count = (int64_t)v.n;
        a->v.precisions.items = p;
    }
    free(v.v);
    return ok;
}

/* ---- replica groups ----------------------------------------------------------------- */

static bool checked_product(const vec *dims, int64_t *out) {
    int64_t p = 1;
    for (size_t i = 0; i < dims->n; i++)
        if (dims->v[i] < 0 || !cxla_mul_i64(p, dims->v[i], &p)) return false;
    *out = p;
    return true;
}

static void describe_dims(cxla_strbuf *b, const vec *dims) {
    cxla_strbuf_putc(b, '[');
    for (size_t i = 0; i < dims->n; i++)
        cxla_strbuf_printf(b, i ? ",%" PRId64 : "%" PRId64, dims->v[i]);
    cxla_strbuf_putc(b, ']');
}

/* '[' ints ']' */
static bool parse_bracket_ints(cxla_hlo_lexer *lx, vec *out, const char *what) {
    if (!cxla_hlo_expect(lx, '[', what)) return false;
    if (cxla_hlo_accept(lx, ']')) return true;
    do {
        int64_t x;
        if (!cxla_hlo_int(lx, &x, what)) return false;
        if (!vec_push(out, x)) return cxla_hlo_oom(lx);
    } while (cxla_hlo_accept(lx, ','));
    return cxla_hlo_expect(lx, ']', "to close the dimension list");
}

/* After "[dims]": "<=[reshape]" and an optional "T(perm)"; checks that the reshape holds as
 * many devices as |tile| and that perm is a permutation. */
static bool parse_iota_list(cxla_hlo_lexer *lx, size_t start, const vec *tile, vec *reshape,
                            vec *perm, const char *what) {
    if (!cxla_hlo_accept_str(lx, "<=")) return cxla_hlo_error_found(lx, lx->pos, "expected '<='");
    if (!parse_bracket_ints(lx, reshape, what)) return false;
    if (cxla_hlo_accept(lx, 'T')) {
        if (!cxla_hlo_expect(lx, '(', "after T")) return false;
        if (!cxla_hlo_accept(lx, ')')) {
            do {
                int64_t x;
                if (!cxla_hlo_int(lx, &x, "transpose permutation")) return false;
                if (!vec_push(perm, x)) return cxla_hlo_oom(lx);
            } while (cxla_hlo_accept(lx, ','));
            if (!cxla_hlo_expect(lx, ')', "to close the permutation")) return false;
        }
        bool seen[CXLA_MAX_RANK] = {false};
        bool good = perm->n == reshape->n && perm->n <= CXLA_MAX_RANK;
        for (size_t i = 0; good && i < perm->n; i++) {
            int64_t p = perm->v[i];
            good = p >= 0 && p < (int64_t)perm->n && !seen[p];
            if (good) seen[p] = true;
        }
        if (!good)
            return cxla_hlo_error(lx, start,
                                  "the transpose T(...) of %s is not a permutation of "
                                  "its %zu reshape dimensions",
                                  what, reshape->n);
    }
    int64_t n_tile, n_reshape;
    if (!checked_product(tile, &n_tile) || !checked_product(reshape, &n_reshape) ||
        n_tile != n_reshape) {
        cxla_strbuf b;
        cxla_strbuf_init(&b);
        describe_dims(&b, tile);
        cxla_hlo_error(lx, start,
                       "the iota device list of %s does not match the tile assignment "
                       "dimensions %s",
                       what, b.data ? b.data : "");
        cxla_strbuf_free(&b);
        return false;
    }
    return true;
}

/* Element |k| (row-major) of iota(prod(reshape)) reshaped to |reshape| and transposed by
 * |perm|. */
static int64_t iota_element(const vec *reshape, const vec *perm, int64_t k) {
    size_t r = reshape->n;
    if (perm->n == 0) return k;
    int64_t idx[CXLA_MAX_RANK];
    /* Multi-index in the transposed array (dims reshape[perm[i]]). */
    for (size_t i = r; i-- > 0;) {
        int64_t d = reshape->v[perm->v[i]];
        idx[i] = d ? k % d : 0;
        k = d ? k / d : 0;
    }
    int64_t src[CXLA_MAX_RANK];
    for (size_t i = 0; i < r; i++) src[perm->v[i]] = idx[i];
    int64_t lin = 0;
    for (size_t i = 0; i < r; i++) lin = lin * reshape->v[i] + src[i];
    return lin;
}

static bool mesh_body(cxla_hlo_lexer *lx);

static bool parse_replica_groups(cxla_hlo_lexer *lx, cxla_attr *a) {
    cxla_replica_groups *g = &a->v.groups;
    cxla_arena *ar = arena_of(lx);
    size_t start = cxla_hlo_skip(lx);
    if (cxla_hlo_accept_keyword(lx, "mesh")) {
        /* mesh[axes] {axes...}: kept verbatim, checked for consistency. */
        lx->pos = start;
        if (!mesh_body(lx)) return false;
        if (memchr(lx->text + start, 0, lx->pos - start))
            return cxla_hlo_error(lx, start, "a NUL byte in %s", a->name);
        g->text = cxla_arena_strndup(ar, lx->text + start, lx->pos - start);
        return g->text ? true : cxla_hlo_oom(lx);
    }
    if (here(lx, '[')) {
        vec tile = {0}, reshape = {0}, perm = {0};
        bool ok = parse_bracket_ints(lx, &tile, a->name);
        if (ok && tile.n != 2)
            ok = cxla_hlo_error(lx, start,
                                "iota replica groups need [groups,group_size], not %zu "
                                "dimensions",
                                tile.n);
        ok = ok && parse_iota_list(lx, start, &tile, &reshape, &perm, a->name);
        if (ok && reshape.n > CXLA_MAX_RANK)
            ok = cxla_hlo_error(lx, start, "too many reshape dimensions in %s", a->name);
        int64_t total = 0;
        if (ok && (!checked_product(&tile, &total) || total > MAX_IOTA_DEVICES))
            ok = cxla_hlo_error(lx, start, "%s lists more than %d devices", a->name,
                                MAX_IOTA_DEVICES);
        if (ok) {
            int64_t gc = tile.v[0], gs = tile.v[1];
            g->iota_form = true;
            g->iota_group_count = gc;
            g->iota_group_size = gs;
            g->iota_reshape_rank = (int64_t)reshape.n;
            g->iota_reshape_dims = vec_to_arena(ar, &reshape);
            g->iota_transpose_rank = (int64_t)perm.n;
            g->iota_transpose_perm = vec_to_arena(ar, &perm);
            g->group_count = gc;
            g->group_sizes = cxla_arena_alloc_array(ar, (size_t)(gc ? gc : 1), sizeof(int64_t));
            g->groups = cxla_arena_alloc_array(ar, (size_t)(gc ? gc : 1), sizeof(int64_t *));
            int64_t *flat =
                cxla_arena_alloc_array(ar, (size_t)(total ? total : 1), sizeof(int64_t));
            if (!g->iota_reshape_dims || !g->iota_transpose_perm || !g->group_sizes || !g->groups ||
                !flat) {
                ok = cxla_hlo_oom(lx);
            } else {
                for (int64_t k = 0; k < total; k++) flat[k] = iota_element(&reshape, &perm, k);
                for (int64_t i = 0; i < gc; i++) {
                    g->group_sizes[i] = gs;
                    g->groups[i] = flat + i * gs;
                }
            }
        }
        free(tile.v);
        free(reshape.v);
        free(perm.v);
        return ok;
    }
    cxla_attr tmp = *a;
    if (!parse_int_lists(lx, &tmp)) return false;
    g->group_count = tmp.v.int_lists.count;
    g->group_sizes = tmp.v.int_lists.lengths;
    g->groups = tmp.v.int_lists.lists;
    return true;
}

static void print_replica_groups(cxla_strbuf *b, const cxla_replica_groups *g) {
    if (g->text) {
        cxla_strbuf_puts(b, g->text);
        return;
    }
    if (g->iota_form) {
        cxla_strbuf_printf(b, "[%" PRId64 ",%" PRId64 "]<=[", g->iota_group_count,
                           g->iota_group_size);
        for (int64_t i = 0; i < g->iota_reshape_rank; i++)
            cxla_strbuf_printf(b, i ? ",%" PRId64 : "%" PRId64, g->iota_reshape_dims[i]);
        cxla_strbuf_putc(b, ']');
        if (g->iota_transpose_rank > 0) {
            cxla_strbuf_puts(b, "T(");
            for (int64_t i = 0; i < g->iota_transpose_rank; i++)
                cxla_strbuf_printf(b, i ? ",%" PRId64 : "%" PRId64, g->iota_transpose_perm[i]);
            cxla_strbuf_putc(b, ')');
        }
        return;
    }
    cxla_strbuf_putc(b, '{');
    for (int64_t i = 0; i < g->group_count; i++) {
        if (i) cxla_strbuf_putc(b, ',');
        print_int_list(b, g->groups[i], g->group_sizes[i]);
    }
    cxla_strbuf_putc(b, '}');
}

/* ---- checks of values kept verbatim ------------------------------------------------- */

/* A quoted name ('x' or "x") at the cursor: its contents in [*s, *s + *n). */
static bool quoted(cxla_hlo_lexer *lx, const char **s, size_t *n) {
    size_t q = cxla_hlo_skip(lx);
    if (q >= lx->len || (lx->text[q] != '\'' && lx->text[q] != '"'))
        return cxla_hlo_error_found(lx, q, "expected a quoted name");
    size_t e = q;
    if (!cxla_hlo_skip_group(lx, &e)) return false;
    *s = lx->text + q + 1;
    *n = e - q - 2;
    lx->pos = e;
    return true;
}

/* mesh['a'=2,'b'=4, device_ids=(...)] {'a', ...} */
static bool mesh_body(cxla_hlo_lexer *lx) {
    enum { MAX_AXES = 64 };
    const char *names[MAX_AXES];
    size_t lens[MAX_AXES];
    int axes = 0;
    int64_t devices = 1;
    if (!cxla_hlo_accept_keyword(lx, "mesh") || !cxla_hlo_expect(lx, '[', "after mesh"))
        return false;
    while (!cxla_hlo_accept(lx, ']')) {
        size_t item = cxla_hlo_skip(lx);
        if (cxla_hlo_accept_keyword(lx, "device_ids")) {
            int64_t count = 0, x;
            if (!cxla_hlo_expect(lx, '=', "after device_ids") ||
                !cxla_hlo_expect(lx, '(', "to open the device ids"))
                return false;
            if (!cxla_hlo_accept(lx, ')')) {
                do {
                    if (!cxla_hlo_int(lx, &x, "device id")) return false;
                    count++;
                } while (cxla_hlo_accept(lx, ','));
                if (!cxla_hlo_expect(lx, ')', "to close the device ids")) return false;
            }
            if (count != devices)
                return cxla_hlo_error(lx, item,
                                      "the mesh has %" PRId64 " devices but device_ids "
                                      "lists %" PRId64,
                                      devices, count);
        } else {
            int64_t size;
            if (axes == MAX_AXES) return cxla_hlo_error(lx, item, "too many mesh axes");
            if (!quoted(lx, &names[axes], &lens[axes]) ||
                !cxla_hlo_expect(lx, '=', "after the mesh axis name") ||
                !cxla_hlo_int(lx, &size, "mesh axis size"))
                return false;
            if (size < 0 || !cxla_mul_i64(devices, size, &devices))
                return cxla_hlo_error(lx, item, "bad mesh axis size %" PRId64, size);
            axes++;
        }
        if (!cxla_hlo_accept(lx, ',') && !cxla_hlo_at(lx, ']'))
            return cxla_hlo_error_found(lx, lx->pos, "expected ',' or ']' in the mesh");
    }
    if (!cxla_hlo_expect(lx, '{', "with the mesh axes of the groups")) return false;
    while (!cxla_hlo_accept(lx, '}')) {
        size_t item = cxla_hlo_skip(lx);
        const char *s = NULL;
        size_t n = 0;
        if (!quoted(lx, &s, &n)) return false;
        size_t base = n;
        for (size_t i = 0; i < n; i++)
            if (s[i] == ':') base = i; /* 'axis:(pre)size' names a sub-axis */
        bool digits = base > 0;
        for (size_t i = 0; i < base; i++) digits &= s[i] >= '0' && s[i] <= '9';
        if (digits) {
            if (base > 9 || atoll(s) >= axes)
                return cxla_hlo_error(lx, item,
                                      "axis index '%.*s' is out of bounds for mesh with "
                                      "%d axes",
                                      (int)n, s, axes);
        } else {
            bool found = false;
            for (int i = 0; i < axes && !found; i++)
                found = lens[i] == base && memcmp(names[i], s, base) == 0;
            if (!found)
                return cxla_hlo_error(lx, item,
                                      "'%.*s' is not a valid axis name or index of the "
                                      "mesh",
                                      (int)(n > 64 ? 64 : n), s);
        }
        if (!cxla_hlo_accept(lx, ',') && !cxla_hlo_at(lx, '}'))
            return cxla_hlo_error_found(lx, lx->pos, "expected ',' or '}' in the mesh axes");
    }
    return true;
}

/* One sharding between braces: checks "devices=[dims]" against the device list. */
static bool sharding_body(cxla_hlo_lexer *lx, int depth);

static bool sharding_group(cxla_hlo_lexer *lx, int depth) {
    if (depth > 64) return cxla_hlo_error(lx, lx->pos, "sharding nested too deeply");
    if (!cxla_hlo_expect(lx, '{', "to open a sharding")) return false;
    if (cxla_hlo_at(lx, '{')) { /* tuple sharding: one per leaf */
        do {
            if (!sharding_group(lx, depth + 1)) return false;
        } while (cxla_hlo_accept(lx, ','));
        return cxla_hlo_expect(lx, '}', "to close the tuple sharding");
    }
    return sharding_body(lx, depth);
}

static bool sharding_body(cxla_hlo_lexer *lx, int depth) {
    while (!cxla_hlo_accept(lx, '}')) {
        size_t q = cxla_hlo_skip(lx);
        if (q >= lx->len) return cxla_hlo_error(lx, q, "unterminated sharding");
        char c = lx->text[q];
        if (cxla_hlo_accept_keyword(lx, "devices") && cxla_hlo_accept(lx, '=')) {
            vec tile = {0}, reshape = {0}, perm = {0};
            bool ok = parse_bracket_ints(lx, &tile, "sharding tile assignment");
            if (ok && cxla_hlo_at(lx, '<')) {
                ok = parse_iota_list(lx, q, &tile, &reshape, &perm, "the sharding");
            } else if (ok) {
                int64_t count = 0, x, size;
                do {
                    ok = cxla_hlo_int(lx, &x, "device id");
                    count++;
                } while (ok && cxla_hlo_accept(lx, ','));
                if (ok && (!checked_product(&tile, &size) || size != count)) {
                    cxla_strbuf b;
                    cxla_strbuf_init(&b);
                    describe_dims(&b, &tile);
                    ok = cxla_hlo_error(lx, q,
                                        "the sharding's device count %" PRId64
                                        " does not match the tile assignment size of %s",
                                        count, b.data ? b.data : "");
                    cxla_strbuf_free(&b);
                }
            }
            free(tile.v);
            free(reshape.v);
            free(perm.v);
            if (!ok) return false;
            continue;
        }
        lx->pos = q;
        if (c == '{' || c == '[' || c == '(' || c == '"' || c == '\'') {
            if (c == '{' && !sharding_group(lx, depth + 1)) return false;
            if (c != '{' && !cxla_hlo_skip_group(lx, &lx->pos)) return false;
        } else if (c == '}' || c == ']' || c == ')') {
            return cxla_hlo_error(lx, q, "unbalanced '%c' in the sharding", c);
        } else {
            lx->pos = q + 1;
            while (lx->pos < lx->len && cxla_hlo_is_name_char(lx->text[lx->pos]) &&
                   cxla_hlo_is_name_char(c))
                lx->pos++;
        }
    }
    return true;
}

/* {int,...} (a ShapeIndex) */
static bool shape_index(cxla_hlo_lexer *lx) {
    size_t q = cxla_hlo_skip(lx);
    if (!cxla_hlo_accept(lx, '{'))
        return cxla_hlo_error_found(lx, q, "expected '{' at the start of a ShapeIndex");
    if (cxla_hlo_accept(lx, '}')) return true;
    do {
        int64_t x;
        if (!cxla_hlo_int(lx, &x, "ShapeIndex element")) return false;
    } while (cxla_hlo_accept(lx, ','));
    if (!cxla_hlo_accept(lx, '}'))
        return cxla_hlo_error_found(lx, lx->pos, "expected '}' at the end of a ShapeIndex");
    return true;
}

/* input_output_alias={ {out}: (param, {index}, kind), ... }, output_to_operand_aliasing
 * (no kind) and buffer_donor={ (param, {index}), ... }. */
static bool aliasing_body(cxla_hlo_lexer *lx, cxla_attr_id id) {
    if (!cxla_hlo_expect(lx, '{', "to open the aliasing description")) return false;
    if (cxla_hlo_accept(lx, '}')) return true;
    do {
        int64_t param;
        if (id != CXLA_ATTR_BUFFER_DONOR &&
            (!shape_index(lx) || !cxla_hlo_expect(lx, ':', "after the output ShapeIndex")))
            return false;
        if (!cxla_hlo_expect(lx, '(', "before the parameter number") ||
            !cxla_hlo_int(lx, &param, "parameter number") ||
            !cxla_hlo_expect(lx, ',', "after the parameter number") || !shape_index(lx))
            return false;
        if (id == CXLA_ATTR_INPUT_OUTPUT_ALIAS && cxla_hlo_accept(lx, ',')) {
            size_t q = cxla_hlo_skip(lx);
            if (!cxla_hlo_accept_str(lx, "may-alias") && !cxla_hlo_accept_str(lx, "must-alias"))
                return cxla_hlo_error_found(lx, q, "expected may-alias or must-alias");
        }
        if (!cxla_hlo_expect(lx, ')', "after the aliased parameter")) return false;
    } while (cxla_hlo_accept(lx, ','));
    if (!cxla_hlo_accept(lx, '}'))
        return cxla_hlo_error_found(lx, lx->pos,
                                    "expected '}' at the end of the aliasing "
                                    "description");
    return true;
}

/* result_accuracy={mode=highest} or {tolerance={atol=F rtol=F ulps=N}} */
static bool accuracy_body(cxla_hlo_lexer *lx) {
    if (!cxla_hlo_expect(lx, '{', "to open result_accuracy")) return false;
    size_t q = cxla_hlo_skip(lx);
    const char *w;
    size_t n = cxla_hlo_word(lx, &w);
    if (!n || !cxla_hlo_at(lx, '='))
        return cxla_hlo_error_found(lx, q,
                                    "result_accuracy expects attribute name mode or "
                                    "tolerance");
    lx->pos++;
    if (n == 4 && memcmp(w, "mode", 4) == 0) {
        size_t v = cxla_hlo_skip(lx);
        const char *m;
        size_t mn = cxla_hlo_word(lx, &m);
        bool good = eq_nocase(m, mn, "default") || eq_nocase(m, mn, "highest");
        if (!good)
            return cxla_hlo_error(lx, v, "expects ResultAccuracy type but sees: %.*s",
                                  (int)(mn > 64 ? 64 : mn), m);
    } else if (n == 9 && memcmp(w, "tolerance", 9) == 0) {
        if (!cxla_hlo_expect(lx, '{', "to open the tolerance")) return false;
        while (!cxla_hlo_accept(lx, '}')) {
            size_t f = cxla_hlo_skip(lx);
            const char *fw;
            size_t fn = cxla_hlo_word(lx, &fw);
            bool known = (fn == 4 && (memcmp(fw, "atol", 4) == 0 || memcmp(fw, "rtol", 4) == 0 ||
                                      memcmp(fw, "ulps", 4) == 0));
            double x;
            if (!known)
                return cxla_hlo_error_found(lx, f,
                                            "invalid attribute name in the tolerance "
                                            "(atol, rtol, ulps)");
            if (!cxla_hlo_expect(lx, '=', "after the tolerance field") ||
                !cxla_hlo_float(lx, &x, "tolerance"))
                return false;
            cxla_hlo_accept(lx, ',');
        }
    } else {
        return cxla_hlo_error(lx, q, "invalid attribute name '%.*s' in result_accuracy",
                              (int)(n > 64 ? 64 : n), w);
    }
    return cxla_hlo_expect(lx, '}', "to close result_accuracy");
}

/* Text checks by scanning: an original value has no empty leaf "{}"; debug attributes
 * name known log modes. Strings are skipped. */
static bool scan_raw(cxla_hlo_lexer *lx, cxla_attr_id id, size_t start, size_t end) {
    static const char *const log_modes[] = {"default", "fusion_debugger", NULL};
    for (size_t q = start; q < end; q++) {
        char c = lx->text[q];
        if (c == '"' || c == '\'') {
            size_t e = q;
            if (!cxla_hlo_skip_group(lx, &e)) return false;
            q = e - 1;
        } else if (id == CXLA_ATTR_ORIGIN && c == '{') {
            size_t e = cxla_text_skip_space(lx->text, end, q + 1);
            if (e < end && lx->text[e] == '}')
                return cxla_hlo_error(lx, q, "an original value has an empty leaf {}");
        } else if (id == CXLA_ATTR_DEBUG_ATTRIBUTES && end - q > 9 &&
                   memcmp(lx->text + q, "log_mode=", 9) == 0) {
            size_t w = q + 9, e = w;
            while (e < end && (cxla_hlo_is_name_start(lx->text[e]) ||
                               (lx->text[e] >= '0' && lx->text[e] <= '9')))
                e++;
            if (!word_in(log_modes, lx->text + w, e - w))
                return cxla_hlo_error(lx, w, "Invalid debug_log_mode value: %.*s", (int)(e - w),
                                      lx->text + w);
        }
    }
    return true;
}

/* ---- names of computations and instructions ---------------------------------------- */

/* A name, or '{' names '}' when |braced| allows it (or requires it: 2). The names are
 * left in pending_names for the parser; items are allocated and NULL. */
static bool parse_names(cxla_hlo_lexer *lx, cxla_attr *a, int braced) {
    const char *one[1];
    size_t one_len[1];
    const char **names = one;
    size_t *lens = one_len;
    size_t count = 0, cap = 1;
    bool ok = true, list = false;
    size_t start = cxla_hlo_skip(lx);
    if (braced && cxla_hlo_accept(lx, '{')) {
        list = true;
    } else if (braced == 2) {
        return cxla_hlo_error_found(lx, start, "expected '{' to open the list of %s", a->name);
    }
    while (ok) {
        if (list && count == 0 && cxla_hlo_accept(lx, '}')) break;
        size_t q = cxla_hlo_skip(lx);
        const char *n;
        size_t len = cxla_hlo_name(lx, &n);
        if (!len) {
            ok = cxla_hlo_error_found(lx, q, "expected a name in %s", a->name);
            break;
        }
        if (count == cap) {
            size_t ncap = cap * 2;
            const char **nn = malloc(ncap * sizeof(*nn));
            size_t *nl = malloc(ncap * sizeof(*nl));
            if (!nn || !nl) {
                free(nn);
                free(nl);
                ok = cxla_hlo_oom(lx);
                break;
            }
            memcpy(nn, names, count * sizeof(*nn));
            memcpy(nl, lens, count * sizeof(*nl));
            if (names != one) {
                free(names);
                free(lens);
            }
            names = nn;
            lens = nl;
            cap = ncap;
        }
        names[count] = n;
        lens[count] = len;
        count++;
        if (!list) break;
        if (cxla_hlo_accept(lx, ',')) continue;
        ok = cxla_hlo_expect(lx, '}', "to close the list of names");
        break;
    }
    /* "to_apply={}" (or an inline body with no instructions) names nothing: a single
     * computation attribute needs one. */
    if (ok && count == 0 && a->kind == CXLA_ATTR_KIND_COMPUTATION)
        ok = cxla_hlo_error(lx, start, "%s names no computation (an empty '{}')", a->name);
    if (ok) {
        cxla_arena *ar = arena_of(lx);
        a->pending_names = cxla_arena_alloc_array(ar, count ? count : 1, sizeof(char *));
        void **items = cxla_arena_alloc_array(ar, count ? count : 1, sizeof(void *));
        if (!a->pending_names || !items) ok = cxla_hlo_oom(lx);
        for (size_t i = 0; ok && i < count; i++) {
            a->pending_names[i] = cxla_arena_strndup(ar, names[i], lens[i]);
            if (!a->pending_names[i]) ok = cxla_hlo_oom(lx);
        }
        if (a->kind == CXLA_ATTR_KIND_INSTRUCTIONS) {
            a->v.instrs.count = (int64_t)count;
            a->v.instrs.items = (cxla_instr **)items;
        } else {
            a->v.comps.count = (int64_t)count;
            a->v.comps.items = (cxla_computation **)items;
        }
    }
    if (names != one) {
        free(names);
        free(lens);
    }
    return ok;
}

/* ---- shapes and literals ----------------------------------------------------------- */

static bool parse_shapes(cxla_hlo_lexer *lx, cxla_attr *a, bool list) {
    cxla_shape one;
    if (!list) {
        if (!cxla_hlo_shape(lx, &one)) return false;
        a->v.shapes.items = cxla_arena_alloc(arena_of(lx), sizeof(cxla_shape));
        if (!a->v.shapes.items) return cxla_hlo_oom(lx);
        a->v.shapes.items[0] = one;
        a->v.shapes.count = 1;
        return true;
    }
    if (!cxla_hlo_expect(lx, '{', "to open the list of shapes")) return false;
    cxla_shape *items = NULL;
    size_t count = 0, cap = 0;
    bool ok = true;
    if (!cxla_hlo_accept(lx, '}')) {
        do {
            if (count == cap) {
                size_t ncap = cap ? cap * 2 : 4;
                cxla_shape *p = cxla_arena_alloc_array(arena_of(lx), ncap, sizeof(*p));
                if (!p) {
                    ok = cxla_hlo_oom(lx);
                    break;
                }
                if (count) memcpy(p, items, count * sizeof(*p));
                items = p;
                cap = ncap;
            }
            ok = cxla_hlo_shape(lx, &items[count]);
            count++;
        } while (ok && cxla_hlo_accept(lx, ','));
        ok = ok && cxla_hlo_expect(lx, '}', "to close the list of shapes");
    }
    a->v.shapes.items = items;
    a->v.shapes.count = (int64_t)count;
    return ok;
}

static bool parse_literal_attr(cxla_hlo_lexer *lx, cxla_attr *a) {
    size_t q = cxla_hlo_skip(lx);
    cxla_literal *lit = NULL;
    cxla_status st = cxla_literal_parse_at(lx->text, lx->len, &q, NULL, &lit);
    if (st) return cxla_hlo_fail_status(lx, st, lx->pos);
    st = cxla_module_adopt_literal(lx->module, lit);
    if (st) return cxla_hlo_fail_status(lx, st, lx->pos);
    a->v.literal = lit;
    lx->pos = q;
    return true;
}

/* ---- RAW values --------------------------------------------------------------------- */

/* Values with a structure XLA checks are read by their checker, which ends where the value
 * ends; the others are balanced text. Either way the text is kept verbatim. */
static bool parse_raw(cxla_hlo_lexer *lx, cxla_attr *a) {
    size_t start = cxla_hlo_skip(lx), end;
    bool ok;
    switch (a->id) {
    case CXLA_ATTR_SHARDING: ok = sharding_group(lx, 0); break;
    case CXLA_ATTR_INPUT_OUTPUT_ALIAS:
    case CXLA_ATTR_BUFFER_DONOR:
    case CXLA_ATTR_OUTPUT_TO_OPERAND_ALIASING: ok = aliasing_body(lx, a->id); break;
    case CXLA_ATTR_RESULT_ACCURACY: ok = accuracy_body(lx); break;
    default:
        ok = cxla_hlo_raw(lx, &start, &end, a->name) &&
             ((a->id != CXLA_ATTR_ORIGIN && a->id != CXLA_ATTR_DEBUG_ATTRIBUTES) ||
              scan_raw(lx, a->id, start, end));
        break;
    }
    if (!ok) return false;
    const char *nul = memchr(lx->text + start, 0, lx->pos - start);
    if (nul) return cxla_hlo_error(lx, (size_t)(nul - lx->text), "a NUL byte in %s", a->name);
    a->v.s = cxla_arena_strndup(arena_of(lx), lx->text + start, lx->pos - start);
    return a->v.s ? true : cxla_hlo_oom(lx);
}

/* ---- dispatch ------------------------------------------------------------------------ */

bool cxla_hlo_parse_attr_value(cxla_hlo_lexer *lx, cxla_attr *a) {
    switch (a->kind) {
    case CXLA_ATTR_KIND_BOOL: {
        if (cxla_hlo_accept_keyword(lx, "true")) {
            a->v.b = true;
            return true;
        }
        if (cxla_hlo_accept_keyword(lx, "false")) {
            a->v.b = false;
            return true;
        }
        return cxla_hlo_error_found(lx, cxla_hlo_skip(lx), "expected true or false for %s",
                                    a->name);
    }
    case CXLA_ATTR_KIND_INT: return cxla_hlo_int(lx, &a->v.i, a->name);
    case CXLA_ATTR_KIND_FLOAT: return cxla_hlo_float(lx, &a->v.f, a->name);
    case CXLA_ATTR_KIND_STRING: return cxla_hlo_string(lx, &a->v.s);
    case CXLA_ATTR_KIND_WORD: return parse_word(lx, a);
    case CXLA_ATTR_KIND_INTS: {
        /* collective-permute writes slice_sizes as a list of lists. */
        size_t q = cxla_hlo_skip(lx);
        if (a->id == CXLA_ATTR_SLICE_SIZES && here(lx, '{')) {
            lx->pos++;
            bool nested = cxla_hlo_at(lx, '{');
            lx->pos = q;
            if (nested) {
                a->kind = CXLA_ATTR_KIND_INT_LISTS;
                return parse_int_lists(lx, a);
            }
        }
        return parse_ints(lx, a);
    }
    case CXLA_ATTR_KIND_INT_LISTS: return parse_int_lists(lx, a);
    case CXLA_ATTR_KIND_COMPUTATION: return parse_names(lx, a, 1);
    case CXLA_ATTR_KIND_COMPUTATIONS: return parse_names(lx, a, a->id == CXLA_ATTR_CALLS ? 1 : 2);
    case CXLA_ATTR_KIND_INSTRUCTIONS: return parse_names(lx, a, 2);
    case CXLA_ATTR_KIND_SHAPE: return parse_shapes(lx, a, false);
    case CXLA_ATTR_KIND_SHAPES: return parse_shapes(lx, a, true);
    case CXLA_ATTR_KIND_WINDOW: return parse_window(lx, a);
    case CXLA_ATTR_KIND_PADDING: return parse_padding(lx, a);
    case CXLA_ATTR_KIND_SLICE: return parse_slice(lx, a);
    case CXLA_ATTR_KIND_DIM_LABELS: return parse_dim_labels(lx, a);
    case CXLA_ATTR_KIND_REPLICA_GROUPS: return parse_replica_groups(lx, a);
    case CXLA_ATTR_KIND_PRECISIONS: return parse_precisions(lx, a);
    case CXLA_ATTR_KIND_LITERAL: return parse_literal_attr(lx, a);
    case CXLA_ATTR_KIND_RAW:
    default: return parse_raw(lx, a);
    }
}

/* ---- printing ------------------------------------------------------------------------ */

void cxla_hlo_print_name(cxla_strbuf *b, const char *name, cxla_hlo_style style) {
    if (style != CXLA_HLO_STYLE_SHORT) cxla_strbuf_putc(b, '%');
    cxla_strbuf_puts(b, name ? name : "null");
}

/* As absl::CEscape: \n \r \t \" \' \\ and octal for other bytes outside 0x20..0x7e. */
void cxla_hlo_print_string(cxla_strbuf *b, const char *s) {
    cxla_strbuf_putc(b, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '\n': cxla_strbuf_puts(b, "\\n"); break;
        case '\r': cxla_strbuf_puts(b, "\\r"); break;
        case '\t': cxla_strbuf_puts(b, "\\t"); break;
        case '"': cxla_strbuf_puts(b, "\\\""); break;
        case '\'': cxla_strbuf_puts(b, "\\'"); break;
        case '\\': cxla_strbuf_puts(b, "\\\\"); break;
        default:
            if (c < 0x20 || c >= 0x7f)
                cxla_strbuf_printf(b, "\\%03o", c);
            else
                cxla_strbuf_putc(b, (char)c);
        }
    }
    cxla_strbuf_putc(b, '"');
}

static void print_names(cxla_strbuf *b, const cxla_attr *a, cxla_hlo_style style) {
    bool instrs = a->kind == CXLA_ATTR_KIND_INSTRUCTIONS;
    int64_t count = instrs ? a->v.instrs.count : a->v.comps.count;
    bool braces = a->kind != CXLA_ATTR_KIND_COMPUTATION && a->id != CXLA_ATTR_CALLS;
    if (braces) cxla_strbuf_putc(b, '{');
    for (int64_t i = 0; i < count; i++) {
        if (i) cxla_strbuf_puts(b, ", ");
        const char *name = NULL;
        if (instrs && a->v.instrs.items[i])
            name = a->v.instrs.items[i]->name;
        else if (!instrs && a->v.comps.items[i])
            name = a->v.comps.items[i]->name;
        else if (a->pending_names)
            name = a->pending_names[i];
        cxla_hlo_print_name(b, name, style);
    }
    if (braces) cxla_strbuf_putc(b, '}');
}

void cxla_hlo_print_attr_value(cxla_strbuf *b, const cxla_attr *a, cxla_hlo_style style) {
    static const char *const precision_names[] = {"default", "high", "highest", "packed_nibble"};
    switch (a->kind) {
    case CXLA_ATTR_KIND_BOOL: cxla_strbuf_puts(b, a->v.b ? "true" : "false"); break;
    case CXLA_ATTR_KIND_INT: cxla_strbuf_printf(b, "%" PRId64, a->v.i); break;
    case CXLA_ATTR_KIND_FLOAT: {
        /* XLA keeps these as float and prints six significant digits. */
        double v = (double)(float)a->v.f;
        if (isnan(v))
            cxla_strbuf_puts(b, signbit(v) ? "-nan" : "nan");
        else if (isinf(v))
            cxla_strbuf_puts(b, v < 0 ? "-inf" : "inf");
        else
            cxla_strbuf_printf(b, "%g", v);
        break;
    }
    case CXLA_ATTR_KIND_STRING: cxla_hlo_print_string(b, a->v.s ? a->v.s : ""); break;
    case CXLA_ATTR_KIND_WORD:
    case CXLA_ATTR_KIND_RAW: cxla_strbuf_puts(b, a->v.s ? a->v.s : ""); break;
    case CXLA_ATTR_KIND_INTS: print_int_list(b, a->v.ints.values, a->v.ints.count); break;
    case CXLA_ATTR_KIND_INT_LISTS:
        cxla_strbuf_putc(b, '{');
        for (int64_t i = 0; i < a->v.int_lists.count; i++) {
            if (i) cxla_strbuf_putc(b, ',');
            print_int_list(b, a->v.int_lists.lists[i], a->v.int_lists.lengths[i]);
        }
        cxla_strbuf_putc(b, '}');
        break;
    case CXLA_ATTR_KIND_COMPUTATION:
    case CXLA_ATTR_KIND_COMPUTATIONS:
    case CXLA_ATTR_KIND_INSTRUCTIONS: print_names(b, a, style); break;
    case CXLA_ATTR_KIND_SHAPE:
        if (a->v.shapes.count > 0) cxla_shape_print(b, &a->v.shapes.items[0], 0);
        break;
    case CXLA_ATTR_KIND_SHAPES:
        cxla_strbuf_putc(b, '{');
        for (int64_t i = 0; i < a->v.shapes.count; i++) {
            if (i) cxla_strbuf_puts(b, ", ");
            cxla_shape_print(b, &a->v.shapes.items[i], 0);
        }
        cxla_strbuf_putc(b, '}');
        break;
    case CXLA_ATTR_KIND_WINDOW: print_window(b, a); break;
    case CXLA_ATTR_KIND_PADDING: print_padding(b, a); break;
    case CXLA_ATTR_KIND_SLICE: print_slice(b, a); break;
    case CXLA_ATTR_KIND_DIM_LABELS: print_dim_labels(b, &a->v.conv); break;
    case CXLA_ATTR_KIND_REPLICA_GROUPS: print_replica_groups(b, &a->v.groups); break;
    case CXLA_ATTR_KIND_PRECISIONS:
        cxla_strbuf_putc(b, '{');
        for (int64_t i = 0; i < a->v.precisions.count; i++) {
            unsigned p = (unsigned)a->v.precisions.items[i];
            cxla_strbuf_printf(b, "%s%s", i ? "," : "", p < 4 ? precision_names[p] : "default");
        }
        cxla_strbuf_putc(b, '}');
        break;
    case CXLA_ATTR_KIND_LITERAL:
        if (a->v.literal)
            cxla_literal_print(b, a->v.literal,
                               CXLA_LITERAL_PRINT_SHAPE | CXLA_LITERAL_PRINT_LAYOUT);
        break;
    default: break;
    }
}
