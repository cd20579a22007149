/* The quantiser's set-up on the host: from a chunk's statistics (encoding) or its header
 * (decoding), and the statistics themselves on the CPU. */
#include "quant.h"

#include "elements.h"

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

void qz_stats_cpu(const void *in, uint64_t n, const qz_quant *fill, h5zgpu_mode mode, int *any,
                  double *lo, double *hi, qz_census *census)
{
    double mn = 0, mx = 0;
    int seen = 0;
    memset(census, 0, sizeof *census);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t bits;
        double v = hz_element(in, fill->is_f32, i, &bits);
        if (qz_is_fill(fill, bits)) {
            census->fill++;
            continue;
        }
        if (v != v && census->nan++ == 0)
            census->nan_bits = bits;
        if (!hz_is_finite(v))
            continue;
        if (mode == H5ZGPU_MODE_PWREL) {
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
    *any = seen;
    *lo = mn;
    *hi = mx;
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
