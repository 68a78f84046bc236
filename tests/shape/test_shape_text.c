/* Shape text: printing as XLA does, parsing (round trips, fields, errors). */
#include "base/base.h"
#include "harness.h"
#include "shape/shape_internal.h"

#include <stdlib.h>

/* Parses |text| and checks that it prints back as |expected| (the text itself if NULL). */
static void check_round_trip(const char *text, const char *expected, int line) {
    cxla_shape *s = NULL;
    cxla_status st = cxla_shape_parse(text, (size_t)-1, &s);
    if (st) {
        test_fail(__FILE__, line, "parse of \"%s\" failed: %s", text, cxla_status_message(st));
        cxla_status_free(st);
        return;
    }
    char *out = cxla_shape_to_string(s, CXLA_SHAPE_PRINT_DEFAULT);
    const char *want = expected ? expected : text;
    if (!out || strcmp(out, want) != 0)
        test_fail(__FILE__, line, "\"%s\" printed as \"%s\", expected \"%s\"", text,
                  out ? out : "(null)", want);
    cxla_status vst = cxla_shape_validate(s);
    if (vst) {
        test_fail(__FILE__, line, "\"%s\" parsed to an invalid shape: %s", text,
                  cxla_status_message(vst));
        cxla_status_free(vst);
    }
    /* The printed text parses to an equal shape. */
    cxla_shape *again = NULL;
    if (out && !(st = cxla_shape_parse(out, strlen(out), &again))) {
        if (!cxla_shape_equal(s, again))
            test_fail(__FILE__, line, "\"%s\" does not re-parse equal", out);
        cxla_shape_free(again);
    } else if (st) {
        test_fail(__FILE__, line, "re-parse of \"%s\" failed: %s", out, cxla_status_message(st));
        cxla_status_free(st);
    }
    free(out);
    cxla_shape_free(s);
}
#define ROUND_TRIP(text)          check_round_trip((text), NULL, __LINE__)
#define PARSES_AS(text, expected) check_round_trip((text), (expected), __LINE__)

static void test_round_trips(void) {
    static const char *const shapes[] = {
        "f32[2,3]{1,0}",
        "f32[2,3]{0,1}",
        "f32[]",
        "pred[0]{0}",
        "f32[0]{0}",
        "s32[2,0,3]{2,1,0}",
        "f32[2,3]",
        "bf16[1,2,3,4]{3,2,1,0}",
        "f16[7]{0}",
        "f64[3,3]{0,1}",
        "c64[2]{0}",
        "c128[]",
        "u8[4,4]{1,0}",
        "s4[16]{0}",
        "u2[8]{0}",
        "s1[3]{0}",
        "f8e4m3fn[4]{0}",
        "f8e5m2fnuz[2,2]{1,0}",
        "f8e4m3b11fnuz[1]{0}",
        "f8e8m0fnu[32]{0}",
        "f4e2m1fn[32]{0}",
        "f32[10,128]{0,1}",
        "f32[1,3,4,2,5]{1,3,4,2,0}",
        "f32[<=10,3]{1,0}",
        "f32[<=10,<=0]",
        "s32[?]",
        "s32[?,<=4,5]{0,1,2}",
        "f32[]{:T(128)}",
        "f32[]{:S(1)}",
        "f32[512]{0:T(256)}",
        "f32[8,128]{1,0:T(8,128)(2,1)}",
        "f32[4]{0:S(5)}",
        "u4[2,8,128]{2,1,0:T(8,128)(2,1)E(4)}",
        "f32[8,256]{1,0:T(8,128)(2,*)}",
        "f32[8,256]{1,0:T(*,128)}",
        "f32[8]{0:T()}",
        "f32[8]{0:L(2)}",
        "f32[8]{0:#(s32)}",
        "f32[8]{0:*(u64)}",
        "f32[8]{0:M(16)}",
        "f32[8]{0:E(32)}",
        "f32[8]{0:T(8)L(4)#(u16)*(s64)E(32)S(2)M(4)}",
        "f32[8]{0:D(C)}",
        "f32[8,8]{1,0:D(D,C+~)T(8)S(1)}",
        "f32[8]{0:S(1)SC(0:1,2)(1:3)}",
        "f32[8]{0:D(C)P(f32[8]{0})}",
        "f32[8]{0:D(H)T(8)S(1)SC(0:4)P(s32[<=8]{0})M(8)}",
        "f32[8]{0:M(8)XYZ(1)(2)}",
        "token[]",
        "opaque[]",
        "()",
        "(f32[2]{0}, s32[])",
        "((f32[]), token[])",
        "((), ((), ()))",
        "(f32[2,3]{1,0}, (s32[], pred[4]{0}), token[], ())",
        "(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[], f32[])",
        ("(s32[], s32[], s32[], s32[], s32[], /*index=5*/s32[], s32[], s32[], s32[], s32[], "
         "/*index=10*/s32[])"),
        "(f32[<=2]{0:S(1)}, u8[]{:T(1024)})",
    };
    for (size_t i = 0; i < CXLA_ARRAY_SIZE(shapes); i++) check_round_trip(shapes[i], NULL, 0);
}

