/* Fixed-length codec kernels: one CTA a tile, one warp a block at a time, two elements a lane
 * (e = lane and lane + 32). Tile offsets come from a decoupled look-back (lookback.cuh); every
 * value is computed by the same inline functions as the CPU reference (fixed_common.h), so the
 * bytes match fixed_cpu.c exactly. */
#include "kernels.h"
#include "lookback.cuh"

#include <type_traits>

#define HDR_CODED_MAX (4u + 8u + 8u * FL_MAX_PLANES)   /* corner + sign + 32 planes */

template <int DIM> struct blk_shape;
template <> struct blk_shape<3> { enum { BX = 4, BY = 4, BZ = 4, NP = 4 }; };
template <> struct blk_shape<2> { enum { BX = 8, BY = 8, BZ = 1, NP = 3 }; };
template <> struct blk_shape<1> { enum { BX = 64, BY = 1, BZ = 1, NP = 1 }; };

/* Element e of the block at (z0, y0, x0): whether it lies inside the chunk, and its index. */
template <int DIM>
__device__ __forceinline__ bool elem_index(const fl_geom &g, uint64_t z0, uint64_t y0,
                                           uint64_t x0, unsigned e, uint64_t *idx)
{
    typedef blk_shape<DIM> S;
    uint64_t x = x0 + e % S::BX, y = y0 + (e / S::BX) % S::BY, z = z0 + e / (S::BX * S::BY);
    *idx = (z * g.ny + y) * g.nx + x;
    return x < g.nx && y < g.ny && z < g.nz;
}

__device__ __forceinline__ unsigned lanemask_lt()
{
    return (1u << (threadIdx.x & 31u)) - 1u;
}

/* Bits of a raw element, copied as they are (NaN payloads and signalling NaNs included). */
__device__ __forceinline__ uint64_t raw_bits(const float *p)
{
    return __float_as_uint(*p);
}

__device__ __forceinline__ uint64_t raw_bits(const double *p)
{
    return (uint64_t)__double_as_longlong(*p);
}

