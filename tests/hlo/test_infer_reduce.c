/* Shape inference for reduce, reduce-window, select-and-scatter, sort, topk, gather,
 * scatter, scan and map: valid forms with the exact shapes (the seeds' examples where
 * they give shapes) and a failing case for each check. */
#include "test_infer_helpers.h"

static void test_reduce(void) {
    tm t = t_new();
    cxla_computation *add = t_binary_comp(&t, "add", "f32[]", CXLA_OP_ADD, "f32[]");
    cxla_computation *maxb = t_binary_comp(&t, "max_bf16", "bf16[]", CXLA_OP_MAXIMUM, "bf16[]");
    cxla_computation *two = t_params_comp(&t, "two", "f32[];s32[];f32[];s32[]", -1);
    {
        cxla_computation *saved = t.c;
        t.c = two;
        two->root = I(&t, CXLA_OP_TUPLE, "(f32[], s32[])", 2, two->params[0], two->params[1]);
        t.c = saved;
    }
    cxla_instr *x = P(&t, "bf16[16,2,128,128]"), *z = P(&t, "bf16[]");
    cxla_instr *r = I(&t, CXLA_OP_REDUCE, "", 2, x, z);
    INFER_ERR(r, "missing attribute dimensions");
    a_ints(&t, r, CXLA_ATTR_DIMENSIONS, 1, 3);
    INFER_ERR(r, "missing called computation to_apply");
    a_comp(&t, r, CXLA_ATTR_TO_APPLY, maxb);
    INFER_OK(r, "bf16[16,2,128]");
    a_ints(&t, r, CXLA_ATTR_DIMENSIONS, 3, 0, 2, 3);
    INFER_OK(r, "bf16[2]");
    a_ints(&t, r, CXLA_ATTR_DIMENSIONS, 0);
    INFER_OK(r, "bf16[16,2,128,128]");
    a_ints(&t, r, CXLA_ATTR_DIMENSIONS, 1, 4);
    INFER_ERR(r, "dimensions={4}: 4 is out of range for bf16[16,2,128,128]");
    a_ints(&t, r, CXLA_ATTR_DIMENSIONS, 2, 1, 1);
    INFER_ERR(r, "repeats a dimension");
    a_ints(&t, r, CXLA_ATTR_DIMENSIONS, 1, 1);
    a_comp(&t, r, CXLA_ATTR_TO_APPLY, add);
    INFER_ERR(r,
              "init value 0 has shape bf16[], but reduction computation 'add' accumulates f32[]");

    /* variadic: an argmax-like (f32, s32) reduction */
    cxla_instr *v = P(&t, "f32[8,4]"), *i = P(&t, "s32[8,4]"), *fv = P(&t, "f32[]");
    cxla_instr *iv = P(&t, "s32[]"), *i5 = P(&t, "s32[8,5]");
    cxla_instr *r2 = I(&t, CXLA_OP_REDUCE, "", 4, v, i, fv, iv);
    a_ints(&t, r2, CXLA_ATTR_DIMENSIONS, 1, 1);
    a_comp(&t, r2, CXLA_ATTR_TO_APPLY, two);
    INFER_OK(r2, "(f32[8], s32[8])");
    cxla_instr *r3 = I(&t, CXLA_OP_REDUCE, "", 4, v, i, iv, iv);
    a_ints(&t, r3, CXLA_ATTR_DIMENSIONS, 1, 1);
    a_comp(&t, r3, CXLA_ATTR_TO_APPLY, two);
    INFER_ERR(r3,
              "init value 0 has shape s32[], but reduction computation 'two' accumulates f32[]");
    cxla_instr *r4 = I(&t, CXLA_OP_REDUCE, "", 4, v, i5, fv, iv);
    a_ints(&t, r4, CXLA_ATTR_DIMENSIONS, 1, 1);
    a_comp(&t, r4, CXLA_ATTR_TO_APPLY, two);
    INFER_ERR(r4, "inputs must have the same dimensions, got f32[8,4] and s32[8,5]");
    cxla_instr *ri = I(&t, CXLA_OP_REDUCE, "", 2, i, fv);
    a_ints(&t, ri, CXLA_ATTR_DIMENSIONS, 1, 1);
    a_comp(&t, ri, CXLA_ATTR_TO_APPLY, add);
    INFER_ERR(ri, "reduction computation 'add': parameter 1 must be s32[], the element type of "
                  "input 0");
    cxla_instr *r5 = I(&t, CXLA_OP_REDUCE, "", 2, v, fv);
    a_ints(&t, r5, CXLA_ATTR_DIMENSIONS, 1, 1);
    a_comp(&t, r5, CXLA_ATTR_TO_APPLY, two);
    INFER_ERR(r5, "must take 2 parameters");
    cxla_instr *r6 = I(&t, CXLA_OP_REDUCE, "", 4, v, v, fv, fv);
    a_ints(&t, r6, CXLA_ATTR_DIMENSIONS, 1, 1);
    a_comp(&t, r6, CXLA_ATTR_TO_APPLY, add);
    INFER_ERR(r6, "must take 4 parameters");
    INFER_ERR(I(&t, CXLA_OP_REDUCE, "", 3, v, fv, fv), "expects N inputs then N init values");
    INFER_ERR(I(&t, CXLA_OP_REDUCE, "", 0), "got 0 operand(s)");
    cxla_instr *tup = P(&t, "(f32[2])");
    INFER_ERR(I(&t, CXLA_OP_REDUCE, "", 2, tup, fv), "input 0 must be an array");
    t_free(&t);
}

