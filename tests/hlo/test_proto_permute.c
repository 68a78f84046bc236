/* The in-place collective-permute in an HloModuleProto: XLA flattens its per-buffer,
 * per-slice slice sizes into dynamic_slice_sizes (field 20) and splits them back by the
 * buffers' ranks and the slices the start indices name (HloInstruction::CreateFromProto),
 * buffer-major, as the text's slice_sizes={{...},...} lists them. The protos here are
 * built field by field, with XLA's field numbers, not by cxla's writer. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "hlo/hlo.h"
#include "hlo/proto_wire.h"

/* ShapeProto: element_type 2 (F32 11, S32 4, TUPLE 13), dimensions 3, tuple_shapes 4. */
enum { F32 = 11, S32 = 4, TUPLE = 13 };

static void array_shape(cxla_strbuf *b, int type, const int64_t *dims, int64_t rank) {
    pw_put_int(b, 2, type);
    if (rank) pw_put_packed(b, 3, dims, rank);
}

/* A tuple of |n| shapes, each already encoded in |parts|. */
static void tuple_shape(cxla_strbuf *b, cxla_strbuf *parts, int n) {
    pw_put_int(b, 2, TUPLE);
    for (int i = 0; i < n; i++) pw_put_msg(b, 4, &parts[i]);
}

/* The tuple of |rank| s32 scalars (one slice's start indices). */
static void indices_shape(cxla_strbuf *b, int64_t rank) {
    cxla_strbuf el[4];
    for (int64_t i = 0; i < rank; i++) {
        cxla_strbuf_init(&el[i]);
        array_shape(&el[i], S32, NULL, 0);
    }
    tuple_shape(b, el, (int)rank);
    for (int64_t i = 0; i < rank; i++) cxla_strbuf_free(&el[i]);
}

/* HloInstructionProto: name 1, opcode 2, shape 3, dynamic_slice_sizes 20, channel_id 26,
 * id 35, operand_ids 36, parameter_number 9, source_target_pairs 52 (source 1, target 2). */
static void instr(cxla_strbuf *comp, const char *name, const char *opcode, const cxla_strbuf *shape,
                  int64_t id, const int64_t *operands, int64_t nops, int64_t param) {
    cxla_strbuf m;
    cxla_strbuf_init(&m);
    pw_put_str_opt(&m, 1, name);
    pw_put_str_opt(&m, 2, opcode);
    pw_put_msg(&m, 3, shape);
    if (param >= 0) pw_put_int(&m, 9, param);
    pw_put_int(&m, 35, id);
    if (nops) pw_put_packed(&m, 36, operands, nops);
    if (!strcmp(opcode, "collective-permute")) {
        for (int k = 0; k < 2; k++) {
            cxla_strbuf p;
            cxla_strbuf_init(&p);
            pw_put_int(&p, 1, k);
            pw_put_int(&p, 2, 1 - k);
            pw_put_msg(&m, 52, &p);
            cxla_strbuf_free(&p);
        }
        static const int64_t sizes[] = {2, 1, 2}; /* buffer 0 (rank 1): {2}; 1 (rank 2): {1,2} */
        pw_put_packed(&m, 20, sizes, 3);
    }
    pw_put_msg(comp, 2, &m); /* HloComputationProto.instructions */
    cxla_strbuf_free(&m);
}

/* ENTRY e: in-place collective-permute of the buffers (f32[4], f32[2,3]) into a tuple of
 * the same shapes, one slice each, start indices ((s32[]), (s32[], s32[])). */
