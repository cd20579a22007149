#include "chunk.h"

#include "error.h"
#include "portable.h"

#include <string.h>

static const uint8_t magic[4] = {'H', '5', 'Z', 'G'};

uint64_t hz_count(unsigned rank, const uint64_t *dims)
{
    uint64_t n = 1;
    for (unsigned i = 0; i < rank; i++) {
        if (dims[i] == 0 || n > (UINT64_C(1) << 60) / dims[i])
            return 0;
        n *= dims[i];
    }
    return n;
}

uint64_t hz_fill_bits(const h5zgpu_params *p)
{
    uint64_t u = 0;
    if (p->dtype == H5ZGPU_FLOAT32) {
        float f = (float)p->fill;
        uint32_t w;
        memcpy(&w, &f, 4);
        u = w;
    } else {
        memcpy(&u, &p->fill, 8);
    }
    return u;
}

uint32_t hz_sum(const uint8_t *p, uint64_t n)
{
    uint32_t s = 0;
    uint64_t w = 0, full = n / 4;
    for (; w < full; w++)
        s += hz_checksum_term(hz_get_u32(p + 4 * w), w);
    if (n % 4) {
        uint8_t tail[4] = {0, 0, 0, 0};
        memcpy(tail, p + 4 * full, n % 4);
        s += hz_checksum_term(hz_get_u32(tail), w);
    }
    return s;
}

uint32_t hz_checksum(const uint8_t *hdr, size_t hlen, uint32_t payload_sum, uint64_t payload_len)
{
    uint8_t copy[HZ_HDR_MAX];
    memcpy(copy, hdr, hlen);
    hz_put_u32(copy + HZ_OFF_CHECKSUM, 0);
    return hz_fmix32(hz_sum(copy, hlen) ^ hz_fmix32(payload_sum + (uint32_t)payload_len));
}

h5zgpu_status hz_check_sum(const uint8_t *in, const hz_header *h, uint32_t sum)
{
    size_t hlen = hz_header_len(h->rank, h->flags);
    uint32_t want = hz_get_u32(in + HZ_OFF_CHECKSUM);
    uint32_t got = hz_checksum(in, hlen, sum, h->payload_len);
    if (want != got)
        return hz_fail(H5ZGPU_E_CORRUPT,
                       "chunk checksum mismatch (stored %08x, computed %08x): the chunk is damaged",
                       want, got);
    return H5ZGPU_OK;
}

void hz_header_write(uint8_t *out, const hz_header *h, uint32_t payload_sum)
{
    size_t hlen = hz_header_len(h->rank, h->flags);
    memcpy(out, magic, 4);
    out[4] = (uint8_t)h->version;
    out[5] = (uint8_t)h->codec;
    out[6] = (uint8_t)h->dtype;
    out[7] = (uint8_t)h->mode;
    out[8] = (uint8_t)h->rank;
    out[9] = (uint8_t)h->flags;
    hz_put_u16(out + 10, 0);
    hz_put_u32(out + HZ_OFF_CHECKSUM, 0);
    hz_put_f64(out + 16, h->eb);
    hz_put_f64(out + 24, h->eb_abs);
    hz_put_u64(out + 32, h->payload_len);
    for (unsigned i = 0; i < h->rank; i++)
        hz_put_u32(out + HZ_HDR_FIXED + 4 * i, (uint32_t)h->dims[i]);
    if (h->flags & HZ_FLAG_FILL)
        hz_put_u64(out + HZ_HDR_FIXED + 4 * h->rank, h->fill_bits);
    hz_put_u32(out + HZ_OFF_CHECKSUM, hz_checksum(out, hlen, payload_sum, h->payload_len));
}

h5zgpu_status hz_header_read(const uint8_t *in, size_t len, hz_header *h)
{
    return hz_header_parse(in, len, len, h);
}