/* Reducer signature errors, one computation each. */
static void test_reducer_signatures(void) {
    tm t = t_new();
    cxla_instr *v = P(&t, "f32[8]"), *fv = P(&t, "f32[]"), *i = P(&t, "s32[8]");
    cxla_instr *iv = P(&t, "s32[]");
    struct {
        const char *params;
        const char *root; /* the root: a parameter's shape index, or a tuple of params */
        int root_param;
        int n;
        const char *error;
    } cases[] = {
        {"f32[2];f32[]", NULL, 0, 1, "must return scalars"},
        {"f32[];f32[]", "(f32[], f32[])", -1, 1, "must return a scalar"},
        {"f32[];f32[];f32[];f32[]", "(f32[])", -1, 2, "must return a tuple of 2"},
        {"s32[];f32[]", NULL, 1, 1, "parameter 0 must have the result's shape f32[]"},
    };
    for (size_t k = 0; k < CXLA_ARRAY_SIZE(cases); k++) {
        char name[32];
        snprintf(name, sizeof(name), "red%zu", k);
        cxla_computation *c = t_params_comp(&t, name, cases[k].params, cases[k].root_param);
        if (cases[k].root) {
            cxla_computation *saved = t.c;
            t.c = c;
            c->root = I(&t, CXLA_OP_TUPLE, cases[k].root, cases[k].n == 2 ? 1 : 2, c->params[0],
                        c->params[1]);
            t.c = saved;
        }
        cxla_instr *r = cases[k].n == 1 ? I(&t, CXLA_OP_REDUCE, "", 2, v, fv)
                                        : I(&t, CXLA_OP_REDUCE, "", 4, v, i, fv, iv);
        a_ints(&t, r, CXLA_ATTR_DIMENSIONS, 1, 0);
        a_comp(&t, r, CXLA_ATTR_TO_APPLY, c);
        INFER_ERR(r, cases[k].error);
    }
    /* a computation without a root, or with a missing parameter slot */
    cxla_computation *noroot = t_params_comp(&t, "noroot", "f32[];f32[]", -1);
    noroot->root = NULL;
    cxla_instr *r = I(&t, CXLA_OP_REDUCE, "", 2, v, fv);
    a_ints(&t, r, CXLA_ATTR_DIMENSIONS, 1, 0);
    a_comp(&t, r, CXLA_ATTR_TO_APPLY, noroot);
    INFER_ERR(r, "called computation 'noroot' has no root instruction");
    cxla_computation *hole = t_params_comp(&t, "hole", "f32[];f32[]", 0);
    hole->params[1] = NULL;
    a_comp(&t, r, CXLA_ATTR_TO_APPLY, hole);
    INFER_ERR(r, "called computation 'hole' lacks parameter 1");
    t_free(&t);
}

