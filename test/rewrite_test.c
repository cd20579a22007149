/* A chunk rewritten in place, as HDF5 does when a write covers only part of a stored chunk: it
 * decompresses the chunk, overwrites the part, and compresses the whole chunk again. Every
 * element must stay within the bound of what the user last wrote there, however many times its
 * chunk is rewritten:
 *   ABS  |x' - x| <= eb;  PWREL  |x' - x| <= eb |x|;
 *   REL  |x' - x| <= eb x (the largest range the chunk's values had since x was written): a
 *        chunk's REL range is that of the values it holds, and a later write may widen it.
 * With ABS and PWREL an element nobody rewrote keeps its stored value bit for bit, once coded
 * (a value stored exactly as written, in a raw block or as a verbatim value, may be coded by a
 * later write of its chunk).
 *   rewrite_test                 every codec, mode, type, field and way of rewriting
 *   rewrite_test --verbose       also one line per case
 *   rewrite_test --only TEXT I   the cases whose label holds TEXT, tracing element I by round */
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NZ 12
#define NY 24
#define NX 40
#define N (NZ * NY * NX)
#define FILL -1e34

/* What each round overwrites. */
typedef enum {
    SLABS,       /* a chunk that starts empty (fill) gets its z planes three at a time */
    ROWS,        /* a full chunk gets one y row rewritten a round, with slightly larger values */
    STRIDED,     /* a full chunk gets every third element rewritten, with new values */
    SAME,        /* a full chunk rewritten with the values read from it: nothing may move */
    FEW_LEFT,    /* a full chunk gets all but a few elements rewritten with a wider field */
    SPIKE        /* a full chunk gets one element rewritten far outside its range */
} how;

static const char *const how_name[] = {"slabs", "rows", "strided", "same", "few-left", "spike"};
#define ROUNDS 4

static const struct {
    const char *name;
    tu_pattern pattern;
} fields[] = {{"field", TU_FIELD}, {"noise", TU_NOISE}, {"masked", TU_MASKED}};

static const struct {
    h5zgpu_mode mode;
    double eb;
} bounds[] = {
    {H5ZGPU_MODE_ABS, 1e-3}, {H5ZGPU_MODE_REL, 1e-2}, {H5ZGPU_MODE_REL, 1e-4},
    {H5ZGPU_MODE_PWREL, 1e-3},
};

static int verbose;
static const char *only;
static size_t trace = (size_t)-1;

/* The user's value at element i in round r: the pattern, scaled and shifted so that rewrites
 * change it. */
static double user_value(const double *base, size_t i, unsigned r, how h)
{
    double v = base[i];
    if (v == FILL || !isfinite(v))
        return v;
    if (h == ROWS || h == STRIDED)
        return v * (1.0 + 0.01 * r) + 0.001 * r;
    if (h == FEW_LEFT)
        return v * (1.0 + r);
    return v;
}

/* Whether round r (from 1) overwrites element i = (z, y, x). */
static int written(how h, unsigned r, size_t i)
{
    size_t z = i / (NY * NX), y = i / NX % NY;
    switch (h) {
    case SLABS: return z / 3 == r - 1;
    case ROWS: return y == (7 * r) % NY;
    case STRIDED: return i % 3 == r % 3;
    case SAME: return 0;
    case FEW_LEFT: return i % 997 != 5;
    case SPIKE: return i == (size_t)(N / 2 + r);
    }
    return 0;
}

static double get(h5zgpu_dtype t, const void *a, size_t i)
{
    return tu_get(t, a, i);
}

static int same_bits(h5zgpu_dtype t, const void *a, const void *b, size_t i)
{
    size_t e = tu_esize(t);
    return memcmp((const char *)a + e * i, (const char *)b + e * i, e) == 0;
}

/* eb x the range of the finite, non-fill values of buf (REL's bound for that chunk). */
static double rel_bound(h5zgpu_dtype t, const void *buf, double eb)
{
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < N; i++) {
        double v = get(t, buf, i);
        if (isfinite(v) && v != (t == H5ZGPU_FLOAT32 ? (double)(float)FILL : FILL))
            lo = fmin(lo, v), hi = fmax(hi, v);
    }
    return hi >= lo ? eb * (hi - lo) : 0;
}

