/* Huffman codec kernels (codec 2): the steps of huff_cpu.c on the GPU, every value from the
 * same inline functions (huff_common.h), so the payload matches hf_encode_cpu byte for byte.
 * Encoding: the Lorenzo orders' costs over a sample of the tiles, then tokens (a Lorenzo order
 * quantises each tile there) with a per-tile histogram and the ordered outlier and verbatim
 * lists (decoupled look-back), the three forms' codebooks a CTA each, side by side, the bit
 * stream a warp per sub-chunk, packed apart and then placed at the scanned offsets. Decoding:
 * deltas (a thread a sub-chunk, or HF_SPLIT threads where the stream is neither dense nor
 * mostly runs), the outliers, then partial sums a CTA per tile in shared memory. */
#include "kernels.h"
#include "lookback.cuh"

#define HF_THREADS 256                     /* tile kernels: a CTA a tile */
#define HF_WARPS (HF_THREADS / 32)
#define HF_SEG (HF_TILE_N / HF_WARPS)      /* a warp's share of a tile in the ordered passes */
#define HF_BATCH 16                        /* loads a thread issues before using them */
#define HF_SUB_THREADS 128                 /* decoders of a thread a sub-chunk */
#define HF_ONE_THREADS 1024                /* a CTA a task: codebooks, choice, offsets */
#define HF_TABLE (1u << HF_MAX_LEN)

/* Tiles and the codebook live in dynamic shared memory (above the 48 KiB static limit). */
#define HF_SMEM_COST (HF_TILE_N * 4u)
#define HF_SMEM_TOKEN (HF_TILE_N * 4u + HF_TILE_N / 4u + HF_RADIUS_MAX * 4u)
#define HF_SMEM_DTILE (HF_TILE_N * 4u)
#define HF_SMEM_BOOK (HF_MAX_SYMS * (4u + 4u + 8u + 8u + 4u + 2u + 2u + 4u + 1u))
#define HF_NODES_PER ((2u * HF_MAX_SYMS + HF_ONE_THREADS - 1u) / HF_ONE_THREADS)
#define HF_SMEM_TABLE (HF_TABLE * 2u)      /* the decoder table (hf_table_entry) */

extern __shared__ __align__(16) unsigned char hf_smem[];

__device__ __forceinline__ unsigned hf_lanemask_lt()
{
    return (1u << (threadIdx.x & 31u)) - 1u;
}

template <typename V>
__device__ __forceinline__ V hf_warp_incl(V v)
{
    const unsigned lane = threadIdx.x & 31u;
    for (unsigned d = 1; d < 32; d <<= 1) {
        V u = __shfl_up_sync(FULL, v, d);
        if (lane >= d)
            v += u;
    }
    return v;
}

__device__ __forceinline__ unsigned long long hf_warp_sum(unsigned long long v)
{
    for (int d = 16; d > 0; d >>= 1)
        v += __shfl_xor_sync(FULL, v, d);
    return v;
}

/* Exclusive prefix of v over the CTA (all its threads call it) and the CTA's total. */
__device__ uint64_t hf_block_excl(uint64_t v, uint64_t *total)
{
    __shared__ uint64_t w_s[32];
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    const uint64_t inc = hf_warp_incl(v);
    if (lane == 31)
        w_s[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        uint64_t x = hf_warp_incl(lane < nw ? w_s[lane] : (uint64_t)0);
        if (lane < nw)
            w_s[lane] = x;
    }
    __syncthreads();
    const uint64_t r = (warp ? w_s[warp - 1] : 0) + inc - v;
    *total = w_s[nw - 1];
    __syncthreads();
    return r;
}

/* p ? a : b, both worked out first: the compiler would otherwise branch around a's arithmetic
 * (and the warp diverge), where a select costs one instruction. */
__device__ __forceinline__ unsigned hf_select(bool p, unsigned a, unsigned b)
{
    unsigned r;
    asm("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %1, 0;\n\tselp.u32 %0, %2, %3, q;\n\t}"
        : "=r"(r)
        : "r"((unsigned)p), "r"(a), "r"(b));
    return r;
}

/* PTX of `op [addr], v` done only where p (operands: addr, v, p) holds: the code around it
 * then needs no branch. */
#define HF_PREDICATED_SHARED(op) \
    "{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %2, 0;\n\t@q " op " [%0], %1;\n\t}"

/* v stored to the shared-memory word at addr where p holds. */
__device__ __forceinline__ void hf_shared_store(uint32_t addr, uint32_t v, bool p)
{
    asm volatile(HF_PREDICATED_SHARED("st.shared.u32")::"r"(addr), "r"(v), "r"((unsigned)p)
                 : "memory");
}

/* v added to the shared-memory word at addr where p holds. Without a memory clobber: the sums
 * are read only after a barrier, and other loads and stores may move across the add. */
__device__ __forceinline__ void hf_shared_add(uint32_t addr, unsigned v, bool p)
{
    asm volatile(HF_PREDICATED_SHARED("red.shared.add.u32")::"r"(addr), "r"(v), "r"((unsigned)p));
}

__device__ __forceinline__ void hf_coords(const hf_tile &tl, unsigned e, unsigned *z, unsigned *y,
                                          unsigned *x)
{
    const unsigned plane = tl.ey * tl.ex;
    if (((tl.ex & (tl.ex - 1u)) | (plane & (plane - 1u))) == 0) {
        /* full tiles have power-of-two rows and planes: shifts instead of two divisions */
        *z = e >> (__ffs(plane) - 1);
        *y = (e & (plane - 1u)) >> (__ffs(tl.ex) - 1);
        *x = e & (tl.ex - 1u);
        return;
    }
    *z = e / plane;
    const unsigned r = e - *z * plane;
    *y = r / tl.ex;
    *x = r - *y * tl.ex;
}

__device__ __forceinline__ uint64_t hf_index(const hf_geom &g, const hf_tile &tl, unsigned z,
                                             unsigned y, unsigned x)
{
    return ((tl.z0 + z) * g.ny + tl.y0 + y) * g.nx + tl.x0 + x;
}

__device__ __forceinline__ unsigned hf_tile_n(const hf_tile &tl)
{
    return tl.ez * tl.ey * tl.ex;
}

/* huff_cpu.c's payload_size */
__device__ __forceinline__ uint64_t hf_size(const hf_geom &g, unsigned esize, unsigned m0,
                                            unsigned m1, uint64_t bits, uint64_t n_out,
                                            uint64_t n_verb)
{
    return HF_OFF_CODEBOOK + hf_pad4(hf_codebook_size(m0, m1)) + hf_pad4(2 * g.nsub) +
           hf_pad4((bits + 7) / 8) + 8 * n_out + (4 + esize) * n_verb;
}

/* ---- encoder ------------------------------------------------------------------------------ */

struct hf_enc_args {
    hf_geom g;
    qz_quant Q;
    unsigned R;
    const void *in;
    hzc_huff_bufs b;
    hzc_scalars *sc;
};

/* Deltas are 32-bit (hf_zigzag32): |p| < 2^28, so every partial sum of a Lorenzo prediction's
 * at most 8 terms fits an int32 and gives huff_cpu.c's 64-bit value. */

/* hf_lorenzo in 32 bits, the tile's codes in p_s (raster order inside the tile). */
__device__ __forceinline__ int32_t hf_delta32(const int32_t *p_s, unsigned order, unsigned ex,
                                              unsigned plane, unsigned z, unsigned y, unsigned x,
                                              unsigned e)
{
    int32_t d = p_s[e];
    if (order == 1)
        return e ? d - p_s[e - 1] : d;
    if (x) d -= p_s[e - 1];
    if (y) d -= p_s[e - ex];
    if (x && y) d += p_s[e - ex - 1];
    if (order == 3) {
        if (z) d -= p_s[e - plane];
        if (x && z) d += p_s[e - plane - 1];
        if (y && z) d += p_s[e - plane - ex];
        if (x && y && z) d -= p_s[e - plane - ex - 1];
    }
    return d;
}

/* The tile shape of a chunk of DIM dimensions (huff_cpu.c's geometry). A whole tile (not cut
 * by the chunk's edge) has it, so its coordinates are shifts by constants; edge tiles take
 * hf_coords. */
template <int DIM> struct hf_shape {
    static constexpr unsigned Z = DIM == 3 ? HF_TILE_Z3 : 1u;
    static constexpr unsigned Y = DIM == 3 ? HF_TILE_Y3 : (DIM == 2 ? HF_TILE_2 : 1u);
    static constexpr unsigned X = DIM == 3 ? HF_TILE_X3 : (DIM == 2 ? HF_TILE_2 : HF_TILE_N);
};

template <int DIM>
__device__ __forceinline__ bool hf_whole(const hf_tile &tl)
{
    return tl.ez == hf_shape<DIM>::Z && tl.ey == hf_shape<DIM>::Y && tl.ex == hf_shape<DIM>::X;
}

/* Element e's coordinates inside its tile. */
template <int DIM, bool WHOLE>
__device__ __forceinline__ void hf_coords_of(const hf_tile &tl, unsigned e, unsigned *z,
                                             unsigned *y, unsigned *x)
{
    if (!WHOLE) {
        hf_coords(tl, e, z, y, x);
        return;
    }
    using S = hf_shape<DIM>;
    *z = e / (S::Y * S::X);
    *y = e / S::X % S::Y;
    *x = e % S::X;
}

/* quantise_task of huff_cpu.c over a tile: each element's code p into p_s (0 when not coded)
 * and, with MARKS, bitmaps of its fill and verbatim elements, a 32-bit word per warp-sized run
 * of elements. LIN: the chunk's mode is ABS or REL, which lets the compiler drop PWREL's
 * branches. Offsets from the tile's first element are 32-bit: chunks hold < 2^32 elements. */
template <typename T, int DIM, bool WHOLE, bool MARKS, bool LIN = false>
__device__ void hf_quantise_tile(const hf_geom &g, const qz_quant &Q, const T *in,
                                 const hf_tile &tl, int32_t *p_s, uint32_t *fill_s,
                                 uint32_t *verb_s)
{
    using S = hf_shape<DIM>;
    qz_quant Qm = Q;
    if (LIN)
        Qm.pwrel = 0;
    const unsigned tn = WHOLE ? S::Z * S::Y * S::X : hf_tile_n(tl), lane = threadIdx.x & 31u;
    const uint32_t nx = (uint32_t)g.nx, plane = (uint32_t)(g.ny * g.nx);
    const T *tin = in + hf_index(g, tl, 0, 0, 0);
    constexpr bool full = WHOLE && S::Z * S::Y * S::X % (HF_THREADS * HF_BATCH) == 0;
    /* the whole warp runs every round: the ballots below need all its lanes */
    for (unsigned w0 = threadIdx.x - lane; w0 < tn; w0 += HF_THREADS * HF_BATCH) {
        T v[HF_BATCH];
#pragma unroll
        for (unsigned k = 0; k < HF_BATCH; k++) {
            const unsigned e = w0 + k * HF_THREADS + lane;
            unsigned z, y, x;
            v[k] = 0;
            if (full || e < tn) {
                hf_coords_of<DIM, WHOLE>(tl, e, &z, &y, &x);
                v[k] = tin[z * plane + y * nx + x];
            }
        }
#pragma unroll
        for (unsigned k = 0; k < HF_BATCH; k++) {
            const unsigned b = w0 + k * HF_THREADS, e = b + lane;
            if (!full && b >= tn)   /* warp-uniform */
                break;
            int32_t p = 0;
            bool fill = false, verb = false;
            /* without branches: a fill value's code is worked out, then dropped */
            if (full || e < tn) {
                fill = qz_is_fill(&Qm, hf_bits(v[k]));
                const bool coded = hf_dq_code(&Qm, (double)v[k], &p);
                verb = !fill && !coded;
                p_s[e] = fill ? 0 : p;
            }
            if (MARKS) {
                const unsigned fw = __ballot_sync(FULL, fill), vw = __ballot_sync(FULL, verb);
                if (lane == 0) {
                    fill_s[b >> 5] = fw;
                    verb_s[b >> 5] = vw;
                }
            }
        }
    }
}

/* A sampled tile's cost under each Lorenzo order (bit lengths, summed in 32 bits a thread: at
 * most 64 elements of at most 32 bits), added to the plan's with the tile's element count in
 * cost[0] (integer sums, so any order of addition gives the CPU's). */
template <typename T, int DIM, bool WHOLE, bool LIN = false>
__device__ void hf_cost_tile(const hf_enc_args &a, const hf_tile &tl)
{
    int32_t *p_s = (int32_t *)hf_smem;
    __shared__ unsigned long long c_s[HF_WARPS][DIM];
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    hf_quantise_tile<T, DIM, WHOLE, false, LIN>(a.g, a.Q, (const T *)a.in, tl, p_s, nullptr,
                                                nullptr);
    __syncthreads();
    const unsigned tn = hf_tile_n(tl);
    unsigned c[DIM];
    for (int o = 0; o < DIM; o++)
        c[o] = 0;
    const unsigned ex = WHOLE ? hf_shape<DIM>::X : tl.ex;
    const unsigned plane = WHOLE ? hf_shape<DIM>::Y * hf_shape<DIM>::X : tl.ey * tl.ex;
    for (unsigned e = threadIdx.x; e < tn; e += HF_THREADS) {
        unsigned z, y, x;
        hf_coords_of<DIM, WHOLE>(tl, e, &z, &y, &x);
        /* hf_delta32's orders from one load of each neighbour */
        const int32_t p = p_s[e], prev = e ? p_s[e - 1] : 0;
        c[0] += 32u - __clz(hf_zigzag32(p - prev));
        if (DIM == 1)
            continue;
        const int32_t px = x ? prev : 0, py = y ? p_s[e - ex] : 0;
        const int32_t pxy = x && y ? p_s[e - ex - 1] : 0;
        const int32_t d2 = p - px - py + pxy;
        c[1 % DIM] += 32u - __clz(hf_zigzag32(d2));   /* c[1]: in bounds for every DIM */
        if (DIM == 3) {
            const int32_t pz = z ? p_s[e - plane] : 0, pxz = x && z ? p_s[e - plane - 1] : 0;
            const int32_t pyz = y && z ? p_s[e - plane - ex] : 0;
            const int32_t pxyz = x && y && z ? p_s[e - plane - ex - 1] : 0;
            c[DIM - 1] += 32u - __clz(hf_zigzag32(d2 - pz + pxz + pyz - pxyz));
        }
    }
    for (int o = 0; o < DIM; o++) {
        unsigned long long v = hf_warp_sum((unsigned long long)c[o]);
        if (lane == 0)
            c_s[warp][o] = v;
    }
    __syncthreads();
    if (threadIdx.x < DIM) {
        unsigned long long v = 0;
        for (unsigned w = 0; w < HF_WARPS; w++)
            v += c_s[w][threadIdx.x];
        atomicAdd(&a.b.plan->cost[threadIdx.x + 1], v);
    } else if (threadIdx.x == DIM) {
        atomicAdd(&a.b.plan->cost[0], (unsigned long long)tn);
    }
}

/* The Lorenzo orders' costs over the sampled tiles (hf_sampled), a CTA a run of tiles: the
 * choice among the orders, and whether interpolation is worth trying. */