static void test_reduce_window(void) {
    tm t = t_new();
    cxla_computation *mx = t_binary_comp(&t, "max", "f32[]", CXLA_OP_MAXIMUM, "f32[]");
    cxla_computation *two = t_params_comp(&t, "two", "f32[];s32[];f32[];s32[]", -1);
    {
        cxla_computation *saved = t.c;
        t.c = two;
        two->root = I(&t, CXLA_OP_TUPLE, "(f32[], s32[])", 2, two->params[0], two->params[1]);
        t.c = saved;
    }
    cxla_instr *x = P(&t, "f32[1,112,112,64]"), *ninf = P(&t, "f32[]");
    cxla_instr *rw = I(&t, CXLA_OP_REDUCE_WINDOW, "", 2, x, ninf);
    a_comp(&t, rw, CXLA_ATTR_TO_APPLY, mx);
    INFER_ERR(rw, "missing attribute window={...} for an operand of rank 4");
    a_window(&t, rw, "size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0");
    INFER_OK(rw, "f32[1,56,56,64]");
    a_window(&t, rw, "size=1x3x3x1");
    INFER_OK(rw, "f32[1,110,110,64]");
    a_window(&t, rw,
             "size=1x3x3x1 stride=1x2x2x1 pad=0_0x-1_0x0_0x0_0 lhs_dilate=1x2x1x1 "
             "rhs_dilate=1x1x2x1");
    /* dim1: 223 dilated, -1 pad: 222, window 3: (222-3)/2+1 = 110;
     * dim2: 112, window 3 dilated by 2 = 5: (112-5)/2+1 = 54 */
    INFER_OK(rw, "f32[1,110,54,64]");
    a_window(&t, rw, "size=1x200x1x1");
    INFER_OK(rw, "f32[1,0,112,64]"); /* the window does not fit */
    a_window(&t, rw, "size=1x3x3");
    INFER_ERR(rw, "the window has 3 dimensions but the windowed operand has rank 4");
    a_window(&t, rw, "size=1x0x3x1");
    INFER_ERR(rw, "window dimension 1 has size 0, expected >= 1");
    a_window(&t, rw, "size=1x3x3x1 stride=1x0x1x1");
    INFER_ERR(rw, "has stride 0");
    a_window(&t, rw, "size=1x3x3x1 lhs_dilate=1x1x0x1");
    INFER_ERR(rw, "base (lhs) dilation 0");
    a_window(&t, rw, "size=1x3x3x1 rhs_dilate=0x1x1x1");
    INFER_ERR(rw, "window (rhs) dilation 0");
    a_window(&t, rw, "size=1x3x3x1 pad=0_0x0_9223372036854775807x0_0x0_0");
    INFER_ERR(rw, "overflows");
    a_ints(&t, rw, CXLA_ATTR_WINDOW, 1, 1); /* a window attribute of the wrong kind */
    INFER_ERR(rw, "attribute window is not a window");

    /* an unbounded dimension stays unbounded */
    cxla_instr *ux = P(&t, "f32[?,8]");
    cxla_instr *rwu = I(&t, CXLA_OP_REDUCE_WINDOW, "", 2, ux, ninf);
    a_comp(&t, rwu, CXLA_ATTR_TO_APPLY, mx);
    a_window(&t, rwu, "size=2x2 stride=2x2");
    INFER_OK(rwu, "f32[?,4]");
    /* rank 0: no window needed */
    cxla_instr *rw0 = I(&t, CXLA_OP_REDUCE_WINDOW, "", 2, ninf, ninf);
    a_comp(&t, rw0, CXLA_ATTR_TO_APPLY, mx);
    INFER_OK(rw0, "f32[]");

    /* variadic */
    cxla_instr *v = P(&t, "f32[4,6]"), *i = P(&t, "s32[4,6]"), *iv = P(&t, "s32[]");
    cxla_instr *rv = I(&t, CXLA_OP_REDUCE_WINDOW, "", 4, v, i, ninf, iv);
    a_comp(&t, rv, CXLA_ATTR_TO_APPLY, two);
    a_window(&t, rv, "size=2x3 stride=2x3");
    INFER_OK(rv, "(f32[2,2], s32[2,2])");
    cxla_instr *i5 = P(&t, "s32[4,5]");
    cxla_instr *rv2 = I(&t, CXLA_OP_REDUCE_WINDOW, "", 4, v, i5, ninf, iv);
    a_comp(&t, rv2, CXLA_ATTR_TO_APPLY, two);
    a_window(&t, rv2, "size=2x3");
    INFER_ERR(rv2, "inputs must have the same dimensions");
    INFER_ERR(I(&t, CXLA_OP_REDUCE_WINDOW, "", 3, v, i, ninf), "expects N inputs then N init");
    cxla_instr *rv3 = I(&t, CXLA_OP_REDUCE_WINDOW, "", 2, v, ninf);
    a_window(&t, rv3, "size=2x3");
    INFER_ERR(rv3, "missing called computation to_apply");
    a_comp(&t, rv3, CXLA_ATTR_TO_APPLY, two);
    INFER_ERR(rv3, "must take 2 parameters");
    t_free(&t);
}

static void test_select_and_scatter(void) {
    tm t = t_new();
    cxla_computation *ge = t_binary_comp(&t, "ge", "f32[]", CXLA_OP_COMPARE, "pred[]");
    cxla_computation *add = t_binary_comp(&t, "add", "f32[]", CXLA_OP_ADD, "f32[]");
    cxla_computation *bad = t_binary_comp(&t, "bad", "f32[]", CXLA_OP_ADD, "f32[]");
    cxla_computation *addi = t_binary_comp(&t, "addi", "s32[]", CXLA_OP_ADD, "s32[]");
    cxla_instr *x = P(&t, "f32[1,112,112,64]"), *g = P(&t, "f32[1,56,56,64]");
    cxla_instr *zero = P(&t, "f32[]"), *g2 = P(&t, "f32[1,55,56,64]");
    cxla_instr *s = I(&t, CXLA_OP_SELECT_AND_SCATTER, "", 3, x, g, zero);
    a_window(&t, s, "size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0");
    INFER_ERR(s, "missing called computation select");
    a_comp(&t, s, CXLA_ATTR_SELECT, ge);
    INFER_ERR(s, "missing called computation scatter");
    a_comp(&t, s, CXLA_ATTR_SCATTER, add);
    INFER_OK(s, "f32[1,112,112,64]");
    a_comp(&t, s, CXLA_ATTR_SELECT, bad);
    INFER_ERR(s, "select computation 'bad' must be (f32[], f32[]) -> pred[]");
    a_comp(&t, s, CXLA_ATTR_SELECT, ge);
    a_comp(&t, s, CXLA_ATTR_SCATTER, addi);
    INFER_ERR(s, "reduction computation 'addi'");
    cxla_instr *s2 = I(&t, CXLA_OP_SELECT_AND_SCATTER, "", 3, x, g2, zero);
    a_window(&t, s2, "size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0");
    a_comp(&t, s2, CXLA_ATTR_SELECT, ge);
    a_comp(&t, s2, CXLA_ATTR_SCATTER, add);
    INFER_ERR(s2, "the source f32[1,55,56,64] must have the windowed operand's shape "
                  "f32[1,56,56,64]");
    cxla_instr *tup = P(&t, "(f32[])");
    INFER_ERR(I(&t, CXLA_OP_SELECT_AND_SCATTER, "", 3, tup, g, zero), "must be an array");
    t_free(&t);
}