static void test_normalized_printing(void) {
    /* Spaces and comments go; the printer's spelling stays. */
    PARSES_AS("  f32 [ 2 , 3 ] { 1 , 0 }  ", "f32[2,3]{1,0}");
    PARSES_AS("/* a */ f32[2] /* b */ {0} // end", "f32[2]{0}");
    PARSES_AS("f32[\n2,\n3\n]", "f32[2,3]");
    /* A buffer shape (XLA's b(...)) reads as the array it holds. */
    PARSES_AS("b(f32[32]{0})", "f32[32]{0}");
    PARSES_AS("(b( s32[2] ), f32[])", "(s32[2], f32[])");
    PARSES_AS("(f32[],s32[])", "(f32[], s32[])");
    PARSES_AS("( f32[] , ( ) )", "(f32[], ())");
    PARSES_AS("f32[ <= 4 , ? ]", "f32[<=4,?]");
    /* A scalar's plain layout is not printed, as in XLA; nor is an empty extension list. */
    PARSES_AS("f32[]{:}", "f32[]");
    PARSES_AS("f32[2]{0:}", "f32[2]{0}");
    /* Default values of extensions are not printed. */
    PARSES_AS("f32[8]{0:L(1)}", "f32[8]{0}");
    PARSES_AS("f32[8]{0:E(0)S(0)M(0)}", "f32[8]{0}");
    /* Extensions in any order print in XLA's order, unknown ones in their slots. */
    PARSES_AS("f32[8]{0:M(8)S(1)E(4)*(u32)#(s32)L(2)T(8)}",
              "f32[8]{0:T(8)L(2)#(s32)*(u32)E(4)S(1)M(8)}");
    PARSES_AS("f32[8]{0:Q(1)P(f32[8]{0})SC(0:1)S(1)D(C+~)T(8)}",
              "f32[8]{0:D(C+~)T(8)S(1)SC(0:1)P(f32[8]{0})Q(1)}");
    PARSES_AS("f32[8]{0:D( D , C ) T(8) (4)}", "f32[8]{0:D(D,C)T(8)(4)}");
    PARSES_AS("f32[8]{0:D(D /*x*/ )}", "f32[8]{0:D(D)}");
    PARSES_AS("f32[-0]", "f32[0]");
    PARSES_AS("f32[007]{0}", "f32[7]{0}");
    /* Tuple index comments are comments. */
    PARSES_AS("(f32[], /*index=1*/ f32[])", "(f32[], f32[])");
}

