/* Fixed ratio's search for a bound, on sizes alone: for one chunk (the filter's, policy.c) and
 * for a sample of many chunks (h5zgpu_ratio_begin, ratio_budget.c). Every decision rests on
 * sizes and the bounds applied, which both executors make alike, so either picks the same
 * bound. */
#ifndef H5ZGPU_RATIO_H
#define H5ZGPU_RATIO_H

#include "h5zgpu.h"

/* The largest target ratio H5ZGPU_MODE_RATIO takes. */
#define HZ_RATIO_MAX 1e6

/* One try: what was asked (REL's fraction of the range, or ABS's bound), the absolute bound it
 * applied (0 when stored raw or exact) and the bytes it made. */
typedef struct hz_ratio_try {
    h5zgpu_mode mode;
    double eb;
    double applied;
    double size;
} hz_ratio_try;

/* Codes what is searched at (mode, eb): its bytes into *size and the absolute bound applied
 * into *applied (0 when stored raw or exact). */
typedef h5zgpu_status (*hz_ratio_measure)(void *ctx, h5zgpu_mode mode, double eb,
                                          double *applied, double *size);

/* A search's tries in the order measured, and which came nearest the target. */
#define HZ_RATIO_TRIES 8

typedef struct hz_ratio_tries {
    hz_ratio_try t[HZ_RATIO_TRIES];
    int n, best;
} hz_ratio_tries;

/* Searches the bound that brings the bytes of what measure codes (values elements, raw bytes)
 * nearest raw / target: REL 1e-3 first, which tells the scale (while nothing shrinks, REL with
 * larger fractions); then ABS bounds, from one try a model of about one bit a value more for
 * each halving of the bound, from two the secant in (log bound, log size) through the tries
 * that bracket the target, or the last two, kept inside the bracket (its geometric middle where
 * the secant leaves it). With one_chunk (the filter's search) a REL try is a point of the curve
 * and may be the result, and a try within 2% of the target ends it; else (a sample of many
 * chunks, each of which a REL try bounds apart) a REL try tells the scale alone, the result is
 * an ABS try, and 5% ends it (the batches after a sample correct the rest). After eight tries
 * the closest wins: tries->t[tries->best]. */
h5zgpu_status hz_ratio_search(double values, double raw, double target, int one_chunk,
                              hz_ratio_measure measure, void *ctx, hz_ratio_tries *tries);

#endif
