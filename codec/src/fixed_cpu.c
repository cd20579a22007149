/* Fixed-length codec, CPU reference. Tiles are independent until their offsets are summed, so
 * both directions run as: per tile in parallel, prefix sum, per tile in parallel. */
#include "fixed.h"

#include <stdlib.h>
#include <string.h>

int fl_geom_init(fl_geom *g, unsigned rank, const uint64_t *dims)
{
    uint64_t nu[H5ZGPU_MAX_RANK];
    unsigned k = 0;
    memset(g, 0, sizeof *g);
    for (unsigned i = 0; i < rank; i++) {
        if (dims[i] == 0)
            return -1;
        if (dims[i] > 1)
            nu[k++] = dims[i];
    }
    g->nz = g->ny = g->nx = 1;
    if (k > 3) { /* merge the leading dimensions into z */
        uint64_t lead = 1;
        for (unsigned i = 0; i + 2 < k; i++)
            lead *= nu[i];
        nu[0] = lead;
        nu[1] = nu[k - 2];
        nu[2] = nu[k - 1];
        k = 3;
    }
    if (k == 3) {
        g->nz = nu[0];
        g->ny = nu[1];
        g->nx = nu[2];
    } else if (k == 2) {
        g->ny = nu[0];
        g->nx = nu[1];
    } else if (k == 1) {
        g->nx = nu[0];
    }
    g->dim = k < 1 ? 1 : k;
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

uint64_t fl_payload_bound(const fl_geom *g, unsigned esize)
{
    return fl_tables_size(g) + g->nblocks + g->nz * g->ny * g->nx * esize;
}

void fl_quant_init(fl_quant *Q, h5zgpu_mode mode, double eb, int is_f32, int any, double lo,
                   double hi)
{
    memset(Q, 0, sizeof *Q);
    Q->pwrel = mode == H5ZGPU_MODE_PWREL;
    Q->is_f32 = is_f32;
    /* ABS/REL: the finite value nearest 0 keeps codes small for fields centred on 0 */
    Q->base = !any ? 0.0 : (mode == H5ZGPU_MODE_PWREL || lo > 0 ? lo : (hi < 0 ? hi : 0.0));
    Q->eb = eb;
    if (mode == H5ZGPU_MODE_REL)
        Q->eb = any ? eb * (hi - lo) : 0.0;
    Q->twoeb = 2.0 * Q->eb;
    Q->inv2eb = Q->eb > 0 ? 1.0 / Q->twoeb : 0.0;
}

void fl_stats_cpu(const void *in, uint64_t n, int is_f32, h5zgpu_mode mode, int *any, double *lo,
                  double *hi)
{
    const float *f = (const float *)in;
    const double *d = (const double *)in;
    double mn = 0, mx = 0;
    int seen = 0;
    for (uint64_t i = 0; i < n; i++) {
        double v = is_f32 ? (double)f[i] : d[i];
        if (!hz_is_finite(v))
            continue;
        if (mode == H5ZGPU_MODE_PWREL) {
            if (v == 0.0)
                continue;
            v = fl_log2lin(v < 0 ? -v : v);
        }
        if (!seen || v < mn)
            mn = v;
        if (!seen || v > mx)
            mx = v;
        seen = 1;
    }
    *any = seen;
    *lo = mn;
    *hi = mx;
}

/* One block's values in block order; returns how many lie inside the chunk. */
static uint64_t load_block(const fl_geom *g, const void *in, int is_f32, uint64_t b,
                           double v[FL_BLOCK], unsigned char valid[FL_BLOCK])
{
    uint64_t z0, y0, x0, nvalid = 0;
    fl_block_origin(g, b, &z0, &y0, &x0);
    for (unsigned e = 0; e < FL_BLOCK; e++) {
        uint64_t x = x0 + e % g->bx, y = y0 + (e / g->bx) % g->by, z = z0 + e / (g->bx * g->by);
        valid[e] = x < g->nx && y < g->ny && z < g->nz;
        v[e] = 0;
        if (valid[e]) {
            uint64_t i = (z * g->ny + y) * g->nx + x;
            v[e] = is_f32 ? (double)((const float *)in)[i] : ((const double *)in)[i];
            nvalid++;
        }
    }
    return nvalid;
}

static void residuals(const fl_geom *g, unsigned pred, const int64_t q[FL_BLOCK],
                      const unsigned char valid[FL_BLOCK], int64_t r[FL_BLOCK],
                      fl_block_stat *s)
{
    unsigned e = 0;
    s->maxmag = 0;
    s->nnz = 0;
    for (unsigned z = 0; z < g->bz; z++)
        for (unsigned y = 0; y < g->by; y++)
            for (unsigned x = 0; x < g->bx; x++, e++) {
                r[e] = valid[e] ? (int64_t)((uint64_t)q[e] -
                                            (uint64_t)fl_predict_at(pred, g->by, g->bx, q, z, y, x))
                                : 0;
                if (e > 0 && r[e]) {
                    uint64_t m = r[e] < 0 ? (uint64_t)-r[e] : (uint64_t)r[e];
                    s->maxmag = m > s->maxmag ? m : s->maxmag;
                    s->nnz++;
                }
            }
    s->r0 = r[0];
}

/* Quantises a block; returns 0 if some value must be stored raw (then the block is raw). */
static int quantize_block(const fl_quant *Q, const double v[FL_BLOCK],
                          const unsigned char valid[FL_BLOCK], int64_t q[FL_BLOCK])
{
    int ok = 1;
    for (unsigned e = 0; e < FL_BLOCK; e++) {
        q[e] = 0;
        if (valid[e] && !fl_quantize(Q, v[e], &q[e]))
            ok = 0;
    }
    return ok;
}

static uint8_t *write_block(uint8_t *p, unsigned hdr, const int64_t r[FL_BLOCK])
{
    unsigned code = hdr & 63u, wb = fl_wbytes(hdr >> 6);
    uint64_t z0 = fl_zigzag(r[0]);
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
    uint32_t mask;
    uint8_t pred;
    uint64_t nhdr, bytes;     /* this tile's header bytes and payload bytes */
    uint64_t hdr_off, off;    /* exclusive prefix sums */
} tile_sum;

/* Pass A: choose the tile's predictor and corner mode, and each block's header byte. */
static void analyse_tile(const fl_geom *g, const fl_quant *Q, const void *in, uint64_t t,
                         unsigned esize, uint8_t *hdrs, tile_sum *ts)
{
    double v[FL_BLOCK];
    unsigned char valid[FL_BLOCK];
    int64_t q[FL_BLOCK], r[FL_BLOCK];
    unsigned np = fl_npred(g), hdr[FL_NPRED][2][FL_TILE];
    uint64_t cost[FL_NPRED][2] = {{0}}, size[FL_NPRED][2][FL_TILE];
    int64_t prev = 0; /* corner of the previous coded block */
    uint64_t b0 = t * FL_TILE, nb = g->nblocks - b0 < FL_TILE ? g->nblocks - b0 : FL_TILE;

    for (uint64_t i = 0; i < nb; i++) {
        uint64_t nvalid = load_block(g, in, Q->is_f32, b0 + i, v, valid);
        int ok = quantize_block(Q, v, valid, q);
        for (unsigned p = 0; p < np; p++) {
            fl_block_stat s = {0, 0, 0};
            if (ok)
                residuals(g, p, q, valid, r, &s);
            for (unsigned m = 0; m < 2; m++) {
                if (ok) {
                    s.r0 = m ? (int64_t)((uint64_t)q[0] - (uint64_t)prev) : q[0];
                    hdr[p][m][i] = fl_block_header(&s);
                } else {
                    hdr[p][m][i] = FL_HDR_RAW;
                }
                size[p][m][i] =
                    hdr[p][m][i] ? 1 + fl_block_payload_size(hdr[p][m][i], nvalid, esize) : 0;
                cost[p][m] += size[p][m][i];
            }
        }
        if (ok)
            prev = q[0];
    }
    unsigned bp = 0, bm = 0;
    for (unsigned p = 0; p < np; p++)
        for (unsigned m = 0; m < 2; m++)
            if (cost[p][m] < cost[bp][bm]) {
                bp = p;
                bm = m;
            }
    ts->pred = (uint8_t)(bp | (bm ? FL_TILE_CORNER_DELTA : 0u));
    ts->mask = 0;
    ts->nhdr = 0;
    ts->bytes = 0;
    for (uint64_t i = 0; i < nb; i++) {
        hdrs[b0 + i] = (uint8_t)hdr[bp][bm][i];
        if (hdr[bp][bm][i]) {
            ts->mask |= 1u << i;
            ts->nhdr++;
            ts->bytes += size[bp][bm][i] - 1;
        }
    }
}

/* Pass C: write the tile's header bytes and block payloads at their final offsets. */
static void write_tile(const fl_geom *g, const fl_quant *Q, const void *in, uint64_t t,
                       unsigned esize, const uint8_t *hdrs, const tile_sum *ts, uint8_t *hdr_out,
                       uint8_t *pay_out)
{
    double v[FL_BLOCK];
    unsigned char valid[FL_BLOCK];
    int64_t q[FL_BLOCK], r[FL_BLOCK];
    uint8_t *h = hdr_out + ts->hdr_off, *p = pay_out + ts->off;
    uint64_t b0 = t * FL_TILE, nb = g->nblocks - b0 < FL_TILE ? g->nblocks - b0 : FL_TILE;
    unsigned pred = ts->pred & ~FL_TILE_CORNER_DELTA, delta = ts->pred >> 7;
    int64_t prev = 0; /* corner of the previous coded block */
    for (unsigned i = 0; i < nb; i++) {
        uint64_t b = b0 + i;
        unsigned hdr = hdrs[b];
        if (hdr == 0) /* empty: a delta-coded corner repeats the previous one */
            continue;
        *h++ = (uint8_t)hdr;
        load_block(g, in, Q->is_f32, b, v, valid);
        if (hdr == FL_HDR_RAW) {
            for (unsigned e = 0; e < FL_BLOCK; e++) {
                if (!valid[e])
                    continue;
                if (Q->is_f32) {
                    float f = (float)v[e];
                    memcpy(p, &f, 4);
                } else {
                    memcpy(p, &v[e], 8);
                }
                p += esize;
            }
        } else {
            fl_block_stat s;
            quantize_block(Q, v, valid, q);
            residuals(g, pred, q, valid, r, &s);
            if (delta)
                r[0] = (int64_t)((uint64_t)q[0] - (uint64_t)prev);
            prev = q[0];
            p = write_block(p, hdr, r);
        }
    }
}

h5zgpu_status fl_encode_cpu(const fl_geom *g, const fl_quant *Q, const void *in, uint8_t *out,
                            uint64_t cap, uint64_t *len)
{
    unsigned esize = Q->is_f32 ? 4u : 8u;
    uint8_t *hdrs = malloc(g->nblocks ? g->nblocks : 1);
    tile_sum *ts = malloc(sizeof *ts * (g->ntiles ? g->ntiles : 1));
    h5zgpu_status st = H5ZGPU_OK;
    if (!hdrs || !ts) {
        st = H5ZGPU_E_NOMEM;
        goto done;
    }
    int64_t nt = (int64_t)g->ntiles;
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t t = 0; t < nt; t++)
        analyse_tile(g, Q, in, (uint64_t)t, esize, hdrs, &ts[t]);

    uint64_t nhdr = 0, bytes = 0;
    for (uint64_t t = 0; t < g->ntiles; t++) {
        ts[t].hdr_off = nhdr;
        ts[t].off = bytes;
        nhdr += ts[t].nhdr;
        bytes += ts[t].bytes;
    }
    uint64_t tables = fl_tables_size(g), total = tables + nhdr + bytes;
    if (total > cap) {
        st = H5ZGPU_E_OUTPUT_TOO_SMALL;
        goto done;
    }
    hz_put_f64(out + FL_OFF_BASE, Q->base);
    for (uint64_t t = 0; t < g->ntiles; t++) {
        hz_put_u32(out + FL_OFF_MASKS + 4 * t, ts[t].mask);
        out[FL_OFF_MASKS + 4 * g->ntiles + t] = ts[t].pred;
    }
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t t = 0; t < nt; t++)
        write_tile(g, Q, in, (uint64_t)t, esize, hdrs, &ts[t], out + tables,
                   out + tables + nhdr);
    *len = total;
