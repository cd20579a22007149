/* Fixed-length codec, CPU reference. Tiles are independent until their offsets are summed, so
 * both directions run as: per tile in parallel, prefix sum, per tile in parallel. */
#include "elements.h"
#include "fixed.h"
#include "fixed_narrow.h"
#include "fixed_sums.h"

#include "parallel.h"
#include "quant_rows.h"
#include "scratch.h"

#include <stdlib.h>
#include <string.h>

int fl_geom_init(fl_geom *g, unsigned rank, const uint64_t *dims)
{
    hz_fold f;
    memset(g, 0, sizeof *g);
    if (hz_fold_dims(&f, rank, dims) != 0)
        return -1;
    g->nz = f.nz;
    g->ny = f.ny;
    g->nx = f.nx;
    g->dim = f.dim;
    g->bz = g->dim == 3 ? 4 : 1;
    g->by = g->dim == 3 ? 4 : (g->dim == 2 ? 8 : 1);
    g->bx = g->dim == 3 ? 4 : (g->dim == 2 ? 8 : 64);
    g->gbz = (g->nz + g->bz - 1) / g->bz;
    g->gby = (g->ny + g->by - 1) / g->by;
    g->gbx = (g->nx + g->bx - 1) / g->bx;
    g->nblocks = g->gbz * g->gby * g->gbx;
    g->ntiles = (g->nblocks + FL_TILE - 1) / FL_TILE;
    return 0;
}

uint64_t fl_payload_bound(const fl_geom *g, unsigned esize, int has_fill)
{
    return fl_tables_size(g, has_fill) + g->nblocks * (has_fill ? 9u : 1u) +
           g->nz * g->ny * g->nx * esize;
}

/* One block, loaded and quantised. */
typedef struct fl_blk {
    int64_t q[FL_BLOCK];
    unsigned char valid[FL_BLOCK];
    uint64_t fill;      /* bit e: element e is the fill value */
    uint64_t nvalid;
    int ok;             /* every value that is not fill can be coded */
    int all_fill;       /* every element inside the chunk is fill: the block costs no bytes */
} fl_blk;

/* A block's values through the vectorised quantiser (quant_rows.h), compiled for each
 * instruction set HZ_CPU_CLONES names (its caller, one build for all, calls the loader's pick:
 * inlined there, the loop would have the plain instruction set only). */
HZ_CPU_CLONES static void quantize_rows(const qz_quant *Q, const double *v,
                                        const double *rel_lim, int32_t *q, uint8_t *ok)
{
    qz_quantize_rows(Q, FL_BLOCK, v, rel_lim, QZ_QMAX, q, ok);
}

/* The values to code (coded[e]) are gathered first, then quantised: in one vectorised loop
 * where qz_rows_apply says it gives qz_quantize's codes and verdicts. A value that fails there
 * leaves code 0 (qz_quantize its rounded argument); a failed block is stored raw, its codes
 * unread. */
static void load_block(const fl_geom *g, const qz_quant *Q, const void *in, uint64_t b,
                       fl_blk *k)
{
    double v[FL_BLOCK];
    uint8_t coded[FL_BLOCK];
    uint64_t z0, y0, x0;
    unsigned e = 0, first = FL_BLOCK, bad = 0;
    fl_block_origin(g, b, &z0, &y0, &x0);
    k->fill = 0;
    k->nvalid = 0;
    for (unsigned z = 0; z < g->bz; z++)
        for (unsigned y = 0; y < g->by; y++)
            for (unsigned x = 0; x < g->bx; x++, e++) {
                v[e] = 0.0;
                coded[e] = 0;
                k->valid[e] = z0 + z < g->nz && y0 + y < g->ny && x0 + x < g->nx;
                if (!k->valid[e])
                    continue;
                uint64_t bits;
                const double val = hz_element(in, Q->is_f32,
                                              ((z0 + z) * g->ny + y0 + y) * g->nx + x0 + x, &bits);
                k->nvalid++;
                if (qz_is_fill(Q, bits)) {
                    k->fill |= UINT64_C(1) << e;
                    continue;
                }
                v[e] = val;
                coded[e] = 1;
                first = first == FL_BLOCK ? e : first;
            }
    if (qz_rows_apply(Q)) {
        double rel_lim[FL_BLOCK];
        int32_t q[FL_BLOCK];
        uint8_t ok[FL_BLOCK];
        if (Q->rel)
            qz_rel_limits(Q, FL_BLOCK, v, rel_lim);
        quantize_rows(Q, v, rel_lim, q, ok);
        for (e = 0; e < FL_BLOCK; e++) {
            k->q[e] = coded[e] ? q[e] : 0;
            bad |= coded[e] & (ok[e] ^ 1u);
        }
    } else {
        for (e = 0; e < FL_BLOCK; e++) {
            k->q[e] = 0;
            if (coded[e] && !qz_quantize(Q, v[e], &k->q[e]))
                bad = 1;
        }
    }
    k->ok = !bad;
    k->all_fill = first == FL_BLOCK;
    /* a fill corner takes the code of the block's first other value: its residual is stored
     * anyway, and its neighbours are predicted from it */
    if ((k->fill & 1u) && !k->all_fill)
        k->q[0] = k->q[first];
}

