/* h5zgpu_compress_batch and h5zgpu_decompress_batch against one call a chunk: the same bytes and
 * values for every codec and mode, chunks of different contents (smooth, noise, fill, constant)
 * in one batch, on the executor H5ZGPU_DEVICE picks (with a GPU, several chunks in flight at
 * once; the odd chunks' values in h5zgpu_alloc_host memory, which the GPU path copies
 * straight to and from); and a failing chunk (an output too small, a damaged chunk) reported
 * in chunk order with its index and *done. */
#include "util.h"

#include <stdlib.h>
#include <string.h>

#define NCHUNKS 13
#define NZ 17
#define NY 24
#define NX 40

static const tu_pattern patterns[] = {TU_FIELD, TU_NOISE, TU_MASKED, TU_CONSTANT, TU_SPIKY};

static void one(h5zgpu_codec codec, h5zgpu_mode mode, h5zgpu_dtype t)
{
    h5zgpu_params p = {.codec = codec, .mode = mode, .eb = mode == H5ZGPU_MODE_PWREL ? 1e-3 : 1e-2,
                       .dtype = t, .rank = 3, .dims = {NZ, NY, NX}, .has_fill = 1,
                       .fill = t == H5ZGPU_FLOAT32 ? (double)(float)-1e34 : -1e34};
    const size_t raw = tu_count(&p) * tu_esize(t), cap = h5zgpu_compress_bound(&p);
    void *in[NCHUNKS], *out[NCHUNKS], *back[NCHUNKS];
    size_t out_cap[NCHUNKS], out_len[NCHUNKS], back_cap[NCHUNKS], back_len[NCHUNKS], done = 99;
    char label[96];
    snprintf(label, sizeof label, "codec %u mode %u %s", codec, mode,
             t == H5ZGPU_FLOAT32 ? "f32" : "f64");
    for (size_t i = 0; i < NCHUNKS; i++) {
        in[i] = i % 2 ? h5zgpu_alloc_host(raw) : malloc(raw);
        out[i] = malloc(cap);
        back[i] = i % 2 ? h5zgpu_alloc_host(raw) : malloc(raw);
        out_cap[i] = cap;
        back_cap[i] = raw;
        tu_fill_shape(&p, patterns[i % (sizeof patterns / sizeof patterns[0])], i, in[i]);
    }
    h5zgpu_status st = h5zgpu_compress_batch(&p, NCHUNKS, (const void *const *)in, out, out_cap,
                                             out_len, NULL, &done);
    tu_expect(st == H5ZGPU_OK && done == NCHUNKS, "%s: batch compression: %s (%zu done)", label,
              h5zgpu_last_error(), done);
    uint8_t *one_chunk = malloc(cap);
    for (size_t i = 0; st == H5ZGPU_OK && i < NCHUNKS; i++) {
        size_t len = 0;
        h5zgpu_status s1 = h5zgpu_compress(&p, in[i], one_chunk, cap, &len, NULL);
        tu_expect(s1 == H5ZGPU_OK && len == out_len[i] && memcmp(one_chunk, out[i], len) == 0,
                  "%s: chunk %zu of the batch differs from its single call", label, i);
    }
    st = h5zgpu_decompress_batch(NCHUNKS, (const void *const *)out, out_len, back, back_cap,
                                 back_len, NULL, &done);
    tu_expect(st == H5ZGPU_OK && done == NCHUNKS, "%s: batch decompression: %s", label,
              h5zgpu_last_error());
    for (size_t i = 0; st == H5ZGPU_OK && i < NCHUNKS; i++) {
        char why[256];
        tu_expect(back_len[i] == raw && tu_check_bound(t, mode, p.eb, in[i], back[i],
                                                       tu_count(&p), why, sizeof why) == 0,
                  "%s: chunk %zu decoded out of bound: %s", label, i, why);
    }
    /* chunk 5 damaged: its decompression is the first failure, the chunks before it done */
    ((uint8_t *)out[5])[out_len[5] - 1] ^= 0x5A;
    st = h5zgpu_decompress_batch(NCHUNKS, (const void *const *)out, out_len, back, back_cap,
                                 back_len, NULL, &done);
    tu_expect(st == H5ZGPU_E_CORRUPT && done == 5 &&
                  strstr(h5zgpu_last_error(), "chunk 5 of the batch") != NULL,
              "%s: a batch with chunk 5 damaged gave %s, %zu done, '%s'", label,
              h5zgpu_status_string(st), done, h5zgpu_last_error());
    /* chunk 7's output too small: the first failure, with the chunks before it done */
    out_cap[7] = 10;
    st = h5zgpu_compress_batch(&p, NCHUNKS, (const void *const *)in, out, out_cap, out_len, NULL,
                               &done);
    tu_expect(st == H5ZGPU_E_OUTPUT_TOO_SMALL && done == 7 &&
                  strstr(h5zgpu_last_error(), "chunk 7 of the batch") != NULL,
              "%s: a batch with chunk 7 too small gave %s, %zu done, '%s'", label,
              h5zgpu_status_string(st), done, h5zgpu_last_error());
    free(one_chunk);
    for (size_t i = 0; i < NCHUNKS; i++) {
        if (i % 2) {
            h5zgpu_free_host(in[i]);
            h5zgpu_free_host(back[i]);
        } else {
            free(in[i]);
            free(back[i]);
        }
        free(out[i]);
    }
}

int main(void)
{
    static const h5zgpu_codec codecs[] = {H5ZGPU_CODEC_FIXED, H5ZGPU_CODEC_HUFFMAN,
                                          H5ZGPU_CODEC_AUTO};
    static const h5zgpu_mode modes[] = {H5ZGPU_MODE_ABS, H5ZGPU_MODE_REL, H5ZGPU_MODE_PWREL};
    for (size_t c = 0; c < 3; c++)
        for (size_t m = 0; m < 3; m++) {
            one(codecs[c], modes[m], H5ZGPU_FLOAT32);
            one(codecs[c], modes[m], H5ZGPU_FLOAT64);
        }
    size_t done = 5;
    tu_expect(h5zgpu_compress_batch(NULL, 1, NULL, NULL, NULL, NULL, NULL, &done) ==
                      H5ZGPU_E_INVALID_ARG && done == 0,
              "a batch of NULL pointers was not refused");
    tu_expect(h5zgpu_compress_batch(NULL, 0, NULL, NULL, NULL, NULL, NULL, &done) == H5ZGPU_OK &&
                  done == 0,
              "an empty batch failed");
    return tu_done("batch");
}
