/* What the interpolation's kernels (interp.cu) share about one element: the arguments of a
 * chunk, a pass in 32 bits, an element's positions and prediction, the quantiser with its known
 * constants, an element's code, and its value (decoding) or token (encoding) written out. */
#ifndef H5ZGPU_CUDA_HUFF_INTERP_ELEMENT_CUH
#define H5ZGPU_CUDA_HUFF_INTERP_ELEMENT_CUH

#include "../common/quant_known.cuh"
#include "huff_device.cuh"

/* Chunks the Huffman codec writes hold fewer than 2^32 elements, so every coordinate, raster
 * index and tile-major position below is 32-bit: half the instructions of 64-bit ones.
 * When level 1 runs in hf_ip_level_kernel (`split`), the codes every pass reads, which all lie at
 * even coordinates, and (encoding) the deltas of those elements are kept in lattice arrays of
 * the even coordinates, which the finer levels read and write densely; level 1 then writes
 * every element's token (encoding) or value (decoding) a region at a time, whole sectors, and
 * no DRAM sector is written twice in part. Else (a chunk whose passes all fit the one-CTA
 * kernel) the codes are in raster order and each element's results go straight out. */
struct hf_ip_args {
    hf_geom g;
    qz_quant Q;
    const void *in;
    int32_t *u;                  /* reconstructed codes: raster order, or the even lattice */
    int32_t *delta;              /* tile-major: every delta (decoder), outliers' (encoder) */
    int32_t *delta2;             /* encoder, split: the even elements' deltas, lattice order */
    uint16_t *tok;               /* encoder: tokens, tile-major */
    unsigned R;                  /* encoder: the radius */
    hf_enc_plan *plan;         /* encoder */
    void *out;                   /* decoder */
    hzc_scalars *sc;             /* decoder */
    uint32_t n[3], t[3];         /* the folded chunk's and the tile's edges (z, y, x) */
    uint32_t cn[3];              /* the edges of u's order: n, or the even lattice's ceil(n / 2)
                                  * when split */
    unsigned sh;                 /* 1 when split, else 0: u's index of c is c >> sh's raster */
    uint32_t gty, gtx;           /* tiles along y and x */
    unsigned tshift[3];          /* log2 of the tile's edges (they are powers of two) */
    const hf_enc_args *many;     /* encoder, chunks coded together: their own (hf_enc_args) */
    const hf_dec_args *dmany;    /* decoder, chunks decoded together: their own */
    unsigned count;              /* the chunks a launch codes: grid layers */
};

/* The arguments of the chunk this CTA works on: a's, with a chunk coded or decoded together
 * with others taking its quantiser, values and buffers from its hf_enc_args or hf_dec_args
 * (each direction tests only its own, which keeps the other's registers out of its kernels). */
template <bool ENCODE>
__device__ __forceinline__ hf_ip_args hf_ip_at(const hf_ip_args &a0)
{
    hf_ip_args a = a0;
    if (!ENCODE && a0.dmany) {
        const hf_dec_args &d = a0.dmany[blockIdx.z];
        a.Q = d.Q;
        a.delta = d.delta;
        a.u = d.delta + d.g.n;
        a.out = d.out;
        a.sc = d.sc;
    }
    if (ENCODE && a0.many) {
        const hf_enc_args &e = a0.many[blockIdx.z];
        a.Q = e.Q;
        a.in = e.in;
        a.u = e.b.ip_u;
        a.delta = e.b.ip_delta;
        a.delta2 = e.b.ip_delta2;
        a.tok = e.b.tok;
        a.plan = e.b.plan;
    }
    return a;
}

/* One pass in 32 bits, with its axis' length and stride in u picked out. */
struct hf_ip_pass32 {
    uint32_t first[3], step[3], n1, n2, h, na, s;
};

__device__ __forceinline__ hf_ip_pass32 hf_ip_pass_get(const hf_ip_args &a, unsigned p,
                                                       uint64_t *npts)
{
    hf_ip_pass P;
    hf_ip_pass_at(&a.g, p, &P);
    hf_ip_pass32 q;
    for (int b = 0; b < 3; b++) {
        q.first[b] = (uint32_t)P.first[b];
        q.step[b] = (uint32_t)P.step[b];
    }
    q.n1 = (uint32_t)P.cnt[1];
    q.n2 = (uint32_t)P.cnt[2];
    q.h = (uint32_t)P.h;
    q.na = a.n[P.axis];
    q.s = (q.h >> a.sh) * (P.axis == 0 ? a.cn[1] * a.cn[2] : (P.axis == 1 ? a.cn[2] : 1u));
    *npts = P.npts;
    return q;
}

/* u's (and delta2's) index of the element at chunk coordinates c (all even when split: the
 * even lattice's index), sh = a.sh (hf_ip_level_kernel, which runs only when split, passes 1). */