/* Residual r into a block's statistics, without branches: residuals are as often zero as not. */
static void stat_add(fl_block_stat *s, uint64_t r)
{
    const uint64_t neg = 0u - (r >> 63), m = (r ^ neg) - neg;   /* |r| */
    s->maxmag = m > s->maxmag ? m : s->maxmag;
    s->nnz += r != 0;
}

/* Residuals of a coded block under a predictor. Fill elements past the corner take their
 * prediction as code (residual 0), so they never enter the prediction of their neighbours.
 * Inlined with pred a constant (residuals), so that the prediction's branches go. */
HZ_INLINE void residuals_of(const fl_geom *g, unsigned pred, const fl_blk *k,
                            int64_t r[FL_BLOCK], fl_block_stat *s)
{
    int64_t own[FL_BLOCK];
    int64_t *q = (int64_t *)k->q;
    unsigned e = 0;
    if (k->fill >> 1) {
        memcpy(own, k->q, sizeof own);
        q = own;
    }
    s->maxmag = 0;
    s->nnz = 0;
    for (unsigned z = 0; z < g->bz; z++)
        for (unsigned y = 0; y < g->by; y++)
            for (unsigned x = 0; x < g->bx; x++, e++) {
                int64_t p = fl_predict_at(pred, g->by, g->bx, q, z, y, x);
                if (!k->valid[e]) {
                    r[e] = 0;
                } else if (e > 0 && (k->fill >> e & 1u)) {
                    q[e] = p;
                    r[e] = 0;
                } else {
                    r[e] = (int64_t)((uint64_t)q[e] - (uint64_t)p);
                }
                if (e > 0)
                    stat_add(s, (uint64_t)r[e]);
            }
    s->r0 = r[0];
}

static void residuals(const fl_geom *g, unsigned pred, const fl_blk *k, int64_t r[FL_BLOCK],
                      fl_block_stat *s)
{
    switch (pred) {
    case FL_PRED_LORENZO:
        residuals_of(g, FL_PRED_LORENZO, k, r, s);
        break;
    case FL_PRED_CHAIN:
        residuals_of(g, FL_PRED_CHAIN, k, r, s);
        break;
    case FL_PRED_MEAN:
        residuals_of(g, FL_PRED_MEAN, k, r, s);
        break;
    default:
        residuals_of(g, FL_PRED_PLANAR, k, r, s);
        break;
    }
}

/* The largest residual magnitude and the count of non-zero residuals under every predictor,
 * over elements 1..63 inside the chunk. */
HZ_INLINE void stats_narrow_of(unsigned bx, unsigned by, const int32_t *c32,
                               const unsigned char *valid, uint32_t mag[FL_NPRED],
                               uint32_t nnz[FL_NPRED])
{
    uint32_t m0 = 0, m1 = 0, m2 = 0, m3 = 0, n0 = 0, n1 = 0, n2 = 0, n3 = 0;
    for (unsigned e = 1; e < FL_BLOCK; e++) {
        uint32_t pr[FL_NPRED];
        predict_narrow(bx, by, c32, e, pr);
        const uint32_t v = valid[e] ? ~0u : 0u, q = (uint32_t)c32[e];
        const uint32_t g0 = magnitude_narrow(q - pr[0]) & v, g1 = magnitude_narrow(q - pr[1]) & v;
        const uint32_t g2 = magnitude_narrow(q - pr[2]) & v, g3 = magnitude_narrow(q - pr[3]) & v;
        m0 = g0 > m0 ? g0 : m0;
        m1 = g1 > m1 ? g1 : m1;
        m2 = g2 > m2 ? g2 : m2;
        m3 = g3 > m3 ? g3 : m3;
        n0 += g0 != 0;
        n1 += g1 != 0;
        n2 += g2 != 0;
        n3 += g3 != 0;
    }
    mag[0] = m0, mag[1] = m1, mag[2] = m2, mag[3] = m3;
    nnz[0] = n0, nnz[1] = n1, nnz[2] = n2, nnz[3] = n3;
}

