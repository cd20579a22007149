/* The tiles the Huffman writer samples to choose its predictor (hf_sampled and its helpers,
 * huff_common.h): every tile of a chunk of at most HF_SAMPLE_ALL tiles; beyond, exactly one
 * tile in each whole run of 2^HF_SAMPLE_SHIFT, the one hf_sample_tile names, at places spread
 * over the run; and hf_tile_of, which the interpolation's cost uses, names the tile
 * hf_tile_at places an element in. */
#include "huff.h"
#include "util.h"

#include <stdint.h>

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
    return tu_done("huff_sample_test");
}