static void one_case(unsigned codec, h5zgpu_dtype t, size_t bi, size_t fi, how h)
{
    h5zgpu_params p = {.codec = (h5zgpu_codec)codec, .mode = bounds[bi].mode,
                       .eb = bounds[bi].eb, .dtype = t, .rank = 3, .dims = {NZ, NY, NX},
                       .has_fill = 1, .fill = t == H5ZGPU_FLOAT32 ? (double)(float)FILL : FILL};
    size_t esize = tu_esize(t), cap = h5zgpu_compress_bound(&p), len = 0, got = 0;
    double *base = malloc(N * sizeof *base), *since = malloc(N * sizeof *since);
    void *user = malloc(N * esize), *buf = malloc(N * esize), *prev = malloc(N * esize);
    uint8_t *chunk = malloc(cap);
    char label[160];
    snprintf(label, sizeof label, "codec %u %s %s %s eb %g, %s", codec,
             t == H5ZGPU_FLOAT32 ? "f32" : "f64", fields[fi].name,
             bounds[bi].mode == H5ZGPU_MODE_ABS ? "ABS" : bounds[bi].mode == H5ZGPU_MODE_REL ? "REL"
                                                                                            : "PWREL",
             bounds[bi].eb, how_name[h]);
    if (only && !strstr(label, only))
        goto done;
    h5zgpu_params fp = p;
    fp.dtype = H5ZGPU_FLOAT64;
    tu_fill_shape(&fp, fields[fi].pattern, 7 + fi, base);
    for (size_t i = 0; i < N; i++) {
        if (bounds[bi].mode == H5ZGPU_MODE_PWREL && base[i] == 0)
            base[i] = 0.5; /* PWREL zeros come back exact anyway */
        tu_put(t, user, i, h == SLABS ? FILL : user_value(base, i, 0, h));
        since[i] = 0;
    }
    memcpy(buf, user, N * esize);
    size_t misses = 0, moved = 0, first = N;
    double worst = 0;
    for (unsigned r = 0; r <= ROUNDS; r++) {
        /* the user's write of this round over what HDF5 read back */
        for (size_t i = 0; r > 0 && i < N; i++)
            if (written(h, r, i)) {
                double v = h == SPIKE ? 1e3 * (1.0 + r) : user_value(base, i, r, h);
                tu_put(t, user, i, v);
                tu_put(t, buf, i, v);
                since[i] = 0;
            }
        if (h == SLABS && r == 0)
            continue;
        double E = bounds[bi].mode == H5ZGPU_MODE_REL ? rel_bound(t, buf, bounds[bi].eb) : 0;
        memcpy(prev, buf, N * esize);
        h5zgpu_status cs = h5zgpu_compress(&p, buf, chunk, cap, &len, NULL);
        h5zgpu_status ds = cs == H5ZGPU_OK
                               ? h5zgpu_decompress(chunk, len, buf, N * esize, &got, NULL)
                               : cs;
        if (ds != H5ZGPU_OK) {
            tu_expect(0, "%s: round %u: %s", label, r, h5zgpu_last_error());
            goto done;
        }
        if (trace < N) {
            h5zgpu_info info;
            h5zgpu_chunk_info(chunk, len, &info);
            printf("%s round %u: wrote %.17g, stored %.17g, E %.6g, eb_abs %.6g, version %u, "
                   "codec %u\n",
                   label, r, get(t, user, trace), get(t, buf, trace), E, info.eb_abs,
                   info.format_version, info.codec);
        }
        for (size_t i = 0; i < N; i++) {
            double want = get(t, user, i), have = get(t, buf, i);
            since[i] = fmax(since[i], E);
            if (!isfinite(want) || want == p.fill) {
                if (!same_bits(t, user, buf, i) && misses++ == 0)
                    first = i;
                continue;
            }
            double b = bounds[bi].mode == H5ZGPU_MODE_ABS   ? bounds[bi].eb
                       : bounds[bi].mode == H5ZGPU_MODE_REL ? since[i]
                                                            : bounds[bi].eb * fabs(want);
            double e = fabs(have - want);
            if (!(e <= b) && misses++ == 0)
                first = i;
            if (b > 0)
                worst = fmax(worst, e / b);
            /* ABS and PWREL keep a stored value nobody rewrote this round, unless it was stored
             * exactly as written (a raw block, a verbatim value): coding it now is its first */
            if (bounds[bi].mode != H5ZGPU_MODE_REL && r > 0 && !written(h, r, i) &&
                !same_bits(t, prev, buf, i) && !same_bits(t, prev, user, i))
                moved++;
        }
    }
    if (first < N)
        tu_expect(misses == 0,
                  "%s: %zu element-rounds miss the bound, worst %.3g x; first [%zu] wrote %.17g "
                  "read %.17g",
                  label, misses, worst, first, get(t, user, first), get(t, buf, first));
    tu_expect(moved == 0, "%s: %zu stored values nobody rewrote changed", label, moved);
    if (verbose)
        printf("%-60s worst %.3f x bound, ratio %.2f\n", label, worst,
               (double)(N * esize) / (double)len);
done:
    free(base);
    free(since);
    free(user);
    free(buf);
    free(prev);
    free(chunk);
}

int main(int argc, char **argv)
{
    verbose = argc > 1 && strcmp(argv[1], "--verbose") == 0;
    if (argc == 4 && strcmp(argv[1], "--only") == 0) {
        only = argv[2];
        trace = (size_t)strtoull(argv[3], NULL, 10);
    }
    static const unsigned codecs[] = {1, 2, 0};
    for (size_t c = 0; c < 3; c++)
        for (int ti = 0; ti < 2; ti++)
            for (size_t bi = 0; bi < sizeof bounds / sizeof bounds[0]; bi++)
                for (size_t fi = 0; fi < sizeof fields / sizeof fields[0]; fi++)
                    for (int h = SLABS; h <= SPIKE; h++)
                        one_case(codecs[c], ti ? H5ZGPU_FLOAT64 : H5ZGPU_FLOAT32, bi, fi,
                                 (how)h);
    return tu_done("rewrite");
}