/* The residuals under predictor pred, 0 outside the chunk; r[0] is the corner's code. */
HZ_INLINE void residuals_narrow_of(unsigned bx, unsigned by, unsigned pred, const int32_t *c32,
                                   const unsigned char *valid, int64_t r[FL_BLOCK])
{
    r[0] = valid[0] ? c32[0] : 0;
    for (unsigned e = 1; e < FL_BLOCK; e++) {
        uint32_t pr[FL_NPRED];
        predict_narrow(bx, by, c32, e, pr);
        const uint32_t p = pred == FL_PRED_LORENZO ? pr[0]
                           : pred == FL_PRED_CHAIN ? pr[1]
                           : pred == FL_PRED_MEAN  ? pr[2]
                                                   : pr[3];
        r[e] = valid[e] ? (int64_t)c32[e] - (int32_t)p : 0;
    }
}

/* The block's codes as int32 (|q| <= 2^28) after FL_NARROW_PAD zeros. */
static void narrow_copy(const fl_blk *k, int32_t c32[FL_NARROW_PAD + FL_BLOCK])
{
    memset(c32, 0, FL_NARROW_PAD * sizeof *c32);
    for (unsigned e = 0; e < FL_BLOCK; e++)
        c32[FL_NARROW_PAD + e] = (int32_t)k->q[e];
}

/* Encoding's hot loops, compiled for each instruction set HZ_CPU_CLONES names with the block
 * shape of each dimensionality a constant: the statistics of every predictor, and the
 * residuals under the tile's, of a block without fill elements. */
HZ_CPU_CLONES static void stats_narrow(unsigned dim, const int32_t *c32,
                                       const unsigned char *valid, uint32_t mag[FL_NPRED],
                                       uint32_t nnz[FL_NPRED])
{
    if (dim == 3)
        stats_narrow_of(4, 4, c32, valid, mag, nnz);
    else if (dim == 2)
        stats_narrow_of(8, 8, c32, valid, mag, nnz);
    else
        stats_narrow_of(64, 1, c32, valid, mag, nnz);
}

HZ_CPU_CLONES static void residuals_narrow(unsigned dim, unsigned pred, const int32_t *c32,
                                           const unsigned char *valid, int64_t r[FL_BLOCK])
{
    if (dim == 3)
        residuals_narrow_of(4, 4, pred, c32, valid, r);
    else if (dim == 2)
        residuals_narrow_of(8, 8, pred, c32, valid, r);
    else
        residuals_narrow_of(64, 1, pred, c32, valid, r);
}

/* The statistics residuals() gives, for every predictor, of a block without fill elements. */
static void stats_all(const fl_geom *g, unsigned np, const fl_blk *k, fl_block_stat s[FL_NPRED])
{
    int32_t c32[FL_NARROW_PAD + FL_BLOCK];
    uint32_t mag[FL_NPRED], nnz[FL_NPRED];
    narrow_copy(k, c32);
    stats_narrow(g->dim, c32 + FL_NARROW_PAD, k->valid, mag, nnz);
    for (unsigned p = 0; p < np; p++)
        s[p] = (fl_block_stat){mag[p], nnz[p], k->q[0]};
}

