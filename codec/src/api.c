/* The public API: parameter checks, and the runners that make a chunk's payloads on the CPU or
 * the GPU for the policy (policy.c) that writes every chunk; reading, with the same executor
 * choice and fallback. Codec internals live in fixed_cpu.c, huff_cpu.c and cuda/. */
#include "h5zgpu.h"

#include "cd_values.h"
#include "chunk.h"
#include "error.h"
#include "executor.h"
#include "fixed.h"
#include "huff.h"
#include "policy.h"
#include "ratio.h"
#ifdef H5ZGPU_HAVE_CUDA
#include "backend_gpu.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HZ_STR2(x) #x
#define HZ_STR(x) HZ_STR2(x)

const char *h5zgpu_version(void)
{
    return "h5zgpu " HZ_STR(H5ZGPU_VERSION_STRING) " (format " HZ_STR(H5ZGPU_FORMAT_VERSION)
#ifdef H5ZGPU_HAVE_CUDA
           ", CUDA)";
#else
           ", CPU only)";
#endif
}

void h5zgpu_eb_to_words(double eb, unsigned *lo, unsigned *hi)
{
    uint64_t u;
    memcpy(&u, &eb, 8);
    *lo = (unsigned)(u & 0xFFFFFFFFu);
    *hi = (unsigned)(u >> 32);
}

double h5zgpu_eb_from_words(unsigned lo, unsigned hi)
{
    uint64_t u = ((uint64_t)hi << 32) | (uint32_t)lo;
    double eb;
    memcpy(&eb, &u, 8);
    return eb;
}

h5zgpu_status h5zgpu_params_check(const h5zgpu_params *p)
{
    if (!p)
        return hz_fail(H5ZGPU_E_INVALID_ARG, "no parameters given");
    if ((unsigned)p->codec > H5ZGPU_CODEC_HUFFMAN)
        return hz_fail(H5ZGPU_E_INVALID_ARG,
                       "codec %u does not exist (0=auto, 1=fixed-length, 2=Huffman)",
                       (unsigned)p->codec);
    if (p->radius == 1 || p->radius > HF_RADIUS_MAX)
        return hz_fail(H5ZGPU_E_INVALID_ARG,
                       "Huffman radius %u is outside 2..%u (0 means the default, %u)", p->radius,
                       HF_RADIUS_MAX, HF_RADIUS_DEFAULT);
    if ((unsigned)p->mode > H5ZGPU_MODE_RATIO)
        return hz_fail(H5ZGPU_E_INVALID_ARG,
                       "error mode %u does not exist (0=ABS, 1=REL, 2=PWREL, 3=fixed ratio)",
                       (unsigned)p->mode);
    if (p->mode == H5ZGPU_MODE_RATIO && !(p->eb > 1 && p->eb <= HZ_RATIO_MAX))
        return hz_fail(H5ZGPU_E_INVALID_ARG, "target ratio %g is not above 1 and at most %g",
                       p->eb, HZ_RATIO_MAX);
    if (!(p->eb >= 0) || !hz_is_finite(p->eb))
        return hz_fail(H5ZGPU_E_INVALID_ARG,
                       "error bound %g is not a finite number >= 0 (0 means lossless)", p->eb);
    if (p->mode == H5ZGPU_MODE_PWREL && !(p->eb < 1))
        return hz_fail(H5ZGPU_E_INVALID_ARG,
                       "PWREL error bound %g must be below 1 (it is a fraction of |x|)", p->eb);
    if (p->dtype != H5ZGPU_FLOAT32 && p->dtype != H5ZGPU_FLOAT64)
        return hz_fail(H5ZGPU_E_UNSUPPORTED, "element type %u is not float32 (1) or float64 (2)",
                       (unsigned)p->dtype);
    if (p->rank < 1 || p->rank > H5ZGPU_MAX_RANK)
        return hz_fail(H5ZGPU_E_INVALID_ARG, "rank %u is outside 1..%d", p->rank,
                       H5ZGPU_MAX_RANK);
    for (unsigned i = 0; i < p->rank; i++)
        if (p->dims[i] == 0 || p->dims[i] > 0xFFFFFFFFu)
            return hz_fail(H5ZGPU_E_INVALID_ARG, "dimension %u is %llu (must be 1..2^32-1)", i,
                           (unsigned long long)p->dims[i]);
    if (hz_count(p->rank, p->dims) == 0)
        return hz_fail(H5ZGPU_E_INVALID_ARG, "chunk shape has too many elements");
    if (p->has_fill && p->dtype == H5ZGPU_FLOAT32 && hz_is_finite(p->fill) &&
        (double)(float)p->fill != p->fill)
        return hz_fail(H5ZGPU_E_INVALID_ARG,
                       "fill value %.17g is not a float32 value, and the elements are float32",
                       p->fill);
    return H5ZGPU_OK;
}

