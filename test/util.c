#include "util.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static unsigned failures, checks;

void tu_expect(int ok, const char *fmt, ...)
{
    checks++;
    if (ok)
        return;
    /* the first failures say enough; a broken codec would otherwise print thousands */
    if (failures++ < 20) {
        va_list ap;
        va_start(ap, fmt);
        fputs("FAIL: ", stdout);
        vprintf(fmt, ap);
        fputc('\n', stdout);
        va_end(ap);
    }
}

int tu_done(const char *name)
{
    printf("%s: %u checks, %u failed\n", name, checks, failures);
    return failures ? 1 : 0;
}

uint64_t tu_count(const h5zgpu_params *p)
{
    uint64_t n = 1;
    for (unsigned i = 0; i < p->rank; i++)
        n *= p->dims[i];
    return n;
}

size_t tu_esize(h5zgpu_dtype t)
{
    return t == H5ZGPU_FLOAT64 ? 8 : 4;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* Two parabolic waves: smooth, of both signs, and exact in IEEE arithmetic everywhere. */
static double smooth(size_t i, uint64_t seed)
{
    double t = (double)i * 0.013 + (double)seed * 0.1;
    double u = t - floor(t), v = t * 0.37 - floor(t * 0.37);
    return (4.0 * u * (1.0 - u) - 0.5 + 0.3 * (4.0 * v * (1.0 - v)) - 0.3) * 10.0;
}

void tu_put(h5zgpu_dtype t, void *out, size_t i, double v)
{
    if (t == H5ZGPU_FLOAT32) {
        float f = (float)v;
        memcpy((char *)out + 4 * i, &f, 4);
    } else {
        memcpy((char *)out + 8 * i, &v, 8);
    }
}

void tu_fill_code_limit(h5zgpu_params *p, h5zgpu_dtype t, unsigned side, unsigned trial,
                        uint64_t *state, void *out)
{
    static const char *const blocks[] = {
        "F0-F+FFF00F+0+F-++FF-+0+FFF-F+0F0-F-F-+-0F+F0+0F-++0+F-FFFFF+0F0",
        "0-F-0+--F0FF-0F-0F+-+F-F+F00F0-F0++-+-F-+F0F+F-FFF---F+F-FF00F-0",
    };
    const double fill = -9999.0, lim = 268435456.0;
    *p = (h5zgpu_params){.codec = H5ZGPU_CODEC_FIXED, .mode = H5ZGPU_MODE_ABS, .eb = 0.5,
                         .dtype = t, .rank = 3, .dims = {side, side, side}, .has_fill = 1,
                         .fill = fill};
    const size_t n = (size_t)side * side * side;
    const unsigned share = (unsigned)(tu_xorshift(state) % 100);
    for (size_t i = 0; i < n; i++) {
        const uint64_t r = tu_xorshift(state);
        char c = r % 100 < share ? 'F' : "-0+"[(r >> 8) % 3];
        if (side == 4 && trial < 2)
            c = blocks[trial][i];
        tu_put(t, out, i, c == 'F' ? fill : c == '-' ? -lim : c == '+' ? lim : 0);
    }
}

static void put_bits(h5zgpu_dtype t, void *out, size_t i, uint64_t bits)
{
    if (t == H5ZGPU_FLOAT32) {
        uint32_t b = (uint32_t)bits;
        memcpy((char *)out + 4 * i, &b, 4);
    } else {
        memcpy((char *)out + 8 * i, &bits, 8);
    }
}

/* The values TU_SPECIAL mixes in, as bit patterns: NaNs with payloads and signs, infinities,
 * negative zero, the smallest subnormal times 3, the largest finite value and its negation. */
static const uint32_t special32[] = {0x7FC12345u, 0xFFC00001u, 0x7F800000u, 0xFF800000u,
                                     0x80000000u, 0x00000003u, 0x7F7FFFFFu, 0xFF7FFFFFu};
static const uint64_t special64[] = {
    0x7FF8000012345678u, 0xFFF8000000000001u, 0x7FF0000000000000u, 0xFFF0000000000000u,
    0x8000000000000000u, 0x0000000000000003u, 0x7FEFFFFFFFFFFFFFu, 0xFFEFFFFFFFFFFFFFu};
/* About this many special values per array (more in arrays below 7 x this), so that large
 * arrays keep blocks free of them and exercise both the coded and the raw-block paths. */
#define TU_SPECIALS_PER_ARRAY 24
#define TU_SPECIAL_MIN_EVERY 7

/* A parabolic wave of period 1: smooth, in [0, 1], exact in IEEE arithmetic. */
static double wave(double t)
{
    double u = t - floor(t);
    return 4.0 * u * (1.0 - u);
}

/* TU_FIELD at coordinates c of a rank-r shape. The sum of one wave per axis is what any Lorenzo
 * order predicts well; the coupling terms (fastest two axes; slowest and fastest) leave 2-D
 * Lorenzo residuals that 3-D Lorenzo cancels, and 1-D residuals that 2-D Lorenzo cancels. */
static double field(const uint64_t *c, unsigned r, uint64_t seed)
{
    double v = 0, ph = (double)seed * 0.1;
    for (unsigned d = 0; d < r; d++)
        v += 3.0 * wave((double)c[d] * (0.019 + 0.007 * (double)d) + ph + 0.3 * (double)d);
    if (r >= 2)
        v += 4.0 * wave((double)c[r - 1] * 0.011 + ph) * wave((double)c[r - 2] * 0.017);
    if (r >= 3)
        v += 2.0 * wave((double)c[0] * 0.023) * wave((double)c[r - 1] * 0.015 + ph);
    return v - 5.0;
}

/* TU_MASKED's land: patches over the two fastest axes where a wave is below 0.84 (60%). */
static int masked_land(const uint64_t *c, unsigned r, uint64_t seed)
{
    double a = (double)c[r - 1] * 0.013 + (r >= 2 ? (double)c[r - 2] * 0.007 : 0.0) +
               (double)seed * 0.1;
    return wave(a) < 0.84;
}

/* Spikes of TU_SPIKY: about one element in this many. */
#define TU_SPIKE_EVERY 50u

static void fill_dims(h5zgpu_dtype t, unsigned rank, const uint64_t *dims, size_t n,
                      tu_pattern pat, uint64_t seed, void *out)
{
    uint64_t s = seed * 0x2545F4914F6CDD1Du + 1, c[H5ZGPU_MAX_RANK] = {0};
    size_t nspecial = sizeof special32 / sizeof special32[0];
    size_t every = n / TU_SPECIALS_PER_ARRAY > TU_SPECIAL_MIN_EVERY ? n / TU_SPECIALS_PER_ARRAY
                                                                     : TU_SPECIAL_MIN_EVERY;
    for (size_t i = 0; i < n; i++) {
        size_t rest = i;
        for (unsigned d = rank; d-- > 0;) {
            c[d] = rest % dims[d];
            rest /= dims[d];
        }
        int special = i % every == 3;
        uint64_t sbits = t == H5ZGPU_FLOAT32 ? special32[(i / every) % nspecial]
                                             : special64[(i / every) % nspecial];
        switch (pat) {
        case TU_SMOOTH: tu_put(t, out, i, smooth(i, seed)); break;
        case TU_NOISE: tu_put(t, out, i, (double)(splitmix(&s) >> 11) * 0x1p-52 - 1.0); break;
        case TU_HUGE: tu_put(t, out, i, smooth(i, seed) * 1e29); break;
        case TU_CONSTANT: tu_put(t, out, i, 3.25); break;
        case TU_LAND: tu_put(t, out, i, smooth(i * 3 + 1, seed + 7) < -4.0 ? -1e34 : smooth(i, seed)); break;
        case TU_SPECIAL:
            if (special)
                put_bits(t, out, i, sbits);
            else
                tu_put(t, out, i, smooth(i, seed));
            break;
        case TU_BITS: {
            uint64_t b = splitmix(&s);
            /* an all-ones exponent would be NaN or Inf; clear its top bit */
            if (t == H5ZGPU_FLOAT32 && ((b >> 23) & 0xFF) == 0xFF)
                b &= ~(UINT64_C(1) << 30);
            if (t == H5ZGPU_FLOAT64 && ((b >> 52) & 0x7FF) == 0x7FF)
                b &= ~(UINT64_C(1) << 62);
            put_bits(t, out, i, b);
            break;
        }
        case TU_FIELD: tu_put(t, out, i, field(c, rank, seed)); break;
        case TU_MASKED:
            if (special)
                put_bits(t, out, i, sbits);
            else
                tu_put(t, out, i, masked_land(c, rank, seed) ? -1e34 : field(c, rank, seed));
            break;
        case TU_NAN_MASKED:
            tu_put(t, out, i, masked_land(c, rank, seed) ? NAN : field(c, rank, seed));
            break;
        case TU_SPIKY: {
            uint64_t h = splitmix(&s);
            double spike = h % TU_SPIKE_EVERY ? 0.0 : (h >> 32 & 1u ? 1e4 : -1e4);
            tu_put(t, out, i, field(c, rank, seed) + spike);
            break;
        }
        }
    }
}

void tu_fill(h5zgpu_dtype t, size_t n, tu_pattern pat, uint64_t seed, void *out)
{
    uint64_t dims[1] = {n};
    fill_dims(t, 1, dims, n, pat, seed, out);
}

void tu_fill_shape(const h5zgpu_params *p, tu_pattern pat, uint64_t seed, void *out)
{
    fill_dims(p->dtype, p->rank, p->dims, (size_t)tu_count(p), pat, seed, out);
}

double tu_get(h5zgpu_dtype t, const void *a, size_t i)
{
    if (t == H5ZGPU_FLOAT32) {
        float f;
        memcpy(&f, (const char *)a + 4 * i, 4);
        return f;
    }
    double d;
    memcpy(&d, (const char *)a + 8 * i, 8);
    return d;
}

size_t tu_check_bound(h5zgpu_dtype t, h5zgpu_mode mode, double eb, const void *want,
                      const void *got, size_t n, char *why, size_t whylen)
{
    size_t es = tu_esize(t), misses = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double w = tu_get(t, want, i);
        if (isfinite(w)) {
            lo = w < lo ? w : lo;
            hi = w > hi ? w : hi;
        }
    }
    double range = hi >= lo ? hi - lo : 0.0;
    for (size_t i = 0; i < n; i++) {
        double w = tu_get(t, want, i), g = tu_get(t, got, i), bound;
        int ok;
        if (!isfinite(w)) {
            ok = memcmp((const char *)want + es * i, (const char *)got + es * i, es) == 0;
            bound = 0;
        } else {
            /* eb = 0 is exact even when the range overflows (0 x Inf would be NaN) */
            bound = eb == 0                  ? 0
                    : mode == H5ZGPU_MODE_ABS ? eb
                    : mode == H5ZGPU_MODE_REL ? eb * range
                                              : eb * fabs(w);
            ok = isfinite(g) && fabs(g - w) <= bound;
        }
        if (!ok && misses++ == 0)
            snprintf(why, whylen, "element %zu: %.17g decoded as %.17g (bound %.17g)", i, w, g,
                     bound);
    }
    return misses;
}

