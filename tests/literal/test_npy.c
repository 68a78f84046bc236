/* NumPy .npy files: round trips for every element type, hand-built headers of every
 * accepted form, every class of malformed input, and (when /usr/bin/python3 has numpy)
 * a cross-check against numpy itself in both directions. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <stdlib.h>
#include <unistd.h>

#include "harness.h"
#include "literal/literal_internal.h"

/* ---------------------------------------------------------------------------------------
 * Helpers. */

static bool host_little(void) {
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* A .npy file with |header| verbatim (the caller pads it, or not) and |data| after it. */
static uint8_t *build_npy(int major, int minor, const char *header, const void *data,
                          size_t data_len, size_t *out_len) {
    size_t hlen = strlen(header), prefix = major == 1 ? 10 : 12;
    uint8_t *b = malloc(prefix + hlen + data_len + 1);
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (uint8_t)major;
    b[7] = (uint8_t)minor;
    b[8] = (uint8_t)(hlen & 0xff);
    b[9] = (uint8_t)(hlen >> 8 & 0xff);
    if (prefix == 12) {
        b[10] = (uint8_t)(hlen >> 16 & 0xff);
        b[11] = (uint8_t)(hlen >> 24 & 0xff);
    }
    memcpy(b + prefix, header, hlen);
    if (data_len) memcpy(b + prefix + hlen, data, data_len);
    *out_len = prefix + hlen + data_len;
    return b;
}

/* Reads a hand-built v1 file; NULL (and a failed check) on error. */
static cxla_literal *read_v1(const char *header, const void *data, size_t data_len,
                             cxla_type hint) {
    size_t len;
    uint8_t *b = build_npy(1, 0, header, data, data_len, &len);
    cxla_literal *lit = NULL;
    CHECK_OK(cxla_npy_read_buffer(b, len, hint, &lit));
    free(b);
    return lit;
}

/* The error a hand-built v1 file gives (checked to be |code|). */
static const char *error_v1(const char *header, const void *data, size_t data_len, cxla_type hint,
                            cxla_status_code code) {
    size_t len;
    uint8_t *b = build_npy(1, 0, header, data, data_len, &len);
    cxla_literal *lit = NULL;
    cxla_status st = cxla_npy_read_buffer(b, len, hint, &lit);
    free(b);
    CHECK_MSG(st != NULL, "expected an error for header %s", header);
    CHECK_MSG(lit == NULL, "a literal came back with an error");
    cxla_literal_free(lit);
    CHECK_MSG(cxla_status_code_of(st) == code, "header %s: code %s, expected %s: %s", header,
              cxla_status_code_name(cxla_status_code_of(st)), cxla_status_code_name(code),
              cxla_status_message(st));
    return test_expect_error(st, __FILE__, __LINE__);
}

#define CHECK_HAS(msg, sub)                                                                        \
    CHECK_MSG(strstr((msg), (sub)) != NULL, "message lacks \"%s\": %s", (sub), (msg))

static bool check_dims(const cxla_literal *lit, cxla_type type, int64_t rank, const int64_t *dims) {
    const cxla_shape *s = cxla_literal_shape(lit);
    bool ok = s->type == type && s->rank == rank;
    for (int64_t i = 0; ok && i < rank; i++) ok = s->dims[i] == dims[i];
    CHECK_MSG(ok, "shape %s is not %s with the expected dims", cxla_shape_to_string(s, 0),
              cxla_type_name(type));
    return ok;
}

/* Valid storage bytes for element |k| of |type| (types.h's storage rules). */
static void fill_valid(cxla_type type, uint8_t *data, int64_t count) {
    size_t st = cxla_type_storage(type);
    for (int64_t k = 0; k < count; k++) {
        uint8_t *p = data + (size_t)k * st;
        switch (type) {
        case CXLA_PRED: p[0] = (uint8_t)(k % 2); break;
        case CXLA_S1: p[0] = (uint8_t)(int8_t)(-(k % 2)); break;
        case CXLA_S2: p[0] = (uint8_t)(int8_t)((k % 4) - 2); break;
        case CXLA_S4: p[0] = (uint8_t)(int8_t)((k % 16) - 8); break;
        case CXLA_U1: p[0] = (uint8_t)(k % 2); break;
        case CXLA_U2: p[0] = (uint8_t)(k % 4); break;
        case CXLA_U4:
        case CXLA_F4E2M1FN: p[0] = (uint8_t)(k % 16); break;
        case CXLA_F6E2M3FN:
        case CXLA_F6E3M2FN: p[0] = (uint8_t)(k % 64); break;
        default:
            for (size_t b = 0; b < st; b++) p[b] = (uint8_t)(k * 31 + (int64_t)b * 7 + 1);
            break;
        }
    }
}

/* The descr cxla should write for |type| (docs/npy.md). */
static void expected_descr(cxla_type type, char *out) {
    char order = host_little() ? '<' : '>';
    size_t st = cxla_type_storage(type);
    char kind;
    switch (type) {
    case CXLA_PRED: kind = 'b'; break;
    case CXLA_S8:
    case CXLA_S16:
    case CXLA_S32:
    case CXLA_S64: kind = 'i'; break;
    case CXLA_U8:
    case CXLA_U16:
    case CXLA_U32:
    case CXLA_U64: kind = 'u'; break;
    case CXLA_F16:
    case CXLA_F32:
    case CXLA_F64: kind = 'f'; break;
    case CXLA_C64:
    case CXLA_C128: kind = 'c'; break;
    default: kind = 'V'; break;
    }
    if (st == 1 && kind != 'V') order = '|';
    sprintf(out, "'descr': '%c%c%zu'", order, kind, st);
}

static cxla_literal *make_literal(cxla_type type, int64_t rank, const int64_t *dims) {
    cxla_shape shape = {.type = type, .rank = rank, .dims = (int64_t *)dims};
    cxla_literal *lit = NULL;
    CHECK_OK(cxla_literal_create(&shape, &lit));
    if (lit) fill_valid(type, cxla_literal_data(lit), cxla_literal_element_count(lit));
    return lit;
}

static bool needs_hint(cxla_type type) {
    switch (type) {
    case CXLA_PRED:
    case CXLA_S8:
    case CXLA_S16:
    case CXLA_S32:
    case CXLA_S64:
    case CXLA_U8:
    case CXLA_U16:
    case CXLA_U32:
    case CXLA_U64:
    case CXLA_F16:
    case CXLA_F32:
    case CXLA_F64:
    case CXLA_C64:
    case CXLA_C128: return false;
    default: return true;
    }
}

/* ---------------------------------------------------------------------------------------
 * Round trips. */

static void round_trip(cxla_type type, int64_t rank, const int64_t *dims) {
    cxla_literal *lit = make_literal(type, rank, dims);
    if (!lit) return;
    void *buf = NULL;
    size_t len = 0;
    CHECK_OK(cxla_npy_write_buffer(lit, &buf, &len));
    if (!buf) {
        cxla_literal_free(lit);
        return;
    }
    /* Header: v1, aligned to 64, ends with a newline, names the right descr. */
    const uint8_t *b = buf;
    CHECK(len >= 10 && memcmp(b, "\x93NUMPY\x01\x00", 8) == 0);
    size_t hlen = (size_t)b[8] | (size_t)b[9] << 8;
    CHECK_EQ_U64((10 + hlen) % 64, 0);
    CHECK(b[10 + hlen - 1] == '\n');
    CHECK_EQ_U64(len - 10 - hlen, cxla_literal_byte_size(lit));
    char descr[64], *header = malloc(hlen + 1);
    memcpy(header, b + 10, hlen);
    header[hlen] = 0;
    expected_descr(type, descr);
    CHECK_MSG(strstr(header, descr) != NULL, "%s: header %s lacks %s", cxla_type_name(type), header,
              descr);
    free(header);

    cxla_type hint = needs_hint(type) ? type : CXLA_TYPE_INVALID;
    cxla_literal *back = NULL;
    CHECK_OK(cxla_npy_read_buffer(buf, len, hint, &back));
    if (back) {
        CHECK(cxla_shape_compatible(cxla_literal_shape(back), cxla_literal_shape(lit)));
        CHECK(cxla_layout_is_default(cxla_literal_shape(back)));
        CHECK_EQ_U64(cxla_literal_byte_size(back), cxla_literal_byte_size(lit));
        size_t n = cxla_literal_byte_size(lit);
        CHECK_MSG(n == 0 || memcmp(cxla_literal_data(back), cxla_literal_data(lit), n) == 0,
                  "%s: data differs after a round trip", cxla_type_name(type));
        cxla_literal_free(back);
    }
    if (needs_hint(type)) {
        /* Without the hint, or with one of the wrong size: an error naming the fix. */
        const char *m = CHECK_ERROR(cxla_npy_read_buffer(buf, len, CXLA_TYPE_INVALID, &back));
        CHECK_HAS(m, "type hint");
        CHECK_HAS(m, cxla_type_name(type));
        m = CHECK_ERROR(cxla_npy_read_buffer(buf, len, CXLA_F64, &back));
        CHECK_HAS(m, "f64");
        CHECK_HAS(m, cxla_type_name(type));
    } else {
        /* A hint is ignored when the descr names the type. */
        CHECK_OK(cxla_npy_read_buffer(buf, len, CXLA_BF16, &back));
        if (back) CHECK(cxla_literal_type(back) == type);
        cxla_literal_free(back);
    }
    free(buf);
    cxla_literal_free(lit);
}

static void test_round_trip_every_type(void) {
    static const int64_t d23[] = {2, 3}, d0[] = {0, 4}, d4[] = {2, 1, 3, 2}, d5[] = {5};
    int types = 0;
    for (int t = 1; t < CXLA_TYPE_COUNT; t++) {
        if (!cxla_type_is_array((cxla_type)t)) continue;
        types++;
        round_trip((cxla_type)t, 2, d23);
        round_trip((cxla_type)t, 0, NULL);
        round_trip((cxla_type)t, 2, d0);
        round_trip((cxla_type)t, 4, d4);
        round_trip((cxla_type)t, 1, d5);
    }
    CHECK(types >= 30);
}

/* The exact bytes np.save writes for a float32 array of shape (2, 3). */
static void test_header_bytes_match_numpy(void) {
    static const int64_t dims[] = {2, 3};
    cxla_shape shape = {.type = CXLA_F32, .rank = 2, .dims = (int64_t *)dims};
    cxla_literal *lit = NULL;
    CHECK_OK(cxla_literal_create(&shape, &lit));
    if (!lit) return;
    float *f = cxla_literal_data(lit);
    for (int i = 0; i < 6; i++) f[i] = (float)i;
    void *buf = NULL;
    size_t len = 0;
    CHECK_OK(cxla_npy_write_buffer(lit, &buf, &len));
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    CHECK_EQ_U64(len, 128 + 24);
    if (buf && host_little() && len == 152) {
        const char *b = buf;
        CHECK(memcmp(b, "\x93NUMPY\x01\x00\x76\x00", 10) == 0); /* header length 118 */
        CHECK(memcmp(b + 10, dict, strlen(dict)) == 0);
        for (size_t i = 10 + strlen(dict); i < 127; i++) CHECK(b[i] == ' ');
        CHECK(b[127] == '\n');
        CHECK(memcmp(b + 128, f, 24) == 0);
    }
    free(buf);
    cxla_literal_free(lit);

    /* Rank 0 and rank 1: '()' without growth padding, '(5,)'. */
    cxla_literal *s = NULL;
    CHECK_OK(cxla_literal_create_scalar(CXLA_S32, 7, &s));
    if (s) {
        CHECK_OK(cxla_npy_write_buffer(s, &buf, &len));
        CHECK(buf && len == 128 + 4);
        if (buf && len == 128 + 4) {
            CHECK(memcmp((char *)buf + 10,
                         "{'descr': '<i4', 'fortran_order': False, 'shape': (), }", 55) == 0);
            CHECK(((char *)buf)[127] == '\n');
        }
        free(buf);
        cxla_literal_free(s);
    }
    static const int64_t d5[] = {5};
    cxla_shape s5 = {.type = CXLA_U8, .rank = 1, .dims = (int64_t *)d5};
    CHECK_OK(cxla_literal_create(&s5, &s));
    if (s) {
        CHECK_OK(cxla_npy_write_buffer(s, &buf, &len));
        CHECK(buf && strstr((char *)buf + 10, "'descr': '|u1', 'fortran_order': False, "
                                              "'shape': (5,), }") != NULL);
        free(buf);
        cxla_literal_free(s);
    }
}

/* A literal in column-major layout is written in C (logical row-major) order. */
static void test_non_default_layout(void) {
    static const int64_t dims[] = {2, 3};
    int64_t m2m[] = {0, 1};
    cxla_layout layout = {.minor_to_major = m2m};
    cxla_shape shape = {.type = CXLA_S32, .rank = 2, .dims = (int64_t *)dims, .layout = &layout};
    cxla_literal *lit = NULL;
    CHECK_OK(cxla_literal_create(&shape, &lit));
    if (!lit) return;
    int32_t *d = cxla_literal_data(lit);
    for (int64_t i = 0; i < 2; i++) {
        for (int64_t j = 0; j < 3; j++) {
            int64_t idx[2] = {i, j};
            d[cxla_shape_linear_index(cxla_literal_shape(lit), idx)] = (int32_t)(10 * i + j);
        }
    }
    CHECK(d[1] == 10); /* really column-major */
    void *buf = NULL;
    size_t len = 0;
    CHECK_OK(cxla_npy_write_buffer(lit, &buf, &len));
    if (buf) {
        CHECK(len == 128 + 24);
        CHECK(strstr((char *)buf + 10, "'fortran_order': False") != NULL);
        int32_t got[6], want[6] = {0, 1, 2, 10, 11, 12};
        memcpy(got, (char *)buf + len - 24, 24);
        CHECK(memcmp(got, want, 24) == 0);
        cxla_literal *back = NULL;
        CHECK_OK(cxla_npy_read_buffer(buf, len, CXLA_TYPE_INVALID, &back));
        if (back) {
            CHECK(cxla_layout_is_default(cxla_literal_shape(back)));
            CHECK(memcmp(cxla_literal_data(back), want, 24) == 0);
            CHECK(cxla_literal_equal(back, lit));
        }
        cxla_literal_free(back);
    }
    free(buf);
    cxla_literal_free(lit);
}

static void test_files(void) {
    char dir[] = "/tmp/cxla_npy_test_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK_MSG(false, "mkdtemp failed");
        return;
    }
    char path[256];
    snprintf(path, sizeof(path), "%s/a.npy", dir);
    static const int64_t dims[] = {3, 2};
    cxla_literal *lit = make_literal(CXLA_BF16, 2, dims), *back = NULL;
    CHECK_OK(cxla_npy_write_file(path, lit));
    CHECK_OK(cxla_npy_read_file(path, CXLA_BF16, &back));
    if (back) CHECK(cxla_literal_equal(back, lit));
    cxla_literal_free(back);
    /* Errors name the file. */
    const char *m = CHECK_ERROR(cxla_npy_read_file(path, CXLA_TYPE_INVALID, &back));
    CHECK_HAS(m, path);
    CHECK_HAS(m, "bf16");
    FILE *f = fopen(path, "wb");
    fputs("hello", f);
    fclose(f);
    m = CHECK_ERROR(cxla_npy_read_file(path, CXLA_TYPE_INVALID, &back));
    CHECK_HAS(m, path);
    unlink(path);
    cxla_status st = cxla_npy_read_file(path, CXLA_TYPE_INVALID, &back);
    CHECK(cxla_status_code_of(st) == CXLA_STATUS_NOT_FOUND);
    m = test_expect_error(st, __FILE__, __LINE__);
    CHECK_HAS(m, path);
    snprintf(path, sizeof(path), "%s/no/such/dir/b.npy", dir);
    m = CHECK_ERROR(cxla_npy_write_file(path, lit));
    CHECK_HAS(m, path);
    cxla_literal_free(lit);
    rmdir(dir);
}