static uint8_t *write_block(uint8_t *p, unsigned hdr, const int64_t r[FL_BLOCK])
{
    unsigned code = hdr & 63u, wb = fl_wbytes(hdr >> 6);
    uint64_t z0 = hz_zigzag(r[0]);
    for (unsigned i = 0; i < wb; i++)
        *p++ = (uint8_t)(z0 >> (8 * i));
    if (code > FL_SPARSE_BASE) {
        for (unsigned e = 1; e < FL_BLOCK; e++)
            if (r[e])
                *p++ = (uint8_t)(e | (r[e] < 0 ? 0x40u : 0u) |
                                 ((r[e] < 0 ? -r[e] : r[e]) == 2 ? 0x80u : 0u));
    } else if (code > 0) {
        uint64_t sign = 0, plane[FL_MAX_PLANES] = {0};
        for (unsigned e = 1; e < FL_BLOCK; e++) {
            uint64_t m = r[e] < 0 ? (uint64_t)-r[e] : (uint64_t)r[e];
            sign |= (uint64_t)(r[e] < 0) << e;
            for (unsigned j = 0; j < code; j++)
                plane[j] |= ((m >> j) & 1u) << e;
        }
        hz_put_u64(p, sign);
        p += 8;
        for (unsigned j = 0; j < code; j++, p += 8)
            hz_put_u64(p, plane[j]);
    }
    return p;
}

typedef struct tile_sum {
    uint32_t mask;            /* blocks with a header byte */
    uint32_t fmask;           /* blocks with fill values (and not raw) */
    uint8_t pred;             /* predictor id | FL_TILE_CORNER_DELTA */
    uint64_t nhdr, bytes;     /* this tile's header bytes and payload bytes */
    uint64_t hdr_off, off;    /* exclusive prefix sums */
} tile_sum;

/* Most payload bytes one block can take: raw, or a fill bitmap, a 4-byte corner, a sign plane
 * and 32 magnitude planes. */
static uint64_t block_cap(unsigned esize)
{
    uint64_t coded = 8 + 4 + 8 * (FL_MAX_PLANES + 1);
    return (uint64_t)FL_BLOCK * esize > coded ? (uint64_t)FL_BLOCK * esize : coded;
}

/* Writes the payload of coded block k (header hdr) at p under predictor pred; *prev is the corner
 * of the previous coded block, for delta corners. */
static uint8_t *code_block(const fl_geom *g, const fl_blk *k, unsigned hdr, unsigned pred,
                           unsigned delta, int64_t *prev, uint8_t *p)
{
    int64_t r[FL_BLOCK];
    fl_block_stat s;
    if (k->fill) {
        hz_put_u64(p, k->fill);
        p += 8;
        residuals(g, pred, k, r, &s);
    } else {
        int32_t c32[FL_NARROW_PAD + FL_BLOCK];
        narrow_copy(k, c32);
        residuals_narrow(g->dim, pred, c32 + FL_NARROW_PAD, k->valid, r);
    }
    if (delta)
        r[0] = (int64_t)((uint64_t)k->q[0] - (uint64_t)*prev);
    *prev = k->q[0];
    return write_block(p, hdr, r);
}

/* Pass A: choose the tile's predictor and corner mode, set each block's header byte, and write
 * the tile's payload into its own slot of scratch (pass C moves it into place). */