template <typename T, int DIM>
__global__ void __launch_bounds__(HF_THREADS) hf_sample_kernel(const hf_enc_args a)
{
    const uint64_t t = hf_sample_tile(&a.g, blockIdx.x);
    if (t >= a.g.ntiles)
        return;   /* a last run without a sample */
    hf_tile tl;
    hf_tile_at(&a.g, t, &tl);
    if (hf_whole<DIM>(tl) && !a.Q.pwrel)
        hf_cost_tile<T, DIM, true, true>(a, tl);
    else if (hf_whole<DIM>(tl))
        hf_cost_tile<T, DIM, true>(a, tl);
    else
        hf_cost_tile<T, DIM, false>(a, tl);
}

__device__ __forceinline__ bool hf_bit(const uint32_t *m, unsigned e)
{
    return m[e >> 5] >> (e & 31u) & 1u;
}

/* Token of element e of a tile under Lorenzo order `order` (tokenise_tile of huff_cpu.c), and
 * its delta. */
__device__ __forceinline__ unsigned hf_token_at(const int32_t *p_s, const uint32_t *fill_s,
                                                unsigned order, unsigned R, const hf_tile &tl,
                                                unsigned e, int32_t *d)
{
    unsigned z, y, x;
    hf_coords(tl, e, &z, &y, &x);
    *d = hf_delta32(p_s, order, tl.ex, tl.ey * tl.ex, z, y, x, e);
    const uint32_t zz = hf_zigzag32(*d);
    return hf_bit(fill_s, e) && *d == 0 ? HF_TOK_FILL
           : zz < 2u * R - 2u          ? zz + 2u
                                       : HF_TOK_ESCAPE;
}

/* A tile's histogram in shared memory at address h: two 16-bit counts a word (PACKED: a tile
 * holds at most 16384 elements), or 32-bit words, C copies of each token's count side by side,
 * where adjacent tokens then never share a word (an atomic's conflict) and a lane adds to copy
 * lane % C: lanes adding to one token conflict C times less. Adds are predicated shared
 * reductions on an address worked out once, not atomics through a generic pointer. */
template <bool PACKED, unsigned C = 1>
struct hf_hist {
    static_assert((!PACKED || C == 1) && C && !(C & (C - 1)),
                  "copies of 32-bit counts only, a power of two of them (lane % C)");
    uint32_t h;
    __host__ __device__ static constexpr unsigned words(unsigned nsym)
    {
        return PACKED ? (nsym + 1u) / 2u : C * nsym;
    }
    __device__ __forceinline__ void add(unsigned tk, unsigned n, bool p) const
    {
        const unsigned w = PACKED ? tk >> 1 : C * tk + (threadIdx.x & (C - 1u));
        hf_shared_add(h + 4u * w, PACKED ? n << (16 * (tk & 1u)) : n, p);
    }
    __device__ __forceinline__ static unsigned count(const uint32_t *hist_s, unsigned s)
    {
        if (PACKED)
            return hist_s[s >> 1] >> (16 * (s & 1u)) & 0xFFFFu;
        unsigned v = 0;
#pragma unroll
        for (unsigned c = 0; c < C; c++)
            v += hist_s[C * s + c];
        return v;
    }
};

/* An element's token tk (0xFFFFFFFF: none) into the tile's histogram, with one shared add per
 * distinct token of the warp, as smooth fields are mostly one; and whether it is an outlier
 * or a verbatim value into the warp's counts. */
template <bool PACKED, unsigned C>
__device__ __forceinline__ void hf_tally(hf_hist<PACKED, C> H, unsigned tk, bool is_out,
                                         bool is_verb, unsigned *n_out, unsigned *n_verb)
{
    *n_out += __popc(__ballot_sync(FULL, is_out));
    *n_verb += __popc(__ballot_sync(FULL, is_verb));
    const unsigned peers = __match_any_sync(FULL, tk);
    H.add(tk, __popc(peers), tk != 0xFFFFFFFFu && !(peers & hf_lanemask_lt()));
}

/* Four consecutive tokens of a thread into the tile's histogram: one add per distinct token
 * among the lanes whose four are one token (the common case of smooth fields), with hf_tally's
 * warp aggregation; the other lanes add each of their four without it. On the Nyx-like fields
 * a match at each of the four places cost the Lorenzo tokens more than the conflicts it saved,
 * and the interpolation's too once their counts have two copies (hf_ip_hist). */
template <bool PACKED, unsigned C>
__device__ __forceinline__ void hf_tally4(hf_hist<PACKED, C> H, const unsigned (&tk)[4])
{
    const unsigned lt = hf_lanemask_lt();
    const bool same = tk[0] == tk[1] && tk[1] == tk[2] && tk[2] == tk[3];
    const unsigned ones = __ballot_sync(FULL, same);
    if (same) {
        const unsigned peers = __match_any_sync(ones, tk[0]);
        H.add(tk[0], 4u * __popc(peers), !(peers & lt));
        return;
    }
#pragma unroll
    for (unsigned k = 0; k < 4; k++)
        H.add(tk[k], 1u, true);
}

/* The token pass of a whole tile (hf_token_at's tokens and hf_tally's counts), four consecutive
 * elements a thread from one 16-byte load of each row a Lorenzo order reads: s_k sums the terms
 * of element k's column (its own, the row above, and for order 3 the plane before), and a delta
 * is s_k minus its left neighbour's s, which for the first of the four comes from the lane
 * before. Rows are whole multiples of four, and a warp's 128 elements start a row. Counts of
 * outliers and verbatim values are the thread's own. */
template <int DIM>
__device__ __forceinline__ void hf_whole_tokens(const hf_enc_args &a, const hf_tile &tl,
                                                unsigned order, const int32_t *p_s,
                                                const uint32_t *fill_s, const uint32_t *verb_s,
                                                hf_hist<true> H, unsigned e_beg, unsigned e_end,
                                                unsigned *n_out, unsigned *n_verb)
{
    using S = hf_shape<DIM>;
    static_assert(S::X % 4 == 0 && (S::X * S::Y * S::Z) % (HF_WARPS * 128) == 0, "shares of rows");
    constexpr unsigned plane = S::Y * S::X;
    const unsigned lane = threadIdx.x & 31u, top = 2u * a.R - 2u;
    uint2 *tok = (uint2 *)(a.b.tok + tl.start);   /* whole tiles start at a multiple of 16 */
    for (unsigned b = e_beg; b < e_end; b += 128) {
        const unsigned e = b + 4 * lane, x = e % S::X, y = e / S::X % S::Y, z = e / plane;
        int4 s = *(const int4 *)(p_s + e);
        if (DIM >= 2 && order >= 2 && y) {
            const int4 u = *(const int4 *)(p_s + e - S::X);
            s = make_int4(s.x - u.x, s.y - u.y, s.z - u.z, s.w - u.w);
        }
        if (DIM == 3 && order == 3 && z) {
            int4 c = *(const int4 *)(p_s + e - plane);
            if (y) {
                const int4 u = *(const int4 *)(p_s + e - plane - S::X);
                c = make_int4(c.x - u.x, c.y - u.y, c.z - u.z, c.w - u.w);
            }
            s = make_int4(s.x - c.x, s.y - c.y, s.z - c.z, s.w - c.w);
        }
        /* order 1 (every order of a 1-D tile) continues the raster from the row before */
        const bool raster = DIM == 1 || order == 1;
        int32_t left = __shfl_up_sync(FULL, s.w, 1);
        if (raster && lane == 0)
            left = e ? p_s[e - 1] : 0;
        else if (!raster && x == 0)
            left = 0;
        const int32_t d[4] = {s.x - left, s.y - s.x, s.z - s.y, s.w - s.z};
        const unsigned fm = fill_s[e >> 5] >> (e & 31u), vm = verb_s[e >> 5] >> (e & 31u);
        unsigned tk[4];
#pragma unroll
        for (unsigned k = 0; k < 4; k++) {
            const uint32_t zz = hf_zigzag32(d[k]);
            const bool fill = fm >> k & 1u;
            tk[k] = fill && d[k] == 0 ? HF_TOK_FILL : zz < top ? zz + 2u : HF_TOK_ESCAPE;
            *n_out += tk[k] == HF_TOK_ESCAPE;
            *n_verb += (vm >> k & 1u) || (fill && tk[k] != HF_TOK_FILL);
        }
        tok[e / 4] = make_uint2(tk[0] | tk[1] << 16, tk[2] | tk[3] << 16);
        hf_tally4(H, tk);
    }
}

/* Each warp's outliers and verbatim values (n_out, n_verb) placed after those of the warps and
 * tiles before it (the look-back over tiles in ticket order t, by warp 0), the chunk's totals
 * at the last tile, and the tile's histogram added to the chunk's (by the other warps, while
 * warp 0 waits on the tiles before). Returns whether the warp has entries for the lists, and
 * then its first list indices in *ko and *kv; a warp without returns at once, without waiting
 * for the look-back. */
template <typename HH>
__device__ bool hf_tile_tail(const hf_enc_args &a, uint64_t t, unsigned n_out, unsigned n_verb,
                             const uint32_t *hist_s, uint64_t *ko, uint64_t *kv)
{
    __shared__ unsigned long long base_s[2];
    __shared__ unsigned wcnt_s[HF_WARPS][2], wofs_s[HF_WARPS][2];
    hzc_huff_plan *P = a.b.plan;
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, nsym = 2 * a.R;
    if (lane == 0) {
        wcnt_s[warp][0] = n_out;
        wcnt_s[warp][1] = n_verb;
    }
    __syncthreads();   /* the counts and the histogram are whole */
    const unsigned o = lane < HF_WARPS ? wcnt_s[lane][0] : 0u;
    const unsigned v = lane < HF_WARPS ? wcnt_s[lane][1] : 0u;
    const unsigned busy = __ballot_sync(FULL, (o | v) != 0);   /* the warps with entries */
    if (warp == 0) {
        const unsigned io = hf_warp_incl(o), iv = hf_warp_incl(v);
        if (lane < HF_WARPS) {
            wofs_s[lane][0] = io - o;
            wofs_s[lane][1] = iv - v;
        }
        uint64_t agg[2] = {__shfl_sync(FULL, io, 31), __shfl_sync(FULL, iv, 31)}, excl[2];
        unsigned long long *status[2] = {a.b.status, a.b.status + a.g.ntiles};
        lb_exclusive<2>(status, t, agg, excl);
        if (lane == 0) {
            base_s[0] = excl[0];
            base_s[1] = excl[1];
            if (t == a.g.ntiles - 1) {
                P->n_out = excl[0] + agg[0];
                P->n_verb = excl[1] + agg[1];
            }
        }
    } else {
        for (unsigned s = threadIdx.x - 32u; s < nsym; s += HF_THREADS - 32u) {
            const unsigned h = HH::count(hist_s, s);
            if (h)
                atomicAdd(&P->hist[s], h);
        }
    }
    const bool mine = busy >> warp & 1u;
    if (!busy || !(mine || warp == 0))
        return false;
    /* warp 0 and the warps with entries: base_s is written */
    asm volatile("bar.sync 1, %0;" ::"r"(32u * __popc(busy | 1u)) : "memory");
    if (!mine)
        return false;
    *ko = base_s[0] + wofs_s[warp][0];
    *kv = base_s[1] + wofs_s[warp][1];
    return true;
}

/* An outlier (element e of the tile, its delta d) or a verbatim value as list entry k. */
__device__ __forceinline__ void hf_put_out(const hf_enc_args &a, const hf_tile &tl, unsigned e,
                                           int32_t d, uint64_t k)
{
    if (k < a.b.kmax_out) {
        a.b.out_pos[k] = (uint32_t)(tl.start + e);
        a.b.out_delta[k] = d;
    }
}

template <typename T>
__device__ __forceinline__ void hf_put_verb(const hf_enc_args &a, const hf_tile &tl, unsigned e,
                                            uint64_t k)
{
    if (k < a.b.kmax_verb) {
        unsigned z, y, x;
        hf_coords(tl, e, &z, &y, &x);
        a.b.verb_pos[k] = (uint32_t)(tl.start + e);
        a.b.verb_bits[k] = hf_bits(((const T *)a.in)[hf_index(a.g, tl, z, y, x)]);
    }
}

/* What the token kernels do once a tile's tokens are counted (but the interpolation's whole
 * tiles, which list the tokens they marked): hf_tile_tail, then the outliers and verbatim
 * values of the warp's share [e_beg, e_end) into the lists, where it has any (rare), found by
 * reading the share again. kind(e, d, is_out, is_verb) tells whether element e is an outlier
 * (its delta d) or a verbatim value. */
template <typename T, typename HH, typename K>
__device__ __forceinline__ void hf_tile_finish(const hf_enc_args &a, uint64_t t, const hf_tile &tl,
                                               unsigned e_beg, unsigned e_end, unsigned n_out,
                                               unsigned n_verb, const uint32_t *hist_s, K kind)
{
    uint64_t ko, kv;
    if (!hf_tile_tail<HH>(a, t, n_out, n_verb, hist_s, &ko, &kv))   /* warp-uniform */
        return;
    for (unsigned b = e_beg; b < e_end; b += 32) {
        const unsigned e = b + (threadIdx.x & 31u);
        bool is_out = false, is_verb = false;
        int32_t d = 0;
        if (e < e_end)
            kind(e, d, is_out, is_verb);
        const unsigned bo = __ballot_sync(FULL, is_out), bv = __ballot_sync(FULL, is_verb);
        if (is_out)
            hf_put_out(a, tl, e, d, ko + __popc(bo & hf_lanemask_lt()));
        if (is_verb)
            hf_put_verb<T>(a, tl, e, kv + __popc(bv & hf_lanemask_lt()));
        ko += __popc(bo);
        kv += __popc(bv);
    }
}

/* The tile a CTA of a token kernel takes, in ticket order (for the look-back), with its
 * histogram (words words) cleared. */
__device__ __forceinline__ uint64_t hf_take_tile(const hf_enc_args &a, uint32_t *hist_s,
                                                 unsigned words)
{
    __shared__ unsigned long long tile_s;
    if (threadIdx.x == 0)
        tile_s = atomicAdd(&a.b.plan->ticket, 1ull);
    for (unsigned s = threadIdx.x; s < words; s += HF_THREADS)
        hist_s[s] = 0;
    __syncthreads();
    return tile_s;
}

/* Tokens, the histogram, and the outliers and verbatim values in position order under a
 * Lorenzo order, which quantises the tile here, the one time: each warp takes a contiguous
 * share of the tile, so ranks follow from ballots and the tile's offsets from the look-back.
 * It and hf_ip_token_kernel are both launched, and the one the predictor is not for returns at
 * once, so that each keeps its own registers (the quantiser's would cost the other a third of
 * its occupancy). */