static char *permute_proto(size_t *size) {
    static const int64_t d4[] = {4}, d23[] = {2, 3};
    cxla_strbuf s4, s23, pair[2], tup, idx[2], idxs, comp, mod;
    cxla_strbuf_init(&s4);
    cxla_strbuf_init(&s23);
    array_shape(&s4, F32, d4, 1);
    array_shape(&s23, F32, d23, 2);
    cxla_strbuf_init(&pair[0]);
    cxla_strbuf_init(&pair[1]);
    array_shape(&pair[0], F32, d4, 1);
    array_shape(&pair[1], F32, d23, 2);
    cxla_strbuf_init(&tup);
    tuple_shape(&tup, pair, 2);
    cxla_strbuf_init(&idx[0]);
    cxla_strbuf_init(&idx[1]);
    indices_shape(&idx[0], 1);
    indices_shape(&idx[1], 2);
    cxla_strbuf_init(&idxs);
    tuple_shape(&idxs, idx, 2);
    cxla_strbuf_init(&comp);
    pw_put_str_opt(&comp, 1, "e");
    instr(&comp, "in", "parameter", &tup, 1, NULL, 0, 0);
    instr(&comp, "out", "parameter", &tup, 2, NULL, 0, 1);
    instr(&comp, "is", "parameter", &idxs, 3, NULL, 0, 2);
    instr(&comp, "os", "parameter", &idxs, 4, NULL, 0, 3);
    static const int64_t ops[] = {1, 2, 3, 4};
    instr(&comp, "cp", "collective-permute", &tup, 5, ops, 4, -1);
    pw_put_int(&comp, 5, 1); /* id */
    pw_put_int(&comp, 6, 5); /* root_id */
    cxla_strbuf_init(&mod);
    pw_put_str_opt(&mod, 1, "m");
    pw_put_str_opt(&mod, 2, "e");
    pw_put_msg(&mod, 3, &comp);
    pw_put_int(&mod, 6, 1); /* entry_computation_id */
    cxla_strbuf *all[] = {&s4, &s23, &pair[0], &pair[1], &tup, &idx[0], &idx[1], &idxs, &comp};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cxla_strbuf_free(all[i]);
    CHECK(!mod.failed);
    *size = mod.len;
    return cxla_strbuf_take(&mod);
}

static void test_in_place_slice_sizes_per_buffer(void) {
    size_t size = 0;
    char *bytes = permute_proto(&size);
    char *text = NULL;
    CHECK_OK(cxla_hlo_proto_to_text(bytes, size, &text));
    CHECK_MSG(text && strstr(text, "slice_sizes={{2},{1,2}}"), "text:\n%s", text ? text : "");
    cxla_module *m = NULL;
    CHECK_OK(cxla_hlo_parse(bytes, size, "permute.pb", &m));
    if (m) CHECK_OK(cxla_hlo_verify(m));
    /* cxla's writer flattens the lists the same way: the proto it writes reads back. */
    char *out = NULL, *again = NULL;
    size_t out_size = 0;
    if (m) CHECK_OK(cxla_hlo_write_proto(m, &out, &out_size));
    if (out) CHECK_OK(cxla_hlo_proto_to_text(out, out_size, &again));
    CHECK_MSG(again && strstr(again, "slice_sizes={{2},{1,2}}"), "again:\n%s", again ? again : "");
    free(out);
    free(again);
    cxla_module_destroy(m);
    free(text);
    free(bytes);
}

/* Sizes that do not split into the buffers' lists are an error naming the instruction. */
static void test_sizes_that_do_not_split(void) {
    size_t size = 0;
    char *bytes = permute_proto(&size);
    /* The packed sizes {2, 1, 2}: tag 20 (0xa2 0x01), length 3, the values. Rewritten in
     * place as {130, 1} (0x82 0x01 is one varint), two sizes where the buffers' ranks
     * (1 and 2) need a multiple of three, the message lengths unchanged. */
    static const unsigned char sizes[] = {0xa2, 0x01, 0x03, 0x02, 0x01, 0x02};
    char *at = NULL;
    for (size_t i = 0; bytes && i + sizeof sizes <= size && !at; i++)
        if (!memcmp(bytes + i, sizes, sizeof sizes)) at = bytes + i;
    CHECK(at != NULL);
    if (!at) {
        free(bytes);
        return;
    }
    at[3] = (char)0x82;
    at[4] = 0x01;
    at[5] = 0x01;
    char *text = NULL;
    cxla_status s = cxla_hlo_proto_to_text(bytes, size, &text);
    const char *msg = CHECK_ERROR(s);
    CHECK_MSG(strstr(msg, "instruction 'cp'") && strstr(msg, "slice sizes"), "%s", msg);
    free(text);
    free(bytes);
}

TEST_MAIN(TEST(test_in_place_slice_sizes_per_buffer), TEST(test_sizes_that_do_not_split))