static void test_write_errors(void) {
    cxla_literal *elems[1] = {NULL}, *tuple = NULL;
    CHECK_OK(cxla_literal_create_scalar(CXLA_F32, 1, &elems[0]));
    CHECK_OK(cxla_literal_create_tuple(elems, 1, &tuple));
    void *buf = NULL;
    size_t len = 0;
    if (tuple) {
        CHECK_ERROR_HAS(cxla_npy_write_buffer(tuple, &buf, &len), "only arrays");
        CHECK(buf == NULL);
    }
    cxla_literal_free(tuple);
    CHECK_ERROR(cxla_npy_write_buffer(NULL, &buf, &len));
}

/* ---------------------------------------------------------------------------------------
 * Hand-built files. */

static void test_versions_and_quotes(void) {
    const int32_t data[6] = {1, 2, 3, 4, 5, 6};
    const char *headers[] = {
        "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }          \n",
        "{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (2, 3)}\n",
        "{'shape':(2,3),'fortran_order':False,'descr':'<i4'}",
        "  { 'fortran_order' : False , 'descr' : \"<i4\" , 'shape' : ( 2 , 3 , ) , } \n\n",
        "{'descr': 'i4', 'fortran_order': False, 'shape': (2L, 3L), }\n", /* Python 2 */
        "{'descr':\t'=i4',\n'fortran_order': False,\r\n'shape': (2, 3)}",
    };
    for (size_t h = 0; h < CXLA_ARRAY_SIZE(headers); h++) {
        for (int major = 1; major <= 3; major++) {
            if (major == 3 && strstr(headers[h], "L,")) continue; /* no 'L' in 3.0 */
            size_t len;
            uint8_t *b = build_npy(major, 0, headers[h], data, sizeof(data), &len);
            cxla_literal *lit = NULL;
            CHECK_OK(cxla_npy_read_buffer(b, len, CXLA_TYPE_INVALID, &lit));
            if (lit) {
                static const int64_t dims[] = {2, 3};
                check_dims(lit, CXLA_S32, 2, dims);
                CHECK(memcmp(cxla_literal_data(lit), data, sizeof(data)) == 0);
            }
            cxla_literal_free(lit);
            free(b);
        }
    }
    /* A v3 header may hold UTF-8; in a key it is still an unknown key. */
    size_t len;
    uint8_t *b = build_npy(3, 0, "{'descr': '<i4', 'fortran_order': False, 'shap\xc3\xa9': (1,)}",
                           data, 4, &len);
    cxla_literal *lit = NULL;
    CHECK_ERROR_HAS(cxla_npy_read_buffer(b, len, CXLA_TYPE_INVALID, &lit), "unexpected key");
    free(b);
}