static void test_sort_and_topk(void) {
    tm t = t_new();
    cxla_computation *lt = t_binary_comp(&t, "lt", "f32[]", CXLA_OP_COMPARE, "pred[]");
    cxla_computation *add = t_binary_comp(&t, "add", "f32[]", CXLA_OP_ADD, "f32[]");
    cxla_computation *lt2 = t_params_comp(&t, "lt2", "f32[];f32[];s32[];s32[]", -1);
    {
        cxla_computation *saved = t.c;
        t.c = lt2;
        cxla_instr *c = I(&t, CXLA_OP_COMPARE, "pred[]", 2, lt2->params[0], lt2->params[1]);
        a_word(c, CXLA_ATTR_DIRECTION, "LT");
        t.c = saved;
    }
    cxla_computation *bad2 = t_params_comp(&t, "bad2", "f32[];f32[];f32[];f32[]", -1);
    {
        cxla_computation *saved = t.c;
        t.c = bad2;
        cxla_instr *c = I(&t, CXLA_OP_COMPARE, "pred[]", 2, bad2->params[0], bad2->params[1]);
        a_word(c, CXLA_ATTR_DIRECTION, "LT");
        t.c = saved;
    }
    cxla_instr *k = P(&t, "f32[8]"), *idx = P(&t, "s32[8]"), *i9 = P(&t, "s32[9]");
    cxla_instr *s = I(&t, CXLA_OP_SORT, "", 1, k);
    INFER_ERR(s, "missing attribute dimensions");
    a_ints(&t, s, CXLA_ATTR_DIMENSIONS, 1, 0);
    INFER_ERR(s, "missing called computation to_apply");
    a_comp(&t, s, CXLA_ATTR_TO_APPLY, lt);
    INFER_OK(s, "f32[8]");
    a_ints(&t, s, CXLA_ATTR_DIMENSIONS, 1, 1);
    INFER_ERR(s, "dimensions={1} must name one dimension of f32[8]");
    a_ints(&t, s, CXLA_ATTR_DIMENSIONS, 1, 0);
    a_comp(&t, s, CXLA_ATTR_TO_APPLY, add);
    INFER_ERR(s, "comparator 'add' must return pred[]");
    a_comp(&t, s, CXLA_ATTR_TO_APPLY, lt2);
    INFER_ERR(s, "comparator 'lt2' must take 2 parameters (2 per operand)");
    cxla_instr *s2 = I(&t, CXLA_OP_SORT, "", 2, k, idx);
    a_ints(&t, s2, CXLA_ATTR_DIMENSIONS, 1, 0);
    a_comp(&t, s2, CXLA_ATTR_TO_APPLY, lt2);
    INFER_OK(s2, "(f32[8], s32[8])");
    a_comp(&t, s2, CXLA_ATTR_TO_APPLY, bad2);
    INFER_ERR(s2, "comparator 'bad2' parameter 2 must be s32[]");
    cxla_instr *s3 = I(&t, CXLA_OP_SORT, "", 2, k, i9);
    a_ints(&t, s3, CXLA_ATTR_DIMENSIONS, 1, 0);
    a_comp(&t, s3, CXLA_ATTR_TO_APPLY, lt2);
    INFER_ERR(s3, "operands must have the same dimensions, got f32[8] and s32[9]");
    INFER_ERR(I(&t, CXLA_OP_SORT, "", 0), "at least one operand");
    cxla_instr *tup = P(&t, "(f32[8])");
    INFER_ERR(I(&t, CXLA_OP_SORT, "", 1, tup), "operand 0 must be an array");

    cxla_instr *x = P(&t, "f32[5,10]"), *sc = P(&t, "f32[]");
    cxla_instr *tk = I(&t, CXLA_OP_TOPK, "", 1, x);
    INFER_ERR(tk, "missing attribute k");
    a_int(tk, CXLA_ATTR_K, 2);
    INFER_OK(tk, "(f32[5,2], s32[5,2])");
    a_int(tk, CXLA_ATTR_K, 11);
    INFER_ERR(tk, "k=11 must be in 0..10");
    INFER_ERR(I(&t, CXLA_OP_TOPK, "", 1, sc), "rank >= 1");
    t_free(&t);
}

static cxla_instr *gather(tm *t, cxla_instr *x, cxla_instr *idx, const char *offset,
                          const char *collapsed, const char *sim, int ivd, const char *sizes) {
    cxla_instr *g = I(t, CXLA_OP_GATHER, "", 2, x, idx);
    const char *lists[4] = {offset, collapsed, sim, sizes};
    cxla_attr_id ids[4] = {CXLA_ATTR_OFFSET_DIMS, CXLA_ATTR_COLLAPSED_SLICE_DIMS,
                           CXLA_ATTR_START_INDEX_MAP, CXLA_ATTR_SLICE_SIZES};
    for (int k = 0; k < 4; k++) {
        if (!lists[k]) continue;
        cxla_attr a = {.id = ids[k], .kind = CXLA_ATTR_KIND_INTS};
        a.v.ints.values = t_alloc(t, sizeof(int64_t) * 16);
        for (const char *q = lists[k]; *q;) {
            a.v.ints.values[a.v.ints.count++] = strtoll(q, (char **)&q, 10);
            if (*q == ',') q++;
        }
        a_set(g, &a);
    }
    if (ivd >= -1) a_int(g, CXLA_ATTR_INDEX_VECTOR_DIM, ivd);
    return g;
}

