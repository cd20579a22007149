#include "policy.h"

#include "chunk.h"
#include "error.h"
#include "huff.h"
#include "ratio.h"

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

/* Fixed ratio: the chunk at each bound hz_ratio_search tries, written where it goes; the
 * closest written again when it was not the last. */
typedef struct chunk_search {
    hz_runner rr;
    h5zgpu_params q;
    uint8_t *out;
    size_t out_cap, *out_len;
} chunk_search;

static h5zgpu_status measure_chunk(void *ctx, h5zgpu_mode mode, double eb, double *applied,
                                   double *size)
{
    chunk_search *c = ctx;
    c->q.mode = mode;
    c->q.eb = eb;
    h5zgpu_status st = write_bounded(&c->rr, c->out, c->out_cap, c->out_len, applied);
    *size = (double)*c->out_len;
    return st;
}

static h5zgpu_status write_ratio(const hz_runner *r, uint8_t *out, size_t out_cap,
                                 size_t *out_len)
{
    const h5zgpu_params *p = r->p;
    const double values = (double)hz_count(p->rank, p->dims);
    chunk_search c = {.rr = *r, .q = *p, .out = out, .out_cap = out_cap, .out_len = out_len};
    c.rr.p = &c.q;
    hz_ratio_tries T;
    h5zgpu_status st = hz_ratio_search(values, values * (double)hz_esize(p->dtype), p->eb, 1,
                                       measure_chunk, &c, &T);
    if (st != H5ZGPU_OK || T.best == T.n - 1)
        return st;
    double applied;
    const hz_ratio_try *best = &T.t[T.best];
    return measure_chunk(&c, best->mode, best->eb, &applied, &(double){0});
}

h5zgpu_status hz_write_chunk(const hz_runner *r, uint8_t *out, size_t out_cap, size_t *out_len)
{
    double applied;
    return r->p->mode == H5ZGPU_MODE_RATIO ? write_ratio(r, out, out_cap, out_len)
                                           : write_bounded(r, out, out_cap, out_len, &applied);
}
