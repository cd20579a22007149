/* The Huffman codec's ANS form on the GPU, the decoder (huff_ans.h; huff_ans.c is the
 * reference): the tables' slot buckets, the sub-chunks' first words, then the sub-chunks
 * decoded a thread each, from their last element. */
#include "ans_device.cuh"

/* Sub-chunk elements [i0, i0 + cnt) that lie in one tile hf_ans_cls_of takes: their classes
 * in *c and the first one's index in the tile in *e0; else false (a chunk's edge tiles). */
__device__ __forceinline__ bool hf_ans_sub_cls(const hf_geom &g, unsigned pred, uint64_t i0,
                                               unsigned cnt, hf_ans_cls *c, unsigned *e0)
{
    hf_walk w;
    hf_walk_at(&g, &w, i0);
    const hf_tile T = {w.z0, w.y0, w.x0, 0, w.ez, w.ey, w.ex};
    *e0 = (w.z * w.ey + w.y) * w.ex + w.x;
    return *e0 + cnt <= w.ez * w.ey * w.ex && hf_ans_cls_of(pred, T, c);
}

/* The last token of table fc (m tokens) whose cumulative frequency is at most slot, as the
 * reference's slot table holds it: a binary search, then past zero frequencies (which share
 * their successor's cumulative). */
__device__ unsigned hf_ans_search(const uint32_t *fc, unsigned m, unsigned slot)
{
    unsigned lo = 0, hi = m;
    while (hi - lo > 1) {
        const unsigned mid = (lo + hi) / 2;
        if ((fc[mid] >> 16) <= slot)
            lo = mid;
        else
            hi = mid;
    }
    while (lo + 1 < m && (fc[lo + 1] >> 16) <= slot)
        lo++;
    return lo;
}

/* Bucket k of table b: the token of its first slot, HF_ANS_PURE set when its last slot's is
 * the same (then no slot of the bucket needs a search). */
template <bool MANY>
__global__ void __launch_bounds__(HF_THREADS)
    hf_ans_buckets_kernel(const __grid_constant__ hf_dec_args a_)
{
    const hf_dec_args &a = hf_dec_at<MANY>(a_);
    const hf_ans_dec &d = a.ans;
    const unsigned total = d.ntab * HF_ANS_BUCKETS, width = HF_ANS_M / HF_ANS_BUCKETS;
    for (unsigned j = blockIdx.x * blockDim.x + threadIdx.x; j < total;
         j += gridDim.x * blockDim.x) {
        const unsigned b = j / HF_ANS_BUCKETS, slot = j % HF_ANS_BUCKETS * width;
        const uint32_t *fc = d.fc + (uint64_t)b * d.span;
        const unsigned t = hf_ans_search(fc, d.m[b], slot);
        const bool pure = hf_ans_search(fc, d.m[b], slot + width - 1) == t;
        d.bucket[j] = (uint16_t)(t | (pure ? HF_ANS_PURE : 0u));
    }
}

/* One CTA, a run of groups a thread: each sub-chunk's first word from the groups' bits, the
 * busy groups' masks and the busy sub-chunks' counts, checked as ans_stream of huff_cpu.c
 * checks them (hf_parse checked the groups' padding and counted them). */