__device__ __forceinline__ uint32_t hf_ip_uidx(const hf_ip_args &a, const uint32_t c[3],
                                               unsigned sh)
{
    return ((c[0] >> sh) * a.cn[1] + (c[1] >> sh)) * a.cn[2] + (c[2] >> sh);
}

/* hf_tile_pos with shifts for the tile edges. */
__device__ __forceinline__ uint32_t hf_ip_pos(const hf_ip_args &a, uint32_t z, uint32_t y,
                                              uint32_t x)
{
    const uint32_t z0 = z >> a.tshift[0] << a.tshift[0], y0 = y >> a.tshift[1] << a.tshift[1];
    const uint32_t x0 = x >> a.tshift[2] << a.tshift[2];
    const uint32_t ez = min(a.t[0], a.n[0] - z0), ey = min(a.t[1], a.n[1] - y0);
    const uint32_t ex = min(a.t[2], a.n[2] - x0);
    return z0 * a.n[1] * a.n[2] + ez * y0 * a.n[2] + ez * ey * x0 +
           ((z - z0) * ey + (y - y0)) * ex + (x - x0);
}

/* hf_sampled of the tile holding the element at c (hf_tile_of with shifts). */
__device__ __forceinline__ bool hf_ip_sampled(const hf_ip_args &a, const uint32_t c[3])
{
    const uint32_t t = ((c[0] >> a.tshift[0]) * a.gty + (c[1] >> a.tshift[1])) * a.gtx +
                       (c[2] >> a.tshift[2]);
    return hf_sampled(&a.g, t);
}

/* The prediction of the element at coordinate ca along the pass's axis, u's index k. */
__device__ __forceinline__ int32_t hf_ip_predict_at(const hf_ip_args &a, const hf_ip_pass32 &q,
                                                    uint32_t ca, uint32_t k)
{
    const unsigned reach = hf_ip_reach(ca, q.h, q.na);
    const int32_t *u = a.u;
    const uint32_t s = q.s;
    return hf_ip_predict(reach, reach & HF_IP_M3 ? u[k - 3 * s] : 0, u[k - s],
                         reach & HF_IP_P1 ? u[k + s] : 0, reach & HF_IP_P3 ? u[k + 3 * s] : 0);
}

/* The code of an element against pred. Encoding quantises its value v (code_element of
 * huff_interp.c) into its delta or marker *d, and counts its cost when `counted` (the element
 * lies in a sampled tile and this CTA owns it: a neighbour another CTA owns is coded for its
 * code alone). Decoding adds its delta *d (decode_element). LIN: the quantiser's constants
 * known (quant_known.cuh). */
template <typename T, bool ENCODE, bool LIN = false>
__device__ __forceinline__ int32_t hf_ip_code_element(const hf_ip_args &a, T v, int32_t pred,
                                                      bool counted, unsigned *cost, int32_t *d)
{
    if (ENCODE) {
        const qz_quant Q = qz_encoding<T, LIN>(a.Q);
        /* without branches: a fill value's code is worked out, then dropped */
        int32_t k = 0, u = pred;
        const bool fill = qz_is_fill(&Q, dv_bits(v));
        const bool coded = hf_ip_quantize(&Q, (double)v, pred, &k, &u);
        k = fill ? 0 : k;
        /* a verbatim element takes delta 0's code, as the decoder does */
        u = fill ? pred : coded ? u : (int32_t)hf_ip_code(&Q, pred, 0);
        *d = fill ? HF_CODE_FILL : coded ? k : HF_CODE_VERBATIM;
        if (counted) {
            int32_t p;
            *cost += 32u - __clz(hf_zigzag32(k));
            /* rare: dual quantisation's kind only then */
            if (*d == HF_CODE_VERBATIM && hf_dq_code(&Q, (double)v, &p))
                *cost += hf_ip_verbatim_cost(sizeof(T) == 4);
        }
        return u;
    }
    const qz_quant Q = qz_decoding<T, LIN>(a.Q);
    int64_t u = *d == HF_MARK_FILL ? pred : hf_ip_code(&Q, pred, *d);
    if (*d == HF_MARK_ESCAPE || u > HF_IP_UMAX || u < -HF_IP_UMAX) {
        atomicOr(&a.sc->corrupt, 1u);
        u = pred;
    }
    return (int32_t)u;
}

/* What an element leaves for the tokens or values written after its level: its delta or
 * marker d (encoding), or its code u, HF_MARK_FILL for a fill element (decoding). */
template <bool ENCODE>
__device__ __forceinline__ int32_t hf_ip_result(int32_t u, int32_t d)
{
    return ENCODE ? d : d == HF_MARK_FILL ? HF_MARK_FILL : u;
}

/* The decoded value's bits of a code u (the fill value's for HF_MARK_FILL): the value rounded
 * to T once, qz_reconstruct_at's (LIN: qz_decoding's). */