static void test_parse_fields(void) {
    cxla_shape *s;
    CHECK_OK(cxla_shape_parse("f32[<=10,?,3]{0,2,1}", (size_t)-1, &s));
    CHECK(s->type == CXLA_F32 && s->rank == 3);
    CHECK(s->dims[0] == 10 && s->dims[1] == CXLA_DIM_UNBOUNDED && s->dims[2] == 3);
    CHECK(s->dynamic && s->dynamic[0] == 1 && s->dynamic[1] == 1 && s->dynamic[2] == 0);
    CHECK(s->layout && s->layout->minor_to_major[0] == 0 && s->layout->minor_to_major[1] == 2);
    CHECK(!cxla_shape_is_static(s));
    cxla_shape_free(s);

    CHECK_OK(cxla_shape_parse("f32[2,3]", (size_t)-1, &s));
    CHECK(s->layout == NULL && s->dynamic == NULL);
    cxla_shape_free(s);

    CHECK_OK(
        cxla_shape_parse("u4[2,8,128]{2,1,0:D(D,D,C)T(8,128)(2,*)L(4)#(s32)*(u16)E(4)S(5)SC(0:1)"
                         "P(u4[2]{0})M(16)}",
                         (size_t)-1, &s));
    const cxla_layout *l = s->layout;
    CHECK(l != NULL);
    if (l) {
        CHECK_EQ_I64(l->tile_count, 2);
        CHECK(l->tiles[0].rank == 2 && l->tiles[0].dims[0] == 8 && l->tiles[0].dims[1] == 128);
        CHECK(l->tiles[1].rank == 2 && l->tiles[1].dims[1] == CXLA_TILE_COMBINE);
        CHECK_EQ_I64(l->tail_padding_alignment, 4);
        CHECK(l->index_type == CXLA_S32 && l->pointer_type == CXLA_U16);
        CHECK_EQ_I64(l->element_size_bits, 4);
        CHECK_EQ_I64(l->memory_space, 5);
        CHECK_EQ_I64(l->dynamic_metadata_prefix, 16);
        CHECK_EQ_STR(l->extra, "D(D,D,C)SC(0:1)P(u4[2]{0})");
        CHECK(l->padded_dims == NULL);
    }
    cxla_shape_free(s);

    CHECK_OK(cxla_shape_parse("((f32[]), token[], ())", (size_t)-1, &s));
    CHECK(s->type == CXLA_TUPLE && s->tuple_count == 3);
    CHECK(s->elements[0].type == CXLA_TUPLE && s->elements[0].tuple_count == 1);
    CHECK(s->elements[0].elements[0].type == CXLA_F32 && s->elements[0].elements[0].rank == 0);
    CHECK(s->elements[1].type == CXLA_TOKEN);
    CHECK(s->elements[2].type == CXLA_TUPLE && s->elements[2].tuple_count == 0);
    cxla_shape_free(s);

    /* A scalar's layout with extensions is kept. */
    CHECK_OK(cxla_shape_parse("f32[]{:T(128)S(1)}", (size_t)-1, &s));
    CHECK(s->layout && s->layout->tile_count == 1 && s->layout->memory_space == 1);
    cxla_shape_free(s);
}