static void code_tile(const fl_geom *g, const qz_quant *Q, const void *in, uint64_t t,
                      unsigned esize, uint8_t *hdrs, tile_sum *ts, uint8_t *scratch)
{
    fl_blk ks[FL_TILE];
    int64_t r[FL_BLOCK];
    unsigned np = fl_npred(g), hdr[FL_NPRED][2][FL_TILE], usable[FL_NPRED] = {1, 1, 1, 1};
    uint64_t cost[FL_NPRED][2] = {{0}}, size[FL_NPRED][2][FL_TILE];
    int64_t prev = 0; /* corner of the previous coded block */
    uint64_t b0 = t * FL_TILE, nb = g->nblocks - b0 < FL_TILE ? g->nblocks - b0 : FL_TILE;

    ts->mask = 0;
    ts->fmask = 0;
    for (uint64_t i = 0; i < nb; i++) {
        fl_blk *k = &ks[i];
        load_block(g, Q, in, b0 + i, k);
        if (k->fill && k->ok)
            ts->fmask |= 1u << i;
        int coded = k->ok && !k->all_fill;
        fl_block_stat all[FL_NPRED] = {{0, 0, 0}};
        if (coded && !k->fill)
            stats_all(g, np, k, all);
        for (unsigned p = 0; p < np; p++) {
            fl_block_stat s = all[p];
            if (coded && k->fill) {
                residuals(g, p, k, r, &s);
                if (s.maxmag > FL_MAG_MAX)
                    usable[p] = 0;
            }
            for (unsigned m = 0; m < 2; m++) {
                unsigned h = 0;
                uint64_t n = 0;
                if (!k->ok) {
                    h = FL_HDR_RAW;
                } else if (coded) {
                    s.r0 = m ? (int64_t)((uint64_t)k->q[0] - (uint64_t)prev) : k->q[0];
                    h = fl_block_header(&s);
                }
                if (h || (coded && k->fill)) /* a fill bitmap needs a header byte too */
                    n = 1 + (k->fill && k->ok ? 8u : 0u) +
                        fl_block_payload_size(h, k->nvalid, esize);
                hdr[p][m][i] = h;
                size[p][m][i] = n;
                cost[p][m] += n;
            }
        }
        if (coded)
            prev = k->q[0];
    }
    unsigned bp = FL_NPRED, bm = 0; /* none yet: chain (1-D: Lorenzo) is always usable */
    for (unsigned p = 0; p < np; p++)
        for (unsigned m = 0; m < 2; m++)
            if (usable[p] && (bp == FL_NPRED || cost[p][m] < cost[bp][bm])) {
                bp = p;
                bm = m;
            }
    ts->pred = (uint8_t)(bp | (bm ? FL_TILE_CORNER_DELTA : 0u));
    ts->nhdr = 0;
    ts->bytes = 0;
    uint8_t *out = scratch + t * FL_TILE * block_cap(esize);
    prev = 0;
    for (uint64_t i = 0; i < nb; i++) {
        unsigned h = hdr[bp][bm][i];
        hdrs[b0 + i] = (uint8_t)h;
        if (!size[bp][bm][i]) /* empty: a delta-coded corner repeats the previous one */
            continue;
        ts->mask |= 1u << i;
        ts->nhdr++;
        ts->bytes += size[bp][bm][i] - 1;
        if (h == FL_HDR_RAW) {
            uint64_t z0, y0, x0;
            fl_block_origin(g, b0 + i, &z0, &y0, &x0);
            for (unsigned e = 0; e < FL_BLOCK; e++) {
                uint64_t x = x0 + e % g->bx, y = y0 + (e / g->bx) % g->by,
                         z = z0 + e / (g->bx * g->by);
                if (ks[i].valid[e]) {
                    memcpy(out, (const uint8_t *)in + ((z * g->ny + y) * g->nx + x) * esize,
                           esize);
                    out += esize;
                }
            }
        } else {
            out = code_block(g, &ks[i], h, bp, bm, &prev, out);
        }
    }
}

/* Pass C: the tile's header bytes and payload at their final offsets. */
static void place_tile(const fl_geom *g, uint64_t t, unsigned esize, const uint8_t *hdrs,
                       const tile_sum *ts, const uint8_t *scratch, uint8_t *hdr_out,
                       uint8_t *pay_out)
{
    uint8_t *h = hdr_out + ts->hdr_off;
    uint64_t b0 = t * FL_TILE, nb = g->nblocks - b0 < FL_TILE ? g->nblocks - b0 : FL_TILE;
    for (unsigned i = 0; i < nb; i++)
        if (ts->mask >> i & 1u)
            *h++ = hdrs[b0 + i];
    memcpy(pay_out + ts->off, scratch + t * FL_TILE * block_cap(esize), ts->bytes);
}

typedef struct enc_ctx {
    const fl_geom *g;
    const qz_quant *Q;
    const void *in;
    unsigned esize;
    uint8_t *hdrs;
    tile_sum *ts;
    uint8_t *scratch, *hdr_out, *pay_out;
} enc_ctx;

static void code_task(void *arg, uint64_t t)
{
    enc_ctx *c = arg;
    code_tile(c->g, c->Q, c->in, t, c->esize, c->hdrs, &c->ts[t], c->scratch);
}

static void place_task(void *arg, uint64_t t)
{
    enc_ctx *c = arg;
    place_tile(c->g, t, c->esize, c->hdrs, &c->ts[t], c->scratch, c->hdr_out, c->pay_out);
}

