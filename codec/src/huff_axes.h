/* The Huffman codec's axis order (format version 4), shared verbatim by the CPU reference
 * (huff_axes.c) and the CUDA kernels: a 3-D chunk may be coded with its folded axes permuted,
 * so that the interpolation's passes, which run along z, y and x of the coded array, take the
 * roughest axis first and the smoothest last (the last pass of the finest level predicts half
 * the elements). On the Nyx-like velocities at REL 1e-3 the best order spends a quarter fewer
 * bits than z, y, x. docs/FORMAT.md, "Axis order". */
#ifndef H5ZGPU_HUFF_AXES_H
#define H5ZGPU_HUFF_AXES_H

#include "huff_common.h"

#define HF_AXES_COUNT 6u   /* payload byte 14: 0..5, 0 the identity */
/* A permutation is taken only when the roughest axis costs more than 17/16 of the smoothest a
 * term: below that the order gains little and costs a transpose on every write and read. */
#define HF_AXES_GAIN_NUM 17u
#define HF_AXES_GAIN_DEN 16u

/* The folded axes (0 z, 1 y, 2 x) that become the coded array's z, y and x under permutation
 * k, in lexicographic order: (0 1 2) (0 2 1) (1 0 2) (1 2 0) (2 0 1) (2 1 0). */
HZ_HD void hf_axes_of(unsigned k, unsigned a[3])
{
    a[0] = k / 2u;
    const unsigned r0 = a[0] == 0 ? 1u : 0u, r1 = a[0] == 2 ? 1u : 2u;   /* the other two */
    a[1] = (k & 1u) ? r1 : r0;
    a[2] = (k & 1u) ? r0 : r1;
}

/* The permutation that orders the axes by cost per term, highest first (the lower axis first
 * on a tie), or the identity when those are within HF_AXES_GAIN of each other. The quotients
 * of integers below 2^53 are the same double on every executor. */
HZ_HD unsigned hf_axes_choose(const unsigned long long cost[3], const unsigned long long terms[3])
{
    double r[3];
    unsigned a[3] = {0, 1, 2};
    for (unsigned i = 0; i < 3; i++)
        r[i] = terms[i] ? (double)cost[i] / (double)terms[i] : 0.0;
    for (unsigned i = 1; i < 3; i++)
        for (unsigned j = i; j > 0 && r[a[j]] > r[a[j - 1]]; j--) {
            const unsigned t = a[j];
            a[j] = a[j - 1];
            a[j - 1] = t;
        }
    if (hz_mul((double)HF_AXES_GAIN_DEN, r[a[0]]) <= hz_mul((double)HF_AXES_GAIN_NUM, r[a[2]]))
        return 0;
    for (unsigned k = 0; k < HF_AXES_COUNT; k++) {
        unsigned b[3];
        hf_axes_of(k, b);
        if (b[0] == a[0] && b[1] == a[1])
            return k;
    }
    return 0;
}

/* The cost of one element along one axis: the bit length of the zigzagged difference between
 * its quantiser argument t2 (steps of 2 eb) and the cubic through its neighbours' at -3, -1,
 * +1, +3 (t0, t1, t3, t4), in sixteenths of a step (whole steps leave loose bounds with
 * nothing to tell the axes apart), capped at 31 bits (NaN and overflows included). On 128^3
 * blocks of the six Nyx-like fields at REL 1e-2..1e-4 the order these costs choose is within
 * 1% of the best of the six in entropy. */
HZ_HD unsigned hf_axes_term(double t0, double t1, double t2, double t3, double t4)
{
    const double pred = hz_mul(hz_sub(hz_mul(9.0, hz_add(t1, t3)), hz_add(t0, t4)), 0.0625);
    const double d = rint(hz_mul(hz_sub(t2, pred), 16.0));
    if (!(d < 1073741824.0 && d > -1073741824.0))
        return 31u;
    return hz_bitlen(hz_zigzag((int64_t)d));
}

/* The coded array's geometry: the folded axes of g in the order of permutation k. */
HZ_HD void hf_axes_geom(const hf_geom *g, unsigned k, hf_geom *out)
{
    unsigned a[3];
    hf_axes_of(k, a);
    const uint64_t n[3] = {g->nz, g->ny, g->nx};
    hf_geom_set(out, n[a[0]], n[a[1]], n[a[2]], g->dim);
}

/* The raster index in the folded chunk of the coded array's element (z, y, x) under
 * permutation k; g is the folded chunk's geometry. */
HZ_HD uint64_t hf_axes_source(const hf_geom *g, unsigned k, uint64_t z, uint64_t y, uint64_t x)
{
    unsigned a[3];
    hf_axes_of(k, a);
    const uint64_t stride[3] = {g->ny * g->nx, g->nx, 1};
    return z * stride[a[0]] + y * stride[a[1]] + x * stride[a[2]];
}

#endif
