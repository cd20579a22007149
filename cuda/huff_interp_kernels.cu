/* The Huffman codec's interpolation predictor on the GPU (huff_interp.h): the passes of
 * huff_interp.c, the same inline arithmetic, so deltas and values match the CPU's bit for bit.
 * The coarse levels, a few thousand elements each, run in one CTA with a barrier between
 * passes; every finer pass but level 1's is a kernel over its elements, a thread an element;
 * level 1's three passes are one kernel (ip_level1_kernel). */
#include "kernels.h"

#define IP_THREADS 256
#define IP_COARSE_THREADS 1024
#define IP_COARSE_MAX 8192u      /* passes up to this many elements share the one-CTA kernel */

/* Chunks the Huffman codec writes hold fewer than 2^32 elements, so every coordinate, raster
 * index and tile-major position below is 32-bit: half the instructions of 64-bit ones. */
struct ip_args {
    hf_geom g;
    fl_quant Q;
    const void *in;
    int32_t *u;                  /* reconstructed codes, chunk raster order */
    int32_t *delta;              /* tile-major */
    const int32_t *lcode;        /* encoder: dual quantisation's codes and markers */
    hzc_huff_plan *plan;         /* encoder */
    void *out;                   /* decoder */
    hzc_scalars *sc;             /* decoder */
    uint32_t n[3], t[3];         /* the folded chunk's and the tile's edges (z, y, x) */
    unsigned tshift[3];          /* log2 of the tile's edges (they are powers of two) */
};

/* One pass in 32 bits, with its axis' length and stride picked out. */
struct ip_pass32 {
    uint32_t first[3], step[3], n1, n2, h, na, s;
};

__device__ __forceinline__ ip_pass32 ip_pass_get(const ip_args &a, unsigned p, uint64_t *npts)
{
    hf_ip_pass P;
    hf_ip_pass_at(&a.g, p, &P);
    ip_pass32 q;
    for (int b = 0; b < 3; b++) {
        q.first[b] = (uint32_t)P.first[b];
        q.step[b] = (uint32_t)P.step[b];
    }
    q.n1 = (uint32_t)P.cnt[1];
    q.n2 = (uint32_t)P.cnt[2];
    q.h = (uint32_t)P.h;
    q.na = a.n[P.axis];
    q.s = q.h * (P.axis == 0 ? a.n[1] * a.n[2] : (P.axis == 1 ? a.n[2] : 1u));
    *npts = P.npts;
    return q;
}

/* hf_tile_pos with shifts for the tile edges. */
__device__ __forceinline__ uint32_t ip_pos(const ip_args &a, uint32_t z, uint32_t y, uint32_t x)
{
    const uint32_t z0 = z >> a.tshift[0] << a.tshift[0], y0 = y >> a.tshift[1] << a.tshift[1];
    const uint32_t x0 = x >> a.tshift[2] << a.tshift[2];
    const uint32_t ez = min(a.t[0], a.n[0] - z0), ey = min(a.t[1], a.n[1] - y0);
    const uint32_t ex = min(a.t[2], a.n[2] - x0);
    return z0 * a.n[1] * a.n[2] + ez * y0 * a.n[2] + ez * ey * x0 +
           ((z - z0) * ey + (y - y0)) * ex + (x - x0);
}

/* The prediction of the element at coordinate ca along the pass's axis, raster index i. */
__device__ __forceinline__ int32_t ip_predict(const ip_args &a, const ip_pass32 &q, uint32_t ca,
                                              uint32_t i)
{
    const unsigned reach = hf_ip_reach(ca, q.h, q.na);
    const int32_t *u = a.u;
    const uint32_t s = q.s;
    return hf_ip_predict(reach, reach & HF_IP_M3 ? u[i - 3 * s] : 0, u[i - s],
                         reach & HF_IP_P1 ? u[i + s] : 0, reach & HF_IP_P3 ? u[i + 3 * s] : 0);
}

/* The code of the element at c (raster index i) against pred: encoding quantises its value
 * (code_element of huff_interp.c), decoding adds its delta (decode_element). With `own` the
 * element's outputs too: its delta or marker for the token kernel and its cost (encoding), its
 * value (decoding); without, the code alone, for a neighbour another CTA owns. */
