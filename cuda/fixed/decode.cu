/* The fixed-length decoder: a CTA a tile reads its masks and headers, finds its payload through
 * the decoupled look-back, and rebuilds each block in registers by prefix sums (Lorenzo, chain,
 * planar) or diagonal by diagonal (mean), checking every length and code as fixed_cpu.c does. */
#include "../common/quant_known.cuh"
#include "fixed_device.cuh"

/* The elements of each of a block's diagonals past the first (x + y + z = 1, 2, ...), in
 * raster order: at most 12 (4x4x4) or 8 (8x8). */
template <int DIM> struct block_diagonals {
    enum { N = blk_shape<DIM>::BX + blk_shape<DIM>::BY + blk_shape<DIM>::BZ - 2 };
    uint8_t n[N], e[N][16];
    constexpr block_diagonals() : n(), e()
    {
        typedef blk_shape<DIM> S;
        for (unsigned i = 1; i < FL_BLOCK; i++) {
            const unsigned d = i % S::BX + (i / S::BX) % S::BY + i / (S::BX * S::BY);
            e[d - 1][n[d - 1]++] = (uint8_t)i;
        }
    }
};
__device__ constexpr block_diagonals<2> diagonals_2d;
__device__ constexpr block_diagonals<3> diagonals_3d;

template <int DIM> __device__ __forceinline__ const block_diagonals<DIM> &diagonals_of()
{
    if constexpr (DIM == 3)
        return diagonals_3d;
    else
        return diagonals_2d;
}

/* The mean predictor rounds, so its block decodes diagonal by diagonal: it reads only elements
 * of smaller x + y + z. q (shared) starts as the residuals and each diagonal's elements, a lane
 * each, add their predictions in place. r holds the lane's two residuals; s gets its codes. */
template <int DIM>
__device__ __forceinline__ void by_diagonals(int64_t *q, const int64_t *r, uint64_t *s)
{
    typedef blk_shape<DIM> S;
    const block_diagonals<DIM> &D = diagonals_of<DIM>();
    const unsigned lane = threadIdx.x & 31u;
    q[lane] = r[0];
    q[lane + 32] = r[1];
    __syncwarp();
    for (unsigned d = 0; d < D.N; d++) {
        if (lane < D.n[d]) {
            const unsigned e = D.e[d][lane], x = e % S::BX, y = (e / S::BX) % S::BY,
                           z = e / (S::BX * S::BY);
            q[e] = (int64_t)((uint64_t)q[e] + fl_mean_at(q, e, z, y, x, S::BY, S::BX));
        }
        __syncwarp();
    }
    s[0] = (uint64_t)q[lane];
    s[1] = (uint64_t)q[lane + 32];
}

/* Inclusive sums along one axis of the block, whose elements lie STRIDE elements apart, LEN of
 * them; s[h] is element lane + 32 h. An axis that crosses from the first 32 elements into the
 * last (z in 3-D, y in 2-D, x in 1-D) adds the first half's last sums to the second half. Sums
 * are mod 2^64, as the CPU's predictions, so any order of the axes gives the same codes. */
template <unsigned STRIDE, unsigned LEN>
__device__ __forceinline__ void scan_axis(uint64_t *s, unsigned lane)
{
    const unsigned n = STRIDE * LEN > 32 ? 32 / STRIDE : LEN;   /* lanes along it in a half */
#pragma unroll
    for (unsigned d = 1; d < n; d <<= 1)
#pragma unroll
        for (unsigned h = 0; h < 2; h++) {
            const uint64_t u = __shfl_up_sync(FULL, s[h], d * STRIDE);
            if ((lane / STRIDE) % n >= d)
                s[h] += u;
        }
    if constexpr (STRIDE * LEN > 32)
        s[1] += __shfl_sync(FULL, s[0], lane % STRIDE + STRIDE * (n - 1));
}

/* The same for the elements where `on` holds; the others keep their values. */
template <unsigned STRIDE, unsigned LEN>
__device__ __forceinline__ void scan_axis_where(uint64_t *s, const bool *on, unsigned lane)
{
    uint64_t t[2] = {on[0] ? s[0] : 0u, on[1] ? s[1] : 0u};
    scan_axis<STRIDE, LEN>(t, lane);
    for (unsigned h = 0; h < 2; h++)
        if (on[h])
            s[h] = t[h];
}

/* Codes of a block under the linear predictors: each code is a sum of residuals over a box of
 * the block (Lorenzo: over the box from the origin; chain: along its row, then down column 0,
 * then along the line of corners; planar: the plane's 2-D Lorenzo over corners chained along z),
 * so the block decodes by prefix sums along its axes. */