static void test_printing(void) {
    int64_t dims[] = {2, 3};
    int64_t m01[] = {0, 1};
    cxla_layout l = {.minor_to_major = m01};
    cxla_shape a = {.type = CXLA_F32, .rank = 2, .dims = dims, .layout = &l};
    char *t = cxla_shape_to_string(&a, CXLA_SHAPE_PRINT_NO_LAYOUT);
    CHECK_EQ_STR(t, "f32[2,3]");
    free(t);
    cxla_shape elems[6];
    for (int i = 0; i < 6; i++) elems[i] = a;
    elems[5].type = CXLA_TOKEN;
    elems[5].rank = 0;
    elems[5].layout = NULL;
    cxla_shape tup = {.type = CXLA_TUPLE, .tuple_count = 6, .elements = elems};
    t = cxla_shape_to_string(&tup, CXLA_SHAPE_PRINT_NO_LAYOUT);
    CHECK_EQ_STR(t, "(f32[2,3], f32[2,3], f32[2,3], f32[2,3], f32[2,3], /*index=5*/token[])");
    free(t);
    t = cxla_shape_to_string(&tup, CXLA_SHAPE_PRINT_DEFAULT);
    CHECK_EQ_STR(t, "(f32[2,3]{0,1}, f32[2,3]{0,1}, f32[2,3]{0,1}, f32[2,3]{0,1}, "
                    "f32[2,3]{0,1}, /*index=5*/token[])");
    free(t);

    /* Into a buffer, after other text; and a layout alone. */
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_strbuf_puts(&b, "x = ");
    cxla_shape_print(&b, &a, CXLA_SHAPE_PRINT_DEFAULT);
    cxla_strbuf_puts(&b, " | ");
    cxla_layout_print(&b, &a);
    t = cxla_strbuf_take(&b);
    CHECK_EQ_STR(t, "x = f32[2,3]{0,1} | {0,1}");
    free(t);

    /* Odd values print as XLA prints them. */
    int64_t odd_tile[] = {-7, 4};
    cxla_tile tile = {2, odd_tile};
    cxla_layout lo = {
        .minor_to_major = m01, .tile_count = 1, .tiles = &tile, .index_type = CXLA_F32};
    a.layout = &lo;
    t = cxla_shape_to_string(&a, 0);
    CHECK_EQ_STR(t, "f32[2,3]{0,1:T(Invalid value -7,4)#(invalid)}");
    free(t);
    /* A hand-made extra that is not a list of items prints as it is, last. */
    cxla_layout lx = {.minor_to_major = m01, .extra = "D(D)junk", .memory_space = 1};
    a.layout = &lx;
    t = cxla_shape_to_string(&a, 0);
    CHECK_EQ_STR(t, "f32[2,3]{0,1:D(D)S(1)junk}");
    free(t);
    /* Items with one-character names split too. */
    cxla_layout lh = {.minor_to_major = m01, .extra = "#(x)SC(1)D(2)"};
    a.layout = &lh;
    t = cxla_shape_to_string(&a, 0);
    CHECK_EQ_STR(t, "f32[2,3]{0,1:D(2)SC(1)#(x)}");
    free(t);
    /* A layout without minor_to_major prints the default order. */
    cxla_layout empty = {0};
    a.layout = &empty;
    t = cxla_shape_to_string(&a, 0);
    CHECK_EQ_STR(t, "f32[2,3]{1,0}");
    free(t);
    /* Tokens never print a layout. */
    cxla_shape tok = {.type = CXLA_TOKEN, .layout = &lo};
    t = cxla_shape_to_string(&tok, 0);
    CHECK_EQ_STR(t, "token[]");
    free(t);
}

