/* dense<...> attributes -> literals: element lists (nested or splat; integers, floats with
 * inf/nan and hex bit patterns, booleans, complex pairs) and hex blobs ("0x..."), in
 * MLIR's layout: row-major, little-endian, one element per storage unit (i1 one byte per
 * element, or bit-packed), a blob of one element being a splat. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "literal/literal_internal.h"
#include "stablehlo/convert_internal.h"

static int hexval(char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* Writes |bits| (the raw pattern of a float or integer of |type|) at |p|. */
static void store_bits(cxla_type type, void *p, uint64_t bits) {
    size_t sz = cxla_type_storage(type);
    if (cxla_type_bits(type) < 8 && cxla_type_is_signed(type)) {
        int b = cxla_type_bits(type);
        int64_t v = (int64_t)(bits << (64 - b)) >> (64 - b);
        cxla_store_s64(type, p, v);
        return;
    }
    memcpy(p, &bits, sz < 8 ? sz : 8); /* little-endian hosts */
}

/* One token as an element component of |type| (a real type) stored at |p|. */
static cxla_status store_token(const mlir_module *mm, const mlir_attr *a, int64_t k, cxla_type type,
                               void *p) {
    const char *s = mm->text + a->tok_pos[k];
    size_t n = a->tok_len[k];
    char buf[128];
    if (n >= sizeof buf) return mlir_error_at(mm, a->tok_pos[k], "number too long");
    memcpy(buf, s, n);
    buf[n] = 0;
    const char *digits = buf[0] == '-' || buf[0] == '+' ? buf + 1 : buf;
    bool is_hex = digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X');
    if (strcmp(buf, "true") == 0 || strcmp(buf, "false") == 0) {
        cxla_store_s64(type, p, buf[0] == 't');
        return NULL;
    }
    if (cxla_type_is_float(type)) {
        if (is_hex) {
            uint64_t bits = strtoull(digits, NULL, 16);
            store_bits(type, p, bits);
            return NULL;
        }
        char *end;
        double v = strtod(buf, &end);
        if (*end) return mlir_error_at(mm, a->tok_pos[k], "bad number '%s'", buf);
        cxla_store_f64(type, p, v);
        return NULL;
    }
    if (type == CXLA_PRED) {
        char *end;
        long long v = strtoll(buf, &end, 0);
        if (*end) return mlir_error_at(mm, a->tok_pos[k], "bad boolean '%s'", buf);
        cxla_store_s64(type, p, v != 0);
        return NULL;
    }
    if (!cxla_type_is_integer(type))
        return mlir_error_at(mm, a->tok_pos[k], "a number for a %s element", cxla_type_name(type));
    char *end;
    errno = 0;
    bool negative = buf[0] == '-';
    long long sv = 0;
    unsigned long long uv = 0;
    if (negative)
        sv = strtoll(buf, &end, 0);
    else
        uv = strtoull(buf, &end, 0);
    if (errno == ERANGE)
        return mlir_error_at(mm, a->tok_pos[k], "integer '%s' does not fit in 64 bits", buf);
    if (*end) {
        /* a float written for an integer tensor, e.g. 1.0e+00: a whole number that an s64
         * holds (the cast of anything else is undefined) */
        double d = strtod(buf, &end);
        if (*end) return mlir_error_at(mm, a->tok_pos[k], "bad integer '%s'", buf);
        if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || d != (double)(int64_t)d)
            return mlir_error_at(mm, a->tok_pos[k], "'%s' is not an integer a %s holds", buf,
                                 cxla_type_name(type));
        cxla_store_s64(type, p, (int64_t)d);
    } else if (negative) {
        cxla_store_s64(type, p, sv);
    } else if (cxla_type_is_signed(type) && cxla_type_bits(type) < 64) {
        cxla_store_s64(type, p, (int64_t)uv);
    } else {
        cxla_store_u64(type, p, (uint64_t)uv);
    }
    return NULL;
}

bool cv_dense_is_splat(const mlir_attr *a, const cxla_shape *shape) {
    if (!cxla_type_is_array(shape->type)) return false;
    int64_t count;
    cxla_status st = cxla_shape_element_count(shape, &count);
    if (st) {
        cxla_status_free(st); /* too many elements: cv_dense_literal says so */
        return false;
    }
    if (count < 2) return false;
    cxla_type t = shape->type;
    if (a->hex) {
        size_t nbytes = a->hex_len / 2;
        bool sub = cxla_type_bits(t) < 8 && t != CXLA_PRED;
        return nbytes == (sub ? 1 : cxla_type_storage(t));
    }
    int per = cxla_type_is_complex(t) ? 2 : 1;
    return a->splat || a->tok_count == per;
}

