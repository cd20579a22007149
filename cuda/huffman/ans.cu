/* The Huffman codec's ANS form on the GPU (huff_ans.h; huff_ans.c is the reference): the
 * encoder's counts per table, the tables, every sub-chunk coded by a thread, the choice against
 * the Huffman forms by exact size and the payload's ANS sections; the decoder's slot tables,
 * sub-chunk offsets and sub-chunks decoded a thread each, from their last element. */
#include "huff_device.cuh"

#include "huff_ans.h"

#define HF_ANS_THREADS 128   /* sub-chunk kernels: a thread a sub-chunk */

/* Shared memory of the tables' packed entries (frequency | cumulative << 16) for radius R. */
static unsigned hf_ans_smem(unsigned R)
{
    return HF_ANS_TABLES * 2u * R * 4u;
}

/* ---- encoder -------------------------------------------------------------------------------- */

/* A CTA a tile: its elements counted by (table, token) in shared memory, then added to the
 * plan's counts. A table is the element's class and the context its successor in the tile-major
 * order gives (none past a sub-chunk's end). */
__global__ void __launch_bounds__(HF_THREADS) hf_ans_count_kernel(const hf_enc_args a)
{
    extern __shared__ uint32_t h_s[];
    hf_ans_plan *A = a.b.ans;
    const unsigned pred = a.b.plan->pred, span = 2 * a.R, ntab = hf_ans_tables_of(pred);
    for (unsigned k = threadIdx.x; k < ntab * span; k += blockDim.x)
        h_s[k] = 0;
    __syncthreads();
    hf_tile T;
    hf_tile_at(&a.g, blockIdx.x, &T);
    const unsigned tn = T.ez * T.ey * T.ex;
    const uint16_t *tok = a.b.tok;
    for (unsigned e = threadIdx.x; e < tn; e += blockDim.x) {
        const uint64_t i = T.start + e;
        const unsigned x = e % T.ex, y = e / T.ex % T.ey, z = e / T.ex / T.ey;
        const unsigned nx =
            (i + 1) % HF_ANS_SUB && i + 1 < a.g.n ? hf_ans_context(tok[i + 1]) : 0u;
        const unsigned b = hf_ans_table(hf_ans_class(pred, T.z0 + z, T.y0 + y, T.x0 + x), nx);
        const unsigned key = b * span + tok[i];
        /* most elements share a few keys: one shared atomic a key a warp */
        const unsigned peers = __match_any_sync(__activemask(), key);
        if ((threadIdx.x & 31u) == (unsigned)__ffs(peers) - 1u)
            atomicAdd(&h_s[key], (unsigned)__popc(peers));
    }
    __syncthreads();
    for (unsigned k = threadIdx.x; k < ntab * span; k += blockDim.x)
        if (h_s[k])
            atomicAdd(&A->count[k / span][k % span], h_s[k]);
}

/* A thread a table: its tokens, frequencies (hf_ans_normalize) and nibbles, then the packed
 * entries; thread 0 lays the tables one after another. */
