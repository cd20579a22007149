/* The tiles the Huffman writer samples to choose its predictor (hf_sampled and its helpers,
 * huff_common.h): every tile of a chunk of at most HF_SAMPLE_ALL tiles; beyond, exactly one
 * tile in each whole run of 2^HF_SAMPLE_SHIFT, the one hf_sample_tile names, at places spread
 * over the run; and hf_tile_of, which the interpolation's cost uses, names the tile
 * hf_tile_at places an element in. Then chunks of 66 tiles through the public API, on the
 * executor H5ZGPU_DEVICE picks: within the bound with either predictor the sample chooses. */
#include "huff.h"
#include "util.h"

#include <stdint.h>
#include <stdlib.h>

#define RUN (1u << HF_SAMPLE_SHIFT)

static void check_tiles(uint64_t ntiles)
{
    hf_geom g = {.ntiles = ntiles};
    const uint64_t runs = hf_sample_runs(&g);
    uint64_t sampled = 0, place[RUN] = {0};
    for (uint64_t t = 0; t < ntiles; t++)
        sampled += (uint64_t)hf_sampled(&g, t);
    if (ntiles <= HF_SAMPLE_ALL) {
        tu_expect(sampled == ntiles && runs == ntiles, "%llu tiles: %llu sampled, %llu runs",
                  (unsigned long long)ntiles, (unsigned long long)sampled,
                  (unsigned long long)runs);
        for (uint64_t k = 0; k < runs; k++)
            tu_expect(hf_sample_tile(&g, k) == k, "%llu tiles: run %llu samples tile %llu",
                      (unsigned long long)ntiles, (unsigned long long)k,
                      (unsigned long long)hf_sample_tile(&g, k));
        return;
    }
    tu_expect(runs == (ntiles + RUN - 1) / RUN, "%llu tiles: %llu runs",
              (unsigned long long)ntiles, (unsigned long long)runs);
    uint64_t named = 0;
    for (uint64_t k = 0; k < runs; k++) {
        const uint64_t t = hf_sample_tile(&g, k);
        unsigned in_run = 0;
        for (uint64_t u = k * RUN; u < (k + 1) * RUN && u < ntiles; u++)
            in_run += (unsigned)hf_sampled(&g, u);
        tu_expect(t / RUN == k, "%llu tiles: run %llu names tile %llu outside it",
                  (unsigned long long)ntiles, (unsigned long long)k, (unsigned long long)t);
        tu_expect(t < ntiles ? in_run == 1 && hf_sampled(&g, t) : in_run == 0,
                  "%llu tiles: run %llu has %u sampled tiles, names %llu",
                  (unsigned long long)ntiles, (unsigned long long)k, in_run,
                  (unsigned long long)t);
        named += t < ntiles;
        place[t % RUN]++;
    }
    tu_expect(named == sampled && sampled >= ntiles / RUN,
              "%llu tiles: %llu named, %llu sampled", (unsigned long long)ntiles,
              (unsigned long long)named, (unsigned long long)sampled);
    /* the places are spread: none is more than twice or less than half its share */
    for (unsigned p = 0; runs >= 8 * RUN && p < RUN; p++)
        tu_expect(2 * place[p] * RUN >= runs && place[p] * RUN <= 2 * runs,
                  "%llu tiles: place %u taken by %llu of %llu runs", (unsigned long long)ntiles,
                  p, (unsigned long long)place[p], (unsigned long long)runs);
}

static void check_tile_of(unsigned rank, const uint64_t *dims)
{
    hf_geom g;
    tu_expect(hf_geom_init(&g, rank, dims) == 0, "rank %u: no geometry", rank);
    for (uint64_t t = 0; t < g.ntiles; t++) {
        hf_tile T;
        hf_tile_at(&g, t, &T);
        const uint64_t last[3] = {T.z0 + T.ez - 1, T.y0 + T.ey - 1, T.x0 + T.ex - 1};
        tu_expect(hf_tile_of(&g, T.z0, T.y0, T.x0) == t &&
                      hf_tile_of(&g, last[0], last[1], last[2]) == t,
                  "rank %u: tile %llu's corners are placed in tiles %llu and %llu", rank,
                  (unsigned long long)t, (unsigned long long)hf_tile_of(&g, T.z0, T.y0, T.x0),
                  (unsigned long long)hf_tile_of(&g, last[0], last[1], last[2]));
    }
}

