/* Internal to the HLO proto reader and writer (proto_read.c, proto_write.c): the tables
 * they share. The public entry points are in cxla/hlo.h. */
#ifndef CXLA_HLO_PROTO_H_
#define CXLA_HLO_PROTO_H_

#include "hlo/hlo.h"

/* XLA's PrimitiveType number of |type| (0 when XLA has none) and back
 * (CXLA_TYPE_INVALID when unknown). */
int cxla_proto_type_number(cxla_type type);
cxla_type cxla_proto_type_from_number(int64_t number);
/* The LiteralProto field that holds values of |type| and its wire type (PW_LEN: bytes;
 * PW_VARINT / PW_I32 / PW_I64: repeated scalars); 0 when there is none. */
uint32_t cxla_proto_literal_field(cxla_type type, int *out_wire);

/* PrecisionConfig.Algorithm's values by number, in the text's spelling ("dot_f32_f32_f32"). */
#define CXLA_PROTO_DOT_ALGORITHM_COUNT 14
extern const char *const cxla_proto_dot_algorithms[CXLA_PROTO_DOT_ALGORITHM_COUNT];

#endif /* CXLA_HLO_PROTO_H_ */
