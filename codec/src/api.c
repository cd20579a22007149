/* The public API: parameter checks, executor choice with CPU fallback, raw fallback, the
 * chunk header and its checksum. Codec internals live in fixed_cpu.c, huff_cpu.c and cuda/. */
#include "h5zgpu.h"

#include "chunk.h"
#include "error.h"
#include "fixed.h"
#include "huff.h"
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
    if ((unsigned)p->mode > H5ZGPU_MODE_PWREL)
        return hz_fail(H5ZGPU_E_INVALID_ARG, "error mode %u does not exist (0=ABS, 1=REL, 2=PWREL)",
                       (unsigned)p->mode);
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
    return hz_header_len(p->rank, p->has_fill ? HZ_FLAG_FILL : 0) +
           hz_count(p->rank, p->dims) * hz_esize(p->dtype);
}

/* The fill value's bits in the element type. */
static uint64_t fill_bits(const h5zgpu_params *p)
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

/* Where a call runs. */
typedef struct hz_target {
    int gpu;       /* run on the GPU */
    int required;  /* no CPU fallback: H5ZGPU_DEVICE=gpu */
    int device;
} hz_target;

static h5zgpu_status parse_env(h5zgpu_exec *ex)
{
    const char *v = getenv("H5ZGPU_DEVICE");
    ex->kind = H5ZGPU_EXEC_AUTO;
    ex->device = 0;
    if (!v || !*v || strcmp(v, "auto") == 0)
        return H5ZGPU_OK;
    if (strcmp(v, "cpu") == 0) {
        ex->kind = H5ZGPU_EXEC_CPU;
        return H5ZGPU_OK;
    }
    if (strncmp(v, "gpu", 3) == 0) {
        ex->kind = H5ZGPU_EXEC_GPU;
        if (v[3] == 0)
            return H5ZGPU_OK;
        char *end;
        long d = v[3] == ':' ? strtol(v + 4, &end, 10) : -1;
        if (v[3] == ':' && end != v + 4 && *end == 0 && d >= 0 && d < 1024) {
            ex->device = (int)d;
            return H5ZGPU_OK;
        }
    }
    return hz_fail(H5ZGPU_E_INVALID_ARG, "H5ZGPU_DEVICE='%s' is not auto, cpu, gpu or gpu:N", v);
}

int h5zgpu_gpu_available(void)
{
#ifdef H5ZGPU_HAVE_CUDA
    return hzc_device_count() > 0;
#else
    return 0;
#endif
}

static h5zgpu_status resolve(const h5zgpu_exec *given, hz_target *t)
{
    h5zgpu_exec ex;
    if (given) {
        if ((unsigned)given->kind > H5ZGPU_EXEC_GPU || given->device < 0)
            return hz_fail(H5ZGPU_E_INVALID_ARG,
                           "executor kind %u, device %d: the kind must be 0 (auto), 1 (CPU) or "
                           "2 (GPU) and the device a CUDA ordinal >= 0",
                           (unsigned)given->kind, given->device);
        ex = *given;
    } else {
        h5zgpu_status st = parse_env(&ex);
        if (st != H5ZGPU_OK)
            return st;
    }
    int count = 0;
#ifdef H5ZGPU_HAVE_CUDA
    if (ex.kind != H5ZGPU_EXEC_CPU)
        count = hzc_device_count();
#endif
    t->device = ex.device;
    t->required = ex.kind == H5ZGPU_EXEC_GPU;
    t->gpu = ex.kind != H5ZGPU_EXEC_CPU && ex.device < count;
    if (t->required && !t->gpu)
        return hz_fail(H5ZGPU_E_DEVICE, "the GPU was required (%s) but CUDA device "
#ifdef H5ZGPU_HAVE_CUDA
                       "%d is not usable (%d found)",
#else
                       "%d cannot be used: this build has no CUDA (%d)",
#endif
                       given ? "h5zgpu_exec kind GPU" : "H5ZGPU_DEVICE=gpu", ex.device, count);
    if (ex.kind == H5ZGPU_EXEC_AUTO && !t->gpu)
        hz_note_once(0, "no usable GPU: compressing on the CPU");
    return H5ZGPU_OK;
}

