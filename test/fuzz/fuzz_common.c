#include "fuzz_common.h"

#include "util.h"

#include <string.h>

void fz_fix_checksum(uint8_t *chunk, size_t len, size_t hlen)
{
    if (hlen <= len && hlen >= FZ_OFF_CHECKSUM + 4)
        tu_fix_checksum_at(chunk, len, hlen);
}

/* Refused chunks are decoded into this many bytes. */
#define FZ_SMALL_OUT 64u

static const h5zgpu_exec cpu = {H5ZGPU_EXEC_CPU, 0};

void fz_decode_check(const uint8_t *chunk, size_t len)
{
    h5zgpu_info info;
    size_t got = 0;
    h5zgpu_status hs = h5zgpu_chunk_info(chunk, len, &info);
    /* exactly the size the header claims, so ASan sees any write past it; a chunk refused or
     * too large gets a small buffer it must not use */
    uint64_t cap = hs == H5ZGPU_OK && info.raw_len <= FZ_MAX_RAW ? info.raw_len : FZ_SMALL_OUT;
    uint8_t *out = malloc((size_t)cap);
    FZ_REQUIRE(out, "out of memory");
    h5zgpu_status st = h5zgpu_decompress(chunk, len, out, (size_t)cap, &got, &cpu);
    if (hs != H5ZGPU_OK) {
        FZ_REQUIRE(st != H5ZGPU_OK, "a chunk chunk_info refuses (%s) was decoded",
                   h5zgpu_status_string(hs));
    } else if (info.raw_len > FZ_MAX_RAW) {
        FZ_REQUIRE(st != H5ZGPU_OK, "%llu bytes were decoded into %llu",
                   (unsigned long long)info.raw_len, (unsigned long long)cap);
    } else if (st == H5ZGPU_OK) {
        FZ_REQUIRE(got == info.raw_len, "decoded %zu bytes, the header says %llu", got,
                   (unsigned long long)info.raw_len);
        FZ_REQUIRE(h5zgpu_decompress(chunk, len, out, (size_t)cap - 1, &got, &cpu) ==
                       H5ZGPU_E_OUTPUT_TOO_SMALL,
                   "an output buffer one byte short was accepted");
    }
    if (st != H5ZGPU_OK)
        FZ_REQUIRE(strlen(h5zgpu_last_error()) > 0, "a refusal (%s) without a message",
                   h5zgpu_status_string(st));
    free(out);
}

/* Each template: a codec, shape, element type, mode and bound, and the input pattern. Together
 * they give every payload kind the decoder reads. Fixed-length: coded blocks of each
 * dimensionality and predictor, sparse and plane blocks, raw blocks among coded ones, several
 * tiles, PWREL, a raw chunk, and fill bitmaps and all-fill blocks. Huffman: forms 0 and 1 (runs
 * of a delta, of escapes and of fill), Lorenzo orders 1 to 3, several sub-chunks, small radii,
 * outliers and verbatim values. */
