#include "contract.h"

#include "util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int hc_is_fill(const h5zgpu_params *p, const void *a, size_t i)
{
    if (!p->has_fill)
        return 0;
    if (p->dtype == H5ZGPU_FLOAT32) {
        float f = (float)p->fill;
        return memcmp((const char *)a + 4 * i, &f, 4) == 0;
    }
    return memcmp((const char *)a + 8 * i, &p->fill, 8) == 0;
}

hc_range hc_finite_range(const h5zgpu_params *p, const void *a, size_t n)
{
    hc_range r = {0, INFINITY, -INFINITY, 0.0, 0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        double v = tu_get(p->dtype, a, i);
        if (hc_is_fill(p, a, i)) {
            r.nfill++;
        } else if (isnan(v)) {
            if (r.nnan++ == 0)
                memcpy(&r.nan_bits, (const char *)a + tu_esize(p->dtype) * i,
                       tu_esize(p->dtype));
        } else if (isfinite(v)) {
            r.lo = v < r.lo ? v : r.lo;
            r.hi = v > r.hi ? v : r.hi;
        }
    }
    r.any = r.hi >= r.lo;
    r.range = r.any ? r.hi - r.lo : 0.0;
    return r;
}

int hc_chunk_fill(const h5zgpu_params *p, const hc_range *r, uint64_t *bits)
{
    *bits = 0;
    if (r->nnan > r->nfill) {
        *bits = r->nan_bits;
        return 1;
    }
    if (r->nfill == 0)
        return 0;
    if (p->dtype == H5ZGPU_FLOAT32) {
        float f = (float)p->fill;
        memcpy(bits, &f, 4);
    } else {
        memcpy(bits, &p->fill, 8);
    }
    return 1;
}

uint64_t hc_check_values(const h5zgpu_params *p, const void *in, const void *out, size_t n,
                         const hc_range *r, char *why, size_t whylen)
{
    size_t es = tu_esize(p->dtype);
    uint64_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        double x = tu_get(p->dtype, in, i), y = tu_get(p->dtype, out, i), bound = 0;
        int ok;
        if (!isfinite(x) || p->eb == 0 || hc_is_fill(p, in, i)) {
            ok = memcmp((const char *)in + es * i, (const char *)out + es * i, es) == 0;
        } else if (p->mode == H5ZGPU_MODE_PWREL && x == 0) {
            ok = y == 0;
        } else {
            bound = p->mode == H5ZGPU_MODE_ABS   ? p->eb
                    : p->mode == H5ZGPU_MODE_REL ? p->eb * r->range
                                                 : p->eb * fabs(x);
            ok = isfinite(y) && fabs(y - x) <= bound;
        }
        if (!ok && bad++ == 0) {
            uint64_t bx = 0, by = 0;
            memcpy(&bx, (const char *)in + es * i, es);
            memcpy(&by, (const char *)out + es * i, es);
            snprintf(why, whylen,
                     "element %zu: %.17g (bits %0*llx) decoded as %.17g (bits %0*llx), bound %.17g",
                     i, x, (int)(2 * es), (unsigned long long)bx, y, (int)(2 * es),
                     (unsigned long long)by, bound);
        }
    }
    return bad;
}

double hc_expected_eb_abs(const h5zgpu_params *p, unsigned codec, const hc_range *r)
{
    if (codec == 0)
        return 0.0;
    if (p->mode == H5ZGPU_MODE_REL) {
        const double E = r->any ? p->eb * r->range : 0.0;
        int e;
        return E > 0 ? (frexp(E, &e), ldexp(0.5, e)) : E;
    }
    return p->eb;
}

unsigned hc_expected_version(unsigned codec)
{
    return codec == 0 ? 1u : 6u;
}
