/* The Huffman codec's interpolation predictor (format version 2), shared verbatim by the CPU
 * reference (huff_interp.c) and the CUDA kernels: SZ3 / cuSZ-i style multilevel cubic
 * interpolation with the quantiser inside the loop. The chunk's first element is predicted as
 * 0; every other element from already reconstructed neighbours along one axis, level by level
 * (steps from the largest power of two below the longest axis down to 1), and coded as the
 * rounded difference in quantisation steps. Reconstructed codes are fixed point (Q->fine
 * fraction bits: 4 in format version 3, 8 in version 2) in int32, so both executors compute the
 * same bits with integer arithmetic.
 * docs/FORMAT.md, "Interpolation". */
#ifndef H5ZGPU_HUFF_INTERP_H
#define H5ZGPU_HUFF_INTERP_H

#include "huff_common.h"

#define HF_PRED_INTERP 0u        /* payload byte 9: interpolation instead of a Lorenzo order */
/* |t| limit of a value the interpolation codes (t in quantisation steps): with up to 8 fraction
 * bits (QZ_FINE_BITS_V2), every reconstructed code stays within +-2^30 + 2^7 and fits an
 * int32. */
#define HF_IP_TMAX 4194304.0
#define HF_IP_PMAX 1073741824    /* predictions are clamped to +-2^30 */
#define HF_IP_UMAX (HF_IP_PMAX + 128)   /* a decoded code past this is corrupt */

/* The writer tries interpolation when the best Lorenzo order costs at most HF_IP_TRY_BITS an
 * element, and keeps it when its cost is below HF_IP_WIN_NUM / HF_IP_WIN_DEN of that order's.
 * With the ANS form and the axis order (format version 4), on 64^3 and 256^3 chunks of the
 * Nyx-like fields interpolation wins wherever its cost is lower (temperature at REL 1e-4: 9%
 * smaller than Lorenzo, which a rule of 7/8 and 2 bits kept); past 6 bits an element Lorenzo
 * wins everywhere measured. PWREL keeps 7/8 and 2 bits: its chunks, rewritten by HDF5, must
 * come back bit for bit, and a closer rule lets the predictor flip between writes. */
#define HF_IP_TRY_BITS 6u
#define HF_IP_TRY_BITS_PWREL 2u
#define HF_IP_WIN_NUM 1u
#define HF_IP_WIN_DEN 1u
#define HF_IP_WIN_NUM_PWREL 7u
#define HF_IP_WIN_DEN_PWREL 8u

HZ_HD int hf_ip_worth_trying(unsigned long long lorenzo_cost, uint64_t n, int pwrel)
{
    return lorenzo_cost <=
           (unsigned long long)(pwrel ? HF_IP_TRY_BITS_PWREL : HF_IP_TRY_BITS) * n;
}

HZ_HD int hf_ip_wins(unsigned long long ip_cost, unsigned long long lorenzo_cost, int pwrel)
{
    return pwrel ? HF_IP_WIN_DEN_PWREL * ip_cost < HF_IP_WIN_NUM_PWREL * lorenzo_cost
                 : HF_IP_WIN_DEN * ip_cost < HF_IP_WIN_NUM * lorenzo_cost;
}

/* The bits the cost counts for a value interpolation stores verbatim where dual quantisation
 * codes it: its position and its value. */
HZ_HD unsigned hf_ip_verbatim_cost(int is_f32)
{
    return is_f32 ? 64u : 96u;
}

/* The largest step: the largest power of two below the longest axis (0 for one element). */
HZ_HD uint64_t hf_ip_top(const hf_geom *g)
{
    uint64_t n = g->nz > g->ny ? g->nz : g->ny, h = 1;
    n = n > g->nx ? n : g->nx;
    if (n < 2)
        return 0;
    while (2 * h < n)
        h *= 2;
    return h;
}

/* Passes: three a level (axes z, y, x), from the top step down to step 1. */
HZ_HD unsigned hf_ip_passes(const hf_geom *g)
{
    unsigned k = 0;
    for (uint64_t h = hf_ip_top(g); h; h >>= 1)
        k += 3;
    return k;
}

