/* The Huffman decoder's values: the outliers into place, then a Lorenzo payload's values from
 * its deltas by partial sums, a CTA a tile in shared memory (interp.cu reconstructs an
 * interpolated one). */
#include "huff_device.cuh"

/* Outliers into their escape markers; both lists' positions strictly increasing and inside. */
template <bool MANY>
__global__ void __launch_bounds__(HF_THREADS)
    hf_dec_lists_kernel(const __grid_constant__ hf_dec_args a_)
{
    const hf_dec_args &a = hf_dec_at<MANY>(a_);
    if (a.sc->corrupt)
        return;
    const hf_layout &L = a.L;
    const uint64_t n_out = L.n_out, n_verb = L.n_verb, items = max(n_out, n_verb);
    for (uint64_t k = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; k < items;
         k += (uint64_t)gridDim.x * blockDim.x) {
        bool bad = false;
        if (k < n_out) {
            const uint64_t pos = hz_get_u32(a.in + L.off_out_pos + 4 * k);
            const int32_t d = (int32_t)hz_get_u32(a.in + L.off_out_delta + 4 * k);
            bad = pos >= a.g.n || (k && pos <= hz_get_u32(a.in + L.off_out_pos + 4 * (k - 1))) ||
                  a.delta[pos] != HF_MARK_ESCAPE || d <= HF_MARK_ESCAPE;
            if (!bad)
                a.delta[pos] = d;
        }
        if (k < n_verb) {
            const uint64_t pos = hz_get_u32(a.in + L.off_verb_pos + 4 * k);
            bad |= pos >= a.g.n || (k && pos <= hz_get_u32(a.in + L.off_verb_pos + 4 * (k - 1)));
        }
        if (bad)
            atomicOr(&a.sc->corrupt, 1u);
    }
}