h5zgpu_status fl_encode_cpu(const fl_geom *g, const qz_quant *Q, const void *in, uint8_t *out,
                            uint64_t cap, uint64_t *len)
{
    unsigned esize = Q->is_f32 ? 4u : 8u;
    uint8_t *hdrs = malloc(g->nblocks ? g->nblocks : 1);
    tile_sum *ts = malloc(sizeof *ts * (g->ntiles ? g->ntiles : 1));
    uint8_t *scratch = hz_scratch(g->ntiles * FL_TILE * block_cap(esize));
    h5zgpu_status st = H5ZGPU_OK;
    if (!hdrs || !ts || !scratch) {
        st = H5ZGPU_E_NOMEM;
        goto done;
    }
    enc_ctx ctx = {g, Q, in, esize, hdrs, ts, scratch, NULL, NULL};
    hz_parallel_for(g->ntiles, code_task, &ctx);

    uint64_t nhdr = 0, bytes = 0;
    for (uint64_t t = 0; t < g->ntiles; t++) {
        ts[t].hdr_off = nhdr;
        ts[t].off = bytes;
        nhdr += ts[t].nhdr;
        bytes += ts[t].bytes;
    }
    uint64_t tables = fl_tables_size(g, Q->has_fill), total = tables + nhdr + bytes;
    if (total > cap) {
        st = H5ZGPU_E_OUTPUT_TOO_SMALL;
        goto done;
    }
    qz_put_anchor(out + FL_OFF_BASE, Q);
    for (uint64_t t = 0; t < g->ntiles; t++) {
        hz_put_u32(out + FL_OFF_MASKS + 4 * t, ts[t].mask);
        out[FL_OFF_MASKS + 4 * g->ntiles + t] = ts[t].pred;
        if (Q->has_fill)
            hz_put_u32(out + FL_OFF_MASKS + 5 * g->ntiles + 4 * t, ts[t].fmask);
    }
    ctx.hdr_out = out + tables;
    ctx.pay_out = out + tables + nhdr;
    hz_parallel_for(g->ntiles, place_task, &ctx);
    *len = total;
done:
    free(hdrs);
    free(ts);
    hz_scratch_free(scratch);
    return st;
}

/* Residuals of a coded block from its payload; the payload size was checked by the caller. */
static h5zgpu_status read_block(const uint8_t *p, unsigned hdr, int64_t r[FL_BLOCK])
{
    unsigned code = hdr & 63u, wb = fl_wbytes(hdr >> 6);
    uint64_t z0 = 0;
    memset(r, 0, sizeof(int64_t) * FL_BLOCK);
    for (unsigned i = 0; i < wb; i++)
        z0 |= (uint64_t)*p++ << (8 * i);
    r[0] = hz_unzigzag(z0);
    if (code > FL_SPARSE_BASE) {
        unsigned last = 0;
        for (unsigned k = 0; k < code - FL_SPARSE_BASE; k++) {
            unsigned b = *p++, e = b & 63u;
            int64_t m = (b & 0x80u) ? 2 : 1;
            if (e <= last)   /* positions are 1..63, strictly increasing */
                return H5ZGPU_E_CORRUPT;
            last = e;
            r[e] = (b & 0x40u) ? -m : m;
        }
    } else if (code > 0) {
        uint64_t sign = hz_get_u64(p);
        uint32_t m[FL_BLOCK] = {0};   /* code <= 32 planes */
        p += 8;
        for (unsigned j = 0; j < code; j++, p += 8) {
            uint64_t pl = hz_get_u64(p);
            for (unsigned e = 1; e < FL_BLOCK; e++)
                m[e] |= (uint32_t)((pl >> e) & 1u) << j;
        }
        for (unsigned e = 1; e < FL_BLOCK; e++)
            r[e] = (sign >> e & 1u) ? -(int64_t)m[e] : (int64_t)m[e];
    }
    return H5ZGPU_OK;
}

/* The mean's codes from the residuals r, element by element: it rounds, so its codes are not
 * sums of the residuals. fl_mean_at's values (fl_predict_at's), with the block shape a
 * constant. */
HZ_INLINE void reconstruct_mean_in(unsigned bz, unsigned by, unsigned bx, const int64_t *r,
                                   int64_t *q)
{
    for (unsigned z = 0, e = 0; z < bz; z++)
        for (unsigned y = 0; y < by; y++)
            for (unsigned x = 0; x < bx; x++, e++)
                q[e] = (int64_t)((uint64_t)r[e] + fl_mean_at(q, e, z, y, x, by, bx));
}