size_t h5zgpu_compress_bound(const h5zgpu_params *p)
{
    if (h5zgpu_params_check(p) != H5ZGPU_OK)
        return 0;
    /* any chunk may hold fill: the declared fill value, or NaN (qz_choose_fill) */
    return hz_header_len(p->rank, HZ_FLAG_FILL) + hz_count(p->rank, p->dims) * hz_esize(p->dtype);
}

h5zgpu_status h5zgpu_params_from_cd_values(size_t n, const unsigned *cd, h5zgpu_params *p,
                                           int *big_endian)
{
    char why[HZF_WHY_LEN];
    if (!cd || !p || !big_endian)
        return hz_fail(H5ZGPU_E_INVALID_ARG, "a pointer is NULL");
    if (hzf_parse(n, cd, p, big_endian, why, sizeof why) < 0)
        return hz_fail(H5ZGPU_E_INVALID_ARG, "%s", why);
    return H5ZGPU_OK;
}

/* ---- writing: the runners of hz_write_chunk ------------------------------------------------ */

/* A chunk in host memory, its payloads made on the GPU when t says so, else (or after a GPU
 * failure that allows it) on the CPU, whose quantiser is set up once for either codec. */
typedef struct host_run {
    hz_target t;
    const void *in;
    int stats_ready, quant_ready;   /* the statistics of stats_mode; the quantiser of p */
    h5zgpu_mode stats_mode;
    int any;
    double lo, hi;
    qz_census census;
    qz_quant Q;
    h5zgpu_mode quant_mode;   /* what Q was set up for (fixed ratio tries several bounds) */
    double quant_eb;
} host_run;

static const qz_quant *cpu_quant(host_run *h, const h5zgpu_params *p)
{
    const int is_f32 = p->dtype == H5ZGPU_FLOAT32;
    qz_quant F = {.is_f32 = is_f32, .has_fill = p->has_fill, .fill_bits = hz_fill_bits(p)};
    if (!h->stats_ready || h->stats_mode != p->mode) {
        qz_stats_cpu(h->in, hz_count(p->rank, p->dims), &F, p->mode, &h->any, &h->lo, &h->hi,
                     &h->census);
        h->stats_ready = 1;
        h->stats_mode = p->mode;
        h->quant_ready = 0;
    }
    if (!h->quant_ready || h->quant_mode != p->mode || h->quant_eb != p->eb) {
        qz_init(&h->Q, p->mode, p->eb, is_f32, h->any, h->lo, h->hi);
        h->Q.keep = hz_keeps_fine_codes(p);
        qz_choose_fill(&h->Q, F.has_fill, F.fill_bits, &h->census);
        h->quant_ready = 1;
        h->quant_mode = p->mode;
        h->quant_eb = p->eb;
    }
    return &h->Q;
}