template <typename T, bool ENCODE>
__device__ __forceinline__ int32_t ip_code(const ip_args &a, const uint32_t c[3], uint32_t i,
                                           int32_t pred, bool own, unsigned *cost)
{
    if (ENCODE) {
        const T v = ((const T *)a.in)[i];
        int32_t k = 0, u = pred, mark;
        if (fl_is_fill(&a.Q, hf_bits(v)))
            mark = HZC_CODE_FILL;
        else if (hf_ip_quantize(&a.Q, (double)v, pred, &k, &u))
            mark = k;
        else
            mark = HZC_CODE_VERBATIM;
        if (!own)
            return u;
        const uint32_t pos = ip_pos(a, c[0], c[1], c[2]);
        a.delta[pos] = mark;
        *cost += 32u - __clz(hf_zigzag32(k));
        if (mark == HZC_CODE_VERBATIM) {   /* rare: dual quantisation's kind only then */
            const int32_t lc = a.lcode[pos];
            *cost += lc != HZC_CODE_FILL && lc != HZC_CODE_VERBATIM ? (sizeof(T) == 4 ? 64u : 96u)
                                                                     : 0u;
        }
        return u;
    }
    const int32_t d = a.delta[ip_pos(a, c[0], c[1], c[2])];
    const bool fill = d == HF_MARK_FILL;
    int64_t u = fill ? pred : pred + (int64_t)d * (1 << HF_IP_FRAC);
    if (d == HF_MARK_ESCAPE || u > HF_IP_UMAX || u < -HF_IP_UMAX) {
        atomicOr(&a.sc->corrupt, 1u);
        u = pred;
    }
    if (!own)
        return (int32_t)u;
    T *out = (T *)a.out;
    if (fill)
        hf_put_bits(out, i, a.Q.fill_bits);
    else
        out[i] = (T)fl_reconstruct_at(&a.Q, hf_ip_steps(u));
    return (int32_t)u;
}

/* Whether this encoding tries interpolation (huff_cpu.c's rule, from the Lorenzo costs). */
__device__ __forceinline__ bool ip_tried(const ip_args &a)
{
    const hzc_huff_plan *P = a.plan;
    return hf_ip_worth_trying(P->cost[hf_best_order(P->cost, a.g.dim)], a.g.n);
}

/* Passes p0..p1-1 of np, the chunk's first element before them when p0 is 0. With more than one
 * pass the grid must be one CTA: its barrier orders the passes. Damaged deltas decode to
 * clamped codes and a flag, so the decoder runs to the end either way. */
template <typename T, bool ENCODE>
__global__ void __launch_bounds__(IP_COARSE_THREADS) ip_pass_kernel(const ip_args a, unsigned p0,
                                                                     unsigned p1, unsigned np)
{
    unsigned cost = 0;
    if (ENCODE && !ip_tried(a))
        return;   /* grid-uniform: the costs are final */
    if (p0 == 0 && blockIdx.x == 0 && threadIdx.x == 0) {
        const uint32_t root[3] = {0, 0, 0};
        a.u[0] = ip_code<T, ENCODE>(a, root, 0, 0, true, &cost);
    }
    for (unsigned p = p0; p < p1; p++) {
        if (gridDim.x == 1)
            __syncthreads();   /* the one-CTA kernel: the pass before is complete */
        uint64_t npts;
        const ip_pass32 q = ip_pass_get(a, p, &npts);
        const unsigned ax = p % 3u;
        const bool keep = p + 1 < np;   /* no pass reads the last pass's codes */
        /* a flat index over the pass's elements: every thread busy whatever the row length */
        for (uint64_t j = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; j < npts;
             j += (uint64_t)gridDim.x * blockDim.x) {
            const uint32_t jj = (uint32_t)j, r = jj / q.n2, ix = jj - r * q.n2;
            const uint32_t iz = r / q.n1, iy = r - iz * q.n1;
            const uint32_t c[3] = {q.first[0] + iz * q.step[0], q.first[1] + iy * q.step[1],
                                   q.first[2] + ix * q.step[2]};
            const uint32_t i = (c[0] * a.n[1] + c[1]) * a.n[2] + c[2];
            const int32_t pred = ip_predict(a, q, ax == 0 ? c[0] : (ax == 1 ? c[1] : c[2]), i);
            const int32_t u = ip_code<T, ENCODE>(a, c, i, pred, true, &cost);
            if (keep)
                a.u[i] = u;
        }
    }
    if (ENCODE) {
        const unsigned long long w = __reduce_add_sync(FULL, cost);
        if ((threadIdx.x & 31u) == 0 && w)
            atomicAdd(&a.plan->cost_ip, w);
    }
}