template <bool MANY>
__global__ void __launch_bounds__(HF_ONE_THREADS)
    hf_ans_index_kernel(const __grid_constant__ hf_dec_args a_)
{
    const hf_dec_args &a = hf_dec_at<MANY>(a_);
    const hf_ans_dec &d = a.ans;
    const hf_layout &L = a.L;
    const uint64_t nsub = hf_ans_nsub(a.g.n), groups = hf_ans_groups(nsub);
    const uint8_t *level0 = a.in + L.off_sub, *masks = level0 + hf_pad4((groups + 7) / 8);
    const uint8_t *counts = masks + 8 * (uint64_t)L.busy_groups;
    const uint64_t seg = (groups + blockDim.x - 1) / blockDim.x;
    const uint64_t g0 = min(groups, threadIdx.x * seg), g1 = min(groups, g0 + seg);
    auto marked = [&](uint64_t g) { return (level0[g / 8] >> (g % 8) & 1u) != 0; };
    uint64_t nmarked = 0, gtot;
    for (uint64_t g = g0; g < g1; g++)
        nmarked += marked(g);
    const uint64_t gfirst = dv_block_excl(nmarked, &gtot);   /* gtot = L.busy_groups */
    uint64_t busy = 0, btot;
    bool bad = false;
    for (uint64_t g = g0, gi = gfirst; g < g1; g++) {
        if (!marked(g))
            continue;
        const uint64_t m = hz_get_u64(masks + 8 * gi++);
        const uint64_t past = nsub - g * HF_ANS_GROUP;   /* sub-chunks in this group */
        bad |= !m || (past < HF_ANS_GROUP && (m >> past) != 0);
        busy += __popcll(m);
    }
    uint64_t k = dv_block_excl(busy, &btot);
    bad |= btot != L.busy;
    uint64_t words = 0, wtot;
    for (uint64_t g = g0, gi = gfirst, kk = k; g < g1 && !bad; g++) {
        if (!marked(g))
            continue;
        const uint64_t m = hz_get_u64(masks + 8 * gi++);
        for (uint64_t j = 0; j < HF_ANS_GROUP; j++)
            if (m >> j & 1u) {
                const uint32_t nw = hf_ans_get_count(counts, kk++, L.count_bytes);
                bad |= nw < 2;
                words += nw;
            }
    }
    const bool any_bad = __syncthreads_or(bad);
    uint64_t run = dv_block_excl(any_bad ? 0 : words, &wtot);
    for (uint64_t g = g0, gi = gfirst; g < g1 && !any_bad; g++) {
        const uint64_t m = marked(g) ? hz_get_u64(masks + 8 * gi++) : 0;
        for (uint64_t j = 0; j < HF_ANS_GROUP && g * HF_ANS_GROUP + j < nsub; j++) {
            d.woff[g * HF_ANS_GROUP + j] = run;
            if (m >> j & 1u)
                run += hf_ans_get_count(counts, k++, L.count_bytes);
        }
    }
    if (threadIdx.x == 0) {
        d.woff[nsub] = wtot;
        bad |= hf_pad4(2 * wtot) != L.stream_bytes;
    }
    /* padding: the counts', the stream's */
    for (const uint8_t *p = counts + (uint64_t)L.count_bytes * L.busy + threadIdx.x;
         p < a.in + L.off_stream; p += blockDim.x)
        bad |= *p != 0;
    for (uint64_t b = 2 * wtot + threadIdx.x; b < L.stream_bytes; b += blockDim.x)
        bad |= a.in[L.off_stream + b] != 0;
    if (__syncthreads_or(bad | any_bad) && threadIdx.x == 0)
        atomicOr(&a.sc->corrupt, 1u);
}

/* Windows of HF_ANS_WIN elements: the decoder's warp of 32 sub-chunks (a lane each) moves
 * through them together, and stores each lane's window in whole rows, which a thread walking
 * its own sub-chunk would store a sector at a time (3x the decoder's time on the 512^3
 * fields). */
#define HF_ANS_WIN 32u
#define HF_ANS_WINDOWS (HF_ANS_SUB / HF_ANS_WIN)
#define HF_ANS_WARPS (HF_ANS_THREADS / 32)

/* A lane's sub-chunk s and its elements [i0, i1) (none past the chunk). */
struct hf_ans_span {
    uint64_t s, i0, i1;
    __device__ hf_ans_span(uint64_t s_, uint64_t n)
        : s(s_), i0(min(s_ * HF_ANS_SUB, n)), i1(min(s_ * HF_ANS_SUB + HF_ANS_SUB, n))
    {
    }
};

/* The decoder's tables in shared memory: a table's packed entries (frequency | cumulative
 * << 16) at a stride of span + 1, those from its m-th on HF_ANS_STOP, whose cumulative exceeds
 * every slot, so a slot's search needs no bound; then its buckets. */
#define HF_ANS_STOP 0xFFFF0000u

static inline unsigned hf_ans_dec_smem(unsigned ntab, unsigned span)
{
    static_assert(HF_ANS_TABLES * (2u * HF_RADIUS_MAX + 1u) * 4u +
                          HF_ANS_TABLES * HF_ANS_BUCKETS * 2u <= HF_ANS_SMEM_MAX,
                  "the decoder's tables fit the ANS kernels' shared memory limit");
    return ntab * (span + 1u) * 4u + ntab * HF_ANS_BUCKETS * 2u;
}