static void test_parse_at(void) {
    cxla_arena *arena = cxla_arena_create();
    cxla_shape s;
    /* Stops just past the shape; a '{' not followed by a number or ':' is not a layout. */
    const char *body = "ENTRY %f (x: f32[42]) -> f32[123] {\n  ROOT ...\n}";
    size_t pos = (size_t)(strstr(body, "f32[123]") - body);
    CHECK_OK(cxla_shape_parse_at(body, strlen(body), &pos, arena, &s));
    CHECK(s.rank == 1 && s.dims[0] == 123 && s.layout == NULL);
    CHECK_EQ_I64(pos, strstr(body, " {") - body);

    const char *t1 = "f32[2] {} rest";
    pos = 0;
    CHECK_OK(cxla_shape_parse_at(t1, strlen(t1), &pos, arena, &s));
    CHECK(s.layout == NULL);
    CHECK_EQ_I64(pos, 6);

    const char *t2 = "   f32[2]  /* c */ {0} , next";
    pos = 1;
    CHECK_OK(cxla_shape_parse_at(t2, strlen(t2), &pos, arena, &s));
    CHECK(s.layout != NULL);
    CHECK_EQ_I64(pos, strstr(t2, " ,") - t2);

    const char *t3 = "x: (f32[], s32[2]{0}), y";
    pos = 3;
    CHECK_OK(cxla_shape_parse_at(t3, strlen(t3), &pos, arena, &s));
    CHECK(s.type == CXLA_TUPLE && s.tuple_count == 2);
    CHECK_EQ_I64(pos, strstr(t3, ", y") - t3);

    /* A layout after a scalar needs ':' ("f32[] {" starts a body). */
    const char *t4 = "f32[] { ROOT }";
    pos = 0;
    CHECK_OK(cxla_shape_parse_at(t4, strlen(t4), &pos, arena, &s));
    CHECK_EQ_I64(pos, 5);

    /* Errors name the line and column in the whole text. */
    const char *t5 = "line one\n  x: f32[2,3}";
    pos = (size_t)(strstr(t5, "f32") - t5);
    const char *m = CHECK_ERROR(cxla_shape_parse_at(t5, strlen(t5), &pos, arena, &s));
    CHECK(strstr(m, "line 2, column 13") != NULL);
    CHECK(strstr(m, "opened at line 2, column 9") != NULL);
    CHECK(strstr(m, "expected ',' or ']'") != NULL);
    CHECK(strstr(m, "found '}'") != NULL);
    CHECK(strstr(m, "  x: f32[2,3}") != NULL);
    CHECK(s.type == CXLA_TYPE_INVALID && s.dims == NULL); /* cleared on error */

    pos = 100;
    CHECK_ERROR_HAS(cxla_shape_parse_at(t5, strlen(t5), &pos, arena, &s), "past its end");
    CHECK_ERROR_HAS(cxla_shape_parse_at(NULL, 0, &pos, arena, &s), "NULL");
    pos = 0;
    CHECK_OK(cxla_shape_parse_at("s8[1]", (size_t)-1, &pos, arena, &s));
    CHECK_EQ_I64(pos, 5);
    cxla_arena_destroy(arena);
}

static void test_skip_space(void) {
    const char *t = "  /* a */ // b\n\t x";
    CHECK_EQ_I64(cxla_text_skip_space(t, strlen(t), 0), strlen(t) - 1);
    CHECK_EQ_I64(cxla_text_skip_space(t, strlen(t), strlen(t)), strlen(t));
    const char *u = "  /* never closed";
    CHECK_EQ_I64(cxla_text_skip_space(u, strlen(u), 0), 2);
    const char *v = "/*/ x";
    CHECK_EQ_I64(cxla_text_skip_space(v, strlen(v), 0), 0);
    const char *w = "/**/x";
    CHECK_EQ_I64(cxla_text_skip_space(w, strlen(w), 0), 4);
    const char *x = "// only a comment";
    CHECK_EQ_I64(cxla_text_skip_space(x, strlen(x), 0), strlen(x));
    /* Bounded by len, not by the NUL. */
    CHECK_EQ_I64(cxla_text_skip_space("   x", 2, 0), 2);
    CHECK_EQ_I64(cxla_text_skip_space("/* */", 4, 0), 0);
    CHECK_EQ_I64(cxla_text_skip_space("a / b", 5, 2), 2);
}

