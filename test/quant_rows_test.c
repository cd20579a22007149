/* The quantiser over many values at once (quant_rows.h, huff_interp_rows.h) against the scalar
 * quantisers it stands in for (hf_dq_code, hf_ip_quantize, qz_quantize), on ABS and REL
 * quantisers of both element types, offsets k0 from 0 to near 2^47, with values and
 * predictions of every kind: random, near the bound's and the fine zone's edges, on the fine
 * grid, NaN, infinities, zeros, subnormals and the largest magnitudes. Compiled as the codec's
 * files that use it are (no floating-point traps; vectorised clones where the platform has
 * them). */
#include "huff_interp_rows.h"
#include "util.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define N 64u

static uint64_t state = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void)
{
    return tu_xorshift(&state);
}

static double uniform(void)
{
    return (double)(next_random() >> 11) * 0x1p-53;
}

/* A value of one of several kinds for quantiser Q around the chunk's values [lo, hi]. */
static double value_for(const qz_quant *Q, double lo, double hi)
{
    static const double special[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, DBL_MIN / 4,
                                     -FLT_MIN / 8, FLT_MAX, -FLT_MAX, DBL_MAX, 1e300, -1e30};
    const double step = Q->twoeb;
    double x;
    switch (next_random() % 8) {
    case 0: x = special[next_random() % (sizeof special / sizeof special[0])]; break;
    case 1: /* on the fine grid near zero, where a rewritten chunk's values lie */
        x = ((double)(int64_t)(next_random() % 32768) - 16384.0) * Q->fine_step;
        break;
    case 2: /* at and near the fine zone's edge, 512 steps from zero */
        x = (512.0 + (next_random() & 1 ? (uniform() - 0.5) * 4.0 : 0.0)) * step *
            (next_random() & 1 ? 1 : -1);
        break;
    case 3: /* past the quantiser's ranges: 2^22 and 2^28 steps from k0 */
        x = (Q->k0 + (next_random() & 1 ? 4194304.0 : 268435456.0) * (1 + (uniform() - 0.5) *
             1e-6)) * step;
        break;
    default: x = lo + (hi - lo) * uniform(); break;
    }
    return Q->is_f32 ? (double)(float)x : x;
}

/* A prediction for value x: near its code, near the fine zone's edge, or anywhere. */
static int32_t prediction_for(const qz_quant *Q, double x)
{
    const double c = (x * Q->inv2eb - Q->k0) * 16.0;
    switch (next_random() % 4) {
    case 0: return (int32_t)((int64_t)(next_random() % (1ull << 31)) - (1ll << 30));
    case 1: return (int32_t)(-Q->k0 * 16.0 + (double)(next_random() % 64) - 32.0 +
                             (next_random() & 1 ? 8192.0 : -8192.0));
    default:
        if (!(fabs(c) < 1073741824.0))
            return (int32_t)(next_random() % 1024);
        return (int32_t)(c + (double)(next_random() % 97) - 48.0);
    }
}

/* The three uses: the interpolation's, the Lorenzo sample's (codes within HF_PMAX) and the
 * fixed-length codec's (any code the quantiser gives, QZ_QMAX). */
HZ_CPU_CLONES static void rows_of(const qz_quant *Q, const double *x, const int32_t *pred,
                                  const double *rel_lim, int32_t *k, int32_t *u, uint8_t *ok,
                                  int32_t *q, uint8_t *qok, int32_t *fq, uint8_t *fok)
{
    hf_ip_quantize_rows(Q, N, x, pred, rel_lim, k, u, ok);
    qz_quantize_rows(Q, N, x, rel_lim, HF_PMAX, q, qok);
    qz_quantize_rows(Q, N, x, rel_lim, QZ_QMAX, fq, fok);
}

int main(void)
{
    static const struct { h5zgpu_mode mode; double eb, lo, hi; } cases[] = {
        {H5ZGPU_MODE_ABS, 1e-3, -1.0, 1.0},       {H5ZGPU_MODE_ABS, 0.5, 580.0, 4.8e6},
        {H5ZGPU_MODE_ABS, 1e-9, 1e4, 1e4 + 1.0},  {H5ZGPU_MODE_ABS, 3e-7, -2e-3, 7e-3},
        {H5ZGPU_MODE_REL, 1e-3, -4e7, 3.9e7},     {H5ZGPU_MODE_REL, 1e-4, 581.4, 4.8e6},
        {H5ZGPU_MODE_REL, 1e-2, 1e-30, 3e-30},    {H5ZGPU_MODE_REL, 1e-6, 2.0e5, 2.0e5 + 3.0},
    };
    unsigned long long compared = 0, coded = 0;
    for (unsigned c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int f32 = 0; f32 <= 1; f32++)
            for (int keep = 0; keep <= 1; keep++) {
                qz_quant Q;
                qz_init(&Q, cases[c].mode, cases[c].eb, f32, 1, cases[c].lo, cases[c].hi);
                Q.keep = keep;
                tu_expect(qz_rows_apply(&Q), "case %u: quantiser not covered", c);
                for (unsigned round = 0; round < 4000; round++) {
                    double x[N], rel_lim[N];
                    int32_t pred[N], k[N], u[N], q[N], fq[N];
                    uint8_t ok[N], qok[N], fok[N];
                    for (unsigned j = 0; j < N; j++) {
                        x[j] = value_for(&Q, cases[c].lo, cases[c].hi);
                        pred[j] = prediction_for(&Q, x[j]);
                        rel_lim[j] = qz_rel_limit(&Q, x[j]);
                    }
                    rows_of(&Q, x, pred, rel_lim, k, u, ok, q, qok, fq, fok);
                    for (unsigned j = 0; j < N; j++, compared++) {
                        int32_t kk = 0, uu = (int32_t)hf_ip_code(&Q, pred[j], 0), p = 0;
                        const int want = hf_ip_quantize(&Q, x[j], pred[j], &kk, &uu);
                        const int qwant = hf_dq_code(&Q, x[j], &p);
                        coded += (unsigned)want;
                        tu_expect(ok[j] == want && k[j] == kk && u[j] == uu,
                                  "case %u f32 %d keep %d: x %.17g pred %d: rows %d %d %d, "
                                  "hf_ip_quantize %d %d %d", c, f32, keep, x[j], (int)pred[j],
                                  ok[j], (int)k[j], (int)u[j], want, (int)kk, (int)uu);
                        tu_expect(qok[j] == qwant && q[j] == p,
                                  "case %u f32 %d keep %d: x %.17g: rows %d %d, hf_dq_code %d %d",
                                  c, f32, keep, x[j], qok[j], (int)q[j], qwant, (int)p);
                        int64_t fp = 0;
                        const int fwant = qz_quantize(&Q, x[j], &fp);
                        tu_expect(fok[j] == fwant && (!fwant || fq[j] == fp),
                                  "case %u f32 %d keep %d: x %.17g: rows %d %d, qz_quantize "
                                  "%d %lld", c, f32, keep, x[j], fok[j], (int)fq[j], fwant,
                                  (long long)fp);
                    }
                }
            }
    printf("%llu values compared, %llu coded by the interpolation\n", compared, coded);
    return tu_done("quant_rows");
}
