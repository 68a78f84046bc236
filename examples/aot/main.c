/* Calls examples/predict.hlo compiled ahead of time (`cxla compile ../predict.hlo -o
 * generated/predict`): softmax(x @ w + b) for 8 rows of 4 features, 3 classes. No cxla
 * library: only predict.c, this file and libm. */
#include <stdio.h>
#include <stdlib.h>

#include "predict.h"

int main(void) {
    float w[4][3], b[3] = {0.1f, -0.2f, 0.3f}, x[8][4], probs[8][3];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++) w[i][j] = (float)(i - j) * 0.25f;
    for (int r = 0; r < 8; r++)
        for (int i = 0; i < 4; i++) x[r][i] = (float)(r * 4 + i) / 16.0f - 1.0f;
    /* Arguments in parameter order (w, b, x); the scratch area 64-byte aligned. */
    const void *args[predict_arg_count] = {w, b, x};
    void *results[predict_result_count] = {probs};
    void *scratch = aligned_alloc(64, (predict_scratch_size() + 63) / 64 * 64 + 64);
    int rc = predict_run(args, results, scratch);
    free(scratch);
    if (rc != 0) {
        fprintf(stderr, "predict: %s\n", predict_error_string(rc));
        return 1;
    }
    for (int r = 0; r < 8; r++)
        printf("row %d: %.9g %.9g %.9g\n", r, probs[r][0], probs[r][1], probs[r][2]);
    return 0;
}