static void test_gather(void) {
    tm t = t_new();
    cxla_instr *x = P(&t, "f32[16,11]"), *i52 = P(&t, "s64[5,2]"), *i452 = P(&t, "s64[4,5,2]");
    cxla_instr *i451 = P(&t, "s32[4,5,1]"), *i45 = P(&t, "s32[4,5]"), *fi = P(&t, "f32[5,2]");
    /* the seed's examples */
    INFER_OK(gather(&t, x, i52, "1,2", "", "0,1", 1, "8,6"), "f32[5,8,6]");
    INFER_OK(gather(&t, x, i452, "2,3", "", "0,1", 2, "8,6"), "f32[4,5,8,6]");
    INFER_OK(gather(&t, x, i451, "2", "0", "0", 2, "1,11"), "f32[4,5,11]");
    /* index_vector_dim == rank: an implicit trailing 1 */
    INFER_OK(gather(&t, x, i45, "2", "0", "0", 2, "1,11"), "f32[4,5,11]");
    /* offset dims may sit anywhere in the result */
    INFER_OK(gather(&t, x, i52, "0,2", "", "0,1", 1, "8,6"), "f32[8,5,6]");
    /* the text format's embedding lookup */
    cxla_instr *emb = P(&t, "bf16[30522,50]"), *one = P(&t, "s32[1,1]");
    INFER_OK(gather(&t, emb, one, "1", "0", "0", 1, "1,50"), "bf16[1,50]");

    INFER_ERR(gather(&t, x, i52, NULL, "", "0,1", 1, "8,6"), "missing attribute offset_dims");
    INFER_ERR(gather(&t, x, i52, "1,2", NULL, "0,1", 1, "8,6"),
              "missing attribute collapsed_slice_dims");
    INFER_ERR(gather(&t, x, i52, "1,2", "", NULL, 1, "8,6"), "missing attribute start_index_map");
    INFER_ERR(gather(&t, x, i52, "1,2", "", "0,1", 1, NULL), "missing attribute slice_sizes");
    INFER_ERR(gather(&t, x, i52, "1,2", "", "0,1", -2, "8,6"),
              "missing attribute index_vector_dim");
    INFER_ERR(gather(&t, x, fi, "1,2", "", "0,1", 1, "8,6"),
              "the indices must be an integer array");
    INFER_ERR(gather(&t, x, i52, "1,2", "", "0,1", 3, "8,6"), "index_vector_dim=3 must be in 0..2");
    INFER_ERR(gather(&t, x, i52, "2,1", "", "0,1", 1, "8,6"), "offset_dims={2,1} must be sorted");
    INFER_ERR(gather(&t, x, i52, "1,1", "", "0,1", 1, "8,6"), "offset_dims={1,1} repeats");
    INFER_ERR(gather(&t, x, i52, "1,3", "", "0,1", 1, "8,6"),
              "offset_dims={1,3}: 3 is out of range [0, 3) of the result");
    INFER_ERR(gather(&t, x, i52, "1,2", "", "0", 1, "8,6"),
              "start_index_map={0} has 1 entries but the index vectors of s64[5,2] have 2");
    INFER_ERR(gather(&t, x, i52, "1,2", "", "0,2", 1, "8,6"), "start_index_map={0,2}: 2 is out");
    INFER_ERR(gather(&t, x, i52, "1,2", "", "1,1", 1, "8,6"), "start_index_map={1,1} repeats");
    INFER_ERR(gather(&t, x, i451, "", "1,0", "0", 2, "1,1"),
              "collapsed_slice_dims={1,0} must be sorted");
    INFER_ERR(gather(&t, x, i451, "2", "2", "0", 2, "1,11"), "collapsed_slice_dims={2}: 2 is out");
    INFER_ERR(gather(&t, x, i451, "2", "0,0", "0", 2, "1,11"), "repeats");
    INFER_ERR(gather(&t, x, i52, "1,2", "", "0,1", 1, "8,6,1"),
              "slice_sizes={8,6,1} needs one size per dimension");
    INFER_ERR(gather(&t, x, i451, "2,3", "0", "0", 2, "1,11"),
              "must together count the 2 dimensions of f32[16,11]");
    INFER_ERR(gather(&t, x, i52, "1,2", "", "0,1", 1, "8,12"),
              "slice_sizes={8,12}: size 12 of dimension 1 is outside 0..11");
    INFER_ERR(gather(&t, x, i52, "1,2", "", "0,1", 1, "-1,6"), "size -1");
    INFER_ERR(gather(&t, x, i451, "2", "0", "0", 2, "2,11"),
              "collapsed or batching dimension 0 must have size 0 or 1");
    cxla_instr *tup = P(&t, "(f32[2])");
    INFER_ERR(gather(&t, tup, i52, "1,2", "", "0,1", 1, "8,6"), "the operand must be an array");
    t_free(&t);
}