template <typename T, int DIM>
__global__ void __launch_bounds__(HF_THREADS, 3) hf_token_kernel(const hf_enc_args a)
{
    int32_t *p_s = (int32_t *)hf_smem;
    uint32_t *fill_s = (uint32_t *)(p_s + HF_TILE_N);
    uint32_t *verb_s = fill_s + HF_TILE_N / 32;
    uint32_t *hist_s = verb_s + HF_TILE_N / 32;
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, R = a.R;
    const unsigned order = a.b.plan->pred;
    if (order == HF_PRED_INTERP)
        return;   /* grid-uniform: hf_ip_token_kernel's predictor */
    const hf_hist<true> H = {(uint32_t)__cvta_generic_to_shared(hist_s)};
    const uint64_t t = hf_take_tile(a, hist_s, H.words(2 * R));
    hf_tile tl;
    hf_tile_at(&a.g, t, &tl);
    const unsigned tn = hf_tile_n(tl);
    const T *in = (const T *)a.in;
    const bool whole = hf_whole<DIM>(tl);
    if (whole && !a.Q.pwrel)
        hf_quantise_tile<T, DIM, true, true, true>(a.g, a.Q, in, tl, p_s, fill_s, verb_s);
    else if (whole)
        hf_quantise_tile<T, DIM, true, true>(a.g, a.Q, in, tl, p_s, fill_s, verb_s);
    else
        hf_quantise_tile<T, DIM, false, true>(a.g, a.Q, in, tl, p_s, fill_s, verb_s);
    __syncthreads();

    const unsigned e_beg = warp * HF_SEG, e_end = min(tn, e_beg + HF_SEG);
    unsigned n_out = 0, n_verb = 0;
    if (whole) {
        hf_whole_tokens<DIM>(a, tl, order, p_s, fill_s, verb_s, H, e_beg, e_end, &n_out, &n_verb);
        n_out = __reduce_add_sync(FULL, n_out);
        n_verb = __reduce_add_sync(FULL, n_verb);
    }
    for (unsigned b = e_beg; !whole && b < e_end; b += 32) {   /* an edge tile */
        const unsigned e = b + lane;
        unsigned tk = 0xFFFFFFFFu;
        bool is_out = false, is_verb = false;
        if (e < e_end) {
            int32_t d;
            tk = hf_token_at(p_s, fill_s, order, R, tl, e, &d);
            is_out = tk == HF_TOK_ESCAPE;
            is_verb = hf_bit(verb_s, e) || (hf_bit(fill_s, e) && tk != HF_TOK_FILL);
            a.b.tok[tl.start + e] = (uint16_t)tk;
        }
        hf_tally(H, tk, is_out, is_verb, &n_out, &n_verb);
    }
    hf_tile_finish<T, hf_hist<true>>(a, t, tl, e_beg, e_end, n_out, n_verb, hist_s,
                      [&](unsigned e, int32_t &d, bool &is_out, bool &is_verb) {
                          const unsigned tk = hf_token_at(p_s, fill_s, order, R, tl, e, &d);
                          is_out = tk == HF_TOK_ESCAPE;
                          is_verb = hf_bit(verb_s, e) || (hf_bit(fill_s, e) && tk != HF_TOK_FILL);
                      });
}

/* The same outputs from the interpolation's tokens, which hzc_ip_launch_encode wrote: a token
 * needs nothing else, so each warp streams its share from global memory, HF_IP_BATCH loads a
 * thread in flight, with no tile in shared memory, and more CTAs fit an SM than the quantising
 * kernel's three. The rare outliers read their deltas, and verbatim values, marked
 * HZC_TOK_VERBATIM, get delta 0's token. Eight CTAs an SM (32 registers) keep every thread
 * slot of the SM busy. */
#define HF_IP_BATCH 8
/* its histogram: two copies of the counts (four and eight cost more to clear and sum than their
 * fewer conflicts saved), in dynamic shared memory sized by the radius */
using hf_ip_hist = hf_hist<false, 2>;
template <typename T>
__global__ void __launch_bounds__(HF_THREADS, 8) hf_ip_token_kernel(const hf_enc_args a)
{
    uint32_t *hist_s = (uint32_t *)hf_smem;   /* hf_ip_hist's words */
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    if (a.b.plan->pred != HF_PRED_INTERP)
        return;   /* grid-uniform: hf_token_kernel's predictor */
    const hf_ip_hist H = {(uint32_t)__cvta_generic_to_shared(hist_s)};
    const uint64_t t = hf_take_tile(a, hist_s, H.words(2 * a.R));
    hf_tile tl;
    hf_tile_at(&a.g, t, &tl);
    const int32_t *delta = a.b.ip_delta + tl.start;
    uint16_t *tok = a.b.tok + tl.start;
    bool verb;
    const unsigned tk_verb = hf_ip_token(HZC_CODE_VERBATIM, a.R, &verb);
    const unsigned e_beg = warp * HF_SEG, e_end = min(hf_tile_n(tl), e_beg + HF_SEG);
    unsigned n_out = 0, n_verb = 0;
    if (hf_tile_n(tl) == HF_TILE_N) {   /* whole: it starts at a multiple of 16 */
        /* four tokens a lane, one 8-byte load, in groups of 32 loads a warp: bit 4 g + j of
         * om (vm) says whether token j of the lane's load in group g is an outlier (verbatim) */
        constexpr unsigned groups = HF_SEG / (4 * 32);
        static_assert(groups == 2 * HF_IP_BATCH, "two rounds of loads, 64 bits of marks");
        const uint2 *t4 = (const uint2 *)(tok + e_beg);
        uint64_t om = 0, vm = 0;
#pragma unroll
        for (unsigned r = 0; r < 2; r++) {
            uint2 c[HF_IP_BATCH];
#pragma unroll
            for (unsigned k = 0; k < HF_IP_BATCH; k++)
                c[k] = t4[32 * (HF_IP_BATCH * r + k) + lane];
#pragma unroll
            for (unsigned k = 0; k < HF_IP_BATCH; k++) {
                unsigned tk[4] = {c[k].x & 0xFFFFu, c[k].x >> 16, c[k].y & 0xFFFFu, c[k].y >> 16};
                unsigned o = 0, v = 0;
#pragma unroll
                for (unsigned j = 0; j < 4; j++) {
                    const bool is_verb = tk[j] == HZC_TOK_VERBATIM;
                    tk[j] = is_verb ? tk_verb : tk[j];
                    v |= (unsigned)is_verb << j;
                    o |= (unsigned)(tk[j] == HF_TOK_ESCAPE) << j;
                }
                om |= (uint64_t)o << 4 * (HF_IP_BATCH * r + k);
                vm |= (uint64_t)v << 4 * (HF_IP_BATCH * r + k);
                hf_tally4(H, tk);
            }
        }
        n_out = __reduce_add_sync(FULL, __popcll(om));
        n_verb = __reduce_add_sync(FULL, __popcll(vm));
        uint64_t ko, kv;
        if (!hf_tile_tail<hf_ip_hist>(a, t, n_out, n_verb, hist_s, &ko, &kv))   /* warp-uniform */
            return;
        /* the marked tokens into the lists in position order: by group, lane, then token */
        for (unsigned g = 0; g < groups; g++) {
            const unsigned ob = (unsigned)(om >> 4 * g) & 15u, vb = (unsigned)(vm >> 4 * g) & 15u;
            if (!__any_sync(FULL, ob | vb))
                continue;
            const unsigned io = hf_warp_incl((unsigned)__popc(ob));
            const unsigned iv = hf_warp_incl((unsigned)__popc(vb));
            uint64_t ok = ko + io - __popc(ob), vk = kv + iv - __popc(vb);
            const unsigned e0 = e_beg + 4 * (32 * g + lane);
            for (unsigned j = 0; j < 4; j++) {
                if (ob >> j & 1u)
                    hf_put_out(a, tl, e0 + j, delta[e0 + j], ok++);
                if (vb >> j & 1u) {
                    tok[e0 + j] = (uint16_t)tk_verb;
                    hf_put_verb<T>(a, tl, e0 + j, vk++);
                }
            }
            ko += __shfl_sync(FULL, io, 31);
            kv += __shfl_sync(FULL, iv, 31);
        }
        return;
    }
    for (unsigned b0 = e_beg; b0 < e_end; b0 += 32 * HF_IP_BATCH) {   /* an edge tile */
        unsigned c[HF_IP_BATCH];
#pragma unroll
        for (unsigned k = 0; k < HF_IP_BATCH; k++) {
            const unsigned e = b0 + 32 * k + lane;
            c[k] = e < e_end ? tok[e] : 0u;
        }
#pragma unroll
        for (unsigned k = 0; k < HF_IP_BATCH; k++) {
            const unsigned e = b0 + 32 * k + lane;
            if (b0 + 32 * k >= e_end)   /* warp-uniform */
                break;
            unsigned tk = 0xFFFFFFFFu;
            bool is_verb = false;
            if (e < e_end) {
                is_verb = c[k] == HZC_TOK_VERBATIM;
                tk = is_verb ? tk_verb : c[k];
            }
            hf_tally(H, tk, tk == HF_TOK_ESCAPE, is_verb, &n_out, &n_verb);
        }
    }
    hf_tile_finish<T, hf_ip_hist>(a, t, tl, e_beg, e_end, n_out, n_verb, hist_s,
                             [&](unsigned e, int32_t &d, bool &is_out, bool &is_verb) {
                                 const unsigned tk = tok[e];
                                 is_out = tk == HF_TOK_ESCAPE;
                                 is_verb = tk == HZC_TOK_VERBATIM;
                                 if (is_out)
                                     d = delta[e];
                                 if (is_verb)
                                     tok[e] = (uint16_t)tk_verb;
                             });
}

/* Form 0's commonest token (huff_cpu.c's rs, ties to the lowest: the largest key) and which of
 * forms 1 and 2 may win: all that the forms' token counts need, known before any codebook. */
__global__ void __launch_bounds__(HF_ONE_THREADS) hf_may_kernel(const hf_enc_args a)
{
    hzc_huff_plan *P = a.b.plan;
    __shared__ unsigned long long best_s, small_s;
    const unsigned R = a.R;
    if (threadIdx.x == 0) {
        best_s = 0;
        small_s = 0;
    }
    __syncthreads();
    unsigned long long best = 0, small = 0;
    for (unsigned s = threadIdx.x; s < 2 * R; s += blockDim.x) {
        const unsigned h = P->hist[s];
        if (h)
            best = max(best, (unsigned long long)h << 32 | (0xFFFFFFFFu - s));
        if (s >= 2 && s < 2 + HF_PAIR_K)
            small += h;
    }
    for (int d = 16; d > 0; d >>= 1)
        best = max(best, __shfl_xor_sync(FULL, best, d));
    small = hf_warp_sum(small);
    if ((threadIdx.x & 31u) == 0) {
        atomicMax(&best_s, best);   /* a CAS loop: once a warp */
        atomicAdd(&small_s, small);
    }
    __syncthreads();
    const unsigned rs = 0xFFFFFFFFu - (unsigned)(best_s & 0xFFFFFFFFu);
    if (threadIdx.x == 0) {
        P->rs = rs;
        P->may[HF_FORM_RUNS] = 2 * (uint64_t)P->hist[rs] >= a.g.n;
        P->may[HF_FORM_PAIRS] = R >= HF_PAIR_MIN_RADIUS && 2 * small_s >= a.g.n;
    }
    /* the tokens forms 1 and 2 write as they are: all but the run token, and all but the small
     * ones; hf_althist_kernel adds the rest */
    for (unsigned s = threadIdx.x; s < 2 * R; s += blockDim.x) {
        const unsigned h = P->hist[s];
        P->hist_alt[HF_FORM_RUNS - 1][s] = s == rs ? 0u : h;
        P->hist_alt[HF_FORM_PAIRS - 1][s] = s - 2u < HF_PAIR_K ? 0u : h;
    }
}

/* hf_build_lengths for m >= 2 leaves by the whole CTA: the merge on one thread (its steps wait
 * on each other), the depths by pointer jumping, the leaves' lengths each from the folded
 * counts' prefix. anc and depth hold 2m entries. */
__device__ void hf_lengths(const uint16_t *order, const uint32_t *w, unsigned m, uint8_t *len,
                           uint32_t *par, uint32_t *nw, uint32_t *anc, uint16_t *depth,
                           unsigned *count, unsigned *maxd)
{
    const unsigned nn = 2 * m - 1, root = nn - 1;
    if (threadIdx.x == 0)
        hf_merge(w, m, par, nw);
    if (threadIdx.x < 64)
        count[threadIdx.x] = 0;
    if (threadIdx.x == 0)
        *maxd = 0;
    __syncthreads();
    for (unsigned v = threadIdx.x; v < nn; v += blockDim.x) {
        anc[v] = v == root ? root : par[v];
        depth[v] = v != root;
    }
    __syncthreads();
    /* after r rounds anc[v] is v's 2^r-th ancestor (or the root) and depth[v] the distance */
    for (unsigned span = 1; span < nn; span <<= 1) {
        uint32_t na[HF_NODES_PER];
        uint16_t nd[HF_NODES_PER];
#pragma unroll
        for (unsigned c = 0; c < HF_NODES_PER; c++) {
            const unsigned v = threadIdx.x + c * blockDim.x;
            if (v < nn) {
                const uint32_t up = anc[v];
                na[c] = anc[up];
                nd[c] = (uint16_t)(depth[v] + depth[up]);
            }
        }
        __syncthreads();
#pragma unroll
        for (unsigned c = 0; c < HF_NODES_PER; c++) {
            const unsigned v = threadIdx.x + c * blockDim.x;
            if (v < nn) {
                anc[v] = na[c];
                depth[v] = nd[c];
            }
        }
        __syncthreads();
    }
    for (unsigned v = threadIdx.x; v < m; v += blockDim.x) {
        const unsigned d = min((unsigned)depth[v], 63u);
        atomicAdd(&count[d], 1u);
        atomicMax(maxd, d);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        hf_fold(count, *maxd);
        for (unsigned l = 1; l <= HF_MAX_LEN; l++)   /* count[l] becomes leaves of length <= l */
            count[l] += count[l - 1];
    }
    __syncthreads();
    /* the r-th most frequent leaf takes the shortest length with more than r leaves up to it */
    for (unsigned i = threadIdx.x; i < m; i += blockDim.x) {
        const unsigned r = m - 1 - i;
        unsigned l = 1;
        while (count[l] <= r)
            l++;
        len[order[i]] = (uint8_t)l;
    }
}

/* build_book of huff_cpu.c for form 0 (nsym = 2R) or forms 1 and 2 (2R + 256), a CTA a form
 * (blockIdx.x), all three side by side: ranks by (count, token) in parallel, the two-queue
 * construction on one thread, then hf_canonical's codes by one warp. Each form's codebook is a
 * candidate for hf_choose_kernel. */