/* Parses |text| expecting an error whose message holds every one of |parts|. */
static void check_error(const char *text, const char *const *parts, int line) {
    cxla_shape *s = NULL;
    cxla_status st = cxla_shape_parse(text, (size_t)-1, &s);
    if (!st) {
        test_fail(__FILE__, line, "\"%s\" parsed, expected an error", text);
        cxla_shape_free(s);
        return;
    }
    CHECK(s == NULL);
    CHECK(cxla_status_code_of(st) == CXLA_STATUS_INVALID_ARGUMENT);
    const char *m = cxla_status_message(st);
    for (; *parts; parts++)
        if (!strstr(m, *parts))
            test_fail(__FILE__, line, "error for \"%s\" lacks \"%s\": %s", text, *parts, m);
    /* Every message names a position and shows the line. */
    if (!strstr(m, "line ") || !strstr(m, "column ") || !strchr(m, '^'))
        test_fail(__FILE__, line, "error for \"%s\" has no position: %s", text, m);
    cxla_status_free(st);
}
#define PARSE_ERROR(text, ...)                                                                     \
    check_error((text), (const char *const[]){__VA_ARGS__, NULL}, __LINE__)

static void test_parse_errors(void) {
    /* Empty input and plain garbage. */
    PARSE_ERROR("", "expected a shape", "found end of input", "line 1, column 1");
    PARSE_ERROR("   \n  ", "expected a shape", "line 2, column 3");
    PARSE_ERROR("// nothing", "expected a shape");
    PARSE_ERROR("[2]", "expected a shape", "found '['");
    PARSE_ERROR("2", "expected a shape", "found '2'");
    PARSE_ERROR("\x01", "byte 0x01");
    /* Unknown element types name themselves. */
    PARSE_ERROR("f33[2]", "unknown element type 'f33'", "line 1, column 1");
    PARSE_ERROR("(f32[], floaty[1])", "unknown element type 'floaty'", "column 9");
    PARSE_ERROR("tuple[]", "unknown element type 'tuple'");
    PARSE_ERROR("invalid[]", "unknown element type 'invalid'");
    PARSE_ERROR("F32[2]", "unknown element type 'F32'");
    PARSE_ERROR("b((s32[2]))", "a buffer shape b(...) holds an array");
    PARSE_ERROR("b(s32[2]", "expected ')' to close the buffer shape");
    /* Missing brackets. */
    PARSE_ERROR("f32", "expected '[' after the element type 'f32'", "found end of input");
    PARSE_ERROR("f32 2]", "expected '['", "found '2'");
    PARSE_ERROR("f32[2,3", "expected ',' or ']'", "found end of input");
    PARSE_ERROR("f32[2 3]", "expected ',' or ']'", "found '3'");
    PARSE_ERROR("f32[2,]", "expected a dimension size", "found ']'");
    PARSE_ERROR("f32[,2]", "expected a dimension size", "found ','");
    PARSE_ERROR("f32[<=]", "expected a dimension size");
    PARSE_ERROR("f32[<=?]", "expected a dimension size", "found '?'");
    PARSE_ERROR("f32[< =4]", "expected a dimension size", "found '<'");
    PARSE_ERROR("f32[x]", "expected a dimension size", "found 'x'");
    /* Negative and huge dims. */
    PARSE_ERROR("f32[2,-3]", "dimension size -3 is negative", "column 7");
    PARSE_ERROR("f32[<=-1]", "negative");
    PARSE_ERROR("f32[99999999999999999999]", "'99999999999999999999' does not fit in int64");
    PARSE_ERROR("f32[9223372036854775808]", "does not fit in int64");
    PARSE_ERROR("f32[1099511627776,1099511627776]", "overflows", "line 1, column 1");
    PARSE_ERROR("f32[4611686018427387904]", "byte size");
    PARSE_ERROR(
        "f32[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,"
        "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]",
        "too many dimensions", "rank up to 64");
    /* Layout problems. */
    PARSE_ERROR("f32[2,3]{1,1}", "layout {1,1} is not a permutation of 0..1", "1 appears twice");
    PARSE_ERROR("f32[2,3]{0,2}", "not a permutation", "2 is out of range", "column 9");
    PARSE_ERROR("f32[2,3]{-1,0}", "not a permutation", "-1 is out of range");
    PARSE_ERROR("f32[2,3]{0}", "layout {0} has 1 minor_to_major entries but the shape has rank 2");
    PARSE_ERROR("f32[2]{0,1,2}", "has 3 minor_to_major entries", "rank 1");
    char many[400] = "f32[2]{0";
    for (int i = 0; i < 70; i++) strcat(many, ",1");
    strcat(many, "}");
    PARSE_ERROR(many, "layout has more entries than the shape's rank 1");
    PARSE_ERROR("f32[2,3]{:T(8)}", "has 0 minor_to_major entries");
    PARSE_ERROR("f32[]{0}", "has 1 minor_to_major entries but the shape has rank 0");
    PARSE_ERROR("f32[2]{0", "expected ',', ':' or '}' in the layout", "found end of input");
    PARSE_ERROR("f32[2]{0,}", "expected a dimension number in the layout", "found '}'");
    PARSE_ERROR("f32[2]{0 1}", "expected ',', ':' or '}'", "found '1'");
    PARSE_ERROR("f32[2]{0:T}", "expected '(' after the layout extension 'T'");
    PARSE_ERROR("f32[2]{0:T(8,", "expected a tile dimension");
    PARSE_ERROR("f32[2]{0:T(8 9)}", "expected ',' or ')' in a tile");
    PARSE_ERROR("f32[2]{0:T(0)}", "tile dimension 0 must be positive");
    PARSE_ERROR("f32[2]{0:T(8)T(8)}", "'T' appears twice");
    PARSE_ERROR("f32[2]{0:S(1)S(2)}", "'S' appears twice");
    PARSE_ERROR("f32[2]{0:S(-1)}", "S(-1) is out of range");
    PARSE_ERROR("f32[2]{0:L(0)}", "L(0) is out of range", "at least 1");
    PARSE_ERROR("f32[2]{0:E(x)}", "expected a number in E(...)", "found 'x'");
    PARSE_ERROR("f32[2]{0:E(4}", "expected ')' to close the layout extension", "found '}'");
    PARSE_ERROR("f32[2]{0:#(f32)}", "#(f32) needs an integer type");
    PARSE_ERROR("f32[2]{0:*(q32)}", "unknown element type 'q32' in *(...)");
    PARSE_ERROR("f32[2]{0:#()}", "expected an integer type in #(...)");
    PARSE_ERROR("f32[2]{0:D(C}", "expected ')' to close the layout extension 'D'",
                "found end of input");
    PARSE_ERROR("f32[2]{0:D(a/b)}", "unexpected character in the layout extension 'D'",
                "found '/'");
    PARSE_ERROR("f32[2]{0:D(a\"b)}", "unexpected character", "found '\"'");
    PARSE_ERROR("f32[2]{0:1}", "expected a layout extension", "found '1'");
    PARSE_ERROR("f32[2]{0:T(8),S(1)}", "expected a layout extension", "found ','");
    PARSE_ERROR("token[]{:S(1)}", "token[] cannot have a layout");
    PARSE_ERROR("token[2]", "token[] takes no dimensions");
    PARSE_ERROR("opaque[1,2]", "opaque[] takes no dimensions");
    /* Trailing garbage. */
    PARSE_ERROR("f32[2] x", "expected the end of the shape text", "found 'x'", "column 8");
    PARSE_ERROR("f32[2]{}", "expected the end of the shape text", "found '{'");
    PARSE_ERROR("f32[] {", "expected the end of the shape text", "found '{'");
    PARSE_ERROR("f32[2]{0}}", "expected the end", "found '}'");
    PARSE_ERROR("(f32[]))", "expected the end", "found ')'");
    PARSE_ERROR("f32[2], f32[3]", "expected the end", "found ','");
    /* Unterminated tuples. */
    PARSE_ERROR("(", "expected a shape", "found end of input");
    PARSE_ERROR("(f32[]", "expected ',' or ')' in the tuple opened at line 1, column 1");
    PARSE_ERROR("(f32[],", "expected a shape", "found end of input");
    PARSE_ERROR("(f32[],)", "expected a shape", "found ')'");
    PARSE_ERROR("(f32[] s32[])", "expected ',' or ')' in the tuple", "found 's32'");
    PARSE_ERROR("((f32[])", "expected ',' or ')' in the tuple opened at line 1, column 1");
    /* Unterminated comments. */
    PARSE_ERROR("/* no end", "unterminated comment", "line 1, column 1");
    PARSE_ERROR("f32[2] /* no end", "unterminated comment", "column 8");
    PARSE_ERROR("f32[2, /* x", "unterminated comment", "column 8");
    PARSE_ERROR("f32[2]{0:D(D /* x", "unterminated comment");
    /* Too deep. */
    char deep[400];
    memset(deep, '(', 300);
    deep[300] = 0;
    PARSE_ERROR(deep, "tuples nest deeper than 128 levels");
    /* A long name is cut in the message. */
    char longname[200];
    memset(longname, 'z', 150);
    strcpy(longname + 150, "[1]");
    PARSE_ERROR(longname, "unknown element type 'zzzzzzzz", "...'");
}