static void reconstruct_mean(const fl_geom *g, const int64_t *r, int64_t *q)
{
    if (g->dim == 3)
        reconstruct_mean_in(4, 4, 4, r, q);
    else if (g->dim == 2)
        reconstruct_mean_in(1, 8, 8, r, q);
    else
        reconstruct_mean_in(1, 1, 64, r, q);
}

/* fl_reconstruct_sums with the block shape of each dimensionality a constant, compiled for each
 * instruction set HZ_CPU_CLONES names. */
HZ_CPU_CLONES static void reconstruct_sums(unsigned dim, unsigned pred, uint64_t *q)
{
    if (dim == 3)
        fl_reconstruct_sums(pred, 4, 4, 4, q);
    else if (dim == 2)
        fl_reconstruct_sums(pred, 1, 8, 8, q);
    else
        fl_reconstruct_sums(pred, 1, 1, 64, q);
}

/* A block's codes q from its residuals r under predictor pred. */
static void reconstruct(const fl_geom *g, unsigned pred, const int64_t *r, int64_t *q)
{
    if (pred == FL_PRED_MEAN) {
        reconstruct_mean(g, r, q);
        return;
    }
    memcpy(q, r, sizeof(int64_t) * FL_BLOCK);
    reconstruct_sums(g->dim, pred, (uint64_t *)q);
}

/* The values of a decoded block (codes q, fill bit e for element e) into the chunk. */
static void store_block(const fl_geom *g, const qz_quant *Q, uint64_t z0, uint64_t y0,
                        uint64_t x0, const int64_t *q, uint64_t fill, void *out)
{
    const unsigned ez = (unsigned)(g->nz - z0 < g->bz ? g->nz - z0 : g->bz);
    const unsigned ey = (unsigned)(g->ny - y0 < g->by ? g->ny - y0 : g->by);
    const unsigned ex = (unsigned)(g->nx - x0 < g->bx ? g->nx - x0 : g->bx);
    for (unsigned z = 0; z < ez; z++)
        for (unsigned y = 0; y < ey; y++) {
            const unsigned e0 = (z * g->by + y) * g->bx;
            const uint64_t idx = ((z0 + z) * g->ny + y0 + y) * g->nx + x0;
            for (unsigned x = 0; x < ex; x++) {
                if (fill >> (e0 + x) & 1u) {
                    hz_put_element(out, Q->is_f32, idx + x, Q->fill_bits);
                } else {
                    const double v = qz_reconstruct(Q, q[e0 + x]);
                    if (Q->is_f32)
                        ((float *)out)[idx + x] = (float)v;
                    else
                        ((double *)out)[idx + x] = v;
                }
            }
        }
}

static h5zgpu_status decode_tile(const fl_geom *g, const qz_quant *Q, uint64_t t,
                                 const tile_sum *ts, const uint8_t *h, const uint8_t *p,
                                 void *out)
{
    unsigned esize = Q->is_f32 ? 4u : 8u, delta = ts->pred >> 7;
    unsigned pred = ts->pred & ~FL_TILE_CORNER_DELTA;
    int64_t q[FL_BLOCK], r[FL_BLOCK], prev = 0;
    uint64_t b0 = t * FL_TILE, nb = g->nblocks - b0 < FL_TILE ? g->nblocks - b0 : FL_TILE;
    for (uint64_t i = 0; i < nb; i++) {
        uint64_t b = b0 + i, z0, y0, x0, fill = 0;
        unsigned hdr = 0, has_hdr = ts->mask >> i & 1u, has_fill = ts->fmask >> i & 1u;
        fl_block_origin(g, b, &z0, &y0, &x0);
        uint64_t nvalid = fl_block_nvalid(g, z0, y0, x0);
        if (has_hdr)
            hdr = *h++;
        if (hdr == FL_HDR_RAW) {
            for (unsigned e = 0; e < FL_BLOCK; e++) {
                uint64_t x = x0 + e % g->bx, y = y0 + (e / g->bx) % g->by,
                         z = z0 + e / (g->bx * g->by);
                if (x < g->nx && y < g->ny && z < g->nz) {
                    memcpy((uint8_t *)out + ((z * g->ny + y) * g->nx + x) * esize, p, esize);
                    p += esize;
                }
            }
            continue;
        }
        if (has_fill && !has_hdr) { /* every element is fill */
            fill = ~UINT64_C(0);
        } else {
            if (has_fill) {
                fill = hz_get_u64(p);
                p += 8;
            }
            memset(r, 0, sizeof r);
            if (hdr) {
                if (read_block(p, hdr, r) != H5ZGPU_OK)
                    return H5ZGPU_E_CORRUPT;
                p += fl_block_payload_size(hdr, nvalid, esize);
            }
            if (delta)
                r[0] = (int64_t)((uint64_t)r[0] + (uint64_t)prev);
            reconstruct(g, pred, r, q);
            prev = q[0];
        }
        store_block(g, Q, z0, y0, x0, q, fill, out);
    }
    return H5ZGPU_OK;
}