__device__ __forceinline__ void put_bytes(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* q[e] - prediction, in the CPU's wrap-safe arithmetic; 0 outside the chunk. */
template <int DIM>
__device__ __forceinline__ int64_t residual(unsigned pred, const int64_t *q, unsigned e, bool valid)
{
    typedef blk_shape<DIM> S;
    return valid ? (int64_t)((uint64_t)q[e] - (uint64_t)fl_predict(pred, S::BY, S::BX, q, e)) : 0;
}

__device__ __forceinline__ uint32_t magnitude(int64_t r)
{
    return (uint32_t)(r < 0 ? (uint64_t)-r : (uint64_t)r);   /* |r| <= 2^31 (QZ_QMAX) */
}

/* Codes of a block with fill elements under a predictor (one lane): each fill element past the
 * corner takes its prediction, as fixed_cpu.c's residuals() does, so its residual is 0 and the
 * warp's residual code applies unchanged to s. */
template <int DIM>
__device__ void fill_codes(unsigned pred, const int64_t *q, uint64_t fill, int64_t *s)
{
    typedef blk_shape<DIM> S;
    for (unsigned e = 0; e < FL_BLOCK; e++)
        s[e] = (e && (fill >> e & 1u)) ? fl_predict(pred, S::BY, S::BX, s, e) : q[e];
}

struct enc_args {
    fl_geom g;
    qz_quant Q;
    const void *in;
    uint8_t *tab;               /* base | masks | predictors | header bytes */
    uint8_t *pay;               /* block payloads, from offset 0 */
    uint64_t paycap;
    unsigned long long *st_hdr, *st_bytes;
    hzc_scalars *sc;
};

template <typename T, int DIM>
__global__ void __launch_bounds__(HZC_THREADS) fl_encode_kernel(const enc_args a)
{
    typedef blk_shape<DIM> S;
    const unsigned esize = sizeof(T);
    __shared__ int64_t q_s[FL_TILE][FL_BLOCK];
    __shared__ int64_t prev_s[FL_TILE];          /* q0 of the previous coded block (delta) */
    __shared__ int64_t own_s[HZC_WARPS][FL_BLOCK];  /* codes of a block with fill elements */
    __shared__ uint64_t fill_s[FL_TILE];         /* bit e: element e is fill */
    __shared__ uint32_t mag_s[S::NP][FL_TILE];
    __shared__ uint8_t nnz_s[S::NP][FL_TILE];
    __shared__ uint8_t ok_s[FL_TILE], allfill_s[FL_TILE], hdr_s[FL_TILE], hpos_s[FL_TILE];
    __shared__ uint32_t pos_s[FL_TILE];
    __shared__ uint64_t tile_s, hoff_s, off_s;
    __shared__ unsigned pred_s, mask_s;

    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const fl_geom &g = a.g;
    const T *in = (const T *)a.in;
    if (threadIdx.x == 0)
        tile_s = atomicAdd(&a.sc->ticket, 1ull);
    __syncthreads();
    const uint64_t t = tile_s, b0 = t * FL_TILE;
    const unsigned nb = (unsigned)min((uint64_t)FL_TILE, g.nblocks - b0);
    const qz_quant Q = a.Q;

    /* Pass A: quantise each block; its residual statistics under every predictor. The warp's
     * loads are issued together, before any of them is used. */
    T val[HZC_BLOCKS_PER_WARP][2];
    unsigned vbits = 0;   /* bit 2k + h: element h of block k lies inside the chunk */
    for (unsigned k = 0; k < HZC_BLOCKS_PER_WARP; k++) {
        const unsigned blk = warp * HZC_BLOCKS_PER_WARP + k;
        if (blk >= nb)
            break;
        uint64_t z0, y0, x0, idx;
        fl_block_origin(&g, b0 + blk, &z0, &y0, &x0);
        for (unsigned h = 0; h < 2; h++) {
            val[k][h] = 0;
            if (elem_index<DIM>(g, z0, y0, x0, lane + 32 * h, &idx)) {
                vbits |= 1u << (2 * k + h);
                val[k][h] = in[idx];
            }
        }
    }
    for (unsigned k = 0; k < HZC_BLOCKS_PER_WARP; k++) {
        const unsigned blk = warp * HZC_BLOCKS_PER_WARP + k;
        if (blk >= nb)
            break;
        bool ok = true, valid[2], isfill[2];
        for (unsigned h = 0; h < 2; h++) {
            unsigned e = lane + 32 * h;
            int64_t q = 0;
            valid[h] = vbits >> (2 * k + h) & 1u;
            isfill[h] = valid[h] && qz_is_fill(&Q, raw_bits(&val[k][h]));
            if (valid[h] && !isfill[h] && !qz_quantize(&Q, (double)val[k][h], &q))
                ok = false;
            q_s[blk][e] = q;
        }
        ok = __all_sync(FULL, ok);
        const uint64_t fill = (uint64_t)__ballot_sync(FULL, isfill[0]) |
                              (uint64_t)__ballot_sync(FULL, isfill[1]) << 32;
        const uint64_t other = (uint64_t)__ballot_sync(FULL, valid[0] && !isfill[0]) |
                               (uint64_t)__ballot_sync(FULL, valid[1] && !isfill[1]) << 32;
        if (lane == 0) {
            ok_s[blk] = ok;
            allfill_s[blk] = other == 0;
            fill_s[blk] = fill;
        }
        __syncwarp();
        if (!ok || other == 0)
            continue;
        /* a fill corner takes the code of the block's first other value */
        if ((fill & 1u) && lane == 0)
            q_s[blk][0] = q_s[blk][__ffsll((long long)other) - 1];
        __syncwarp();
        for (unsigned p = 0; p < S::NP; p++) {
            const int64_t *qs = q_s[blk];
            if (fill) {
                if (lane == 0)
                    fill_codes<DIM>(p, q_s[blk], fill, own_s[warp]);
                __syncwarp();
                qs = own_s[warp];
            }
            int64_t r0 = residual<DIM>(p, qs, lane, valid[0]);
            int64_t r1 = residual<DIM>(p, qs, lane + 32, valid[1]);
            uint32_t m = __reduce_max_sync(FULL, max(lane ? magnitude(r0) : 0u, magnitude(r1)));
            unsigned nnz = __popc(__ballot_sync(FULL, lane && r0)) + __popc(__ballot_sync(FULL, r1 != 0));
            if (lane == 0) {
                mag_s[p][blk] = m;
                nnz_s[p][blk] = (uint8_t)nnz;
            }
            __syncwarp();   /* own_s is rewritten for the next predictor */
        }
    }
    __syncthreads();

    /* Pass B (warp 0, lane i = block i): header bytes under every predictor and corner mode, the
     * cheapest pair (ties: lowest predictor, then absolute), offsets inside the tile, look-back. */
    if (warp == 0) {
        const bool inb = lane < nb, ok = inb && ok_s[lane], coded = ok && !allfill_s[lane];
        /* blocks with fill elements that are not raw: a fill-mask bit, and a bitmap when coded */
        const bool fbit = ok && fill_s[lane] != 0;
        const unsigned before = __ballot_sync(FULL, coded) & lanemask_lt();
        const int64_t q0 = coded ? q_s[lane][0] : 0;
        const int64_t prev = before ? q_s[31 - __clz(before)][0] : 0;
        uint64_t nvalid = 0;
        if (inb) {
            uint64_t z0, y0, x0;
            fl_block_origin(&g, b0 + lane, &z0, &y0, &x0);
            nvalid = fl_block_nvalid(&g, z0, y0, x0);
        }
        unsigned best = 0, hdr = 0, best_cost = 0, best_n = 0;
        for (unsigned p = 0; p < S::NP; p++)
            for (unsigned m = 0; m < 2; m++) {
                unsigned h = inb && !ok ? FL_HDR_RAW : 0u;
                if (coded) {
                    fl_block_stat st;
                    st.maxmag = mag_s[p][lane];
                    st.nnz = nnz_s[p][lane];
                    st.r0 = m ? (int64_t)((uint64_t)q0 - (uint64_t)prev) : q0;
                    h = fl_block_header(&st);
                }
                /* a fill bitmap needs a header byte too */
                const unsigned n = h || (coded && fbit)
                                       ? 1u + (fbit ? 8u : 0u) +
                                             (unsigned)fl_block_payload_size(h, nvalid, esize)
                                       : 0u;
                unsigned c = __reduce_add_sync(FULL, n);
                if ((p == 0 && m == 0) || c < best_cost) {
                    best = p | (m ? FL_TILE_CORNER_DELTA : 0u);
                    best_cost = c;
                    hdr = h;
                    best_n = n;
                }
            }
        const uint32_t size = best_n ? best_n - 1u : 0u;
        const unsigned mask = __ballot_sync(FULL, best_n != 0);
        const unsigned fmask = __ballot_sync(FULL, fbit);
        uint32_t incl = size;
        for (unsigned d = 1; d < 32; d <<= 1) {
            uint32_t v = __shfl_up_sync(FULL, incl, d);
            if (lane >= d)
                incl += v;
        }
        hdr_s[lane] = (uint8_t)hdr;
        prev_s[lane] = prev;
        pos_s[lane] = incl - size;
        hpos_s[lane] = (uint8_t)__popc(mask & lanemask_lt());
        uint64_t agg[2] = {(uint64_t)__popc(mask), __shfl_sync(FULL, incl, 31)}, excl[2];
        unsigned long long *status[2] = {a.st_hdr, a.st_bytes};
        lb_exclusive<2>(status, t, agg, excl);
        if (lane == 0) {
            hoff_s = excl[0];
            off_s = excl[1];
            pred_s = best;
            mask_s = mask;
            hz_put_u32(a.tab + FL_OFF_MASKS + 4 * t, mask);
            a.tab[FL_OFF_MASKS + 4 * g.ntiles + t] = (uint8_t)best;
            if (Q.has_fill)
                hz_put_u32(a.tab + FL_OFF_MASKS + 5 * g.ntiles + 4 * t, fmask);
            if (t == 0)
                qz_put_anchor(a.tab + FL_OFF_BASE, &Q);
            if (t == g.ntiles - 1) {
                a.sc->nhdr_total = excl[0] + agg[0];
                a.sc->bytes_total = excl[1] + agg[1];
            }
        }
    }
    __syncthreads();
    const unsigned best = pred_s & ~FL_TILE_CORNER_DELTA, delta = pred_s >> 7;

    /* Pass C: header bytes and block payloads at their final offsets. */
    const uint64_t tables = fl_tables_size(&g, Q.has_fill);
    for (unsigned k = 0; k < HZC_BLOCKS_PER_WARP; k++) {
        const unsigned blk = warp * HZC_BLOCKS_PER_WARP + k;
        if (blk >= nb)
            break;
        const unsigned hdr = hdr_s[blk];
        if (!(mask_s >> blk & 1u))   /* empty or all fill */
            continue;
        if (lane == 0)
            a.tab[tables + hoff_s + hpos_s[blk]] = (uint8_t)hdr;
        uint64_t z0, y0, x0, idx[2];
        fl_block_origin(&g, b0 + blk, &z0, &y0, &x0);
        bool valid[2];
        valid[0] = elem_index<DIM>(g, z0, y0, x0, lane, &idx[0]);
        valid[1] = elem_index<DIM>(g, z0, y0, x0, lane + 32, &idx[1]);
        const uint64_t o = off_s + pos_s[blk];
        const unsigned vb0 = __ballot_sync(FULL, valid[0]), vb1 = __ballot_sync(FULL, valid[1]);
        const uint64_t fill = hdr == FL_HDR_RAW ? 0 : fill_s[blk];
        if (o + (fill ? 8u : 0u) + fl_block_payload_size(hdr, __popc(vb0) + __popc(vb1), esize) >
            a.paycap)
            continue;   /* does not fit: the host sees the total and reports it */
        uint8_t *dst = a.pay + o;
        if (hdr == FL_HDR_RAW) {
            if (valid[0])
                put_bytes(dst + esize * __popc(vb0 & lanemask_lt()), raw_bits(in + idx[0]), esize);
            if (valid[1])
                put_bytes(dst + esize * (__popc(vb0) + __popc(vb1 & lanemask_lt())),
                          raw_bits(in + idx[1]), esize);
            continue;
        }
        const int64_t *qs = q_s[blk];
        if (fill) {
            __syncwarp();   /* own_s may still be read for the warp's previous block */
            if (lane == 0) {
                put_bytes(dst, fill, 8);
                fill_codes<DIM>(best, q_s[blk], fill, own_s[warp]);
            }
            __syncwarp();
            qs = own_s[warp];
            dst += 8;
        }
        const int64_t r0 = residual<DIM>(best, qs, lane, valid[0]);
        const int64_t r1 = residual<DIM>(best, qs, lane + 32, valid[1]);
        const unsigned code = hdr & 63u, wb = fl_wbytes(hdr >> 6);
        const int64_t corner = delta ? (int64_t)((uint64_t)q_s[blk][0] - (uint64_t)prev_s[blk])
                                     : __shfl_sync(FULL, r0, 0);
        const uint64_t zc = hz_zigzag(corner);
        if (lane < wb)
            dst[lane] = (uint8_t)(zc >> (8 * lane));
        dst += wb;
        if (code > FL_SPARSE_BASE) {
            const unsigned nz0 = __ballot_sync(FULL, lane && r0), nz1 = __ballot_sync(FULL, r1 != 0);
            if (lane && r0)
                dst[__popc(nz0 & lanemask_lt())] =
                    (uint8_t)(lane | (r0 < 0 ? 0x40u : 0u) | (magnitude(r0) == 2 ? 0x80u : 0u));
            if (r1)
                dst[__popc(nz0) + __popc(nz1 & lanemask_lt())] =
                    (uint8_t)((lane + 32) | (r1 < 0 ? 0x40u : 0u) | (magnitude(r1) == 2 ? 0x80u : 0u));
        } else if (code > 0) {
            const uint32_t m0 = lane ? magnitude(r0) : 0u, m1 = magnitude(r1);
            const uint64_t sign = (uint64_t)__ballot_sync(FULL, lane && r0 < 0) |
                                  (uint64_t)__ballot_sync(FULL, r1 < 0) << 32;
            uint64_t mine = 0;
            for (unsigned j = 0; j < code; j++) {
                uint64_t pl = (uint64_t)__ballot_sync(FULL, (m0 >> j) & 1u) |
                              (uint64_t)__ballot_sync(FULL, (m1 >> j) & 1u) << 32;
                if (lane == j)
                    mine = pl;
            }
            if (lane == 0)
                put_bytes(dst, sign, 8);
            if (lane < code)
                put_bytes(dst + 8 + 8 * lane, mine, 8);
        }
    }
}

/* The fill value's bits at element i, whatever they are (NaN payloads included). */
__device__ __forceinline__ void put_fill(float *out, uint64_t i, uint64_t bits)
{
    ((uint32_t *)out)[i] = (uint32_t)bits;
}

__device__ __forceinline__ void put_fill(double *out, uint64_t i, uint64_t bits)
{
    ((unsigned long long *)out)[i] = bits;
}

/* Every predictor reads only elements of smaller x + y + z, so a block decodes diagonal by
 * diagonal; the predictor is a template argument so that fl_predict folds to its one case. */
template <int DIM, unsigned PRED>
__device__ __forceinline__ void by_diagonals(int64_t *q, const int64_t *r)
{
    typedef blk_shape<DIM> S;
    const unsigned e0 = threadIdx.x & 31u, e1 = e0 + 32;
    const unsigned d0 = e0 % S::BX + (e0 / S::BX) % S::BY + e0 / (S::BX * S::BY);
    const unsigned d1 = e1 % S::BX + (e1 / S::BX) % S::BY + e1 / (S::BX * S::BY);
    for (unsigned d = 0; d < S::BX + S::BY + S::BZ - 2; d++) {
        if (d0 == d)
            q[e0] = (int64_t)((uint64_t)r[0] + (uint64_t)fl_predict(PRED, S::BY, S::BX, q, e0));
        if (d1 == d)
            q[e1] = (int64_t)((uint64_t)r[1] + (uint64_t)fl_predict(PRED, S::BY, S::BX, q, e1));
        __syncwarp();
    }
}

struct dec_args {
    fl_geom g;
    qz_quant Q;
    const uint8_t *in;
    uint64_t len;
    void *out;
    unsigned long long *st_hdr, *st_bytes;
    hzc_scalars *sc;
};

/* Room for one coded block's payload, placed so that its sign and magnitude planes start on an
 * 8-byte boundary whatever the corner's width. */
#define STAGE_BYTES (8u + HDR_CODED_MAX)

template <typename T, int DIM>
__global__ void __launch_bounds__(HZC_THREADS) fl_decode_kernel(const dec_args a)
{
    typedef blk_shape<DIM> S;
    const unsigned esize = sizeof(T);
    __shared__ int64_t q_s[HZC_WARPS][FL_BLOCK];
    __shared__ uint64_t stage_s[HZC_WARPS][(STAGE_BYTES + 7) / 8];
    __shared__ uint8_t hdr_s[FL_TILE];
    __shared__ uint32_t pos_s[FL_TILE];
    __shared__ int64_t prev_s[FL_TILE];   /* delta corners: q0 of the previous coded block */
    __shared__ uint64_t tile_s, pay_s;
    __shared__ unsigned pred_s, bad_s, mask_s, fmask_s;
    __shared__ qz_quant Q_s;   /* a.Q with the payload's anchor */

    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const fl_geom &g = a.g;
    const uint8_t *in = a.in;
    if (threadIdx.x == 0)
        tile_s = atomicAdd(&a.sc->ticket, 1ull);
    __syncthreads();
    const uint64_t t = tile_s, b0 = t * FL_TILE;
    const unsigned nb = (unsigned)min((uint64_t)FL_TILE, g.nblocks - b0);
    const uint64_t tables = fl_tables_size(&g, a.Q.has_fill);

    /* Header-count prefix (the masks), then the tile's header bytes, then the byte prefix. Every
     * tile publishes both counts even when it is invalid, so its successors never wait for ever. */
    if (warp == 0) {
        const uint32_t mask = hz_get_u32(in + FL_OFF_MASKS + 4 * t);
        const uint32_t fmask =
            a.Q.has_fill ? hz_get_u32(in + FL_OFF_MASKS + 5 * g.ntiles + 4 * t) : 0u;
        const unsigned pred = in[FL_OFF_MASKS + 4 * g.ntiles + t];
        const uint64_t nhdr_total = a.sc->nhdr_total;
        qz_quant Q = a.Q;
        const bool anchored = qz_get_anchor(in + FL_OFF_BASE, &Q);
        const unsigned fbit = fmask >> lane & 1u;
        bool bad = (pred & ~FL_TILE_CORNER_DELTA) >= S::NP ||
                   (nb < FL_TILE && ((mask | fmask) >> nb) != 0) ||
                   nhdr_total > a.len - tables || !anchored;
        uint64_t nh = __popc(mask), hoff, size = 0;
        unsigned long long *st_hdr = a.st_hdr, *st_bytes = a.st_bytes;
        lb_exclusive<1>(&st_hdr, t, &nh, &hoff);
        unsigned hdr = 0;
        if (!bad && (mask >> lane & 1u)) {
            uint64_t z0, y0, x0;
            hdr = in[tables + hoff + __popc(mask & lanemask_lt())];
            fl_block_origin(&g, b0 + lane, &z0, &y0, &x0);
            if (fl_header_valid(hdr, fbit))
                size = (fbit ? 8u : 0u) +
                       fl_block_payload_size(hdr, fl_block_nvalid(&g, z0, y0, x0), esize);
            else
                bad = true;
        }
        bad = __any_sync(FULL, bad);
        uint64_t incl = size;
        for (unsigned d = 1; d < 32; d <<= 1) {
            uint64_t v = __shfl_up_sync(FULL, incl, d);
            if (lane >= d)
                incl += v;
        }
        uint64_t bytes = __shfl_sync(FULL, incl, 31), off;
        lb_exclusive<1>(&st_bytes, t, &bytes, &off);
        if (!bad) {
            const uint64_t avail = a.len - tables - nhdr_total;
            bad = off + bytes > avail || (t == g.ntiles - 1 && off + bytes != avail);
        }
        /* q0 of a coded block is its corner plus the previous one's q0: a running sum of the
         * corners over the tile (raw blocks add nothing) */
        uint64_t corner = 0;
        if (!bad && hdr && hdr != FL_HDR_RAW) {
            const uint8_t *src = in + tables + nhdr_total + off + (incl - size) + (fbit ? 8u : 0u);
            uint64_t zc = 0;
            for (unsigned i = 0; i < fl_wbytes(hdr >> 6); i++)
                zc |= (uint64_t)src[i] << (8 * i);
            corner = (uint64_t)hz_unzigzag(zc);
        }
        uint64_t csum = corner;
        for (unsigned d = 1; d < 32; d <<= 1) {
            uint64_t v = __shfl_up_sync(FULL, csum, d);
            if (lane >= d)
                csum += v;
        }
        prev_s[lane] = (int64_t)(csum - corner);
        hdr_s[lane] = (uint8_t)hdr;
        pos_s[lane] = (uint32_t)(incl - size);
        if (lane == 0) {
            pay_s = tables + nhdr_total + off;
            pred_s = pred;
            mask_s = mask;
            fmask_s = fmask;
            Q_s = Q;
            bad_s = bad;
            if (bad)
                atomicOr(&a.sc->corrupt, 1u);
        }
    }
    __syncthreads();
    if (bad_s)
        return;

    const qz_quant Q = Q_s;
    const unsigned pred = pred_s & ~FL_TILE_CORNER_DELTA, delta = pred_s >> 7;
    T *out = (T *)a.out;
    int64_t *q = q_s[warp];
    uint8_t *stage = (uint8_t *)stage_s[warp];
    for (unsigned k = 0; k < HZC_BLOCKS_PER_WARP; k++) {
        const unsigned blk = warp * HZC_BLOCKS_PER_WARP + k;
        if (blk >= nb)
            break;
        const unsigned hdr = hdr_s[blk];
        const uint8_t *src = in + pay_s + pos_s[blk];
        const bool fb = fmask_s >> blk & 1u;
        uint64_t z0, y0, x0, idx[2], fill = 0;
        fl_block_origin(&g, b0 + blk, &z0, &y0, &x0);
        bool valid[2];
        valid[0] = elem_index<DIM>(g, z0, y0, x0, lane, &idx[0]);
        valid[1] = elem_index<DIM>(g, z0, y0, x0, lane + 32, &idx[1]);
        if (hdr == FL_HDR_RAW) {
            const unsigned vb0 = __ballot_sync(FULL, valid[0]), vb1 = __ballot_sync(FULL, valid[1]);
            for (unsigned h = 0; h < 2; h++) {
                if (!valid[h])
                    continue;
                unsigned rank = h ? __popc(vb0) + __popc(vb1 & lanemask_lt())
                                  : __popc(vb0 & lanemask_lt());
                const uint8_t *p = src + esize * rank;
                uint64_t u = 0;
                for (unsigned i = 0; i < esize; i++)
                    u |= (uint64_t)p[i] << (8 * i);
                if (esize == 4)
                    ((uint32_t *)out)[idx[h]] = (uint32_t)u;
                else
                    ((unsigned long long *)out)[idx[h]] = u;
            }
            continue;
        }
        if (fb && !(mask_s >> blk & 1u)) {   /* every element is fill */
            for (unsigned h = 0; h < 2; h++)
                if (valid[h])
                    put_fill(out, idx[h], Q.fill_bits);
            continue;
        }
        if (fb) {
            for (unsigned i = 0; i < 8; i++)
                fill |= (uint64_t)src[i] << (8 * i);
            src += 8;
        }
        int64_t r[2] = {0, 0};
        if (hdr) {
            const unsigned code = hdr & 63u, wb = fl_wbytes(hdr >> 6), pad = (8u - wb) & 7u;
            const uint64_t size = fl_block_payload_size(hdr, FL_BLOCK, esize);
            for (unsigned i = lane; i < size; i += 32)
                stage[pad + i] = src[i];
            __syncwarp();
            uint64_t zc = 0;
            for (unsigned i = 0; i < wb; i++)
                zc |= (uint64_t)stage[pad + i] << (8 * i);
            if (code > FL_SPARSE_BASE) {
                const unsigned n = code - FL_SPARSE_BASE;
                const unsigned b = lane < n ? stage[pad + wb + lane] : 0u, e = b & 63u;
                const unsigned prev = __shfl_up_sync(FULL, e, 1);
                if (__any_sync(FULL, lane < n && e <= (lane ? prev : 0u))) {
                    if (lane == 0)
                        atomicOr(&a.sc->corrupt, 1u);
                    return;   /* positions must be 1..63, strictly increasing */
                }
                q[lane] = 0;
                q[lane + 32] = 0;
                __syncwarp();
                if (lane < n)
                    q[e] = (b & 0x40u) ? -((b & 0x80u) ? 2 : 1) : ((b & 0x80u) ? 2 : 1);
                __syncwarp();
                r[0] = q[lane];
                r[1] = q[lane + 32];
                __syncwarp();
            } else if (code > 0) {
                const uint32_t *w = (const uint32_t *)(stage + pad + wb);   /* 8-aligned */
                int64_t m0 = 0, m1 = 0;
                for (unsigned j = 0; j < code; j++) {
                    m0 |= (int64_t)((w[2 + 2 * j] >> lane) & 1u) << j;
                    m1 |= (int64_t)((w[3 + 2 * j] >> lane) & 1u) << j;
                }
                r[0] = (w[0] >> lane & 1u) ? -m0 : m0;
                r[1] = (w[1] >> lane & 1u) ? -m1 : m1;
            }
            if (lane == 0)
                r[0] = hz_unzigzag(zc);
        }
        if (delta && lane == 0)
            r[0] = (int64_t)((uint64_t)r[0] + (uint64_t)prev_s[blk]);
        if (DIM == 1) {
            /* 1-D Lorenzo: q is the running sum of r (mod 2^64, as the CPU's loop) */
            uint64_t s0 = (uint64_t)r[0], s1 = (uint64_t)r[1];
            for (unsigned d = 1; d < 32; d <<= 1) {
                uint64_t v0 = __shfl_up_sync(FULL, s0, d), v1 = __shfl_up_sync(FULL, s1, d);
                if (lane >= d) {
                    s0 += v0;
                    s1 += v1;
                }
            }
            s1 += __shfl_sync(FULL, s0, 31);
            q[lane] = (int64_t)s0;
            q[lane + 32] = (int64_t)s1;
        } else {
            switch (pred) {
            case FL_PRED_LORENZO: by_diagonals<DIM, FL_PRED_LORENZO>(q, r); break;
            case FL_PRED_CHAIN: by_diagonals<DIM, FL_PRED_CHAIN>(q, r); break;
            case FL_PRED_MEAN: by_diagonals<DIM, FL_PRED_MEAN>(q, r); break;
            default: by_diagonals<DIM, FL_PRED_PLANAR>(q, r); break;
            }
        }
        __syncwarp();
        for (unsigned h = 0; h < 2; h++) {
            if (!valid[h])
                continue;
            if (fill >> (lane + 32 * h) & 1u)
                put_fill(out, idx[h], Q.fill_bits);
            else   /* rounded to T once: qz_reconstruct's value */
                out[idx[h]] = (T)qz_reconstruct_wide(&Q, (double)q[lane + 32 * h]);
        }
        __syncwarp();
    }
}

/* Checksum terms of the payload's 32-bit words, and the masks' popcount on the way. */
__global__ void __launch_bounds__(HZC_THREADS)
    sum_kernel(const uint8_t *p, uint64_t n, uint64_t npop, hzc_scalars *sc)
{
    const uint64_t nw = (n + 3) / 4;
    const bool aligned = ((uintptr_t)p & 3u) == 0;
    uint32_t s = 0;
    uint64_t pop = 0;
    for (uint64_t w = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; w < nw;
         w += (uint64_t)gridDim.x * blockDim.x) {
        uint32_t v;
        if (aligned && 4 * w + 4 <= n) {
            v = ((const uint32_t *)p)[w];
        } else {
            v = 0;
            for (unsigned i = 0; i < 4 && 4 * w + i < n; i++)
                v |= (uint32_t)p[4 * w + i] << (8 * i);
        }
        s += hz_checksum_term(v, w);
        if (w - FL_OFF_MASKS / 4 < npop)
            pop += __popc(v);
    }
    s = __reduce_add_sync(FULL, s);
    for (int d = 16; d > 0; d >>= 1)
        pop += __shfl_xor_sync(FULL, pop, d);
    if ((threadIdx.x & 31u) == 0) {
        atomicAdd(&sc->sum, s);
        if (pop)
            atomicAdd(&sc->nhdr_total, (unsigned long long)pop);
    }
}

/* Little-endian word at byte offset o of an aligned buffer that has 4 readable bytes past it. */
__device__ __forceinline__ uint32_t word_at(const uint8_t *base, uint64_t o)
{
    const uint32_t *w = (const uint32_t *)base + (o >> 2);
    const unsigned sh = (unsigned)(o & 3u) * 8u;
    return sh ? __funnelshift_r(w[0], w[1], sh) : w[0];
}

__global__ void __launch_bounds__(HZC_THREADS)
    assemble_kernel(const uint8_t *tab, const uint8_t *pay, uint8_t *dst, uint64_t cap,
                    uint64_t tables, hzc_scalars *sc)
{
    const uint64_t A = tables + sc->nhdr_total, total = A + sc->bytes_total;
    if (total > cap)
        return;
    const uint64_t nw = (total + 3) / 4;
    const bool aligned = ((uintptr_t)dst & 3u) == 0;
    uint32_t s = 0;
    for (uint64_t w = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; w < nw;
         w += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t i = 4 * w;
        uint32_t v;
        if (i + 4 <= A) {
            v = word_at(tab, i);
        } else if (i >= A) {
            v = word_at(pay, i - A);
        } else {
            v = 0;
            for (unsigned k = 0; k < 4; k++)
                v |= (uint32_t)(i + k < A ? tab[i + k] : pay[i + k - A]) << (8 * k);
        }
        if (i + 4 > total)
            v &= (1u << (8 * (total - i))) - 1u;   /* zero padding past the end */
        if (aligned && i + 4 <= total) {
            ((uint32_t *)dst)[w] = v;
        } else {
            for (unsigned k = 0; k < 4 && i + k < total; k++)
                dst[i + k] = (uint8_t)(v >> (8 * k));
        }
        s += hz_checksum_term(v, w);
    }
    s = __reduce_add_sync(FULL, s);
    if ((threadIdx.x & 31u) == 0)
        atomicAdd(&sc->sum, s);
}

__device__ __forceinline__ void mm_merge(hzc_minmax *a, double lo, double hi)
{
    a->lo = lo < a->lo ? lo : a->lo;
    a->hi = hi > a->hi ? hi : a->hi;
}

__device__ __forceinline__ void mm_warp(hzc_minmax *m)
{
    for (int d = 16; d > 0; d >>= 1)
        mm_merge(m, __shfl_xor_sync(FULL, m->lo, d), __shfl_xor_sync(FULL, m->hi, d));
}

__device__ __forceinline__ void mm_block(hzc_minmax *m)
{
    __shared__ hzc_minmax w_s[HZC_WARPS];
    mm_warp(m);
    if ((threadIdx.x & 31u) == 0)
        w_s[threadIdx.x >> 5] = *m;
    __syncthreads();
    if (threadIdx.x < 32) {
        if (threadIdx.x < HZC_WARPS)
            *m = w_s[threadIdx.x];
        mm_warp(m);
    }
}

/* A value into the range [lo, hi]: fill elements noted in seen, non-finite ones (and PWREL's
 * zeros) left out. Compared in the element type, which orders as its double does. */
template <typename T, bool PWREL>
__device__ __forceinline__ void stats_take(T x, int has_fill, uint64_t fill_bits, T &lo, T &hi,
                                           int &seen)
{
    if (has_fill && raw_bits(&x) == fill_bits) {
        seen = 1;
        return;
    }
    if (!isfinite(x) || (PWREL && x == (T)0))
        return;
    if (PWREL)
        x = x < 0 ? -x : x;
    lo = x < lo ? x : lo;
    hi = x > hi ? x : hi;
}

/* qz_stats_cpu's reduction, 16 bytes a load where the input is 16-byte aligned (the order of
 * the comparisons does not matter: a signed zero as the range's end leaves qz_init's
 * base 0). PWREL: qz_log2lin is monotone, so the smallest L(|x|) is L of the smallest non-zero
 * |x|, taken once in the final kernel. */
template <typename T, bool PWREL>
__global__ void __launch_bounds__(HZC_THREADS)
    stats_kernel(const T *in, uint64_t n, int has_fill, uint64_t fill_bits, hzc_minmax *partial,
                 hzc_scalars *sc)
{
    using V = typename std::conditional<sizeof(T) == 4, float4, double2>::type;
    constexpr unsigned per = sizeof(V) / sizeof(T);
    T lo = (T)HUGE_VAL, hi = (T)-HUGE_VAL;
    int seen = 0;
    const uint64_t first = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    const uint64_t nv = ((uintptr_t)in & (sizeof(V) - 1)) == 0 ? n / per : 0;
#pragma unroll 2
    for (uint64_t j = first; j < nv; j += stride) {
        const V v = ((const V *)in)[j];
        const T *x = (const T *)&v;
#pragma unroll
        for (unsigned k = 0; k < per; k++)
            stats_take<T, PWREL>(x[k], has_fill, fill_bits, lo, hi, seen);
    }
    for (uint64_t i = nv * per + first; i < n; i += stride)
        stats_take<T, PWREL>(in[i], has_fill, fill_bits, lo, hi, seen);
    if (__syncthreads_or(seen) && threadIdx.x == 0)
        atomicOr(&sc->fill_seen, 1u);
    hzc_minmax m = {(double)lo, (double)hi};
    mm_block(&m);
    if (threadIdx.x == 0)
        partial[blockIdx.x] = m;
}

template <bool PWREL>
__global__ void __launch_bounds__(HZC_THREADS)
    stats_final_kernel(const hzc_minmax *partial, unsigned np, hzc_scalars *sc)
{
    hzc_minmax m = {HUGE_VAL, -HUGE_VAL};
    for (unsigned i = threadIdx.x; i < np; i += blockDim.x)
        mm_merge(&m, partial[i].lo, partial[i].hi);
    mm_block(&m);
    if (threadIdx.x == 0) {
        sc->any = m.lo <= m.hi;
        sc->lo = !sc->any ? 0.0 : (PWREL ? qz_log2lin(m.lo) : m.lo);
        sc->hi = !sc->any ? 0.0 : (PWREL ? qz_log2lin(m.hi) : (m.hi == m.lo ? m.lo : m.hi));
    }
}

static unsigned grid_for(uint64_t items, int sms)
{
    uint64_t want = (items + HZC_THREADS - 1) / HZC_THREADS;
    uint64_t most = (uint64_t)(sms > 0 ? sms : 1) * 8;
    return (unsigned)(want < 1 ? 1 : (want < most ? want : most));
}

cudaError_t hzc_launch_stats(const void *in, uint64_t n, int is_f32, int pwrel, int has_fill,
                             uint64_t fill_bits, hzc_minmax *partial, hzc_scalars *sc, int sms,
                             cudaStream_t s)
{
    unsigned grid = grid_for(n / 4, sms);
    if (grid > HZC_STATS_CTAS)
        grid = HZC_STATS_CTAS;
    if (is_f32 && pwrel)
        stats_kernel<float, true><<<grid, HZC_THREADS, 0, s>>>((const float *)in, n, has_fill,
                                                               fill_bits, partial, sc);
    else if (is_f32)
        stats_kernel<float, false><<<grid, HZC_THREADS, 0, s>>>((const float *)in, n, has_fill,
                                                               fill_bits, partial, sc);
    else if (pwrel)
        stats_kernel<double, true><<<grid, HZC_THREADS, 0, s>>>((const double *)in, n, has_fill,
                                                               fill_bits, partial, sc);
    else
        stats_kernel<double, false><<<grid, HZC_THREADS, 0, s>>>((const double *)in, n, has_fill,
                                                               fill_bits, partial, sc);
    if (pwrel)
        stats_final_kernel<true><<<1, HZC_THREADS, 0, s>>>(partial, grid, sc);
    else
        stats_final_kernel<false><<<1, HZC_THREADS, 0, s>>>(partial, grid, sc);
    return cudaGetLastError();
}

cudaError_t hzc_launch_sum(const uint8_t *p, uint64_t n, uint64_t npop, hzc_scalars *sc, int sms,
                           cudaStream_t s)
{
    sum_kernel<<<grid_for((n + 3) / 4, sms), HZC_THREADS, 0, s>>>(p, n, npop, sc);
    return cudaGetLastError();
}

cudaError_t hzc_launch_assemble(const uint8_t *tab, const uint8_t *pay, uint8_t *dst,
                                uint64_t cap, uint64_t tables, hzc_scalars *sc, int sms,
                                cudaStream_t s)
{
    assemble_kernel<<<grid_for((cap + 3) / 4, sms), HZC_THREADS, 0, s>>>(tab, pay, dst, cap,
                                                                         tables, sc);
    return cudaGetLastError();
}

template <typename T, int DIM>
static void encode_as(const enc_args &a, cudaStream_t s)
{
    fl_encode_kernel<T, DIM><<<(unsigned)a.g.ntiles, HZC_THREADS, 0, s>>>(a);
}

cudaError_t hzc_launch_encode(const fl_geom *g, const qz_quant *Q, const void *in, uint8_t *tab,
                              uint8_t *pay, uint64_t paycap, unsigned long long *status,
                              hzc_scalars *sc, cudaStream_t s)
{
    enc_args a = {*g, *Q, in, tab, pay, paycap, status, status + g->ntiles, sc};
    static void (*const table[2][3])(const enc_args &, cudaStream_t) = {
        {encode_as<double, 1>, encode_as<double, 2>, encode_as<double, 3>},
        {encode_as<float, 1>, encode_as<float, 2>, encode_as<float, 3>}};
    table[Q->is_f32 ? 1 : 0][g->dim - 1](a, s);
    return cudaGetLastError();
}

template <typename T, int DIM>
static void decode_as(const dec_args &a, cudaStream_t s)
{
    fl_decode_kernel<T, DIM><<<(unsigned)a.g.ntiles, HZC_THREADS, 0, s>>>(a);
}

cudaError_t hzc_launch_decode(const fl_geom *g, const qz_quant *Q, const uint8_t *in,
                              uint64_t len, void *out, unsigned long long *status,
                              hzc_scalars *sc, cudaStream_t s)
{
    dec_args a = {*g, *Q, in, len, out, status, status + g->ntiles, sc};
    static void (*const table[2][3])(const dec_args &, cudaStream_t) = {
        {decode_as<double, 1>, decode_as<double, 2>, decode_as<double, 3>},
        {decode_as<float, 1>, decode_as<float, 2>, decode_as<float, 3>}};
    table[Q->is_f32 ? 1 : 0][g->dim - 1](a, s);
    return cudaGetLastError();
}