static void test_gather_batching_dims(void) {
    tm t = t_new();
    cxla_instr *x = P(&t, "f32[3,10,5]"), *idx = P(&t, "s32[3,4,1]");
    cxla_instr *bad = P(&t, "s32[2,4,1]"), *i2 = P(&t, "s32[4,3,1]");
    cxla_instr *g = gather(&t, x, idx, "2", "1", "1", 2, "1,1,5");
    INFER_ERR(g, "must together count the 3 dimensions");
    a_ints(&t, g, CXLA_ATTR_OPERAND_BATCHING_DIMS, 1, 0);
    INFER_ERR(g, "operand_batching_dims={0} and start_indices_batching_dims={} must have the same "
                 "length");
    a_ints(&t, g, CXLA_ATTR_START_INDICES_BATCHING_DIMS, 1, 0);
    INFER_OK(g, "f32[3,4,5]");
    a_ints(&t, g, CXLA_ATTR_START_INDICES_BATCHING_DIMS, 1, 2);
    INFER_ERR(g, "start_indices_batching_dims={2} must not contain index_vector_dim=2");
    a_ints(&t, g, CXLA_ATTR_START_INDICES_BATCHING_DIMS, 1, 3);
    INFER_ERR(g, "start_indices_batching_dims={3}: 3 is out of range");
    a_ints(&t, g, CXLA_ATTR_START_INDICES_BATCHING_DIMS, 1, 1);
    INFER_ERR(g, "batching dimension 0 of f32[3,10,5] (size 3) and 1 of s32[3,4,1] (size 4) "
                 "must match");
    /* batching dims in the other order, indices batching dim not leading */
    cxla_instr *g2 = gather(&t, x, i2, "2", "1", "1", 2, "1,1,5");
    a_ints(&t, g2, CXLA_ATTR_OPERAND_BATCHING_DIMS, 1, 0);
    a_ints(&t, g2, CXLA_ATTR_START_INDICES_BATCHING_DIMS, 1, 1);
    INFER_OK(g2, "f32[4,3,5]");
    cxla_instr *g3 = gather(&t, x, bad, "2", "1", "1", 2, "1,1,5");
    a_ints(&t, g3, CXLA_ATTR_OPERAND_BATCHING_DIMS, 1, 0);
    a_ints(&t, g3, CXLA_ATTR_START_INDICES_BATCHING_DIMS, 1, 0);
    INFER_ERR(g3, "must match");
    /* a batching dim that is also collapsed is refused; one also in start_index_map is not
     * (XLA's ValidateGatherDimensionNumbers checks each list alone) */
    cxla_instr *g4 = gather(&t, x, idx, "1,2", "0", "1", 2, "1,1,5");
    a_ints(&t, g4, CXLA_ATTR_OPERAND_BATCHING_DIMS, 1, 0);
    a_ints(&t, g4, CXLA_ATTR_START_INDICES_BATCHING_DIMS, 1, 0);
    INFER_ERR(g4, "dimension 0 is in both collapsed_slice_dims={0} and operand_batching_dims={0}");
    cxla_instr *g5 = gather(&t, x, idx, "2", "1", "0", 2, "1,1,5");
    a_ints(&t, g5, CXLA_ATTR_OPERAND_BATCHING_DIMS, 1, 0);
    a_ints(&t, g5, CXLA_ATTR_START_INDICES_BATCHING_DIMS, 1, 0);
    INFER_OK(g5, "f32[3,4,5]");
    cxla_instr *g6 = gather(&t, x, idx, "2", "1", "1", 2, "2,1,5");
    a_ints(&t, g6, CXLA_ATTR_OPERAND_BATCHING_DIMS, 1, 0);
    a_ints(&t, g6, CXLA_ATTR_START_INDICES_BATCHING_DIMS, 1, 0);
    INFER_ERR(g6, "collapsed or batching dimension 0 must have size 0 or 1");
    cxla_instr *y = P(&t, "f32[3,2,10,5]"), *yi = P(&t, "s32[3,2,4,1]");
    cxla_instr *g7 = gather(&t, y, yi, "3", "2", "2", 3, "1,1,1,5");
    a_ints(&t, g7, CXLA_ATTR_OPERAND_BATCHING_DIMS, 2, 1, 0);
    a_ints(&t, g7, CXLA_ATTR_START_INDICES_BATCHING_DIMS, 2, 1, 0);
    INFER_ERR(g7, "operand_batching_dims={1,0} must be sorted");
    a_ints(&t, g7, CXLA_ATTR_OPERAND_BATCHING_DIMS, 2, 0, 1);
    a_ints(&t, g7, CXLA_ATTR_START_INDICES_BATCHING_DIMS, 2, 1, 1);
    INFER_ERR(g7, "start_indices_batching_dims={1,1} repeats");
    a_ints(&t, g7, CXLA_ATTR_START_INDICES_BATCHING_DIMS, 2, 0, 1);
    INFER_OK(g7, "f32[3,2,4,5]");
    t_free(&t);
}

static cxla_instr *scatter(tm *t, int n, cxla_instr **ops, const char *uwd, const char *iwd,
                           const char *sdod, int ivd, cxla_computation *f) {
    cxla_instr *s = I(t, CXLA_OP_SCATTER, "", 0);
    s->operand_count = n;
    s->operands = t_alloc(t, sizeof(cxla_instr *) * (size_t)n);
    memcpy(s->operands, ops, sizeof(cxla_instr *) * (size_t)n);
    const char *lists[3] = {uwd, iwd, sdod};
    cxla_attr_id ids[3] = {CXLA_ATTR_UPDATE_WINDOW_DIMS, CXLA_ATTR_INSERTED_WINDOW_DIMS,
                           CXLA_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS};
    for (int k = 0; k < 3; k++) {
        if (!lists[k]) continue;
        cxla_attr a = {.id = ids[k], .kind = CXLA_ATTR_KIND_INTS};
        a.v.ints.values = t_alloc(t, sizeof(int64_t) * 16);
        for (const char *q = lists[k]; *q;) {
            a.v.ints.values[a.v.ints.count++] = strtoll(q, (char **)&q, 10);
            if (*q == ',') q++;
        }
        a_set(s, &a);
    }
    if (ivd >= -1) a_int(s, CXLA_ATTR_INDEX_VECTOR_DIM, ivd);
    if (f) a_comp(t, s, CXLA_ATTR_TO_APPLY, f);
    return s;
}

