/* The quantiser's set-up on the host: from a chunk's statistics (encoding) or its header
 * (decoding), and the statistics themselves on the CPU, in slices on the pool's threads. */
#include "quant.h"
#include "quant_rows.h"

#include "elements.h"
#include "parallel.h"

#include <math.h>
#include <string.h>

void qz_init(qz_quant *Q, h5zgpu_mode mode, double eb, int is_f32, int any, double lo, double hi)
{
    memset(Q, 0, sizeof *Q);
    Q->pwrel = mode == H5ZGPU_MODE_PWREL;
    Q->rel = mode == H5ZGPU_MODE_REL;
    Q->is_f32 = is_f32;
    Q->grid = 1;
    Q->fine = QZ_FINE_BITS;
    /* ABS/REL: the finite value nearest 0 keeps codes small for fields centred on 0 */
    Q->base = !any ? 0.0 : (mode == H5ZGPU_MODE_PWREL || lo > 0 ? lo : (hi < 0 ? hi : 0.0));
    Q->eb = eb;
    if (mode == H5ZGPU_MODE_REL) {
        /* the largest power of two not above eb x range: the grid of a rewritten chunk whose
         * range moved contains the old one or is contained in it (qz_prior_error) */
        const double E = any ? eb * (hi - lo) : 0.0;
        int e;
        Q->eb = E > 0 && hz_is_finite(E) ? (frexp(E, &e), ldexp(0.5, e)) : E;
    }
    Q->twoeb = 2.0 * Q->eb;
    Q->inv2eb = Q->eb > 0 ? 1.0 / Q->twoeb : 0.0;
    Q->unit = ldexp(1.0, -(int)Q->fine);
    Q->fine_step = hz_mul(Q->twoeb, Q->unit);
    if (Q->twoeb > 0 && Q->inv2eb > 0) {
        double k0 = hz_sub(rint(hz_mul(Q->base, Q->inv2eb)), Q->pwrel ? 1.0 : 0.0);
        Q->k0 = k0 <= QZ_TMAX && k0 >= -QZ_TMAX ? k0 : 0.0;
    }
}

void qz_decoder(qz_quant *Q, h5zgpu_mode mode, double eb_abs, int is_f32, unsigned version)
{
    memset(Q, 0, sizeof *Q);
    Q->pwrel = mode == H5ZGPU_MODE_PWREL;
    Q->is_f32 = is_f32;
    Q->grid = version >= 3;
    Q->fine = version >= 3 ? QZ_FINE_BITS : QZ_FINE_BITS_V2;
    Q->eb = eb_abs;
    Q->twoeb = 2.0 * eb_abs;
    Q->inv2eb = eb_abs > 0 ? 1.0 / Q->twoeb : 0.0;
    Q->unit = ldexp(1.0, -(int)Q->fine);
    Q->fine_step = hz_mul(Q->twoeb, Q->unit);
}

/* The statistics of one slice of a chunk's elements. */
typedef struct qz_part {
    int seen;
    double lo, hi;
    qz_census census;
} qz_part;

typedef struct stats_run {
    const void *in;
    uint64_t n;
    const qz_quant *fill;
    h5zgpu_mode mode;
    unsigned slices;
    qz_part *part;
} stats_run;

/* The statistics of slice k: float32 ABS and REL in vectorised rows where they stand in for
 * this pass (qz_stats_rows_f32), else one element at a time. */
HZ_CPU_CLONES static void stats_task(void *ctx, uint64_t k)
{
    const stats_run *S = ctx;
    qz_part *P = &S->part[k];
    double mn = 0, mx = 0;
    int seen = 0;
    const uint64_t i0 = hz_slice_start(S->n, S->slices, (unsigned)k);
    const uint64_t end = hz_slice_start(S->n, S->slices, (unsigned)k + 1);
    if (S->fill->is_f32 && S->mode != H5ZGPU_MODE_PWREL &&
        qz_stats_rows_f32(S->in, i0, end, S->fill->has_fill, S->fill->fill_bits, &P->seen,
                          &P->lo, &P->hi, &P->census))
        return;
    memset(&P->census, 0, sizeof P->census);
    for (uint64_t i = i0; i < end; i++) {
        uint64_t bits;
        double v = hz_element(S->in, S->fill->is_f32, i, &bits);
        if (qz_is_fill(S->fill, bits)) {
            P->census.fill++;
            continue;
        }
        if (v != v && P->census.nan++ == 0)
            P->census.nan_bits = bits;
        if (!hz_is_finite(v))
            continue;
        if (S->mode == H5ZGPU_MODE_PWREL) {
            if (v == 0.0)
                continue;
            v = qz_log2lin(v < 0 ? -v : v);
        }
        if (!seen || v < mn)
            mn = v;
        if (!seen || v > mx)
            mx = v;
        seen = 1;
    }
    P->seen = seen;
    P->lo = mn;
    P->hi = mx;
}

/* Elements a slice of the statistics reads at least. */
#define QZ_STATS_SLICE 65536u
#define QZ_STATS_SLICES_MAX 64u

void qz_stats_cpu(const void *in, uint64_t n, const qz_quant *fill, h5zgpu_mode mode, int *any,
                  double *lo, double *hi, qz_census *census)
{
    qz_part part[QZ_STATS_SLICES_MAX];
    const unsigned s = hz_slices(n, QZ_STATS_SLICE);
    stats_run S = {in, n, fill, mode, s < QZ_STATS_SLICES_MAX ? s : QZ_STATS_SLICES_MAX, part};
    hz_parallel_slices(S.slices, stats_task, &S);
    /* the slices in element order: the same extremes (the first of equal ones) and the same
     * first NaN as one pass over the chunk */
    qz_part all = part[0];
    for (unsigned k = 1; k < S.slices; k++) {
        const qz_part *P = &part[k];
        if (P->census.nan && !all.census.nan)
            all.census.nan_bits = P->census.nan_bits;
        all.census.nan += P->census.nan;
        all.census.fill += P->census.fill;
        if (P->seen && (!all.seen || P->lo < all.lo))
            all.lo = P->lo;
        if (P->seen && (!all.seen || P->hi > all.hi))
            all.hi = P->hi;
        all.seen |= P->seen;
    }
    *any = all.seen;
    *lo = all.lo;
    *hi = all.hi;
    *census = all.census;
}

void qz_choose_fill(qz_quant *Q, int declared, uint64_t declared_bits, const qz_census *census)
{
    const uint64_t held = declared ? census->fill : 0;
    Q->has_fill = held > 0 || census->nan > 0;
    Q->fill_bits = census->nan > held ? census->nan_bits : declared_bits;
    Q->has_exact = held > 0 && census->nan > held;
    Q->exact = 0.0;
    if (Q->has_exact) {
        if (Q->is_f32) {
            uint32_t w = (uint32_t)declared_bits;
            float f;
            memcpy(&f, &w, 4);
            Q->exact = f;
        } else {
            memcpy(&Q->exact, &declared_bits, 8);
        }
    }
}
