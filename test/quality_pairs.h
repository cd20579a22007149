/* Pairs of an original and its reconstruction for the quality metrics' tests: fields of the test
 * patterns in shapes of rank 1 to 4 (axes shorter than SSIM's window, odd extents, several
 * tiles), decoded from real chunks of both codecs, or exact copies. */
#ifndef H5ZGPU_TEST_QUALITY_PAIRS_H
#define H5ZGPU_TEST_QUALITY_PAIRS_H

#include "h5zgpu_quality.h"

#include <stdint.h>

typedef struct tq_pair {
    const char *name;
    h5zgpu_dtype dtype;
    unsigned rank;
    uint64_t dims[4];
    int has_missing;   /* the pattern's land fill value, -1e34, declared missing */
    void *a, *b;       /* malloc'd by tq_make (tq_free) */
} tq_pair;

/* How many pairs there are, and pair k made (compressed and decoded on the CPU); 0, or -1 when
 * the codec fails. */
int tq_count(void);
int tq_make(int k, tq_pair *p);
void tq_free(tq_pair *p);

/* The double-valued metrics of a result, by index 0..tq_metrics()-1, for comparing two. */
size_t tq_metrics(void);
double tq_metric(const h5zgpu_quality *q, size_t k);
const char *tq_metric_name(size_t k);

#endif