__global__ void __launch_bounds__(HF_ONE_THREADS) hf_book_kernel(const hf_enc_args a)
{
    hzc_huff_plan *P = a.b.plan;
    const unsigned form = blockIdx.x;
    if (form != HF_FORM_CODES && !P->may[form])
        return;
    uint32_t *w_s = (uint32_t *)hf_smem;
    uint32_t *nw_s = w_s + HF_MAX_SYMS;
    uint64_t *key_s = (uint64_t *)(nw_s + HF_MAX_SYMS);   /* count << 32 | token of the k in use */
    uint32_t *par_s = (uint32_t *)(key_s + HF_MAX_SYMS);         /* 2 HF_MAX_SYMS */
    uint32_t *h_s = par_s + 2 * HF_MAX_SYMS;
    uint16_t *order_s = (uint16_t *)(h_s + HF_MAX_SYMS);
    uint16_t *code_s = order_s + HF_MAX_SYMS;
    uint16_t *depth_s = code_s + HF_MAX_SYMS;                  /* 2 HF_MAX_SYMS */
    uint8_t *len_s = (uint8_t *)(depth_s + 2 * HF_MAX_SYMS);
    uint32_t *anc_s = (uint32_t *)key_s;   /* 2 HF_MAX_SYMS, once the keys are ranked */
    __shared__ unsigned k_s, m_s, m0_s, next_s[HF_MAX_LEN + 1], count_s[64], maxd_s;
    __shared__ unsigned long long bits_s;
    const unsigned R = a.R, nsym = 2 * R + (form == HF_FORM_CODES ? 0u : HF_RUN_MAX);
    const unsigned *hist = form == HF_FORM_CODES ? P->hist : P->hist_alt[form - 1];
    if (threadIdx.x == 0) {
        k_s = 0;
        m_s = 0;
        m0_s = 0;
        bits_s = 0;
    }
    if (threadIdx.x <= HF_MAX_LEN)
        next_s[threadIdx.x] = 0;
    __syncthreads();
    for (unsigned s = threadIdx.x; s < nsym; s += blockDim.x) {
        const unsigned h = hist[s];
        h_s[s] = h;
        len_s[s] = 0;
        if (h) {
            key_s[atomicAdd(&k_s, 1u)] = (uint64_t)h << 32 | s;
            atomicMax(&m_s, s + 1);
        }
    }
    __syncthreads();
    const unsigned k = k_s, m = m_s;
    /* the keys are distinct and order as (count, token): a rank is the number of smaller keys */
    for (unsigned i = threadIdx.x; i < k; i += blockDim.x) {
        const uint64_t key = key_s[i];
        unsigned rank = 0;
#pragma unroll 8
        for (unsigned j = 0; j < k; j++)
            rank += key_s[j] < key;
        order_s[rank] = (uint16_t)(key & 0xFFFFu);
        w_s[rank] = (uint32_t)(key >> 32);
    }
    __syncthreads();
    if (k > 1) {   /* CTA-uniform */
        hf_lengths(order_s, w_s, k, len_s, par_s, nw_s, anc_s, depth_s, count_s, &maxd_s);
    } else if (k == 1 && threadIdx.x == 0) {
        len_s[order_s[0]] = 1;
    }
    __syncthreads();
    /* hf_canonical: next_s[l] starts at the first code of length l, and token s of length l
     * gets it plus the number of tokens below s of that length (the lengths are complete, so
     * its over-fill check never fails) */
    for (unsigned s = threadIdx.x; s < m; s += blockDim.x)
        if (len_s[s])
            atomicAdd(&next_s[len_s[s]], 1u);
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned c = 0, prev = 0;
        for (unsigned l = 1; l <= HF_MAX_LEN; l++) {
            c = (c + prev) << 1;
            prev = next_s[l];
            next_s[l] = c;
        }
    }
    __syncthreads();
    if (threadIdx.x < 32) {   /* warp 0, 32 tokens a step in token order */
        for (unsigned b = 0; b < m; b += 32) {
            const unsigned s = b + threadIdx.x, l = s < m ? len_s[s] : 0u;
            const unsigned peers = __match_any_sync(FULL, l);
            const unsigned c = next_s[l] + __popc(peers & hf_lanemask_lt());
            __syncwarp();
            if (l && threadIdx.x == (unsigned)__ffs(peers) - 1u)
                next_s[l] += __popc(peers);
            __syncwarp();
            if (l)
                code_s[s] = (uint16_t)hf_reverse(c, l);
        }
    }
    __syncthreads();
    /* tokens 0..m0-1 and 2R..2R+m1-1 are described (huff_cpu.c's m0, m1) */
    unsigned long long bits = 0;
    for (unsigned s = threadIdx.x; s < m; s += blockDim.x) {
        bits += (unsigned long long)h_s[s] * len_s[s];
        if (s < 2 * R && len_s[s])
            atomicMax(&m0_s, s + 1);
    }
    bits = hf_warp_sum(bits);
    if ((threadIdx.x & 31u) == 0)
        atomicAdd(&bits_s, bits);
    __syncthreads();
    const unsigned m0 = m0_s, m1 = m > 2 * R ? m - 2 * R : 0u;
    hzc_huff_cand *C = &P->book[form];
    for (unsigned s = threadIdx.x; s < nsym; s += blockDim.x) {
        C->len[s] = len_s[s];
        C->code[s] = len_s[s] ? code_s[s] : 0;
    }
    if (threadIdx.x == 0) {
        C->m0 = m0;
        C->m1 = m1;
        C->bits = bits_s;
        C->size = hf_size(a.g, a.Q.is_f32 ? 4u : 8u, m0, m1, bits_s, P->n_out, P->n_verb);
    }
}

/* huff_cpu.c's choice: form 0, then forms 1 and 2 in that order when they may win, each
 * replacing the best so far when strictly smaller. The plan takes the winner's codebook (the
 * candidates' entries past their forms' tokens are zero, as the plan's are). */
__global__ void __launch_bounds__(HF_ONE_THREADS) hf_choose_kernel(const hf_enc_args a)
{
    hzc_huff_plan *P = a.b.plan;
    unsigned form = HF_FORM_CODES;
    for (unsigned f = HF_FORM_RUNS; f <= HF_FORM_PAIRS; f++)
        if (P->may[f] && P->book[f].size < P->book[form].size)
            form = f;
    const hzc_huff_cand *C = &P->book[form];
    for (unsigned s = threadIdx.x; s < 2 * a.R + HF_RUN_MAX; s += blockDim.x) {
        P->len[s] = C->len[s];
        P->cl[s] = C->code[s] | (uint32_t)C->len[s] << 16;
    }
    if (threadIdx.x == 0) {
        P->m0 = C->m0;
        P->m1 = C->m1;
        P->bits = C->bits;
        P->size = C->size;
        P->form = form;
        P->too_small = C->size > a.b.cap;
        a.sc->bytes_total = C->size;
    }
}

/* ---- the sub-chunk walks: a warp a sub-chunk ------------------------------------------------
 * sub_tokens of huff_cpu.c turns a sub-chunk's element tokens into the stream's with two greedy
 * scans: runs of the run token, cut every HF_RUN_MAX, and pairs of small tokens. Either scan's
 * state before a position follows from one number: how many tokens of its kind (the run token;
 * small tokens) come right before it. So each lane takes 128 consecutive tokens, a warp scan
 * gives it that number at its first token, and it walks its share as the CPU walks from there;
 * a run or a held token that the next lane's first token continues is left to that lane. */

#define HF_WALK_WARPS 4                     /* sub-chunks a CTA */
#define HF_LANE_TOK (HF_SUB / 32u)          /* a lane's share: 128 tokens */
#define HF_LANE_WORDS (HF_LANE_TOK / 2u)    /* as 32-bit words of two tokens */
/* 16-byte aligned, and the 8 lanes of a 16-byte access's phase start in different banks */
#define HF_LANE_PITCH (HF_LANE_WORDS + 4u)
#define HF_STAGE_WORDS (32u * HF_LANE_PITCH)
#define HF_STAGE_LOADS (HF_SUB / 8u / 32u)  /* 16-byte loads a lane makes */
#define HF_NO_TOKEN HF_MAX_SYMS             /* "no token": codes nothing, counts nowhere */

/* A sub-chunk's tokens in shared memory, lane share by lane share. */
struct hf_stage {
    const uint32_t *w;
    unsigned cnt;
    __device__ __forceinline__ unsigned at(unsigned i) const
    {
        const unsigned k = i % HF_LANE_TOK;
        return (w[i / HF_LANE_TOK * HF_LANE_PITCH + k / 2] >> (16 * (k & 1))) & 0xFFFFu;
    }
};

