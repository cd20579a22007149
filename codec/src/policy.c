#include "policy.h"

#include "chunk.h"
#include "error.h"
#include "huff.h"

#include <math.h>
#include <string.h>

/* The payload of the codec asked for; auto keeps the smaller of the two (the fixed-length one
 * on a tie). *codec says which wrote it. Chunks of 2^32 elements or more, whose positions the
 * Huffman payload cannot hold, go to the fixed-length codec. */
static h5zgpu_status choose(const hz_runner *r, uint8_t *base, uint64_t shift, uint64_t raw,
                            unsigned *codec, hz_payload *res)
{
    const h5zgpu_params *p = r->p;
    hf_geom hg;
    const int huff_ok = hf_geom_init(&hg, p->rank, p->dims) == 0;
    const int want_fixed = p->codec != H5ZGPU_CODEC_HUFFMAN || !huff_ok;
    const int want_huff = p->codec != H5ZGPU_CODEC_FIXED && huff_ok;
    h5zgpu_status st = H5ZGPU_E_OUTPUT_TOO_SMALL;
    *codec = H5ZGPU_CODEC_FIXED;
    memset(res, 0, sizeof *res);
    if (want_fixed)
        st = r->encode(r, H5ZGPU_CODEC_FIXED, base, shift, raw, 0, res);
    if (!want_huff || (st != H5ZGPU_OK && st != H5ZGPU_E_OUTPUT_TOO_SMALL))
        return st;
    /* auto: Huffman must be strictly smaller, and leaves the fixed-length payload otherwise */
    const uint64_t hcap = (st == H5ZGPU_OK ? res->len : raw) - (want_fixed ? 1 : 0);
    if (hcap == 0)
        return st;
    hz_payload h;
    memset(&h, 0, sizeof h);
    const h5zgpu_status hst = r->encode(r, H5ZGPU_CODEC_HUFFMAN, base, shift, hcap, want_fixed, &h);
    if (hst == H5ZGPU_OK) {
        *codec = H5ZGPU_CODEC_HUFFMAN;
        *res = h;
        return H5ZGPU_OK;
    }
    if (!want_fixed) {
        res->held_fill = h.held_fill;
        res->fill_bits = h.fill_bits;
    }
    return hst == H5ZGPU_E_OUTPUT_TOO_SMALL ? st : hst;
}

/* The chunk of r->p's error bound; *eb_abs the bound applied (0 when stored raw). */
static h5zgpu_status write_bounded(const hz_runner *r, uint8_t *out, size_t out_cap,
                                   size_t *out_len, double *eb_abs)
{
    const h5zgpu_params *p = r->p;
    const uint64_t raw = hz_count(p->rank, p->dims) * hz_esize(p->dtype);
    /* the payload follows the shorter header, or the longer one when the chunk holds fill */
    const size_t lo = hz_header_len(p->rank, 0);
    const uint64_t shift = hz_header_len(p->rank, HZ_FLAG_FILL) - lo;
    if (out_cap < lo + shift + raw)
        return hz_fail(H5ZGPU_E_OUTPUT_TOO_SMALL,
                       "output buffer of %zu bytes is below h5zgpu_compress_bound (%llu)",
                       out_cap, (unsigned long long)(lo + shift + raw));
    hz_header h = {.version = HZ_VERSION_CODED, .rank = p->rank, .dtype = p->dtype,
                   .mode = p->mode, .eb = p->eb};
    memcpy(h.dims, p->dims, sizeof(uint64_t) * p->rank);
    hz_payload res;
    h5zgpu_status st = choose(r, out + lo, shift, raw, &h.codec, &res);
    if (st != H5ZGPU_OK && st != H5ZGPU_E_OUTPUT_TOO_SMALL)
        return st;
    if (res.held_fill) {
        h.flags = HZ_FLAG_FILL;
        h.fill_bits = res.fill_bits;
    }
    const size_t hlen = hz_header_len(p->rank, h.flags);
    h.payload_len = res.len;
    h.eb_abs = res.eb_abs;
    uint32_t sum = res.sum;
    /* did not shrink, or REL's range overflowed (float64 values near both -max and +max: every
     * block is raw, and a bound of inf could not be read back): stored as it came, behind the
     * same header */
    if (st == H5ZGPU_E_OUTPUT_TOO_SMALL || h.payload_len >= raw || !hz_is_finite(h.eb_abs)) {
        h.codec = HZ_CODEC_RAW;
        h.version = 1;
        h.eb_abs = 0;
        h.payload_len = raw;
        if ((st = r->store_raw(r, out + hlen, raw, &sum)) != H5ZGPU_OK)
            return st;
    }
    uint8_t hdr[HZ_HDR_MAX];
    hz_header_write(hdr, &h, sum);
    if ((st = r->put_header(r, out, hdr, hlen)) != H5ZGPU_OK)
        return st;
    *out_len = hlen + h.payload_len;
    *eb_abs = h.eb_abs;
    return H5ZGPU_OK;
}

