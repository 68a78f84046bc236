/* Protocol-buffer wire format (internal to proto_read.c and proto_write.c): a bounded
 * reader of fields and a writer into a cxla_strbuf.
 *
 * Why our own instead of protobuf-c: cxla reads and writes a handful of XLA's messages
 * (HloModuleProto and what it holds), and the wire format is four rules (varints, 32- and
 * 64-bit words, length-delimited bytes; packed repeated scalars are bytes of varints or
 * words). A hundred lines of decoder avoid a build-time code generator, a .proto copy
 * kept in step with XLA's, and an optional dependency; the field numbers live as named
 * constants beside the code that reads them (proto_read.c), taken from XLA's
 * xla/xla_data.proto and xla/service/hlo.proto.
 *
 * The reader never reads past its end: every length is checked against what is left, and
 * errors give the byte offset from the start of the outermost buffer. */
#ifndef CXLA_HLO_PROTO_WIRE_H_
#define CXLA_HLO_PROTO_WIRE_H_

#include "base/base.h"

enum { PW_VARINT = 0, PW_I64 = 1, PW_LEN = 2, PW_I32 = 5 };

typedef struct pw_reader {
    const uint8_t *base; /* the outermost buffer, for offsets in errors */
    const uint8_t *p, *end;
} pw_reader;

typedef struct pw_field {
    uint32_t number;
    int wire;
    uint64_t u;          /* VARINT, I64, I32 (the word) */
    const uint8_t *data; /* LEN */
    size_t len;
    size_t offset; /* of the tag, from base */
} pw_field;

void pw_init(pw_reader *r, const uint8_t *base, const uint8_t *p, size_t len);
/* A reader over a LEN field's bytes (same base). */
void pw_sub(const pw_reader *parent, const pw_field *f, pw_reader *out);
/* Reads the next field: NULL with *out_done set at the end; an error (INVALID_ARGUMENT
 * naming |what| and the byte offset) on a truncated or malformed field. */
cxla_status pw_next(pw_reader *r, pw_field *f, bool *out_done, const char *what);
/* Whether the whole buffer walks as fields of one message (no error, nothing left). */
bool pw_is_message(const uint8_t *p, size_t len);

/* Repeated scalars, packed (LEN) or not: appended to a growable array of int64 (or of raw
 * 32/64-bit words for I32/I64 fields). */
typedef struct pw_ints {
    int64_t *v;
    int64_t n, cap;
} pw_ints;
cxla_status pw_ints_add(pw_ints *a, const pw_reader *r, const pw_field *f, int elem_wire,
                        const char *what);
void pw_ints_free(pw_ints *a);

/* Writer: fields appended to |b|. Proto3 leaves out default values: the _opt forms write
 * nothing for 0 / false / an empty string. */
void pw_put_varint(cxla_strbuf *b, uint64_t v);
void pw_put_tag(cxla_strbuf *b, uint32_t number, int wire);
void pw_put_int(cxla_strbuf *b, uint32_t number, int64_t v);
void pw_put_int_opt(cxla_strbuf *b, uint32_t number, int64_t v);
void pw_put_bytes(cxla_strbuf *b, uint32_t number, const void *data, size_t len);
void pw_put_str_opt(cxla_strbuf *b, uint32_t number, const char *s);
void pw_put_msg(cxla_strbuf *b, uint32_t number, const cxla_strbuf *msg); /* even empty */
void pw_put_packed(cxla_strbuf *b, uint32_t number, const int64_t *v, int64_t n);
void pw_put_fixed32(cxla_strbuf *b, uint32_t number, uint32_t v);

#endif /* CXLA_HLO_PROTO_WIRE_H_ */
