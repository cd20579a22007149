/* The CPU's vectorised forms against the scalar functions they stand in for: the quantiser
 * over many values at once (quant_rows.h, huff_interp_rows.h) against hf_dq_code,
 * hf_ip_quantize and qz_quantize, REL's limits (qz_rel_limits) against qz_rel_limit, the axis
 * order's term (huff_axes_rows.h) against hf_axes_term, the costs' bit lengths (bitlen_rows.h)
 * against hz_bitlen, and a slice's statistics (qz_stats_rows_f32) against a scalar pass. The
 * quantisers are ABS and REL ones of both element types, offsets k0 from 0 to near 2^47, with
 * values and predictions of every kind: random, near the bound's and the fine zone's edges, on
 * the fine grid, NaN, infinities, zeros, subnormals and the largest magnitudes. Compiled as the
 * codec's files that use them are (no floating-point traps; vectorised clones where the
 * platform has them). */
#include "bitlen_rows.h"
#include "huff_axes_rows.h"
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

/* An axis-order term's argument: near its neighbours (smooth), anywhere, or special. */
static double axis_arg(double around)
{
    static const double special[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e300, -1e300};
    switch (next_random() % 8) {
    case 0: return special[next_random() % (sizeof special / sizeof special[0])];
    case 1: return (uniform() - 0.5) * 1e9;
    case 2: return around + (uniform() - 0.5) * 1.3e8;   /* near the 2^30 sixteenths' edge */
    case 3: return around + (double)(int64_t)(next_random() % 64) / 16.0 - 2.0;   /* halves */
    default: return around + (uniform() - 0.5) * 4.0;
    }
}

HZ_CPU_CLONES static void terms_of(const double (*t)[5], unsigned *len)
{
    for (unsigned j = 0; j < N; j++)
        len[j] = hf_axes_term_lane(t[j][0], t[j][1], t[j][2], t[j][3], t[j][4]);
}

HZ_CPU_CLONES static void bitlens_of(const double *d, unsigned *len)
{
    for (unsigned j = 0; j < N; j++)
        len[j] = hz_zigzag_bitlen_f64(d[j]);
}

HZ_CPU_CLONES static void bitlens_i32_of(const int32_t *d, unsigned *len)
{
    for (unsigned j = 0; j < N; j++)
        len[j] = hz_zigzag_bitlen_i32(d[j]);
}

/* hz_zigzag_bitlen_f64 and hz_zigzag_bitlen_i32 against hz_bitlen(hz_zigzag()): whole numbers
 * of every size below 2^51, zero and powers of two and their neighbours among them, and the
 * same shifted into an int32's range of Lorenzo order 3's deltas (below 2^31 - 8 in magnitude;
 * its ends in the first round). */
static unsigned long long check_bitlens(void)
{
    unsigned long long compared = 0;
    for (unsigned round = 0; round < 20000; round++) {
        int64_t v[N];
        double d[N];
        int32_t d32[N];
        unsigned len[N], len32[N];
        for (unsigned j = 0; j < N; j++) {
            const unsigned k = (unsigned)(next_random() % 52);
            const int64_t m = (int64_t)(next_random() >> (64 - k - 1) >> 1);   /* below 2^k */
            v[j] = next_random() % 4 == 0 ? ((int64_t)1 << k) + (int64_t)(next_random() % 3) - 1
                                          : m;
            v[j] = next_random() & 1 ? -v[j] : v[j];
            d[j] = (double)v[j];
            int64_t w = k > 30 ? v[j] / ((int64_t)1 << (k - 30)) : v[j];
            w = round == 0 && j < 2 ? (j ? -2147483640 : 2147483640) : w;
            d32[j] = (int32_t)(w > 2147483640 ? 2147483640 : w < -2147483640 ? -2147483640 : w);
        }
        bitlens_of(d, len);
        bitlens_i32_of(d32, len32);
        for (unsigned j = 0; j < N; j++, compared += 2) {
            tu_expect(len[j] == hz_bitlen(hz_zigzag(v[j])), "bit length of %lld: %u, want %u",
                      (long long)v[j], len[j], hz_bitlen(hz_zigzag(v[j])));
            tu_expect(len32[j] == hz_bitlen(hz_zigzag(d32[j])),
                      "bit length of int32 %ld: %u, want %u", (long)d32[j], len32[j],
                      hz_bitlen(hz_zigzag(d32[j])));
        }
    }
    return compared;
}

HZ_CPU_CLONES static int stats_of(const uint32_t *w, unsigned n, int has_fill, uint32_t fb,
                                  int *seen, double *lo, double *hi, qz_census *census)
{
    return qz_stats_rows_f32(w, 0, n, has_fill, fb, seen, lo, hi, census);
}

/* qz_stats_rows_f32 against one scalar pass with qz_stats_cpu's rules: fill elements and NaNs
 * counted, the first NaN's bits, the extremes of the finite values, the first of equal ones. */
