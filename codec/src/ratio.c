#include "ratio.h"

#include "portable.h"

#include <math.h>

#define HZ_RATIO_PROBE 1e-3
#define HZ_RATIO_REL_MAX 0.5
#define HZ_RATIO_TOL 0.02
#define HZ_RATIO_TOL_SAMPLE 0.05   /* the batches after a sample correct what is left */

/* Whether try t is a point of the curve of size against ABS bound: an ABS try, or with
 * one_chunk a REL one that applied a bound (one chunk's REL bound is one ABS bound). */
static int curve_point(const hz_ratio_try *t, int one_chunk)
{
    return t->applied > 0 && (t->mode == H5ZGPU_MODE_ABS || one_chunk);
}

/* The next ABS bound from tries t[0..n-1] (the last with a scale), towards size want. */
static double ratio_next(const hz_ratio_try *t, int n, double want, double values,
                         int one_chunk)
{
    const hz_ratio_try *over = NULL, *under = NULL, *last = &t[n - 1];
    for (int i = 0; i < n; i++) {   /* the tightest bracket: too big at the largest bound ... */
        if (!curve_point(&t[i], one_chunk))
            continue;
        if (t[i].size > want && (!over || t[i].applied > over->applied))
            over = &t[i];
        if (t[i].size < want && (!under || t[i].applied < under->applied))
            under = &t[i];   /* ... too small at the smallest */
    }
    const hz_ratio_try *a =
        over && under ? over
                      : (n > 1 && curve_point(&t[n - 2], one_chunk) &&
                                 curve_point(last, one_chunk)
                             ? &t[n - 2]
                             : NULL);
    const hz_ratio_try *b = over && under ? under : last;
    double next = 0;
    if (a && a->applied != b->applied && a->size != b->size) {
        const double slope = (log(b->size) - log(a->size)) / (log(b->applied) - log(a->applied));
        if (slope < 0)   /* else the sizes did not fall as the bound grew: the model decides */
            next = b->applied * exp((log(want) - log(b->size)) / slope);
    }
    if (!(next > 0) || !hz_is_finite(next))
        next = last->applied * exp(log(2.0) * 8.0 * (last->size - want) / values);
    if (over && under) {   /* inside the bracket, a tenth of its width from either end */
        const double lo = log(over->applied), hi = log(under->applied), x = log(next);
        if (!(x > lo + 0.1 * (hi - lo) && x < hi - 0.1 * (hi - lo)))
            next = sqrt(over->applied * under->applied);
    }
    /* a step of 2^20 at most */
    return fmax(last->applied / 1048576.0, fmin(last->applied * 1048576.0, next));
}

h5zgpu_status hz_ratio_search(double values, double raw, double target, int one_chunk,
                              hz_ratio_measure measure, void *ctx, hz_ratio_tries *tries)
{
    const double want = raw / target, tol = one_chunk ? HZ_RATIO_TOL : HZ_RATIO_TOL_SAMPLE;
    hz_ratio_try *t = tries->t;
    h5zgpu_mode mode = H5ZGPU_MODE_REL;
    double eb = HZ_RATIO_PROBE;
    int n = 0, b = 0;
    for (;;) {
        h5zgpu_status st = measure(ctx, mode, eb, &t[n].applied, &t[n].size);
        if (st != H5ZGPU_OK)
            return st;
        if (t[n].applied == 0 && mode == H5ZGPU_MODE_ABS)
            t[n].applied = eb;   /* stored raw at that bound: still a point of the curve */
        t[n].mode = mode;
        t[n].eb = eb;
        /* a sample's result is an ABS try (the first REL one stands in till then) */
        const int counts = one_chunk || mode == H5ZGPU_MODE_ABS;
        if (counts && (fabs(t[n].size - want) < fabs(t[b].size - want) ||
                       !(one_chunk || t[b].mode == H5ZGPU_MODE_ABS)))
            b = n;
        const hz_ratio_try *l = &t[n++];
        if ((counts && fabs(l->size - want) <= tol * want) || n == HZ_RATIO_TRIES)
            break;
        if (l->applied > 0) {
            mode = H5ZGPU_MODE_ABS;
            eb = ratio_next(t, n, want, values, one_chunk);
        } else if (l->mode == H5ZGPU_MODE_REL && l->size >= raw && l->eb < HZ_RATIO_REL_MAX) {
            eb = fmin(HZ_RATIO_REL_MAX, l->eb * 1024.0);   /* stored raw: a larger fraction */
        } else {
            break;   /* exact with no range (constant or empty): nothing to tune */
        }
        if (mode == l->mode && eb == l->eb)
            break;
    }
    tries->n = n;
    tries->best = b;
    return H5ZGPU_OK;
}