/* The elements pass p predicts: step h = top >> (p / 3), along axis a = p % 3 (z, y, x).
 * Along a, the odd multiples of h; along the axes already passed at this level, multiples of
 * h; along the others, multiples of 2h. Their neighbours at +-h and +-3h along a are even
 * multiples of h, known from the level before or this level's earlier passes. */
typedef struct hf_ip_pass {
    unsigned axis;
    uint64_t h;
    uint64_t first[3], step[3], cnt[3];   /* per axis z, y, x: coordinates first + step * i */
    uint64_t npts;
} hf_ip_pass;

HZ_HD uint64_t hf_ip_count(uint64_t n, uint64_t first, uint64_t step)
{
    return n > first ? (n - first - 1) / step + 1 : 0;
}

HZ_HD void hf_ip_pass_at(const hf_geom *g, unsigned p, hf_ip_pass *P)
{
    const uint64_t n[3] = {g->nz, g->ny, g->nx};
    P->axis = p % 3u;
    P->h = hf_ip_top(g) >> (p / 3u);
    P->npts = 1;
    for (unsigned b = 0; b < 3; b++) {
        P->first[b] = b == P->axis ? P->h : 0;
        P->step[b] = b < P->axis ? P->h : 2u * P->h;
        P->cnt[b] = hf_ip_count(n[b], P->first[b], P->step[b]);
        P->npts *= P->cnt[b];
    }
}

/* Which neighbours of coordinate c (an odd multiple of h) lie on an axis of n points: bit 0
 * c + h, bit 1 c - 3h, bit 2 c + 3h (c - h always does). */
#define HF_IP_P1 1u
#define HF_IP_M3 2u
#define HF_IP_P3 4u
HZ_HD unsigned hf_ip_reach(uint64_t c, uint64_t h, uint64_t n)
{
    return (c + h < n ? HF_IP_P1 : 0u) | (c >= 3u * h ? HF_IP_M3 : 0u) |
           (c + 3u * h < n ? HF_IP_P3 : 0u);
}

/* floor(s / 2^k) for any sign. */
HZ_HD int64_t hf_ip_floor_shift(int64_t s, unsigned k)
{
    return s >= 0 ? s >> k : ~((~s) >> k);
}

/* The prediction from the neighbours' reconstructed codes at c-3h, c-h, c+h, c+3h (those reach
 * leaves out are not read): cubic with all four, quadratic with three, linear with two, the
 * c-h neighbour alone at the axis' end; rounded half up and clamped to +-HF_IP_PMAX. */
HZ_HD int32_t hf_ip_predict(unsigned reach, int32_t m3, int32_t m1, int32_t p1, int32_t p3)
{
    int64_t v;
    if (!(reach & HF_IP_P1))
        v = m1;
    else if ((reach & HF_IP_M3) && (reach & HF_IP_P3))
        v = hf_ip_floor_shift(-(int64_t)m3 + 9 * (int64_t)m1 + 9 * (int64_t)p1 - p3 + 8, 4);
    else if (reach & HF_IP_M3)
        v = hf_ip_floor_shift(-(int64_t)m3 + 6 * (int64_t)m1 + 3 * (int64_t)p1 + 4, 3);
    else if (reach & HF_IP_P3)
        v = hf_ip_floor_shift(3 * (int64_t)m1 + 6 * (int64_t)p1 - p3 + 4, 3);
    else
        v = hf_ip_floor_shift((int64_t)m1 + p1 + 1, 1);
    v = v > HF_IP_PMAX ? HF_IP_PMAX : (v < -HF_IP_PMAX ? -HF_IP_PMAX : v);
    return (int32_t)v;
}

/* A reconstructed code in quantisation steps (exact in double): Q->fine fraction bits. */
HZ_HD double hf_ip_steps(const qz_quant *Q, int64_t u)
{
    return hz_mul((double)u, Q->unit);
}

HZ_HD int hf_ip_in_range(double t)
{
    return t <= HF_IP_TMAX && t >= -HF_IP_TMAX;   /* false for NaN */
}

/* Whether the fine codes apply at prediction pred (format version 3, ABS and REL: inside the
 * fine zone, QZ_FINE_ZONE; always in PWREL and version 2). */