/* The most bytes a dense value may take when it is built as a literal: only a splat can
 * be bigger than its text, and a constant splat is built as a scalar and a broadcast
 * (constant_op), so this bounds the others (checks' expected values, attributes). */
#define DENSE_MAX_BYTES ((int64_t)256 << 20)

cxla_status cv_dense_literal(const mlir_module *mm, const mlir_attr *a, const cxla_shape *shape,
                             cxla_literal **out) {
    *out = NULL;
    if (!cxla_type_is_array(shape->type))
        return mlir_error_at(mm, a->pos, "a dense value of a non-array type");
    if (shape->dynamic) return mlir_error_at(mm, a->pos, "a dense value of a dynamic shape");
    size_t total;
    if (cxla_shape_byte_size(shape, &total) || total > (size_t)DENSE_MAX_BYTES)
        return mlir_error_at(mm, a->pos,
                             "a dense value of more than %" PRId64
                             " MiB; write a large splat as a constant and a broadcast_in_dim",
                             DENSE_MAX_BYTES >> 20);
    cxla_shape s = *shape;
    s.layout = NULL;
    cxla_literal *lit = NULL;
    CXLA_RETURN_IF_ERROR(cxla_literal_create(&s, &lit));
    int64_t count = cxla_literal_element_count(lit);
    cxla_type t = shape->type;
    size_t esize = cxla_type_storage(t);
    char *data = cxla_literal_data(lit);
    cxla_status st = NULL;
    if (a->hex) {
        size_t nbytes = a->hex_len / 2;
        if (a->hex_len % 2) {
            st = mlir_error_at(mm, a->pos, "odd number of hex digits");
            goto done;
        }
        uint8_t *bytes = malloc(nbytes ? nbytes : 1);
        if (!bytes) {
            st = cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
            goto done;
        }
        for (size_t i = 0; i < nbytes; i++) {
            int hi = hexval(a->hex[2 * i]), lo = hexval(a->hex[2 * i + 1]);
            if (hi < 0 || lo < 0) {
                free(bytes);
                st = mlir_error_at(mm, a->pos, "bad hex digit in a dense value");
                goto done;
            }
            bytes[i] = (uint8_t)(hi * 16 + lo);
        }
        size_t full = (size_t)count * esize;
        bool sub = cxla_type_bits(t) < 8 && t != CXLA_PRED;
        if (nbytes == full && !sub) {
            memcpy(data, bytes, full);
        } else if (nbytes == esize && count > 0) {
            for (int64_t i = 0; i < count; i++) memcpy(data + (size_t)i * esize, bytes, esize);
        } else if (t == CXLA_PRED && nbytes == (size_t)(count + 7) / 8) {
            for (int64_t i = 0; i < count; i++) data[i] = (bytes[i / 8] >> (i % 8)) & 1;
        } else if (sub && (nbytes == (size_t)count || nbytes == 1)) {
            for (int64_t i = 0; i < count; i++) store_bits(t, data + i, bytes[nbytes == 1 ? 0 : i]);
        } else {
            free(bytes);
            st = mlir_error_at(mm, a->pos,
                               "a hex dense value of %zu bytes for %" PRId64 " %s elements", nbytes,
                               count, cxla_type_name(t));
            goto done;
        }
        free(bytes);
        if (t == CXLA_PRED)
            for (int64_t i = 0; i < count; i++) data[i] = data[i] != 0;
        goto done;
    }
    int per = cxla_type_is_complex(t) ? 2 : 1;
    cxla_type comp = cxla_type_component(t);
    size_t csize = cxla_type_storage(comp);
    if (a->tok_count == 0 && count == 0) goto done;
    bool splat = a->splat || (a->tok_count == per && count != 1);
    if (!splat && a->tok_count != count * per) {
        st =
            mlir_error_at(mm, a->pos, "the dense value has %" PRId64 " elements, the type %" PRId64,
                          a->tok_count / per, count);
        goto done;
    }
    if (splat && a->tok_count != per) {
        st = mlir_error_at(mm, a->pos, "a splat dense value needs one element");
        goto done;
    }
    for (int64_t i = 0; i < (splat ? (count ? 1 : 0) : count) && !st; i++)
        for (int k = 0; k < per && !st; k++)
            st =
                store_token(mm, a, i * per + k, comp, data + (size_t)i * esize + (size_t)k * csize);
    if (!st && splat)
        for (int64_t i = 1; i < count; i++) memcpy(data + (size_t)i * esize, data, esize);
done:
    if (st) {
        cxla_literal_free(lit);
        return st;
    }
    *out = lit;
    return NULL;
}
