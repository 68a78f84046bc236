/* Protocol-buffer wire format: see proto_wire.h. */
#include "hlo/proto_wire.h"

#include <stdlib.h>
#include <string.h>

void pw_init(pw_reader *r, const uint8_t *base, const uint8_t *p, size_t len) {
    r->base = base;
    r->p = p;
    r->end = p ? p + len : p; /* an empty message may have no bytes at all */
}

void pw_sub(const pw_reader *parent, const pw_field *f, pw_reader *out) {
    pw_init(out, parent->base, f->data, f->len);
}

static bool read_varint(const uint8_t **p, const uint8_t *end, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*p >= end) return false;
        uint8_t c = *(*p)++;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false; /* more than 10 bytes */
}

cxla_status pw_next(pw_reader *r, pw_field *f, bool *out_done, const char *what) {
    *out_done = false;
    if (r->p >= r->end) {
        *out_done = true;
        return NULL;
    }
    size_t off = (size_t)(r->p - r->base);
    uint64_t tag;
    if (!read_varint(&r->p, r->end, &tag))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "%s: truncated or overlong field tag at byte %zu", what, off);
    f->number = (uint32_t)(tag >> 3);
    f->wire = (int)(tag & 7);
    f->offset = off;
    if (f->number == 0 || tag >> 3 > 0x1fffffff)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "%s: invalid field number %llu at byte %zu",
                          what, (unsigned long long)(tag >> 3), off);
    size_t left;
    switch (f->wire) {
    case PW_VARINT:
        if (!read_varint(&r->p, r->end, &f->u))
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                              "%s: field %u: truncated varint at byte %zu", what, f->number, off);
        return NULL;
    case PW_I64:
    case PW_I32: {
        size_t n = f->wire == PW_I64 ? 8 : 4;
        if ((size_t)(r->end - r->p) < n)
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                              "%s: field %u: truncated %zu-byte value at byte %zu", what, f->number,
                              n, off);
        f->u = 0;
        for (size_t i = 0; i < n; i++) f->u |= (uint64_t)r->p[i] << (8 * i);
        r->p += n;
        return NULL;
    }
    case PW_LEN: {
        uint64_t len;
        if (!read_varint(&r->p, r->end, &len))
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                              "%s: field %u: truncated length at byte %zu", what, f->number, off);
        left = (size_t)(r->end - r->p);
        if (len > left)
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                              "%s: field %u at byte %zu: length %llu runs past the end (%zu "
                              "bytes left): the file is truncated or not an HLO proto",
                              what, f->number, off, (unsigned long long)len, left);
        f->data = r->p;
        f->len = (size_t)len;
        r->p += len;
        return NULL;
    }
    default:
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "%s: field %u at byte %zu has wire type %d, which HLO protos never "
                          "use (groups or invalid)",
                          what, f->number, off, f->wire);
    }
}

bool pw_is_message(const uint8_t *p, size_t len) {
    pw_reader r;
    pw_init(&r, p, p, len);
    for (;;) {
        pw_field f;
        bool done;
        cxla_status s = pw_next(&r, &f, &done, "");
        if (s) {
            cxla_status_free(s);
            return false;
        }
        if (done) return true;
    }
}

static bool ints_push(pw_ints *a, int64_t x) {
    if (a->n == a->cap) {
        int64_t cap = a->cap ? a->cap * 2 : 8;
        int64_t *v = realloc(a->v, (size_t)cap * sizeof *v);
        if (!v) return false;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    return true;
}

cxla_status pw_ints_add(pw_ints *a, const pw_reader *r, const pw_field *f, int elem_wire,
                        const char *what) {
    if (f->wire == elem_wire) {
        if (!ints_push(a, (int64_t)f->u))
            return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        return NULL;
    }
    if (f->wire != PW_LEN)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "%s: field %u at byte %zu has wire type %d, expected %d or packed", what,
                          f->number, f->offset, f->wire, elem_wire);
    const uint8_t *p = f->data, *end = f->data + f->len;
    while (p < end) {
        uint64_t v = 0;
        if (elem_wire == PW_VARINT) {
            if (!read_varint(&p, end, &v))
                return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                                  "%s: field %u: truncated packed varint at byte %zu", what,
                                  f->number, (size_t)(p - r->base));
        } else {
            size_t n = elem_wire == PW_I64 ? 8 : 4;
            if ((size_t)(end - p) < n)
                return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                                  "%s: field %u: packed values of %zu bytes do not fill %zu "
                                  "bytes",
                                  what, f->number, n, f->len);
            for (size_t i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
            p += n;
        }
        if (!ints_push(a, (int64_t)v))
            return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    }
    return NULL;
}

void pw_ints_free(pw_ints *a) {
    free(a->v);
    a->v = NULL;
    a->n = a->cap = 0;
}

void pw_put_varint(cxla_strbuf *b, uint64_t v) {
    char buf[10];
    size_t n = 0;
    do {
        uint8_t c = v & 0x7f;
        v >>= 7;
        buf[n++] = (char)(c | (v ? 0x80 : 0));
    } while (v);
    cxla_strbuf_append(b, buf, n);
}

void pw_put_tag(cxla_strbuf *b, uint32_t number, int wire) {
    pw_put_varint(b, ((uint64_t)number << 3) | (uint64_t)wire);
}

void pw_put_int(cxla_strbuf *b, uint32_t number, int64_t v) {
    pw_put_tag(b, number, PW_VARINT);
    pw_put_varint(b, (uint64_t)v);
}

void pw_put_int_opt(cxla_strbuf *b, uint32_t number, int64_t v) {
    if (v) pw_put_int(b, number, v);
}

void pw_put_bytes(cxla_strbuf *b, uint32_t number, const void *data, size_t len) {
    pw_put_tag(b, number, PW_LEN);
    pw_put_varint(b, len);
    if (len) cxla_strbuf_append(b, data, len);
}

void pw_put_str_opt(cxla_strbuf *b, uint32_t number, const char *s) {
    if (s && *s) pw_put_bytes(b, number, s, strlen(s));
}

void pw_put_msg(cxla_strbuf *b, uint32_t number, const cxla_strbuf *msg) {
    if (msg->failed) b->failed = true;
    pw_put_bytes(b, number, msg->data, msg->len);
}

void pw_put_packed(cxla_strbuf *b, uint32_t number, const int64_t *v, int64_t n) {
    if (n <= 0) return;
    cxla_strbuf t;
    cxla_strbuf_init(&t);
    for (int64_t i = 0; i < n; i++) pw_put_varint(&t, (uint64_t)v[i]);
    pw_put_msg(b, number, &t);
    cxla_strbuf_free(&t);
}

void pw_put_fixed32(cxla_strbuf *b, uint32_t number, uint32_t v) {
    pw_put_tag(b, number, PW_I32);
    char buf[4];
    for (int i = 0; i < 4; i++) buf[i] = (char)(v >> (8 * i));
    cxla_strbuf_append(b, buf, 4);
}