/* Sub-chunk s into w (HF_STAGE_WORDS), by the whole warp. */
__device__ hf_stage hf_stage_load(const uint16_t *tok, uint64_t n, uint64_t s, uint32_t *w)
{
    const unsigned lane = threadIdx.x & 31u;
    const uint64_t i0 = s * HF_SUB;
    const unsigned cnt = (unsigned)min((uint64_t)HF_SUB, n - i0);
    const uint4 *v = (const uint4 *)(tok + i0);   /* 8 tokens; tok is readable 8 past n */
    uint4 q[HF_STAGE_LOADS];
#pragma unroll
    for (unsigned k = 0; k < HF_STAGE_LOADS; k++) {
        const unsigned j = k * 32 + lane;
        q[k] = 8 * j < cnt ? v[j] : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (unsigned k = 0; k < HF_STAGE_LOADS; k++) {
        const unsigned j = k * 32 + lane;   /* words 4j..4j+3 lie in share j / 16 */
        *(uint4 *)(w + j / 16 * HF_LANE_PITCH + j % 16 * 4) = q[k];
    }
    __syncwarp();
    return {w, cnt};
}

/* A lane's share and the scan's state before its first token. */
struct hf_share {
    const uint32_t *w;
    unsigned cnt;
    unsigned run;    /* run tokens not yet written (form 1) */
    unsigned held;   /* 1 + the small token awaiting its pair, or 0 (form 2) */
    bool more;       /* the next lane's first token continues what this share leaves */
    uint32_t m[4];   /* bit k % 32 of m[k / 32]: token k joins the form's scan (forms 1, 2) */
    __device__ __forceinline__ unsigned at(unsigned k) const
    {
        return (w[k / 2] >> (16 * (k & 1))) & 0xFFFFu;
    }
};

/* Trailing zeros, 32 for 0. */
__device__ __forceinline__ unsigned hf_ctz(uint32_t v)
{
    return (unsigned)__clz(__brev(v));
}

/* Which of a share's cnt tokens continue its form's scan (the run token in form 1, a small one
 * in form 2), as a 128-bit mask, two tokens a word compared at once. */
__device__ __forceinline__ void hf_join_mask(hf_share &sh, unsigned form, unsigned rs)
{
    const uint32_t rs2 = rs * 0x10001u, two = 0x00020002u, k2 = HF_PAIR_K * 0x10001u;
#pragma unroll
    for (unsigned q = 0; q < 4; q++) {
        uint32_t bits = 0;
#pragma unroll
        for (unsigned j4 = 0; j4 < 4; j4++) {   /* 16 bytes, words 4 j4 .. 4 j4 + 3, a load */
            const uint4 v4 = ((const uint4 *)sh.w)[q * 4 + j4];
            const uint32_t wd[4] = {v4.x, v4.y, v4.z, v4.w};
#pragma unroll
            for (unsigned k = 0; k < 4; k++) {
                const uint32_t c = form == HF_FORM_RUNS ? __vcmpeq2(wd[k], rs2)
                                                        : __vcmpltu2(__vsub2(wd[k], two), k2);
                bits |= ((c & 1u) | (c >> 15 & 2u)) << (2 * (4 * j4 + k));
            }
        }
        const unsigned lo = 32 * q;
        sh.m[q] = sh.cnt >= lo + 32 ? bits : sh.cnt > lo ? bits & ((1u << (sh.cnt - lo)) - 1u) : 0u;
    }
}

/* f1(k, len) and f0(k, len) over the stretches of tokens that join the scan and of those that
 * do not, in order (a stretch crossing a 32-token boundary comes in two calls). */
template <typename F1, typename F0>
__device__ __forceinline__ void hf_stretches(const hf_share &sh, F1 &f1, F0 &f0)
{
#pragma unroll
    for (unsigned q = 0; q < 4; q++) {
        const unsigned lo = 32 * q;
        if (sh.cnt <= lo)
            break;
        const unsigned nb = min(32u, sh.cnt - lo);
        const uint32_t x = sh.m[q];
        for (unsigned p = 0; p < nb;) {
            const unsigned l1 = min(hf_ctz(~(x >> p)), nb - p);
            if (l1) {
                f1(lo + p, l1);
                if ((p += l1) >= nb)
                    break;
            }
            const unsigned l0 = min(hf_ctz(x >> p), nb - p);
            f0(lo + p, l0);
            p += l0;
        }
    }
}

__device__ hf_share hf_share_of(const hf_stage &st, unsigned form, unsigned rs)
{
    const unsigned lane = threadIdx.x & 31u, first = lane * HF_LANE_TOK;
    hf_share sh = {st.w + lane * HF_LANE_PITCH,
                   st.cnt > first ? min(HF_LANE_TOK, st.cnt - first) : 0u, 0u, 0u, false,
                   {0u, 0u, 0u, 0u}};
    if (form == HF_FORM_CODES)
        return sh;
    hf_join_mask(sh, form, rs);
    unsigned trail = 0;   /* tokens of the kind that end the share */
    bool open = true;
#pragma unroll
    for (int q = 3; q >= 0; q--) {
        const unsigned lo = 32u * q;
        if (open && sh.cnt > lo) {
            const unsigned nb = min(32u, sh.cnt - lo);
            const unsigned ones = min((unsigned)__clz(~(sh.m[q] << (32u - nb))), nb);
            trail += ones;
            open = ones == nb;
        }
    }
    /* inclusive scan: a share made of the kind throughout adds to the count before it */
    unsigned all = trail == sh.cnt;
    for (unsigned d = 1; d < 32; d <<= 1) {
        const unsigned t_up = __shfl_up_sync(FULL, trail, d), a_up = __shfl_up_sync(FULL, all, d);
        if (lane >= d) {
            if (all)
                trail += t_up;
            all &= a_up;
        }
    }
    unsigned before = __shfl_up_sync(FULL, trail, 1);
    /* a run or held token that this share's first token does not continue is the previous
     * lane's to write */
    if (lane == 0 || !(sh.m[0] & 1u))
        before = 0;
    if (form == HF_FORM_RUNS)
        sh.run = before % HF_RUN_MAX;
    else if (before & 1u)
        sh.held = 1u + st.at(first - 1u);
    const bool next_joins = __shfl_down_sync(FULL, sh.m[0] & 1u, 1) != 0;
    sh.more = sh.cnt == HF_LANE_TOK && first + HF_LANE_TOK < st.cnt && next_joins;
    return sh;
}

/* The stream tokens of a form-1 share, one f(token) each, in order: sub_tokens of the CPU, by
 * stretches of the run token. */
template <typename F>
__device__ __forceinline__ void hf_runs_walk(const hf_share &sh, unsigned R, F &f)
{
    unsigned run = sh.run;
    auto runs = [&](unsigned, unsigned len) {
        for (run += len; run >= HF_RUN_MAX; run -= HF_RUN_MAX)
            f(hf_run_token(R, HF_RUN_MAX));
    };
    auto others = [&](unsigned k, unsigned len) {
        if (run)
            f(hf_run_token(R, run));
        run = 0;
        for (unsigned e = k + len; k < e; k++)
            f(sh.at(k));
    };
    hf_stretches(sh, runs, others);
    if (run && !sh.more)
        f(hf_run_token(R, run));
}

/* f(token) for each of a share's tokens in order, read eight at a time, a load ahead: the bit
 * writer writes behind them, in place, and a share's padding makes the last load ahead safe. */
template <typename F>
__device__ __forceinline__ void hf_share_tokens(const hf_share &sh, F &f)
{
    const uint4 *v = (const uint4 *)sh.w;
    const unsigned whole = sh.cnt / 8u;
    uint4 next = v[0];
    for (unsigned q = 0; q < whole; q++) {
        const uint4 cur = next;
        next = v[q + 1];
        const uint32_t wd[4] = {cur.x, cur.y, cur.z, cur.w};
#pragma unroll
        for (unsigned j = 0; j < 8; j++)
            f(wd[j / 2] >> (16 * (j & 1)) & 0xFFFFu);
    }
    for (unsigned k = 8 * whole; k < sh.cnt; k++)   /* only a chunk's last sub-chunk */
        f(sh.at(k));
}

/* One token of form 2's greedy pairing (the CPU's sub_tokens), without branches: the stream
 * tokens it gives are *ta, the small token it held if that stays alone, then *tb, its own, or
 * the pair it ends; either may be HF_NO_TOKEN. Returns whether the token is small. */
__device__ __forceinline__ bool hf_pair_step(unsigned t, unsigned R, unsigned &held,
                                             unsigned &ta, unsigned &tb)
{
    const bool small = t - 2u < HF_PAIR_K;
    const unsigned pair = 2u * R + (held - 3u) * HF_PAIR_K + (t - 2u);
    ta = held && !small ? held - 1u : HF_NO_TOKEN;
    tb = hf_select(small, hf_select(held != 0, pair, HF_NO_TOKEN), t);
    held = small && !held ? t + 1u : 0u;
    return small;
}

/* Counts tokens into shared memory (h: the counts' shared address), one add per stretch of
 * equal tokens; HF_NO_TOKEN is not counted. */
struct hf_counter {
    uint32_t h;
    unsigned last, n;
    __device__ __forceinline__ void operator()(unsigned t)
    {
        const bool skip = t == HF_NO_TOKEN, same = t == last;
        hf_shared_add(h + 4u * last, n, !skip && !same && n);
        n = skip ? n : same ? n + 1u : 1u;
        last = skip ? last : t;
    }
    __device__ __forceinline__ void flush() const
    {
        hf_shared_add(h + 4u * last, n, n != 0);
    }
};

/* hf_runs_walk's run tokens only (hf_may_kernel counted the others): runs of full length are
 * counted in a register and added once. */
__device__ __forceinline__ void hf_count_runs(const hf_share &sh, unsigned R, hf_counter &c)
{
    unsigned run = sh.run, full = 0;
    auto runs = [&](unsigned, unsigned len) {
        run += len;
        full += run / HF_RUN_MAX;
        run %= HF_RUN_MAX;
    };
    auto others = [&](unsigned, unsigned) {
        if (run)
            c(hf_run_token(R, run));
        run = 0;
    };
    hf_stretches(sh, runs, others);
    if (run && !sh.more)
        c(hf_run_token(R, run));
    hf_shared_add(c.h + 4u * hf_run_token(R, HF_RUN_MAX), full, full != 0);
}

/* Form 2's pair tokens and lone small tokens only (hf_may_kernel counted the others). */
__device__ __forceinline__ void hf_count_pairs(const hf_share &sh, unsigned R, hf_counter &c)
{
    unsigned held = sh.held;
    auto step = [&](unsigned t) {   /* a small token may end a pair, another a lone one */
        unsigned ta, tb;
        const bool small = hf_pair_step(t, R, held, ta, tb);
        c(small ? tb : ta);
    };
    hf_share_tokens(sh, step);
    if (held && !sh.more)
        c(held - 1u);
}

/* The token counts of form 1 + blockIdx.y (hf_book_kernel's hist_alt, which hf_may_kernel
 * started): both forms in one launch. */
__global__ void __launch_bounds__(HF_WALK_WARPS * 32) hf_althist_kernel(const hf_enc_args a)
{
    __shared__ __align__(16) uint32_t stage_s[HF_WALK_WARPS][HF_STAGE_WORDS];
    __shared__ unsigned h_s[HF_MAX_SYMS];
    hzc_huff_plan *P = a.b.plan;
    const unsigned form = HF_FORM_RUNS + blockIdx.y, warp = threadIdx.x >> 5;
    if (!P->may[form])
        return;
    /* what the walk counts: the run tokens (form 1), or the pair tokens and the small ones */
    static_assert(HF_PAIR_K * HF_PAIR_K == HF_RUN_MAX, "pair tokens span the run tokens' range");
    const unsigned nc = HF_RUN_MAX + (form == HF_FORM_PAIRS ? HF_PAIR_K : 0u), rs = P->rs;
    auto counted = [&](unsigned i) {
        return i < HF_RUN_MAX ? 2u * a.R + i : 2u + (i - HF_RUN_MAX);
    };
    for (unsigned i = threadIdx.x; i < nc; i += blockDim.x)
        h_s[counted(i)] = 0;
    __syncthreads();
    const uint64_t s = (uint64_t)blockIdx.x * HF_WALK_WARPS + warp;
    if (s < a.g.nsub) {   /* warp-uniform */
        const hf_stage st = hf_stage_load(a.b.tok, a.g.n, s, stage_s[warp]);
        const hf_share sh = hf_share_of(st, form, rs);
        hf_counter c = {(uint32_t)__cvta_generic_to_shared(h_s), 0, 0};
        if (form == HF_FORM_RUNS)
            hf_count_runs(sh, a.R, c);
        else
            hf_count_pairs(sh, a.R, c);
        c.flush();
    }
    __syncthreads();
    for (unsigned i = threadIdx.x; i < nc; i += blockDim.x) {
        const unsigned t = counted(i);
        if (h_s[t])
            atomicAdd(&P->hist_alt[form - 1][t], h_s[t]);
    }
}

/* Zeroes the payload: the stream is then OR-ed in, and the padding stays 0. */
__global__ void __launch_bounds__(HF_THREADS) hf_clear_kernel(const hf_enc_args a)
{
    const hzc_huff_plan *P = a.b.plan;
    if (P->too_small)
        return;
    const uint64_t nw = P->size / 4;   /* every part is padded to 4 bytes */
    for (uint64_t w = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; w < nw;
         w += (uint64_t)gridDim.x * blockDim.x)
        ((uint32_t *)a.b.dst)[w] = 0;
}

/* A share's 128-bit mask (bit k: token k) as two 64-bit halves. */
struct hf_mask128 {
    uint64_t lo, hi;
    __device__ __forceinline__ bool at(unsigned k) const
    {
        return (k < 64 ? lo >> k : hi >> (k - 64)) & 1u;
    }
    /* the eight bits from bit 8 q on */
    __device__ __forceinline__ unsigned byte(unsigned q) const
    {
        return (unsigned)((q < 8 ? lo : hi) >> (8u * (q & 7u))) & 0xFFu;
    }
};

/* Where form 2's scan (sub_tokens of the CPU) pairs a share's small tokens (hf_join_mask's
 * mask): `pairs` marks each pair's first token, `quiet` the tokens that write no code of their
 * own: a pair's second, token 0 when the share starts by ending a held token's pair, and a last
 * small token that the next lane's first token pairs with (held there). The scan pairs a
 * stretch of small tokens from its start, so a pair starts at an even offset from its
 * stretch's start: at even positions in the stretches that start at one (those that adding
 * their first bits carries through) and at odd positions in the others. */
__device__ __forceinline__ void hf_pair_marks(const hf_share &sh, hf_mask128 &pairs,
                                              hf_mask128 &quiet)
{
    constexpr uint64_t EVEN = 0x5555555555555555ull;
    hf_mask128 m = {sh.m[0] | (uint64_t)sh.m[1] << 32, sh.m[2] | (uint64_t)sh.m[3] << 32};
    if (sh.held)   /* token 0 ends the held token's pair: the stretch starts at token 1 */
        m.lo &= ~1ull;
    const hf_mask128 first = {m.lo & ~(m.lo << 1), m.hi & ~(m.hi << 1 | m.lo >> 63)};
    const uint64_t slo = m.lo + (first.lo & EVEN);
    const uint64_t shi = m.hi + (first.hi & EVEN) + (slo < m.lo);
    const hf_mask128 even = {m.lo & ~slo, m.hi & ~shi};   /* the stretches starting even */
    const hf_mask128 at = {(even.lo & EVEN) | (m.lo & ~even.lo & ~EVEN),
                           (even.hi & EVEN) | (m.hi & ~even.hi & ~EVEN)};
    const hf_mask128 next = {m.lo >> 1 | m.hi << 63, m.hi >> 1};   /* token k + 1 is small */
    pairs = {at.lo & next.lo, at.hi & next.hi};
    quiet = {pairs.lo << 1 | (sh.held ? 1ull : 0ull),
             pairs.hi << 1 | pairs.lo >> 63 | (sh.more ? at.hi & 1ull << 63 : 0ull)};
}

/* LSB-first bit writer of one lane's share, in place over its tokens. The words written stay
 * behind the tokens still to be read: a code is at most 15 bits against a token's 16, and a
 * token writes at most one (a held token's pair is written in place of token 0's, which
 * writes none). */
struct hf_share_writer {
    const uint32_t *cl;   /* code | length << 16; 0 at HF_NO_TOKEN */
    uint32_t w;           /* shared address of the next word */
    uint64_t acc;
    unsigned nacc;
    /* len <= 15 bits of code */
    __device__ __forceinline__ void put(uint32_t code, unsigned len)
    {
        acc |= (uint64_t)code << nacc;
        nacc += len;
        const bool full = nacc >= 32;
        hf_shared_store(w, (uint32_t)acc, full);
        w += full ? 4u : 0u;
        acc = full ? acc >> 32 : acc;
        nacc = full ? nacc - 32 : nacc;
    }
    __device__ __forceinline__ void operator()(unsigned t)
    {
        const uint32_t c = cl[t];
        put(c & 0xFFFFu, c >> 16);
    }
};

/* Form 2's stream of a share into W by its pair marks: each token, eight a load, writes its
 * pair's code, its own, or none. */
__device__ __forceinline__ void hf_write_pairs(const hf_share &sh, unsigned R, hf_share_writer &W)
{
    static_assert(HF_PAIR_K == 16u, "the pair token's arithmetic");
    const unsigned base = 2u * R - 2u * HF_PAIR_K - 2u;   /* pair (a, b): base + 16 a + b */
    hf_mask128 pairs, quiet;
    hf_pair_marks(sh, pairs, quiet);
    if (sh.held)
        W(base + 16u * (sh.held - 1u) + sh.at(0));
    auto token = [&](bool pair, bool none, unsigned t, unsigned t1) {
        return pair ? base + 16u * t + t1 : none ? HF_NO_TOKEN : t;
    };
    const uint4 *v = (const uint4 *)sh.w;
    const unsigned whole = sh.cnt / 8u;
    uint4 next = v[0];
    for (unsigned q = 0; q < whole; q++) {   /* a share's padding makes the last load ahead safe */
        const uint4 cur = next;
        next = v[q + 1];
        const unsigned pb = pairs.byte(q), qb = quiet.byte(q);
        const uint32_t wd[5] = {cur.x, cur.y, cur.z, cur.w, next.x};
#pragma unroll
        for (unsigned j = 0; j < 8; j++)
            W(token(pb >> j & 1u, qb >> j & 1u, wd[j / 2] >> (16 * (j & 1)) & 0xFFFFu,
                    wd[(j + 1) / 2] >> (16 * ((j + 1) & 1)) & 0xFFFFu));
    }
    for (unsigned k = 8 * whole; k < sh.cnt; k++)   /* only a chunk's last sub-chunk */
        W(token(pairs.at(k), quiet.at(k), sh.at(k), k + 1 < sh.cnt ? sh.at(k + 1) : 0u));
}

/* A share's stream (sub_tokens of the CPU) into W. */
__device__ __forceinline__ void hf_write_share(const hf_share &sh, unsigned form, unsigned R,
                                               hf_share_writer &W)
{
    if (form == HF_FORM_RUNS)
        hf_runs_walk(sh, R, W);
    else if (form == HF_FORM_PAIRS)
        hf_write_pairs(sh, R, W);
    else
        hf_share_tokens(sh, W);
}

/* Bits [q, q + 32) of a sub-chunk's stream, gathered from its lanes' streams in the stage:
 * lane j's b_j bits start at bit o_j (its share's padding word holds o_j, lane 32 is `total`).
 * Bits past the stream are 0. */
__device__ __forceinline__ uint32_t hf_gather_word(const uint32_t *stage, uint32_t q,
                                                   uint32_t total)
{
    auto off = [&](unsigned j) {
        return j < 32 ? stage[j * HF_LANE_PITCH + HF_LANE_WORDS] : total;
    };
    unsigned j = 0;   /* the last lane starting at or before q */
#pragma unroll
    for (unsigned d = 16; d; d >>= 1)
        if (off(j + d) <= q)
            j += d;
    uint32_t v = 0, o = off(j);
    for (; j < 32 && o < q + 32u; j++) {
        const uint32_t o1 = off(j + 1), b = o1 - o;
        const uint32_t *w = stage + j * HF_LANE_PITCH;
        uint32_t x;
        if (o <= q) {   /* only the first lane: it holds bit q */
            const uint32_t p = q - o, k = p / 32u, sh = p % 32u;
            x = sh ? w[k] >> sh | w[k + 1] << (32u - sh) : w[k];
            x &= b - p >= 32u ? ~0u : (1u << (b - p)) - 1u;
        } else {
            x = (b >= 32u ? w[0] : w[0] & ((1u << b) - 1u)) << (o - q);
        }
        v |= x;
        o = o1;
    }
    return v;
}

/* Each sub-chunk's stream, written by its lanes in place of their tokens, then gathered into
 * whole words over the sub-chunk's own tokens in global memory (its stream is shorter: at
 * most 15 bits a token), with its length in subbits. No sub-chunk waits on another: the
 * offsets come after (hf_subscan_kernel, hf_place_kernel). */
__global__ void __launch_bounds__(HF_WALK_WARPS * 32) hf_pack_kernel(const hf_enc_args a)
{
    __shared__ __align__(16) uint32_t stage_s[HF_WALK_WARPS][HF_STAGE_WORDS];
    __shared__ __align__(16) uint32_t cl_s[HF_MAX_SYMS + 1];
    hzc_huff_plan *P = a.b.plan;
    if (P->too_small)
        return;
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const unsigned form = P->form, rs = P->rs;
    /* the form's tokens, 16 bytes a load (the plan's entries past them are 0) */
    for (unsigned t = threadIdx.x; t < (2 * a.R + HF_RUN_MAX + 3) / 4; t += blockDim.x)
        ((uint4 *)cl_s)[t] = ((const uint4 *)P->cl)[t];
    if (threadIdx.x == 0)
        cl_s[HF_NO_TOKEN] = 0;
    __syncthreads();
    const uint64_t s = (uint64_t)blockIdx.x * HF_WALK_WARPS + warp;
    if (s >= a.g.nsub)   /* warp-uniform */
        return;
    const hf_stage st = hf_stage_load(a.b.tok, a.g.n, s, stage_s[warp]);
    const hf_share sh = hf_share_of(st, form, rs);
    __syncwarp();   /* every lane has read its neighbours' tokens before the shares change */
    uint32_t *own = stage_s[warp] + lane * HF_LANE_PITCH;
    const uint32_t own_at = (uint32_t)__cvta_generic_to_shared(own);
    hf_share_writer W = {cl_s, own_at, 0, 0};
    hf_write_share(sh, form, a.R, W);
    hf_shared_store(W.w, (uint32_t)W.acc, W.nacc != 0);
    const uint32_t bits = 8u * (W.w - own_at) + W.nacc;
    const uint32_t incl = hf_warp_incl(bits), total = __shfl_sync(FULL, incl, 31);
    own[HF_LANE_WORDS] = incl - bits;   /* the share's padding */
    __syncwarp();
    uint32_t *slot = (uint32_t *)(a.b.tok + s * HF_SUB);
    for (uint32_t i = lane; i < (total + 31u) / 32u; i += 32)
        slot[i] = hf_gather_word(stage_s[warp], 32u * i, total);
    if (lane == 0)
        a.b.subbits[s] = total;
}

#define HF_SCAN_BATCH 8u   /* 32-entry rounds a warp of hf_subscan_kernel loads at once */

/* The sub-chunks' stream offsets, the exclusive prefix of subbits, by one CTA: a warp a
 * segment, summed, the sums' prefix over the CTA, then each segment scanned 32 entries at a
 * time (coalesced; HF_SCAN_BATCH rounds' loads issued together). */
__global__ void __launch_bounds__(HF_ONE_THREADS) hf_subscan_kernel(const hf_enc_args a)
{
    if (a.b.plan->too_small)
        return;
    const uint32_t *__restrict__ bits = a.b.subbits;
    uint64_t *__restrict__ off = a.b.suboff;
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    const uint64_t nsub = a.g.nsub, seg = (nsub + 32 * nw - 1) / (32 * nw) * 32;
    const uint64_t i0 = min(nsub, warp * seg), i1 = min(nsub, i0 + seg);
    uint64_t sum = 0, total;
#pragma unroll 8
    for (uint64_t i = i0 + lane; i < i1; i += 32)
        sum += bits[i];
    sum = hf_warp_sum(sum);
    uint64_t carry = __shfl_sync(FULL, hf_block_excl(lane == 0 ? sum : 0, &total), 0);
    for (uint64_t base = i0; base < i1; base += 32 * HF_SCAN_BATCH) {
        uint32_t b[HF_SCAN_BATCH];
#pragma unroll
        for (unsigned k = 0; k < HF_SCAN_BATCH; k++) {
            const uint64_t i = base + 32 * k + lane;
            b[k] = i < i1 ? bits[i] : 0u;
        }
#pragma unroll
        for (unsigned k = 0; k < HF_SCAN_BATCH; k++) {
            const uint64_t i = base + 32 * k + lane;
            const uint32_t incl = hf_warp_incl(b[k]);   /* 32 sub-chunks' bits fit 32 bits */
            if (i < i1)
                off[i] = carry + (incl - b[k]);
            carry += __shfl_sync(FULL, incl, 31);
        }
    }
}

/* Each sub-chunk's packed stream (hf_pack_kernel) moved to its offset in the zeroed stream, a
 * warp a sub-chunk: whole words are stored, the first and the last, which the neighbouring
 * sub-chunks may share, OR-ed in atomically. */
__global__ void __launch_bounds__(HF_THREADS) hf_place_kernel(const hf_enc_args a)
{
    const hzc_huff_plan *P = a.b.plan;
    if (P->too_small)
        return;
    const unsigned lane = threadIdx.x & 31u;
    const uint64_t s = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) / 32u;
    if (s >= a.g.nsub)
        return;
    const uint32_t bits = a.b.subbits[s];
    if (!bits)
        return;
    const uint32_t *src = (const uint32_t *)(a.b.tok + s * HF_SUB);
    uint32_t *dst = (uint32_t *)(a.b.dst + HF_OFF_CODEBOOK +
                                 hf_pad4(hf_codebook_size(P->m0, P->m1)) + hf_pad4(2 * a.g.nsub));
    const uint64_t b0 = a.b.suboff[s];
    const unsigned sh = (unsigned)(b0 & 31u), nsrc = (bits + 31u) / 32u;
    const uint64_t g0 = b0 >> 5, g1 = (b0 + bits - 1) >> 5;
    for (uint64_t g = g0 + lane; g <= g1; g += 32) {
        const unsigned i = (unsigned)(g - g0);
        const uint32_t lo = i < nsrc ? src[i] : 0u, hi = i >= 1 && i <= nsrc ? src[i - 1] : 0u;
        const uint32_t v = sh ? lo << sh | hi >> (32u - sh) : lo;
        if (g == g0 || g == g1)
            atomicOr(&dst[g], v);
        else
            dst[g] = v;
    }
}