__global__ void hf_ans_norm_kernel(const hf_enc_args a)
{
    hf_ans_plan *A = a.b.ans;
    const unsigned ntab = hf_ans_tables_of(a.b.plan->pred), span = 2 * a.R;
    const unsigned b = threadIdx.x;
    if (b < ntab) {
        unsigned m = 0;
        uint64_t total = 0;
        for (unsigned t = 0; t < span; t++) {
            m = A->count[b][t] ? t + 1 : m;
            total += A->count[b][t];
        }
        A->m[b] = m;
        uint32_t *f = A->fc[b];
        if (m)
            hf_ans_normalize(A->count[b], m, total, f);
        A->nib[b] = hf_ans_table_nibbles(f, m);
        uint32_t run = 0;
        for (unsigned t = 0; t < m; t++) {
            const uint32_t ft = f[t];
            f[t] = ft | run << 16;
            run += ft;
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        A->ntab = ntab;
        unsigned long long k = 0;
        for (unsigned t = 0; t < ntab; t++)
            k += A->nib[t];
        A->nibbles = k;
    }
}

/* The packed tables of the plan into shared memory. */
__device__ __forceinline__ void hf_ans_load_tables(const hf_ans_plan *A, unsigned span,
                                                   uint32_t *fc_s)
{
    for (unsigned k = threadIdx.x; k < A->ntab * span; k += blockDim.x)
        fc_s[k] = k % span < A->m[k / span] ? A->fc[k / span][k % span] : 0u;
    __syncthreads();
}

/* A thread a sub-chunk, as encode_task of huff_ans.c: a sub-chunk of the run token alone has no
 * words; else its tokens onto the state first to last, then the state. */
__global__ void __launch_bounds__(HF_ANS_THREADS) hf_ans_encode_kernel(const hf_enc_args a)
{
    extern __shared__ uint32_t fc_s[];
    const hf_ans_plan *A = a.b.ans;
    const hf_enc_plan *P = a.b.plan;
    const unsigned span = 2 * a.R, pred = P->pred, rs = P->rs;
    hf_ans_load_tables(A, span, fc_s);
    const uint64_t s = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    if (s >= hf_ans_nsub(a.g.n))
        return;
    const uint64_t i0 = s * HF_ANS_SUB, i1 = min(i0 + HF_ANS_SUB, a.g.n);
    const uint16_t *tok = a.b.tok;
    uint64_t same = i0;
    while (same < i1 && tok[same] == rs)
        same++;
    if (same == i1) {
        a.b.ans_nwords[s] = 0;
        return;
    }
    uint16_t *w = a.b.ans_words + s * HF_ANS_SUB_WORDS;
    unsigned k = 0;
    uint32_t x = HF_ANS_LOW;
    hf_walk wk;
    hf_walk_at(&a.g, &wk, i0);
    unsigned t = tok[i0];
    for (uint64_t i = i0; i < i1; i++, hf_walk_next(&a.g, &wk)) {
        const unsigned next = i + 1 < i1 ? tok[i + 1] : 0u;
        const unsigned nx = i + 1 < i1 ? hf_ans_context(next) : 0u;
        const uint32_t e = fc_s[hf_ans_table(hf_walk_class(&wk, pred), nx) * span + t];
        x = hf_ans_put(x, e & 0xFFFFu, e >> 16, w, &k);
        t = next;
    }
    w[k++] = (uint16_t)x;
    w[k++] = (uint16_t)(x >> 16);
    a.b.ans_nwords[s] = k;
}

/* One CTA: each sub-chunk's first word and its place among the busy ones (exclusive sums),
 * the ANS payload's size, and the choice: the ANS form when strictly smaller than the Huffman
 * form hf_enc_choose_kernel kept. */
__global__ void __launch_bounds__(HF_ONE_THREADS) hf_ans_choose_kernel(const hf_enc_args a)
{
    hf_ans_plan *A = a.b.ans;
    hf_enc_plan *P = a.b.plan;
    const uint64_t nsub = hf_ans_nsub(a.g.n);
    const uint64_t seg = (nsub + blockDim.x - 1) / blockDim.x;
    const uint64_t s0 = min(nsub, threadIdx.x * seg), s1 = min(nsub, s0 + seg);
    uint64_t words = 0, busy = 0, wtot, btot;
    for (uint64_t s = s0; s < s1; s++) {
        words += a.b.ans_nwords[s];
        busy += a.b.ans_nwords[s] != 0;
    }
    uint64_t wrun = dv_block_excl(words, &wtot), brun = dv_block_excl(busy, &btot);
    for (uint64_t s = s0; s < s1; s++) {
        a.b.ans_woff[s] = wrun;
        a.b.ans_bidx[s] = (uint32_t)brun;
        wrun += a.b.ans_nwords[s];
        brun += a.b.ans_nwords[s] != 0;
    }
    /* the groups of HF_ANS_GROUP sub-chunks with a busy one, and each one's place */
    const uint64_t groups = hf_ans_groups(nsub), gseg = (groups + blockDim.x - 1) / blockDim.x;
    const uint64_t g0 = min(groups, threadIdx.x * gseg), g1 = min(groups, g0 + gseg);
    uint64_t marked = 0, gtot;
    for (uint64_t g = g0; g < g1; g++) {
        bool any = false;
        for (uint64_t s = g * HF_ANS_GROUP; s < min(nsub, (g + 1) * HF_ANS_GROUP); s++)
            any |= a.b.ans_nwords[s] != 0;
        marked += any;
    }
    uint64_t grun = dv_block_excl(marked, &gtot);
    for (uint64_t g = g0; g < g1; g++) {
        a.b.ans_gidx[g] = (uint32_t)grun;
        bool any = false;
        for (uint64_t s = g * HF_ANS_GROUP; s < min(nsub, (g + 1) * HF_ANS_GROUP); s++)
            any |= a.b.ans_nwords[s] != 0;
        grun += any;
    }
    if (threadIdx.x == 0) {
        const unsigned esize = a.Q.is_f32 ? 4u : 8u;
        A->words = wtot;
        A->busy = btot;
        A->busy_groups = gtot;
        const uint64_t size = HF_ANS_OFF_TABLES + hf_pad4((A->nibbles + 1) / 2) +
                              hf_ans_index_bytes(nsub, gtot, btot) + hf_pad4(2 * wtot) +
                              8 * P->n_out + (4 + esize) * P->n_verb;
        if (size < P->size) {
            P->form = HF_FORM_ANS;
            P->size = size;
            P->too_small = size > a.b.cap;
            a.sc->bytes_total = size;
        }
    }
}

/* The ANS sections of the zeroed payload (when chosen): the count of busy sub-chunks and the
 * tables (thread 0, nibble by nibble), the bitmap and word counts, then each sub-chunk's words a
 * warp each. */
__global__ void __launch_bounds__(HF_THREADS) hf_ans_place_kernel(const hf_enc_args a)
{
    const hf_enc_plan *P = a.b.plan;
    const hf_ans_plan *A = a.b.ans;
    if (P->too_small || P->form != HF_FORM_ANS)
        return;
    uint8_t *dst = a.b.dst;
    const uint64_t nsub = hf_ans_nsub(a.g.n);
    const uint64_t off_bitmap = HF_ANS_OFF_TABLES + hf_pad4((A->nibbles + 1) / 2);
    const uint64_t off_masks = off_bitmap + hf_pad4((hf_ans_groups(nsub) + 7) / 8);
    const uint64_t off_counts = off_masks + 8 * A->busy_groups;
    const uint64_t off_stream = off_bitmap + hf_ans_index_bytes(nsub, A->busy_groups, A->busy);
    const uint64_t gt = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    if (gt == 0) {
        hz_put_u32(dst + HF_ANS_OFF_BUSY, (uint32_t)A->busy);
        uint64_t k = 0;
        uint32_t f[2 * HF_RADIUS_MAX];
        for (unsigned b = 0; b < A->ntab; b++) {
            for (unsigned t = 0; t < A->m[b]; t++)
                f[t] = A->fc[b][t] & 0xFFFFu;
            hf_ans_table_put(dst + HF_ANS_OFF_TABLES, &k, f, A->m[b]);
        }
    }
    for (uint64_t s = gt; s < nsub; s += (uint64_t)gridDim.x * blockDim.x) {
        const uint32_t nw = a.b.ans_nwords[s];
        if (!nw)
            continue;
        const uint64_t g = s / HF_ANS_GROUP, j = s % HF_ANS_GROUP;
        atomicOr((unsigned *)(dst + off_bitmap) + g / 32, 1u << (g % 32));
        atomicOr((unsigned *)(dst + off_masks + 8 * (uint64_t)a.b.ans_gidx[g]) + j / 32,
                 1u << (j % 32));
        hz_put_u16(dst + off_counts + 2 * (uint64_t)a.b.ans_bidx[s], nw);
    }
    const unsigned lane = threadIdx.x & 31u;
    const uint64_t warps = (uint64_t)gridDim.x * blockDim.x / 32;
    for (uint64_t s = gt / 32; s < nsub; s += warps) {
        const uint32_t nw = a.b.ans_nwords[s];
        const uint16_t *w = a.b.ans_words + s * HF_ANS_SUB_WORDS;
        uint8_t *o = dst + off_stream + 2 * a.b.ans_woff[s];
        for (uint32_t k = lane; k < nw; k += 32)
            hz_put_u16(o + 2 * k, w[k]);
    }
}

cudaError_t hf_ans_launch_encode(const hf_enc_args &a, int sms, cudaStream_t s)
{
    const unsigned smem = hf_ans_smem(a.R);
    const uint64_t nsub = hf_ans_nsub(a.g.n);
    cudaError_t e;
    if ((e = cudaMemsetAsync(a.b.ans->count, 0, sizeof a.b.ans->count, s)) != cudaSuccess ||
        (e = cudaFuncSetAttribute(hf_ans_count_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  smem)) != cudaSuccess ||
        (e = cudaFuncSetAttribute(hf_ans_encode_kernel,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, smem)) !=
            cudaSuccess)
        return e;
    hf_ans_count_kernel<<<(unsigned)a.g.ntiles, HF_THREADS, smem, s>>>(a);
    hf_ans_norm_kernel<<<1, 32, 0, s>>>(a);
    hf_ans_encode_kernel<<<hf_sub_grid(nsub, 1, HF_ANS_THREADS), HF_ANS_THREADS, smem, s>>>(a);
    hf_ans_choose_kernel<<<1, HF_ONE_THREADS, 0, s>>>(a);
    (void)sms;
    return cudaGetLastError();
}

cudaError_t hf_ans_launch_place(const hf_enc_args &a, int sms, cudaStream_t s)
{
    hf_ans_place_kernel<<<hf_grid(sms), HF_THREADS, 0, s>>>(a);
    return cudaGetLastError();
}

/* ---- decoder -------------------------------------------------------------------------------- */

/* Slot k of table b: the token whose range of slots holds it (a binary search of the
 * cumulative frequencies). */
__global__ void __launch_bounds__(HF_THREADS) hf_ans_slots_kernel(const hf_ans_dec d)
{
    const uint64_t total = (uint64_t)d.ntab * HF_ANS_M;
    for (uint64_t j = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; j < total;
         j += (uint64_t)gridDim.x * blockDim.x) {
        const unsigned b = (unsigned)(j / HF_ANS_M), slot = (unsigned)(j % HF_ANS_M);
        const uint32_t *fc = d.fc + (uint64_t)b * d.span;
        unsigned lo = 0, hi = d.m[b];   /* the last token whose cumulative is <= slot */
        while (hi - lo > 1) {
            const unsigned mid = (lo + hi) / 2;
            if ((fc[mid] >> 16) <= slot)
                lo = mid;
            else
                hi = mid;
        }
        /* a zero frequency shares its successor's cumulative: step past those */
        while (lo + 1 < d.m[b] && (fc[lo + 1] >> 16) <= slot)
            lo++;
        d.sym[j] = (uint16_t)lo;
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

/* A thread a sub-chunk, decode_sub of huff_ans.c: from the state at its end, each element from
 * the last to the first, the context the element after it gave. The warp's lanes go through
 * their windows together, last to first, each into its row of row_s, and the warp stores the
 * rows whole. */
__global__ void __launch_bounds__(HF_ANS_THREADS) hf_ans_decode_kernel(const hf_dec_args a,
                                                                       const hf_ans_dec d)
{
    extern __shared__ uint32_t fc_s[];
    __shared__ int32_t row_s[HF_ANS_WARPS][32][HF_ANS_WIN + 1];
    for (unsigned k = threadIdx.x; k < d.ntab * d.span; k += blockDim.x)
        fc_s[k] = d.fc[k];
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
    const uint8_t *w = a.in + L.off_stream + 2 * (mine ? d.woff[sp.s] : 0);
    uint32_t x = HF_ANS_LOW;
    hf_walk wk;
    if (!idle) {
        j -= 2;
        x = hz_get_u16(w + 2 * j) | hz_get_u16(w + 2 * j + 2) << 16;
        ok = x >= HF_ANS_LOW;
        hf_walk_at(&a.g, &wk, sp.i1 - 1);
    }
    const unsigned nwin = (unsigned)((sp.i1 - sp.i0 + HF_ANS_WIN - 1) / HF_ANS_WIN);
    unsigned nx = 0;
    for (unsigned it = 0; it < HF_ANS_WINDOWS; it++) {
        /* this lane's window: the it-th from its end */
        const bool live = it < nwin;
        const uint64_t base = sp.i0 + (uint64_t)(nwin - 1 - it) * HF_ANS_WIN;
        const unsigned cnt = live ? (unsigned)min((uint64_t)HF_ANS_WIN, sp.i1 - base) : 0u;
        for (unsigned e = cnt; e-- > 0;) {
            int32_t v = idle_delta;
            if (!idle && ok) {
                const unsigned b = hf_ans_table(hf_walk_class(&wk, L.order), nx);
                if (!d.m[b]) {
                    ok = false;
                } else {
                    const unsigned t = d.sym[(uint64_t)b * HF_ANS_M + (x & (HF_ANS_M - 1u))];
                    const uint32_t f = fc_s[b * d.span + t];
                    x = hf_ans_take(x, f & 0xFFFFu, f >> 16);
                    if (x < HF_ANS_LOW) {
                        ok = j > 0;
                        x = ok ? x << 16 | hz_get_u16(w + 2 * --j) : x;
                    }
                    ok = ok && hf_lone_valid(&L, t, has_fill);
                    v = hf_token_delta(t);
                    nx = hf_ans_context(t);
                }
                hf_walk_prev(&a.g, &wk);
            }
            row_s[warp][lane][e] = v;
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
    const unsigned smem = d.ntab * d.span * 4u;
    cudaError_t e = cudaFuncSetAttribute(hf_ans_decode_kernel,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess)
        return e;
    hf_ans_slots_kernel<<<hf_grid(sms), HF_THREADS, 0, s>>>(d);
    hf_ans_index_kernel<<<1, HF_ONE_THREADS, 0, s>>>(a, d);
    hf_ans_decode_kernel<<<hf_sub_grid(hf_ans_nsub(a.g.n), 1, HF_ANS_THREADS), HF_ANS_THREADS,
                           smem, s>>>(a, d);
    return cudaGetLastError();
}
