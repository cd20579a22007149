/* The Huffman encoder's bit stream: the token counts of forms 1 and 2, then, once the codebook
 * is chosen, each sub-chunk's bits packed by a warp apart from the others, their offsets
 * scanned, the bits placed, the rest of the payload written around them, and its checksum. */
#include "../common/checksum.cuh"
#include "walk.cuh"

/* The token counts of form 1 + blockIdx.y (hf_enc_codebook_kernel's hist_alt, which
 * hf_enc_may_win_kernel started): both forms in one launch. */
__global__ void __launch_bounds__(HF_WALK_WARPS * 32) hf_enc_form_hist_kernel(const hf_enc_args a_)
{
    const hf_enc_args a = hf_enc_at(a_);
    __shared__ __align__(16) uint32_t stage_s[HF_WALK_WARPS][HF_STAGE_WORDS];
    __shared__ unsigned h_s[HF_MAX_SYMS];
    hf_enc_plan *P = a.b.plan;
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
__global__ void __launch_bounds__(HF_THREADS) hf_enc_clear_kernel(const hf_enc_args a_)
{
    const hf_enc_args a = hf_enc_at(a_);
    const hf_enc_plan *P = a.b.plan;
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
        dv_shared_store(w, (uint32_t)acc, full);
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
 * offsets come after (hf_enc_sub_scan_kernel, hf_enc_place_kernel). */
__global__ void __launch_bounds__(HF_WALK_WARPS * 32) hf_enc_pack_kernel(const hf_enc_args a_)
{
    const hf_enc_args a = hf_enc_at(a_);
    __shared__ __align__(16) uint32_t stage_s[HF_WALK_WARPS][HF_STAGE_WORDS];
    __shared__ __align__(16) uint32_t cl_s[HF_MAX_SYMS + 1];
    hf_enc_plan *P = a.b.plan;
    if (P->too_small || P->form == HF_FORM_ANS)
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
    dv_shared_store(W.w, (uint32_t)W.acc, W.nacc != 0);
    const uint32_t bits = 8u * (W.w - own_at) + W.nacc;
    const uint32_t incl = dv_warp_incl(bits), total = __shfl_sync(FULL, incl, 31);
    own[HF_LANE_WORDS] = incl - bits;   /* the share's padding */
    __syncwarp();
    uint32_t *slot = (uint32_t *)(a.b.tok + s * HF_SUB);
    for (uint32_t i = lane; i < (total + 31u) / 32u; i += 32)
        slot[i] = hf_gather_word(stage_s[warp], 32u * i, total);
    if (lane == 0)
        a.b.subbits[s] = total;
}

#define HF_SCAN_BATCH 8u   /* 32-entry rounds a warp of hf_enc_sub_scan_kernel loads at once */

/* The sub-chunks' stream offsets, the exclusive prefix of subbits, by one CTA: a warp a
 * segment, summed, the sums' prefix over the CTA, then each segment scanned 32 entries at a
 * time (coalesced; HF_SCAN_BATCH rounds' loads issued together). */
__global__ void __launch_bounds__(HF_ONE_THREADS) hf_enc_sub_scan_kernel(const hf_enc_args a_)
{
    const hf_enc_args a = hf_enc_at(a_);
    if (a.b.plan->too_small || a.b.plan->form == HF_FORM_ANS)
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
    sum = dv_warp_sum(sum);
    uint64_t carry = __shfl_sync(FULL, dv_block_excl(lane == 0 ? sum : 0, &total), 0);
    for (uint64_t base = i0; base < i1; base += 32 * HF_SCAN_BATCH) {
        uint32_t b[HF_SCAN_BATCH];
        dv_warp_batch(bits, base, i1, b);
#pragma unroll
        for (unsigned k = 0; k < HF_SCAN_BATCH; k++) {
            const uint64_t i = base + 32 * k + lane;
            const uint32_t incl = dv_warp_incl(b[k]);   /* 32 sub-chunks' bits fit 32 bits */
            if (i < i1)
                off[i] = carry + (incl - b[k]);
            carry += __shfl_sync(FULL, incl, 31);
        }
    }
}

/* Each sub-chunk's packed stream (hf_enc_pack_kernel) moved to its offset in the zeroed stream, a
 * warp a sub-chunk: whole words are stored, the first and the last, which the neighbouring
 * sub-chunks may share, OR-ed in atomically. */
__global__ void __launch_bounds__(HF_THREADS) hf_enc_place_kernel(const hf_enc_args a_)
{
    const hf_enc_args a = hf_enc_at(a_);
    const hf_enc_plan *P = a.b.plan;
    if (P->too_small || P->form == HF_FORM_ANS)
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

/* Everything but the stream: fixed part, codebook, sub-chunk table, outliers, verbatim values
 * (in the ANS form the fixed part and the lists: hf_ans_place_kernel wrote the rest). */
__global__ void __launch_bounds__(HF_THREADS) hf_enc_tail_kernel(const hf_enc_args a_)
{
    const hf_enc_args a = hf_enc_at(a_);
    const hf_enc_plan *P = a.b.plan;
    if (P->too_small)
        return;
    uint8_t *dst = a.b.dst;
    const bool ans = P->form == HF_FORM_ANS;
    const unsigned m0 = ans ? 0 : P->m0, m1 = ans ? 0 : P->m1, nlen = m0 + m1;
    const unsigned esize = a.Q.is_f32 ? 4u : 8u;
    const uint64_t nsub = ans ? 0 : a.g.nsub, n_out = P->n_out, n_verb = P->n_verb;
    const uint64_t off_sub = HF_OFF_CODEBOOK + hf_pad4(hf_codebook_size(m0, m1));
    const hf_ans_plan *A = a.b.ans;
    const uint64_t nsub_ans = hf_ans_nsub(a.g.n);
    const uint64_t off_out =
        ans ? HF_ANS_OFF_TABLES + hf_pad4((A->nibbles + 1) / 2) +
                  hf_ans_index_bytes(nsub_ans, A->busy_groups, A->busy, A->count_bytes) +
                  hf_pad4(2 * A->words)
            : off_sub + hf_pad4(2 * nsub) + hf_pad4((P->bits + 7) / 8);
    const uint64_t off_verb = off_out + 8 * n_out;
    /* at least one: item 0 writes the fixed part */
    const uint64_t items = max(max(max(nsub, (uint64_t)1), (uint64_t)(nlen + 1) / 2),
                               max(n_out, n_verb));
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < items;
         i += (uint64_t)gridDim.x * blockDim.x) {
        if (i == 0) {
            qz_put_anchor(dst, &a.Q);
            dst[8] = (uint8_t)P->form;
            dst[9] = (uint8_t)P->pred;
            hz_put_u16(dst + 10, a.R);
            hz_put_u16(dst + 12, P->form == HF_FORM_RUNS || ans ? P->rs : 0u);
            dst[14] = (uint8_t)a.b.axes;
            dst[HF_ANS_OFF_COUNT_BYTES] = ans ? (uint8_t)A->count_bytes : 0u;
            hz_put_u32(dst + 16, (uint32_t)n_out);
            hz_put_u32(dst + 20, (uint32_t)n_verb);
            if (!ans) {
                hz_put_u16(dst + HF_OFF_CODEBOOK, m0);
                hz_put_u16(dst + HF_OFF_CODEBOOK + 2, m1);
            }
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

/* The payload's checksum terms (dv_checksum_share), once its size is known on the device. */
__global__ void __launch_bounds__(HF_THREADS) hf_enc_checksum_kernel(const hf_enc_args a_)
{
    const hf_enc_args a = hf_enc_at(a_);
    const hf_enc_plan *P = a.b.plan;
    if (P->too_small)
        return;
    const uint64_t t0 = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    uint32_t s = dv_checksum_share(a.b.dst, P->size, t0, (uint64_t)gridDim.x * blockDim.x);
    s = __reduce_add_sync(FULL, s);
    if ((threadIdx.x & 31u) == 0)
        atomicAdd(&a.sc->sum, s);
}

cudaError_t hf_enc_launch_form_hists(const hf_enc_args &a, cudaStream_t s)
{
    const unsigned walk = (unsigned)((a.g.nsub + HF_WALK_WARPS - 1) / HF_WALK_WARPS);
    hf_enc_form_hist_kernel<<<dim3(walk, 2, a.count), HF_WALK_WARPS * 32, 0, s>>>(a);
    return cudaGetLastError();
}

cudaError_t hf_enc_launch_stream(const hf_enc_args &a, int sms, cudaStream_t s)
{
    const unsigned walk = (unsigned)((a.g.nsub + HF_WALK_WARPS - 1) / HF_WALK_WARPS);
    hf_enc_clear_kernel<<<hf_layers(hf_grid_each(sms, a), a), HF_THREADS, 0, s>>>(a);
    cudaError_t e = hf_ans_launch_place(a, sms, s);
    if (e != cudaSuccess)
        return e;
    hf_enc_pack_kernel<<<hf_layers(walk, a), HF_WALK_WARPS * 32, 0, s>>>(a);
    hf_enc_sub_scan_kernel<<<hf_layers(1, a), HF_ONE_THREADS, 0, s>>>(a);
    hf_enc_place_kernel<<<hf_layers(hf_sub_grid(a.g.nsub, 32, HF_THREADS), a), HF_THREADS, 0,
                          s>>>(a);
    hf_enc_tail_kernel<<<hf_layers(hf_grid_each(sms, a), a), HF_THREADS, 0, s>>>(a);
    hf_enc_checksum_kernel<<<hf_layers(hf_grid_each(sms, a), a), HF_THREADS, 0, s>>>(a);
    return cudaGetLastError();
}