#ifdef H5ZGPU_HAVE_CUDA
/* The backend's arguments for one encoding of p's chunk. */
static hzc_encode_args gpu_args(const h5zgpu_params *p, const void *in, int in_dev, uint8_t *out,
                                int out_dev, uint64_t shift, uint64_t cap, int device,
                                void *stream)
{
    hzc_encode_args a = {.mode = p->mode, .eb = p->eb, .is_f32 = p->dtype == H5ZGPU_FLOAT32,
                         .keep = hz_keeps_fine_codes(p), .radius = hf_radius(p->radius),
                         .has_fill = p->has_fill, .fill_bits = hz_fill_bits(p), .in = in,
                         .in_dev = in_dev, .out = out, .out_dev = out_dev, .fill_shift = shift,
                         .cap = cap, .device = device, .stream = stream};
    return a;
}
#endif

static h5zgpu_status host_encode(const hz_runner *r, unsigned codec, uint8_t *base,
                                 uint64_t shift, uint64_t cap, int keep, hz_payload *res)
{
    host_run *h = r->ctx;
    const h5zgpu_params *p = r->p;
    const int huff = codec == H5ZGPU_CODEC_HUFFMAN;
    fl_geom g;
    hf_geom hg;
    fl_geom_init(&g, p->rank, p->dims);
    if (huff && hf_geom_init(&hg, p->rank, p->dims) != 0)
        return H5ZGPU_E_OUTPUT_TOO_SMALL;   /* hz_write_chunk asks only where it fits */
    h5zgpu_status st;
#ifdef H5ZGPU_HAVE_CUDA
    if (h->t.gpu) {
        hzc_encode_args a = gpu_args(p, h->in, 0, base, 0, shift, cap, h->t.device, NULL);
        hzc_encode_result gr;
        st = huff ? hzc_huff_encode(&hg, &a, &gr) : hzc_fixed_encode(&g, &a, &gr);
        res->held_fill = gr.held_fill;
        res->fill_bits = gr.fill_bits;
        if (st == H5ZGPU_OK) {
            res->len = gr.len;
            res->eb_abs = gr.eb_abs;
            res->sum = gr.sum;
        }
        if (!hz_fall_back(&h->t, st))
            return st == H5ZGPU_E_DEVICE || st == H5ZGPU_OK || st == H5ZGPU_E_OUTPUT_TOO_SMALL
                       ? st
                       : hz_fail(H5ZGPU_E_DEVICE, "GPU compression failed: %s",
                                 h5zgpu_last_error());
    }
#endif
    const qz_quant *Q = cpu_quant(h, p);
    res->held_fill = Q->has_fill;
    res->fill_bits = Q->fill_bits;
    if (Q->has_fill)
        base += shift;
    /* a payload kept at base is replaced only by one that fits */
    uint8_t *dst = keep ? malloc(cap ? cap : 1) : base;
    if (!dst)
        return hz_fail(H5ZGPU_E_NOMEM, "out of host memory for a second encoding");
    st = huff ? hf_encode_cpu(&hg, Q, hf_radius(p->radius), h->in, dst, cap, &res->len)
              : fl_encode_cpu(&g, Q, h->in, dst, cap, &res->len);
    if (st == H5ZGPU_OK) {
        res->eb_abs = Q->eb;
        res->sum = hz_sum(dst, res->len);
        if (dst != base)
            memcpy(base, dst, res->len);
    }
    if (dst != base)
        free(dst);
    return st;
}

static h5zgpu_status host_store_raw(const hz_runner *r, uint8_t *dst, uint64_t raw,
                                    uint32_t *sum)
{
    const host_run *h = r->ctx;
    memcpy(dst, h->in, raw);
    *sum = hz_sum(dst, raw);
    return H5ZGPU_OK;
}

static h5zgpu_status host_put_header(const hz_runner *r, uint8_t *dst, const uint8_t *hdr,
                                     size_t len)
{
    (void)r;
    memcpy(dst, hdr, len);
    return H5ZGPU_OK;
}

