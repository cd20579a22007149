/* The Nyx-like fields (nyx_state.h). Each field is a sum of plane waves cos(2 pi k.x / n + phi)
 * with amplitudes falling as |k|^-1.2; as a product of three cosines per axis a wave costs one
 * multiply-add a value once the per-axis tables of a box are made. */
#include "nyx_state.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#define WAVES 12
#define PI 3.14159265358979323846

const char *const ns_field_names[NS_FIELDS] = {"baryon_density", "dark_matter_density",
                                               "temperature",    "velocity_x",
                                               "velocity_y",     "velocity_z"};

typedef struct waves {
    double amp[WAVES];
    int k[WAVES][3];
    double phase[WAVES][3];
} waves;

static uint64_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    uint64_t h = *s ^ (*s >> 29);
    return h * 0xbf58476d1ce4e5b9u ^ (h >> 32);
}

static double unit(uint64_t *s)
{
    return (double)(next(s) >> 11) * 0x1p-53;
}

/* Wave set `set`: wavenumbers 1 .. n/16 on each axis (at least 1). */
static void make_waves(size_t n, unsigned set, waves *w)
{
    uint64_t s = 0x9E3779B97F4A7C15u * (set + 1);
    int kmax = n >= 32 ? (int)(n / 16) : 2;
    double norm = 0;
    for (int m = 0; m < WAVES; m++) {
        double k2 = 0;
        for (int a = 0; a < 3; a++) {
            w->k[m][a] = 1 + (int)(unit(&s) * kmax);
            w->phase[m][a] = 2 * PI * unit(&s);
            k2 += (double)w->k[m][a] * w->k[m][a];
        }
        w->amp[m] = pow(k2, -0.6) * (0.5 + unit(&s));
        norm += w->amp[m] * w->amp[m] / 8;   /* a product of three cosines has variance 1/8 */
    }
    for (int m = 0; m < WAVES; m++)
        w->amp[m] /= sqrt(norm);   /* unit variance */
}

/* The sum of a wave set over a box, into out (b^3 doubles); -1 when out of memory. The
 * baryons' overdensity (set 0) drives both densities and the temperature. */
static int wave_sum(size_t n, unsigned set, size_t z0, size_t y0, size_t x0, size_t b,
                    double *out)
{
    waves w;
    make_waves(n, set, &w);
    double *t = malloc(3 * WAVES * b * sizeof *t);
    if (!t)
        return -1;
    const size_t o0[3] = {z0, y0, x0};
    for (int m = 0; m < WAVES; m++)
        for (int a = 0; a < 3; a++)
            for (size_t i = 0; i < b; i++)
                t[(m * 3 + a) * b + i] =
                    cos(2 * PI * w.k[m][a] * (double)(o0[a] + i) / (double)n + w.phase[m][a]);
    double coef[WAVES];
    for (size_t z = 0; z < b; z++)
        for (size_t y = 0; y < b; y++) {
            for (int m = 0; m < WAVES; m++)
                coef[m] = w.amp[m] * t[(m * 3 + 0) * b + z] * t[(m * 3 + 1) * b + y];
            double *row = out + (z * b + y) * b;
            for (size_t x = 0; x < b; x++) {
                double v = 0;
                for (int m = 0; m < WAVES; m++)
                    v += coef[m] * t[(m * 3 + 2) * b + x];
                row[x] = v;
            }
        }
    free(t);
    return 0;
}

/* Small-scale noise in [-0.5, 0.5): a hash of the global position and the field. */
static double noise(int field, size_t z, size_t y, size_t x, size_t n)
{
    uint64_t s = ((((uint64_t)field * n + z) * n + y) * n + x) ^ 0xD1B54A32D192ED03u;
    return unit(&s) - 0.5;
}

int ns_box(size_t n, int field, size_t z0, size_t y0, size_t x0, size_t b, float *out)
{
    size_t cells = b * b * b;
    double *base = malloc(cells * sizeof *base), *extra = malloc(cells * sizeof *extra);
    if (!base || !extra || wave_sum(n, field <= 2 ? 0 : (unsigned)field, z0, y0, x0, b, base) ||
        wave_sum(n, 10 + (unsigned)field, z0, y0, x0, b, extra)) {
        free(base);
        free(extra);
        return -1;
    }
    for (size_t z = 0, i = 0; z < b; z++)
        for (size_t y = 0; y < b; y++)
            for (size_t x = 0; x < b; x++, i++) {
                double d = base[i] + 0.02 * noise(field, z0 + z, y0 + y, x0 + x, n), v;
                switch (field) {
                case 0: v = exp(1.2 * d); break;                                 /* g/cm^3 */
                case 1: v = exp(1.5 * d + 0.3 * extra[i]); break;
                case 2: v = 1e4 * exp(0.6 * 1.2 * d) * (1 + 0.1 * extra[i]); break;   /* K */
                default: v = 1e7 * (d + 0.1 * extra[i]); break;                  /* cm/s */
                }
                out[i] = (float)v;
            }
    free(base);
    free(extra);
    return 0;
}
