/* The Huffman codec's axis order on the CPU (huff_axes.h; docs/FORMAT.md, "Axis order"): the
 * writer's costs over the sampled tiles, and the copies between the chunk and the coded
 * array. */
#include "huff.h"

#include "huff_axes.h"
#include "huff_axes_rows.h"
#include "parallel.h"
#include "scratch.h"

#include <stdlib.h>
#include <string.h>

typedef struct axes_run {
    const hf_geom *g;
    const qz_quant *Q;
    const void *in;
    unsigned axes;
    size_t esize;
    const uint8_t *src;
    uint8_t *dst;
    int gather;             /* copies: chunk -> coded array, or back */
    unsigned long long cost[3], terms[3];
    int nomem;
} axes_run;

/* The quantiser arguments of n elements from raster index i, or NaN for a fill element (a NaN
 * poisons the terms that read it, which then count the cap: fill and missing values are as
 * rough as can be); qz_lin_arg's, in loops the compiler vectorises. */
HZ_INLINE void args_row(const axes_run *C, uint64_t i, unsigned n, double *arg)
{
    const qz_quant *Q = C->Q;
    const double inv2eb = Q->inv2eb, k0 = Q->k0;
    const int has_fill = Q->has_fill;
    if (Q->is_f32) {
        const uint8_t *in = (const uint8_t *)C->in + 4 * i;
        const uint32_t fill = (uint32_t)Q->fill_bits;
        for (unsigned j = 0; j < n; j++) {
            float f;
            uint32_t u;
            memcpy(&f, in + 4 * j, 4);
            memcpy(&u, in + 4 * j, 4);
            const double t = hz_sub(hz_mul((double)f, inv2eb), k0);
            arg[j] = has_fill && u == fill ? NAN : t;
        }
        return;
    }
    const uint8_t *in = (const uint8_t *)C->in + 8 * i;
    for (unsigned j = 0; j < n; j++) {
        double v;
        uint64_t u;
        memcpy(&v, in + 8 * j, 8);
        memcpy(&u, in + 8 * j, 8);
        const double t = hz_sub(hz_mul(v, inv2eb), k0);
        arg[j] = has_fill && u == Q->fill_bits ? NAN : t;
    }
}

/* The terms of n elements p[0], p[step], ... along the axis of stride s; inlined with step a
 * constant, so that the loop vectorises. */
HZ_INLINE unsigned long long row_cost(const double *p, unsigned n, unsigned step, uint64_t s)
{
    unsigned long long c = 0;
    for (unsigned j = 0; j < n; j++) {
        const double *q = p + (uint64_t)j * step;
        c += hf_axes_term_lane(q[-3 * (int64_t)s], q[-(int64_t)s], q[0], q[s], q[3 * s]);
    }
    return c;
}

/* Sampled tile of run k: each axis' terms at the tile's odd coordinates whose neighbours at
 * -3..+3 along the axis lie in the tile, from the tile's arguments worked out once. */
HZ_CPU_CLONES static void cost_task(void *ctx, uint64_t k)
{
    axes_run *C = ctx;
    const hf_geom *g = C->g;
    const uint64_t t = hf_sample_tile(g, k);
    if (t >= g->ntiles)
        return;
    hf_tile T;
    hf_tile_at(g, t, &T);
    double *arg = hz_scratch((size_t)T.ez * T.ey * T.ex * sizeof *arg);
    if (!arg) {
        __atomic_store_n(&C->nomem, 1, __ATOMIC_RELAXED);
        return;
    }
    for (unsigned z = 0, e = 0; z < T.ez; z++)
        for (unsigned y = 0; y < T.ey; y++, e += T.ex)
            args_row(C, ((T.z0 + z) * g->ny + T.y0 + y) * g->nx + T.x0, T.ex, arg + e);
    const unsigned ext[3] = {T.ez, T.ey, T.ex};
    const uint64_t stride[3] = {(uint64_t)T.ey * T.ex, T.ex, 1};
    unsigned long long cost[3] = {0}, terms[3] = {0};
    for (unsigned a = 0; a < 3; a++) {
        /* along axis a the odd coordinates from 3 whose +3 neighbour is in the tile; along
         * the others every coordinate */
        unsigned lo[3] = {0, 0, 0}, hi[3] = {ext[0], ext[1], ext[2]}, step[3] = {1, 1, 1};
        lo[a] = 3;
        hi[a] = ext[a] > 3 ? ext[a] - 3 : 0;
        step[a] = 2;
        const uint64_t s = stride[a];
        const unsigned n = hi[2] > lo[2] ? (hi[2] - lo[2] + step[2] - 1) / step[2] : 0;
        for (unsigned z = lo[0]; z < hi[0]; z += step[0])
            for (unsigned y = lo[1]; y < hi[1]; y += step[1]) {
                const double *p = arg + z * stride[0] + y * stride[1] + lo[2];
                terms[a] += n;
                cost[a] += step[2] == 1 ? row_cost(p, n, 1, s) : row_cost(p, n, 2, s);
            }
    }
    hz_scratch_free(arg);
    for (unsigned a = 0; a < 3; a++) {
        __atomic_fetch_add(&C->cost[a], cost[a], __ATOMIC_RELAXED);
        __atomic_fetch_add(&C->terms[a], terms[a], __ATOMIC_RELAXED);
    }
}