h5zgpu_status h5zgpu_compress(const h5zgpu_params *p, const void *in, void *out,
                              size_t out_cap, size_t *out_len, const h5zgpu_exec *exec)
{
    h5zgpu_status st = h5zgpu_params_check(p);
    if (st != H5ZGPU_OK)
        return st;
    if (!in || !out || !out_len)
        return hz_fail(H5ZGPU_E_INVALID_ARG, "a buffer pointer is NULL");
    host_run h = {.in = in};
    if ((st = hz_resolve(exec, &h.t)) != H5ZGPU_OK)
        return st;
    hz_runner r = {.p = p, .encode = host_encode, .store_raw = host_store_raw,
                   .put_header = host_put_header, .ctx = &h};
    return hz_write_chunk(&r, (uint8_t *)out, out_cap, out_len);
}

/* ---- reading --------------------------------------------------------------------------------- */

/* Decodes the payload of a coded chunk (header h, whose bytes are hdr) on the GPU when t says
 * so (in and out device memory with dev), else on the CPU (after a GPU failure that allows it);
 * the checksum is checked either way. */
static h5zgpu_status decode_payload(const hz_target *t, const uint8_t *hdr, const hz_header *h,
                                    const uint8_t *pay, void *out, int dev, void *stream)
{
    const int huff = h->codec == H5ZGPU_CODEC_HUFFMAN;
    fl_geom g;
    hf_geom hg;
    fl_geom_init(&g, h->rank, h->dims);
    if (huff && hf_geom_init(&hg, h->rank, h->dims) != 0)
        return hz_fail(H5ZGPU_E_CORRUPT, "Huffman chunk of 2^32 elements or more");
    h5zgpu_status st = H5ZGPU_E_DEVICE;
#ifdef H5ZGPU_HAVE_CUDA
    if (t->gpu) {
        uint32_t sum;
        const hzc_decode_args a = {.h = h, .in = pay, .in_dev = dev, .out = out, .out_dev = dev,
                                   .device = t->device, .stream = stream};
        st = huff ? hzc_huff_decode(&hg, &a, &sum) : hzc_fixed_decode(&g, &a, &sum);
        if (st == H5ZGPU_OK)
            st = hz_check_sum(hdr, h, sum);
        if (!hz_fall_back(t, st))
            return st;
    }
#else
    (void)t, (void)stream;
#endif
    if (dev)
        return st;   /* device memory: no CPU path (t->required) */
    if ((st = hz_check_sum(hdr, h, hz_sum(pay, h->payload_len))) != H5ZGPU_OK)
        return st;
    qz_quant Q;
    qz_decoder(&Q, h->mode, h->eb_abs, h->dtype == H5ZGPU_FLOAT32, h->version);
    Q.has_fill = (h->flags & HZ_FLAG_FILL) != 0;
    Q.fill_bits = h->fill_bits;
    if (huff)
        return hf_decode_cpu(&hg, h->version, &Q, pay, h->payload_len, out);
    st = fl_decode_cpu(&g, &Q, pay, h->payload_len, out);
    if (st == H5ZGPU_E_CORRUPT)
        return hz_fail(st, "fixed-length payload is malformed (a length, code or offset is out of "
                           "range)");
    return st;
}

h5zgpu_status h5zgpu_decompress(const void *in, size_t in_len, void *out, size_t out_cap,
                                size_t *out_len, const h5zgpu_exec *exec)
{
    hz_header h;
    hz_target t;
    if (!in || !out || !out_len)
        return hz_fail(H5ZGPU_E_INVALID_ARG, "a buffer pointer is NULL");
    const uint8_t *c = (const uint8_t *)in;
    h5zgpu_status st = hz_header_read(c, in_len, &h);
    if (st != H5ZGPU_OK)
        return st;
    uint64_t raw = hz_count(h.rank, h.dims) * hz_esize(h.dtype);
    if (out_cap < raw)
        return hz_fail(H5ZGPU_E_OUTPUT_TOO_SMALL, "output buffer of %zu bytes, chunk needs %llu",
                       out_cap, (unsigned long long)raw);
    const uint8_t *pay = c + hz_header_len(h.rank, h.flags);
    if (h.codec == HZ_CODEC_RAW) {
        if ((st = hz_check_sum(c, &h, hz_sum(pay, h.payload_len))) != H5ZGPU_OK)
            return st;
        memcpy(out, pay, raw);
        *out_len = raw;
        return H5ZGPU_OK;
    }
    if ((st = hz_resolve(exec, &t)) != H5ZGPU_OK)
        return st;
    if ((st = decode_payload(&t, c, &h, pay, out, 0, NULL)) == H5ZGPU_OK)
        *out_len = raw;
    return st;
}