/* A chunk of more than HF_SAMPLE_ALL tiles (so a sample of them chooses the predictor) through
 * the public API: every value within its bound, whichever predictor the sample chose, which
 * goes to *pred (the payload's byte 9; -1 when the chunk is not a Huffman one). */
static void round_trip(const h5zgpu_params *p, tu_pattern pat, const char *label, int *pred)
{
    const size_t raw = (size_t)tu_count(p) * tu_esize(p->dtype);
    size_t cap = h5zgpu_compress_bound(p), len = 0;
    void *in = malloc(raw);
    uint8_t *chunk = malloc(cap);
    h5zgpu_info info;
    *pred = -1;
    tu_fill_shape(p, pat, 7, in);
    h5zgpu_status st = h5zgpu_compress(p, in, chunk, cap, &len, NULL);
    tu_expect(st == H5ZGPU_OK, "%s: compress -> %s (%s)", label, h5zgpu_status_string(st),
              h5zgpu_last_error());
    if (st == H5ZGPU_OK && h5zgpu_chunk_info(chunk, len, &info) == H5ZGPU_OK &&
        info.codec == H5ZGPU_CODEC_HUFFMAN)
        *pred = chunk[info.header_len + 9];
    if (st == H5ZGPU_OK)
        tu_expect_decodes(p, in, chunk, len, label);
    free(in);
    free(chunk);
}

int main(void)
{
    const uint64_t counts[] = {1,  2,   63,  64,   65,   71,   72,    73,   100,
                               1000, 1023, 1024, 8191, 8192, 8193, 131071, 262144};
    for (unsigned i = 0; i < sizeof counts / sizeof *counts; i++)
        check_tiles(counts[i]);
    const uint64_t d1[] = {5000000}, d2[] = {1000, 1300}, d3[] = {70, 100, 90};
    const uint64_t d4[] = {3, 40, 50, 60};
    check_tile_of(1, d1);
    check_tile_of(2, d2);
    check_tile_of(3, d3);
    check_tile_of(4, d4);

    /* 2 x 3 x 11 = 66 tiles of 16 x 32 x 32, partial along every axis */
    const tu_pattern pats[] = {TU_SMOOTH, TU_FIELD, TU_NOISE, TU_SPIKY, TU_MASKED};
    const double ebs[] = {1e-2, 1e-4};
    int chose[5] = {0};
    for (unsigned k = 0; k < sizeof pats / sizeof *pats; k++)
        for (unsigned b = 0; b < 2; b++)
            for (unsigned f64 = 0; f64 < 2; f64++) {
                h5zgpu_params p = {.codec = H5ZGPU_CODEC_HUFFMAN, .mode = H5ZGPU_MODE_REL,
                                   .eb = ebs[b], .dtype = f64 ? H5ZGPU_FLOAT64 : H5ZGPU_FLOAT32,
                                   .rank = 3, .dims = {20, 70, 330}};
                if (pats[k] == TU_MASKED) { /* fill values in sampled and unsampled tiles */
                    p.has_fill = 1;
                    p.fill = f64 ? -1e34 : (double)(float)-1e34;
                }
                char label[96];
                int pred;
                snprintf(label, sizeof label, "66 tiles, pattern %d, REL %g, f%d", (int)pats[k],
                         ebs[b], f64 ? 64 : 32);
                round_trip(&p, pats[k], label, &pred);
                chose[pred >= 0 && pred <= 3 ? pred : 4]++;
            }
    printf("huff_sample_test: 66-tile chunks by predictor interpolation/Lorenzo 1/2/3: "
           "%d/%d/%d/%d, not Huffman %d\n", chose[0], chose[1], chose[2], chose[3], chose[4]);
    tu_expect(chose[0] > 0 && chose[1] + chose[2] + chose[3] > 0,
              "66 tiles: the sample chose interpolation %d times, a Lorenzo order %d times: "
              "both are needed", chose[0], chose[1] + chose[2] + chose[3]);
    return tu_done("huff_sample_test");
}
