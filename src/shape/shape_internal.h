/* Internal shape helpers: arena copies, printing into a string buffer, and a parser
 * that reads one shape out of a larger text (the HLO parser uses it). */
#ifndef CXLA_SHAPE_SHAPE_INTERNAL_H_
#define CXLA_SHAPE_SHAPE_INTERNAL_H_

#include "base/base.h"
#include "cxla/shape.h"

/* Deep-copies |src| into |dst|, every array allocated in |arena|. */
cxla_status cxla_shape_copy_to_arena(cxla_arena *arena, const cxla_shape *src, cxla_shape *dst);

/* A copy of a shape in one block, without validation: for shapes already known to be
 * well formed (from a verified module, or a literal's), where checking them again would
 * cost more than the copy. cxla_shape_block_size gives the bytes the copy takes (root
 * included; false when that overflows); cxla_shape_copy_into copies |shape| into |block|
 * (16-byte aligned, exactly that size, need not be zeroed) and returns the root, at
 * |block|. Nothing in the copy points outside |block|. */
bool cxla_shape_block_size(const cxla_shape *shape, size_t *out_size);
cxla_shape *cxla_shape_copy_into(void *block, size_t size, const cxla_shape *shape);

/* Appends the text form of |shape| (cxla_shape_print_flags) to |b|. */
void cxla_shape_print(cxla_strbuf *b, const cxla_shape *shape, int flags);
/* Appends a layout "{1,0:T(8,128)}" for |shape| (which must have one). */
void cxla_layout_print(cxla_strbuf *b, const cxla_shape *shape);

/* Parses one shape starting at text[*pos] (leading whitespace and comments skipped),
 * allocating in |arena|; on success *pos is just past the shape. Errors name the line
 * and column in |text| and show the offending text. A layout is read only when '{' is
 * followed by a digit or ':' (so "f32[] {" before a computation body is not a layout). */
cxla_status cxla_shape_parse_at(const char *text, size_t len, size_t *pos, cxla_arena *arena,
                                cxla_shape *out_shape);

/* Skips whitespace and comments (slash-star ... star-slash and // to end of line). */
size_t cxla_text_skip_space(const char *text, size_t len, size_t pos);

/* Fills |layout| with the default layout for |rank| (minor_to_major allocated in arena). */
cxla_status cxla_layout_make_default(cxla_arena *arena, int64_t rank, cxla_layout **out_layout);

#endif /* CXLA_SHAPE_SHAPE_INTERNAL_H_ */