h5zgpu_status h5zgpu_exec_check(const h5zgpu_exec *exec)
{
    hz_target t;
    return resolve(exec, &t);
}

#ifdef H5ZGPU_HAVE_CUDA
/* A GPU failure is either final (GPU required) or a reason to redo the work on the CPU. */
static int fall_back(const hz_target *t, h5zgpu_status st)
{
    if (st == H5ZGPU_OK || st == H5ZGPU_E_OUTPUT_TOO_SMALL || st == H5ZGPU_E_CORRUPT ||
        t->required)
        return 0;
    hz_note_once(1, "GPU path failed (%s: %s); using the CPU", h5zgpu_status_string(st),
                 h5zgpu_last_error());
    return 1;
}
#endif

/* Whether chunks of these parameters may hold the interpolation's values, which lie on a grid
 * finer than the codes': a rewritten chunk must then give such values back as they are. */
static int keeps_fine_codes(const h5zgpu_params *p)
{
    return p->codec != H5ZGPU_CODEC_FIXED;
}

/* The quantiser from the chunk's statistics on the CPU, computed once for either codec. */
typedef struct hz_cpu_quant {
    int ready;
    qz_quant Q;
} hz_cpu_quant;

static const qz_quant *cpu_quant(hz_cpu_quant *c, const h5zgpu_params *p, const void *in)
{
    if (!c->ready) {
        int is_f32 = p->dtype == H5ZGPU_FLOAT32, any;
        double lo, hi;
        qz_quant F = {.is_f32 = is_f32, .has_fill = p->has_fill, .fill_bits = fill_bits(p)};
        qz_stats_cpu(in, hz_count(p->rank, p->dims), &F, p->mode, &any, &lo, &hi);
        qz_init(&c->Q, p->mode, p->eb, is_f32, any, lo, hi);
        c->Q.keep = keeps_fine_codes(p);
        c->Q.has_fill = F.has_fill;
        c->Q.fill_bits = F.fill_bits;
        c->ready = 1;
    }
    return &c->Q;
}

/* The payload of one codec (fixed-length or Huffman): on the GPU when t says so, else (or
 * after a GPU failure that allows it) on the CPU. */
static h5zgpu_status encode_one(const hz_target *t, unsigned codec, const fl_geom *g,
                                const hf_geom *hg, const h5zgpu_params *p, hz_cpu_quant *cq,
                                const void *in, uint8_t *out, uint64_t cap, uint64_t *len,
                                double *eb_abs, uint32_t *sum)
{
    const int huff = codec == H5ZGPU_CODEC_HUFFMAN;
    h5zgpu_status st;
#ifdef H5ZGPU_HAVE_CUDA
    if (t->gpu) {
        int held; /* equals p->has_fill: the caller left it set only when some element is fill */
        int is_f32 = p->dtype == H5ZGPU_FLOAT32;
        st = huff ? hzc_huff_encode(hg, p->mode, p->eb, is_f32, keeps_fine_codes(p),
                                    hf_radius(p->radius), p->has_fill, fill_bits(p), in, 0, out, 0,
                                    0, cap, len, eb_abs, sum, &held, t->device, NULL)
                  : hzc_fixed_encode(g, p->mode, p->eb, is_f32, keeps_fine_codes(p), p->has_fill,
                                     fill_bits(p), in, 0, out, 0, 0, cap, len, eb_abs, sum, &held,
                                     t->device, NULL);
        if (!fall_back(t, st))
            return st == H5ZGPU_E_DEVICE || st == H5ZGPU_OK || st == H5ZGPU_E_OUTPUT_TOO_SMALL
                       ? st
                       : hz_fail(H5ZGPU_E_DEVICE, "GPU compression failed: %s",
                                 h5zgpu_last_error());
    }
#else
    (void)t;
#endif
    const qz_quant *Q = cpu_quant(cq, p, in);
    st = huff ? hf_encode_cpu(hg, Q, hf_radius(p->radius), in, out, cap, len)
              : fl_encode_cpu(g, Q, in, out, cap, len);
    if (st == H5ZGPU_OK) {
        *eb_abs = Q->eb;
        *sum = hz_sum(out, *len);
    }
    return st;
}

