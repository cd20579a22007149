/* The Huffman codec's interpolation predictor on the CPU (huff_interp.h; docs/FORMAT.md,
 * "Interpolation"). The passes run one after another; each pass's elements, which depend only
 * on earlier passes, run in parallel by rows. */
#include "huff.h"

#include "elements.h"
#include "huff_interp.h"
#include "huff_interp_rows.h"
#include "parallel.h"
#include "scratch.h"

#include <stdlib.h>

typedef struct ip_run {
    const hf_geom *g;
    const qz_quant *Q;
    const void *in;
    int32_t *u;             /* reconstructed codes, chunk raster order */
    int32_t *delta;         /* tile-major deltas (encoder: written; decoder: read) */
    uint8_t *kind;          /* encoder: tile-major, 0 coded, 1 fill, 2 verbatim */
    void *out;              /* decoder */
    hf_ip_pass P;
    uint64_t cost;          /* encoder: as the Lorenzo orders' cost over the sampled tiles,
                             * plus verbatim values */
    int bad;                /* decoder */
    uint64_t (*row_task)(struct ip_run *C, uint64_t r);   /* run_pass: the current pass's
                                                           * rows' task (returns their cost), */
    unsigned slices;        /* and the slices they are cut into */
} ip_run;

/* A row of the current pass (z and y fixed): its first element's raster index and the step
 * between elements, and what the prediction needs: the axis, the neighbours' distance s in
 * the raster, and their reach (the same along the row unless the pass runs along x). */
typedef struct ip_row {
    uint64_t c[3], i0, di, s, h, na;
    unsigned a, reach;
} ip_row;

static void row_at(const ip_run *C, uint64_t r, ip_row *R)
{
    const hf_geom *g = C->g;
    const hf_ip_pass *P = &C->P;
    const uint64_t n[3] = {g->nz, g->ny, g->nx}, stride[3] = {g->ny * g->nx, g->nx, 1};
    R->c[0] = P->first[0] + r / P->cnt[1] * P->step[0];
    R->c[1] = P->first[1] + r % P->cnt[1] * P->step[1];
    R->c[2] = P->first[2];
    R->i0 = (R->c[0] * g->ny + R->c[1]) * g->nx + R->c[2];
    R->di = P->step[2];
    R->a = P->axis;
    R->h = P->h;
    R->na = n[R->a];
    R->s = P->h * stride[R->a];
    R->reach = R->a == 2 ? 0u : hf_ip_reach(R->c[R->a], R->h, R->na);
}

/* The prediction of the row's element at column x, raster index i. */
static inline int32_t predict_at(const ip_run *C, const ip_row *R, uint64_t x, uint64_t i)
{
    const unsigned reach = R->a == 2 ? hf_ip_reach(x, R->h, R->na) : R->reach;
    const uint64_t s = R->s;
    const int32_t *u = C->u;
    return hf_ip_predict(reach, reach & HF_IP_M3 ? u[i - 3 * s] : 0, u[i - s],
                         reach & HF_IP_P1 ? u[i + s] : 0, reach & HF_IP_P3 ? u[i + 3 * s] : 0);
}

/* Tile-major positions along one row of a pass (z and y fixed), and whether their tiles are
 * sampled: what the row's tiles share is worked out once (hf_tile_at's terms), a tile's own
 * terms when x enters it, so that an element costs no division (finding its tile from scratch
 * takes seven, 64-bit) and a tile one. */
typedef struct ip_cursor {
    const hf_geom *g;
    uint64_t start;    /* position of the row's tiles' first (hf_tile_at's slab + row) */
    uint64_t ezey;     /* elements of a tile of the row per column */
    uint64_t line;     /* the row's line in its tiles: (z - z0) ey + y - y0 */
    uint64_t tile0;    /* the tile index of the row's first tile */
    uint64_t x0, x1;   /* the current tile's columns [x0, x1) (none at first) */
    uint64_t base;     /* the current tile's position of (z, y, x0), less x0 */
    int sampled;       /* whether the current tile is sampled */
} ip_cursor;

static void cursor_row(ip_cursor *K, const hf_geom *g, uint64_t z, uint64_t y)
{
    const uint64_t z0 = z / g->tz * g->tz, y0 = y / g->ty * g->ty;
    const uint64_t ez = g->nz - z0 < g->tz ? g->nz - z0 : g->tz;
    const uint64_t ey = g->ny - y0 < g->ty ? g->ny - y0 : g->ty;
    *K = (ip_cursor){.g = g,
                     .start = (z0 * g->ny + ez * y0) * g->nx,
                     .ezey = ez * ey,
                     .line = (z - z0) * ey + y - y0,
                     .tile0 = (z / g->tz * g->gty + y / g->ty) * g->gtx};
}

/* The tile-major position of the element at column x of the row. */
static inline uint64_t cursor_pos(ip_cursor *K, uint64_t x)
{
    if (x < K->x0 || x >= K->x1) {
        const hf_geom *g = K->g;
        const uint64_t tx = x / g->tx;
        K->x0 = tx * g->tx;
        K->x1 = g->nx - K->x0 > g->tx ? K->x0 + g->tx : g->nx;
        /* a tile's rows are contiguous */
        K->base = K->start + K->ezey * K->x0 + K->line * (K->x1 - K->x0) - K->x0;
        K->sampled = hf_sampled(g, K->tile0 + tx);
    }
    return K->base + x;
}

