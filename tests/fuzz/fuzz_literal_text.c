/* libFuzzer target for the literal text parser: parse the bytes as a literal that starts
 * with its shape; when that succeeds, print it with its shape and layout, parse that
 * again and check that both literals hold the same shapes and the same bytes; then the
 * value alone, read with the literal's shape, must give the same bytes again. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "literal/literal_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same_bits(const cxla_literal *a, const cxla_literal *b) {
    if (!cxla_shape_equal(a->shape, b->shape)) return false;
    if (a->shape->type == CXLA_TUPLE) {
        if (a->tuple_count != b->tuple_count) return false;
        for (int64_t i = 0; i < a->tuple_count; i++)
            if (!same_bits(a->elements[i], b->elements[i])) return false;
        return true;
    }
    if (a->size != b->size) return false;
    return a->size == 0 || memcmp(a->data, b->data, a->size) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* A private copy with nothing after it, so that reading past |size| is caught. */
    char *text = malloc(size ? size : 1);
    if (!text) return 0;
    if (size) memcpy(text, data, size);
    cxla_literal *lit = NULL;
    cxla_status s = cxla_literal_parse(text, size, NULL, &lit);
    free(text);
    if (s) {
        if (!cxla_status_message(s)[0]) abort(); /* every error says something */
        cxla_status_free(s);
        return 0;
    }
    char *printed =
        cxla_literal_to_string(lit, CXLA_LITERAL_PRINT_SHAPE | CXLA_LITERAL_PRINT_LAYOUT);
    if (printed) {
        cxla_literal *back = NULL;
        s = cxla_literal_parse(printed, strlen(printed), NULL, &back);
        if (s || !same_bits(lit, back)) abort();
        /* The value alone, read with the literal's shape. The value of a padded literal
         * (sizes below its bounds) holds fewer elements than the bounds, and a value read
         * as a bounded shape fills the bounds, so that one is read as its static form. */
        cxla_literal *plain = lit;
        if (cxla_literal_is_padded(lit) && cxla_literal_to_static(lit, &plain)) abort();
        char *value = cxla_literal_to_string(plain, CXLA_LITERAL_PRINT_DEFAULT);
        if (value) {
            cxla_literal *again = NULL;
            s = cxla_literal_parse(value, strlen(value), plain->shape, &again);
            if (s || !same_bits(plain, again)) abort();
            cxla_literal_free(again);
            free(value);
        }
        if (plain != lit) cxla_literal_free(plain);
        cxla_literal_free(back);
        free(printed);
    }
    cxla_literal_free(lit);
    return 0;
}
