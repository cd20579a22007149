/* The fixed-length encoder: a CTA a tile quantises its blocks, chooses the tile's predictor,
 * codes each block and places it through the decoupled look-back; then one pass assembles the
 * payload and sums it. Every value comes from the inline functions of the CPU reference
 * (quant.h, fixed_common.h), so the bytes match fixed_cpu.c exactly; the predictions of blocks
 * without fill elements are the same values in 32-bit arithmetic (predict_narrow.cuh). */
#include "../common/quant_known.cuh"
#include "predict_narrow.cuh"

/* q[e] - prediction, in the CPU's wrap-safe arithmetic; 0 outside the chunk. */
template <int DIM>
__device__ __forceinline__ int64_t residual(unsigned pred, const int64_t *q, unsigned e, bool valid)
{
    typedef blk_shape<DIM> S;
    return valid ? (int64_t)((uint64_t)q[e] - (uint64_t)fl_predict(pred, S::BY, S::BX, q, e)) : 0;
}

/* The same for a block without fill elements, from a 32-bit prediction (predict_narrow.cuh). */
template <int DIM>
__device__ __forceinline__ int64_t residual_narrow(unsigned pred, const int32_t *q, unsigned e,
                                                   bool valid)
{
    return valid ? (int64_t)q[e] - predict_narrow<DIM>(pred, neighbours_narrow<DIM>(q, e), e) : 0;
}

/* |r|, or FL_MAG_MAX + 1 past FL_MAG_MAX (only a block with fill elements gets there). */
__device__ __forceinline__ uint32_t magnitude(int64_t r)
{
    const uint64_t m = r < 0 ? 0ull - (uint64_t)r : (uint64_t)r;
    return (uint32_t)min(m, (uint64_t)FL_MAG_MAX + 1u);
}

/* |r| of a residual within 2^31 from its value modulo 2^32 (predict_narrow.cuh). */
__device__ __forceinline__ uint32_t magnitude_narrow(uint32_t r)
{
    return (int32_t)r < 0 ? 0u - r : r;
}

/* The largest magnitude and the count of non-zero residuals over elements 1..63 of a block, by
 * the whole warp (m0, m1: the magnitudes of elements lane and lane + 32), stored by lane 0. */
__device__ __forceinline__ void block_stat(uint32_t m0, uint32_t m1, unsigned lane, uint32_t *mag,
                                           uint8_t *nnz)
{
    m0 = lane ? m0 : 0u;
    const uint32_t m = __reduce_max_sync(FULL, max(m0, m1));
    const unsigned n = __reduce_add_sync(FULL, (m0 != 0) + (m1 != 0));
    if (lane == 0) {
        *mag = m;
        *nnz = (uint8_t)n;
    }
}

/* Codes of a block with fill elements under a predictor, by the whole warp: each fill element
 * past the corner takes its prediction, as fixed_cpu.c's residuals() does, so its residual is 0
 * and the warp's residual code applies unchanged to s. Every predictor reads only neighbours of
 * a smaller z + y + x, so the elements of one such sum (a wavefront: 10 in a 4^3 block, 15 in
 * 8^2, 64 in 1-D) are computed together, each after the wavefronts before it. */
template <int DIM>
__device__ void fill_codes(unsigned pred, const int32_t *q, uint64_t fill, int64_t *s,
                           unsigned lane)
{
    typedef blk_shape<DIM> S;
    const unsigned last = (S::BX - 1) + (S::BY - 1) + (S::BZ - 1);
    s[lane] = q[lane];
    s[lane + 32] = q[lane + 32];
    __syncwarp();
    const uint64_t past_corner = fill & ~(uint64_t)1;   /* the corner keeps its code */
    for (unsigned L = 1; L <= last; L++) {
#pragma unroll 1
        for (unsigned h = 0; h < 2; h++) {
            const unsigned e = lane + 32 * h;
            const unsigned level = e % S::BX + (e / S::BX) % S::BY + e / (S::BX * S::BY);
            if ((past_corner >> e & 1u) && level == L)
                s[e] = fl_predict(pred, S::BY, S::BX, s, e);
        }
        __syncwarp();
    }
}