template <int DIM>
__device__ __forceinline__ void by_sums(unsigned pred, uint64_t *s, unsigned lane)
{
    typedef blk_shape<DIM> S;
    if constexpr (DIM == 1) {   /* Lorenzo alone */
        scan_axis<1, S::BX>(s, lane);
    } else {
        if (pred == FL_PRED_LORENZO) {
            scan_axis<1, S::BX>(s, lane);
            scan_axis<S::BX, S::BY>(s, lane);
            if constexpr (DIM == 3)
                scan_axis<S::BX * S::BY, S::BZ>(s, lane);
            return;
        }
        const bool col0[2] = {lane % S::BX == 0, lane % S::BX == 0};
        if constexpr (DIM == 3) {   /* corners (z, 0, 0) chain along z for chain and planar */
            const bool corner[2] = {lane % 16u == 0, lane % 16u == 0};
            scan_axis_where<S::BX * S::BY, S::BZ>(s, corner, lane);
        }
        if (pred == FL_PRED_CHAIN) {
            scan_axis_where<S::BX, S::BY>(s, col0, lane);
            scan_axis<1, S::BX>(s, lane);
        } else {   /* planar */
            scan_axis<1, S::BX>(s, lane);
            scan_axis<S::BX, S::BY>(s, lane);
        }
    }
}

/* As the encoder's: a chunk alone in the parameters (one), a batch's chunks in jobs. */
struct dec_args {
    fl_geom g;
    const fl_dec_job *jobs;     /* a chunk each, count * g.ntiles tiles in all */
    hzc_scalars *sc;            /* a chunk each; tickets from sc[0] */
    fl_dec_job one;
};

/* Room for one coded block's payload, placed so that its sign and magnitude planes start on an
 * 8-byte boundary whatever the corner's width. */
#define STAGE_BYTES (8u + HDR_CODED_MAX)

/* LIN: every chunk is ABS or REL on format version 3's grid (qz_decoding). */
template <typename T, int DIM, bool MANY, typename I, bool LIN>
__global__ void __launch_bounds__(FL_THREADS, FL_DEC_CTAS_PER_SM)
    fl_dec_tile_kernel(const dec_args a)
{
    typedef blk_shape<DIM> S;
    const unsigned esize = sizeof(T);
    __shared__ int64_t q_s[FL_WARPS][FL_BLOCK];
    __shared__ uint64_t stage_s[FL_WARPS][(STAGE_BYTES + 7) / 8];
    __shared__ uint8_t hdr_s[FL_TILE];
    __shared__ uint32_t pos_s[FL_TILE];
    __shared__ int64_t prev_s[FL_TILE];   /* delta corners: q0 of the previous coded block */
    __shared__ uint64_t tile_s, pay_s;
    __shared__ unsigned pred_s, bad_s, mask_s, fmask_s;
    __shared__ qz_quant Q_s;   /* the job's Q with the payload's anchor */

    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const fl_geom &g = a.g;
    if (threadIdx.x == 0)
        tile_s = atomicAdd(&a.sc[0].ticket, 1ull);
    __syncthreads();
    /* tiles in ticket order, chunk by chunk: a tile waits only on its own chunk's earlier ones */
    const uint64_t chunk = MANY ? tile_s / g.ntiles : 0, t = MANY ? tile_s % g.ntiles : tile_s;
    const uint64_t b0 = t * FL_TILE;
    const fl_dec_job &J = MANY ? a.jobs[chunk] : a.one;
    hzc_scalars *sc = a.sc + chunk;
    const uint8_t *in = J.in;
    const unsigned nb = (unsigned)min((uint64_t)FL_TILE, g.nblocks - b0);
    const uint64_t tables = fl_tables_size(&g, J.Q.has_fill);

    /* Header-count prefix (the masks), then the tile's header bytes, then the byte prefix. Every
     * tile publishes both counts even when it is invalid, so its successors never wait for ever. */
    if (warp == 0) {
        const uint32_t mask = hz_get_u32(in + FL_OFF_MASKS + 4 * t);
        const uint32_t fmask =
            J.Q.has_fill ? hz_get_u32(in + FL_OFF_MASKS + 5 * g.ntiles + 4 * t) : 0u;
        const unsigned pred = in[FL_OFF_MASKS + 4 * g.ntiles + t];
        const uint64_t nhdr_total = sc->nhdr_total;
        qz_quant Q = J.Q;
        const bool anchored = qz_get_anchor(in + FL_OFF_BASE, &Q);
        const unsigned fbit = fmask >> lane & 1u;
        bool bad = (pred & ~FL_TILE_CORNER_DELTA) >= S::NP ||
                   (nb < FL_TILE && ((mask | fmask) >> nb) != 0) ||
                   nhdr_total > J.len - tables || !anchored;
        uint64_t nh = __popc(mask), hoff, size = 0;
        unsigned long long *st_hdr = J.status, *st_bytes = J.status + g.ntiles;
        lb_exclusive<1>(&st_hdr, t, &nh, &hoff);
        unsigned hdr = 0;
        if (!bad && (mask >> lane & 1u)) {
            uint64_t z0, y0, x0;
            hdr = in[tables + hoff + __popc(mask & dv_lanemask_lt())];
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
            const uint64_t avail = J.len - tables - nhdr_total;
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
                atomicOr(&sc->corrupt, 1u);
        }
    }
    __syncthreads();
    if (bad_s)
        return;

    const qz_quant Q = qz_decoding<T, LIN>(Q_s);
    const unsigned pred = pred_s & ~FL_TILE_CORNER_DELTA, delta = pred_s >> 7;
    T *out = (T *)J.out;
    int64_t *q = q_s[warp];
    uint8_t *stage = (uint8_t *)stage_s[warp];
    const extent<I> ext(g);
    const warp_origins<I> org = warp_block_origins<I>(g, b0 + warp * FL_BLOCKS_PER_WARP, lane);
    for (unsigned k = 0; k < FL_BLOCKS_PER_WARP; k++) {
        const unsigned blk = warp * FL_BLOCKS_PER_WARP + k;
        if (blk >= nb)
            break;
        const unsigned hdr = hdr_s[blk];
        const uint8_t *src = in + pay_s + pos_s[blk];
        const bool fb = fmask_s >> blk & 1u;
        I z0, y0, x0, idx[2];
        uint64_t fill = 0;
        block_origin(org, k, &z0, &y0, &x0);
        bool valid[2];
        valid[0] = elem_index<DIM>(ext, z0, y0, x0, lane, &idx[0]);
        valid[1] = elem_index<DIM>(ext, z0, y0, x0, lane + 32, &idx[1]);
        if (hdr == FL_HDR_RAW) {
            const unsigned vb0 = __ballot_sync(FULL, valid[0]), vb1 = __ballot_sync(FULL, valid[1]);
            for (unsigned h = 0; h < 2; h++) {
                if (!valid[h])
                    continue;
                unsigned rank = h ? __popc(vb0) + __popc(vb1 & dv_lanemask_lt())
                                  : __popc(vb0 & dv_lanemask_lt());
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
                    dv_put_bits(out, idx[h], Q.fill_bits);
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
                        atomicOr(&sc->corrupt, 1u);
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
                uint32_t m0 = 0, m1 = 0;   /* code <= 32 planes */
                for (unsigned j = 0; j < code; j++) {
                    m0 |= ((w[2 + 2 * j] >> lane) & 1u) << j;
                    m1 |= ((w[3 + 2 * j] >> lane) & 1u) << j;
                }
                r[0] = (w[0] >> lane & 1u) ? -(int64_t)m0 : (int64_t)m0;
                r[1] = (w[1] >> lane & 1u) ? -(int64_t)m1 : (int64_t)m1;
            }
            if (lane == 0)
                r[0] = hz_unzigzag(zc);
        }
        if (delta && lane == 0)
            r[0] = (int64_t)((uint64_t)r[0] + (uint64_t)prev_s[blk]);
        uint64_t code[2] = {(uint64_t)r[0], (uint64_t)r[1]};
        if constexpr (DIM > 1) {
            if (pred == FL_PRED_MEAN)
                by_diagonals<DIM>(q, r, code);
            else
                by_sums<DIM>(pred, code, lane);
        } else {
            by_sums<DIM>(pred, code, lane);
        }
        for (unsigned h = 0; h < 2; h++) {
            if (!valid[h])
                continue;
            if (fill >> (lane + 32 * h) & 1u)
                dv_put_bits(out, idx[h], Q.fill_bits);
            else   /* rounded to T once: qz_reconstruct's value */
                out[idx[h]] = (T)qz_reconstruct_wide(&Q, (double)(int64_t)code[h]);
        }
        __syncwarp();   /* stage and q are rewritten by the warp's next block */
    }
}