/* First verbatim index whose position is at least pos (the positions increase). */
__device__ uint64_t hf_verb_bound(const hf_dec_args &a, uint64_t pos)
{
    uint64_t lo = 0, hi = a.L.n_verb;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (hz_get_u32(a.in + a.L.off_verb_pos + 4 * mid) < pos)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* partial_sums of huff_decode_cpu.c in shared memory (wrapping uint32 sums, so the order of the
 * additions does not matter): order 1 along the tile's raster sequence, a warp a share;
 * orders 2 and 3 along x a warp a row, along y and z a thread a column. */
__device__ void hf_partial_sums(uint32_t *s, unsigned order, const hf_tile &tl)
{
    __shared__ uint32_t wtot_s[HF_WARPS];
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, tn = hf_tile_n(tl);
    const unsigned ez = tl.ez, ey = tl.ey, ex = tl.ex, plane = ey * ex;
    if (order == 1) {
        const unsigned b0 = warp * HF_SEG, b1 = min(tn, b0 + HF_SEG);
        uint32_t carry = 0;
        for (unsigned b = b0; b < b1; b += 32) {
            const unsigned e = b + lane;
            uint32_t v = dv_warp_incl(e < b1 ? s[e] : 0u) + carry;
            if (e < b1)
                s[e] = v;
            carry = __shfl_sync(FULL, v, 31);
        }
        if (lane == 0)
            wtot_s[warp] = carry;
        __syncthreads();
        uint32_t before = 0;
        for (unsigned w = 0; w < warp; w++)
            before += wtot_s[w];
        for (unsigned e = b0 + lane; before && e < b1; e += 32)
            s[e] += before;
        return;
    }
    for (unsigned r = warp; r < ez * ey; r += HF_WARPS) {
        uint32_t carry = 0;
        for (unsigned xb = 0; xb < ex; xb += 32) {
            const unsigned x = xb + lane;
            uint32_t v = dv_warp_incl(x < ex ? s[r * ex + x] : 0u) + carry;
            if (x < ex)
                s[r * ex + x] = v;
            carry = __shfl_sync(FULL, v, 31);
        }
    }
    __syncthreads();
    for (unsigned c = threadIdx.x; c < ez * ex; c += HF_THREADS) {
        const unsigned z = c / ex, base = z * plane + (c - z * ex);
        uint32_t acc = s[base];
        for (unsigned y = 1; y < ey; y++) {
            acc += s[base + y * ex];
            s[base + y * ex] = acc;
        }
    }
    if (order == 3) {
        __syncthreads();
        for (unsigned c = threadIdx.x; c < plane; c += HF_THREADS) {
            uint32_t acc = s[c];
            for (unsigned z = 1; z < ez; z++) {
                acc += s[z * plane + c];
                s[z * plane + c] = acc;
            }
        }
    }
}

/* A tile's values from its deltas: escape markers left mean a missing outlier; fill elements
 * count as 0 and come back as the fill value; verbatim values replace what was reconstructed. */
template <typename T, bool MANY>
__global__ void __launch_bounds__(HF_THREADS)
    hf_dec_tile_kernel(const __grid_constant__ hf_dec_args a_)
{
    const hf_dec_args &a = hf_dec_at<MANY>(a_);
    uint32_t *s = (uint32_t *)hf_smem;
    __shared__ uint32_t fill_s[HF_TILE_N / 32], verb_s[HF_TILE_N / 32];
    __shared__ unsigned long long vlo_s, vhi_s;
    __shared__ unsigned bad_s;
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, esize = sizeof(T);
    hf_tile tl;
    hf_tile_at(&a.g, blockIdx.x, &tl);
    const unsigned tn = hf_tile_n(tl);
    if (threadIdx.x == 0) {
        bad_s = a.sc->corrupt;
        vlo_s = hf_verb_bound(a, tl.start);
        vhi_s = hf_verb_bound(a, tl.start + tn);
    }
    for (unsigned w = threadIdx.x; w < HF_TILE_N / 32; w += HF_THREADS)
        verb_s[w] = 0;
    __syncthreads();
    if (bad_s)
        return;
    bool bad = false;
    for (unsigned b0 = warp * 32; b0 < tn; b0 += HF_THREADS * HF_BATCH) {
        int32_t d[HF_BATCH];
#pragma unroll
        for (unsigned k = 0; k < HF_BATCH; k++) {
            const unsigned e = b0 + k * HF_THREADS + lane;
            d[k] = e < tn ? a.delta[tl.start + e] : 0;
        }
#pragma unroll
        for (unsigned k = 0; k < HF_BATCH; k++) {
            const unsigned b = b0 + k * HF_THREADS, e = b + lane;
            if (b >= tn)   /* warp-uniform */
                break;
            bad |= d[k] == HF_MARK_ESCAPE;
            const bool f = e < tn && d[k] == HF_MARK_FILL;
            const unsigned fb = __ballot_sync(FULL, f);
            if (lane == 0)
                fill_s[b >> 5] = fb;
            if (e < tn)
                s[e] = f ? 0u : (uint32_t)d[k];
        }
    }
    if (bad)
        atomicOr(&a.sc->corrupt, 1u);
    __syncthreads();
    hf_partial_sums(s, a.L.order, tl);
    __syncthreads();
    /* the codes are summed: a verbatim element's slot now holds its index in the list */
    for (uint64_t k = vlo_s + threadIdx.x; k < vhi_s; k += HF_THREADS) {
        const uint64_t e = hz_get_u32(a.in + a.L.off_verb_pos + 4 * k) - tl.start;
        if (e >= tn)
            continue;   /* shared memory stays safe should positions be damaged */
        atomicOr(&verb_s[e >> 5], 1u << (e & 31u));
        s[e] = (uint32_t)k;
    }
    __syncthreads();
    T *out = (T *)a.out;
    for (unsigned e = threadIdx.x; e < tn; e += HF_THREADS) {
        unsigned z, y, x;
        hf_coords(tl, e, &z, &y, &x);
        const uint64_t i = hf_index(a.g, tl, z, y, x);
        if (verb_s[e >> 5] >> (e & 31u) & 1u) {
            const uint8_t *v = a.in + a.L.off_verb_val + (uint64_t)esize * s[e];
            dv_put_bits(out, i, esize == 4 ? hz_get_u32(v) : hz_get_u64(v));
        } else if (fill_s[e >> 5] >> (e & 31u) & 1u) {
            dv_put_bits(out, i, a.Q.fill_bits);
        } else {
            out[i] = (T)qz_reconstruct_wide(&a.Q, (double)(int32_t)s[e]);   /* rounded to T once */
        }
    }
}


cudaError_t hf_dec_launch_lists(const hf_dec_args &a, int sms, cudaStream_t s)
{
    const dim3 grid = hf_dec_layers(hf_dec_grid_each(sms, a), a);
    if (a.many)
        hf_dec_lists_kernel<true><<<grid, HF_THREADS, 0, s>>>(a);
    else
        hf_dec_lists_kernel<false><<<grid, HF_THREADS, 0, s>>>(a);
    return cudaGetLastError();
}

template <typename T, bool MANY>
static cudaError_t tiles_as(const hf_dec_args &a, cudaStream_t s)
{
    cudaError_t e = cudaFuncSetAttribute(hf_dec_tile_kernel<T, MANY>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         HF_SMEM_DTILE);
    if (e != cudaSuccess)
        return e;
    hf_dec_tile_kernel<T, MANY>
        <<<hf_dec_layers((unsigned)a.g.ntiles, a), HF_THREADS, HF_SMEM_DTILE, s>>>(a);
    return cudaGetLastError();
}

cudaError_t hf_dec_launch_tiles(const hf_dec_args &a, cudaStream_t s)
{
    if (a.Q.is_f32)
        return a.many ? tiles_as<float, true>(a, s) : tiles_as<float, false>(a, s);
    return a.many ? tiles_as<double, true>(a, s) : tiles_as<double, false>(a, s);
}