/* Fixed ratio. The first try is REL 1e-3, which tells the chunk's scale (the bound it applied;
 * while the chunk does not shrink, REL tries with larger bounds); then ABS bounds: from one try,
 * a model of about one bit a value more for each halving of the bound; from two, the secant in
 * (log bound, log size) through the tries that bracket the target, or the last two, kept inside
 * the bracket (its geometric middle where the secant leaves it). A try within HZ_RATIO_TOL of
 * the target size ends the search; after HZ_RATIO_TRIES the closest try is the chunk (written
 * again when it was not the last). Every decision rests on sizes alone, which both executors
 * make alike, so the chunk's bytes are the same on either. */
#define HZ_RATIO_PROBE 1e-3
#define HZ_RATIO_REL_MAX 0.5
#define HZ_RATIO_TOL 0.02
#define HZ_RATIO_TRIES 8

typedef struct ratio_try {
    h5zgpu_mode mode;
    double eb;        /* as given: REL's fraction of the range, or ABS's bound */
    double applied;   /* the absolute bound it applied; 0 when stored raw or exact */
    double size;
} ratio_try;

/* The next ABS bound from tries t[0..n-1] (the last with a scale), towards size want. */
static double ratio_next(const ratio_try *t, int n, double want, double values)
{
    const ratio_try *over = NULL, *under = NULL, *last = &t[n - 1];
    for (int i = 0; i < n; i++) {   /* the tightest bracket: too big at the largest bound ... */
        if (!(t[i].applied > 0))
            continue;
        if (t[i].size > want && (!over || t[i].applied > over->applied))
            over = &t[i];
        if (t[i].size < want && (!under || t[i].applied < under->applied))
            under = &t[i];   /* ... too small at the smallest */
    }
    const ratio_try *a = over && under ? over : (n > 1 && t[n - 2].applied > 0 ? &t[n - 2] : NULL);
    const ratio_try *b = over && under ? under : last;
    double next = 0;
    if (a && a->applied != b->applied && a->size != b->size) {
        const double slope = (log(b->size) - log(a->size)) / (log(b->applied) - log(a->applied));
        if (slope < 0)   /* else the sizes did not fall as the bound grew: the model decides */
            next = b->applied * exp((log(want) - log(b->size)) / slope);
    }
    if (!(next > 0) || !hz_is_finite(next))
        next = last->applied * exp(log(2.0) * 8.0 * (last->size - want) / values);
    if (over && under) {   /* inside the bracket, a tenth of its width from either end */
        const double lo = log(over->applied), hi = log(under->applied), x = log(next);
        if (!(x > lo + 0.1 * (hi - lo) && x < hi - 0.1 * (hi - lo)))
            next = sqrt(over->applied * under->applied);
    }
    /* a step of 2^20 at most */
    return fmax(last->applied / 1048576.0, fmin(last->applied * 1048576.0, next));
}

static h5zgpu_status write_ratio(const hz_runner *r, uint8_t *out, size_t out_cap,
                                 size_t *out_len)
{
    const h5zgpu_params *p = r->p;
    const double values = (double)hz_count(p->rank, p->dims);
    const double raw = values * (double)hz_esize(p->dtype), want = raw / p->eb;
    h5zgpu_params q = *p;
    q.mode = H5ZGPU_MODE_REL;
    q.eb = HZ_RATIO_PROBE;
    hz_runner rr = *r;
    rr.p = &q;
    ratio_try t[HZ_RATIO_TRIES];
    int n = 0, best = 0;
    for (;;) {
        h5zgpu_status st = write_bounded(&rr, out, out_cap, out_len, &t[n].applied);
        if (st != H5ZGPU_OK)
            return st;
        if (t[n].applied == 0 && q.mode == H5ZGPU_MODE_ABS)
            t[n].applied = q.eb;   /* stored raw at that bound: still a point of the curve */
        t[n].mode = q.mode;
        t[n].eb = q.eb;
        t[n].size = (double)*out_len;
        if (fabs(t[n].size - want) < fabs(t[best].size - want))
            best = n;
        const ratio_try *last = &t[n++];
        if (fabs(last->size - want) <= HZ_RATIO_TOL * want || n == HZ_RATIO_TRIES)
            break;
        if (last->applied > 0) {
            q.mode = H5ZGPU_MODE_ABS;
            q.eb = ratio_next(t, n, want, values);
        } else if (last->mode == H5ZGPU_MODE_REL && last->size >= raw &&
                   last->eb < HZ_RATIO_REL_MAX) {   /* stored raw: a larger fraction */
            q.eb = fmin(HZ_RATIO_REL_MAX, last->eb * 1024.0);
        } else {
            break;   /* exact with no range (a constant or empty chunk): nothing to tune */
        }
        if (q.mode == last->mode && q.eb == last->eb)
            break;
    }
    if (best == n - 1)
        return H5ZGPU_OK;
    double applied;
    q.mode = t[best].mode;
    q.eb = t[best].eb;
    return write_bounded(&rr, out, out_cap, out_len, &applied);
}

h5zgpu_status hz_write_chunk(const hz_runner *r, uint8_t *out, size_t out_cap, size_t *out_len)
{
    double applied;
    return r->p->mode == H5ZGPU_MODE_RATIO ? write_ratio(r, out, out_cap, out_len)
                                           : write_bounded(r, out, out_cap, out_len, &applied);
}