static void test_scatter(void) {
    tm t = t_new();
    cxla_computation *add = t_binary_comp(&t, "add", "bf16[]", CXLA_OP_ADD, "bf16[]");
    cxla_computation *addf = t_binary_comp(&t, "addf", "f32[]", CXLA_OP_ADD, "f32[]");
    cxla_instr *x = P(&t, "bf16[30522,16]"), *idx = P(&t, "s64[2048,1]");
    cxla_instr *u = P(&t, "bf16[2048,16]"), *u17 = P(&t, "bf16[2048,17]");
    cxla_instr *u2047 = P(&t, "bf16[2047,16]"), *u3 = P(&t, "bf16[2048,16,1]");
    cxla_instr *fidx = P(&t, "f32[2048,1]");
    cxla_instr *ops[] = {x, idx, u};
    /* the text format's example */
    INFER_OK(scatter(&t, 3, ops, "1", "0", "0", 1, add), "bf16[30522,16]");
    INFER_ERR(scatter(&t, 3, ops, "1", "0", "0", 1, NULL), "missing called computation to_apply");
    INFER_ERR(scatter(&t, 3, ops, "1", "0", "0", 1, addf), "reduction computation 'addf'");
    INFER_ERR(scatter(&t, 3, ops, NULL, "0", "0", 1, add), "missing attribute update_window_dims");
    INFER_ERR(scatter(&t, 3, ops, "1", NULL, "0", 1, add),
              "missing attribute inserted_window_dims");
    INFER_ERR(scatter(&t, 3, ops, "1", "0", NULL, 1, add),
              "missing attribute scatter_dims_to_operand_dims");
    INFER_ERR(scatter(&t, 3, ops, "1", "0", "0", -2, add), "missing attribute index_vector_dim");
    INFER_ERR(scatter(&t, 3, ops, "1", "0", "0", 3, add), "index_vector_dim=3 must be in 0..2");
    INFER_ERR(scatter(&t, 3, ops, "1", "0", "0,1", 1, add),
              "scatter_dims_to_operand_dims={0,1} has 2 entries but the index vectors");
    INFER_ERR(scatter(&t, 3, ops, "1", "0", "2", 1, add),
              "scatter_dims_to_operand_dims={2}: 2 is out");
    INFER_ERR(scatter(&t, 3, ops, "1", "", "0", 1, add), "must together count");
    INFER_ERR(scatter(&t, 3, ops, "1", "2", "0", 1, add), "inserted_window_dims={2}: 2 is out");
    INFER_ERR(scatter(&t, 3, ops, "2", "0", "0", 1, add), "update_window_dims={2}: 2 is out");
    INFER_ERR(scatter(&t, 3, ops, "0,1", "0", "0", 1, add),
              "the updates bf16[2048,16] must have rank 3");
    cxla_instr *ops3[] = {x, idx, u3};
    INFER_ERR(scatter(&t, 3, ops3, "2,1", "", "0", 1, add),
              "update_window_dims={2,1} must be sorted");
    INFER_ERR(scatter(&t, 3, ops3, "1,1", "", "0", 1, add), "update_window_dims={1,1} repeats");
    cxla_instr *x3 = P(&t, "bf16[30522,16,4]");
    cxla_instr *ops4[] = {x3, idx, u};
    INFER_ERR(scatter(&t, 3, ops4, "1", "2,0", "0", 1, add),
              "inserted_window_dims={2,0} must be sorted");
    INFER_ERR(scatter(&t, 3, ops4, "1", "0,0", "0", 1, add), "repeats");
    cxla_instr *ops5[] = {x, idx, u17};
    INFER_ERR(scatter(&t, 3, ops5, "1", "0", "0", 1, add),
              "update window dimension 1 of bf16[2048,17] (size 17) exceeds operand dimension 1");
    cxla_instr *ops6[] = {x, idx, u2047};
    INFER_ERR(scatter(&t, 3, ops6, "1", "0", "0", 1, add),
              "scatter dimension 0 of the updates bf16[2047,16] has size 2047 but the indices "
              "s64[2048,1] have 2048");
    cxla_instr *ops7[] = {x, fidx, u};
    INFER_ERR(scatter(&t, 3, ops7, "1", "0", "0", 1, add), "the indices must be an integer array");
    cxla_instr *ops8[] = {x, idx};
    INFER_ERR(scatter(&t, 2, ops8, "1", "0", "0", 1, add), "expects N operands, the indices and N");
    cxla_instr *tup = P(&t, "(bf16[2])");
    cxla_instr *ops9[] = {tup, idx, u};
    INFER_ERR(scatter(&t, 3, ops9, "1", "0", "0", 1, add), "operand 0 must be an array");

    /* variadic, with batching dims */
    cxla_computation *two = t_params_comp(&t, "two", "f32[];s32[];f32[];s32[]", -1);
    {
        cxla_computation *saved = t.c;
        t.c = two;
        two->root = I(&t, CXLA_OP_TUPLE, "(f32[], s32[])", 2, two->params[0], two->params[1]);
        t.c = saved;
    }
    cxla_instr *a = P(&t, "f32[3,10,5]"), *b = P(&t, "s32[3,10,5]"), *bi = P(&t, "s32[3,4,1]");
    cxla_instr *ua = P(&t, "f32[3,4,5]"), *ub = P(&t, "s32[3,4,5]"), *b9 = P(&t, "s32[3,9,5]");
    cxla_instr *vops[] = {a, b, bi, ua, ub};
    cxla_instr *v = scatter(&t, 5, vops, "2", "1", "1", 2, two);
    INFER_ERR(v, "must together count the 3 dimensions");
    a_ints(&t, v, CXLA_ATTR_INPUT_BATCHING_DIMS, 1, 0);
    a_ints(&t, v, CXLA_ATTR_SCATTER_INDICES_BATCHING_DIMS, 1, 0);
    INFER_OK(v, "(f32[3,10,5], s32[3,10,5])");
    a_ints(&t, v, CXLA_ATTR_SCATTER_INDICES_BATCHING_DIMS, 1, 2);
    INFER_ERR(v, "must not contain index_vector_dim=2");
    a_ints(&t, v, CXLA_ATTR_SCATTER_INDICES_BATCHING_DIMS, 1, 0);
    a_ints(&t, v, CXLA_ATTR_INSERTED_WINDOW_DIMS, 1, 0);
    INFER_ERR(v, "dimension 0 is in both inserted_window_dims={0} and input_batching_dims={0}");
    a_ints(&t, v, CXLA_ATTR_INSERTED_WINDOW_DIMS, 1, 1);
    a_ints(&t, v, CXLA_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS, 1, 0);
    INFER_ERR(v, "dimension 0 is in both scatter_dims_to_operand_dims={0} and input_batching_dims");
    cxla_instr *vops2[] = {a, b9, bi, ua, ub};
    cxla_instr *v2 = scatter(&t, 5, vops2, "2", "1", "1", 2, two);
    INFER_ERR(v2, "operands must have the same dimensions, got f32[3,10,5] and s32[3,9,5]");
    t_free(&t);
}