template <typename T, bool LIN>
__device__ __forceinline__ uint64_t hf_ip_value_bits(const hf_ip_args &a, int32_t u)
{
    if (u == HF_MARK_FILL)
        return a.Q.fill_bits;
    const qz_quant Q = qz_decoding<T, LIN>(a.Q);
    return dv_bits((T)qz_reconstruct_wide(&Q, hf_ip_steps(&Q, u)));
}

/* The decoded value of the element at raster index i from its code u (or HF_MARK_FILL). */
template <typename T>
__device__ __forceinline__ void hf_ip_put(const hf_ip_args &a, uint32_t i, int32_t u)
{
    dv_put_bits((T *)a.out, i, hf_ip_value_bits<T, false>(a, u));
}

/* The first nv (1..4) of four consecutive elements from raster index i: whole 16-byte stores
 * where they line up. */
template <typename T, bool LIN>
__device__ __forceinline__ void hf_ip_put4(const hf_ip_args &a, uint32_t i, const int32_t u[4],
                                           int nv)
{
    uint64_t b[4];
#pragma unroll
    for (int k = 0; k < 4; k++)
        b[k] = k < nv ? hf_ip_value_bits<T, LIN>(a, u[k]) : 0;
    T *out = (T *)a.out + i;
    if (nv == 4 && ((uintptr_t)out & 15u) == 0) {
        if (sizeof(T) == 4) {
            *(uint4 *)out = make_uint4((uint32_t)b[0], (uint32_t)b[1], (uint32_t)b[2],
                                       (uint32_t)b[3]);
        } else {
            ((ulonglong2 *)out)[0] = make_ulonglong2(b[0], b[1]);
            ((ulonglong2 *)out)[1] = make_ulonglong2(b[2], b[3]);
        }
        return;
    }
    for (int k = 0; k < nv; k++)
        dv_put_bits((T *)a.out, i + k, b[k]);
}

/* Encoding: the token of a delta or marker d (HF_TOK_VERBATIM_MARK for a verbatim value), as
 * hf_ip_token gives it, from v = zigzag(d) + 2 alone: a delta's token when below 2R, 1 for the
 * fill marker and 2^32 - 1 for the verbatim one (deltas are far from 2^31). */
__device__ __forceinline__ uint32_t hf_ip_token_of(const hf_ip_args &a, int32_t d)
{
    const uint32_t v = hf_zigzag32(d) + 2u;
    const uint32_t big = v == 0xFFFFFFFFu ? HF_TOK_VERBATIM_MARK : HF_TOK_ESCAPE;
    return v == 1u ? HF_TOK_FILL : v < 2u * a.R ? v : big;
}

/* Encoding: the tokens of the element at tile-major position pos and the nv - 1 (at most 3)
 * after it in its tile row from their deltas or markers d, one 8-byte store where they line
 * up; an outlier's delta goes to ip_delta at its position (hf_ip_launch_encode). */
__device__ __forceinline__ void hf_ip_emit4(const hf_ip_args &a, uint32_t pos, const int32_t d[4],
                                         int nv)
{
    uint32_t t[4];
#pragma unroll
    for (int k = 0; k < 4; k++) {
        t[k] = hf_ip_token_of(a, d[k]);
        if (k < nv && t[k] == HF_TOK_ESCAPE)
            a.delta[pos + k] = d[k];
    }
    if (nv == 4 && (pos & 3u) == 0) {
        *(uint2 *)&a.tok[pos] = make_uint2(t[0] | t[1] << 16, t[2] | t[3] << 16);
        return;
    }
    for (int k = 0; k < nv; k++)
        a.tok[pos + k] = (uint16_t)t[k];
}

/* Encoding: one element's token (hf_ip_emit4 for nv = 1). */
__device__ __forceinline__ void hf_ip_emit(const hf_ip_args &a, uint32_t pos, int32_t d)
{
    const int32_t q[4] = {d, d, d, d};
    hf_ip_emit4(a, pos, q, 1);
}

/* Whether this encoding tries interpolation (huff_cpu.c's rule, from the Lorenzo costs). */
__device__ __forceinline__ bool hf_ip_tried(const hf_ip_args &a)
{
    const hf_enc_plan *P = a.plan;
    return hf_ip_worth_trying(P->cost[hf_best_order(P->cost, a.g.dim)], P->cost[0], a.Q.pwrel);
}

/* Whether the interpolation, tried, has lost already: its cost only grows as the sampled points
 * come in, so once hf_ip_wins fails the choice is a Lorenzo order whatever the rest adds
 * (hf_enc_ip_pick_kernel). Other CTAs may still be adding: one thread reads it for a CTA. */
__device__ __forceinline__ bool hf_ip_lost(const hf_ip_args &a)
{
    const hf_enc_plan *P = a.plan;
    const unsigned long long ip = *(const volatile unsigned long long *)&P->cost_ip;
    return !hf_ip_wins(ip, P->cost[hf_best_order(P->cost, a.g.dim)], a.Q.pwrel);
}

#endif