static unsigned long long check_stats(void)
{
    static const uint32_t special[] = {0x7FC00000u, 0xFFC00001u, 0x7F800001u, 0x7F800000u,
                                       0xFF800000u, 0x00000000u, 0x80000000u, 0x00000001u,
                                       0x807FFFFFu, 0x7F7FFFFFu, 0xFF7FFFFFu, 0xC61C3C00u};
    enum { LEN = 3000 };
    static uint32_t w[LEN];
    unsigned long long compared = 0, fallbacks = 0;
    for (unsigned round = 0; round < 3000; round++) {
        const unsigned n = 1 + (unsigned)(next_random() % LEN), kind = round % 4;
        const int has_fill = kind != 0;
        const uint32_t fb = kind == 1 ? 0u : kind == 2 ? 0xC61C3C00u : 0x7FC00000u;
        const unsigned odds = 1 + (unsigned)(next_random() % 64);   /* specials: 1 in odds */
        for (unsigned i = 0; i < n; i++) {
            /* values of both signs, mostly positive, or none below 0 (a zero is the least) */
            const double u = uniform() * 200.0 - (round % 3 == 0 ? 100.0 : 1.0);
            const float f = (float)(round % 3 == 2 ? fabs(u) : u);
            memcpy(&w[i], &f, 4);
            if (next_random() % odds == 0)
                w[i] = special[next_random() % (sizeof special / sizeof special[0])];
        }
        qz_census want = {0, 0, 0}, got;
        int seen = 0, got_seen;
        double lo = 0, hi = 0, got_lo, got_hi;
        for (unsigned i = 0; i < n; i++) {
            float f;
            memcpy(&f, &w[i], 4);
            const double v = f;
            if (has_fill && w[i] == fb) {
                want.fill++;
                continue;
            }
            if (v != v && want.nan++ == 0)
                want.nan_bits = w[i];
            if (!isfinite(v))
                continue;
            lo = !seen || v < lo ? v : lo;
            hi = !seen || v > hi ? v : hi;
            seen = 1;
        }
        const int done = stats_of(w, n, has_fill, fb, &got_seen, &got_lo, &got_hi, &got);
        fallbacks += !done;
        compared++;
        if (!done) {
            tu_expect(seen && (lo == 0.0 || hi == 0.0),
                      "stats round %u: the rows left a slice without a zero extreme", round);
            continue;
        }
        tu_expect(got_seen == seen && memcmp(&got_lo, &lo, 8) == 0 &&
                      memcmp(&got_hi, &hi, 8) == 0 && got.fill == want.fill &&
                      got.nan == want.nan && got.nan_bits == want.nan_bits,
                  "stats round %u (n %u, fill %d %08x): rows seen %d [%g, %g] fill %llu nan %llu "
                  "%08llx, want %d [%g, %g] %llu %llu %08llx", round, n, has_fill, (unsigned)fb,
                  got_seen, got_lo, got_hi, (unsigned long long)got.fill,
                  (unsigned long long)got.nan, (unsigned long long)got.nan_bits, seen, lo, hi,
                  (unsigned long long)want.fill, (unsigned long long)want.nan,
                  (unsigned long long)want.nan_bits);
    }
    tu_expect(fallbacks > 0 && fallbacks < compared / 2,
              "stats: %llu of %llu slices left to the scalar pass", fallbacks, compared);
    return compared;
}

/* hf_axes_term_lane against hf_axes_term. */
static unsigned long long check_axis_terms(void)
{
    unsigned long long compared = 0;
    for (unsigned round = 0; round < 20000; round++) {
        double t[N][5];
        unsigned len[N];
        for (unsigned j = 0; j < N; j++) {
            const double around = (uniform() - 0.5) * 1e7;
            for (unsigned i = 0; i < 5; i++)
                t[j][i] = axis_arg(around);
            if (next_random() % 8 == 0) {   /* d at the cap's edge, 2^30 sixteenths, exactly */
                const double a = (double)(int64_t)(next_random() % 4096) - 2048.0;
                const double k = (double)(int64_t)(next_random() % 5) - 2.0;
                t[j][0] = t[j][1] = t[j][3] = t[j][4] = a;
                t[j][2] = a + (next_random() & 1 ? 1.0 : -1.0) * (67108864.0 + k / 16.0);
            }
        }
        terms_of((const double (*)[5])t, len);
        for (unsigned j = 0; j < N; j++, compared++) {
            const unsigned want = hf_axes_term(t[j][0], t[j][1], t[j][2], t[j][3], t[j][4]);
            tu_expect(len[j] == want, "axis term of %.17g %.17g %.17g %.17g %.17g: %u, want %u",
                      t[j][0], t[j][1], t[j][2], t[j][3], t[j][4], len[j], want);
        }
    }
    return compared;
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
                    }
                    qz_rel_limits(&Q, N, x, rel_lim);
                    for (unsigned j = 0; j < N; j++) {
                        const double want = qz_rel_limit(&Q, x[j]);
                        tu_expect(memcmp(&rel_lim[j], &want, sizeof want) == 0,
                                  "case %u f32 %d keep %d: x %.17g: qz_rel_limits %.17g, "
                                  "qz_rel_limit %.17g", c, f32, keep, x[j], rel_lim[j], want);
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
    printf("%llu axis-order terms compared\n", check_axis_terms());
    printf("%llu zigzag bit lengths compared (double and int32)\n", check_bitlens());
    printf("%llu slices' statistics compared\n", check_stats());
    return tu_done("quant_rows");
}
