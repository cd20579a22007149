/* The Huffman codec's ANS form on the GPU, the decoder (huff_ans.h; huff_ans.c is the
 * reference): the tables' slot buckets, the sub-chunks' first words, then the sub-chunks
 * decoded a thread each, from their last element. */
#include "ans_device.cuh"

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
__global__ void __launch_bounds__(HF_THREADS) hf_ans_buckets_kernel(const hf_ans_dec d)
{
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
__global__ void __launch_bounds__(HF_ONE_THREADS) hf_ans_index_kernel(const hf_dec_args a,
                                                                      const hf_ans_dec d)
{
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
                const uint32_t nw = hz_get_u16(counts + 2 * kk++);
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
                run += hz_get_u16(counts + 2 * k++);
        }
    }
    if (threadIdx.x == 0) {
        d.woff[nsub] = wtot;
        bad |= hf_pad4(2 * wtot) != L.stream_bytes;
    }
    /* padding: the counts', the stream's */
    for (const uint8_t *p = counts + 2 * L.busy + threadIdx.x; p < a.in + L.off_stream;
         p += blockDim.x)
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

/* Token of slot `slot` in the table of packed entries fcb (m tokens) from its bucket's entry
 * bk: the last whose cumulative frequency is at most the slot, as the reference's slot table
 * holds it; its entry in *f. */
__device__ __forceinline__ unsigned hf_ans_slot_token(const uint32_t *fcb, unsigned m,
                                                      unsigned bk, unsigned slot, uint32_t *f)
{
    unsigned t = bk & ~HF_ANS_PURE;
    uint32_t e = fcb[t];
    while (!(bk & HF_ANS_PURE) && t + 1 < m) {
        const uint32_t up = fcb[t + 1];
        if ((up >> 16) > slot)
            break;
        t++;
        e = up;
    }
    *f = e;
    return t;
}

/* A thread a sub-chunk, decode_sub of huff_ans.c: from the state at its end, each element from
 * the last to the first, the context the element after it gave; the tables and buckets in
 * shared memory, the next word read ahead. The warp's lanes go through their windows together,
 * last to first, each into its row of row_s, and the warp stores the rows whole. */
__global__ void __launch_bounds__(HF_ANS_THREADS) hf_ans_decode_kernel(const hf_dec_args a,
                                                                       const hf_ans_dec d)
{
    extern __shared__ uint32_t fc_s[];
    __shared__ int32_t row_s[HF_ANS_WARPS][32][HF_ANS_WIN + 1];
    __shared__ unsigned m_s[HF_ANS_TABLES];
    uint16_t *bk_s = (uint16_t *)(fc_s + d.ntab * d.span);
    for (unsigned k = threadIdx.x; k < d.ntab * d.span; k += blockDim.x)
        fc_s[k] = d.fc[k];
    for (unsigned k = threadIdx.x; k < d.ntab * HF_ANS_BUCKETS; k += blockDim.x)
        bk_s[k] = d.bucket[k];
    if (threadIdx.x < HF_ANS_TABLES)
        m_s[threadIdx.x] = threadIdx.x < d.ntab ? d.m[threadIdx.x] : 0u;
    __syncthreads();
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const uint64_t nsub = hf_ans_nsub(a.g.n);
    if (a.sc->corrupt || blockIdx.x * (uint64_t)blockDim.x + warp * 32u >= nsub)
        return;   /* grid- and warp-uniform */
    const hf_layout &L = a.L;
    const hf_ans_span sp(blockIdx.x * (uint64_t)blockDim.x + threadIdx.x, a.g.n);
    const int has_fill = a.Q.has_fill;
    const bool mine = sp.s < nsub;
    uint64_t j = mine ? d.woff[sp.s + 1] - d.woff[sp.s] : 0;
    const bool idle = j == 0;
    bool ok = !idle || hf_lone_valid(&L, L.run_token, has_fill);
    const int32_t idle_delta = hf_token_delta(L.run_token);
    /* the stream starts 4-aligned in the 4-aligned payload */
    const uint16_t *w = (const uint16_t *)(a.in + L.off_stream) + (mine ? d.woff[sp.s] : 0);
    uint32_t x = HF_ANS_LOW, ahead = 0;   /* ahead: word j - 1, the next one renormalising reads */
    hf_walk wk;
    hf_ans_cls cls;
    unsigned e = 0;   /* the element's index in its tile, where fast */
    bool fast = false;
    if (!idle) {
        j -= 2;
        x = w[j] | (uint32_t)w[j + 1] << 16;
        ahead = j > 0 ? w[j - 1] : 0u;
        ok = x >= HF_ANS_LOW;
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
        for (unsigned r = cnt; r-- > 0;) {
            int32_t v = idle_delta;
            if (!idle && ok) {
                const unsigned c = fast ? cls.of(e--) : hf_walk_class(&wk, L.order);
                const unsigned b = hf_ans_table(c, nx), mb = m_s[b];
                if (!mb) {
                    ok = false;
                } else {
                    const unsigned slot = x & (HF_ANS_M - 1u);
                    uint32_t f;
                    const unsigned t = hf_ans_slot_token(
                        fc_s + b * d.span, mb,
                        bk_s[b * HF_ANS_BUCKETS + (slot >> (HF_ANS_BITS - HF_ANS_BUCKET_BITS))],
                        slot, &f);
                    x = hf_ans_take(x, f & 0xFFFFu, f >> 16);
                    if (x < HF_ANS_LOW) {
                        ok = j > 0;
                        if (ok) {
                            x = x << 16 | ahead;
                            j--;
                            ahead = j > 0 ? w[j - 1] : 0u;
                        }
                    }
                    ok = ok && hf_lone_valid(&L, t, has_fill);
                    v = hf_token_delta(t);
                    nx = hf_ans_context(t);
                }
                if (!fast)
                    hf_walk_prev(&a.g, &wk);
            }
            row_s[warp][lane][r] = v;
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
    ok = ok && (idle || (j == 0 && x == HF_ANS_LOW));
    if (mine && !ok)
        atomicOr(&a.sc->corrupt, 1u);
}

cudaError_t hf_ans_launch_decode(const hf_dec_args &a, const hf_ans_dec &d, int sms,
                                 cudaStream_t s)
{
    const unsigned smem = d.ntab * d.span * 4u + d.ntab * HF_ANS_BUCKETS * 2u;
    cudaError_t e = cudaFuncSetAttribute(hf_ans_decode_kernel,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         HF_ANS_SMEM_MAX);
    if (e != cudaSuccess)
        return e;
    hf_ans_buckets_kernel<<<hf_grid(sms), HF_THREADS, 0, s>>>(d);
    hf_ans_index_kernel<<<1, HF_ONE_THREADS, 0, s>>>(a, d);
    hf_ans_decode_kernel<<<hf_sub_grid(hf_ans_nsub(a.g.n), 1, HF_ANS_THREADS), HF_ANS_THREADS,
                           smem, s>>>(a, d);
    return cudaGetLastError();
}