/* The payload of the codec asked for; auto keeps the smaller of the two (the fixed-length one
 * on a tie). *codec says which wrote it. Chunks of 2^32 elements or more, whose positions the
 * Huffman payload cannot hold, go to the fixed-length codec. */
static h5zgpu_status encode(const hz_target *t, const h5zgpu_params *p, const void *in,
                            uint8_t *out, uint64_t cap, unsigned *codec, uint64_t *len,
                            double *eb_abs, uint32_t *sum)
{
    fl_geom fg;
    hf_geom hg;
    hz_cpu_quant cq = {0};
    fl_geom_init(&fg, p->rank, p->dims);
    int huff_ok = hf_geom_init(&hg, p->rank, p->dims) == 0;
    int want_fixed = p->codec != H5ZGPU_CODEC_HUFFMAN || !huff_ok;
    int want_huff = p->codec != H5ZGPU_CODEC_FIXED && huff_ok;
    h5zgpu_status st = H5ZGPU_E_OUTPUT_TOO_SMALL;
    *codec = H5ZGPU_CODEC_FIXED;
    if (want_fixed)
        st = encode_one(t, H5ZGPU_CODEC_FIXED, &fg, &hg, p, &cq, in, out, cap, len, eb_abs, sum);
    if (!want_huff || (st != H5ZGPU_OK && st != H5ZGPU_E_OUTPUT_TOO_SMALL))
        return st;
    uint64_t hcap = st == H5ZGPU_OK ? *len : cap; /* auto: Huffman must be strictly smaller */
    uint8_t *hout = want_fixed ? malloc(hcap ? hcap : 1) : out;
    if (!hout)
        return hz_fail(H5ZGPU_E_NOMEM, "out of host memory for a second encoding");
    uint64_t hlen;
    double heb;
    uint32_t hsum;
    h5zgpu_status hst = hcap ? encode_one(t, H5ZGPU_CODEC_HUFFMAN, &fg, &hg, p, &cq, in, hout,
                                          hcap - (want_fixed ? 1 : 0), &hlen, &heb, &hsum)
                             : H5ZGPU_E_OUTPUT_TOO_SMALL;
    if (hst == H5ZGPU_OK) {
        if (hout != out)
            memcpy(out, hout, hlen);
        *codec = H5ZGPU_CODEC_HUFFMAN;
        *len = hlen;
        *eb_abs = heb;
        *sum = hsum;
        st = H5ZGPU_OK;
    } else if (hst != H5ZGPU_E_OUTPUT_TOO_SMALL) {
        st = hst;
    }
    if (hout != out)
        free(hout);
    return st;
}

/* Whether any element's bits equal the fill value's. */
static int holds_fill(const h5zgpu_params *p, const void *in)
{
    uint64_t n = hz_count(p->rank, p->dims), bits = fill_bits(p);
    if (p->dtype == H5ZGPU_FLOAT32) {
        const uint32_t *w = (const uint32_t *)in;
        for (uint64_t i = 0; i < n; i++)
            if (w[i] == (uint32_t)bits)
                return 1;
    } else {
        const uint64_t *w = (const uint64_t *)in;
        for (uint64_t i = 0; i < n; i++)
            if (w[i] == bits)
                return 1;
    }
    return 0;
}

