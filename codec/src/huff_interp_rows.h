/* The interpolation's quantiser (hf_ip_quantize) over many elements at once, CPU only, in the
 * manner of quant_rows.h: the same results for the quantisers qz_rows_apply accepts, in a loop
 * the compiler vectorises. test/quant_rows_test.c holds the two to the same results. */
#ifndef H5ZGPU_HUFF_INTERP_ROWS_H
#define H5ZGPU_HUFF_INTERP_ROWS_H

#include "huff_interp.h"
#include "quant_rows.h"

/* For j < n: hf_ip_quantize(Q, x[j], pred[j], ...) with Q such that qz_rows_apply. ok[j] is
 * its result; k[j] and u[j] the delta and code it gives when ok, else 0 and the code of delta
 * 0, which the encoder stores for a value it cannot code. rel_lim[j] is qz_rel_limit(Q, x[j])
 * in REL (not read otherwise). */
HZ_INLINE void hf_ip_quantize_rows(const qz_quant *Q, unsigned n, const double *x,
                                       const int32_t *pred, const double *rel_lim, int32_t *k,
                                       int32_t *u, uint8_t *ok)
{
    const qz_lanes L = qz_lanes_of(Q);
    const double F = (double)(1u << QZ_FINE_BITS), k0F = hz_mul(L.k0, F);
    const double zone = (double)(1u << (QZ_FINE_ZONE + QZ_FINE_BITS));
    const int32_t half = 1 << (QZ_FINE_BITS - 1);
    /* read in every mode: a load under the mode's condition keeps GCC from vectorising */
    const double *lim_at = L.rel ? rel_lim : x;
    for (unsigned j = 0; j < n; j++) {
        const double p = pred[j], xj = x[j];
        /* hf_ip_fine, and hf_ip_whole: floor((pred + 2^(fine-1)) / 2^fine), |pred| <= 2^30 */
        const int fine = fabs(hz_add(k0F, p)) < zone;
        const int32_t s = pred[j] + half;
        const double whole = (double)(s >= 0 ? s >> QZ_FINE_BITS : ~(~s >> QZ_FINE_BITS));
        /* qz_arg and hf_ip_quantize's domain */
        const double ta = hz_mul(xj, L.inv2eb), t = hz_sub(ta, L.k0);
        const int in = (ta <= QZ_TMAX) & (ta >= -QZ_TMAX) & (t <= HF_IP_TMAX) &
                       (t >= -HF_IP_TMAX) & (!fine | (fabs(ta) < QZ_FINE_ZONE_STEPS));
        const double at = fine ? hz_mul(p, L.unit) : whole;
        const double kk = rint(in ? hz_sub(t, at) : 0.0);
        const double base = fine ? p : hz_mul(whole, F);   /* hf_ip_code(Q, pred, 0) */
        const double uu = hz_add(base, hz_mul(kk, F));
        const double v = hz_mul(hz_add(L.k0, hz_mul(uu, L.unit)), L.twoeb);
        const double r = L.f32 ? hz_to_f32(v) : v;
        const double lj = lim_at[j], lim = L.rel ? lj : L.eb;
        const int good = in & qz_accept_lane(&L, xj, ta, r, v, uu, F, lim);
        ok[j] = (uint8_t)good;
        k[j] = (int32_t)(good ? kk : 0.0);
        u[j] = (int32_t)(good ? uu : base);
    }
}

#endif
