/* The Huffman codec's ANS form on the GPU, the encoder (huff_ans.h; huff_ans.c is the
 * reference): the counts per table, the tables, every sub-chunk coded by a thread, the choice
 * against the Huffman forms by exact size and the payload's ANS sections. */
#include "ans_device.cuh"

/* An element's key into the counts at shared address h: the lanes holding lane 0's key take
 * one add (most of a warp's keys are one on smooth fields), the others one each. Lane 0 is
 * live when any lane is. */
__device__ __forceinline__ void hf_ans_tally(uint32_t h, unsigned key, bool live)
{
    const unsigned k0 = __shfl_sync(FULL, key, 0);
    const unsigned same = __ballot_sync(FULL, live && key == k0);
    dv_shared_add(h + 4u * k0, (unsigned)__popc(same), (threadIdx.x & 31u) == 0 && same);
    dv_shared_add(h + 4u * key, 1u, live && key != k0);
}

/* An element's key: its table (class c, the context of the next token nx) and its token. */
__device__ __forceinline__ unsigned hf_ans_key(unsigned c, unsigned nx, unsigned tk, unsigned span)
{
    return hf_ans_table(c, hf_ans_context(nx)) * span + tk;
}

/* A whole tile's keys and counts, four consecutive elements a thread from one 8-byte load of
 * tokens and one 8-byte store of keys, HF_ANS_BATCH loads in flight: a load an element left
 * too few bytes in flight to cover the memory's latency (the kernel took the same time at
 * every bound). Each warp takes its HF_SEG elements; the token after a lane's four is the
 * next lane's first, the next load's for lane 31, and past the warp's batch one more load.
 * The tile starts at a multiple of 4 and its elements and keys 8-byte aligned
 * (hf_ans_count_kernel checks): a sub-chunk ends only after a lane's fourth element. */
#define HF_ANS_BATCH 8
__device__ __forceinline__ void hf_ans_count_whole(const hf_enc_args &a, const hf_tile &T,
                                                   const hf_ans_cls &cls, unsigned span,
                                                   uint32_t h)
{
    const unsigned lane = threadIdx.x & 31u, e_beg = (threadIdx.x >> 5) * HF_SEG;
    const uint2 *t4 = (const uint2 *)(a.b.tok + T.start + e_beg);
    uint2 *k4 = (uint2 *)(a.b.ans_key + T.start + e_beg);
    static_assert(HF_SEG % (4 * 32 * HF_ANS_BATCH) == 0 && HF_ANS_SUB % 4 == 0,
                  "whole batches; sub-chunks end after a lane's fourth element");
    for (unsigned r = 0; r < HF_SEG / (4 * 32 * HF_ANS_BATCH); r++) {
        const unsigned g0 = 32 * HF_ANS_BATCH * r;   /* the batch's first load, in 4-groups */
        uint2 c[HF_ANS_BATCH];
#pragma unroll
        for (unsigned k = 0; k < HF_ANS_BATCH; k++)
            c[k] = t4[g0 + 32 * k + lane];
        const uint64_t past = T.start + e_beg + 4 * (g0 + 32 * HF_ANS_BATCH);
        const unsigned after = lane == 31 && past < a.g.n ? a.b.tok[past] : 0u;
#pragma unroll
        for (unsigned k = 0; k < HF_ANS_BATCH; k++) {
            const unsigned tk[4] = {c[k].x & 0xFFFFu, c[k].x >> 16, c[k].y & 0xFFFFu,
                                    c[k].y >> 16};
            const unsigned lead =
                __shfl_sync(FULL, k + 1 < HF_ANS_BATCH ? c[(k + 1) % HF_ANS_BATCH].x : 0u, 0);
            const unsigned down = __shfl_down_sync(FULL, tk[0], 1);
            const unsigned nx = lane < 31 ? down : k + 1 < HF_ANS_BATCH ? lead & 0xFFFFu : after;
            const unsigned e = e_beg + 4 * (g0 + 32 * k + lane);
            const uint64_t next = T.start + e + 4;   /* the fourth element's successor */
            const bool ends = ((uint32_t)next & (HF_ANS_SUB - 1u)) == 0 || next >= a.g.n;
            unsigned key[4];
#pragma unroll
            for (unsigned j = 0; j < 4; j++)
                key[j] = hf_ans_key(cls.of(e + j), j < 3 ? tk[(j + 1) % 4] : ends ? 0u : nx,
                                    tk[j], span);
            k4[g0 + 32 * k + lane] = make_uint2(key[0] | key[1] << 16, key[2] | key[3] << 16);
#pragma unroll
            for (unsigned j = 0; j < 4; j++)
                hf_ans_tally(h, key[j], true);
        }
    }
}