/* Stores the element at tile-major position pos, raster index i: its kind (0 coded, 1 fill,
 * 2 verbatim), code u and delta k; returns its cost (0 outside the sampled tiles), v being its
 * value. */
HZ_INLINE uint64_t store_element(ip_run *C, uint64_t pos, int sampled, uint64_t i, uint8_t kind,
                                 int32_t u, int32_t k, double v)
{
    int32_t p;
    C->kind[pos] = kind;
    C->u[i] = u;
    C->delta[pos] = k;
    if (!sampled)
        return 0;
    return hz_bitlen(hz_zigzag(k)) +
           (kind == 2 && hf_dq_code(C->Q, v, &p) ? hf_ip_verbatim_cost(C->Q->is_f32) : 0);
}

/* Codes the element at tile-major position pos, raster index i, against pred; returns its cost
 * (0 outside the sampled tiles). */
HZ_INLINE uint64_t code_element(ip_run *C, uint64_t pos, int sampled, uint64_t i, int32_t pred)
{
    uint64_t bits;
    int32_t k = 0, u;
    double v = hz_element(C->in, C->Q->is_f32, i, &bits);
    if (qz_is_fill(C->Q, bits))
        return store_element(C, pos, sampled, i, 1, pred, 0, v);
    if (hf_ip_quantize(C->Q, v, pred, &k, &u))
        return store_element(C, pos, sampled, i, 0, u, k, v);
    /* verbatim: delta 0's code, as the decoder takes it */
    return store_element(C, pos, sampled, i, 2, (int32_t)hf_ip_code(C->Q, pred, 0), 0, v);
}

/* Elements of a pass row coded together (hf_ip_quantize_rows): gathered, quantised in one
 * vectorised loop, then stored. A pass's elements read only earlier passes' codes. */
#define IP_GROUP 64u

typedef struct ip_group {
    uint64_t pos[IP_GROUP], i[IP_GROUP];
    double x[IP_GROUP], rel_lim[IP_GROUP];
    int32_t pred[IP_GROUP], k[IP_GROUP], u[IP_GROUP];
    uint8_t fill[IP_GROUP], ok[IP_GROUP], sampled[IP_GROUP];
} ip_group;

/* Codes the row's elements ix0 .. ix0 + n - 1 (n <= IP_GROUP); returns their cost. */
HZ_INLINE uint64_t code_group(ip_run *C, const ip_row *R, ip_cursor *K, uint64_t ix0,
                              unsigned n, ip_group *G)
{
    const qz_quant *Q = C->Q;
    for (unsigned j = 0; j < n; j++) {
        const uint64_t x = R->c[2] + (ix0 + j) * R->di, i = R->i0 + (ix0 + j) * R->di;
        uint64_t bits;
        G->pos[j] = cursor_pos(K, x);
        G->sampled[j] = (uint8_t)K->sampled;
        G->i[j] = i;
        G->pred[j] = predict_at(C, R, x, i);
        G->x[j] = hz_element(C->in, Q->is_f32, i, &bits);
        G->fill[j] = (uint8_t)qz_is_fill(Q, bits);
    }
    if (Q->rel)
        qz_rel_limits(Q, n, G->x, G->rel_lim);
    hf_ip_quantize_rows(Q, n, G->x, G->pred, G->rel_lim, G->k, G->u, G->ok);
    uint64_t cost = 0;
    for (unsigned j = 0; j < n; j++) {
        const uint8_t kind = G->fill[j] ? 1 : (G->ok[j] ? 0 : 2);
        cost += store_element(C, G->pos[j], G->sampled[j], G->i[j], kind,
                              G->fill[j] ? G->pred[j] : G->u[j], G->fill[j] ? 0 : G->k[j],
                              G->x[j]);
    }
    return cost;
}

/* Slice k of the current pass's rows (run_pass); their cost is added once a slice, as one
 * shared counter taken by every row of a fine pass serialised 16 threads. */
static void pass_slice(void *ctx, uint64_t k)
{
    ip_run *C = ctx;
    const uint64_t rows = C->P.cnt[0] * C->P.cnt[1];
    uint64_t cost = 0;
    for (uint64_t r = hz_slice_start(rows, C->slices, (unsigned)k),
                  end = hz_slice_start(rows, C->slices, (unsigned)k + 1);
         r < end; r++)
        cost += C->row_task(C, r);
    if (cost)
        __atomic_fetch_add(&C->cost, cost, __ATOMIC_RELAXED);
}

/* Passes of fewer elements run on the calling thread: a 64^3 chunk's eleven coarsest passes
 * hold 2,047 elements in all (about 11 ns each), 23 us of work against 11 calls handing them
 * out (6-7 us each on 16 threads of a 16-core virtual machine). */
#define IP_PARALLEL_MIN 2048u