/* One element of a busy sub-chunk, from the last to the first (decode_sub of huff_ans.c):
 * the token of the state's slot in table b, the state taken back and renormalised from the
 * word read ahead. A bucket gives the token of its first slot, the search goes on past it
 * only where the bucket is not pure; a table that codes nothing (its entries all
 * HF_ANS_STOP) or a word missing sets *bad, and the decoding goes on within bounds. */
struct hf_ans_state {
    uint32_t x, ahead;
    int j;   /* ahead is word j of the sub-chunk; -1 when none is left */
    const uint16_t *w;
    __device__ __forceinline__ unsigned take(const uint32_t *fc_s, const uint16_t *bk_s,
                                             unsigned stride, unsigned b, bool *bad)
    {
        const unsigned slot = x & (HF_ANS_M - 1u);
        const unsigned bk =
            bk_s[b * HF_ANS_BUCKETS + (slot >> (HF_ANS_BITS - HF_ANS_BUCKET_BITS))];
        const uint32_t *fcb = fc_s + b * stride;
        unsigned t = bk & ~HF_ANS_PURE;
        uint32_t en = fcb[t];
        if (!(bk & HF_ANS_PURE))
            for (uint32_t up = fcb[t + 1]; (up >> 16) <= slot; up = fcb[t + 1]) {
                t++;
                en = up;
            }
        const uint32_t f = en & 0xFFFFu, cum = en >> 16;
        *bad |= slot - cum >= f;   /* a table with no tokens */
        x = f * (x >> HF_ANS_BITS) + slot - cum;
        if (x < HF_ANS_LOW) {
            *bad |= j < 0;
            x = x << 16 | ahead;
            j = j > 0 ? j - 1 : -1;
            ahead = w[j > 0 ? j : 0];
        }
        return t;
    }
};

/* A thread a sub-chunk: from the state at its end, each element from the last to the first,
 * the context the element after it gave; tables and buckets in shared memory. The warp's
 * lanes go through their windows together, last to first, each into its row of row_s, and
 * the warp stores the rows whole. */