h5zgpu_status hz_header_parse(const uint8_t *in, size_t avail, size_t len, hz_header *h)
{
    memset(h, 0, sizeof *h);
    if (len < HZ_HDR_FIXED || avail < HZ_HDR_FIXED)
        return hz_fail(H5ZGPU_E_CORRUPT, "chunk of %zu bytes is shorter than a header (%u)",
                       len, HZ_HDR_FIXED);
    if (memcmp(in, magic, 4) != 0)
        return hz_fail(H5ZGPU_E_CORRUPT, "chunk does not start with the h5zgpu magic 'H5ZG'");
    h->version = in[4];
    if (h->version == 0)
        return hz_fail(H5ZGPU_E_CORRUPT, "chunk format version 0 does not exist");
    if (h->version > H5ZGPU_FORMAT_VERSION)
        return hz_fail(H5ZGPU_E_VERSION,
                       "chunk format version %u is newer than this h5zgpu reads (%u): upgrade",
                       h->version, H5ZGPU_FORMAT_VERSION);
    h->codec = in[5];
    h->dtype = (h5zgpu_dtype)in[6];
    h->mode = (h5zgpu_mode)in[7];
    h->rank = in[8];
    if (h->codec > H5ZGPU_CODEC_HUFFMAN)
        return hz_fail(H5ZGPU_E_CORRUPT, "chunk names codec %u (0-2 exist)", h->codec);
    if (h->dtype != H5ZGPU_FLOAT32 && h->dtype != H5ZGPU_FLOAT64)
        return hz_fail(H5ZGPU_E_CORRUPT, "chunk names element type %u (1-2 exist)", h->dtype);
    if ((unsigned)h->mode > H5ZGPU_MODE_PWREL)
        return hz_fail(H5ZGPU_E_CORRUPT, "chunk names error mode %u (0-2 exist)", h->mode);
    if (h->rank < 1 || h->rank > H5ZGPU_MAX_RANK)
        return hz_fail(H5ZGPU_E_CORRUPT, "chunk rank %u is outside 1..%d", h->rank,
                       H5ZGPU_MAX_RANK);
    h->flags = in[9];
    if ((h->flags & ~HZ_FLAG_FILL) != 0 || hz_get_u16(in + 10) != 0)
        return hz_fail(H5ZGPU_E_CORRUPT, "chunk header has reserved bits set");
    size_t hlen = hz_header_len(h->rank, h->flags);
    if (len < hlen || avail < hlen)
        return hz_fail(H5ZGPU_E_CORRUPT, "chunk of %zu bytes is shorter than its header (%zu)",
                       len, hlen);
    h->eb = hz_get_f64(in + 16);
    h->eb_abs = hz_get_f64(in + 24);
    h->payload_len = hz_get_u64(in + 32);
    for (unsigned i = 0; i < h->rank; i++)
        h->dims[i] = hz_get_u32(in + HZ_HDR_FIXED + 4 * i);
    if (h->flags & HZ_FLAG_FILL) {
        h->fill_bits = hz_get_u64(in + HZ_HDR_FIXED + 4 * h->rank);
        if (h->dtype == H5ZGPU_FLOAT32 && h->fill_bits > 0xFFFFFFFFu)
            return hz_fail(H5ZGPU_E_CORRUPT, "float32 chunk holds a fill value wider than 32 bits");
    }
    uint64_t n = hz_count(h->rank, h->dims);
    if (n == 0)
        return hz_fail(H5ZGPU_E_CORRUPT, "chunk shape is empty or too large");
    if (!(h->eb >= 0 && hz_is_finite(h->eb)) || !(h->eb_abs >= 0 && hz_is_finite(h->eb_abs)))
        return hz_fail(H5ZGPU_E_CORRUPT, "chunk header holds a negative or non-finite bound");
    if (h->payload_len != len - hlen)
        return hz_fail(H5ZGPU_E_CORRUPT,
                       "chunk is %zu bytes but its header says %llu (truncated or damaged)", len,
                       (unsigned long long)(hlen + h->payload_len));
    if (h->codec == HZ_CODEC_RAW && h->payload_len != n * hz_esize(h->dtype))
        return hz_fail(H5ZGPU_E_CORRUPT, "raw chunk holds %llu bytes, its shape needs %llu",
                       (unsigned long long)h->payload_len,
                       (unsigned long long)(n * hz_esize(h->dtype)));
    return H5ZGPU_OK;
}
