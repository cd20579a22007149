/* libFuzzer target: fuzzer bytes -> parameters and a float array -> compress -> decompress ->
 * the value contract (test/property/contract.h) and the header's eb_abs; aborts on a violation.
 *
 * Input: byte 0 = element type (bit 0), mode (bits 1-2, mod 3), bound (bits 3-7: an index into
 * `bounds`, or past its end: the next 8 bytes are the bound's bits); byte 1 = rank - 1 (bits
 * 0-1), value form (bit 2: 0 = the bytes as they are, 1 = a random walk of signed bytes,
 * which the codec can predict), codec (bits 3-4: 0 fixed-length, 1 Huffman, 2 auto, 3 Huffman)
 * and the Huffman radius (bits 5-7: 0 the default, k: 2^k); then rank bytes of dimensions; the
 * rest are the values. */
#include "contract.h"
#include "fuzz_common.h"

#include "util.h"

#include <math.h>
#include <string.h>

static const double bounds[] = {0, 1e-15, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 0.1, 0.5, 1, 1e3, 1e30};
#define NBOUNDS (sizeof bounds / sizeof bounds[0])
/* Dimensions from one byte each: up to 64, so partial blocks and several tiles both occur. */
#define FZ_DIM_MOD 64u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const h5zgpu_exec cpu = {H5ZGPU_EXEC_CPU, 0};
    static const h5zgpu_codec codecs[] = {H5ZGPU_CODEC_FIXED, H5ZGPU_CODEC_HUFFMAN,
                                          H5ZGPU_CODEC_AUTO, H5ZGPU_CODEC_HUFFMAN};
    h5zgpu_params p = {.codec = H5ZGPU_CODEC_FIXED};
    size_t at = 2;
    if (size < at)
        return 0;
    p.dtype = data[0] & 1u ? H5ZGPU_FLOAT64 : H5ZGPU_FLOAT32;
    p.mode = (h5zgpu_mode)((data[0] >> 1 & 3u) % 3u);
    unsigned bi = data[0] >> 3;
    if (bi < NBOUNDS) {
        p.eb = bounds[bi];
    } else {
        if (size < at + 8)
            return 0;
        memcpy(&p.eb, data + at, 8);
        at += 8;
    }
    p.rank = (data[1] & 3u) + 1;
    int walk = data[1] >> 2 & 1u;
    p.codec = codecs[data[1] >> 3 & 3u];
    p.radius = data[1] >> 5 ? 1u << (data[1] >> 5) : 0;
    if (size < at + p.rank)
        return 0;
    size_t es = p.dtype == H5ZGPU_FLOAT32 ? 4 : 8, n = 1;
    for (unsigned i = 0; i < p.rank; i++, at++) {
        p.dims[i] = 1 + data[at] % FZ_DIM_MOD;
        n *= p.dims[i];
    }
    size_t avail = walk ? size - at : (size - at) / es;
    if (avail == 0)
        return 0;
    if (n > avail) { /* not enough values for that shape: use what there is, 1-D */
        p.rank = 1;
        p.dims[0] = n = avail;
    }
    if (h5zgpu_params_check(&p) != H5ZGPU_OK)
        return 0; /* an invalid bound from raw bits: refused, as codec_corrupt tests */

    void *in = malloc(n * es), *out = malloc(n * es);
    size_t cap = h5zgpu_compress_bound(&p), len = 0, got = 0;
    uint8_t *chunk = malloc(cap);
    FZ_REQUIRE(in && out && chunk, "out of memory");
    if (walk) {
        double v = 0, step = p.eb > 0 && p.eb < 1e6 ? p.eb : 1e-3;
        for (size_t i = 0; i < n; i++) {
            v += (double)(int8_t)data[at + i] * step;
            tu_put(p.dtype, in, i, v);
        }
    } else {
        memcpy(in, data + at, n * es);
    }

    h5zgpu_status st = h5zgpu_compress(&p, in, chunk, cap, &len, &cpu);
    FZ_REQUIRE(st == H5ZGPU_OK && len <= cap, "compress -> %s: %s", h5zgpu_status_string(st),
               h5zgpu_last_error());
    h5zgpu_info info;
    hc_range r = hc_finite_range(&p, in, n);
    FZ_REQUIRE(h5zgpu_chunk_info(chunk, len, &info) == H5ZGPU_OK &&
                   info.eb_abs == hc_expected_eb_abs(&p, info.codec, &r) && info.eb == p.eb,
               "header: eb %.17g eb_abs %.17g, want %.17g", info.eb, info.eb_abs,
               hc_expected_eb_abs(&p, info.codec, &r));
    st = h5zgpu_decompress(chunk, len, out, n * es, &got, &cpu);
    FZ_REQUIRE(st == H5ZGPU_OK && got == n * es, "decompress -> %s: %s",
               h5zgpu_status_string(st), h5zgpu_last_error());
    char why[256];
    uint64_t bad = hc_check_values(&p, in, out, n, &r, why, sizeof why);
    FZ_REQUIRE(bad == 0,
               "%llu values break the bound (codec %u, radius %u, mode %u, eb %.17g, %s, %zu "
               "values); %s",
               (unsigned long long)bad, (unsigned)p.codec, p.radius, (unsigned)p.mode, p.eb,
               p.dtype == H5ZGPU_FLOAT32 ? "f32" : "f64", n, why);
    free(in);
    free(out);
    free(chunk);
    return 0;
}