done:
    free(hdrs);
    free(ts);
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
    r[0] = fl_unzigzag(z0);
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
        p += 8;
        for (unsigned j = 0; j < code; j++, p += 8) {
            uint64_t pl = hz_get_u64(p);
            for (unsigned e = 1; e < FL_BLOCK; e++)
                r[e] |= (int64_t)(((pl >> e) & 1u) << j);
        }
        for (unsigned e = 1; e < FL_BLOCK; e++)
            if (sign >> e & 1u)
                r[e] = -r[e];
    }
    return H5ZGPU_OK;
}

static h5zgpu_status decode_tile(const fl_geom *g, const fl_quant *Q, uint64_t t, uint32_t mask,
                                 unsigned pred, const uint8_t *h, const uint8_t *p, void *out)
{
    unsigned esize = Q->is_f32 ? 4u : 8u, delta = pred >> 7;
    int64_t q[FL_BLOCK], r[FL_BLOCK], prev = 0;
    uint64_t b0 = t * FL_TILE, nb = g->nblocks - b0 < FL_TILE ? g->nblocks - b0 : FL_TILE;
    pred &= ~FL_TILE_CORNER_DELTA;
    for (uint64_t i = 0; i < nb; i++) {
        uint64_t b = b0 + i, z0, y0, x0;
        unsigned hdr = 0;
        fl_block_origin(g, b, &z0, &y0, &x0);
        uint64_t nvalid = fl_block_nvalid(g, z0, y0, x0);
        if (mask >> i & 1u)
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
        if (hdr) {
            if (read_block(p, hdr, r) != H5ZGPU_OK)
                return H5ZGPU_E_CORRUPT;
            p += fl_block_payload_size(hdr, nvalid, esize);
        } else {
            memset(r, 0, sizeof r);
        }
        if (delta)
            r[0] = (int64_t)((uint64_t)r[0] + (uint64_t)prev);
        for (unsigned z = 0, e = 0; z < g->bz; z++)
            for (unsigned y = 0; y < g->by; y++)
                for (unsigned x = 0; x < g->bx; x++, e++)
                    q[e] = (int64_t)((uint64_t)r[e] +
                                     (uint64_t)fl_predict_at(pred, g->by, g->bx, q, z, y, x));
        prev = q[0];
        for (unsigned e = 0; e < FL_BLOCK; e++) {
            uint64_t x = x0 + e % g->bx, y = y0 + (e / g->bx) % g->by, z = z0 + e / (g->bx * g->by);
            if (x >= g->nx || y >= g->ny || z >= g->nz)
                continue;
            double v = fl_reconstruct(Q, q[e]);
            uint64_t idx = (z * g->ny + y) * g->nx + x;
            if (Q->is_f32)
                ((float *)out)[idx] = (float)v;
            else
                ((double *)out)[idx] = v;
        }
    }
    return H5ZGPU_OK;
}