unsigned hf_axes_pick_cpu(const hf_geom *g, const qz_quant *Q, const void *in,
                          unsigned long long cost[3])
{
    axes_run C = {.g = g, .Q = Q, .in = in};
    if (g->dim == 3 && !Q->pwrel)
        hz_parallel_for(hf_sample_runs(g), cost_task, &C);
    memcpy(cost, C.cost, sizeof C.cost);
    if (C.nomem)
        return HF_AXES_NOMEM;
    return g->dim == 3 && !Q->pwrel ? hf_axes_choose(C.cost, C.terms) : 0;
}

/* One row of a plane copy: n elements of esize bytes from src (stride sstep elements) to dst
 * (stride dstep), typed so that each element is one move. */
static void copy_row(uint8_t *dst, uint64_t dstep, const uint8_t *src, uint64_t sstep,
                     uint64_t n, size_t esize)
{
    if (esize == 4) {
        for (uint64_t x = 0; x < n; x++)
            memcpy(dst + 4 * x * dstep, src + 4 * x * sstep, 4);
    } else {
        for (uint64_t x = 0; x < n; x++)
            memcpy(dst + 8 * x * dstep, src + 8 * x * sstep, 8);
    }
}

/* Cubes of the copies' blocks: a block's rows, whatever the permutation, touch few cache lines
 * on either side (a plane at a time, rows strided through the chunk missed on every element). */
#define HF_AXES_BLOCK 8u

/* Coded planes [HF_AXES_BLOCK zb, +HF_AXES_BLOCK) of the coded array: gathered from the chunk,
 * or scattered back, a block at a time, a row of the block at a time (the coded row's elements
 * lie a fixed stride apart in the chunk). */
static void copy_task(void *ctx, uint64_t zb)
{
    const axes_run *C = ctx;
    const hf_geom *g = C->g;
    hf_geom cg;
    hf_axes_geom(g, C->axes, &cg);
    /* the chunk's strides along the coded axes (hf_axes_source is linear) */
    const uint64_t s0 = hf_axes_source(g, C->axes, 1, 0, 0);
    const uint64_t s1 = hf_axes_source(g, C->axes, 0, 1, 0);
    const uint64_t s2 = hf_axes_source(g, C->axes, 0, 0, 1);
    const uint64_t B = HF_AXES_BLOCK, z1 = zb * B + B < cg.nz ? zb * B + B : cg.nz;
    for (uint64_t y0 = 0; y0 < cg.ny; y0 += B)
        for (uint64_t x0 = 0; x0 < cg.nx; x0 += B) {
            const uint64_t y1 = y0 + B < cg.ny ? y0 + B : cg.ny;
            const uint64_t len = x0 + B < cg.nx ? B : cg.nx - x0;
            for (uint64_t z = zb * B; z < z1; z++)
                for (uint64_t y = y0; y < y1; y++) {
                    const uint64_t k = (z * cg.ny + y) * cg.nx + x0;
                    const uint64_t i = z * s0 + y * s1 + x0 * s2;
                    if (C->gather)
                        copy_row(C->dst + k * C->esize, 1, C->src + i * C->esize, s2, len,
                                 C->esize);
                    else
                        copy_row(C->dst + i * C->esize, s2, C->src + k * C->esize, 1, len,
                                 C->esize);
                }
        }
}

static void copy(const hf_geom *g, unsigned axes, size_t esize, const void *src, void *dst,
                 int gather)
{
    hf_geom cg;
    hf_axes_geom(g, axes, &cg);
    axes_run C = {.g = g, .axes = axes, .esize = esize, .src = src, .dst = dst,
                  .gather = gather};
    hz_parallel_for((cg.nz + HF_AXES_BLOCK - 1) / HF_AXES_BLOCK, copy_task, &C);
}

void hf_axes_gather_cpu(const hf_geom *g, unsigned axes, size_t esize, const void *chunk,
                        void *coded)
{
    copy(g, axes, esize, chunk, coded, 1);
}

void hf_axes_scatter_cpu(const hf_geom *g, unsigned axes, size_t esize, const void *coded,
                         void *chunk)
{
    copy(g, axes, esize, coded, chunk, 0);
}
