/* The Huffman codec's interpolation predictor on the GPU (huff_interp.h): the passes of
 * huff_interp.c, the same inline arithmetic, so deltas and values match the CPU's bit for bit.
 * The coarse passes, up to IP_COARSE_MAX elements each, run in one CTA with a barrier between
 * passes; every finer pass but level 1's is a kernel over its elements, a thread an element;
 * level 1's three passes are one kernel (ip_level1_kernel). */
#include "kernels.h"

#define IP_THREADS 256
#define IP_COARSE_THREADS 1024
#define IP_COARSE_MAX 2048u      /* passes up to this many elements share the one-CTA kernel,
                                  * which one SM runs: larger passes take a grid each */

/* Chunks the Huffman codec writes hold fewer than 2^32 elements, so every coordinate, raster
 * index and tile-major position below is 32-bit: half the instructions of 64-bit ones. */
struct ip_args {
    hf_geom g;
    fl_quant Q;
    const void *in;
    int32_t *u;                  /* reconstructed codes, chunk raster order */
    int32_t *delta;              /* tile-major */
    hzc_huff_plan *plan;         /* encoder */
    void *out;                   /* decoder */
    hzc_scalars *sc;             /* decoder */
    uint32_t n[3], t[3];         /* the folded chunk's and the tile's edges (z, y, x) */
    uint32_t gty, gtx;           /* tiles along y and x */
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

/* hf_sampled of the tile holding the element at c (hf_tile_of with shifts). */
__device__ __forceinline__ bool ip_sampled(const ip_args &a, const uint32_t c[3])
{
    const uint32_t t = ((c[0] >> a.tshift[0]) * a.gty + (c[1] >> a.tshift[1])) * a.gtx +
                       (c[2] >> a.tshift[2]);
    return hf_sampled(&a.g, t);
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
        a.delta[ip_pos(a, c[0], c[1], c[2])] = mark;
        if (ip_sampled(a, c)) {
            int32_t p;
            *cost += 32u - __clz(hf_zigzag32(k));
            /* rare: dual quantisation's kind only then */
            if (mark == HZC_CODE_VERBATIM && hf_dq_code(&a.Q, (double)v, &p))
                *cost += hf_ip_verbatim_cost(sizeof(T) == 4);
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
    else   /* rounded to T once: fl_reconstruct_at's value */
        out[i] = (T)fl_reconstruct_wide(&a.Q, hf_ip_steps(u));
    return (int32_t)u;
}

/* Whether this encoding tries interpolation (huff_cpu.c's rule, from the Lorenzo costs). */
__device__ __forceinline__ bool ip_tried(const ip_args &a)
{
    const hzc_huff_plan *P = a.plan;
    return hf_ip_worth_trying(P->cost[hf_best_order(P->cost, a.g.dim)], P->cost[0]);
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

/* Level 1, the last three passes and 7/8 of the elements, fused: a CTA a region of RZ x RY x
 * RX elements keeps the codes its passes need in shared memory instead of writing and
 * re-reading them. The y and x passes read neighbours up to 3 away, so the CTA also computes
 * (and does not own) the z and y passes' codes in a margin of 2 below and 3 above its region
 * along y and x; the z pass reads level 2's codes from global memory. The arithmetic is the
 * passes', so are the bytes.
 * Every pass reads only codes at even x (the x pass's neighbours are its even x +-1, +-3, the
 * other passes' are in their own column), so the box holds the even columns alone: rows of
 * BXE words read at stride 1, free of bank conflicts. Each pass runs over a slot grid of fixed
 * shape (the box's or the region's, by parity) and skips the slots outside the chunk, so a
 * thread finds its element with divisions by constants. */
#define IP_L1_THREADS 256

template <int RZ, int RY, int RX> struct ip_l1_shape {
    static constexpr int MY = RY > 1 ? 2 : 0;          /* margin below along y (above: MY + 1) */
    static constexpr int BY = RY > 1 ? RY + 5 : 1;     /* box rows: region and margins */
    static constexpr int BXE = (RX + 6) / 2;           /* even x from x0 - 2 to x0 + RX + 2 */
    static constexpr int BYE = (BY + 1) / 2;           /* even y rows of the box */
};

/* The raster index of an element inside the chunk. */
__device__ __forceinline__ uint32_t ip_raster(const ip_args &a, int z, int y, int x)
{
    return ((uint32_t)z * a.n[1] + (uint32_t)y) * a.n[2] + (uint32_t)x;
}

/* hf_ip_reach at step 1 in 32 bits (c < n, so n - c cannot wrap). */
__device__ __forceinline__ unsigned ip_reach1(uint32_t c, uint32_t n)
{
    return (n - c > 1u ? HF_IP_P1 : 0u) | (c >= 3u ? HF_IP_M3 : 0u) | (n - c > 3u ? HF_IP_P3 : 0u);
}

/* Slot j of a grid SZ x SY x SX (z, y, x) as its three indices. */
template <int SY, int SX>
__device__ __forceinline__ void ip_slot(unsigned j, int &kz, int &ky, int &kx)
{
    kx = (int)(j % SX);
    ky = (int)(j / SX % SY);
    kz = (int)(j / SX / SY);
}

template <typename T, bool ENCODE, int RZ, int RY, int RX>
__global__ void __launch_bounds__(IP_L1_THREADS) ip_level1_kernel(const ip_args a)
{
    using S = ip_l1_shape<RZ, RY, RX>;
    constexpr int BY = S::BY, BXE = S::BXE, BYE = S::BYE, MY = S::MY;
    __shared__ int32_t box_s[RZ * BY * BXE];
    if (ENCODE && !ip_tried(a))
        return;   /* grid-uniform: the costs are final */
    const int nz = (int)a.n[0], ny = (int)a.n[1], nx = (int)a.n[2];
    const unsigned gy = (unsigned)(ny + RY - 1) / RY, gx = (unsigned)(nx + RX - 1) / RX;
    const int z0 = (int)(blockIdx.x / gx / gy) * RZ, y0 = (int)(blockIdx.x / gx % gy) * RY;
    const int x0 = (int)(blockIdx.x % gx) * RX;
    const int z1 = min(z0 + RZ, nz), y1 = min(y0 + RY, ny), x1 = min(x0 + RX, nx);
    const int oy = y0 - MY, ox = x0 - 2;                    /* the box's origin (may be < 0) */
    const int by1 = min(y1 + MY + 1, ny), bx1 = min(x1 + 3, nx);
    const uint32_t plane = a.n[1] * a.n[2];
    unsigned cost = 0;
    int kz, ky, kx;
    /* level 2's codes: every coordinate even */
    for (unsigned j = threadIdx.x; j < (RZ + 1) / 2 * BYE * BXE; j += IP_L1_THREADS) {
        ip_slot<BYE, BXE>(j, kz, ky, kx);
        const int z = z0 + 2 * kz, y = oy + 2 * ky, x = ox + 2 * kx;
        if (z < z1 && (unsigned)y < (unsigned)by1 && (unsigned)x < (unsigned)bx1)
            box_s[(2 * kz * BY + 2 * ky) * BXE + kx] = a.u[ip_raster(a, z, y, x)];
    }
    __syncthreads();
    /* pass z: z odd, y and x even in the box, neighbours from level 2 in global memory (none
     * in a region of one plane) */
    if constexpr (RZ > 1) {
        for (unsigned j = threadIdx.x; j < RZ / 2 * BYE * BXE; j += IP_L1_THREADS) {
            ip_slot<BYE, BXE>(j, kz, ky, kx);
            const int z = z0 + 1 + 2 * kz, y = oy + 2 * ky, x = ox + 2 * kx;
            if (!(z < z1 && (unsigned)y < (unsigned)by1 && (unsigned)x < (unsigned)bx1))
                continue;
            const uint32_t c[3] = {(uint32_t)z, (uint32_t)y, (uint32_t)x};
            const uint32_t i = ip_raster(a, z, y, x);
            const unsigned reach = ip_reach1(c[0], (uint32_t)nz);
            const int32_t pred =
                hf_ip_predict(reach, reach & HF_IP_M3 ? a.u[i - 3 * plane] : 0, a.u[i - plane],
                              reach & HF_IP_P1 ? a.u[i + plane] : 0,
                              reach & HF_IP_P3 ? a.u[i + 3 * plane] : 0);
            const bool own = y >= y0 && y < y1 && x >= x0 && x < x1;
            box_s[((1 + 2 * kz) * BY + 2 * ky) * BXE + kx] =
                ip_code<T, ENCODE>(a, c, i, pred, own, &cost);
        }
    }
    __syncthreads();
    /* pass y: y odd inside the region, x even in the box (none in a region of one row) */
    if constexpr (RY > 1) {
        for (unsigned j = threadIdx.x; j < RZ * (RY / 2) * BXE; j += IP_L1_THREADS) {
            ip_slot<RY / 2, BXE>(j, kz, ky, kx);
            const int z = z0 + kz, y = y0 + 1 + 2 * ky, x = ox + 2 * kx;
            if (!(z < z1 && y < y1 && (unsigned)x < (unsigned)bx1))
                continue;
            const uint32_t c[3] = {(uint32_t)z, (uint32_t)y, (uint32_t)x};
            const uint32_t i = ip_raster(a, z, y, x);
            const int b = (kz * BY + MY + 1 + 2 * ky) * BXE + kx;
            const unsigned reach = ip_reach1(c[1], (uint32_t)ny);
            const int32_t pred =
                hf_ip_predict(reach, reach & HF_IP_M3 ? box_s[b - 3 * BXE] : 0, box_s[b - BXE],
                              reach & HF_IP_P1 ? box_s[b + BXE] : 0,
                              reach & HF_IP_P3 ? box_s[b + 3 * BXE] : 0);
            const bool own = x >= x0 && x < x1;
            box_s[b] = ip_code<T, ENCODE>(a, c, i, pred, own, &cost);
        }
    }
    __syncthreads();
    /* pass x: x odd inside the region; its neighbours x - 3, x - 1, x + 1, x + 3 are the box's
     * even columns kx, kx + 1, kx + 2, kx + 3; nothing reads these codes */
    for (unsigned j = threadIdx.x; j < RZ * RY * (RX / 2); j += IP_L1_THREADS) {
        ip_slot<RY, RX / 2>(j, kz, ky, kx);
        const int z = z0 + kz, y = y0 + ky, x = x0 + 1 + 2 * kx;
        if (!(z < z1 && y < y1 && x < x1))
            continue;
        const uint32_t c[3] = {(uint32_t)z, (uint32_t)y, (uint32_t)x};
        const uint32_t i = ip_raster(a, z, y, x);
        const int b = (kz * BY + MY + ky) * BXE + kx;
        const unsigned reach = ip_reach1(c[2], (uint32_t)nx);
        const int32_t pred = hf_ip_predict(reach, reach & HF_IP_M3 ? box_s[b] : 0, box_s[b + 1],
                                           reach & HF_IP_P1 ? box_s[b + 2] : 0,
                                           reach & HF_IP_P3 ? box_s[b + 3] : 0);
        ip_code<T, ENCODE>(a, c, i, pred, true, &cost);
    }
    if (ENCODE) {
        const unsigned long long w = __reduce_add_sync(FULL, cost);
        if ((threadIdx.x & 31u) == 0 && w)
            atomicAdd(&a.plan->cost_ip, w);
    }
}

/* The fused level 1 over regions of RZ x RY x RX. */
template <typename T, bool ENCODE, int RZ, int RY, int RX>
static void ip_level1_launch(const ip_args &a, cudaStream_t s)
{
    const uint64_t regions = ((a.g.nz + RZ - 1) / RZ) * ((a.g.ny + RY - 1) / RY) *
                             ((a.g.nx + RX - 1) / RX);
    ip_level1_kernel<T, ENCODE, RZ, RY, RX><<<(unsigned)regions, IP_L1_THREADS, 0, s>>>(a);
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
    a.gty = (uint32_t)a.g.gty;
    a.gtx = (uint32_t)a.g.gtx;
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
    /* regions by the chunk's shape: a region's slot grids cover every element of its passes
     * only where the axes it leaves out (RZ or RY of 1) have one element */
    if (a.g.nz > 1)
        ip_level1_launch<T, ENCODE, 4, 16, 64>(a, s);
    else if (a.g.ny > 1)
        ip_level1_launch<T, ENCODE, 1, 32, 128>(a, s);
    else
        ip_level1_launch<T, ENCODE, 1, 1, 4096>(a, s);
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

cudaError_t hzc_ip_launch_encode(const hf_geom *g, const fl_quant *Q, const void *in, int32_t *u,
                                 int32_t *delta, hzc_huff_plan *plan, int sms, cudaStream_t s)
{
    ip_args a = ip_args_of(g, Q, u, delta);
    a.in = in;
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
