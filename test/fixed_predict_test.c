/* The fixed-length codec's predictions: the CPU encoder's 32-bit predictions (fixed_narrow.h),
 * which try every predictor with the neighbours read once, against fl_predict_at, the format's
 * definition (fixed_common.h), for every element of every block shape, on codes a quantiser
 * gives (within 2^28, its limits included), with the residuals' magnitudes; the CPU decoder's
 * reconstruction by sums (fixed_sums.h) against element-by-element reconstruction with
 * fl_predict_at, on residuals of any int64 value (a damaged payload's); and fl_mean_round, the
 * mean predictor's rounding without branches, against floor division in 128-bit arithmetic for
 * sums of any int64 value. */
#include "fixed_narrow.h"
#include "fixed_sums.h"
#include "util.h"

#include <stdint.h>

static uint64_t state = 0x2545F4914F6CDD1Dull;
static uint64_t next_random(void)
{
    return tu_xorshift(&state);
}

static int64_t floor_div_ref(int64_t s, int64_t d)
{
    __int128 q = (__int128)s / d;
    if ((__int128)s % d != 0 && ((s < 0) != (d < 0)))
        q -= 1;
    return (int64_t)q;
}

int main(void)
{
    static const unsigned shapes[3][3] = {{1, 1, 64}, {1, 8, 8}, {4, 4, 4}};   /* z, y, x */
    for (unsigned dim = 1; dim <= 3; dim++) {
        const unsigned by = shapes[dim - 1][1], bx = shapes[dim - 1][2];
        const fl_geom g = {.dim = dim};
        const int64_t lim = 1ll << 28;
        unsigned misses = 0, checks = 0;
        for (unsigned t = 0; t < 20000; t++) {
            int64_t q[FL_BLOCK];
            int32_t c32[FL_NARROW_PAD + FL_BLOCK] = {0};
            for (unsigned e = 0; e < FL_BLOCK; e++) {
                const uint64_t r = next_random();
                /* the limits, codes near them, small codes, any code within them */
                switch (t % 4) {
                case 0: q[e] = r % 2 ? lim : -lim; break;
                case 1:
                    q[e] = (r % 2 ? lim : -lim) + (int64_t)((r >> 1) % 5) * (r % 2 ? -1 : 1);
                    break;
                case 2: q[e] = (int64_t)((r >> 2) % 9) - 4; break;
                default: q[e] = (int64_t)((r >> 2) % (2 * (uint64_t)lim + 1)) - lim; break;
                }
                c32[FL_NARROW_PAD + e] = (int32_t)q[e];
            }
            for (unsigned e = 1; e < FL_BLOCK; e++) {
                uint32_t pr[FL_NPRED];
                predict_narrow(bx, by, c32 + FL_NARROW_PAD, e, pr);
                for (unsigned p = 0; p < fl_npred(&g); p++) {
                    const int64_t want = fl_predict_at(p, by, bx, q, e / (bx * by), e / bx % by,
                                                       e % bx);
                    const int64_t r = q[e] - want;
                    misses += (int32_t)pr[p] != want;
                    misses += magnitude_narrow((uint32_t)q[e] - pr[p]) !=
                              (uint64_t)(r < 0 ? -r : r);
                    checks += 2;
                }
            }
        }
        tu_expect(misses == 0, "%uD blocks: predict_narrow differs %u times in %u checks", dim,
                  misses, checks);
    }
    for (unsigned dim = 1; dim <= 3; dim++) {
        const unsigned bz = shapes[dim - 1][0], by = shapes[dim - 1][1], bx = shapes[dim - 1][2];
        const fl_geom g = {.dim = dim};
        unsigned misses = 0;
        for (unsigned t = 0; t < 20000; t++) {
            for (unsigned pred = 0; pred < fl_npred(&g); pred++) {
                if (pred == FL_PRED_MEAN)
                    continue;
                int64_t r[FL_BLOCK], want[FL_BLOCK];
                uint64_t got[FL_BLOCK];
                for (unsigned e = 0; e < FL_BLOCK; e++) {
                    const uint64_t u = next_random();
                    /* small, within the planes, any */
                    r[e] = t % 3 == 0 ? (int64_t)(u % 9) - 4
                           : t % 3 == 1 ? (int64_t)(u % (1ull << 33)) - (1ll << 32)
                                        : (int64_t)u;
                    got[e] = (uint64_t)r[e];
                }
                for (unsigned z = 0, e = 0; z < bz; z++)
                    for (unsigned y = 0; y < by; y++)
                        for (unsigned x = 0; x < bx; x++, e++)
                            want[e] = (int64_t)((uint64_t)r[e] + (uint64_t)fl_predict_at(
                                                                     pred, by, bx, want, z, y, x));
                fl_reconstruct_sums(pred, bz, by, bx, got);
                for (unsigned e = 0; e < FL_BLOCK; e++)
                    misses += got[e] != (uint64_t)want[e];
            }
        }
        tu_expect(misses == 0, "%uD blocks: reconstruction by sums differs %u times", dim, misses);
    }
    static const int64_t edges[] = {INT64_MIN, INT64_MIN + 1, INT64_MIN + 2, -7, -6, -5, -4, -3,
                                    -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, INT64_MAX - 1, INT64_MAX};
    for (unsigned k = 0; k <= 3; k++) {
        unsigned misses = 0;
        for (unsigned i = 0; i < sizeof edges / sizeof *edges + 100000; i++) {
            const uint64_t sum = i < sizeof edges / sizeof *edges ? (uint64_t)edges[i]
                                                                   : next_random();
            /* the mean of k neighbours: the sum, or floor((sum + k/2) / k) for two or three */
            const uint64_t want =
                k > 1 ? (uint64_t)floor_div_ref((int64_t)(sum + k / 2), k) : sum;
            misses += fl_mean_round(sum, k) != want;
        }
        tu_expect(misses == 0, "fl_mean_round with %u neighbours: %u sums differ", k, misses);
    }
    return tu_done("fixed_predict_test");
}