template <typename T, int DIM, typename I, bool LIN>
static void decode_in(const dec_args &a, unsigned count, cudaStream_t s)
{
    if (count == 1)
        fl_dec_tile_kernel<T, DIM, false, I, LIN><<<(unsigned)a.g.ntiles, FL_THREADS, 0, s>>>(a);
    else
        fl_dec_tile_kernel<T, DIM, true, I, LIN>
            <<<(unsigned)(count * a.g.ntiles), FL_THREADS, 0, s>>>(a);
}

template <typename T, int DIM>
static void decode_as(const dec_args &a, unsigned count, bool lin, cudaStream_t s)
{
    if (fl_pos32(a.g))
        lin ? decode_in<T, DIM, uint32_t, true>(a, count, s)
            : decode_in<T, DIM, uint32_t, false>(a, count, s);
    else
        lin ? decode_in<T, DIM, uint64_t, true>(a, count, s)
            : decode_in<T, DIM, uint64_t, false>(a, count, s);
}

cudaError_t fl_launch_decode(const fl_geom *g, int is_f32, int lin, const fl_dec_job *jobs,
                             const fl_dec_job *one, unsigned count, hzc_scalars *sc,
                             cudaStream_t s)
{
    dec_args a = {*g, jobs, sc, one ? *one : fl_dec_job()};
    static void (*const table[2][3])(const dec_args &, unsigned, bool, cudaStream_t) = {
        {decode_as<double, 1>, decode_as<double, 2>, decode_as<double, 3>},
        {decode_as<float, 1>, decode_as<float, 2>, decode_as<float, 3>}};
    table[is_f32 ? 1 : 0][g->dim - 1](a, one ? 1 : count, lin != 0, s);
    return cudaGetLastError();
}