h5zgpu_status h5zgpu_chunk_info(const void *in, size_t in_len, h5zgpu_info *info)
{
    hz_header h;
    if (!in || !info)
        return hz_fail(H5ZGPU_E_INVALID_ARG, "a pointer is NULL");
    h5zgpu_status st = hz_header_read((const uint8_t *)in, in_len, &h);
    if (st != H5ZGPU_OK)
        return st;
    memset(info, 0, sizeof *info);
    info->format_version = h.version;
    info->codec = h.codec;
    info->dtype = h.dtype;
    info->mode = h.mode;
    info->eb = h.eb;
    info->eb_abs = h.eb_abs;
    info->rank = h.rank;
    memcpy(info->dims, h.dims, sizeof(uint64_t) * h.rank);
    info->has_fill = (h.flags & HZ_FLAG_FILL) != 0;
    if (info->has_fill) {
        if (h.dtype == H5ZGPU_FLOAT32) {
            uint32_t w = (uint32_t)h.fill_bits;
            float f;
            memcpy(&f, &w, 4);
            info->fill = f;
        } else {
            memcpy(&info->fill, &h.fill_bits, 8);
        }
    }
    info->header_len = hz_header_len(h.rank, h.flags);
    info->payload_len = h.payload_len;
    info->raw_len = hz_count(h.rank, h.dims) * hz_esize(h.dtype);
    return H5ZGPU_OK;
}

#ifdef H5ZGPU_HAVE_CUDA
/* ---- device memory ------------------------------------------------------------------------- */

/* A chunk in device memory, all on the GPU. */
typedef struct device_run {
    const void *d_in;
    int device;
    void *stream;
} device_run;

static h5zgpu_status device_encode(const hz_runner *r, unsigned codec, uint8_t *base,
                                   uint64_t shift, uint64_t cap, int keep, hz_payload *res)
{
    const device_run *d = r->ctx;
    const h5zgpu_params *p = r->p;
    (void)keep;   /* the backend copies a payload out only when it fits */
    fl_geom g;
    hf_geom hg;
    fl_geom_init(&g, p->rank, p->dims);
    if (codec == H5ZGPU_CODEC_HUFFMAN && hf_geom_init(&hg, p->rank, p->dims) != 0)
        return H5ZGPU_E_OUTPUT_TOO_SMALL;
    hzc_encode_args a = gpu_args(p, d->d_in, 1, base, 1, shift, cap, d->device, d->stream);
    hzc_encode_result gr;
    h5zgpu_status st = codec == H5ZGPU_CODEC_HUFFMAN ? hzc_huff_encode(&hg, &a, &gr)
                                                     : hzc_fixed_encode(&g, &a, &gr);
    res->held_fill = gr.held_fill;
    res->fill_bits = gr.fill_bits;
    if (st == H5ZGPU_OK) {
        res->len = gr.len;
        res->eb_abs = gr.eb_abs;
        res->sum = gr.sum;
    }
    return st;
}

static h5zgpu_status device_store_raw(const hz_runner *r, uint8_t *dst, uint64_t raw,
                                      uint32_t *sum)
{
    const device_run *d = r->ctx;
    h5zgpu_status st = hzc_copy(dst, 1, d->d_in, 1, raw, d->device, d->stream);
    return st == H5ZGPU_OK ? hzc_sum(dst, raw, sum, d->device, d->stream) : st;
}