static void test_big_endian(void) {
    /* >i4 1, 2 / >f8 1.5 / >c8 (1, -2) / >f2 1.0 / >u2 0x1234 / >V2 bf16 1.0 */
    const uint8_t i4[] = {0, 0, 0, 1, 0, 0, 0, 2};
    cxla_literal *lit = read_v1("{'descr': '>i4', 'fortran_order': False, 'shape': (2,)}", i4,
                                sizeof(i4), CXLA_TYPE_INVALID);
    if (lit) {
        int32_t *v = cxla_literal_data(lit);
        CHECK(v[0] == 1 && v[1] == 2);
    }
    cxla_literal_free(lit);
    const uint8_t f8[] = {0x3f, 0xf8, 0, 0, 0, 0, 0, 0};
    lit =
        read_v1("{'descr': '>f8', 'fortran_order': False, 'shape': ()}", f8, 8, CXLA_TYPE_INVALID);
    if (lit) CHECK(*(double *)cxla_literal_data(lit) == 1.5);
    cxla_literal_free(lit);
    const uint8_t c8[] = {0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0};
    lit = read_v1("{'descr': '>c8', 'fortran_order': False, 'shape': (1,)}", c8, 8,
                  CXLA_TYPE_INVALID);
    if (lit) {
        float *v = cxla_literal_data(lit);
        CHECK(v[0] == 1.0f && v[1] == -2.0f);
    }
    cxla_literal_free(lit);
    const uint8_t c16[] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0};
    lit = read_v1("{'descr': '>c16', 'fortran_order': False, 'shape': (1,)}", c16, 16,
                  CXLA_TYPE_INVALID);
    if (lit) {
        double *v = cxla_literal_data(lit);
        CHECK(v[0] == 1.0 && v[1] == 2.0);
    }
    cxla_literal_free(lit);
    const uint8_t f2[] = {0x3c, 0x00};
    lit =
        read_v1("{'descr': '>f2', 'fortran_order': False, 'shape': ()}", f2, 2, CXLA_TYPE_INVALID);
    if (lit) {
        CHECK(cxla_literal_type(lit) == CXLA_F16);
        uint16_t v;
        memcpy(&v, cxla_literal_data(lit), 2);
        CHECK_EQ_U64(v, 0x3c00);
    }
    cxla_literal_free(lit);
    const uint8_t u8be[] = {1, 2, 3, 4, 5, 6, 7, 8};
    lit = read_v1("{'descr': '>u8', 'fortran_order': False, 'shape': ()}", u8be, 8,
                  CXLA_TYPE_INVALID);
    if (lit) {
        uint64_t v;
        memcpy(&v, cxla_literal_data(lit), 8);
        CHECK_EQ_U64(v, 0x0102030405060708ull);
    }
    cxla_literal_free(lit);
    const uint8_t bf[] = {0x3f, 0x80, 0xc0, 0x00};
    lit = read_v1("{'descr': '>V2', 'fortran_order': False, 'shape': (2,)}", bf, 4, CXLA_BF16);
    if (lit) {
        uint16_t v[2];
        memcpy(v, cxla_literal_data(lit), 4);
        CHECK_EQ_U64(v[0], 0x3f80);
        CHECK_EQ_U64(v[1], 0xc000);
    }
    cxla_literal_free(lit);
    /* '|V2' (what numpy re-saves a loaded void array as): host order. */
    const uint16_t bf_host[] = {0x3f80, 0x4000};
    lit = read_v1("{'descr': '|V2', 'fortran_order': False, 'shape': (2,)}", bf_host, 4, CXLA_BF16);
    if (lit) CHECK(memcmp(cxla_literal_data(lit), bf_host, 4) == 0);
    cxla_literal_free(lit);
    /* One-byte types ignore the byte order. */
    const uint8_t i1[] = {0xff, 0x7f};
    lit = read_v1("{'descr': '>i1', 'fortran_order': False, 'shape': (2,)}", i1, 2,
                  CXLA_TYPE_INVALID);
    if (lit) {
        int8_t *v = cxla_literal_data(lit);
        CHECK(v[0] == -1 && v[1] == 127);
    }
    cxla_literal_free(lit);
}