/* Everything but the stream: fixed part, codebook, sub-chunk table, outliers, verbatim values. */
__global__ void __launch_bounds__(HF_THREADS) hf_tail_kernel(const hf_enc_args a)
{
    const hzc_huff_plan *P = a.b.plan;
    if (P->too_small)
        return;
    uint8_t *dst = a.b.dst;
    const unsigned m0 = P->m0, m1 = P->m1, nlen = m0 + m1, esize = a.Q.is_f32 ? 4u : 8u;
    const uint64_t nsub = a.g.nsub, n_out = P->n_out, n_verb = P->n_verb;
    const uint64_t off_sub = HF_OFF_CODEBOOK + hf_pad4(hf_codebook_size(m0, m1));
    const uint64_t off_out = off_sub + hf_pad4(2 * nsub) + hf_pad4((P->bits + 7) / 8);
    const uint64_t off_verb = off_out + 8 * n_out;
    const uint64_t items = max(max(nsub, (uint64_t)(nlen + 1) / 2), max(n_out, n_verb));
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < items;
         i += (uint64_t)gridDim.x * blockDim.x) {
        if (i == 0) {
            qz_put_anchor(dst, &a.Q);
            dst[8] = (uint8_t)P->form;
            dst[9] = (uint8_t)P->pred;
            hz_put_u16(dst + 10, a.R);
            hz_put_u16(dst + 12, P->form == HF_FORM_RUNS ? P->rs : 0u);
            hz_put_u32(dst + 16, (uint32_t)n_out);
            hz_put_u32(dst + 20, (uint32_t)n_verb);
            hz_put_u16(dst + HF_OFF_CODEBOOK, m0);
            hz_put_u16(dst + HF_OFF_CODEBOOK + 2, m1);
        }
        if (i < (nlen + 1) / 2) {   /* lengths of tokens 0..m0-1, then 2R..2R+m1-1 */
            const unsigned k = 2 * (unsigned)i, t0 = k < m0 ? k : 2 * a.R + (k - m0);
            const unsigned t1 = k + 1 < m0 ? k + 1 : 2 * a.R + (k + 1 - m0);
            dst[HF_OFF_CODEBOOK + 4 + i] =
                (uint8_t)(P->len[t0] | (k + 1 < nlen ? P->len[t1] << 4 : 0));
        }
        if (i < nsub)
            hz_put_u16(dst + off_sub + 2 * i, a.b.subbits[i]);
        if (i < n_out) {
            hz_put_u32(dst + off_out + 4 * i, a.b.out_pos[i]);
            hz_put_u32(dst + off_out + 4 * (n_out + i), (uint32_t)a.b.out_delta[i]);
        }
        if (i < n_verb) {
            uint8_t *v = dst + off_verb + 4 * n_verb + esize * i;
            hz_put_u32(dst + off_verb + 4 * i, a.b.verb_pos[i]);
            if (esize == 4)
                hz_put_u32(v, (uint32_t)a.b.verb_bits[i]);
            else
                hz_put_u64(v, a.b.verb_bits[i]);
        }
    }
}

/* The payload's checksum terms (hz_checksum_term), 16 bytes a load and HF_SUM_LOADS loads in
 * flight a thread: a word at a time, each thread waits out the memory's latency once a word. */
#define HF_SUM_LOADS 4
__global__ void __launch_bounds__(HF_THREADS) hf_sum_kernel(const hf_enc_args a)
{
    const hzc_huff_plan *P = a.b.plan;
    if (P->too_small)
        return;
    const uint64_t nw = P->size / 4, nq = nw / 4;   /* words, and whole 16-byte quads */
    const uint4 *q = (const uint4 *)a.b.dst;        /* cudaMalloc's: 256-byte aligned */
    const uint64_t t0 = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    const uint64_t nt = (uint64_t)gridDim.x * blockDim.x;
    uint32_t s = 0;
    for (uint64_t i = t0; i < nq; i += HF_SUM_LOADS * nt) {
        uint4 v[HF_SUM_LOADS];
#pragma unroll
        for (unsigned k = 0; k < HF_SUM_LOADS; k++)
            v[k] = i + k * nt < nq ? q[i + k * nt] : make_uint4(0, 0, 0, 0);
#pragma unroll
        for (unsigned k = 0; k < HF_SUM_LOADS; k++) {
            const uint64_t w = 4 * (i + k * nt);
            if (i + k * nt < nq)
                s += hz_checksum_term(v[k].x, w) + hz_checksum_term(v[k].y, w + 1) +
                     hz_checksum_term(v[k].z, w + 2) + hz_checksum_term(v[k].w, w + 3);
        }
    }
    for (uint64_t w = 4 * nq + t0; w < nw; w += nt)
        s += hz_checksum_term(((const uint32_t *)a.b.dst)[w], w);
    s = __reduce_add_sync(FULL, s);
    if ((threadIdx.x & 31u) == 0)
        atomicAdd(&a.sc->sum, s);
}

/* ---- decoder ------------------------------------------------------------------------------ */

struct hf_dec_args {
    hf_geom g;
    qz_quant Q;
    hf_layout L;
    const uint8_t *in;
    const uint16_t *table;
    int32_t *delta;
    uint64_t *suboff;
    void *out;
    hzc_scalars *sc;
};

/* Sub-chunk bit offsets, then the checks of hf_decode_cpu on the sub-chunk table's padding and
 * the stream's length and padding. */
__global__ void __launch_bounds__(HF_ONE_THREADS) hf_dscan_kernel(const hf_dec_args a)
{
    const hf_layout &L = a.L;
    /* an even share each, read as 32-bit words of two entries (the table is 4-aligned) */
    const uint64_t nsub = a.g.nsub, per = 2 * ((nsub + 2 * blockDim.x - 1) / (2 * blockDim.x));
    const uint64_t i0 = min(nsub, threadIdx.x * per), i1 = min(nsub, i0 + per);
    const uint32_t *sub = (const uint32_t *)(a.in + L.off_sub);
    uint64_t v = 0, total;
#pragma unroll 8
    for (uint64_t i = i0; i < i1; i += 2) {
        const uint32_t wd = sub[i / 2];
        v += (wd & 0xFFFFu) + (i + 1 < i1 ? wd >> 16 : 0u);
    }
    uint64_t o = hf_block_excl(v, &total);
    for (uint64_t i = i0; i < i1; i += 2) {
        const uint32_t wd = sub[i / 2];
        a.suboff[i] = o;
        o += wd & 0xFFFFu;
        if (i + 1 < i1) {
            a.suboff[i + 1] = o;
            o += wd >> 16;
        }
    }
    if (threadIdx.x != 0)
        return;
    a.suboff[nsub] = total;
    const uint8_t *stream = a.in + L.off_stream;
    bool bad = hf_pad4((total + 7) / 8) != L.stream_bytes ||
               ((total & 7) && (stream[total >> 3] >> (total & 7)));
    for (uint64_t b = L.off_sub + 2 * nsub; b < L.off_stream; b++)
        bad |= a.in[b] != 0;
    for (uint64_t b = (total + 7) / 8; !bad && b < L.stream_bytes; b++)
        bad |= stream[b] != 0;
    if (bad)
        atomicOr(&a.sc->corrupt, 1u);
}

/* The stream read from any bit a 32-bit word at a time (zeros past its end, as hf_peek64 reads),
 * a refill ahead of its use: a refill leaves at least 32 bits, more than a lookup takes. */
struct hf_reader {
    const uint32_t *words;
    uint64_t nwords, wi;
    uint64_t acc;
    unsigned nacc;
    uint32_t next;
    __device__ __forceinline__ void seek(uint64_t bit)
    {
        wi = bit >> 5;
        acc = wi < nwords ? words[wi] >> (bit & 31u) : 0u;
        nacc = 32u - (unsigned)(bit & 31u);
        wi++;
        next = wi < nwords ? words[wi] : 0u;
    }
    /* the decoder table's entry for the next bits (hf_table_entry's layout) */
    __device__ __forceinline__ unsigned peek(const uint16_t *table)
    {
        if (nacc < 32) {
            acc |= (uint64_t)next << nacc;
            nacc += 32;
            wi++;
            next = wi < nwords ? words[wi] : 0u;
        }
        return table[acc & (HF_TABLE - 1u)];
    }
    __device__ __forceinline__ void skip(unsigned l)
    {
        acc >>= l;
        nacc -= l;
    }
};

/* Elements token tk stands for: a pair's two, a run's length, or one. */
__device__ __forceinline__ uint32_t hf_tok_elems(unsigned tk, unsigned R, unsigned form)
{
    return tk < 2 * R ? 1u : form == HF_FORM_PAIRS ? 2u : HF_RUN_MAX - (tk - 2 * R);
}

/* Deltas in aligned groups of four, each stored with one 16-byte write (delta is 16-byte
 * aligned). v is a shift register: the newest delta in v.w, the k before it in the slots before;
 * a delta is shifted in with moves and the full group stored with a predicated store, not
 * branches on k, which would split the warp: its threads' groups fill at different times. A
 * span that starts inside a group (lead > 0) stores that group's slots from lead on alone: the
 * slots before are the span before's. */
struct hf_delta_out {
    int4 *p;        /* the group being filled */
    int4 v;
    unsigned k;     /* slots of the group held in v (the lead ones not this span's) */
    unsigned lead;  /* in the first group: the slots before the span */
    __device__ __forceinline__ void begin(int32_t *delta, uint32_t i)
    {
        p = (int4 *)(delta + (i & ~3u));
        v = make_int4(0, 0, 0, 0);
        k = lead = i & 3u;
    }
    __device__ __forceinline__ void put(int32_t d)
    {
        v = make_int4(v.y, v.z, v.w, d);
        if (++k == 4) {
            if (lead)
                tail(lead);
            else
                *p = v;
            p++;
            k = lead = 0;
        }
    }
    /* slots from..k-1 of the group at p, held in the last k slots of v */
    __device__ __forceinline__ void tail(unsigned from)
    {
        int32_t *q = (int32_t *)p;
        const int32_t s0 = k == 4 ? v.x : k == 3 ? v.y : k == 2 ? v.z : v.w;
        const int32_t s1 = k == 4 ? v.y : k == 3 ? v.z : v.w, s2 = k == 4 ? v.z : v.w;
        if (from == 0 && k > 0) q[0] = s0;
        if (from <= 1 && k > 1) q[1] = s1;
        if (from <= 2 && k > 2) q[2] = s2;
        if (k > 3) q[3] = v.w;
    }
    /* the deltas of a last, partial group */
    __device__ __forceinline__ void flush()
    {
        tail(lead);
    }
};