/* The current pass's rows by row_task, in contiguous slices, four a thread (up to one a row):
 * rows taken in grains of eight as they came interleaved the threads' parts of the chunk from
 * pass to pass, each pass reading what other threads had written, and two threads decoded a
 * 64^3 chunk at 1.3-1.4x one thread's speed (1.7x in slices). */
static void run_pass(ip_run *C, uint64_t (*row_task)(ip_run *C, uint64_t r))
{
    const uint64_t rows = C->P.cnt[0] * C->P.cnt[1], most = 4u * (uint64_t)hz_threads();
    C->row_task = row_task;
    C->slices = C->P.npts < IP_PARALLEL_MIN ? 1u : (unsigned)(rows < most ? rows : most);
    hz_parallel_slices(C->slices, pass_slice, C);
}

/* Row r of the current pass, coded; returns its cost. */
HZ_CPU_CLONES static uint64_t pass_enc_task(ip_run *C, uint64_t r)
{
    const uint64_t cnt = C->P.cnt[2];
    uint64_t cost = 0;
    ip_row R;
    ip_cursor K;
    row_at(C, r, &R);
    cursor_row(&K, C->g, R.c[0], R.c[1]);
    if (qz_rows_apply(C->Q)) {
        ip_group G;
        for (uint64_t ix = 0; ix < cnt; ix += IP_GROUP)
            cost += code_group(C, &R, &K, ix, cnt - ix < IP_GROUP ? (unsigned)(cnt - ix) : IP_GROUP,
                               &G);
    } else {
        for (uint64_t ix = 0, x = R.c[2], i = R.i0; ix < cnt; ix++, x += R.di, i += R.di) {
            const uint64_t pos = cursor_pos(&K, x);
            cost += code_element(C, pos, K.sampled, i, predict_at(C, &R, x, i));
        }
    }
    return cost;
}

uint64_t hf_ip_encode_cpu(const hf_geom *g, const qz_quant *Q, const void *in, int32_t *delta,
                          uint8_t *kind, uint64_t lorenzo_cost)
{
    ip_run C = {.g = g, .Q = Q, .in = in, .delta = delta, .kind = kind};
    C.u = hz_scratch(g->n * sizeof *C.u);
    if (!C.u)
        return UINT64_MAX;
    C.cost = code_element(&C, 0, hf_sampled(g, 0), 0, 0); /* the first element, position 0 */
    /* the cost only grows: once it loses to lorenzo_cost, the passes left cannot change that */
    for (unsigned p = 0, np = hf_ip_passes(g); p < np && hf_ip_wins(C.cost, lorenzo_cost, Q->pwrel);
         p++) {
        hf_ip_pass_at(g, p, &C.P);
        if (C.P.npts)
            run_pass(&C, pass_enc_task);
    }
    hz_scratch_free(C.u);
    return C.cost;
}

/* ---- decoder ------------------------------------------------------------------------------ */

/* Reconstructs the element at tile-major position pos, raster index i, from pred and its
 * delta. */
HZ_INLINE void decode_element(ip_run *C, uint64_t pos, uint64_t i, int32_t pred)
{
    const qz_quant *Q = C->Q;
    const int32_t d = C->delta[pos];
    const int fill = d == HF_MARK_FILL;
    int64_t u = fill ? pred : hf_ip_code(Q, pred, d);
    if (d == HF_MARK_ESCAPE || u > HF_IP_UMAX || u < -HF_IP_UMAX) {
        __atomic_store_n(&C->bad, 1, __ATOMIC_RELAXED);
        u = pred;
    }
    C->u[i] = (int32_t)u;
    uint64_t bits = fill ? Q->fill_bits
                         : hz_value_bits(qz_reconstruct_at(Q, hf_ip_steps(Q, u)), Q->is_f32);
    hz_put_element(C->out, Q->is_f32, i, bits);
}

/* Row r of the current pass, decoded (no cost). */
static uint64_t pass_dec_task(ip_run *C, uint64_t r)
{
    ip_row R;
    ip_cursor K;
    row_at(C, r, &R);
    cursor_row(&K, C->g, R.c[0], R.c[1]);
    for (uint64_t ix = 0, x = R.c[2], i = R.i0; ix < C->P.cnt[2]; ix++, x += R.di, i += R.di)
        decode_element(C, cursor_pos(&K, x), i, predict_at(C, &R, x, i));
    return 0;
}

h5zgpu_status hf_ip_decode_cpu(const hf_geom *g, const qz_quant *Q, const int32_t *delta,
                               void *out)
{
    ip_run C = {.g = g, .Q = Q, .delta = (int32_t *)delta, .out = out};
    C.u = hz_scratch(g->n * sizeof *C.u);
    if (!C.u)
        return H5ZGPU_E_NOMEM;
    decode_element(&C, 0, 0, 0); /* the first element, position 0 */
    for (unsigned p = 0, np = hf_ip_passes(g); p < np && !C.bad; p++) {
        hf_ip_pass_at(g, p, &C.P);
        if (C.P.npts)
            run_pass(&C, pass_dec_task);
    }
    hz_scratch_free(C.u);
    return C.bad ? H5ZGPU_E_CORRUPT : H5ZGPU_OK;
}
