/* The Huffman encoder's first stages: the Lorenzo orders' costs over a sample of the tiles, then
 * for the chosen predictor a token per element, a CTA a tile (dual quantisation and Lorenzo
 * deltas, or the interpolation's deltas that interp.cu wrote), with the tile's histogram and its
 * outlier and verbatim lists placed in element order by the decoupled look-back. */
#include "../common/quant_known.cuh"
#include "huff_device.cuh"

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
    const qz_quant Qm = qz_encoding<T, LIN>(Q);
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
                fill = qz_is_fill(&Qm, dv_bits(v[k]));
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
        unsigned long long v = dv_warp_sum((unsigned long long)c[o]);
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
__global__ void __launch_bounds__(HF_THREADS) hf_enc_sample_kernel(const hf_enc_args a_)
{
    const hf_enc_args a = hf_enc_at(a_);
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
        dv_shared_add(h + 4u * w, PACKED ? n << (16 * (tk & 1u)) : n, p);
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
    H.add(tk, __popc(peers), tk != 0xFFFFFFFFu && !(peers & dv_lanemask_lt()));
}

/* Four consecutive tokens of a thread into the tile's histogram: one add per distinct token
 * among the lanes whose four are one token (the common case of smooth fields), with hf_tally's
 * warp aggregation; the other lanes add each of their four without it. On the Nyx-like fields
 * a match at each of the four places cost the Lorenzo tokens more than the conflicts it saved,
 * and the interpolation's too once their counts have two copies (hf_ip_hist). */
