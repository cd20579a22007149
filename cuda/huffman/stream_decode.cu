/* The Huffman decoder's bit stream: the sub-chunks' offsets, then every element's delta, a thread
 * a sub-chunk, HF_SPLIT threads a sub-chunk where the stream is neither dense nor mostly runs, or
 * a warp a sub-chunk where runs dominate. */
#include "huff_device.cuh"

/* Sub-chunk bit offsets, then the checks of hf_decode_cpu on the sub-chunk table's padding and
 * the stream's length and padding. */
template <bool MANY>
__global__ void __launch_bounds__(HF_ONE_THREADS)
    hf_dec_sub_scan_kernel(const __grid_constant__ hf_dec_args a_)
{
    const hf_dec_args &a = hf_dec_at<MANY>(a_);
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
    uint64_t o = dv_block_excl(v, &total);
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

/* decode_sub of huff_decode_cpu.c over the tokens from bit p to bit pend of a sub-chunk
 * (relative to bit0), elements i to iend: false on any inconsistency. The tokens must end
 * exactly at pend and fill exactly [i, iend), which, with every token inside both, accepts what
 * the CPU's element-driven loop accepts. */
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

/* Sub-chunks of streams of HF_DENSE bits an element or more: a thread a sub-chunk. There a warp's
 * threads all decode a token every few elements, and splitting the sub-chunks
 * (hf_dec_split_kernel), which decodes them twice, measured 10-20% slower on the Nyx-like fields.
 */
#define HF_DENSE 1u

template <bool MANY>
__global__ void __launch_bounds__(HF_SUB_THREADS)
    hf_dec_sub_kernel(const __grid_constant__ hf_dec_args a_)
{
    const hf_dec_args &a = hf_dec_at<MANY>(a_);
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

template <bool MANY>
__global__ void __launch_bounds__(HF_SPLIT_THREADS)
    hf_dec_split_kernel(const __grid_constant__ hf_dec_args a_)
{
    const hf_dec_args &a = hf_dec_at<MANY>(a_);
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
 * pairs): a thread a sub-chunk (decode_sub of huff_decode_cpu.c), a warp's threads decoding a token
 * each per step, all 32 taking part in every step until the last has finished, so that the
 * whole warp can store their runs together: a thread finishes the group it has begun and keeps
 * a run's last partial group, and the warp stores the whole groups between, 32 groups (512
 * bytes) a store, where one thread would store them one at a time while the others wait. */
template <bool MANY>
__global__ void __launch_bounds__(HF_SUB_THREADS)
    hf_dec_runs_kernel(const __grid_constant__ hf_dec_args a_)
{
    const hf_dec_args &a = hf_dec_at<MANY>(a_);
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


unsigned hf_dec_stream_kind(const hf_dec_args &a)
{
    /* by the stream's bits an element: under 1/8, runs by the warp (pairs leave none); under
     * HF_DENSE, sub-chunks split; else a thread a sub-chunk. Either way the same deltas. */
    if (a.L.form != HF_FORM_PAIRS && a.L.stream_bytes * 64 < a.g.n)
        return HF_STREAM_RUNS;
    return a.L.stream_bytes * 8 < HF_DENSE * a.g.n ? HF_STREAM_SPLIT : HF_STREAM_SUB;
}

template <bool MANY>
static cudaError_t stream_as(const hf_dec_args &a, cudaStream_t s)
{
    const unsigned kind = hf_dec_stream_kind(a);
    const bool runs = kind == HF_STREAM_RUNS, split = kind == HF_STREAM_SPLIT;
    cudaError_t e = cudaFuncSetAttribute(runs    ? hf_dec_runs_kernel<MANY>
                                         : split ? hf_dec_split_kernel<MANY>
                                                 : hf_dec_sub_kernel<MANY>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         split ? HF_SMEM_SPLIT : HF_SMEM_TABLE);
    if (e != cudaSuccess)
        return e;
    hf_dec_sub_scan_kernel<MANY><<<hf_dec_layers(1, a), HF_ONE_THREADS, 0, s>>>(a);
    if (runs)
        hf_dec_runs_kernel<MANY><<<hf_dec_layers(hf_sub_grid(a.g.nsub, 1, HF_SUB_THREADS), a),
                                   HF_SUB_THREADS, HF_SMEM_TABLE, s>>>(a);
    else if (split)
        hf_dec_split_kernel<MANY>
            <<<hf_dec_layers(hf_sub_grid(a.g.nsub, HF_SPLIT, HF_SPLIT_THREADS), a),
               HF_SPLIT_THREADS, HF_SMEM_SPLIT, s>>>(a);
    else
        hf_dec_sub_kernel<MANY><<<hf_dec_layers(hf_sub_grid(a.g.nsub, 1, HF_SUB_THREADS), a),
                                  HF_SUB_THREADS, HF_SMEM_TABLE, s>>>(a);
    return cudaGetLastError();
}

cudaError_t hf_dec_launch_stream(const hf_dec_args &a, int sms, cudaStream_t s)
{
    (void)sms;
    return a.many ? stream_as<true>(a, s) : stream_as<false>(a, s);
}
