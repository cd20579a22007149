/* The sub-chunk walks, shared by the encoder's form histograms and its stream packing. */
#ifndef H5ZGPU_CUDA_HUFF_WALK_CUH
#define H5ZGPU_CUDA_HUFF_WALK_CUH

#include "huff_device.cuh"

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
    tb = dv_select(small, dv_select(held != 0, pair, HF_NO_TOKEN), t);
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
        dv_shared_add(h + 4u * last, n, !skip && !same && n);
        n = skip ? n : same ? n + 1u : 1u;
        last = skip ? last : t;
    }
    __device__ __forceinline__ void flush() const
    {
        dv_shared_add(h + 4u * last, n, n != 0);
    }
};

/* hf_runs_walk's run tokens only (hf_enc_may_win_kernel counted the others): runs of full length
 * are counted in a register and added once. */
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
    dv_shared_add(c.h + 4u * hf_run_token(R, HF_RUN_MAX), full, full != 0);
}

/* Form 2's pair tokens and lone small tokens only (hf_enc_may_win_kernel counted the others). */
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

#endif