template <bool PACKED, unsigned C>
__device__ __forceinline__ void hf_tally4(hf_hist<PACKED, C> H, const unsigned (&tk)[4])
{
    const unsigned lt = dv_lanemask_lt();
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

/* A whole tile's share of a warp in groups of 128 elements, four consecutive ones a lane: bit
 * 4 g + j of a lane's marks stands for element e_beg + 128 g + 4 lane + j. */
#define HF_SEG_GROUPS (HF_SEG / 128)
static_assert(HF_SEG_GROUPS * 4 == 64, "a lane's marks in 64 bits");

/* The token pass of a whole tile (hf_token_at's tokens and hf_tally's counts), four consecutive
 * elements a thread from one 16-byte load of each row a Lorenzo order reads: s_k sums the terms
 * of element k's column (its own, the row above, and for order 3 the plane before), and a delta
 * is s_k minus its left neighbour's s, which for the first of the four comes from the lane
 * before. Rows are whole multiples of four, and a warp's 128 elements start a row. The lane's
 * outliers and verbatim values are marked in *om and *vm (HF_SEG_GROUPS). */
template <int DIM>
__device__ __forceinline__ void hf_whole_tokens(const hf_enc_args &a, const hf_tile &tl,
                                                unsigned order, const int32_t *p_s,
                                                const uint32_t *fill_s, const uint32_t *verb_s,
                                                hf_hist<true> H, unsigned e_beg, uint64_t *om,
                                                uint64_t *vm)
{
    using S = hf_shape<DIM>;
    static_assert(S::X % 4 == 0 && (S::X * S::Y * S::Z) % (HF_WARPS * 128) == 0, "shares of rows");
    constexpr unsigned plane = S::Y * S::X;
    const unsigned lane = threadIdx.x & 31u, top = 2u * a.R - 2u;
    uint2 *tok = (uint2 *)(a.b.tok + tl.start);   /* whole tiles start at a multiple of 16 */
    *om = *vm = 0;
    for (unsigned g = 0; g < HF_SEG_GROUPS; g++) {
        const unsigned b = e_beg + 128 * g;
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
        const unsigned fm = fill_s[e >> 5] >> (e & 31u), vb = verb_s[e >> 5] >> (e & 31u);
        unsigned tk[4], o = 0, v = 0;
#pragma unroll
        for (unsigned k = 0; k < 4; k++) {
            const uint32_t zz = hf_zigzag32(d[k]);
            const bool fill = fm >> k & 1u;
            tk[k] = fill && d[k] == 0 ? HF_TOK_FILL : zz < top ? zz + 2u : HF_TOK_ESCAPE;
            o |= (unsigned)(tk[k] == HF_TOK_ESCAPE) << k;
            v |= (unsigned)((vb >> k & 1u) || (fill && tk[k] != HF_TOK_FILL)) << k;
        }
        *om |= (uint64_t)o << 4 * g;
        *vm |= (uint64_t)v << 4 * g;
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
    hf_enc_plan *P = a.b.plan;
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
        const unsigned io = dv_warp_incl(o), iv = dv_warp_incl(v);
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
        a.b.verb_bits[k] = dv_bits(((const T *)a.in)[hf_index(a.g, tl, z, y, x)]);
    }
}

/* The outliers and verbatim values a warp marked over its share of a whole tile (om, vm as
 * HF_SEG_GROUPS says) into the lists in position order, by group, lane, then element, from list
 * indices ko and kv on: an outlier with its delta delta(e), a verbatim value after verb(e). */
template <typename T, typename D, typename V>
__device__ __forceinline__ void hf_put_marked(const hf_enc_args &a, const hf_tile &tl,
                                              unsigned e_beg, uint64_t om, uint64_t vm,
                                              uint64_t ko, uint64_t kv, D delta, V verb)
{
    const unsigned lane = threadIdx.x & 31u;
    for (unsigned g = 0; g < HF_SEG_GROUPS; g++) {
        const unsigned ob = (unsigned)(om >> 4 * g) & 15u, vb = (unsigned)(vm >> 4 * g) & 15u;
        if (!__any_sync(FULL, ob | vb))
            continue;
        const unsigned io = dv_warp_incl((unsigned)__popc(ob));
        const unsigned iv = dv_warp_incl((unsigned)__popc(vb));
        uint64_t ok = ko + io - __popc(ob), vk = kv + iv - __popc(vb);
        const unsigned e0 = e_beg + 4 * (32 * g + lane);
        for (unsigned j = 0; j < 4; j++) {
            if (ob >> j & 1u)
                hf_put_out(a, tl, e0 + j, delta(e0 + j), ok++);
            if (vb >> j & 1u) {
                verb(e0 + j);
                hf_put_verb<T>(a, tl, e0 + j, vk++);
            }
        }
        ko += __shfl_sync(FULL, io, 31);
        kv += __shfl_sync(FULL, iv, 31);
    }
}

/* What the token kernels do once an edge tile's tokens are counted (whole tiles list the
 * elements they marked, hf_put_marked): hf_tile_tail, then the outliers and verbatim values of
 * the warp's share [e_beg, e_end) into the lists, where it has any, found by reading the share
 * again. kind(e, d, is_out, is_verb) tells whether element e is an outlier
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
            hf_put_out(a, tl, e, d, ko + __popc(bo & dv_lanemask_lt()));
        if (is_verb)
            hf_put_verb<T>(a, tl, e, kv + __popc(bv & dv_lanemask_lt()));
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
 * It and hf_enc_ip_tokens_kernel are both launched, and the one the predictor is not for returns at
 * once, so that each keeps its own registers (the quantiser's would cost the other a third of
 * its occupancy). */
template <typename T, int DIM>
__global__ void __launch_bounds__(HF_THREADS, 3) hf_enc_tokens_kernel(const hf_enc_args a_)
{
    const hf_enc_args a = hf_enc_at(a_);
    int32_t *p_s = (int32_t *)hf_smem;
    uint32_t *fill_s = (uint32_t *)(p_s + HF_TILE_N);
    uint32_t *verb_s = fill_s + HF_TILE_N / 32;
    uint32_t *hist_s = verb_s + HF_TILE_N / 32;
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, R = a.R;
    const unsigned order = a.b.plan->pred;
    if (order == HF_PRED_INTERP)
        return;   /* grid-uniform: hf_enc_ip_tokens_kernel's predictor */
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
    if (whole) {
        /* the marked elements alone are listed: at 1e-4 most warps have an outlier */
        uint64_t om, vm, ko, kv;
        hf_whole_tokens<DIM>(a, tl, order, p_s, fill_s, verb_s, H, e_beg, &om, &vm);
        const unsigned n_out = __reduce_add_sync(FULL, __popcll(om));
        const unsigned n_verb = __reduce_add_sync(FULL, __popcll(vm));
        /* warp-uniform */
        if (!hf_tile_tail<hf_hist<true>>(a, t, n_out, n_verb, hist_s, &ko, &kv))
            return;
        hf_put_marked<T>(
            a, tl, e_beg, om, vm, ko, kv,
            [&](unsigned e) {
                unsigned z, y, x;
                hf_coords(tl, e, &z, &y, &x);
                return hf_delta32(p_s, order, tl.ex, tl.ey * tl.ex, z, y, x, e);
            },
            [](unsigned) {});
        return;
    }
    unsigned n_out = 0, n_verb = 0;
    for (unsigned b = e_beg; b < e_end; b += 32) {   /* an edge tile */
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

/* The same outputs from the interpolation's tokens, which hf_ip_launch_encode wrote: a token
 * needs nothing else, so each warp streams its share from global memory, HF_IP_BATCH loads a
 * thread in flight, with no tile in shared memory, and more CTAs fit an SM than the quantising
 * kernel's three. The rare outliers read their deltas, and verbatim values, marked
 * HF_TOK_VERBATIM_MARK, get delta 0's token. Eight CTAs an SM (32 registers) keep every thread
 * slot of the SM busy. */
#define HF_IP_BATCH 8
/* its histogram: two copies of the counts (four and eight cost more to clear and sum than their
 * fewer conflicts saved), in dynamic shared memory sized by the radius */
using hf_ip_hist = hf_hist<false, 2>;
template <typename T>
__global__ void __launch_bounds__(HF_THREADS, 8) hf_enc_ip_tokens_kernel(const hf_enc_args a_)
{
    const hf_enc_args a = hf_enc_at(a_);
    uint32_t *hist_s = (uint32_t *)hf_smem;   /* hf_ip_hist's words */
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    if (a.b.plan->pred != HF_PRED_INTERP)
        return;   /* grid-uniform: hf_enc_tokens_kernel's predictor */
    const hf_ip_hist H = {(uint32_t)__cvta_generic_to_shared(hist_s)};
    const uint64_t t = hf_take_tile(a, hist_s, H.words(2 * a.R));
    hf_tile tl;
    hf_tile_at(&a.g, t, &tl);
    const int32_t *delta = a.b.ip_delta + tl.start;
    uint16_t *tok = a.b.tok + tl.start;
    bool verb;
    const unsigned tk_verb = hf_ip_token(HF_CODE_VERBATIM, a.R, &verb);
    const unsigned e_beg = warp * HF_SEG, e_end = min(hf_tile_n(tl), e_beg + HF_SEG);
    unsigned n_out = 0, n_verb = 0;
    if (hf_tile_n(tl) == HF_TILE_N) {   /* whole: it starts at a multiple of 16 */
        /* four tokens a lane, one 8-byte load, in groups of 32 loads a warp, its outliers and
         * verbatim values marked in om and vm (HF_SEG_GROUPS) */
        static_assert(HF_SEG_GROUPS == 2 * HF_IP_BATCH, "two rounds of loads, a group each");
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
                    const bool is_verb = tk[j] == HF_TOK_VERBATIM_MARK;
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
        hf_put_marked<T>(
            a, tl, e_beg, om, vm, ko, kv, [&](unsigned e) { return delta[e]; },
            [&](unsigned e) { tok[e] = (uint16_t)tk_verb; });
        return;
    }
    for (unsigned b0 = e_beg; b0 < e_end; b0 += 32 * HF_IP_BATCH) {   /* an edge tile */
        unsigned c[HF_IP_BATCH];
        dv_warp_batch(tok, b0, e_end, c);
#pragma unroll
        for (unsigned k = 0; k < HF_IP_BATCH; k++) {
            const unsigned e = b0 + 32 * k + lane;
            if (b0 + 32 * k >= e_end)   /* warp-uniform */
                break;
            unsigned tk = 0xFFFFFFFFu;
            bool is_verb = false;
            if (e < e_end) {
                is_verb = c[k] == HF_TOK_VERBATIM_MARK;
                tk = is_verb ? tk_verb : c[k];
            }
            hf_tally(H, tk, tk == HF_TOK_ESCAPE, is_verb, &n_out, &n_verb);
        }
    }
    hf_tile_finish<T, hf_ip_hist>(a, t, tl, e_beg, e_end, n_out, n_verb, hist_s,
                             [&](unsigned e, int32_t &d, bool &is_out, bool &is_verb) {
                                 const unsigned tk = tok[e];
                                 is_out = tk == HF_TOK_ESCAPE;
                                 is_verb = tk == HF_TOK_VERBATIM_MARK;
                                 if (is_out)
                                     d = delta[e];
                                 if (is_verb)
                                     tok[e] = (uint16_t)tk_verb;
                             });
}


template <typename T, int DIM>
static cudaError_t sample_as(const hf_enc_args &a, cudaStream_t s)
{
    return hf_tile_launch(hf_enc_sample_kernel<T, DIM>, (unsigned)hf_sample_runs(&a.g),
                          HF_SMEM_COST, a, s);
}

cudaError_t hf_enc_launch_sample(const hf_enc_args &a, cudaStream_t s)
{
    static cudaError_t (*const as[2][3])(const hf_enc_args &, cudaStream_t) = {
        {sample_as<double, 1>, sample_as<double, 2>, sample_as<double, 3>},
        {sample_as<float, 1>, sample_as<float, 2>, sample_as<float, 3>}};
    return as[a.Q.is_f32 ? 1 : 0][a.g.dim - 1](a, s);
}

/* Both token kernels: the one the predictor is not for returns at once. */
template <typename T, int DIM>
static cudaError_t tokens_as(const hf_enc_args &a, cudaStream_t s)
{
    hf_enc_ip_tokens_kernel<T>
        <<<hf_layers((unsigned)a.g.ntiles, a), HF_THREADS, 4 * hf_ip_hist::words(2 * a.R), s>>>(a);
    return hf_tile_launch(hf_enc_tokens_kernel<T, DIM>, (unsigned)a.g.ntiles, HF_SMEM_TOKEN, a, s);
}

cudaError_t hf_enc_launch_tokens(const hf_enc_args &a, cudaStream_t s)
{
    static cudaError_t (*const as[2][3])(const hf_enc_args &, cudaStream_t) = {
        {tokens_as<double, 1>, tokens_as<double, 2>, tokens_as<double, 3>},
        {tokens_as<float, 1>, tokens_as<float, 2>, tokens_as<float, 3>}};
    return as[a.Q.is_f32 ? 1 : 0][a.g.dim - 1](a, s);
}