static void test_fortran_order(void) {
    /* 2x3 in Fortran order: column by column. */
    const int16_t f[] = {0, 10, 1, 11, 2, 12};
    const int16_t c[] = {0, 1, 2, 10, 11, 12};
    cxla_literal *lit = read_v1("{'descr': '<i2', 'fortran_order': True, 'shape': (2, 3), }", f,
                                sizeof(f), CXLA_TYPE_INVALID);
    if (lit) CHECK(memcmp(cxla_literal_data(lit), c, sizeof(c)) == 0);
    cxla_literal_free(lit);
    /* 2x3x2, value 100i + 10j + k stored with i fastest. */
    int32_t f3[12], c3[12];
    for (int i = 0; i < 2; i++) {
        for (int j = 0; j < 3; j++) {
            for (int k = 0; k < 2; k++) {
                f3[i + 2 * j + 6 * k] = 100 * i + 10 * j + k;
                c3[6 * i + 2 * j + k] = 100 * i + 10 * j + k;
            }
        }
    }
    lit = read_v1("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3, 2), }", f3, sizeof(f3),
                  CXLA_TYPE_INVALID);
    if (lit) CHECK(memcmp(cxla_literal_data(lit), c3, sizeof(c3)) == 0);
    cxla_literal_free(lit);
    /* Big-endian and Fortran together, complex. */
    const uint8_t fc[] = {0x3f, 0x80, 0, 0, 0, 0, 0, 0, 0x40, 0,    0, 0, 0, 0, 0, 0,
                          0x40, 0x40, 0, 0, 0, 0, 0, 0, 0x40, 0x80, 0, 0, 0, 0, 0, 0};
    lit = read_v1("{'descr': '>c8', 'fortran_order': True, 'shape': (2, 2), }", fc, sizeof(fc),
                  CXLA_TYPE_INVALID);
    if (lit) {
        float *v = cxla_literal_data(lit);
        /* file order (0,0)=1 (1,0)=2 (0,1)=3 (1,1)=4 */
        CHECK(v[0] == 1 && v[2] == 3 && v[4] == 2 && v[6] == 4);
        CHECK(v[1] == 0 && v[7] == 0);
    }
    cxla_literal_free(lit);
    /* Rank 1 and rank 0 in Fortran order are the same as C order. */
    lit = read_v1("{'descr': '<i2', 'fortran_order': True, 'shape': (6,), }", f, sizeof(f),
                  CXLA_TYPE_INVALID);
    if (lit) CHECK(memcmp(cxla_literal_data(lit), f, sizeof(f)) == 0);
    cxla_literal_free(lit);
    lit = read_v1("{'descr': '<i2', 'fortran_order': True, 'shape': (0, 3), }", NULL, 0,
                  CXLA_TYPE_INVALID);
    if (lit) CHECK(cxla_literal_element_count(lit) == 0);
    cxla_literal_free(lit);
}

static void test_special_types(void) {
    /* bool bytes other than 0/1 become 1. */
    const uint8_t b1[] = {0, 1, 2, 255};
    cxla_literal *lit = read_v1("{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }", b1, 4,
                                CXLA_TYPE_INVALID);
    if (lit) {
        const uint8_t want[] = {0, 1, 1, 1};
        CHECK(cxla_literal_type(lit) == CXLA_PRED);
        CHECK(memcmp(cxla_literal_data(lit), want, 4) == 0);
    }
    cxla_literal_free(lit);
    /* ml_dtypes int4 stores the value in the low nibble; upper bits are ignored. */
    const uint8_t s4[] = {0x0f, 0x08, 0x07, 0xf1, 0x00};
    lit = read_v1("{'descr': '<V1', 'fortran_order': False, 'shape': (5,), }", s4, 5, CXLA_S4);
    if (lit) {
        const int8_t want[] = {-1, -8, 7, 1, 0};
        CHECK(cxla_literal_type(lit) == CXLA_S4);
        CHECK(memcmp(cxla_literal_data(lit), want, 5) == 0);
        /* Written back as ml_dtypes writes it: low nibble, upper bits zero. */
        void *buf = NULL;
        size_t len = 0;
        CHECK_OK(cxla_npy_write_buffer(lit, &buf, &len));
        if (buf) {
            const uint8_t file[] = {0x0f, 0x08, 0x07, 0x01, 0x00};
            CHECK(len > 5 && memcmp((uint8_t *)buf + len - 5, file, 5) == 0);
            CHECK(strstr((char *)buf + 10, "'descr': '<V1'") != NULL);
        }
        free(buf);
    }
    cxla_literal_free(lit);
    lit = read_v1("{'descr': '|V1', 'fortran_order': False, 'shape': (3,), }", s4, 3, CXLA_U4);
    if (lit) {
        const uint8_t want[] = {15, 8, 7};
        CHECK(memcmp(cxla_literal_data(lit), want, 3) == 0);
    }
    cxla_literal_free(lit);
    lit = read_v1("{'descr': '|V1', 'fortran_order': False, 'shape': (4,), }", s4, 4, CXLA_S2);
    if (lit) {
        const int8_t want[] = {-1, 0, -1, 1};
        CHECK(memcmp(cxla_literal_data(lit), want, 4) == 0);
    }
    cxla_literal_free(lit);
    lit =
        read_v1("{'descr': '|V1', 'fortran_order': False, 'shape': (4,), }", s4, 4, CXLA_F4E2M1FN);
    if (lit) {
        const uint8_t want[] = {0x0f, 0x08, 0x07, 0x01};
        CHECK(memcmp(cxla_literal_data(lit), want, 4) == 0);
    }
    cxla_literal_free(lit);
    /* '<f1' is how np.save writes ml_dtypes.float8_e5m2: no hint needed. */
    const uint8_t e5m2[] = {0x3c, 0xc0};
    lit = read_v1("{'descr': '<f1', 'fortran_order': False, 'shape': (2,), }", e5m2, 2,
                  CXLA_TYPE_INVALID);
    if (lit) {
        CHECK(cxla_literal_type(lit) == CXLA_F8E5M2);
        CHECK(memcmp(cxla_literal_data(lit), e5m2, 2) == 0);
    }
    cxla_literal_free(lit);
    /* A V hint may be any type of that size (s16 from V2, c64 from V8). */
    const uint8_t v8[] = {0, 0, 0x80, 0x3f, 0, 0, 0, 0x40};
    lit = read_v1("{'descr': '<V8', 'fortran_order': False, 'shape': (), }", v8, 8, CXLA_C64);
    if (lit) {
        float *v = cxla_literal_data(lit);
        if (host_little()) CHECK(v[0] == 1.0f && v[1] == 2.0f);
    }
    cxla_literal_free(lit);
    /* Trailing bytes after the data are ignored, as np.load does. */
    const uint8_t extra[] = {1, 2, 3, 4, 5, 6, 7};
    lit = read_v1("{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", extra, 7,
                  CXLA_TYPE_INVALID);
    if (lit) {
        CHECK(cxla_literal_element_count(lit) == 3);
        CHECK(memcmp(cxla_literal_data(lit), extra, 3) == 0);
    }
    cxla_literal_free(lit);
    /* Zero-size arrays with huge other dims are fine (no data needed). */
    lit = read_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 9223372036854775807), }",
                  NULL, 0, CXLA_TYPE_INVALID);
    cxla_literal_free(lit);
}

