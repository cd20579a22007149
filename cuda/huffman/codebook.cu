/* The Huffman encoder's codebooks: which forms may win (from form 0's counts), each form's
 * length-limited canonical codebook a CTA each, and the choice of the smallest payload. */
#include "huff_device.cuh"

/* Form 0's commonest token (huff_cpu.c's rs, ties to the lowest: the largest key) and which of
 * forms 1 and 2 may win: all that the forms' token counts need, known before any codebook. */
__global__ void __launch_bounds__(HF_ONE_THREADS) hf_enc_may_win_kernel(const hf_enc_args a_)
{
    const hf_enc_args a = hf_enc_at(a_);
    hf_enc_plan *P = a.b.plan;
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
    small = dv_warp_sum(small);
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
     * ones; hf_enc_form_hist_kernel adds the rest */
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
 * candidate for hf_enc_choose_kernel. */
__global__ void __launch_bounds__(HF_ONE_THREADS) hf_enc_codebook_kernel(const hf_enc_args a_)
{
    const hf_enc_args a = hf_enc_at(a_);
    hf_enc_plan *P = a.b.plan;
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
            const unsigned c = next_s[l] + __popc(peers & dv_lanemask_lt());
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
    bits = dv_warp_sum(bits);
    if ((threadIdx.x & 31u) == 0)
        atomicAdd(&bits_s, bits);
    __syncthreads();
    const unsigned m0 = m0_s, m1 = m > 2 * R ? m - 2 * R : 0u;
    hf_enc_book *C = &P->book[form];
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
__global__ void __launch_bounds__(HF_ONE_THREADS) hf_enc_choose_kernel(const hf_enc_args a_)
{
    const hf_enc_args a = hf_enc_at(a_);
    hf_enc_plan *P = a.b.plan;
    unsigned form = HF_FORM_CODES;
    for (unsigned f = HF_FORM_RUNS; f <= HF_FORM_PAIRS; f++)
        if (P->may[f] && P->book[f].size < P->book[form].size)
            form = f;
    const hf_enc_book *C = &P->book[form];
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

cudaError_t hf_enc_launch_may_win(const hf_enc_args &a, cudaStream_t s)
{
    hf_enc_may_win_kernel<<<hf_layers(1, a), HF_ONE_THREADS, 0, s>>>(a);
    return cudaGetLastError();
}

/* The three forms' codebooks side by side (a CTA each), then the choice. */
cudaError_t hf_enc_launch_codebooks(const hf_enc_args &a, cudaStream_t s)
{
    cudaError_t e = cudaFuncSetAttribute(hf_enc_codebook_kernel,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, HF_SMEM_BOOK);
    if (e != cudaSuccess)
        return e;
    hf_enc_codebook_kernel<<<hf_layers(3, a), HF_ONE_THREADS, HF_SMEM_BOOK, s>>>(a);
    hf_enc_choose_kernel<<<hf_layers(1, a), HF_ONE_THREADS, 0, s>>>(a);
    return cudaGetLastError();
}