static h5zgpu_status device_put_header(const hz_runner *r, uint8_t *dst, const uint8_t *hdr,
                                       size_t len)
{
    const device_run *d = r->ctx;
    return hzc_copy(dst, 1, hdr, 0, len, d->device, d->stream);
}

h5zgpu_status h5zgpu_compress_device(const h5zgpu_params *p, const void *d_in, void *d_out,
                                     size_t out_cap, size_t *out_len, int device, void *stream)
{
    h5zgpu_status st = h5zgpu_params_check(p);
    if (st != H5ZGPU_OK)
        return st;
    device_run d = {d_in, device, stream};
    hz_runner r = {.p = p, .encode = device_encode, .store_raw = device_store_raw,
                   .put_header = device_put_header, .ctx = &d};
    return hz_write_chunk(&r, (uint8_t *)d_out, out_cap, out_len);
}

h5zgpu_status h5zgpu_decompress_device(const void *d_in, size_t in_len, void *d_out,
                                       size_t out_cap, size_t *out_len, int device, void *stream)
{
    uint8_t hdr[HZ_HDR_MAX];
    hz_header h;
    h5zgpu_status st;
    if (in_len < HZ_HDR_FIXED)
        return hz_fail(H5ZGPU_E_CORRUPT, "chunk of %zu bytes is shorter than a header", in_len);
    if ((st = hzc_copy(hdr, 0, d_in, 1, HZ_HDR_FIXED, device, stream)) != H5ZGPU_OK)
        return st;
    unsigned rank = hdr[8] <= H5ZGPU_MAX_RANK ? hdr[8] : 0;
    size_t hlen = hz_header_len(rank, hdr[9]);
    if (in_len >= hlen && rank &&
        (st = hzc_copy(hdr, 0, d_in, 1, hlen, device, stream)) != H5ZGPU_OK)
        return st;
    if ((st = hz_header_parse(hdr, in_len >= hlen ? hlen : in_len, in_len, &h)) != H5ZGPU_OK)
        return st;
    uint64_t raw = hz_count(h.rank, h.dims) * hz_esize(h.dtype);
    if (out_cap < raw)
        return hz_fail(H5ZGPU_E_OUTPUT_TOO_SMALL, "output buffer of %zu bytes, chunk needs %llu",
                       out_cap, (unsigned long long)raw);
    const uint8_t *pay = (const uint8_t *)d_in + hlen;
    uint32_t sum = 0;
    if (h.codec == HZ_CODEC_RAW) {
        if ((st = hzc_sum(pay, raw, &sum, device, stream)) != H5ZGPU_OK ||
            (st = hz_check_sum(hdr, &h, sum)) != H5ZGPU_OK)
            return st;
        st = hzc_copy(d_out, 1, pay, 1, raw, device, stream);
    } else {
        const hz_target t = {.gpu = 1, .required = 1, .device = device};
        st = decode_payload(&t, hdr, &h, pay, d_out, 1, stream);
    }
    if (st == H5ZGPU_OK)
        *out_len = raw;
    return st;
}
#else
h5zgpu_status h5zgpu_compress_device(const h5zgpu_params *p, const void *d_in, void *d_out,
                                     size_t out_cap, size_t *out_len, int device, void *stream)
{
    (void)p, (void)d_in, (void)d_out, (void)out_cap, (void)out_len, (void)device, (void)stream;
    return hz_fail(H5ZGPU_E_UNSUPPORTED, "this h5zgpu was built without CUDA: no device pointers");
}

h5zgpu_status h5zgpu_decompress_device(const void *d_in, size_t in_len, void *d_out,
                                       size_t out_cap, size_t *out_len, int device, void *stream)
{
    (void)d_in, (void)in_len, (void)d_out, (void)out_cap, (void)out_len, (void)device,
        (void)stream;
    return hz_fail(H5ZGPU_E_UNSUPPORTED, "this h5zgpu was built without CUDA: no device pointers");
}
#endif