/* ---------------------------------------------------------------------------------------
 * Malformed input. */

static void test_truncated_everywhere(void) {
    static const int64_t dims[] = {2, 3};
    cxla_literal *lit = make_literal(CXLA_C64, 2, dims);
    void *buf = NULL;
    size_t len = 0;
    CHECK_OK(cxla_npy_write_buffer(lit, &buf, &len));
    cxla_literal_free(lit);
    if (!buf) return;
    for (size_t cut = 0; cut < len; cut++) {
        /* A copy of exactly |cut| bytes so that ASan sees any read past it. */
        uint8_t *b = malloc(cut ? cut : 1);
        memcpy(b, buf, cut);
        cxla_literal *out = NULL;
        cxla_status st = cxla_npy_read_buffer(b, cut, CXLA_TYPE_INVALID, &out);
        CHECK_MSG(st != NULL && out == NULL, "cut at %zu: no error", cut);
        CHECK_MSG(cxla_status_code_of(st) == CXLA_STATUS_DATA_LOSS, "cut at %zu: %s", cut,
                  cxla_status_message(st));
        if (cut == len - 1) CHECK_HAS(cxla_status_message(st), "needs 48 bytes");
        cxla_status_free(st);
        free(b);
    }
    free(buf);
}

static void test_bad_prefix(void) {
    cxla_literal *lit = NULL;
    const char *m =
        CHECK_ERROR(cxla_npy_read_buffer("\x93NUMPX\x01\x00\x00\x00", 10, CXLA_TYPE_INVALID, &lit));
    CHECK_HAS(m, "magic");
    m = CHECK_ERROR(cxla_npy_read_buffer("PK\x03\x04", 4, CXLA_TYPE_INVALID, &lit));
    CHECK_HAS(m, "magic");
    m = CHECK_ERROR(cxla_npy_read_buffer(NULL, 0, CXLA_TYPE_INVALID, &lit));
    CHECK_HAS(m, "truncated");
    const char *hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (), }";
    const float one = 1;
    size_t len;
    for (int v = 0; v < 3; v++) {
        int major = v == 0 ? 4 : v == 1 ? 0 : 1, minor = v == 2 ? 1 : 0;
        uint8_t *b = build_npy(major == 4 ? 2 : major, minor, hdr, &one, 4, &len);
        b[6] = (uint8_t)major;
        cxla_status st = cxla_npy_read_buffer(b, len, CXLA_TYPE_INVALID, &lit);
        CHECK(cxla_status_code_of(st) == CXLA_STATUS_UNIMPLEMENTED);
        m = test_expect_error(st, __FILE__, __LINE__);
        CHECK_HAS(m, "version");
        free(b);
    }
    /* A header length past the end. */
    uint8_t *b = build_npy(1, 0, hdr, &one, 4, &len);
    b[8] = 0xff;
    b[9] = 0x7f;
    cxla_status st = cxla_npy_read_buffer(b, len, CXLA_TYPE_INVALID, &lit);
    CHECK(cxla_status_code_of(st) == CXLA_STATUS_DATA_LOSS);
    CHECK_HAS(test_expect_error(st, __FILE__, __LINE__), "32767");
    free(b);
    b = build_npy(2, 0, hdr, &one, 4, &len);
    b[11] = 0xff; /* ~4 GiB */
    st = cxla_npy_read_buffer(b, len, CXLA_TYPE_INVALID, &lit);
    CHECK(cxla_status_code_of(st) == CXLA_STATUS_DATA_LOSS);
    cxla_status_free(st);
    free(b);
    CHECK(lit == NULL);
}