static void test_map_and_scan(void) {
    tm t = t_new();
    cxla_computation *add = t_binary_comp(&t, "add", "f32[]", CXLA_OP_ADD, "f32[]");
    cxla_computation *lt = t_binary_comp(&t, "lt", "f32[]", CXLA_OP_COMPARE, "pred[]");
    cxla_computation *vec = t_params_comp(&t, "vec", "f32[2];f32[]", 0);
    cxla_computation *addi = t_binary_comp(&t, "addi", "s32[]", CXLA_OP_ADD, "s32[]");
    cxla_instr *a = P(&t, "f32[4]"), *b = P(&t, "f32[4]"), *c = P(&t, "f32[5]");
    cxla_instr *m = I(&t, CXLA_OP_MAP, "", 2, a, b);
    INFER_ERR(m, "missing called computation to_apply");
    a_comp(&t, m, CXLA_ATTR_TO_APPLY, add);
    INFER_OK(m, "f32[4]");
    a_ints(&t, m, CXLA_ATTR_DIMENSIONS, 1, 0);
    INFER_OK(m, "f32[4]");
    /* The dimensions are ignored, as XLA's HandleMap ignores them. */
    a_ints(&t, m, CXLA_ATTR_DIMENSIONS, 1, 1);
    INFER_OK(m, "f32[4]");
    cxla_instr *m2 = I(&t, CXLA_OP_MAP, "", 2, a, b);
    a_comp(&t, m2, CXLA_ATTR_TO_APPLY, lt);
    INFER_OK(m2, "pred[4]");
    a_comp(&t, m2, CXLA_ATTR_TO_APPLY, vec);
    INFER_ERR(m2, "to_apply 'vec' must return a scalar");
    a_comp(&t, m2, CXLA_ATTR_TO_APPLY, addi);
    INFER_ERR(m2, "to_apply 'addi' parameter 0 must be f32[]");
    cxla_instr *m3 = I(&t, CXLA_OP_MAP, "", 1, a);
    a_comp(&t, m3, CXLA_ATTR_TO_APPLY, add);
    INFER_ERR(m3, "must take 1 scalar parameters (one per operand)");
    INFER_ERR(I(&t, CXLA_OP_MAP, "", 2, a, c), "operands must have the same dimensions");
    INFER_ERR(I(&t, CXLA_OP_MAP, "", 0), "at least one operand");

    /* scan: declared shape; operand, dimension and body checked */
    cxla_instr *s = I(&t, CXLA_OP_SCAN, "(f32[4], f32[])", 1, a);
    INFER_ERR(s, "missing called computation to_apply");
    a_comp(&t, s, CXLA_ATTR_TO_APPLY, add);
    INFER_ERR(s, "missing attribute dimensions");
    a_ints(&t, s, CXLA_ATTR_DIMENSIONS, 1, 0);
    INFER_OK(s, "(f32[4], f32[])");
    a_ints(&t, s, CXLA_ATTR_DIMENSIONS, 1, 1);
    INFER_ERR(s, "must name one dimension of f32[4]");
    INFER_ERR(I(&t, CXLA_OP_SCAN, "f32[]", 0), "at least one operand");
    cxla_instr *s2 = I(&t, CXLA_OP_SCAN, "", 1, a); /* no written shape */
    a_comp(&t, s2, CXLA_ATTR_TO_APPLY, add);
    a_ints(&t, s2, CXLA_ATTR_DIMENSIONS, 1, 0);
    INFER_ERR(s2, "its result shape must be written");
    t_free(&t);
}

TEST_MAIN(TEST(test_reduce), TEST(test_reducer_signatures), TEST(test_reduce_window),
          TEST(test_select_and_scatter), TEST(test_sort_and_topk), TEST(test_gather),
          TEST(test_gather_batching_dims), TEST(test_scatter), TEST(test_map_and_scan))