/* A CTA a run of tiles: their elements counted by (table, token) in shared memory, then added
 * to the plan's counts, and each element's key (table x 2R + token) kept for the encoder. A
 * table is the element's class and the context its successor in the tile-major order gives
 * (none past a sub-chunk's end). Whole tiles take hf_ans_count_whole; the others, and tiles
 * whose rows are not powers of two, an element a thread. */
__global__ void __launch_bounds__(HF_THREADS, 4) hf_ans_count_kernel(const hf_enc_args a_)
{
    const hf_enc_args a = hf_enc_at(a_);
    extern __shared__ uint32_t h_s[];
    const uint32_t h = (uint32_t)__cvta_generic_to_shared(h_s);
    hf_ans_plan *A = a.b.ans;
    const unsigned pred = a.b.plan->pred, span = 2 * a.R, ntab = hf_ans_tables_of(pred);
    for (unsigned k = threadIdx.x; k < ntab * span; k += blockDim.x)
        h_s[k] = 0;
    __syncthreads();
    const uint16_t *tok = a.b.tok;
    for (uint64_t t = blockIdx.x; t < a.g.ntiles; t += gridDim.x) {
        hf_tile T;
        hf_tile_at(&a.g, t, &T);
        hf_ans_cls cls;
        const bool fast = hf_ans_cls_of(pred, T, &cls);   /* CTA-uniform */
        const unsigned tn = hf_tile_n(T);
        if (fast && tn == HF_TILE_N && (T.start & 3u) == 0 &&
            (((uintptr_t)(tok + T.start) | (uintptr_t)(a.b.ans_key + T.start)) & 7u) == 0) {
            hf_ans_count_whole(a, T, cls, span, h);
            continue;
        }
        for (unsigned base = 0; base < tn; base += blockDim.x) {   /* CTA-uniform */
            const unsigned e = base + threadIdx.x;
            const bool live = e < tn;
            unsigned key = 0;
            if (live) {
                const uint64_t i = T.start + e;
                unsigned c;
                if (fast) {
                    c = cls.of(e);
                } else {
                    unsigned z, y, x;
                    hf_coords(T, e, &z, &y, &x);
                    c = hf_ans_class(pred, T.z0 + z, T.y0 + y, T.x0 + x);
                }
                const bool ends = (i + 1) % HF_ANS_SUB == 0 || i + 1 >= a.g.n;
                key = hf_ans_key(c, ends ? 0u : tok[i + 1], tok[i], span);
                a.b.ans_key[i] = (uint16_t)key;
            }
            hf_ans_tally(h, key, live);
        }
    }
    __syncthreads();
    for (unsigned k = threadIdx.x; k < ntab * span; k += blockDim.x)
        if (h_s[k])
            atomicAdd(&A->count[k / span][k % span], h_s[k]);
}

/* The lowest index of the largest value over the warp (each lane's pair, its own best). */
__device__ __forceinline__ void hf_warp_argmax(uint32_t &v, unsigned &t)
{
    for (unsigned d = 16; d > 0; d >>= 1) {
        const uint32_t ov = __shfl_xor_sync(FULL, v, d);
        const unsigned ot = __shfl_xor_sync(FULL, t, d);
        if (ov > v || (ov == v && ot < t)) {
            v = ov;
            t = ot;
        }
    }
}

