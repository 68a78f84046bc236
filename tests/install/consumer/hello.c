/* A program built against an installed cxla by tests/install/test_install.sh, once with
 * pkg-config and once with CMake's find_package(cxla). It uses only the public API:
 * literal text, type conversion, .npy in memory and an error status. */
#include <cxla/cxla.h>
#include <stdio.h>
#include <stdlib.h>

static int failed(cxla_status s) {
    fprintf(stderr, "error: %s\n", cxla_status_message(s));
    cxla_status_free(s);
    return 1;
}

int main(void) {
    printf("cxla %s\n", CXLA_VERSION_STRING);
    cxla_literal *x = NULL, *y = NULL, *back = NULL;
    cxla_status s = cxla_literal_parse("f32[2,2] { { 1, 2 }, { 3, 4.5 } }", (size_t)-1, NULL, &x);
    if (!s) s = cxla_literal_convert(x, CXLA_BF16, &y);
    if (s) return failed(s);
    char *text = cxla_literal_to_string(y, CXLA_LITERAL_PRINT_SHAPE);
    if (!text) return 1;
    printf("%s\n", text);
    free(text);

    void *npy = NULL;
    size_t size = 0;
    s = cxla_npy_write_buffer(x, &npy, &size);
    if (!s) s = cxla_npy_read_buffer(npy, size, CXLA_TYPE_INVALID, &back);
    free(npy);
    if (s) return failed(s);
    printf(".npy round trip: %s\n", cxla_literal_equal(x, back) ? "equal" : "DIFFERENT");

    cxla_literal *bad = NULL;
    s = cxla_literal_parse("f32[3] {1, 2}", (size_t)-1, NULL, &bad);
    printf("bad literal: %s\n", s ? cxla_status_code_name(cxla_status_code_of(s)) : "accepted");
    cxla_status_free(s);
    cxla_literal_free(bad);
    cxla_literal_free(back);
    cxla_literal_free(y);
    cxla_literal_free(x);
    return 0;
}