/* decode_sub of huff_cpu.c over the tokens from bit p to bit pend of a sub-chunk (relative to
 * bit0), elements i to iend: false on any inconsistency. The tokens must end exactly at pend
 * and fill exactly [i, iend), which, with every token inside both, accepts what the CPU's
 * element-driven loop accepts. */
__device__ bool hf_decode_span(const hf_dec_args &a, const uint16_t *table, uint64_t bit0,
                               uint32_t p, uint32_t pend, uint32_t i, uint32_t iend)
{
    const hf_layout &L = a.L;
    const unsigned R = L.radius;
    const int has_fill = a.Q.has_fill;
    const int32_t run_d = hf_run_delta(&L);
    const int4 run_g = make_int4(run_d, run_d, run_d, run_d);
    hf_reader rd = {(const uint32_t *)(a.in + L.off_stream), L.stream_bytes / 4};
    rd.seek(bit0 + p);
    hf_delta_out out;
    out.begin(a.delta, i);
    while (p < pend) {
        const unsigned ent = rd.peek(table);
        const unsigned tk = ent & 0xFFFu, l = ent >> 12;
        if (l == 0 || l > pend - p)
            return false;
        p += l;
        rd.skip(l);
        const uint32_t e = hf_tok_elems(tk, R, L.form);
        if (e > iend - i)
            return false;
        i += e;
        if (tk >= 2 * R && L.form != HF_FORM_PAIRS) {   /* a run of the run token */
            if (!hf_run_valid(run_d, has_fill))
                return false;
            uint32_t run = e;
            for (; run && out.k; run--)   /* the group begun */
                out.put(run_d);
            for (uint32_t g = 0; g < run / 4; g++)
                out.p[g] = run_g;
            out.p += run / 4;
            for (run %= 4; run; run--)    /* the last partial group */
                out.put(run_d);
            continue;
        }
        /* one token, or a pair of two small deltas: the same path, so the warp stays together */
        const bool pair = tk >= 2 * R;
        if (!pair && !hf_lone_valid(&L, tk, has_fill))
            return false;
        out.put(pair ? hf_unzigzag32((tk - 2 * R) / HF_PAIR_K) : hf_token_delta(tk));
        if (pair)
            out.put(hf_unzigzag32((tk - 2 * R) % HF_PAIR_K));
    }
    out.flush();
    return i == iend;
}

/* The decoder table into shared memory, 8 entries a load. */
__device__ __forceinline__ uint16_t *hf_table_to_smem(const hf_dec_args &a)
{
    uint16_t *table_s = (uint16_t *)hf_smem;
    for (unsigned i = threadIdx.x; i < HF_TABLE / 8; i += blockDim.x)
        ((uint4 *)table_s)[i] = ((const uint4 *)a.table)[i];
    return table_s;
}

/* Sub-chunks of streams of HF_DENSE bits an element or more: a thread a sub-chunk. There a
 * warp's threads all decode a token every few elements, and splitting the sub-chunks
 * (hf_split_kernel), which decodes them twice, measured 10-20% slower on the Nyx-like fields. */
#define HF_DENSE 1u

__global__ void __launch_bounds__(HF_SUB_THREADS) hf_sub_kernel(const hf_dec_args a)
{
    const uint16_t *table_s = hf_table_to_smem(a);
    __syncthreads();
    const uint64_t s = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    if (s >= a.g.nsub || a.sc->corrupt)
        return;
    const uint64_t bit0 = a.suboff[s];
    const uint32_t first = (uint32_t)(s * HF_SUB);
    if (!hf_decode_span(a, table_s, bit0, 0, (uint32_t)(a.suboff[s + 1] - bit0), first,
                        (uint32_t)min(s * HF_SUB + HF_SUB, a.g.n)))
        atomicOr(&a.sc->corrupt, 1u);
}

/* Sub-chunks of streams of 1/8 to HF_DENSE bits an element: HF_SPLIT threads a sub-chunk,
 * each decoding an equal share of its bits. One thread a sub-chunk would leave the GPU mostly
 * idle there (32,768 threads for 2^27 elements, a token every few elements): of a warp's
 * threads, those with runs or fewer tokens would wait on the one with the most.
 * Only the first share starts at a known token boundary. Thread k > 0 starts at its share's
 * first bit b_k and notes, in shared memory, the bits where its tokens start in the next
 * HF_SPLIT_WIN bits. Every thread then decodes from its b_j on, past b_{j+1}, until it lands on
 * a bit the next share noted: from there both threads read the same tokens (Huffman codes
 * resynchronise, on the Nyx-like fields within 8 to 46 bits on average). A thread that passes a
 * share's window without landing decodes that share too and looks for the next one's. The
 * shares on the chain of these landings from share 0 hold the true tokens: each decodes from
 * where its predecessor landed to where it lands itself, and their element counts, scanned,
 * place its deltas. The counts not adding up to the sub-chunk, or a chain share's tokens
 * breaking off, mean a damaged stream, which the sub-chunk's first thread then decodes alone
 * for the verdict. Shares are at least HF_SPLIT_WIN bits, so a landing lies inside the share. */
#define HF_SPLIT 8u
#define HF_SPLIT_THREADS 256
#define HF_SPLIT_WIN 256u
#define HF_SPLIT_WORDS (HF_SPLIT_WIN / 32u)
#define HF_SMEM_SPLIT (HF_SMEM_TABLE + HF_SPLIT_THREADS * HF_SPLIT_WORDS * 4u)

__global__ void __launch_bounds__(HF_SPLIT_THREADS) hf_split_kernel(const hf_dec_args a)
{
    const uint16_t *table_s = hf_table_to_smem(a);
    uint32_t *starts_s = (uint32_t *)(hf_smem + HF_SMEM_TABLE);   /* HF_SPLIT_WORDS a thread */
    for (unsigned w = 0; w < HF_SPLIT_WORDS; w++)
        starts_s[threadIdx.x * HF_SPLIT_WORDS + w] = 0;
    __syncthreads();
    const hf_layout &L = a.L;
    const unsigned R = L.radius;
    const uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x, s = t / HF_SPLIT;
    const unsigned j = (unsigned)(t % HF_SPLIT);
    const bool live = s < a.g.nsub && !a.sc->corrupt;
    /* 32-bit counters relative to the sub-chunk: its bits (at most 16 x 4096) and elements */
    const uint64_t bit0 = live ? a.suboff[s] : 0;
    const uint32_t stop = live ? (uint32_t)(a.suboff[s + 1] - bit0) : 0;
    const uint32_t first = (uint32_t)(s * HF_SUB);
    const uint32_t count = live ? (uint32_t)min((uint64_t)HF_SUB, a.g.n - s * HF_SUB) : 0;
    const unsigned shares = max(1u, min(HF_SPLIT, stop / HF_SPLIT_WIN));
    const uint32_t plen = (stop + shares - 1) / shares, bj = j * plen;
    const bool mine = live && j < shares;
    uint32_t *share_starts = starts_s + (threadIdx.x - j) * HF_SPLIT_WORDS;   /* share 0's */
    hf_reader rd = {(const uint32_t *)(a.in + L.off_stream), L.stream_bytes / 4};

    /* this share's token starts in its window (a path that breaks off leaves the rest unset) */
    if (mine && j > 0) {
        uint32_t *own = share_starts + j * HF_SPLIT_WORDS;
        rd.seek(bit0 + bj);
        for (uint32_t p = bj; p - bj < HF_SPLIT_WIN;) {
            own[(p - bj) >> 5] |= 1u << ((p - bj) & 31u);
            if (p == stop)
                break;
            const unsigned l = rd.peek(table_s) >> 12;
            if (l == 0 || l > stop - p)
                break;
            rd.skip(l);
            p += l;
        }
    }
    __syncwarp();

    /* from b_j to the landing in a later share's window (land_at; the end: shares), counting
     * elements */
    bool broke = false;
    uint32_t land = 0, elems = 0;
    unsigned land_at = shares;
    if (mine) {
        rd.seek(bit0 + bj);
        unsigned k = j + 1;
        for (uint32_t p = bj;;) {
            while (k < shares && p >= k * plen && p - k * plen >= HF_SPLIT_WIN)
                k++;   /* passed share k's window: this thread decodes share k too */
            if (k < shares && p >= k * plen) {
                const uint32_t d = p - k * plen;
                if (share_starts[k * HF_SPLIT_WORDS + (d >> 5)] >> (d & 31u) & 1u) {
                    land = p;
                    land_at = k;
                    break;
                }
            }
            if (p == stop) {   /* the end: any shares left hold no tokens */
                land = p;
                break;
            }
            const unsigned ent = rd.peek(table_s), l = ent >> 12;
            if (l == 0 || l > stop - p) {
                broke = true;
                break;
            }
            rd.skip(l);
            p += l;
            elems += hf_tok_elems(ent & 0xFFFu, R, L.form);
        }
    }
    /* the chain from share 0: whether this share is on it, and m, where its predecessor landed
     * (landings strictly increase the share, so HF_SPLIT steps reach the end) */
    bool on = false;
    uint32_t m = 0;
    unsigned cur = 0;
    for (unsigned r = 0; r < HF_SPLIT; r++) {
        const bool in = cur < shares;
        on |= in && cur == j;
        const unsigned next = __shfl_sync(FULL, land_at, cur & (HF_SPLIT - 1u), HF_SPLIT);
        const uint32_t at = __shfl_sync(FULL, land, cur & (HF_SPLIT - 1u), HF_SPLIT);
        if (in && next == j)
            m = at;
        if (in)
            cur = next;
    }
    /* the elements from b_j to m taken off: this share's are m's to its landing's */
    if (on && j > 0 && !broke) {
        rd.seek(bit0 + bj);
        for (uint32_t p = bj; p < m;) {   /* m is one of this path's starts */
            const unsigned ent = rd.peek(table_s), l = ent >> 12;
            if (l == 0)
                break;
            rd.skip(l);
            p += l;
            elems -= hf_tok_elems(ent & 0xFFFu, R, L.form);
        }
    }
    if (!on)
        elems = 0;
    uint32_t before = elems;   /* inclusive, then exclusive, sum over the sub-chunk's shares */
    for (unsigned d = 1; d < HF_SPLIT; d <<= 1) {
        const uint32_t v = __shfl_up_sync(FULL, before, d, HF_SPLIT);
        if (j >= d)
            before += v;
    }
    const uint32_t total = __shfl_sync(FULL, before, HF_SPLIT - 1, HF_SPLIT);
    before -= elems;
    const unsigned lane = threadIdx.x & 31u;
    const unsigned group = FULL >> (32u - HF_SPLIT) << (lane & ~(HF_SPLIT - 1u));
    const bool alone = (__ballot_sync(FULL, on && broke) & group) != 0 || total != count;
    if (!live)
        return;
    bool ok = true;
    if (!alone && on)
        ok = hf_decode_span(a, table_s, bit0, m, land, first + before, first + before + elems);
    else if (alone && j == 0)
        ok = hf_decode_span(a, table_s, bit0, 0, stop, first, first + count);
    if (!ok)
        atomicOr(&a.sc->corrupt, 1u);
}

/* Sub-chunks of streams of less than 1/8 bit an element, where runs hold most elements (never
 * pairs): a thread a sub-chunk (decode_sub of huff_cpu.c), a warp's threads decoding a token
 * each per step, all 32 taking part in every step until the last has finished, so that the
 * whole warp can store their runs together: a thread finishes the group it has begun and keeps
 * a run's last partial group, and the warp stores the whole groups between, 32 groups (512
 * bytes) a store, where one thread would store them one at a time while the others wait. */
__global__ void __launch_bounds__(HF_SUB_THREADS) hf_runs_kernel(const hf_dec_args a)
{
    const uint16_t *table_s = hf_table_to_smem(a);
    __syncthreads();
    const hf_layout &L = a.L;
    const uint64_t s = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    const bool live = s < a.g.nsub && !a.sc->corrupt;   /* the others only help with runs */
    const unsigned R = L.radius;
    const int has_fill = a.Q.has_fill;
    const int32_t run_d = hf_run_delta(&L);
    const uint64_t bit0 = live ? a.suboff[s] : 0;
    const uint32_t stop = live ? (uint32_t)(a.suboff[s + 1] - bit0) : 0;
    uint32_t bit = 0;
    uint32_t i = live ? (uint32_t)(s * HF_SUB) : 0;
    uint32_t end = live ? (uint32_t)min(s * HF_SUB + HF_SUB, a.g.n) : 0;
    hf_reader rd = {(const uint32_t *)(a.in + L.off_stream), L.stream_bytes / 4};
    rd.seek(bit0);
    hf_delta_out out;
    out.begin(a.delta, i);
    bool ok = true;
    /* one token of this thread's sub-chunk; a run's whole groups are left to the warp (its
     * first group and count in run_at, run_groups); a damaged stream ends the sub-chunk */
    int4 *run_at = nullptr;
    uint32_t run_groups = 0;
    auto step = [&]() {
        if (bit >= stop) {
            ok = false;
            return;
        }
        const unsigned ent = rd.peek(table_s);
        const unsigned tk = ent & 0xFFFu, l = ent >> 12;
        if (l == 0 || bit + l > stop) {
            ok = false;
            return;
        }
        bit += l;
        rd.skip(l);
        const uint32_t e = hf_tok_elems(tk, R, L.form);
        if (e > end - i) {
            ok = false;
            return;
        }
        i += e;
        if (tk >= 2 * R) {   /* a run of the run token (the form is not pairs) */
            if (!hf_run_valid(run_d, has_fill)) {
                ok = false;
                return;
            }
            uint32_t run = e;
            for (; run && out.k; run--)   /* the group begun */
                out.put(run_d);
            run_at = out.p;
            run_groups = run / 4;
            out.p += run_groups;
            for (run %= 4; run; run--)    /* the last partial group */
                out.put(run_d);
            return;
        }
        if (!hf_lone_valid(&L, tk, has_fill)) {
            ok = false;
            return;
        }
        out.put(hf_token_delta(tk));
    };
    const unsigned lane = threadIdx.x & 31u;
    const int4 run_g = make_int4(run_d, run_d, run_d, run_d);
    while (__any_sync(FULL, i < end)) {
        if (i < end) {
            step();
            if (!ok)
                end = i;   /* stop here; reported below */
        }
        /* the runs of this step, one thread's after another's, by the whole warp */
        for (unsigned runners = __ballot_sync(FULL, run_groups != 0); runners;
             runners &= runners - 1) {
            const int src = __ffs(runners) - 1;
            int4 *at = (int4 *)__shfl_sync(FULL, (unsigned long long)run_at, src);
            const uint32_t groups = __shfl_sync(FULL, run_groups, src);
            for (uint32_t g = lane; g < groups; g += 32)
                at[g] = run_g;
        }
        run_groups = 0;
    }
    if (!live)
        return;
    out.flush();
    if (!ok || bit != stop)
        atomicOr(&a.sc->corrupt, 1u);
}

