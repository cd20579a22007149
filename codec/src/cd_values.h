/* The filter's cd_values (docs/FILTER.md): the user's part (codec, mode, bound, optional flags,
 * missing value and radius) and the part set_local appends (layout version, element type, byte
 * order, the codec's fill value, chunk shape). Pure C, no HDF5 call: it lives in the codec
 * library so that writers of finished chunks (H5Dwrite_chunk, h5zgpu_params_from_cd_values)
 * apply exactly the filter's parameters. */
#ifndef H5ZGPU_FILTER_CD_VALUES_H
#define H5ZGPU_FILTER_CD_VALUES_H

#include "h5zgpu.h"

#include <stddef.h>

#define HZF_USER_NELMTS 4u         /* codec, mode, eb low word, eb high word */
#define HZF_IDX_UFLAGS 4u          /* optional user flags word */
#define HZF_UFLAG_MISSING 1u       /* bit 0: a missing value follows (2 words) */
/* bit 2: a Huffman radius follows (1 word, after the missing value). Bit 1 stays unused: a
 * value of 2 at index 4 marks set_local's part. */
#define HZF_UFLAG_RADIUS 4u
#define HZF_USER_MAX_NELMTS 8u
#define HZF_LOCAL_FIXED 7u         /* set_local's values before the chunk dimensions */
#define HZF_MAX_NELMTS (HZF_USER_MAX_NELMTS + HZF_LOCAL_FIXED + H5ZGPU_MAX_RANK)
#define HZF_WHY_LEN 640

#define HZF_LAYOUT_HINT                                                                     \
    "{codec (0 auto, 1 fixed, 2 huffman), mode (0 ABS, 1 REL, 2 PWREL, 3 fixed ratio), eb " \
    "(mode 3: the target ratio) low word, high word}, optionally followed by {flags (bit "  \
    "0: a missing value follows, bit 2: a Huffman radius follows), missing value low word, " \
    "high word, radius}"

/* The user's values, as can_apply sees them: codec, mode, bound, the missing value (as the fill)
 * and the radius go into p; *ulen is the length of the user's part. What follows it must be
 * nothing or a complete part written by set_local (a creation property list copied from an
 * existing dataset). Returns 0, or -1 with the reason in why. */
int hzf_parse_user(size_t n, const unsigned cd[], h5zgpu_params *p, size_t *ulen, char *why,
                   size_t whylen);

/* Everything encoding and decoding need: the user's part and set_local's (element type, the
 * codec's fill value, chunk shape into p; *big_endian: the dataset's byte order). */
int hzf_parse(size_t n, const unsigned cd[], h5zgpu_params *p, int *big_endian, char *why,
              size_t whylen);

/* Writes set_local's part after the user's ulen values of cd (which must hold
 * HZF_MAX_NELMTS): p's element type, fill value and chunk shape, and the byte order. Returns
 * the new number of values. */
size_t hzf_write_local(unsigned cd[], size_t ulen, const h5zgpu_params *p, int big_endian);

#endif