void tu_expect_decodes(const h5zgpu_params *p, const void *in, const uint8_t *chunk, size_t len,
                       const char *label)
{
    const size_t n = (size_t)tu_count(p), raw = n * tu_esize(p->dtype);
    size_t got = 0;
    void *back = malloc(raw);
    char why[256];
    h5zgpu_status st = back ? h5zgpu_decompress(chunk, len, back, raw, &got, NULL)
                            : H5ZGPU_E_NOMEM;
    tu_expect(st == H5ZGPU_OK && got == raw, "%s: decompress -> %s (%s)", label,
              h5zgpu_status_string(st), h5zgpu_last_error());
    if (st == H5ZGPU_OK) {
        size_t misses = tu_check_bound(p->dtype, p->mode, p->eb, in, back, n, why, sizeof why);
        tu_expect(misses == 0, "%s: %zu values miss the bound; first: %s", label, misses, why);
    }
    free(back);
}

/* The checksum written again from docs/FORMAT.md rather than taken from the codec
 * (portable.h): the tests check the codec's sums against the format's definition. */
static uint32_t fmix32(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    return h;
}

/* FORMAT.md's sum over a byte string read as zero-padded little-endian words. */
static uint32_t format_sum(const uint8_t *p, size_t n)
{
    uint32_t s = 0;
    for (uint64_t i = 0; i * 4 < n; i++) {
        uint32_t w = 0;
        for (unsigned b = 0; b < 4 && i * 4 + b < n; b++)
            w |= (uint32_t)p[i * 4 + b] << (8 * b);
        s += fmix32(w ^ (uint32_t)(0x9E3779B9u * (i + 1)) ^ (uint32_t)((i >> 32) * 0x7FEB352Du));
    }
    return s;
}