HZ_HD int hf_ip_fine(const qz_quant *Q, int32_t pred)
{
    if (!Q->grid || Q->pwrel)
        return 1;
    const int64_t a = (int64_t)Q->k0 * ((int64_t)1 << Q->fine) + pred;
    const int64_t lim = (int64_t)1 << (QZ_FINE_ZONE + (int)Q->fine);
    return a < lim && a > -lim;
}

/* pred rounded to whole steps (half up): where a value outside the fine zone is predicted. */
HZ_HD int64_t hf_ip_whole(const qz_quant *Q, int32_t pred)
{
    return hf_ip_floor_shift((int64_t)pred + ((int64_t)1 << (Q->fine - 1)), Q->fine);
}

/* The code a value coded with delta k against pred reconstructs to: pred + k 2^fine, or outside
 * the fine zone (whole(pred) + k) 2^fine, on the codes' grid. */
HZ_HD int64_t hf_ip_code(const qz_quant *Q, int32_t pred, int64_t k)
{
    const int64_t at =
        hf_ip_fine(Q, pred) ? (int64_t)pred : hf_ip_whole(Q, pred) * ((int64_t)1 << Q->fine);
    return at + k * ((int64_t)1 << Q->fine);
}

/* Codes x against the prediction pred: returns 1 and the delta k (in whole steps) with *u =
 * pred + k 2^fine when the reconstruction may replace x (qz_accept: within the bound, and given
 * back by a later write of the chunk), else 0 (x is stored verbatim): the same domain and rules
 * as qz_quantize; in PWREL, zeros, which have no logarithm, are stored verbatim. *k and *u
 * change only on success. */
HZ_HD int hf_ip_quantize(const qz_quant *Q, double x, int32_t pred, int32_t *k, int32_t *u)
{
    double t, lim;
    const int fine = hf_ip_fine(Q, pred);
    /* a value coded on the fine grid lies inside the fine zone, so that a later write of the
     * chunk knows it may be one (qz_on_fine_grid, qz_prior_error) */
    const int in = qz_arg(Q, x, &t, &lim) && hf_ip_in_range(t) &&
                   (!fine || Q->pwrel || !Q->grid ||
                    fabs(hz_mul(x, Q->inv2eb)) < QZ_FINE_ZONE_STEPS);
    const double at = fine ? hf_ip_steps(Q, pred) : (double)hf_ip_whole(Q, pred);
    const int64_t kk = (int64_t)rint(in ? hz_sub(t, at) : 0.0);
    const int64_t uu = hf_ip_code(Q, pred, kk);
    const double v = qz_reconstruct_wide(Q, hf_ip_steps(Q, uu));
    const int ok = in && qz_accept(Q, x, qz_round_to(Q, v), v, (double)uu, Q->fine);
    *k = ok ? (int32_t)kk : *k;
    *u = ok ? (int32_t)uu : *u;
    return ok;
}

/* Tile-major position of the element at (z, y, x) of the folded chunk. */
HZ_HD uint64_t hf_tile_pos(const hf_geom *g, uint64_t z, uint64_t y, uint64_t x)
{
    hf_tile T;
    hf_tile_at(g, hf_tile_of(g, z, y, x), &T);
    return T.start + ((z - T.z0) * T.ey + (y - T.y0)) * T.ex + (x - T.x0);
}

/* The chunk coordinates of tile-major position pos < n: the inverse of hf_tile_pos. */
HZ_HD void hf_tile_coords(const hf_geom *g, uint64_t pos, uint64_t *z, uint64_t *y, uint64_t *x)
{
    uint64_t slab = (uint64_t)g->tz * g->ny * g->nx, z0 = pos / slab * g->tz, r = pos % slab;
    uint64_t ez = g->nz - z0 < g->tz ? g->nz - z0 : g->tz;
    uint64_t row = ez * g->ty * g->nx, y0 = r / row * g->ty;
    uint64_t ey = g->ny - y0 < g->ty ? g->ny - y0 : g->ty;
    r %= row;
    uint64_t tile = ez * ey * g->tx, x0 = r / tile * g->tx;
    uint64_t ex = g->nx - x0 < g->tx ? g->nx - x0 : g->tx;
    r %= tile;
    *x = x0 + r % ex;
    *y = y0 + r / ex % ey;
    *z = z0 + r / ex / ey;
}

#endif