/* Outliers into their escape markers; both lists' positions strictly increasing and inside. */
__global__ void __launch_bounds__(HF_THREADS) hf_lists_kernel(const hf_dec_args a)
{
    if (a.sc->corrupt)
        return;
    const hf_layout &L = a.L;
    const uint64_t n_out = L.n_out, n_verb = L.n_verb, items = max(n_out, n_verb);
    for (uint64_t k = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; k < items;
         k += (uint64_t)gridDim.x * blockDim.x) {
        bool bad = false;
        if (k < n_out) {
            const uint64_t pos = hz_get_u32(a.in + L.off_out_pos + 4 * k);
            const int32_t d = (int32_t)hz_get_u32(a.in + L.off_out_delta + 4 * k);
            bad = pos >= a.g.n || (k && pos <= hz_get_u32(a.in + L.off_out_pos + 4 * (k - 1))) ||
                  a.delta[pos] != HF_MARK_ESCAPE || d <= HF_MARK_ESCAPE;
            if (!bad)
                a.delta[pos] = d;
        }
        if (k < n_verb) {
            const uint64_t pos = hz_get_u32(a.in + L.off_verb_pos + 4 * k);
            bad |= pos >= a.g.n || (k && pos <= hz_get_u32(a.in + L.off_verb_pos + 4 * (k - 1)));
        }
        if (bad)
            atomicOr(&a.sc->corrupt, 1u);
    }
}

/* First verbatim index whose position is at least pos (the positions increase). */
__device__ uint64_t hf_verb_bound(const hf_dec_args &a, uint64_t pos)
{
    uint64_t lo = 0, hi = a.L.n_verb;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (hz_get_u32(a.in + a.L.off_verb_pos + 4 * mid) < pos)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* partial_sums of huff_cpu.c in shared memory (wrapping uint32 sums, so the order of the
 * additions does not matter): order 1 along the tile's raster sequence, a warp a share;
 * orders 2 and 3 along x a warp a row, along y and z a thread a column. */
__device__ void hf_partial_sums(uint32_t *s, unsigned order, const hf_tile &tl)
{
    __shared__ uint32_t wtot_s[HF_WARPS];
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, tn = hf_tile_n(tl);
    const unsigned ez = tl.ez, ey = tl.ey, ex = tl.ex, plane = ey * ex;
    if (order == 1) {
        const unsigned b0 = warp * HF_SEG, b1 = min(tn, b0 + HF_SEG);
        uint32_t carry = 0;
        for (unsigned b = b0; b < b1; b += 32) {
            const unsigned e = b + lane;
            uint32_t v = hf_warp_incl(e < b1 ? s[e] : 0u) + carry;
            if (e < b1)
                s[e] = v;
            carry = __shfl_sync(FULL, v, 31);
        }
        if (lane == 0)
            wtot_s[warp] = carry;
        __syncthreads();
        uint32_t before = 0;
        for (unsigned w = 0; w < warp; w++)
            before += wtot_s[w];
        for (unsigned e = b0 + lane; before && e < b1; e += 32)
            s[e] += before;
        return;
    }
    for (unsigned r = warp; r < ez * ey; r += HF_WARPS) {
        uint32_t carry = 0;
        for (unsigned xb = 0; xb < ex; xb += 32) {
            const unsigned x = xb + lane;
            uint32_t v = hf_warp_incl(x < ex ? s[r * ex + x] : 0u) + carry;
            if (x < ex)
                s[r * ex + x] = v;
            carry = __shfl_sync(FULL, v, 31);
        }
    }
    __syncthreads();
    for (unsigned c = threadIdx.x; c < ez * ex; c += HF_THREADS) {
        const unsigned z = c / ex, base = z * plane + (c - z * ex);
        uint32_t acc = s[base];
        for (unsigned y = 1; y < ey; y++) {
            acc += s[base + y * ex];
            s[base + y * ex] = acc;
        }
    }
    if (order == 3) {
        __syncthreads();
        for (unsigned c = threadIdx.x; c < plane; c += HF_THREADS) {
            uint32_t acc = s[c];
            for (unsigned z = 1; z < ez; z++) {
                acc += s[z * plane + c];
                s[z * plane + c] = acc;
            }
        }
    }
}

/* A tile's values from its deltas: escape markers left mean a missing outlier; fill elements
 * count as 0 and come back as the fill value; verbatim values replace what was reconstructed. */
template <typename T>
__global__ void __launch_bounds__(HF_THREADS) hf_dtile_kernel(const hf_dec_args a)
{
    uint32_t *s = (uint32_t *)hf_smem;
    __shared__ uint32_t fill_s[HF_TILE_N / 32], verb_s[HF_TILE_N / 32];
    __shared__ unsigned long long vlo_s, vhi_s;
    __shared__ unsigned bad_s;
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, esize = sizeof(T);
    hf_tile tl;
    hf_tile_at(&a.g, blockIdx.x, &tl);
    const unsigned tn = hf_tile_n(tl);
    if (threadIdx.x == 0) {
        bad_s = a.sc->corrupt;
        vlo_s = hf_verb_bound(a, tl.start);
        vhi_s = hf_verb_bound(a, tl.start + tn);
    }
    for (unsigned w = threadIdx.x; w < HF_TILE_N / 32; w += HF_THREADS)
        verb_s[w] = 0;
    __syncthreads();
    if (bad_s)
        return;
    bool bad = false;
    for (unsigned b0 = warp * 32; b0 < tn; b0 += HF_THREADS * HF_BATCH) {
        int32_t d[HF_BATCH];
#pragma unroll
        for (unsigned k = 0; k < HF_BATCH; k++) {
            const unsigned e = b0 + k * HF_THREADS + lane;
            d[k] = e < tn ? a.delta[tl.start + e] : 0;
        }
#pragma unroll
        for (unsigned k = 0; k < HF_BATCH; k++) {
            const unsigned b = b0 + k * HF_THREADS, e = b + lane;
            if (b >= tn)   /* warp-uniform */
                break;
            bad |= d[k] == HF_MARK_ESCAPE;
            const bool f = e < tn && d[k] == HF_MARK_FILL;
            const unsigned fb = __ballot_sync(FULL, f);
            if (lane == 0)
                fill_s[b >> 5] = fb;
            if (e < tn)
                s[e] = f ? 0u : (uint32_t)d[k];
        }
    }
    if (bad)
        atomicOr(&a.sc->corrupt, 1u);
    __syncthreads();
    hf_partial_sums(s, a.L.order, tl);
    __syncthreads();
    /* the codes are summed: a verbatim element's slot now holds its index in the list */
    for (uint64_t k = vlo_s + threadIdx.x; k < vhi_s; k += HF_THREADS) {
        const uint64_t e = hz_get_u32(a.in + a.L.off_verb_pos + 4 * k) - tl.start;
        if (e >= tn)
            continue;   /* shared memory stays safe should positions be damaged */
        atomicOr(&verb_s[e >> 5], 1u << (e & 31u));
        s[e] = (uint32_t)k;
    }
    __syncthreads();
    T *out = (T *)a.out;
    for (unsigned e = threadIdx.x; e < tn; e += HF_THREADS) {
        unsigned z, y, x;
        hf_coords(tl, e, &z, &y, &x);
        const uint64_t i = hf_index(a.g, tl, z, y, x);
        if (verb_s[e >> 5] >> (e & 31u) & 1u) {
            const uint8_t *v = a.in + a.L.off_verb_val + (uint64_t)esize * s[e];
            hf_put_bits(out, i, esize == 4 ? hz_get_u32(v) : hz_get_u64(v));
        } else if (fill_s[e >> 5] >> (e & 31u) & 1u) {
            hf_put_bits(out, i, a.Q.fill_bits);
        } else {
            out[i] = (T)qz_reconstruct_wide(&a.Q, (double)(int32_t)s[e]);   /* rounded to T once */
        }
    }
}

/* ---- launchers ---------------------------------------------------------------------------- */

static unsigned hf_grid(int sms)
{
    return (unsigned)(sms > 0 ? sms : 1) * 4u;
}

/* CTAs of `threads` for `per` threads a sub-chunk */
static unsigned hf_sub_grid(uint64_t nsub, unsigned per, unsigned threads)
{
    return (unsigned)((nsub * per + threads - 1) / threads);
}

/* A kernel of a tile a CTA, its dynamic shared memory above the 48 KiB default. */
template <typename K>
static cudaError_t hf_tile_launch(K kernel, unsigned grid, unsigned smem, const hf_enc_args &a,
                                  cudaStream_t s)
{
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess)
        return e;
    kernel<<<grid, HF_THREADS, smem, s>>>(a);
    return cudaGetLastError();
}

/* The sampled costs, the interpolation when they say to try it, then the chosen predictor's
 * tokens. */
template <typename T, int DIM>
static cudaError_t hf_tiles_encode(const hf_enc_args &a, cudaStream_t s)
{
    cudaError_t e = hf_tile_launch(hf_sample_kernel<T, DIM>, (unsigned)hf_sample_runs(&a.g),
                                   HF_SMEM_COST, a, s);
    if (e != cudaSuccess ||
        (e = hzc_ip_launch_encode(&a.g, &a.Q, a.R, a.in, a.b.tok, a.b.ip_u, a.b.ip_delta,
                                  a.b.ip_delta2, a.b.plan, s)) != cudaSuccess)
        return e;
    hf_ip_token_kernel<T>
        <<<(unsigned)a.g.ntiles, HF_THREADS, 4 * hf_ip_hist::words(2 * a.R), s>>>(a);
    return hf_tile_launch(hf_token_kernel<T, DIM>, (unsigned)a.g.ntiles, HF_SMEM_TOKEN, a, s);
}

template <typename T>
static cudaError_t hf_tiles_encode_dim(const hf_enc_args &a, cudaStream_t s)
{
    return a.g.dim == 3   ? hf_tiles_encode<T, 3>(a, s)
           : a.g.dim == 2 ? hf_tiles_encode<T, 2>(a, s)
                          : hf_tiles_encode<T, 1>(a, s);
}

cudaError_t hzc_huff_launch_encode(const hf_geom *g, const qz_quant *Q, unsigned radius,
                                   const void *in, const hzc_huff_bufs *b, hzc_scalars *sc,
                                   int sms, cudaStream_t s)
{
    hf_enc_args a = {*g, *Q, radius, in, *b, sc};
    cudaError_t e;
    if ((e = cudaMemsetAsync(b->plan, 0, sizeof(hzc_huff_plan), s)) != cudaSuccess ||
        (e = cudaMemsetAsync(b->status, 0, 2 * g->ntiles * sizeof(unsigned long long), s)) !=
            cudaSuccess ||
        (e = Q->is_f32 ? hf_tiles_encode_dim<float>(a, s)
                       : hf_tiles_encode_dim<double>(a, s)) !=
            cudaSuccess ||
        (e = cudaFuncSetAttribute(hf_book_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  HF_SMEM_BOOK)) != cudaSuccess)
        return e;
    const unsigned walk = (unsigned)((g->nsub + HF_WALK_WARPS - 1) / HF_WALK_WARPS);
    /* the three forms' codebooks side by side: forms 1 and 2 need only form 0's counts */
    hf_may_kernel<<<1, HF_ONE_THREADS, 0, s>>>(a);
    hf_althist_kernel<<<dim3(walk, 2), HF_WALK_WARPS * 32, 0, s>>>(a);
    hf_book_kernel<<<3, HF_ONE_THREADS, HF_SMEM_BOOK, s>>>(a);
    hf_choose_kernel<<<1, HF_ONE_THREADS, 0, s>>>(a);
    hf_clear_kernel<<<hf_grid(sms), HF_THREADS, 0, s>>>(a);
    hf_pack_kernel<<<walk, HF_WALK_WARPS * 32, 0, s>>>(a);
    hf_subscan_kernel<<<1, HF_ONE_THREADS, 0, s>>>(a);
    hf_place_kernel<<<hf_sub_grid(g->nsub, 32, HF_THREADS), HF_THREADS, 0, s>>>(a);
    hf_tail_kernel<<<hf_grid(sms), HF_THREADS, 0, s>>>(a);
    hf_sum_kernel<<<hf_grid(sms), HF_THREADS, 0, s>>>(a);
    return cudaGetLastError();
}

cudaError_t hzc_huff_launch_decode(const hf_geom *g, const qz_quant *Q, const hf_layout *L,
                                   const uint8_t *in, uint64_t len, const uint16_t *table,
                                   int32_t *delta, uint64_t *suboff, void *out, hzc_scalars *sc,
                                   int sms, cudaStream_t s)
{
    (void)len;   /* hf_parse placed every part inside it */
    hf_dec_args a = {*g, *Q, *L, in, table, delta, suboff, out, sc};
    cudaError_t e = Q->is_f32 ? cudaFuncSetAttribute(hf_dtile_kernel<float>,
                                                     cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                     HF_SMEM_DTILE)
                              : cudaFuncSetAttribute(hf_dtile_kernel<double>,
                                                     cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                     HF_SMEM_DTILE);
    /* by the stream's bits an element: under 1/8, runs by the warp (pairs leave none); under
     * HF_DENSE, sub-chunks split; else a thread a sub-chunk. Either way the same deltas. */
    const bool runs = L->form != HF_FORM_PAIRS && L->stream_bytes * 64 < g->n;
    const bool split = !runs && L->stream_bytes * 8 < HF_DENSE * g->n;
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(runs ? hf_runs_kernel : split ? hf_split_kernel : hf_sub_kernel,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 split ? HF_SMEM_SPLIT : HF_SMEM_TABLE);
    if (e != cudaSuccess)
        return e;
    hf_dscan_kernel<<<1, HF_ONE_THREADS, 0, s>>>(a);
    if (runs)
        hf_runs_kernel<<<hf_sub_grid(g->nsub, 1, HF_SUB_THREADS), HF_SUB_THREADS, HF_SMEM_TABLE,
                         s>>>(a);
    else if (split)
        hf_split_kernel<<<hf_sub_grid(g->nsub, HF_SPLIT, HF_SPLIT_THREADS), HF_SPLIT_THREADS,
                          HF_SMEM_SPLIT, s>>>(a);
    else
        hf_sub_kernel<<<hf_sub_grid(g->nsub, 1, HF_SUB_THREADS), HF_SUB_THREADS, HF_SMEM_TABLE,
                        s>>>(a);
    hf_lists_kernel<<<hf_grid(sms), HF_THREADS, 0, s>>>(a);
    if (L->order == HF_PRED_INTERP)
        return hzc_ip_launch_decode(g, Q, L, in, delta, delta + g->n, out, sc, sms, s);
    if (Q->is_f32)
        hf_dtile_kernel<float><<<(unsigned)g->ntiles, HF_THREADS, HF_SMEM_DTILE, s>>>(a);
    else
        hf_dtile_kernel<double><<<(unsigned)g->ntiles, HF_THREADS, HF_SMEM_DTILE, s>>>(a);
    return cudaGetLastError();
}