h5zgpu_status h5zgpu_compress(const h5zgpu_params *given, const void *in, void *out,
                              size_t out_cap, size_t *out_len, const h5zgpu_exec *exec)
{
    hz_target t;
    h5zgpu_status st = h5zgpu_params_check(given);
    if (st != H5ZGPU_OK)
        return st;
    if (!in || !out || !out_len)
        return hz_fail(H5ZGPU_E_INVALID_ARG, "a buffer pointer is NULL");
    /* a chunk without fill elements is written as if there were no fill value (FORMAT.md) */
    h5zgpu_params own = *given;
    const h5zgpu_params *p = &own;
    own.has_fill = given->has_fill && holds_fill(given, in);
    unsigned flags = p->has_fill ? HZ_FLAG_FILL : 0u;
    size_t hlen = hz_header_len(p->rank, flags);
    uint64_t raw = hz_count(p->rank, p->dims) * hz_esize(p->dtype);
    if (out_cap < hlen + raw)
        return hz_fail(H5ZGPU_E_OUTPUT_TOO_SMALL,
                       "output buffer of %zu bytes is below h5zgpu_compress_bound (%llu)",
                       out_cap, (unsigned long long)(hlen + raw));
    if ((st = resolve(exec, &t)) != H5ZGPU_OK)
        return st;

    hz_header h = {.version = HZ_VERSION_GRID, .codec = H5ZGPU_CODEC_FIXED, .rank = p->rank,
                   .flags = flags, .fill_bits = p->has_fill ? fill_bits(p) : 0,
                   .dtype = p->dtype, .mode = p->mode, .eb = p->eb};
    memcpy(h.dims, p->dims, sizeof(uint64_t) * p->rank);
    uint8_t *pay = (uint8_t *)out + hlen;
    uint32_t sum = 0;
    st = encode(&t, p, in, pay, raw, &h.codec, &h.payload_len, &h.eb_abs, &sum);
    /* did not shrink, or REL's range overflowed (float64 values near both -max and +max: every
     * block is raw, and a bound of inf could not be read back): stored as it came, behind the
     * same header */
    if (st == H5ZGPU_E_OUTPUT_TOO_SMALL ||
        (st == H5ZGPU_OK && (h.payload_len >= raw || !hz_is_finite(h.eb_abs)))) {
        h.codec = HZ_CODEC_RAW;
        h.version = 1;
        h.eb_abs = 0;
        h.payload_len = raw;
        memcpy(pay, in, raw);
        sum = hz_sum(pay, raw);
    } else if (st != H5ZGPU_OK) {
        return st;
    }
    hz_header_write((uint8_t *)out, &h, sum);
    *out_len = hlen + h.payload_len;
    return H5ZGPU_OK;
}

static h5zgpu_status check_sum(const uint8_t *in, const hz_header *h, uint32_t sum)
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

static void quant_for_decode(qz_quant *Q, const hz_header *h)
{
    qz_decoder(Q, h->mode, h->eb_abs, h->dtype == H5ZGPU_FLOAT32, h->version);
    Q->has_fill = (h->flags & HZ_FLAG_FILL) != 0;
    Q->fill_bits = h->fill_bits;
}

/* A fixed-length or Huffman payload into the chunk's elements: on the GPU when t says so, else
 * (or after a GPU failure that allows it) on the CPU; the checksum is checked either way. */
static h5zgpu_status decode_payload(const hz_target *t, const uint8_t *c, const hz_header *h,
                                    const uint8_t *pay, void *out)
{
    const int huff = h->codec == H5ZGPU_CODEC_HUFFMAN;
    fl_geom g;
    hf_geom hg;
    fl_geom_init(&g, h->rank, h->dims);
    if (huff && hf_geom_init(&hg, h->rank, h->dims) != 0)
        return hz_fail(H5ZGPU_E_CORRUPT, "Huffman chunk of 2^32 elements or more");
    h5zgpu_status st;
#ifdef H5ZGPU_HAVE_CUDA
    if (t->gpu) {
        uint32_t sum;
        int is_f32 = h->dtype == H5ZGPU_FLOAT32, has_fill = (h->flags & HZ_FLAG_FILL) != 0;
        st = huff ? hzc_huff_decode(&hg, h->version, h->mode, h->eb_abs, is_f32, has_fill,
                                    h->fill_bits, pay, 0, h->payload_len, out, 0, &sum,
                                    t->device, NULL)
                  : hzc_fixed_decode(&g, h->version, h->mode, h->eb_abs, is_f32, has_fill,
                                     h->fill_bits, pay,
                                     0, h->payload_len, out, 0, &sum, t->device, NULL);
        if (st == H5ZGPU_OK)
            st = check_sum(c, h, sum);
        if (!fall_back(t, st))
            return st;
    }
#else
    (void)t;
#endif
    if ((st = check_sum(c, h, hz_sum(pay, h->payload_len))) != H5ZGPU_OK)
        return st;
    qz_quant Q;
    quant_for_decode(&Q, h);
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
        if ((st = check_sum(c, &h, hz_sum(pay, h.payload_len))) != H5ZGPU_OK)
            return st;
        memcpy(out, pay, raw);
        *out_len = raw;
        return H5ZGPU_OK;
    }
    if ((st = resolve(exec, &t)) != H5ZGPU_OK)
        return st;
    if ((st = decode_payload(&t, c, &h, pay, out)) == H5ZGPU_OK)
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