static const struct {
    h5zgpu_codec codec;
    h5zgpu_dtype t;
    h5zgpu_mode mode;
    double eb;
    unsigned rank;
    uint64_t dims[4];
    tu_pattern pat;
    int has_fill; /* declare -1e34 the fill value and put it in runs over a third of the chunk */
    unsigned radius; /* Huffman: 0 for the default */
} templates[] = {
#define FX H5ZGPU_CODEC_FIXED
#define HF H5ZGPU_CODEC_HUFFMAN
    {FX, H5ZGPU_FLOAT32, H5ZGPU_MODE_ABS, 1e-3, 1, {300}, TU_SMOOTH, 0, 0},
    {FX, H5ZGPU_FLOAT64, H5ZGPU_MODE_REL, 1e-4, 2, {20, 30}, TU_SMOOTH, 0, 0},
    {FX, H5ZGPU_FLOAT32, H5ZGPU_MODE_PWREL, 1e-3, 3, {9, 10, 11}, TU_SMOOTH, 0, 0},
    {FX, H5ZGPU_FLOAT64, H5ZGPU_MODE_ABS, 1e-6, 4, {4, 5, 9, 11}, TU_SPECIAL, 0, 0},
    {FX, H5ZGPU_FLOAT32, H5ZGPU_MODE_ABS, 1e-2, 1, {2500}, TU_NOISE, 0, 0},
    {FX, H5ZGPU_FLOAT32, H5ZGPU_MODE_REL, 1e-2, 3, {4, 4, 4}, TU_CONSTANT, 0, 0},
    {FX, H5ZGPU_FLOAT64, H5ZGPU_MODE_PWREL, 1e-5, 2, {60, 70}, TU_SPECIAL, 0, 0},
    {FX, H5ZGPU_FLOAT32, H5ZGPU_MODE_ABS, 0, 1, {40}, TU_BITS, 0, 0},
    {FX, H5ZGPU_FLOAT32, H5ZGPU_MODE_REL, 1e-3, 2, {40, 50}, TU_SMOOTH, 1, 0},
    {FX, H5ZGPU_FLOAT64, H5ZGPU_MODE_ABS, 1e-4, 3, {12, 13, 14}, TU_SPECIAL, 1, 0},
    {HF, H5ZGPU_FLOAT32, H5ZGPU_MODE_ABS, 1e-3, 1, {5000}, TU_FIELD, 0, 0},
    {HF, H5ZGPU_FLOAT64, H5ZGPU_MODE_REL, 1e-3, 2, {40, 50}, TU_FIELD, 0, 0},
    {HF, H5ZGPU_FLOAT32, H5ZGPU_MODE_PWREL, 1e-3, 3, {9, 20, 21}, TU_FIELD, 0, 0},
    {HF, H5ZGPU_FLOAT64, H5ZGPU_MODE_ABS, 1e-4, 2, {40, 50}, TU_SPECIAL, 0, 0},
    {HF, H5ZGPU_FLOAT32, H5ZGPU_MODE_ABS, 1e-3, 1, {6000}, TU_CONSTANT, 0, 16},
    {HF, H5ZGPU_FLOAT32, H5ZGPU_MODE_REL, 1e-3, 3, {4, 10, 30}, TU_MASKED, 1, 16},
    {HF, H5ZGPU_FLOAT32, H5ZGPU_MODE_ABS, 1e-3, 2, {30, 40}, TU_SPIKY, 0, 8},
    {HF, H5ZGPU_FLOAT32, H5ZGPU_MODE_ABS, 1e-2, 3, {9, 10, 11}, TU_NOISE, 0, 0},
#undef FX
#undef HF
};
/* The fill value of the templates that declare one, and the runs it fills. */
#define FZ_FILL (-1e34)
#define FZ_FILL_RUN 37
#define FZ_NTEMPLATES (sizeof templates / sizeof templates[0])

static struct {
    uint8_t *chunk;
    size_t len, hlen;
} made[FZ_NTEMPLATES];

size_t fz_template_count(void)
{
    return FZ_NTEMPLATES;
}

const uint8_t *fz_template(size_t i, size_t *len, size_t *hlen)
{
    if (!made[i].chunk) {
        h5zgpu_params p = {.codec = templates[i].codec, .mode = templates[i].mode,
                           .eb = templates[i].eb, .dtype = templates[i].t,
                           .rank = templates[i].rank, .has_fill = templates[i].has_fill,
                           .radius = templates[i].radius};
        p.fill = p.dtype == H5ZGPU_FLOAT32 ? (double)(float)FZ_FILL : FZ_FILL;
        memcpy(p.dims, templates[i].dims, sizeof templates[i].dims);
        size_t n = (size_t)tu_count(&p), cap = h5zgpu_compress_bound(&p);
        void *in = malloc(n * tu_esize(p.dtype));
        uint8_t *chunk = malloc(cap);
        h5zgpu_info info;
        FZ_REQUIRE(in && chunk, "out of memory");
        tu_fill_shape(&p, templates[i].pat, i, in);
        for (size_t k = 0; p.has_fill && k < n; k++)
            if ((k / FZ_FILL_RUN) % 3 == 0) {
                if (p.dtype == H5ZGPU_FLOAT32)
                    ((float *)in)[k] = (float)p.fill;
                else
                    ((double *)in)[k] = p.fill;
            }
        FZ_REQUIRE(h5zgpu_compress(&p, in, chunk, cap, &made[i].len, &cpu) == H5ZGPU_OK &&
                       h5zgpu_chunk_info(chunk, made[i].len, &info) == H5ZGPU_OK,
                   "template %zu does not compress: %s", i, h5zgpu_last_error());
        /* a template that fell back to raw would leave its codec's decoder unfuzzed */
        FZ_REQUIRE(info.codec == (unsigned)p.codec || templates[i].pat == TU_BITS,
                   "template %zu was written with codec %u, not %u", i, info.codec,
                   (unsigned)p.codec);
        made[i].hlen = (size_t)info.header_len;
        made[i].chunk = chunk;
        free(in);
    }
    *len = made[i].len;
    *hlen = made[i].hlen;
    return made[i].chunk;
}