/* Level 1, the last three passes and 7/8 of the elements, fused: a CTA a region of the chunk
 * keeps the codes its passes need in shared memory instead of writing and re-reading them. The
 * y and x passes read neighbours up to 3 away, so the CTA also computes (and does not own) the
 * z and y passes' codes in a margin of 2 below and 3 above its region along y and x; the z pass
 * reads level 2's codes from global memory. The arithmetic is the passes', so are the bytes. */
#define IP_L1_THREADS 256

/* The region's edges by dimensionality (even, so the parities line up). */
static dim3 ip_region(unsigned dim)
{
    return dim == 3 ? dim3(64, 16, 4) : (dim == 2 ? dim3(128, 32, 1) : dim3(4096, 1, 1));
}

/* Coordinates of a set's element j: along each axis z, y, x, f + s * index, n of them. */
struct ip_set {
    uint32_t f[3], s[3], n[3];
};

__device__ __forceinline__ uint32_t ip_first(uint32_t lo, uint32_t parity)
{
    return (lo & 1u) == parity ? lo : lo + 1u;
}

__device__ __forceinline__ uint32_t ip_count(uint32_t first, uint32_t step, uint32_t end)
{
    return end > first ? (end - first - 1u) / step + 1u : 0u;
}

__device__ __forceinline__ void ip_axis(ip_set &S, int b, uint32_t lo, uint32_t end, int parity)
{
    S.f[b] = parity < 0 ? lo : ip_first(lo, (uint32_t)parity);
    S.s[b] = parity < 0 ? 1u : 2u;
    S.n[b] = ip_count(S.f[b], S.s[b], end);
}

__device__ __forceinline__ void ip_at(const ip_set &S, uint32_t j, uint32_t c[3])
{
    const uint32_t r = j / S.n[2], ix = j - r * S.n[2], iz = r / S.n[1], iy = r - iz * S.n[1];
    c[0] = S.f[0] + iz * S.s[0];
    c[1] = S.f[1] + iy * S.s[1];
    c[2] = S.f[2] + ix * S.s[2];
}