static void test_bad_headers(void) {
    const uint8_t data[64] = {0};
    const cxla_type none = CXLA_TYPE_INVALID;
    const cxla_status_code bad = CXLA_STATUS_INVALID_ARGUMENT;
    struct {
        const char *header;
        const char *expect;
    } cases[] = {
        {"", "not a dict"},
        {"[1, 2]", "not a dict"},
        {"'descr'", "not a dict"},
        {"{", "unterminated"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': ()", "expected ',' or '}'"},
        {"{'descr': '<f4', 'fortran_order': False}", "missing key 'shape'"},
        {"{}", "missing key 'descr' 'fortran_order' 'shape'"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}", "duplicate"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (), 'extra': 1}", "unexpected key"},
        {"{descr: '<f4', 'fortran_order': False, 'shape': ()}", "quoted string"},
        {"{'descr' '<f4', 'fortran_order': False, 'shape': ()}", "expected ':'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': ()} x", "after the header dict"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': ()}}", "after the header dict"},
        {"{'descr': '<f4, 'fortran_order': False, 'shape': ()}", "expected ',' or '}'"},
        {"{'descr': '<f4\n', 'fortran_order': False, 'shape': ()}", "unterminated string"},
        {"{'descr': '<\\x66', 'fortran_order': False, 'shape': ()}", "escape"},
        {"{'descr': '<f4', 'fortran_order': 0, 'shape': ()}", "True or False"},
        {"{'descr': '<f4', 'fortran_order': 'False', 'shape': ()}", "True or False"},
        {"{'descr': '<f4', 'fortran_order': true, 'shape': ()}", "True or False"},
        {"{'descr': '<f4', 'fortran_order': Falsey, 'shape': ()}", "True or False"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': ((2, 3),)}", "nested"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': ((2, 3))}", "nested"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}", "not a list"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': 6}", "tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (6)}", "(n,)"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (,)}", "integer dimension"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", "expected ',' or ')'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,, 3)}", "integer dimension"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-3,)}", "negative"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,)}", "decimal"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (0x10,)}", "decimal"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", "too large"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2", "expected ',' or ')'"},
        {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': ()}", "structured"},
        {"{'descr': ('<f4', (2,)), 'fortran_order': False, 'shape': ()}", "subarray"},
        {"{'descr': 4, 'fortran_order': False, 'shape': ()}", "must be a string"},
        {"{'descr': '<f4\0', 'fortran_order': False, 'shape': ()}", "unterminated"},
    };
    for (size_t i = 0; i < CXLA_ARRAY_SIZE(cases); i++) {
        const char *m = error_v1(cases[i].header, data, sizeof(data), none, bad);
        CHECK_MSG(strstr(m, cases[i].expect) != NULL, "header %s: message lacks \"%s\": %s",
                  cases[i].header, cases[i].expect, m);
        CHECK_HAS(m, "npy header");
    }
    /* Rank 65. */
    char big[1024] = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
    for (int i = 0; i < 65; i++) strcat(big, "1, ");
    strcat(big, ")}");
    CHECK_HAS(error_v1(big, data, 4, none, bad), "more than 64 dimensions");
    /* NUL bytes in the header (past the C string): build by hand. */
    const char hdr[] = "{'descr': '<f4', 'fortran_order': False, 'shape': ()}\0\0";
    uint8_t *b = malloc(10 + sizeof(hdr) - 1 + 4);
    memcpy(b, "\x93NUMPY\x01\x00", 8);
    b[8] = (uint8_t)(sizeof(hdr) - 1);
    b[9] = 0;
    memcpy(b + 10, hdr, sizeof(hdr) - 1);
    memset(b + 10 + sizeof(hdr) - 1, 0, 4);
    cxla_literal *lit = NULL;
    CHECK_ERROR_HAS(cxla_npy_read_buffer(b, 10 + sizeof(hdr) - 1 + 4, none, &lit),
                    "after the header dict");
    free(b);
}

static void test_bad_descrs(void) {
    const uint8_t data[64] = {0};
    struct {
        const char *descr;
        const char *expect;
    } cases[] = {
        {"<f3", "no cxla type"},     {"<i3", "no cxla type"},     {"<i16", "no cxla type"},
        {"|b2", "no cxla type"},     {"<c4", "no cxla type"},     {"<f16", "long double"},
        {"<f12", "long double"},     {"<c32", "complex long"},    {"<c24", "complex long"},
        {"|O", "Python objects"},    {"|O8", "Python objects"},   {"|S3", "strings"},
        {"<U5", "strings"},          {"|a4", "strings"},          {"<M8[ns]", "datetime"},
        {"<m8[s]", "datetime"},      {"", "no type code"},        {"<", "no type code"},
        {"x4", "unknown type code"}, {"<f", "item size"},         {"<f4 ", "item size"},
        {"float32", "item size"},    {"<f99999999", "too large"}, {"|V0", "zero-size"},
        {"<f4<", "item size"},
    };
    for (size_t i = 0; i < CXLA_ARRAY_SIZE(cases); i++) {
        char header[128];
        snprintf(header, sizeof(header), "{'descr': '%s', 'fortran_order': False, 'shape': ()}",
                 cases[i].descr);
        const char *m =
            error_v1(header, data, sizeof(data), CXLA_TYPE_INVALID, CXLA_STATUS_INVALID_ARGUMENT);
        CHECK_MSG(strstr(m, cases[i].expect) != NULL, "descr %s: message lacks \"%s\": %s",
                  cases[i].descr, cases[i].expect, m);
        char quoted[64];
        snprintf(quoted, sizeof(quoted), "'%s'", cases[i].descr);
        if (cases[i].descr[0]) CHECK_HAS(m, quoted);
    }
    /* Void types: a hint is needed, of the right size. */
    const char *v2 = "{'descr': '<V2', 'fortran_order': False, 'shape': ()}";
    const char *m = error_v1(v2, data, 2, CXLA_TYPE_INVALID, CXLA_STATUS_INVALID_ARGUMENT);
    CHECK_HAS(m, "'<V2'");
    CHECK_HAS(m, "type hint");
    CHECK_HAS(m, "bf16");
    CHECK_HAS(m, "f16");
    m = error_v1(v2, data, 2, CXLA_F32, CXLA_STATUS_INVALID_ARGUMENT);
    CHECK_HAS(m, "f32");
    CHECK_HAS(m, "bf16");
    m = error_v1(v2, data, 2, CXLA_TUPLE, CXLA_STATUS_INVALID_ARGUMENT);
    CHECK_HAS(m, "type hint");
    m = error_v1("{'descr': '<V3', 'fortran_order': False, 'shape': ()}", data, 3, CXLA_BF16,
                 CXLA_STATUS_INVALID_ARGUMENT);
    CHECK_HAS(m, "none");
}

static void test_bad_sizes(void) {
    const uint8_t data[64] = {0};
    /* The element count overflows int64. */
    const char *m =
        error_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4)}",
                 data, sizeof(data), CXLA_TYPE_INVALID, CXLA_STATUS_INVALID_ARGUMENT);
    CHECK_HAS(m, "overflows");
    CHECK_HAS(m, "(4294967296, 4294967296, 4)");
    /* The byte size overflows. */
    m = error_v1("{'descr': '<c16', 'fortran_order': False, 'shape': (9223372036854775807,)}", data,
                 sizeof(data), CXLA_TYPE_INVALID, CXLA_STATUS_INVALID_ARGUMENT);
    CHECK_HAS(m, "overflows");
    /* Huge but representable: the file is too short. */
    m = error_v1("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000)}", data,
                 sizeof(data), CXLA_TYPE_INVALID, CXLA_STATUS_DATA_LOSS);
    CHECK_HAS(m, "8000000000000 bytes");
    CHECK_HAS(m, "has 64");
    m = error_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", data, 8,
                 CXLA_TYPE_INVALID, CXLA_STATUS_DATA_LOSS);
    CHECK_HAS(m, "needs 24 bytes");
    CHECK_HAS(m, "has 8");
    CHECK_HAS(m, "(2, 3)");
    CHECK_HAS(m, "'<f4'");
}

/* ---------------------------------------------------------------------------------------
 * Cross-check with numpy (skipped when /usr/bin/python3 cannot import numpy). */