uint32_t tu_fix_checksum_at(uint8_t *chunk, size_t len, size_t hlen)
{
    uint8_t hdr[TU_MAX_HEADER];
    if (len < hlen || hlen < 16 || hlen > sizeof hdr)
        return 0;
    memcpy(hdr, chunk, hlen);
    memset(hdr + 12, 0, 4);
    uint32_t sum = fmix32(format_sum(hdr, hlen) ^
                          fmix32(format_sum(chunk + hlen, len - hlen) + (uint32_t)(len - hlen)));
    for (unsigned b = 0; b < 4; b++)
        chunk[12 + b] = (uint8_t)(sum >> (8 * b));
    return sum;
}

uint32_t tu_fix_checksum(uint8_t *chunk, size_t len)
{
    /* header: 40 bytes, 4 a dimension, 8 more with a fill value (flag bit 0) */
    if (len < 40)
        return 0;
    return tu_fix_checksum_at(chunk, len, 40 + 4 * (size_t)chunk[8] + (chunk[9] & 1u ? 8 : 0));
}

uint64_t tu_fnv1a(const void *p, size_t n)
{
    uint64_t h = 0xCBF29CE484222325u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const uint8_t *)p)[i]) * 0x100000001B3u;
    return h;
}

uint64_t tu_xorshift(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

uint32_t tu_nib_read(const uint8_t *p, size_t *k)
{
    uint32_t v = 0;
    for (unsigned sh = 0;; sh += 3) {
        const unsigned nib = (p[*k / 2] >> (4 * (*k & 1))) & 15u;
        (*k)++;
        v |= (nib & 7u) << sh;
        if (!(nib & 8u))
            return v;
    }
}