/* hf_ans_normalize by a warp: the same frequencies into f (global, m tokens). */
__device__ void hf_ans_normalize_warp(const uint32_t *count, unsigned m, uint64_t total,
                                      uint32_t *f)
{
    const unsigned lane = threadIdx.x & 31u;
    unsigned long long sum = 0;
    uint32_t topv = 0;
    unsigned top = 0;
    for (unsigned t = lane; t < m; t += 32) {
        const uint32_t c = count[t];
        const uint64_t q = c ? ((uint64_t)c * HF_ANS_M + total / 2) / total : 0;
        f[t] = c ? (q ? (uint32_t)q : 1u) : 0u;
        sum += f[t];
        if (c > topv) {
            topv = c;
            top = t;
        }
    }
    hf_warp_argmax(topv, top);
    sum = dv_warp_sum(sum);
    __syncwarp();
    if (sum < HF_ANS_M && lane == 0)
        f[top] += (uint32_t)(HF_ANS_M - sum);
    while (sum > HF_ANS_M) {   /* warp-uniform */
        __syncwarp();
        uint32_t bv = 0;
        unsigned big = 0;
        for (unsigned t = lane; t < m; t += 32)
            if (f[t] > bv) {
                bv = f[t];
                big = t;
            }
        hf_warp_argmax(bv, big);
        const uint64_t take = sum - HF_ANS_M < bv / 2 ? sum - HF_ANS_M : bv / 2;
        if (lane == 0)
            f[big] = bv - (uint32_t)take;
        sum -= take;
    }
    __syncwarp();
}

/* hf_ans_table_nibbles of a stored table by a warp: a zero frequency counts its run where the
 * run starts. */
__device__ unsigned long long hf_ans_table_nibbles_warp(const uint32_t *f, unsigned m)
{
    unsigned long long k = 0;
    for (unsigned t = threadIdx.x & 31u; t < m; t += 32) {
        if (f[t]) {
            k += hf_nib_len(f[t]);
        } else if (t == 0 || f[t - 1]) {
            unsigned z = t;
            while (f[z] == 0)
                z++;   /* f[m - 1] is not zero */
            k += 1 + hf_nib_len(z - t - 1);
        }
    }
    return dv_warp_sum(k) + hf_nib_len(hf_ans_head(0, m));
}

/* The built-in tables (huff_ans_books.h). */
__device__ const uint16_t hf_book_m_d[HF_ANS_BOOKS] = HF_ANS_BOOK_M;
__device__ const uint32_t hf_book_start_d[HF_ANS_BOOKS] = HF_ANS_BOOK_START;
__device__ const uint16_t hf_book_freq_d[] = HF_ANS_BOOK_FREQ;

/* pick_book of huff_ans.c by a warp: the book that codes count[0..m-1] (m > 0) for less than
 * the stored frequencies f and their nib nibbles, or 0; the sums are whole numbers, so the
 * order of adding leaves the choice the CPU's. */
__device__ unsigned hf_ans_pick_book_warp(const uint32_t *count, unsigned m, unsigned span,
                                          const uint32_t *f, unsigned long long nib)
{
    const unsigned lane = threadIdx.x & 31u;
    unsigned long long own = 0;
    for (unsigned t = lane; t < m; t += 32)
        own += (unsigned long long)count[t] * hf_ans_cost(f[t]);
    unsigned long long best = dv_warp_sum(own) + 1024ull * nib;
    unsigned pick = 0;
    for (unsigned s = 1; s <= HF_ANS_BOOKS; s++) {
        const unsigned bm = hf_book_m_d[s - 1];
        if (bm < m || bm > span)
            continue;   /* warp-uniform */
        const uint16_t *bf = hf_book_freq_d + hf_book_start_d[s - 1];
        unsigned long long bits = 0;
        for (unsigned t = lane; t < m; t += 32)
            bits += count[t] ? (unsigned long long)count[t] * hf_ans_cost(bf[t]) : 0ull;
        bits = dv_warp_sum(bits) + 1024ull * hf_nib_len(s);
        if (bits < best) {
            best = bits;
            pick = s;
        }
    }
    return pick;
}

/* A warp a table: its tokens, frequencies (hf_ans_normalize) and nibbles, or a built-in
 * table's where one costs less, then the packed entries; thread 0 lays the tables one after
 * another. */