static const char numpy_writer[] =
    "import sys, numpy as np\n"
    "out = sys.argv[1]\n"
    "types = ['|b1', '|i1', '<i2', '>i2', '<i4', '>i4', '<i8', '>i8', '|u1', '<u2', '>u2',\n"
    "         '<u4', '>u4', '<u8', '>u8', '<f2', '>f2', '<f4', '>f4', '<f8', '>f8', '<c8',\n"
    "         '>c8', '<c16', '>c16']\n"
    "shapes = [(), (5,), (2, 3), (2, 3, 4), (0, 3), (3, 1, 2, 2)]\n"
    "lines = []\n"
    "i = 0\n"
    "for t in types:\n"
    "    for shape in shapes:\n"
    "        for order in 'CF':\n"
    "            n = int(np.prod(shape, dtype=np.int64))\n"
    "            k = np.arange(n, dtype=np.int64)\n"
    "            kind = t[1]\n"
    "            if kind == 'b': v = (k % 3 == 0)\n"
    "            elif kind in 'iu': v = k * 37 - 50\n"
    "            elif kind == 'f': v = (k - n // 2) * 0.25\n"
    "            else: v = (k - n // 2) * 0.25 + 1j * (k * 0.5)\n"
    "            a = v.astype(t).reshape(shape)\n"
    "            if order == 'F' and len(shape) > 1: a = np.asfortranarray(a)\n"
    "            name = '%d.npy' % i\n"
    "            np.save(out + '/' + name, a)\n"
    "            lines.append(' '.join([name, t, order, str(len(shape))] + [str(d) for d in "
    "shape]))\n"
    "            i += 1\n"
    "open(out + '/manifest.txt', 'w').write('\\n'.join(lines) + '\\n')\n";

static const char numpy_checker[] =
    "import sys, io, numpy as np\n"
    "d = sys.argv[1]\n"
    "bad = 0\n"
    "count = 0\n"
    "def expect(t, n):\n"
    "    k = np.arange(n, dtype=np.int64)\n"
    "    kind = t[1]\n"
    "    if kind == 'b': return (k % 3 == 0)\n"
    "    if kind in 'iu': return k * 37 - 50\n"
    "    if kind == 'f': return (k - n // 2) * 0.25\n"
    "    return (k - n // 2) * 0.25 + 1j * (k * 0.5)\n"
    "for line in open(d + '/cx_manifest.txt'):\n"
    "    f = line.split()\n"
    "    name, kind, descr, bits, rank = f[0], f[1], f[2], int(f[3]), int(f[4])\n"
    "    shape = tuple(int(x) for x in f[5:5 + rank])\n"
    "    n = int(np.prod(shape, dtype=np.int64))\n"
    "    raw = open(d + '/' + name, 'rb').read()\n"
    "    a = np.load(d + '/' + name)\n"
    "    count += 1\n"
    "    if a.shape != shape:\n"
    "        print('BAD shape', name, a.shape, shape); bad += 1; continue\n"
    "    if (\"'descr': '%s'\" % descr).encode() not in raw[:200]:\n"
    "        print('BAD descr', name, raw[:120]); bad += 1; continue\n"
    "    if kind == 'native':\n"
    "        e = expect(descr, n).astype(descr).reshape(shape)\n"
    "        buf = io.BytesIO(); np.save(buf, e)\n"
    "        if buf.getvalue() != raw: print('BAD bytes', name, raw[:130], buf.getvalue()[:130]); "
    "bad += 1\n"
    "        if a.dtype != np.dtype(descr) or not np.array_equal(a, e): print('BAD values', "
    "name, a, e); bad += 1\n"
    "    else:\n"
    "        size = a.dtype.itemsize\n"
    "        if a.dtype.kind != 'V' or size != int(descr[2:]): print('BAD dtype', name, "
    "a.dtype); bad += 1; continue\n"
    "        got = a.reshape(-1).view('<u%d' % size).astype(np.int64)\n"
    "        k = np.arange(n, dtype=np.int64)\n"
    "        if size == 2: e = 0x3f80 + k\n"
    "        elif bits == 8: e = (k * 29 + 3) & 0xff\n"
    "        else: e = (k * 5 + 1) & ((1 << bits) - 1)\n"
    "        if not np.array_equal(got, e): print('BAD bits', name, got, e); bad += 1\n"
    "print('numpy checked %d files, %d bad' % (count, bad))\n"
    "sys.exit(1 if bad or count == 0 else 0)\n";

static bool numpy_available(void) {
    return system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
}

static bool write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) return false;
    fputs(text, f);
    return fclose(f) == 0;
}

static cxla_type type_of_descr(const char *t) {
    static const struct {
        const char *d;
        cxla_type type;
    } map[] = {{"b1", CXLA_PRED}, {"i1", CXLA_S8},   {"i2", CXLA_S16}, {"i4", CXLA_S32},
               {"i8", CXLA_S64},  {"u1", CXLA_U8},   {"u2", CXLA_U16}, {"u4", CXLA_U32},
               {"u8", CXLA_U64},  {"f2", CXLA_F16},  {"f4", CXLA_F32}, {"f8", CXLA_F64},
               {"c8", CXLA_C64},  {"c16", CXLA_C128}};
    for (size_t i = 0; i < CXLA_ARRAY_SIZE(map); i++)
        if (strcmp(t + 1, map[i].d) == 0) return map[i].type;
    return CXLA_TYPE_INVALID;
}

/* numpy writes, cxla reads. */
static void check_numpy_files(const char *dir) {
    char path[512];
    snprintf(path, sizeof(path), "%s/manifest.txt", dir);
    FILE *f = fopen(path, "r");
    CHECK_MSG(f != NULL, "numpy wrote no manifest");
    if (!f) return;
    char name[64], t[16], order[4];
    int rank, files = 0;
    while (fscanf(f, "%63s %15s %3s %d", name, t, order, &rank) == 4) {
        int64_t dims[8] = {0};
        for (int i = 0; i < rank; i++) {
            long long d = 0;
            if (fscanf(f, "%lld", &d) != 1) break;
            dims[i] = d;
        }
        files++;
        cxla_type type = type_of_descr(t);
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        cxla_literal *lit = NULL;
        CHECK_OK(cxla_npy_read_file(path, CXLA_TYPE_INVALID, &lit));
        if (!lit) continue;
        if (!check_dims(lit, type, rank, dims)) {
            cxla_literal_free(lit);
            continue;
        }
        int64_t n = cxla_literal_element_count(lit);
        size_t st = cxla_type_storage(type);
        const uint8_t *p = cxla_literal_data(lit);
        int bad = 0;
        for (int64_t k = 0; k < n; k++, p += st) {
            char kind = t[1];
            if (kind == 'b') {
                bad += p[0] != (k % 3 == 0);
            } else if (kind == 'i' || kind == 'u') {
                uint64_t want = (uint64_t)(k * 37 - 50), got;
                if (kind == 'i') {
                    got = (uint64_t)cxla_load_s64(type, p);
                } else {
                    got = cxla_load_u64(type, p);
                }
                if (st < 8) {
                    want &= ((uint64_t)1 << (8 * st)) - 1;
                    got &= ((uint64_t)1 << (8 * st)) - 1;
                }
                bad += got != want;
            } else if (kind == 'f') {
                bad += cxla_load_f64(type, p) != (double)(k - n / 2) * 0.25;
            } else {
                double re, im;
                cxla_load_c128(type, p, &re, &im);
                bad += re != (double)(k - n / 2) * 0.25 || im != (double)k * 0.5;
            }
        }
        CHECK_MSG(bad == 0, "%s (%s, order %s): %d wrong values", name, t, order, bad);
        cxla_literal_free(lit);
    }
    fclose(f);
    CHECK_MSG(files == 25 * 6 * 2, "numpy wrote %d files", files);
}