/* A chunk alone travels in the parameters (one), where the compiler reads its quantiser as
 * constants; a batch's chunks in jobs, in device memory. */
struct enc_args {
    fl_geom g;
    const fl_enc_job *jobs;     /* a chunk each, count * g.ntiles tiles in all */
    hzc_scalars *sc;            /* a chunk each; tickets from sc[0] */
    fl_enc_job one;
};

/* LIN: the chunks' mode is ABS or REL (qz_encoding). */
template <typename T, int DIM, bool MANY, typename I, bool LIN>
__global__ void __launch_bounds__(FL_THREADS, FL_ENC_CTAS_PER_SM)
    fl_enc_tile_kernel(const enc_args a)
{
    typedef blk_shape<DIM> S;
    const unsigned esize = sizeof(T);
    __shared__ int32_t q_s[FL_TILE][FL_BLOCK];   /* |q| <= 2^28 */
    __shared__ int64_t prev_s[FL_TILE];          /* q0 of the previous coded block (delta) */
    __shared__ int64_t own_s[FL_WARPS][FL_BLOCK];  /* codes of a block with fill elements */
    __shared__ uint64_t fill_s[FL_TILE];         /* bit e: element e is fill */
    __shared__ uint32_t mag_s[S::NP][FL_TILE];
    __shared__ uint8_t nnz_s[S::NP][FL_TILE];
    __shared__ uint8_t ok_s[FL_TILE], allfill_s[FL_TILE], hdr_s[FL_TILE], hpos_s[FL_TILE];
    __shared__ uint32_t pos_s[FL_TILE];
    __shared__ I org_s[3][FL_TILE];              /* block origins: z, y, x */
    __shared__ uint64_t tile_s, hoff_s, off_s;
    __shared__ unsigned pred_s, mask_s;

    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const fl_geom &g = a.g;
    const extent<I> ext(g);
    if (threadIdx.x == 0)
        tile_s = atomicAdd(&a.sc[0].ticket, 1ull);
    __syncthreads();
    /* tiles in ticket order, chunk by chunk: a tile waits only on its own chunk's earlier ones */
    const uint64_t chunk = MANY ? tile_s / g.ntiles : 0, t = MANY ? tile_s % g.ntiles : tile_s;
    const uint64_t b0 = t * FL_TILE;
    const fl_enc_job &J = MANY ? a.jobs[chunk] : a.one;
    hzc_scalars *sc = a.sc + chunk;
    const T *in = (const T *)J.in;
    const unsigned nb = (unsigned)min((uint64_t)FL_TILE, g.nblocks - b0);
    const qz_quant Q = qz_encoding<T, LIN>(J.Q);

    /* Pass A: quantise each block; its residual statistics under every predictor. The warp's
     * loads are issued together, before any of them is used. */
    T val[FL_BLOCKS_PER_WARP][2];
    unsigned vbits = 0;   /* bit 2k + h: element h of block k lies inside the chunk */
    const warp_origins<I> org = warp_block_origins<I>(g, b0 + warp * FL_BLOCKS_PER_WARP, lane);
    if (lane < FL_BLOCKS_PER_WARP) {   /* for passes B and C, which would pay the divisions again */
        org_s[0][warp * FL_BLOCKS_PER_WARP + lane] = org.z;
        org_s[1][warp * FL_BLOCKS_PER_WARP + lane] = org.y;
        org_s[2][warp * FL_BLOCKS_PER_WARP + lane] = org.x;
    }
    for (unsigned k = 0; k < FL_BLOCKS_PER_WARP; k++) {
        const unsigned blk = warp * FL_BLOCKS_PER_WARP + k;
        if (blk >= nb)
            break;
        I z0, y0, x0, idx;
        block_origin(org, k, &z0, &y0, &x0);
        for (unsigned h = 0; h < 2; h++) {
            val[k][h] = 0;
            if (elem_index<DIM>(ext, z0, y0, x0, lane + 32 * h, &idx)) {
                vbits |= 1u << (2 * k + h);
                val[k][h] = in[idx];
            }
        }
    }
    for (unsigned k = 0; k < FL_BLOCKS_PER_WARP; k++) {
        const unsigned blk = warp * FL_BLOCKS_PER_WARP + k;
        if (blk >= nb)
            break;
        bool ok = true, valid[2], isfill[2];
        for (unsigned h = 0; h < 2; h++) {
            unsigned e = lane + 32 * h;
            int64_t q = 0;
            valid[h] = vbits >> (2 * k + h) & 1u;
            isfill[h] = valid[h] && qz_is_fill(&Q, dv_bits(val[k][h]));
            if (valid[h] && !isfill[h] && !qz_quantize(&Q, (double)val[k][h], &q))
                ok = false;
            q_s[blk][e] = (int32_t)q;
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
        if (fill) {   /* each predictor gives the fill elements other codes */
            for (unsigned p = 0; p < S::NP; p++) {
                fill_codes<DIM>(p, q_s[blk], fill, own_s[warp], lane);
                block_stat(magnitude(residual<DIM>(p, own_s[warp], lane, valid[0])),
                           magnitude(residual<DIM>(p, own_s[warp], lane + 32, valid[1])), lane,
                           &mag_s[p][blk], &nnz_s[p][blk]);
                __syncwarp();   /* own_s is rewritten for the next predictor */
            }
            continue;
        }
        /* the neighbours read once for all the predictors, in 32-bit arithmetic */
        const nbrs_narrow n0 = neighbours_narrow<DIM>(q_s[blk], lane),
                          n1 = neighbours_narrow<DIM>(q_s[blk], lane + 32);
        const uint32_t c0 = (uint32_t)q_s[blk][lane], c1 = (uint32_t)q_s[blk][lane + 32];
#pragma unroll
        for (unsigned p = 0; p < S::NP; p++) {
            const uint32_t r0 = c0 - (uint32_t)predict_narrow<DIM>(p, n0, lane);
            const uint32_t r1 = c1 - (uint32_t)predict_narrow<DIM>(p, n1, lane + 32);
            block_stat(valid[0] ? magnitude_narrow(r0) : 0u, valid[1] ? magnitude_narrow(r1) : 0u,
                       lane, &mag_s[p][blk], &nnz_s[p][blk]);
        }
    }
    __syncthreads();

    /* Pass B (warp 0, lane i = block i): header bytes under every predictor and corner mode, the
     * cheapest pair (ties: lowest predictor, then absolute), offsets inside the tile, look-back. */
    if (warp == 0) {
        const bool inb = lane < nb, ok = inb && ok_s[lane], coded = ok && !allfill_s[lane];
        /* blocks with fill elements that are not raw: a fill-mask bit, and a bitmap when coded */
        const bool fbit = ok && fill_s[lane] != 0;
        const unsigned before = __ballot_sync(FULL, coded) & dv_lanemask_lt();
        const int64_t q0 = coded ? q_s[lane][0] : 0;
        const int64_t prev = before ? q_s[31 - __clz(before)][0] : 0;
        uint64_t nvalid = 0;
        if (inb)
            nvalid = fl_block_nvalid(&g, org_s[0][lane], org_s[1][lane], org_s[2][lane]);
        unsigned best = FL_NPRED, hdr = 0, best_cost = 0, best_n = 0;
        for (unsigned p = 0; p < S::NP; p++) {
            /* FL_MAG_MAX: chain (1-D: Lorenzo) is always usable */
            if (__any_sync(FULL, coded && mag_s[p][lane] > FL_MAG_MAX))
                continue;
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
                if (best == FL_NPRED || c < best_cost) {
                    best = p | (m ? FL_TILE_CORNER_DELTA : 0u);
                    best_cost = c;
                    hdr = h;
                    best_n = n;
                }
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
        hpos_s[lane] = (uint8_t)__popc(mask & dv_lanemask_lt());
        uint64_t agg[2] = {(uint64_t)__popc(mask), __shfl_sync(FULL, incl, 31)}, excl[2];
        unsigned long long *status[2] = {J.status, J.status + g.ntiles};
        lb_exclusive<2>(status, t, agg, excl);
        if (lane == 0) {
            hoff_s = excl[0];
            off_s = excl[1];
            pred_s = best;
            mask_s = mask;
            hz_put_u32(J.tab + FL_OFF_MASKS + 4 * t, mask);
            J.tab[FL_OFF_MASKS + 4 * g.ntiles + t] = (uint8_t)best;
            if (Q.has_fill)
                hz_put_u32(J.tab + FL_OFF_MASKS + 5 * g.ntiles + 4 * t, fmask);
            if (t == 0)
                qz_put_anchor(J.tab + FL_OFF_BASE, &Q);
            if (t == g.ntiles - 1) {
                sc->nhdr_total = excl[0] + agg[0];
                sc->bytes_total = excl[1] + agg[1];
            }
        }
    }
    __syncthreads();
    const unsigned best = pred_s & ~FL_TILE_CORNER_DELTA, delta = pred_s >> 7;

    /* Pass C: header bytes and block payloads at their final offsets. */
    const uint64_t tables = fl_tables_size(&g, Q.has_fill);
    for (unsigned k = 0; k < FL_BLOCKS_PER_WARP; k++) {
        const unsigned blk = warp * FL_BLOCKS_PER_WARP + k;
        if (blk >= nb)
            break;
        const unsigned hdr = hdr_s[blk];
        if (!(mask_s >> blk & 1u))   /* empty or all fill */
            continue;
        if (lane == 0)
            J.tab[tables + hoff_s + hpos_s[blk]] = (uint8_t)hdr;
        const I z0 = org_s[0][blk], y0 = org_s[1][blk], x0 = org_s[2][blk];
        I idx[2];
        bool valid[2];
        valid[0] = elem_index<DIM>(ext, z0, y0, x0, lane, &idx[0]);
        valid[1] = elem_index<DIM>(ext, z0, y0, x0, lane + 32, &idx[1]);
        const uint64_t o = off_s + pos_s[blk];
        const unsigned vb0 = __ballot_sync(FULL, valid[0]), vb1 = __ballot_sync(FULL, valid[1]);
        const uint64_t fill = hdr == FL_HDR_RAW ? 0 : fill_s[blk];
        if (o + (fill ? 8u : 0u) + fl_block_payload_size(hdr, __popc(vb0) + __popc(vb1), esize) >
            J.paycap)
            continue;   /* does not fit: the host sees the total and reports it */
        uint8_t *dst = J.pay + o;
        if (hdr == FL_HDR_RAW) {
            if (valid[0])
                dv_put_bytes(dst + esize * __popc(vb0 & dv_lanemask_lt()), dv_bits(in[idx[0]]),
                             esize);
            if (valid[1])
                dv_put_bytes(dst + esize * (__popc(vb0) + __popc(vb1 & dv_lanemask_lt())),
                          dv_bits(in[idx[1]]), esize);
            continue;
        }
        int64_t r0, r1;
        if (fill) {
            __syncwarp();   /* own_s may still be read for the warp's previous block */
            if (lane == 0)
                dv_put_bytes(dst, fill, 8);
            fill_codes<DIM>(best, q_s[blk], fill, own_s[warp], lane);
            r0 = residual<DIM>(best, own_s[warp], lane, valid[0]);
            r1 = residual<DIM>(best, own_s[warp], lane + 32, valid[1]);
            dst += 8;
        } else {
            r0 = residual_narrow<DIM>(best, q_s[blk], lane, valid[0]);
            r1 = residual_narrow<DIM>(best, q_s[blk], lane + 32, valid[1]);
        }
        const unsigned code = hdr & 63u, wb = fl_wbytes(hdr >> 6);
        const int64_t corner = delta ? (int64_t)((uint64_t)q_s[blk][0] - (uint64_t)prev_s[blk])
                                     : __shfl_sync(FULL, r0, 0);
        const uint64_t zc = hz_zigzag(corner);
        if (lane < wb)
            dst[lane] = (uint8_t)(zc >> (8 * lane));
        dst += wb;
        if (code > FL_SPARSE_BASE) {
            const unsigned nz0 = __ballot_sync(FULL, lane && r0),
                           nz1 = __ballot_sync(FULL, r1 != 0);
            if (lane && r0)
                dst[__popc(nz0 & dv_lanemask_lt())] =
                    (uint8_t)(lane | (r0 < 0 ? 0x40u : 0u) | (magnitude(r0) == 2 ? 0x80u : 0u));
            if (r1)
                dst[__popc(nz0) + __popc(nz1 & dv_lanemask_lt())] =
                    (uint8_t)((lane + 32) | (r1 < 0 ? 0x40u : 0u) |
                              (magnitude(r1) == 2 ? 0x80u : 0u));
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
                dv_put_bytes(dst, sign, 8);
            if (lane < code)
                dv_put_bytes(dst + 8 + 8 * lane, mine, 8);
        }
    }
}


/* A chunk a row of the grid (blockIdx.y): jobs[row], or one when jobs is NULL. */
__global__ void __launch_bounds__(FL_THREADS)
    fl_enc_assemble_kernel(const fl_enc_job *jobs, const fl_enc_job one, hzc_scalars *scs)
{
    const fl_enc_job &J = jobs ? jobs[blockIdx.y] : one;
    hzc_scalars *sc = scs + blockIdx.y;
    const uint8_t *tab = J.tab, *pay = J.pay;
    uint8_t *dst = J.dst;
    const uint64_t A = J.tables + sc->nhdr_total, total = A + sc->bytes_total;
    if (total > J.cap)
        return;
    const uint64_t nw = (total + 3) / 4;
    const bool aligned = ((uintptr_t)dst & 3u) == 0;
    uint32_t s = 0;
    for (uint64_t w = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; w < nw;
         w += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t i = 4 * w;
        uint32_t v;
        if (i + 4 <= A) {
            v = dv_word_at(tab, i);
        } else if (i >= A) {
            v = dv_word_at(pay, i - A);
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

cudaError_t fl_launch_assemble(const fl_enc_job *jobs, const fl_enc_job *one, unsigned count,
                               uint64_t cap, hzc_scalars *sc, int sms, cudaStream_t s)
{
    /* the grid of one chunk, shared among the batch's chunks */
    const unsigned x = hzc_grid_for((cap + 3) / 4, sms), per = (x + count - 1) / count;
    fl_enc_assemble_kernel<<<dim3(per, count), FL_THREADS, 0, s>>>(one ? NULL : jobs,
                                                                   one ? *one : fl_enc_job(), sc);
    return cudaGetLastError();
}

template <typename T, int DIM, typename I, bool LIN>
static void encode_in(const enc_args &a, unsigned count, cudaStream_t s)
{
    if (count == 1)
        fl_enc_tile_kernel<T, DIM, false, I, LIN><<<(unsigned)a.g.ntiles, FL_THREADS, 0, s>>>(a);
    else
        fl_enc_tile_kernel<T, DIM, true, I, LIN>
            <<<(unsigned)(count * a.g.ntiles), FL_THREADS, 0, s>>>(a);
}

template <typename T, int DIM>
static void encode_as(const enc_args &a, unsigned count, bool pwrel, cudaStream_t s)
{
    if (fl_pos32(a.g))
        pwrel ? encode_in<T, DIM, uint32_t, false>(a, count, s)
              : encode_in<T, DIM, uint32_t, true>(a, count, s);
    else
        pwrel ? encode_in<T, DIM, uint64_t, false>(a, count, s)
              : encode_in<T, DIM, uint64_t, true>(a, count, s);
}

cudaError_t fl_launch_encode(const fl_geom *g, int is_f32, int pwrel, const fl_enc_job *jobs,
                             const fl_enc_job *one, unsigned count, hzc_scalars *sc,
                             cudaStream_t s)
{
    enc_args a = {*g, jobs, sc, one ? *one : fl_enc_job()};
    static void (*const table[2][3])(const enc_args &, unsigned, bool, cudaStream_t) = {
        {encode_as<double, 1>, encode_as<double, 2>, encode_as<double, 3>},
        {encode_as<float, 1>, encode_as<float, 2>, encode_as<float, 3>}};
    table[is_f32 ? 1 : 0][g->dim - 1](a, one ? 1 : count, pwrel != 0, s);
    return cudaGetLastError();
}