template <bool MANY>
__global__ void __launch_bounds__(HF_ANS_THREADS)
    hf_ans_decode_kernel(const __grid_constant__ hf_dec_args a_)
{
    const hf_dec_args &a = hf_dec_at<MANY>(a_);
    const hf_ans_dec &d = a.ans;
    extern __shared__ uint32_t fc_s[];
    __shared__ int32_t row_s[HF_ANS_WARPS][32][HF_ANS_WIN + 1];
    const unsigned stride = d.span + 1u;
    uint16_t *bk_s = (uint16_t *)(fc_s + d.ntab * stride);
    for (unsigned b = 0; b < d.ntab; b++)
        for (unsigned t = threadIdx.x; t < stride; t += blockDim.x)
            fc_s[b * stride + t] = t < d.m[b] ? d.fc[(uint64_t)b * d.span + t] : HF_ANS_STOP;
    for (unsigned k = threadIdx.x; k < d.ntab * HF_ANS_BUCKETS; k += blockDim.x)
        bk_s[k] = d.bucket[k];
    __syncthreads();
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const uint64_t nsub = hf_ans_nsub(a.g.n);
    if (a.sc->corrupt || blockIdx.x * (uint64_t)blockDim.x + warp * 32u >= nsub)
        return;   /* grid- and warp-uniform */
    const hf_layout &L = a.L;
    const hf_ans_span sp(blockIdx.x * (uint64_t)blockDim.x + threadIdx.x, a.g.n);
    const bool no_fill = !a.Q.has_fill, mine = sp.s < nsub;
    const int nw = mine ? (int)(d.woff[sp.s + 1] - d.woff[sp.s]) : 0;
    const bool idle = nw == 0;
    bool bad = idle && !hf_lone_valid(&L, L.run_token, !no_fill);
    const int32_t idle_delta = hf_token_delta(L.run_token);
    /* the stream starts 4-aligned in the 4-aligned payload */
    hf_ans_state st = {HF_ANS_LOW, 0u, 0,
                       (const uint16_t *)(a.in + L.off_stream) + (mine ? d.woff[sp.s] : 0)};
    hf_walk wk;
    hf_ans_cls cls;
    unsigned e = 0;   /* the element's index in its tile, where fast */
    bool fast = false;
    if (!idle) {
        st.x = st.w[nw - 2] | (uint32_t)st.w[nw - 1] << 16;
        st.j = nw - 3;   /* ahead is word nw - 3, or word 0 where there is none */
        st.ahead = st.w[st.j > 0 ? st.j : 0];
        bad = st.x < HF_ANS_LOW;
        fast = hf_ans_sub_cls(a.g, L.order, sp.i0, (unsigned)(sp.i1 - sp.i0), &cls, &e);
        e += (unsigned)(sp.i1 - sp.i0) - 1;
        if (!fast)
            hf_walk_at(&a.g, &wk, sp.i1 - 1);
    }
    const unsigned nwin = (unsigned)((sp.i1 - sp.i0 + HF_ANS_WIN - 1) / HF_ANS_WIN);
    unsigned nx = 0;
    for (unsigned it = 0; it < HF_ANS_WINDOWS; it++) {
        /* this lane's window: the it-th from its end */
        const bool live = it < nwin;
        const uint64_t base = sp.i0 + (uint64_t)(nwin - 1 - it) * HF_ANS_WIN;
        const unsigned cnt = live ? (unsigned)min((uint64_t)HF_ANS_WIN, sp.i1 - base) : 0u;
        if (idle) {
            for (unsigned r = 0; r < cnt; r++)
                row_s[warp][lane][r] = idle_delta;
        } else {
            for (unsigned r = cnt; r-- > 0;) {
                unsigned c;
                if (fast) {
                    c = cls.of(e--);
                } else {
                    c = hf_walk_class(&wk, L.order);
                    hf_walk_prev(&a.g, &wk);
                }
                const unsigned t = st.take(fc_s, bk_s, stride, hf_ans_table(c, nx), &bad);
                bad |= no_fill && t == HF_TOK_FILL;
                nx = hf_ans_context(t);
                row_s[warp][lane][r] = hf_token_delta(t);
            }
        }
        __syncwarp();
        for (unsigned r = 0; r < 32; r++) {   /* row r: lane r's window, stored whole */
            const uint64_t rb = __shfl_sync(FULL, base, r);
            const unsigned rc = __shfl_sync(FULL, cnt, r);
            if (lane < rc)
                a.delta[rb + lane] = row_s[warp][r][lane];
        }
        __syncwarp();
    }
    bad |= !idle && (st.j != -1 || st.x != HF_ANS_LOW);
    if (mine && bad)
        atomicOr(&a.sc->corrupt, 1u);
}

template <bool MANY>
static cudaError_t ans_decode_as(const hf_dec_args &a, int sms, cudaStream_t s)
{
    /* a launch's chunks share a predictor and a radius: a.ans's tables' count and span */
    const unsigned smem = hf_ans_dec_smem(a.ans.ntab, a.ans.span);
    cudaError_t e = cudaFuncSetAttribute(hf_ans_decode_kernel<MANY>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         HF_ANS_SMEM_MAX);
    if (e != cudaSuccess)
        return e;
    hf_ans_buckets_kernel<MANY>
        <<<hf_dec_layers(hf_dec_grid_each(sms, a), a), HF_THREADS, 0, s>>>(a);
    hf_ans_index_kernel<MANY><<<hf_dec_layers(1, a), HF_ONE_THREADS, 0, s>>>(a);
    hf_ans_decode_kernel<MANY>
        <<<hf_dec_layers(hf_sub_grid(hf_ans_nsub(a.g.n), 1, HF_ANS_THREADS), a), HF_ANS_THREADS,
           smem, s>>>(a);
    return cudaGetLastError();
}

cudaError_t hf_ans_launch_decode(const hf_dec_args &a, int sms, cudaStream_t s)
{
    return a.many ? ans_decode_as<true>(a, sms, s) : ans_decode_as<false>(a, sms, s);
}