/* The parser reads only |len| bytes: the fuzzer's input is not NUL-terminated. */
static void test_length_bounded(void) {
    cxla_shape *s;
    CHECK_OK(cxla_shape_parse("f32[2]{0}garbage", 9, &s));
    char *t = cxla_shape_to_string(s, 0);
    CHECK_EQ_STR(t, "f32[2]{0}");
    free(t);
    cxla_shape_free(s);
    CHECK_OK(cxla_shape_parse("f32[2]{0:T(8)}", 6, &s));
    CHECK(s->layout == NULL);
    cxla_shape_free(s);
    CHECK_ERROR_HAS(cxla_shape_parse("f32[2]{0}", 8, &s), "expected ',', ':' or '}'");
    /* Sparse layout extensions are checked as XLA checks them. */
    CHECK_ERROR_HAS(cxla_shape_parse("f32[10,10]{1,0:D(X,C)}", (size_t)-1, &s),
                    "invalid dimension level type 'X'");
    CHECK_ERROR_HAS(cxla_shape_parse("f32[10,10]{1,0:T(128,8)P(f32[10,10])}", (size_t)-1, &s),
                    "only allowed in a sparse layout");
    CHECK_ERROR_HAS(cxla_shape_parse("f32[10]{0:D(D)P(f32[10])}", (size_t)-1, &s),
                    "only allowed in a sparse layout");
    CHECK_ERROR_HAS(cxla_shape_parse("f32[2", 4, &s), "found end of input");
    CHECK_ERROR_HAS(cxla_shape_parse("f32[2]{0:T(8)}", 11, &s), "found end of input");
    CHECK_ERROR_HAS(cxla_shape_parse("f32[2] /**/", 9, &s), "unterminated comment");
    CHECK_ERROR_HAS(cxla_shape_parse("f32[2]", 0, &s), "found end of input");
    CHECK_ERROR_HAS(cxla_shape_parse(NULL, 0, &s), "NULL");
    /* A heap copy without a terminator, so a sanitizer would see an over-read. */
    const char *texts[] = {"f32[2,3]{1,0}", "(f32[], s32[2]{0})", "f32[2]{0:D(D)}", "f32[<=", "s"};
    for (size_t i = 0; i < CXLA_ARRAY_SIZE(texts); i++) {
        size_t n = strlen(texts[i]);
        char *copy = malloc(n);
        memcpy(copy, texts[i], n);
        cxla_status st = cxla_shape_parse(copy, n, &s);
        if (st)
            cxla_status_free(st);
        else
            cxla_shape_free(s);
        free(copy);
    }
}

TEST_MAIN(TEST(test_round_trips), TEST(test_normalized_printing), TEST(test_parse_fields),
          TEST(test_printing), TEST(test_parse_at), TEST(test_skip_space), TEST(test_parse_errors),
          TEST(test_length_bounded))