typedef struct dec_ctx {
    const fl_geom *g;
    const qz_quant *Q;
    const tile_sum *ts;
    const uint8_t *hdrs, *pay;
    void *out;
    int bad;
} dec_ctx;

static void decode_task(void *arg, uint64_t t)
{
    dec_ctx *c = arg;
    if (decode_tile(c->g, c->Q, t, &c->ts[t], c->hdrs + c->ts[t].hdr_off, c->pay + c->ts[t].off,
                    c->out) != H5ZGPU_OK)
        __atomic_store_n(&c->bad, 1, __ATOMIC_RELAXED);
}

h5zgpu_status fl_decode_cpu(const fl_geom *g, qz_quant *Q, const uint8_t *in, uint64_t len,
                            void *out)
{
    unsigned esize = Q->is_f32 ? 4u : 8u, np = fl_npred(g);
    uint64_t tables = fl_tables_size(g, Q->has_fill);
    if (len < tables)
        return H5ZGPU_E_CORRUPT;
    if (!qz_get_anchor(in + FL_OFF_BASE, Q))
        return H5ZGPU_E_CORRUPT;
    tile_sum *ts = malloc(sizeof *ts * (g->ntiles ? g->ntiles : 1));
    if (!ts)
        return H5ZGPU_E_NOMEM;
    h5zgpu_status st = H5ZGPU_E_CORRUPT;
    uint64_t nhdr = 0;
    for (uint64_t t = 0; t < g->ntiles; t++) {
        uint64_t nb = g->nblocks - t * FL_TILE < FL_TILE ? g->nblocks - t * FL_TILE : FL_TILE;
        ts[t].mask = hz_get_u32(in + FL_OFF_MASKS + 4 * t);
        ts[t].pred = in[FL_OFF_MASKS + 4 * g->ntiles + t];
        ts[t].fmask = Q->has_fill ? hz_get_u32(in + FL_OFF_MASKS + 5 * g->ntiles + 4 * t) : 0;
        if ((ts[t].pred & ~FL_TILE_CORNER_DELTA) >= np ||
            (nb < FL_TILE && ((ts[t].mask | ts[t].fmask) >> nb) != 0))
            goto done;
        ts[t].hdr_off = nhdr;
        ts[t].nhdr = (uint64_t)__builtin_popcount(ts[t].mask);
        nhdr += ts[t].nhdr;
    }
    if (nhdr > len - tables)
        goto done;
    const uint8_t *hdrs = in + tables;
    uint64_t bytes = 0, avail = len - tables - nhdr;
    for (uint64_t t = 0; t < g->ntiles; t++) {
        const uint8_t *h = hdrs + ts[t].hdr_off;
        ts[t].off = bytes;
        for (unsigned i = 0; i < FL_TILE; i++) {
            if (!(ts[t].mask >> i & 1u))
                continue;
            uint64_t z0, y0, x0;
            unsigned hdr = *h++, has_fill = ts[t].fmask >> i & 1u;
            if (!fl_header_valid(hdr, has_fill))
                goto done;
            fl_block_origin(g, t * FL_TILE + i, &z0, &y0, &x0);
            bytes += (has_fill ? 8u : 0u) +
                     fl_block_payload_size(hdr, fl_block_nvalid(g, z0, y0, x0), esize);
        }
        if (bytes > avail)
            goto done;
    }
    if (bytes != avail)
        goto done;
    dec_ctx ctx = {g, Q, ts, hdrs, hdrs + nhdr, out, 0};
    hz_parallel_for(g->ntiles, decode_task, &ctx);
    st = ctx.bad ? H5ZGPU_E_CORRUPT : H5ZGPU_OK;
done:
    free(ts);
    return st;
}