h5zgpu_status h5zgpu_compress_batch(const h5zgpu_params *p, size_t count, const void *const *in,
                                    void *const *out, const size_t *out_cap, size_t *out_len,
                                    const h5zgpu_exec *exec, size_t *done)
{
    size_t i = 0;
    h5zgpu_status st = H5ZGPU_OK;
    for (; i < count && st == H5ZGPU_OK; i++)
        st = h5zgpu_compress(p, in[i], out[i], out_cap[i], &out_len[i], exec);
    if (done)
        *done = st == H5ZGPU_OK ? i : i - 1;
    return st;
}

h5zgpu_status h5zgpu_decompress_batch(size_t count, const void *const *in, const size_t *in_len,
                                      void *const *out, const size_t *out_cap, size_t *out_len,
                                      const h5zgpu_exec *exec, size_t *done)
{
    size_t i = 0;
    h5zgpu_status st = H5ZGPU_OK;
    for (; i < count && st == H5ZGPU_OK; i++)
        st = h5zgpu_decompress(in[i], in_len[i], out[i], out_cap[i], &out_len[i], exec);
    if (done)
        *done = st == H5ZGPU_OK ? i : i - 1;
    return st;
}

#ifdef H5ZGPU_HAVE_CUDA
h5zgpu_status h5zgpu_compress_device(const h5zgpu_params *p, const void *d_in, void *d_out,
                                     size_t out_cap, size_t *out_len, int device, void *stream)
{
    fl_geom g;
    hf_geom hg;
    h5zgpu_status st = h5zgpu_params_check(p);
    if (st != H5ZGPU_OK)
        return st;
    /* whether the chunk holds fill elements, and so the header's length, is known only once
     * the GPU has looked: the payload goes after the shorter header or, with fill, the longer */
    size_t hlen = hz_header_len(p->rank, 0), bound = h5zgpu_compress_bound(p);
    uint64_t raw = hz_count(p->rank, p->dims) * hz_esize(p->dtype);
    if (out_cap < bound)
        return hz_fail(H5ZGPU_E_OUTPUT_TOO_SMALL,
                       "output buffer of %zu bytes is below h5zgpu_compress_bound (%zu)",
                       out_cap, bound);
    fl_geom_init(&g, p->rank, p->dims);
    /* the codec choice of encode() */
    int huff_ok = hf_geom_init(&hg, p->rank, p->dims) == 0;
    int want_fixed = p->codec != H5ZGPU_CODEC_HUFFMAN || !huff_ok;
    int want_huff = p->codec != H5ZGPU_CODEC_FIXED && huff_ok;
    hz_header h = {.version = HZ_VERSION_GRID, .codec = H5ZGPU_CODEC_FIXED, .rank = p->rank,
                   .dtype = p->dtype, .mode = p->mode, .eb = p->eb};
    memcpy(h.dims, p->dims, sizeof(uint64_t) * p->rank);
    uint32_t sum = 0;
    int held = 0;
    uint8_t *pay0 = (uint8_t *)d_out + hlen;
    uint64_t fill_shift = hz_header_len(p->rank, HZ_FLAG_FILL) - hlen;
    st = H5ZGPU_E_OUTPUT_TOO_SMALL;
    if (want_fixed)
        st = hzc_fixed_encode(&g, p->mode, p->eb, p->dtype == H5ZGPU_FLOAT32, keeps_fine_codes(p),
                              p->has_fill, fill_bits(p), d_in, 1, pay0, 1, fill_shift, raw,
                              &h.payload_len, &h.eb_abs, &sum, &held, device, stream);
    if (want_huff && (st == H5ZGPU_OK || st == H5ZGPU_E_OUTPUT_TOO_SMALL)) {
        /* auto: Huffman must be strictly smaller; when it does not fit, the backend leaves the
         * fixed-length payload in place */
        uint64_t hcap = (st == H5ZGPU_OK ? h.payload_len : raw) - (want_fixed ? 1 : 0);
        uint64_t hplen;
        double heb;
        uint32_t hsum;
        h5zgpu_status hst =
            hcap ? hzc_huff_encode(&hg, p->mode, p->eb, p->dtype == H5ZGPU_FLOAT32,
                                   keeps_fine_codes(p), hf_radius(p->radius), p->has_fill,
                                   fill_bits(p), d_in, 1, pay0, 1, fill_shift, hcap, &hplen, &heb,
                                   &hsum, &held, device, stream)
                 : H5ZGPU_E_OUTPUT_TOO_SMALL;
        if (hst == H5ZGPU_OK) {
            h.codec = H5ZGPU_CODEC_HUFFMAN;
            h.payload_len = hplen;
            h.eb_abs = heb;
            sum = hsum;
            st = H5ZGPU_OK;
        } else if (hst != H5ZGPU_E_OUTPUT_TOO_SMALL) {
            st = hst;
        }
    }
    if (held) {
        h.flags = HZ_FLAG_FILL;
        h.fill_bits = fill_bits(p);
        hlen = hz_header_len(p->rank, h.flags);
    }
    uint8_t *pay = (uint8_t *)d_out + hlen;
    if (st == H5ZGPU_E_OUTPUT_TOO_SMALL ||
        (st == H5ZGPU_OK && (h.payload_len >= raw || !hz_is_finite(h.eb_abs)))) {
        h.codec = HZ_CODEC_RAW;
        h.version = 1;
        h.eb_abs = 0;
        h.payload_len = raw;
        st = hzc_copy(pay, 1, d_in, 1, raw, device, stream);
        if (st == H5ZGPU_OK)
            st = hzc_sum(pay, raw, &sum, device, stream);
    }
    if (st != H5ZGPU_OK)
        return st;
    uint8_t hdr[HZ_HDR_MAX];
    hz_header_write(hdr, &h, sum);
    if ((st = hzc_copy(d_out, 1, hdr, 0, hlen, device, stream)) != H5ZGPU_OK)
        return st;
    *out_len = hlen + h.payload_len;
    return H5ZGPU_OK;
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
            (st = check_sum(hdr, &h, sum)) != H5ZGPU_OK)
            return st;
        st = hzc_copy(d_out, 1, pay, 1, raw, device, stream);
    } else if (h.codec == H5ZGPU_CODEC_FIXED) {
        fl_geom g;
        fl_geom_init(&g, h.rank, h.dims);
        st = hzc_fixed_decode(&g, h.version, h.mode, h.eb_abs, h.dtype == H5ZGPU_FLOAT32,
                              (h.flags & HZ_FLAG_FILL) != 0, h.fill_bits, pay, 1, h.payload_len,
                              d_out, 1, &sum, device, stream);
        if (st == H5ZGPU_OK)
            st = check_sum(hdr, &h, sum);
    } else if (h.codec == H5ZGPU_CODEC_HUFFMAN) {
        hf_geom hg;
        st = hf_geom_init(&hg, h.rank, h.dims) != 0
                 ? hz_fail(H5ZGPU_E_CORRUPT, "Huffman chunk of 2^32 elements or more")
                 : hzc_huff_decode(&hg, h.version, h.mode, h.eb_abs, h.dtype == H5ZGPU_FLOAT32,
                                   (h.flags & HZ_FLAG_FILL) != 0, h.fill_bits, pay, 1,
                                   h.payload_len, d_out, 1, &sum, device, stream);
        if (st == H5ZGPU_OK)
            st = check_sum(hdr, &h, sum);
    } else {
        st = hz_fail(H5ZGPU_E_UNSUPPORTED, "chunk codec %u is not in this build", h.codec);
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