/* cxla writes, numpy reads (and compares np.save's bytes for its own types). */
static void write_cxla_files(const char *dir) {
    char path[512];
    snprintf(path, sizeof(path), "%s/cx_manifest.txt", dir);
    FILE *manifest = fopen(path, "w");
    if (!manifest) {
        CHECK_MSG(false, "cannot write %s", path);
        return;
    }
    static const int64_t shapes[][4] = {{0}, {5}, {2, 3}, {2, 3, 4}, {0, 3}, {3, 1, 2, 2}};
    static const int ranks[] = {0, 1, 2, 3, 2, 4};
    for (int t = 1; t < CXLA_TYPE_COUNT; t++) {
        cxla_type type = (cxla_type)t;
        if (!cxla_type_is_array(type)) continue;
        for (size_t s = 0; s < CXLA_ARRAY_SIZE(ranks); s++) {
            cxla_shape shape = {.type = type, .rank = ranks[s], .dims = (int64_t *)shapes[s]};
            cxla_literal *lit = NULL;
            CHECK_OK(cxla_literal_create(&shape, &lit));
            if (!lit) continue;
            int64_t n = cxla_literal_element_count(lit);
            uint8_t *p = cxla_literal_data(lit);
            size_t st = cxla_type_storage(type);
            bool native = !needs_hint(type);
            for (int64_t k = 0; k < n; k++, p += st) {
                if (native && type != CXLA_PRED && !cxla_type_is_complex(type) &&
                    !cxla_type_is_float(type)) {
                    cxla_store_s64(type, p, k * 37 - 50);
                } else if (type == CXLA_PRED) {
                    p[0] = k % 3 == 0;
                } else if (native && cxla_type_is_float(type)) {
                    cxla_store_f64(type, p, (double)(k - n / 2) * 0.25);
                } else if (native) {
                    cxla_store_c128(type, p, (double)(k - n / 2) * 0.25, (double)k * 0.5);
                } else if (st == 2) {
                    uint16_t v = (uint16_t)(0x3f80 + k);
                    memcpy(p, &v, 2);
                } else if (cxla_type_bits(type) == 8) {
                    p[0] = (uint8_t)((k * 29 + 3) & 0xff);
                } else {
                    /* Sub-byte: the bits (k * 5 + 1) in the low bits, sign-extended for the
                     * signed types as cxla stores them. */
                    unsigned bits = (unsigned)cxla_type_bits(type);
                    uint8_t mask = (uint8_t)((1u << bits) - 1), v = (uint8_t)((k * 5 + 1) & mask);
                    if (cxla_type_is_signed(type) && (v & (1u << (bits - 1))))
                        v = (uint8_t)(v | (uint8_t)~mask);
                    p[0] = v;
                }
            }
            char descr[64];
            expected_descr(type, descr);
            char *q = strchr(descr + 9, '\'');
            char d[16] = {0};
            if (q) sscanf(q + 1, "%15[^']", d);
            snprintf(path, sizeof(path), "%s/cx_%s_%zu.npy", dir, cxla_type_name(type), s);
            CHECK_OK(cxla_npy_write_file(path, lit));
            fprintf(manifest, "cx_%s_%zu.npy %s %s %d %d", cxla_type_name(type), s,
                    native ? "native" : "ml", d, cxla_type_bits(type), ranks[s]);
            for (int i = 0; i < ranks[s]; i++) fprintf(manifest, " %lld", (long long)shapes[s][i]);
            fprintf(manifest, "\n");
            cxla_literal_free(lit);
        }
    }
    /* A column-major literal: numpy must see it in logical order. */
    static const int64_t dims[] = {2, 3};
    int64_t m2m[] = {0, 1};
    cxla_layout layout = {.minor_to_major = m2m};
    cxla_shape shape = {.type = CXLA_S16, .rank = 2, .dims = (int64_t *)dims, .layout = &layout};
    cxla_literal *lit = NULL;
    CHECK_OK(cxla_literal_create(&shape, &lit));
    if (lit) {
        for (int64_t k = 0; k < 6; k++) {
            int64_t idx[2] = {k / 3, k % 3};
            CHECK_OK(cxla_literal_set_s64(lit, idx, k * 37 - 50));
        }
        snprintf(path, sizeof(path), "%s/cx_layout.npy", dir);
        CHECK_OK(cxla_npy_write_file(path, lit));
        fprintf(manifest, "cx_layout.npy native <i2 16 2 2 3\n");
        cxla_literal_free(lit);
    }
    fclose(manifest);
}

static void test_numpy_cross_check(void) {
    if (!numpy_available()) {
        printf("test_numpy_cross_check: skipped: /usr/bin/python3 cannot import numpy "
               "(install python3-numpy)\n");
        return;
    }
    if (!host_little()) {
        printf("test_numpy_cross_check: skipped: the checks assume a little-endian host\n");
        return;
    }
    char dir[] = "/tmp/cxla_npy_numpy_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK_MSG(false, "mkdtemp failed");
        return;
    }
    char path[512], cmd[1200];
    snprintf(path, sizeof(path), "%s/writer.py", dir);
    CHECK(write_text(path, numpy_writer));
    snprintf(cmd, sizeof(cmd), "/usr/bin/python3 %s %s", path, dir);
    CHECK_MSG(system(cmd) == 0, "numpy writer failed: %s", cmd);
    check_numpy_files(dir);

    write_cxla_files(dir);
    snprintf(path, sizeof(path), "%s/checker.py", dir);
    CHECK(write_text(path, numpy_checker));
    snprintf(cmd, sizeof(cmd), "/usr/bin/python3 %s %s", path, dir);
    CHECK_MSG(system(cmd) == 0, "numpy rejected files cxla wrote: %s", cmd);

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0) printf("could not remove %s\n", dir);
}

TEST_MAIN(TEST(test_round_trip_every_type), TEST(test_header_bytes_match_numpy),
          TEST(test_non_default_layout), TEST(test_files), TEST(test_write_errors),
          TEST(test_versions_and_quotes), TEST(test_big_endian), TEST(test_fortran_order),
          TEST(test_special_types), TEST(test_truncated_everywhere), TEST(test_bad_prefix),
          TEST(test_bad_headers), TEST(test_bad_descrs), TEST(test_bad_sizes),
          TEST(test_numpy_cross_check))
