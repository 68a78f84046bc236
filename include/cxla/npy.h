/* cxla/npy.h: NumPy .npy files.
 *
 * Reads format versions 1.0, 2.0 and 3.0, little- and big-endian data, C and Fortran
 * order, bool, every integer and float width and complex64/128. Types NumPy lacks
 * (bf16, the f8 types, s4, ...) are stored as ml_dtypes stores them; see docs/npy.md.
 * A read literal has the default (row-major) layout.
 *
 * Malformed files (truncated, wrong magic, bad header, sizes that lie, absurd dims) give
 * a CXLA_STATUS_INVALID_ARGUMENT or _DATA_LOSS status naming the problem; never a crash.
 */
#ifndef CXLA_NPY_H_
#define CXLA_NPY_H_

#include <stddef.h>

#include "cxla/literal.h"
#include "cxla/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* |type_hint| resolves the dtypes that do not name a cxla type by themselves (the raw
 * 'V1'/'V2' void types that ml_dtypes arrays are saved as); CXLA_TYPE_INVALID when there
 * is none, in which case such a file is an error. The hint is ignored for descrs that
 * name a type ('<f4' ...); '<f1' (how np.save writes ml_dtypes' float8_e5m2) reads as
 * f8e5m2. */
cxla_status cxla_npy_read_buffer(const void *data, size_t size, cxla_type type_hint,
                                 cxla_literal **out_literal);
/* The same from a file; errors also name |path| (a missing file is NOT_FOUND). */
cxla_status cxla_npy_read_file(const char *path, cxla_type type_hint, cxla_literal **out_literal);
/* Writes an array literal (any layout; the file is in C order). Errors: a tuple or token
 * literal (INVALID_ARGUMENT); for files, one that cannot be written (UNAVAILABLE). */
cxla_status cxla_npy_write_buffer(const cxla_literal *literal, void **out_data,
                                  size_t *out_size); /* free(*out_data) */
cxla_status cxla_npy_write_file(const char *path, const cxla_literal *literal);

#ifdef __cplusplus
}
#endif
#endif /* CXLA_NPY_H_ */
