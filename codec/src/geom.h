/* The shape both codecs see: a chunk of any rank folded to at most 3 dimensions. Unit
 * dimensions drop out; beyond three, the leading ones merge into z. */
#ifndef H5ZGPU_GEOM_H
#define H5ZGPU_GEOM_H

#include <stdint.h>

typedef struct hz_fold {
    uint64_t nz, ny, nx;   /* 1 where the chunk has fewer dimensions */
    unsigned dim;          /* 1, 2 or 3: the non-unit dimensions, capped at 3 */
} hz_fold;

#ifdef __cplusplus
extern "C" {
#endif

/* -1 when a dimension is 0. */
int hz_fold_dims(hz_fold *f, unsigned rank, const uint64_t *dims);

#ifdef __cplusplus
}
#endif

#endif