template <typename T, bool ENCODE>
__global__ void __launch_bounds__(IP_L1_THREADS) ip_level1_kernel(const ip_args a, dim3 R)
{
    extern __shared__ int32_t box_s[];
    if (ENCODE && !ip_tried(a))
        return;   /* grid-uniform: the costs are final */
    const uint32_t nz = a.n[0], ny = a.n[1], nx = a.n[2];
    const uint32_t gy = (ny + R.y - 1) / R.y, gx = (nx + R.x - 1) / R.x;
    const uint32_t rx = blockIdx.x % gx, ry = blockIdx.x / gx % gy, rz = blockIdx.x / gx / gy;
    const uint32_t z0 = rz * R.z, z1 = min(z0 + R.z, nz), y0 = ry * R.y, y1 = min(y0 + R.y, ny);
    const uint32_t x0 = rx * R.x, x1 = min(x0 + R.x, nx);
    /* the box: z as the region, y and x with the margin */
    const uint32_t by0 = y0 >= 2 ? y0 - 2 : 0, by1 = min(y1 + 3, ny);
    const uint32_t bx0 = x0 >= 2 ? x0 - 2 : 0, bx1 = min(x1 + 3, nx);
    const uint32_t BY = by1 - by0, BX = bx1 - bx0, plane = ny * nx;
#define IP_BOX(c) ((((c)[0] - z0) * BY + ((c)[1] - by0)) * BX + ((c)[2] - bx0))
    ip_set S;
    uint32_t c[3];
    unsigned cost = 0;
    /* level 2's codes: every coordinate even */
    ip_axis(S, 0, z0, z1, 0), ip_axis(S, 1, by0, by1, 0), ip_axis(S, 2, bx0, bx1, 0);
    for (uint32_t j = threadIdx.x; j < S.n[0] * S.n[1] * S.n[2]; j += blockDim.x) {
        ip_at(S, j, c);
        box_s[IP_BOX(c)] = a.u[c[0] * plane + c[1] * nx + c[2]];
    }
    __syncthreads();
    /* pass z: z odd, y and x even, neighbours from level 2 in global memory */
    ip_axis(S, 0, z0, z1, 1), ip_axis(S, 1, by0, by1, 0), ip_axis(S, 2, bx0, bx1, 0);
    for (uint32_t j = threadIdx.x; j < S.n[0] * S.n[1] * S.n[2]; j += blockDim.x) {
        ip_at(S, j, c);
        const uint32_t i = c[0] * plane + c[1] * nx + c[2];
        const unsigned reach = hf_ip_reach(c[0], 1, nz);
        const int32_t pred = hf_ip_predict(reach, reach & HF_IP_M3 ? a.u[i - 3 * plane] : 0,
                                           a.u[i - plane], reach & HF_IP_P1 ? a.u[i + plane] : 0,
                                           reach & HF_IP_P3 ? a.u[i + 3 * plane] : 0);
        const bool own = c[1] >= y0 && c[1] < y1 && c[2] >= x0 && c[2] < x1;
        box_s[IP_BOX(c)] = ip_code<T, ENCODE>(a, c, i, pred, own, &cost);
    }
    __syncthreads();
    /* pass y: y odd inside the region, x even in the box */
    ip_axis(S, 0, z0, z1, -1), ip_axis(S, 1, y0, y1, 1), ip_axis(S, 2, bx0, bx1, 0);
    for (uint32_t j = threadIdx.x; j < S.n[0] * S.n[1] * S.n[2]; j += blockDim.x) {
        ip_at(S, j, c);
        const uint32_t b = IP_BOX(c), i = c[0] * plane + c[1] * nx + c[2];
        const unsigned reach = hf_ip_reach(c[1], 1, ny);
        const int32_t pred = hf_ip_predict(reach, reach & HF_IP_M3 ? box_s[b - 3 * BX] : 0,
                                           box_s[b - BX], reach & HF_IP_P1 ? box_s[b + BX] : 0,
                                           reach & HF_IP_P3 ? box_s[b + 3 * BX] : 0);
        const bool own = c[2] >= x0 && c[2] < x1;
        box_s[b] = ip_code<T, ENCODE>(a, c, i, pred, own, &cost);
    }
    __syncthreads();
    /* pass x: x odd inside the region; nothing reads these codes */
    ip_axis(S, 0, z0, z1, -1), ip_axis(S, 1, y0, y1, -1), ip_axis(S, 2, x0, x1, 1);
    for (uint32_t j = threadIdx.x; j < S.n[0] * S.n[1] * S.n[2]; j += blockDim.x) {
        ip_at(S, j, c);
        const uint32_t b = IP_BOX(c), i = c[0] * plane + c[1] * nx + c[2];
        const unsigned reach = hf_ip_reach(c[2], 1, nx);
        const int32_t pred = hf_ip_predict(reach, reach & HF_IP_M3 ? box_s[b - 3] : 0,
                                           box_s[b - 1], reach & HF_IP_P1 ? box_s[b + 1] : 0,
                                           reach & HF_IP_P3 ? box_s[b + 3] : 0);
        ip_code<T, ENCODE>(a, c, i, pred, true, &cost);
    }
#undef IP_BOX
    if (ENCODE) {
        const unsigned long long w = __reduce_add_sync(FULL, cost);
        if ((threadIdx.x & 31u) == 0 && w)
            atomicAdd(&a.plan->cost_ip, w);
    }
}

/* The predictor: interpolation when tried and cheaper enough than the best Lorenzo order. */
__global__ void ip_pick_kernel(const ip_args a)
{
    hzc_huff_plan *P = a.plan;
    const unsigned order = hf_best_order(P->cost, a.g.dim);
    P->pred = ip_tried(a) && hf_ip_wins(P->cost_ip, P->cost[order]) ? HF_PRED_INTERP : order;
}

/* Verbatim values over the reconstruction (the lists kernel checked their positions). */
template <typename T>
__global__ void __launch_bounds__(IP_THREADS) ip_verbatim_kernel(const ip_args a,
                                                                 const uint8_t *in,
                                                                 hf_layout L)
{
    if (a.sc->corrupt)
        return;
    for (uint64_t k = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; k < L.n_verb;
         k += (uint64_t)gridDim.x * blockDim.x) {
        uint64_t z, y, x;
        hf_tile_coords(&a.g, hz_get_u32(in + L.off_verb_pos + 4 * k), &z, &y, &x);
        const uint64_t i = (z * a.g.ny + y) * a.g.nx + x;
        const uint8_t *v = in + L.off_verb_val + sizeof(T) * k;
        hf_put_bits((T *)a.out, i, sizeof(T) == 4 ? hz_get_u32(v) : hz_get_u64(v));
    }
}

static unsigned ip_log2(unsigned v)
{
    unsigned k = 0;
    while ((1u << k) < v)
        k++;
    return k;
}