h5zgpu_status fl_decode_cpu(const fl_geom *g, fl_quant *Q, const uint8_t *in, uint64_t len,
                            void *out)
{
    unsigned esize = Q->is_f32 ? 4u : 8u, np = fl_npred(g);
    uint64_t tables = fl_tables_size(g);
    if (len < tables)
        return H5ZGPU_E_CORRUPT;
    Q->base = hz_get_f64(in + FL_OFF_BASE);
    if (!hz_is_finite(Q->base))
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
        if ((ts[t].pred & ~FL_TILE_CORNER_DELTA) >= np || (nb < FL_TILE && (ts[t].mask >> nb) != 0))
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
            unsigned hdr = *h++;
            if (!fl_header_valid(hdr))
                goto done;
            fl_block_origin(g, t * FL_TILE + i, &z0, &y0, &x0);
            bytes += fl_block_payload_size(hdr, fl_block_nvalid(g, z0, y0, x0), esize);
        }
        if (bytes > avail)
            goto done;
    }
    if (bytes != avail)
        goto done;
    const uint8_t *pay = hdrs + nhdr;
    int bad = 0;
    int64_t nt = (int64_t)g->ntiles;
#pragma omp parallel for schedule(dynamic, 64) reduction(| : bad)
    for (int64_t t = 0; t < nt; t++)
        bad |= decode_tile(g, Q, (uint64_t)t, ts[t].mask, ts[t].pred, hdrs + ts[t].hdr_off,
                           pay + ts[t].off, out) != H5ZGPU_OK;
    st = bad ? H5ZGPU_E_CORRUPT : H5ZGPU_OK;
done:
    free(ts);
    return st;
}