__global__ void __launch_bounds__(HF_ANS_TABLES * 32) hf_ans_norm_kernel(const hf_enc_args a_)
{
    const hf_enc_args a = hf_enc_at(a_);
    hf_ans_plan *A = a.b.ans;
    const unsigned ntab = hf_ans_tables_of(a.b.plan->pred), span = 2 * a.R;
    const unsigned lane = threadIdx.x & 31u, b = threadIdx.x >> 5;
    if (b < ntab) {
        unsigned m = 0;
        unsigned long long total = 0;
        for (unsigned t = lane; t < span; t += 32) {
            m = A->count[b][t] ? t + 1 : m;
            total += A->count[b][t];
        }
        m = __reduce_max_sync(FULL, m);
        total = dv_warp_sum(total);
        uint32_t *f = A->fc[b];
        if (m)
            hf_ans_normalize_warp(A->count[b], m, total, f);
        unsigned long long nib = hf_ans_table_nibbles_warp(f, m);
        __syncwarp();
        const unsigned book = m ? hf_ans_pick_book_warp(A->count[b], m, span, f, nib) : 0u;
        if (book) {   /* warp-uniform */
            const uint16_t *bf = hf_book_freq_d + hf_book_start_d[book - 1];
            m = hf_book_m_d[book - 1];
            for (unsigned t = lane; t < m; t += 32)
                f[t] = bf[t];
            nib = hf_nib_len(book);
            __syncwarp();
        }
        uint32_t run = 0;   /* cumulative frequencies, 32 tokens a round */
        for (unsigned t0 = 0; t0 < m; t0 += 32) {
            const unsigned t = t0 + lane;
            const uint32_t ft = t < m ? f[t] : 0u, inc = dv_warp_incl(ft);
            if (t < m)
                f[t] = ft | (run + inc - ft) << 16;
            run += __shfl_sync(FULL, inc, 31);
        }
        if (lane == 0) {
            A->m[b] = m;
            A->book[b] = book;
            A->nib[b] = nib;
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
                                                   uint32_t *fc_s, uint32_t *rcp_s)
{
    for (unsigned b = 0; b < A->ntab; b++)
        for (unsigned t = threadIdx.x; t < span; t += blockDim.x) {
            const uint32_t en = t < A->m[b] ? A->fc[b][t] : 0u, f = en & 0xFFFFu;
            fc_s[b * span + t] = en;
            rcp_s[b * span + t] = f ? 0xFFFFFFFFu / f : 0u;
        }
    __syncthreads();
}

/* hf_ans_code with the quotient from rcp = floor((2^32 - 1) / f): umulhi(x, rcp) is
 * floor(x / f) or one less (x < 2^32), so one correction makes it exact, and the division
 * leaves the chain of dependent steps a sub-chunk's coding is. */
__device__ __forceinline__ uint32_t hf_ans_code_rcp(uint32_t x, uint32_t f, uint32_t c,
                                                    uint32_t rcp)
{
    uint32_t q = __umulhi(x, rcp), r = x - q * f;
    if (r >= f) {
        q++;
        r -= f;
    }
    return (q << HF_ANS_BITS) + r + c;
}

/* A thread's words into its scratch row, eight at a time (one 16-byte store): each word enters
 * the top of a 128-bit register window that moves down 16 bits, so the step that puts one is
 * four funnel shifts whatever its place in the eight. */
struct hf_ans_out {
    uint4 *row;
    uint32_t w0, w1, w2, w3;   /* the window, w0 at the lowest address */
    unsigned k;                /* words put */
    __device__ __forceinline__ void shift_in(uint32_t v)
    {
        w0 = __funnelshift_r(w0, w1, 16);
        w1 = __funnelshift_r(w1, w2, 16);
        w2 = __funnelshift_r(w2, w3, 16);
        w3 = __funnelshift_r(w3, v, 16);
    }
    __device__ __forceinline__ void put(uint32_t v)
    {
        shift_in(v);
        if ((++k & 7u) == 0)
            row[k / 8 - 1] = make_uint4(w0, w1, w2, w3);
    }
    __device__ __forceinline__ void flush()   /* the last k mod 8 words down to the row's start */
    {
        if ((k & 7u) == 0)
            return;
        for (unsigned j = k & 7u; j < 8; j++)
            shift_in(0);
        row[k / 8] = make_uint4(w0, w1, w2, w3);
    }
};

/* Token j (0..9) of the ten in three 32-bit words' worth of two loads. */
__device__ __forceinline__ unsigned hf_tok_of(const uint4 &c, const uint4 &n, unsigned j)
{
    const uint32_t w = j < 2 ? c.x : j < 4 ? c.y : j < 6 ? c.z : j < 8 ? c.w : n.x;
    return w >> (16 * (j & 1u)) & 0xFFFFu;
}

/* Whether the cnt tokens of a sub-chunk (16-byte aligned, readable 8 past) are all rs. */
__device__ __forceinline__ bool hf_ans_idle(const uint4 *tv, unsigned cnt, unsigned rs)
{
    const uint32_t rs2 = rs * 0x10001u;
    for (unsigned q = 0; 8 * q < cnt; q++) {
        const uint4 v = tv[q];
        const uint4 c = make_uint4(__vcmpeq2(v.x, rs2), __vcmpeq2(v.y, rs2),
                                   __vcmpeq2(v.z, rs2), __vcmpeq2(v.w, rs2));
        if ((c.x & c.y & c.z & c.w) == FULL)
            continue;
        const unsigned valid = min(8u, cnt - 8 * q);   /* 8 but in a chunk's last sub-chunk */
#pragma unroll
        for (unsigned j = 0; j < 8; j++)
            if (j < valid && !(hf_tok_of(c, c, j) & 1u))
                return false;
    }
    return true;
}

/* A thread a sub-chunk, as encode_task of huff_ans.c: a sub-chunk of the run token alone has no
 * words; else its elements onto the state first to last, then the state. Each element's
 * table entry comes with its key from the counts, eight at a time two loads ahead, so a step is
 * the state's own chain: a sub-chunk is a serial run of 4096 steps, and on a chunk of a few
 * MiB (a few dozen sub-chunks) its length is the encoder's time. Words leave eight at a
 * time. */
__global__ void __launch_bounds__(HF_ANS_THREADS) hf_ans_encode_kernel(const hf_enc_args a_)
{
    const hf_enc_args a = hf_enc_at(a_);
    extern __shared__ uint32_t fc_s[];
    const hf_ans_plan *A = a.b.ans;
    const hf_enc_plan *P = a.b.plan;
    const unsigned span = 2 * a.R;
    uint32_t *rcp_s = fc_s + A->ntab * span;
    hf_ans_load_tables(A, span, fc_s, rcp_s);
    const uint64_t s = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    if (s >= hf_ans_nsub(a.g.n))
        return;
    const uint64_t i0 = s * HF_ANS_SUB;
    const unsigned cnt = (unsigned)min((uint64_t)HF_ANS_SUB, a.g.n - i0);
    if (hf_ans_idle((const uint4 *)(a.b.tok + i0), cnt, P->rs)) {   /* tok: 8 past n */
        a.b.ans_nwords[s] = 0;
        return;
    }
    hf_ans_out out = {(uint4 *)(a.b.ans_words + s * HF_ANS_SCRATCH), 0, 0, 0, 0, 0};
    uint32_t x = HF_ANS_LOW;
    const uint4 *kv = (const uint4 *)(a.b.ans_key + i0);   /* readable 8 past n */
    uint4 cur = kv[0], nxt = 8 < cnt ? kv[1] : make_uint4(0, 0, 0, 0);
    for (unsigned q = 0; 8 * q < cnt; q++) {   /* keys two loads ahead */
        const uint4 after = 8 * (q + 2) < cnt ? kv[q + 2] : make_uint4(0, 0, 0, 0);
        uint32_t en[8], rcp[8];
#pragma unroll
        for (unsigned j = 0; j < 8; j++) {
            const unsigned k = 8 * q + j < cnt ? hf_tok_of(cur, cur, j) : 0u;   /* n: past */
            en[j] = fc_s[k];
            rcp[j] = rcp_s[k];
        }
#pragma unroll
        for (unsigned j = 0; j < 8; j++) {
            if (8 * q + j >= cnt)
                break;
            const uint32_t f = en[j] & 0xFFFFu;
            if (hf_ans_full(x, f)) {
                out.put(x);
                x >>= 16;
            }
            x = hf_ans_code_rcp(x, f, en[j] >> 16, rcp[j]);
        }
        cur = nxt;
        nxt = after;
    }
    out.put(x);
    out.put(x >> 16);
    out.flush();
    a.b.ans_nwords[s] = out.k;
}

/* One CTA: each sub-chunk's first word and its place among the busy ones (exclusive sums),
 * the ANS payload's size, and the choice: the ANS form when strictly smaller than the Huffman
 * form hf_enc_choose_kernel kept. A warp takes a run of whole groups, a group's 64 word counts
 * two a lane, so that its loads and stores are coalesced (a thread a run of groups stored its
 * offsets 64 entries apart from its neighbours'). */
__global__ void __launch_bounds__(HF_ONE_THREADS) hf_ans_choose_kernel(const hf_enc_args a_)
{
    const hf_enc_args a = hf_enc_at(a_);
    hf_ans_plan *A = a.b.ans;
    hf_enc_plan *P = a.b.plan;
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    const uint64_t nsub = hf_ans_nsub(a.g.n), groups = hf_ans_groups(nsub);
    const uint64_t gseg = (groups + nwarps - 1) / nwarps;
    const uint64_t g0 = min(groups, warp * gseg), g1 = min(groups, g0 + gseg);
    static_assert(HF_ANS_GROUP == 64, "a group's counts are two a lane");
    auto counts = [&](uint64_t g, uint32_t nw[2]) {   /* sub-chunks g 64 + 32 k + lane */
        for (unsigned k = 0; k < 2; k++) {
            const uint64_t s = g * HF_ANS_GROUP + 32 * k + lane;
            nw[k] = s < nsub ? a.b.ans_nwords[s] : 0u;
        }
    };
    uint64_t words = 0, busy = 0, marked = 0, wtot, btot, gtot;
    uint32_t most = 0;
    for (uint64_t g = g0; g < g1; g++) {
        uint32_t nw[2];
        counts(g, nw);
        words += nw[0] + nw[1];
        busy += (nw[0] != 0) + (nw[1] != 0);
        most = max(most, max(nw[0], nw[1]));
        marked += __any_sync(FULL, nw[0] | nw[1]) && lane == 0;
    }
    const unsigned count_bytes = hf_ans_count_bytes(__syncthreads_or(most > 255u) ? 256u : 0u);
    /* the warps' runs in order: each warp's sums at its lane 0, their exclusive prefix */
    words = dv_warp_sum(words);
    busy = dv_warp_sum(busy);
    uint64_t wrun = __shfl_sync(FULL, dv_block_excl(lane == 0 ? words : 0, &wtot), 0);
    uint64_t brun = __shfl_sync(FULL, dv_block_excl(lane == 0 ? busy : 0, &btot), 0);
    uint64_t grun = __shfl_sync(FULL, dv_block_excl(marked, &gtot), 0);
    const unsigned below = (1u << lane) - 1u;
    for (uint64_t g = g0; g < g1; g++) {
        uint32_t nw[2];
        counts(g, nw);
        if (lane == 0)
            a.b.ans_gidx[g] = (uint32_t)grun;
        grun += __any_sync(FULL, nw[0] | nw[1]);
        for (unsigned k = 0; k < 2; k++) {
            const uint64_t s = g * HF_ANS_GROUP + 32 * k + lane;
            const uint32_t incl = dv_warp_incl(nw[k]), on = __ballot_sync(FULL, nw[k] != 0);
            if (s < nsub) {
                a.b.ans_woff[s] = wrun + (incl - nw[k]);
                a.b.ans_bidx[s] = (uint32_t)(brun + __popc(on & below));
            }
            wrun += __shfl_sync(FULL, incl, 31);
            brun += __popc(on);
        }
    }
    if (threadIdx.x == 0) {
        const unsigned esize = a.Q.is_f32 ? 4u : 8u;
        A->words = wtot;
        A->busy = btot;
        A->busy_groups = gtot;
        A->count_bytes = count_bytes;
        const uint64_t size = HF_ANS_OFF_TABLES + hf_pad4((A->nibbles + 1) / 2) +
                              hf_ans_index_bytes(nsub, gtot, btot, count_bytes) +
                              hf_pad4(2 * wtot) + 8 * P->n_out + (4 + esize) * P->n_verb;
        if (size < P->size) {
            P->form = HF_FORM_ANS;
            P->size = size;
            P->too_small = size > a.b.cap;
            a.sc->bytes_total = size;
        }
    }
}

/* Number v's nibbles (hf_nib_put) or-ed into the zeroed bytes p from nibble k on, a 32-bit
 * atomic each: a neighbouring thread's nibbles may share the word. Returns the nibbles. */
__device__ unsigned hf_nib_or(uint8_t *p, uint64_t k, uint32_t v)
{
    unsigned n = 0;
    for (;;) {
        const unsigned nib = (v & 7u) | (v >= 8u ? 8u : 0u);
        const uintptr_t at = (uintptr_t)(p + (k + n) / 2);
        atomicOr((unsigned *)(at & ~(uintptr_t)3),
                 nib << (8 * (unsigned)(at & 3u) + 4 * (unsigned)((k + n) & 1u)));
        n++;
        if (v < 8u)
            return n;
        v >>= 3;
    }
}

/* A CTA a table: its nibbles (hf_ans_table_put) after the tables before it, the head number,
 * then for a stored table each thread a run of tokens at the place the CTA's scan of their
 * nibble counts gives; a run of zero frequencies is written where it starts. */
__global__ void __launch_bounds__(HF_THREADS) hf_ans_tables_kernel(const hf_enc_args a_)
{
    const hf_enc_args a = hf_enc_at(a_);
    const hf_enc_plan *P = a.b.plan;
    const hf_ans_plan *A = a.b.ans;
    const unsigned b = blockIdx.x;
    if (P->too_small || P->form != HF_FORM_ANS || b >= A->ntab)
        return;   /* CTA-uniform */
    uint8_t *p = a.b.dst + HF_ANS_OFF_TABLES;
    uint64_t k = 0;
    for (unsigned c = 0; c < b; c++)
        k += A->nib[c];
    const unsigned m = A->m[b], book = A->book[b];
    const uint32_t *fc = A->fc[b];
    if (threadIdx.x == 0)
        hf_nib_or(p, k, hf_ans_head(book, m));
    if (book)
        return;   /* CTA-uniform */
    k += hf_nib_len(hf_ans_head(0, m));
    auto freq = [&](unsigned t) { return fc[t] & 0xFFFFu; };
    auto zeros_after = [&](unsigned t) {   /* zero frequencies after t's (f[m - 1] is not 0) */
        unsigned z = t + 1;
        while (freq(z) == 0)
            z++;
        return z - t - 1;
    };
    const unsigned per = (m + blockDim.x - 1) / blockDim.x;
    const unsigned t0 = min(m, threadIdx.x * per), t1 = min(m, t0 + per);
    uint64_t mine = 0, total;
    for (unsigned t = t0; t < t1; t++) {
        if (freq(t))
            mine += hf_nib_len(freq(t));
        else if (t == 0 || freq(t - 1))
            mine += 1 + hf_nib_len(zeros_after(t));
    }
    k += dv_block_excl(mine, &total);
    for (unsigned t = t0; t < t1; t++) {
        if (freq(t)) {
            k += hf_nib_or(p, k, freq(t));
        } else if (t == 0 || freq(t - 1)) {
            k += hf_nib_or(p, k, 0);
            k += hf_nib_or(p, k, zeros_after(t));
        }
    }
}

/* The ANS sections of the zeroed payload (when chosen) but the tables: the count of busy
 * sub-chunks, the bitmap and word counts, then each sub-chunk's words a warp each. */
__global__ void __launch_bounds__(HF_THREADS) hf_ans_place_kernel(const hf_enc_args a_)
{
    const hf_enc_args a = hf_enc_at(a_);
    const hf_enc_plan *P = a.b.plan;
    const hf_ans_plan *A = a.b.ans;
    if (P->too_small || P->form != HF_FORM_ANS)
        return;
    uint8_t *dst = a.b.dst;
    const uint64_t nsub = hf_ans_nsub(a.g.n);
    const uint64_t off_bitmap = HF_ANS_OFF_TABLES + hf_pad4((A->nibbles + 1) / 2);
    const uint64_t off_masks = off_bitmap + hf_pad4((hf_ans_groups(nsub) + 7) / 8);
    const uint64_t off_counts = off_masks + 8 * A->busy_groups;
    const uint64_t off_stream =
        off_bitmap + hf_ans_index_bytes(nsub, A->busy_groups, A->busy, A->count_bytes);
    const uint64_t gt = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    if (gt == 0)
        hz_put_u32(dst + HF_ANS_OFF_BUSY, (uint32_t)A->busy);
    for (uint64_t s = gt; s < nsub; s += (uint64_t)gridDim.x * blockDim.x) {
        const uint32_t nw = a.b.ans_nwords[s];
        if (!nw)
            continue;
        const uint64_t g = s / HF_ANS_GROUP, j = s % HF_ANS_GROUP;
        atomicOr((unsigned *)(dst + off_bitmap) + g / 32, 1u << (g % 32));
        atomicOr((unsigned *)(dst + off_masks + 8 * (uint64_t)a.b.ans_gidx[g]) + j / 32,
                 1u << (j % 32));
        hf_ans_put_count(dst + off_counts, a.b.ans_bidx[s], A->count_bytes, nw);
    }
    /* the stream starts 4-aligned: its words are whole 16-bit stores */
    uint16_t *stream = (uint16_t *)(dst + off_stream);
    const unsigned lane = threadIdx.x & 31u;
    const uint64_t warps = (uint64_t)gridDim.x * blockDim.x / 32;
    for (uint64_t s = gt / 32; s < nsub; s += warps) {
        const uint32_t nw = a.b.ans_nwords[s];
        const uint16_t *w = a.b.ans_words + s * HF_ANS_SCRATCH;
        uint16_t *o = stream + a.b.ans_woff[s];
        for (uint32_t k = lane; k < nw; k += 32)
            o[k] = w[k];
    }
}

cudaError_t hf_ans_launch_code(const hf_enc_args &a, int sms, cudaStream_t s)
{
    const unsigned smem = hf_ans_smem(a.R), enc_smem = hf_ans_enc_smem(a.R);
    const uint64_t nsub = hf_ans_nsub(a.g.n);
    cudaError_t e;
    if ((e = cudaFuncSetAttribute(hf_ans_count_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  HF_ANS_SMEM_MAX)) != cudaSuccess ||
        (e = cudaFuncSetAttribute(hf_ans_encode_kernel,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  HF_ANS_SMEM_MAX)) != cudaSuccess)
        return e;
    /* a few CTAs a multiprocessor, each clearing and adding its counts once */
    const unsigned count_grid =
        a.g.ntiles < hf_grid_each(sms, a) ? (unsigned)a.g.ntiles : hf_grid_each(sms, a);
    hf_ans_count_kernel<<<hf_layers(count_grid, a), HF_THREADS, smem, s>>>(a);
    hf_ans_norm_kernel<<<hf_layers(1, a), HF_ANS_TABLES * 32, 0, s>>>(a);
    hf_ans_encode_kernel<<<hf_layers(hf_sub_grid(nsub, 1, HF_ANS_THREADS), a), HF_ANS_THREADS,
                           enc_smem, s>>>(a);
    return cudaGetLastError();
}

cudaError_t hf_ans_launch_choose(const hf_enc_args &a, cudaStream_t s)
{
    hf_ans_choose_kernel<<<hf_layers(1, a), HF_ONE_THREADS, 0, s>>>(a);
    return cudaGetLastError();
}

cudaError_t hf_ans_launch_place(const hf_enc_args &a, int sms, cudaStream_t s)
{
    hf_ans_tables_kernel<<<hf_layers(HF_ANS_TABLES, a), HF_THREADS, 0, s>>>(a);
    hf_ans_place_kernel<<<hf_layers(hf_grid_each(sms, a), a), HF_THREADS, 0, s>>>(a);
    return cudaGetLastError();
}