/* Launches every pass: the leading ones of at most IP_COARSE_MAX elements in one CTA, then a
 * grid a pass. */
template <typename T, bool ENCODE>
static cudaError_t ip_launch_passes(ip_args a, int sms, cudaStream_t s)
{
    const uint64_t n[3] = {a.g.nz, a.g.ny, a.g.nx}, t[3] = {a.g.tz, a.g.ty, a.g.tx};
    for (int b = 0; b < 3; b++) {
        a.n[b] = (uint32_t)n[b];
        a.t[b] = (uint32_t)t[b];
        a.tshift[b] = ip_log2(a.t[b]);
    }
    /* level 1 (the last three passes) in the fused kernel, when there is a level 1 */
    const unsigned np = hf_ip_passes(&a.g), fused = np >= 3 ? np - 3 : np;
    unsigned p = 0;
    hf_ip_pass P;
    while (p < fused && (hf_ip_pass_at(&a.g, p, &P), P.npts <= IP_COARSE_MAX))
        p++;
    ip_pass_kernel<T, ENCODE><<<1, IP_COARSE_THREADS, 0, s>>>(a, 0, p, np);
    for (; p < fused; p++) {
        hf_ip_pass_at(&a.g, p, &P);
        if (P.npts == 0)
            continue;
        const uint64_t want = (uint64_t)(sms > 0 ? sms : 1) * 16;   /* CTAs to fill the GPU */
        const unsigned grid = (unsigned)min((P.npts + IP_THREADS - 1) / IP_THREADS, want);
        ip_pass_kernel<T, ENCODE><<<grid, IP_THREADS, 0, s>>>(a, p, p + 1, np);
    }
    if (fused == np)
        return cudaGetLastError();
    const dim3 R = ip_region(a.g.dim);
    const uint64_t regions = ((a.g.nz + R.z - 1) / R.z) * ((a.g.ny + R.y - 1) / R.y) *
                             ((a.g.nx + R.x - 1) / R.x);
    /* the largest box: the region with its margin, inside the chunk */
    const unsigned smem = (unsigned)(min((uint64_t)R.z, a.g.nz) * min((uint64_t)R.y + 5, a.g.ny) *
                                     min((uint64_t)R.x + 5, a.g.nx) * 4);
    ip_level1_kernel<T, ENCODE><<<(unsigned)regions, IP_L1_THREADS, smem, s>>>(a, R);
    return cudaGetLastError();
}

static ip_args ip_args_of(const hf_geom *g, const fl_quant *Q, int32_t *u, int32_t *delta)
{
    ip_args a = {};
    a.g = *g;
    a.Q = *Q;
    a.u = u;
    a.delta = delta;
    return a;
}

cudaError_t hzc_ip_launch_encode(const hf_geom *g, const fl_quant *Q, const void *in,
                                 const int32_t *lcode, int32_t *u, int32_t *delta,
                                 hzc_huff_plan *plan, int sms, cudaStream_t s)
{
    ip_args a = ip_args_of(g, Q, u, delta);
    a.in = in;
    a.lcode = lcode;
    a.plan = plan;
    cudaError_t e = Q->is_f32 ? ip_launch_passes<float, true>(a, sms, s)
                              : ip_launch_passes<double, true>(a, sms, s);
    if (e != cudaSuccess)
        return e;
    ip_pick_kernel<<<1, 1, 0, s>>>(a);
    return cudaGetLastError();
}

cudaError_t hzc_ip_launch_decode(const hf_geom *g, const fl_quant *Q, const hf_layout *L,
                                 const uint8_t *in, const int32_t *delta, int32_t *u, void *out,
                                 hzc_scalars *sc, int sms, cudaStream_t s)
{
    ip_args a = ip_args_of(g, Q, u, (int32_t *)delta);
    a.out = out;
    a.sc = sc;
    cudaError_t e = Q->is_f32 ? ip_launch_passes<float, false>(a, sms, s)
                              : ip_launch_passes<double, false>(a, sms, s);
    if (e != cudaSuccess)
        return e;
    const unsigned grid = (unsigned)(sms > 0 ? sms : 1) * 4u;
    if (Q->is_f32)
        ip_verbatim_kernel<float><<<grid, IP_THREADS, 0, s>>>(a, in, *L);
    else
        ip_verbatim_kernel<double><<<grid, IP_THREADS, 0, s>>>(a, in, *L);
    return cudaGetLastError();
}
