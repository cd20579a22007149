/* The Huffman codec's interpolation predictor on the GPU (huff_interp.h): the passes of
 * huff_interp.c, the same inline arithmetic, so deltas and values match the CPU's bit for bit.
 * The coarse levels, whose passes have up to HF_IP_COARSE_MAX elements each, run in one CTA with
 * a barrier between passes; each finer level's three passes are one kernel over regions
 * (hf_ip_level_kernel). */
#include "interp_element.cuh"

#define HF_IP_THREADS 256
#define HF_IP_COARSE_THREADS 1024
#define HF_IP_COARSE_MAX 2048u      /* levels whose passes have up to this many elements share the
                                  * one-CTA kernel, which one SM runs: larger ones take a grid */

/* Passes p0..p1-1 of np in one CTA, whose barrier orders them, the chunk's first element
 * before them when p0 is 0. When split, every element here has even coordinates and leaves its
 * value to level 1. Damaged deltas decode to clamped codes and a flag, so the decoder runs to
 * the end either way. */
template <typename T, bool ENCODE>
__global__ void __launch_bounds__(HF_IP_COARSE_THREADS)
    hf_ip_pass_kernel(const hf_ip_args a_, unsigned p0, unsigned p1, unsigned np)
{
    const hf_ip_args a = hf_ip_at<ENCODE>(a_);
    unsigned cost = 0;
    if (ENCODE && !hf_ip_tried(a))
        return;   /* grid-uniform: the costs are final */
    /* the element at c: its code, then its delta (encoding) or value (decoding) */
    auto element = [&](const uint32_t c[3], uint32_t i, uint32_t k, int32_t pred, bool keep) {
        int32_t d = ENCODE ? 0 : a.delta[hf_ip_pos(a, c[0], c[1], c[2])];
        const T v = ENCODE ? ((const T *)a.in)[i] : T(0);
        const int32_t u =
            hf_ip_code_element<T, ENCODE>(a, v, pred, ENCODE && hf_ip_sampled(a, c), &cost, &d);
        if (ENCODE) {
            if (a.sh)
                a.delta2[k] = d;
            else
                hf_ip_emit(a, hf_ip_pos(a, c[0], c[1], c[2]), d);
        } else if (!a.sh) {
            hf_ip_put<T>(a, i, hf_ip_result<false>(u, d));
        }
        if (keep)
            a.u[k] = u;
    };
    if (p0 == 0 && threadIdx.x == 0) {
        const uint32_t root[3] = {0, 0, 0};
        element(root, 0, 0, 0, true);
    }
    for (unsigned p = p0; p < p1; p++) {
        __syncthreads();   /* the pass before is complete */
        uint64_t npts;
        const hf_ip_pass32 q = hf_ip_pass_get(a, p, &npts);
        const unsigned ax = p % 3u;
        const bool keep = p + 1 < np;   /* no pass reads the last pass's codes */
        /* a flat index over the pass's elements: every thread busy whatever the row length */
        for (uint32_t j = threadIdx.x; j < npts; j += HF_IP_COARSE_THREADS) {
            const uint32_t r = j / q.n2, ix = j - r * q.n2;
            const uint32_t iz = r / q.n1, iy = r - iz * q.n1;
            const uint32_t c[3] = {q.first[0] + iz * q.step[0], q.first[1] + iy * q.step[1],
                                   q.first[2] + ix * q.step[2]};
            const uint32_t i = (c[0] * a.n[1] + c[1]) * a.n[2] + c[2], k = hf_ip_uidx(a, c, a.sh);
            element(c, i, k, hf_ip_predict_at(a, q, ax == 0 ? c[0] : (ax == 1 ? c[1] : c[2]), k),
                    keep);
        }
    }
    if (ENCODE) {
        const unsigned long long w = __reduce_add_sync(FULL, cost);
        if ((threadIdx.x & 31u) == 0 && w)
            atomicAdd(&a.plan->cost_ip, w);
    }
}

/* One level's three passes, step H = 2^hs, fused: a CTA a region of RZ x RY x RX points keeps
 * the codes its passes need in shared memory instead of writing and re-reading them. The
 * level's points, every coordinate a multiple of H, form a lattice of ceil(n / H) points an
 * axis on which its passes are level 1's (step 1 in lattice coordinates, hf_ip_reach included),
 * so the kernel works in lattice coordinates and scales them by H to address the chunk.
 * The y and x passes read neighbours up to 3 away, so the CTA also computes (and does not own)
 * the z and y passes' codes in a margin of 2 below and 3 above its region along y and x; the z
 * pass reads the coarser levels' codes from global memory. The arithmetic is the passes', so
 * are the bytes. Every level but level 1 stores its codes (and deltas) in the even lattice;
 * level 1 gathers its region's deltas or codes, the coarser levels' with its own, in region_s
 * and writes out their tokens or values whole.
 * Every pass reads only codes at even lattice x (the x pass's neighbours are its even x +-1,
 * +-3, the other passes' are in their own column), so the box holds the even columns alone:
 * rows of BXE words read at stride 1, free of bank conflicts. Each pass runs over a slot grid
 * of fixed shape (the box's or the region's, by parity) and skips the slots outside the
 * lattice, so a thread's slots step by a constant (hf_ip_slots). Level 1, nearly all the work,
 * is an instantiation of its own (L1), its step a constant. */
#define HF_IP_LEVEL_THREADS 256
#define HF_IP_FEW_REGIONS 256u

template <int RZ, int RY, int RX> struct hf_ip_level_shape {
    static constexpr int MY = RY > 1 ? 2 : 0;          /* margin below along y (above: MY + 1) */
    static constexpr int BY = RY > 1 ? RY + 5 : 1;     /* box rows: region and margins */
    static constexpr int BXE = (RX + 6) / 2;           /* even x from x0 - 2 to x0 + RX + 2 */
    static constexpr int BYE = (BY + 1) / 2;           /* even y rows of the box */
};

/* hf_ip_reach at step 1 in 32 bits (c < n, so n - c cannot wrap). */
__device__ __forceinline__ unsigned hf_ip_reach1(uint32_t c, uint32_t n)
{
    return (n - c > 1u ? HF_IP_P1 : 0u) | (c >= 3u ? HF_IP_M3 : 0u) | (n - c > 3u ? HF_IP_P3 : 0u);
}

#define HF_IP_REACH_ALL (HF_IP_P1 | HF_IP_M3 | HF_IP_P3)

/* Whether a code is below 2^26 in magnitude. When the four a cubic reads are, its sum
 * -m3 + 9 m1 + 9 p1 - p3 + 8 stays below 20 * 2^26 + 8 < 2^31 and its quotient by 16 below
 * HF_IP_PMAX: 32-bit arithmetic, an arithmetic shift (floor) and no clamp give
 * hf_ip_predict's value. Codes are that small unless the bound is tiny against the values. */
__device__ __forceinline__ bool hf_ip_small(int32_t u)
{
    return (uint32_t)u + (1u << 26) < (1u << 27);
}

/* hf_ip_predict of the neighbours at steps j = -3, -1, +1, +3 along the pass's axis, read by
 * at(j) where reach has them: the points away from the chunk's ends, nearly all, take the
 * cubic alone, without the branches of reach (the branch between the two is divergent only
 * in the warps that straddle an end). */
template <typename At>
__device__ __forceinline__ int32_t hf_ip_predict_by(unsigned reach, At at, bool small = false)
{
    if (reach == HF_IP_REACH_ALL && small)   /* hf_ip_small: in 32 bits, within the clamp */
        return (9 * (at(-1) + at(1)) - at(-3) - at(3) + 8) >> 4;
    if (reach == HF_IP_REACH_ALL)
        return hf_ip_predict(HF_IP_REACH_ALL, at(-3), at(-1), at(1), at(3));
    return hf_ip_predict(reach, reach & HF_IP_M3 ? at(-3) : 0, at(-1),
                         reach & HF_IP_P1 ? at(1) : 0, reach & HF_IP_P3 ? at(3) : 0);
}

/* A thread's slots j, j + HF_IP_LEVEL_THREADS, ... of a grid SZ x SY x SX (z, y, x) as their three
 * indices: divisions for the first, then a step with carries (each index plus its step stays
 * below twice its edge, so one subtraction wraps it). */
template <int SY, int SX> struct hf_ip_slots {
    int kz, ky, kx;
    __device__ explicit hf_ip_slots(unsigned j)
        : kz((int)(j / SX / SY)), ky((int)(j / SX % SY)), kx((int)(j % SX))
    {
    }
    __device__ void next()
    {
        constexpr int DX = HF_IP_LEVEL_THREADS % SX, DY = HF_IP_LEVEL_THREADS / SX % SY;
        constexpr int DZ = HF_IP_LEVEL_THREADS / SX / SY;
        kx += DX;
        const int cx = kx >= SX;
        kx -= cx * SX;
        ky += DY + cx;
        const int cy = ky >= SY;
        ky -= cy * SY;
        kz += DZ + cy;
    }
};

/* Points along an axis of n elements at step 2^hs. */
__host__ __device__ __forceinline__ uint32_t hf_ip_lattice(uint32_t n, unsigned hs)
{
    return ((n - 1u) >> hs) + 1u;
}

/* region_s's index of region point (z, y, x), relative to the region's corner: each row
 * holds its even x, then its odd x, so the x pass stores its pairs and the last loop loads its
 * quads in whole words. */
template <int RY, int RX>
__device__ __forceinline__ int hf_ip_rslot(int z, int y, int x)
{
    return (z * RY + y) * RX + (x & 1) * (RX / 2) + (x >> 1);
}

/* Which regions a launch takes: every one (HF_IP_ALL: the levels above 1, and decoding), or, for
 * level 1's encoding, first those holding points of sampled tiles, which complete the
 * interpolation's cost, then (once hf_enc_ip_pick_kernel has chosen the interpolation) the others;
 * so a chunk whose interpolation loses leaves most of level 1 undone. */
enum hf_ip_part { HF_IP_ALL, HF_IP_SAMPLED, HF_IP_REST };

/* Regions of edge r that a tile of edge t (both powers of two) meets, at most. */
__host__ __device__ __forceinline__ uint32_t hf_ip_per(uint32_t t, uint32_t r)
{
    return t > r ? t / r : 1u;
}

/* HF_IP_SAMPLED's launch, over the sampled tiles instead of every region (most of which it would
 * skip): hf_ip_per's product of CTAs a run of tiles, one a region that the run's sampled tile meets
 * (level 1: lattice = chunk). CTA b's region index in the grid of gy x gx regions a plane, or
 * false when it has none: a run without a sampled tile, past the tile's or the chunk's end, or
 * a region spanning tiles along x that an earlier sampled tile of the row takes. */
template <int RZ, int RY, int RX>
__device__ bool hf_ip_sampled_region(const hf_ip_args &a, unsigned b, unsigned gy, unsigned gx,
                                  unsigned *reg)
{
    const uint32_t py = hf_ip_per(a.t[1], RY), px = hf_ip_per(a.t[2], RX);
    const uint32_t per = hf_ip_per(a.t[0], RZ) * py * px, k = b / per, s = b % per;
    const uint64_t t = hf_sample_tile(&a.g, k);
    if (t >= a.g.ntiles)
        return false;
    const uint32_t tx = (uint32_t)(t % a.gtx), ty = (uint32_t)(t / a.gtx % a.gty);
    const uint32_t tz = (uint32_t)(t / a.gtx / a.gty);
    const uint32_t rz = (tz << a.tshift[0]) / RZ + s / (py * px);
    const uint32_t ry = (ty << a.tshift[1]) / RY + s / px % py;
    const uint32_t rx = (tx << a.tshift[2]) / RX + s % px;
    if (rz * RZ >= min((tz + 1) << a.tshift[0], a.n[0]) ||
        ry * RY >= min((ty + 1) << a.tshift[1], a.n[1]) ||
        rx * RX >= min((tx + 1) << a.tshift[2], a.n[2]))
        return false;
    for (uint32_t c = rx * RX >> a.tshift[2]; c < tx; c++)
        if (hf_sampled(&a.g, t - (tx - c)))
            return false;
    *reg = (rz * gy + ry) * gx + rx;
    return true;
}

/* Level 1 decoding: the deltas of the region from (z0, y0, x0), clipped at (z1, y1, x1), into
 * region_s's slots, four consecutive points a thread (one tile row: tiles' x edges are
 * multiples of 4), every load issued before any is stored: one 16-byte load where the four
 * line up. */
template <int RZ, int RY, int RX>
__device__ __forceinline__ void hf_ip_stage_deltas(const hf_ip_args &a, int z0, int y0, int x0,
                                                   int z1, int y1, int x1, int32_t *region_s)
{
    constexpr int QUADS = RZ * RY * (RX / 4);
    constexpr int N = (QUADS + HF_IP_LEVEL_THREADS - 1) / HF_IP_LEVEL_THREADS;
    int4 q[N];
#pragma unroll
    for (int r = 0; r < N; r++) {
        const hf_ip_slots<RY, RX / 4> sc(threadIdx.x + r * HF_IP_LEVEL_THREADS);
        const int z = z0 + sc.kz, y = y0 + sc.ky, x = x0 + 4 * sc.kx;
        q[r] = make_int4(0, 0, 0, 0);
        if (!(z < z1 && y < y1 && x < x1))
            continue;
        const int32_t *d = a.delta + hf_ip_pos(a, (uint32_t)z, (uint32_t)y, (uint32_t)x);
        const int nv = min(4, x1 - x);
        if (nv == 4 && ((uintptr_t)d & 15u) == 0) {
            q[r] = *(const int4 *)d;
        } else {
            q[r].x = d[0];
            q[r].y = nv > 1 ? d[1] : 0;
            q[r].z = nv > 2 ? d[2] : 0;
            q[r].w = nv > 3 ? d[3] : 0;
        }
    }
#pragma unroll
    for (int r = 0; r < N; r++) {
        const unsigned j = threadIdx.x + r * HF_IP_LEVEL_THREADS;
        if (QUADS % HF_IP_LEVEL_THREADS && j >= (unsigned)QUADS)
            break;
        const hf_ip_slots<RY, RX / 4> sc(j);
        const int s = hf_ip_rslot<RY, RX>(sc.kz, sc.ky, 4 * sc.kx);
        *(int2 *)&region_s[s] = make_int2(q[r].x, q[r].z);
        *(int2 *)&region_s[s + RX / 2] = make_int2(q[r].y, q[r].w);
    }
}

template <typename T, bool ENCODE, bool LIN, int RZ, int RY, int RX, bool L1>
__global__ void __launch_bounds__(HF_IP_LEVEL_THREADS)
    hf_ip_level_kernel(const hf_ip_args a_, unsigned hs_l, hf_ip_part part)
{
    const hf_ip_args a = hf_ip_at<ENCODE>(a_);
    using S = hf_ip_level_shape<RZ, RY, RX>;
    constexpr int BY = S::BY, BXE = S::BXE, BYE = S::BYE, MY = S::MY;
    const unsigned hs = L1 ? 0u : hs_l;   /* level 1 (nothing reads its codes): step 1 */
    __shared__ int32_t box_s[RZ * BY * BXE];
    __shared__ __align__(16) int32_t region_s[L1 ? RZ * RY * RX : 1];   /* deltas or codes */
    /* The levels above 1 encode with the values their passes code in the region staged here
     * first, all loads in flight at once: a load a point in each pass left them waiting on
     * memory (level 1, bound by its instructions, gained nothing by it). */
    constexpr bool STAGE = ENCODE && !L1;
    __shared__ T stage_s[STAGE ? RZ * RY * RX : 1];
    const T *in = (const T *)a.in;
    const int nz = (int)hf_ip_lattice(a.n[0], hs), ny = (int)hf_ip_lattice(a.n[1], hs);
    const int nx = (int)hf_ip_lattice(a.n[2], hs);
    const unsigned gy = (unsigned)(ny + RY - 1) / RY, gx = (unsigned)(nx + RX - 1) / RX;
    unsigned reg = blockIdx.x;   /* the region, z-major */
    if (ENCODE && L1 && part == HF_IP_SAMPLED &&
        !hf_ip_sampled_region<RZ, RY, RX>(a, blockIdx.x, gy, gx, &reg))
        return;
    const int z0 = (int)(reg / gx / gy) * RZ, y0 = (int)(reg / gx % gy) * RY;
    const int x0 = (int)(reg % gx) * RX;
    const int z1 = min(z0 + RZ, nz), y1 = min(y0 + RY, ny), x1 = min(x0 + RX, nx);
    const int oy = y0 - MY, ox = x0 - 2;                    /* the box's origin (may be < 0) */
    const int by1 = min(y1 + MY + 1, ny), bx1 = min(x1 + 3, nx);
    /* raster strides of the lattice's axes; the even lattice's stride of two lattice planes */
    const uint32_t sz = a.n[1] * a.n[2] << hs, sy = a.n[2] << hs;
    const uint32_t ez = a.cn[1] * a.cn[2] << hs;
    /* Level 1's region lies in one tile along z and y and in at most two along x (the launch
     * asserts it), so which of its points count (hf_sampled) is known by x alone: bit s of
     * smask for the tiles from tile column tx0 on. */
    const uint32_t ts = a.tshift[2], tx0 = (uint32_t)x0 >> ts;
    unsigned smask = 0;
    if (ENCODE && L1) {
        for (uint32_t s = 0; s < 2; s++) {
            const uint32_t c[3] = {(uint32_t)z0, (uint32_t)y0, (tx0 + s) << ts};
            if (s == 0 || c[2] < (uint32_t)x1)
                smask |= (unsigned)hf_ip_sampled(a, c) << s;
        }
        if (part != HF_IP_ALL && (part == HF_IP_SAMPLED) != (smask != 0))
            return;   /* CTA-uniform: the other launch's region */
    }
    /* grid-uniform: the costs, or the choice, are final (read after the test above, which
     * most CTAs of a level 1 launch leave by, needs no load) */
    if (ENCODE && (part == HF_IP_REST ? a.plan->pred != HF_PRED_INTERP : !hf_ip_tried(a)))
        return;
    /* before the choice, a region whose costs could not change it is left out: on the
     * velocities at REL 1e-4 the levels above 1 cost the interpolation more than the whole
     * sampled Lorenzo order, and level 1's sampled regions were a tenth of a compression */
    if (ENCODE && part != HF_IP_REST) {
        __shared__ bool lost_s;
        if (threadIdx.x == 0)
            lost_s = hf_ip_lost(a);
        __syncthreads();
        if (lost_s)
            return;
    }
    auto sampled = [&](const uint32_t c[3]) {
        return L1 ? (smask >> ((c[2] >> ts) - tx0) & 1u) != 0 : hf_ip_sampled(a, c);
    };
    unsigned cost = 0;
    /* an owned point's results: into the even lattice, or (level 1) region_s */
    auto keep = [&](const uint32_t c[3], int z, int y, int x, int32_t u, int32_t d) {
        if (!L1) {
            const uint32_t k = hf_ip_uidx(a, c, 1u);
            a.u[k] = u;
            if (ENCODE)
                a.delta2[k] = d;
        } else {
            region_s[hf_ip_rslot<RY, RX>(z - z0, y - y0, x - x0)] = hf_ip_result<ENCODE>(u, d);
        }
    };
    if constexpr (STAGE) {
        static_assert(RZ * RY * RX % HF_IP_LEVEL_THREADS == 0, "whole rounds of staging");
#pragma unroll 8
        for (int r = 0; r < RZ * RY * RX / HF_IP_LEVEL_THREADS; r++) {
            const int j = (int)threadIdx.x + r * HF_IP_LEVEL_THREADS;
            const int kz = j / (RY * RX), ky = j / RX % RY, kx = j % RX;
            const int z = z0 + kz, y = y0 + ky, x = x0 + kx;
            /* z0, y0 and x0 are even: the coarser levels' points are the even k */
            if (z < z1 && y < y1 && x < x1 && ((kz | ky | kx) & 1))
                stage_s[j] = in[z * sz + y * sy + ((uint32_t)x << hs)];
        }
    }
    /* A pass's value at lattice (z, y, x): staged when the region holds it (own). */
    auto value = [&](int z, int y, int x, bool own) -> T {
        if constexpr (STAGE) {
            if (own)
                return stage_s[((z - z0) * RY + (y - y0)) * RX + (x - x0)];
        }
        return in[z * sz + y * sy + ((uint32_t)x << hs)];
    };
    /* Level 1 decoding: the region's deltas staged in region_s first, every load of the CTA in
     * flight at once (a load a point in each pass left the passes waiting on memory); each
     * point's code then replaces its delta in its slot. */
    if constexpr (L1 && !ENCODE) {
        hf_ip_stage_deltas<RZ, RY, RX>(a, z0, y0, x0, z1, y1, x1, region_s);
        __syncthreads();
    }
    /* a delta of level 1 decoding: staged for a point of the region, else from global memory */
    auto delta_at = [&](const uint32_t c[3], bool own) -> int32_t {
        if (L1 && own)
            return region_s[hf_ip_rslot<RY, RX>((int)c[0] - z0, (int)c[1] - y0, (int)c[2] - x0)];
        return a.delta[hf_ip_pos(a, c[0], c[1], c[2])];
    };
    /* whether a code this thread put in box_s fails hf_ip_small: the passes after a barrier that
     * finds none take the 32-bit cubic */
    bool big = false;
    /* the coarser levels' codes: every lattice coordinate even */
    hf_ip_slots<BYE, BXE> sc(threadIdx.x);
    for (unsigned j = threadIdx.x; j < (RZ + 1) / 2 * BYE * BXE;
         j += HF_IP_LEVEL_THREADS, sc.next()) {
        const int kz = sc.kz, ky = sc.ky, kx = sc.kx;
        const int z = z0 + 2 * kz, y = oy + 2 * ky, x = ox + 2 * kx;
        if (!(z < z1 && (unsigned)y < (unsigned)by1 && (unsigned)x < (unsigned)bx1))
            continue;
        const uint32_t c[3] = {(uint32_t)z << hs, (uint32_t)y << hs, (uint32_t)x << hs};
        const uint32_t k = hf_ip_uidx(a, c, 1u);
        const int32_t u = a.u[k];
        box_s[(2 * kz * BY + 2 * ky) * BXE + kx] = u;
        big |= !hf_ip_small(u);
        if (L1 && y >= y0 && y < y1 && x >= x0 && x < x1)   /* in the region */
            keep(c, z, y, x, u,
                 ENCODE ? a.delta2[k] : delta_at(c, true));
    }
    __syncthreads();
    /* pass z: z odd, y and x even in the box, neighbours from the coarser levels in global
     * memory (none in a region of one plane) */
    if constexpr (RZ > 1) {
        hf_ip_slots<BYE, BXE> sc(threadIdx.x);
        for (unsigned j = threadIdx.x; j < RZ / 2 * BYE * BXE;
             j += HF_IP_LEVEL_THREADS, sc.next()) {
            const int kz = sc.kz, ky = sc.ky, kx = sc.kx;
            const int z = z0 + 1 + 2 * kz, y = oy + 2 * ky, x = ox + 2 * kx;
            if (!(z < z1 && (unsigned)y < (unsigned)by1 && (unsigned)x < (unsigned)bx1))
                continue;
            const uint32_t c[3] = {(uint32_t)z << hs, (uint32_t)y << hs, (uint32_t)x << hs};
            const bool own = y >= y0 && y < y1 && x >= x0 && x < x1;
            const T v = ENCODE ? value(z, y, x, own) : T(0);
            int32_t d = ENCODE ? 0 : delta_at(c, own);
            /* the even lattice's index of the point below, at z - 1 */
            const uint32_t below[3] = {(uint32_t)(z - 1) << hs, c[1], c[2]};
            const uint32_t k = hf_ip_uidx(a, below, 1u);
            const int32_t pred = hf_ip_predict_by(hf_ip_reach1((uint32_t)z, (uint32_t)nz),
                                               [&](int j) { return a.u[k + (j + 1) / 2 * ez]; });
            const int32_t u = hf_ip_code_element<T, ENCODE, LIN>(
                a, v, pred, ENCODE && own && sampled(c), &cost, &d);
            box_s[((1 + 2 * kz) * BY + 2 * ky) * BXE + kx] = u;
            big |= !hf_ip_small(u);
            if (own)
                keep(c, z, y, x, u, d);
        }
    }
    const bool small_y = !__syncthreads_or(big);
    /* pass y: y odd inside the region, x even in the box (none in a region of one row) */
    if constexpr (RY > 1) {
        hf_ip_slots<RY / 2, BXE> sc(threadIdx.x);
        for (unsigned j = threadIdx.x; j < RZ * (RY / 2) * BXE;
             j += HF_IP_LEVEL_THREADS, sc.next()) {
            const int kz = sc.kz, ky = sc.ky, kx = sc.kx;
            const int z = z0 + kz, y = y0 + 1 + 2 * ky, x = ox + 2 * kx;
            if (!(z < z1 && y < y1 && (unsigned)x < (unsigned)bx1))
                continue;
            const uint32_t c[3] = {(uint32_t)z << hs, (uint32_t)y << hs, (uint32_t)x << hs};
            const bool own = x >= x0 && x < x1;
            const T v = ENCODE ? value(z, y, x, own) : T(0);
            int32_t d = ENCODE ? 0 : delta_at(c, own);
            const int b = (kz * BY + MY + 1 + 2 * ky) * BXE + kx;
            const int32_t pred = hf_ip_predict_by(hf_ip_reach1((uint32_t)y, (uint32_t)ny),
                                               [&](int j) { return box_s[b + j * BXE]; },
                                               small_y);
            const int32_t u = hf_ip_code_element<T, ENCODE, LIN>(
                a, v, pred, ENCODE && own && sampled(c), &cost, &d);
            box_s[b] = u;
            big |= !hf_ip_small(u);
            if (own)
                keep(c, z, y, x, u, d);
        }
    }
    const bool small_x = !__syncthreads_or(big);
    /* pass x, a pair of points a thread: x and (when inside the region) x + 2, both odd. Their
     * neighbours x - 3 .. x + 5 are the box's even columns 2 kx .. 2 kx + 4. */
    for (unsigned j = threadIdx.x; j < RZ * RY * (RX / 4); j += HF_IP_LEVEL_THREADS) {
        const hf_ip_slots<RY, RX / 4> sc(j);
        const int kz = sc.kz, ky = sc.ky, kx = sc.kx;
        const int z = z0 + kz, y = y0 + ky, x = x0 + 1 + 4 * kx;
        if (!(z < z1 && y < y1 && x < x1))
            continue;
        const bool two = x + 2 < x1;
        const uint32_t c[3] = {(uint32_t)z << hs, (uint32_t)y << hs, (uint32_t)x << hs};
        const uint32_t c2[3] = {c[0], c[1], (uint32_t)(x + 2) << hs};
        T v = 0, v2 = 0;
        int32_t d = 0, d2 = 0;
        if (ENCODE) {
            v = value(z, y, x, true);
            if (two)
                v2 = value(z, y, x + 2, true);
        } else {
            if (L1) {   /* staged: the pair side by side in the row's odd half */
                const int2 p = *(const int2 *)&region_s[hf_ip_rslot<RY, RX>(kz, ky, x - x0)];
                d = p.x;
                d2 = p.y;
            } else {
                d = a.delta[hf_ip_pos(a, c[0], c[1], c[2])];
                if (two)
                    d2 = a.delta[hf_ip_pos(a, c2[0], c2[1], c2[2])];
            }
        }
        const int b = (kz * BY + MY + ky) * BXE + 2 * kx;
        const int32_t pred = hf_ip_predict_by(hf_ip_reach1((uint32_t)x, (uint32_t)nx),
                                           [&](int j) { return box_s[b + (j + 3) / 2]; },
                                           small_x);
        const int32_t pred2 =
            two ? hf_ip_predict_by(hf_ip_reach1((uint32_t)(x + 2), (uint32_t)nx),
                                [&](int j) { return box_s[b + 1 + (j + 3) / 2]; }, small_x)
                : 0;
        /* at level 1 a pair lies in one tile */
        const bool cnt = ENCODE && sampled(c), cnt2 = ENCODE && (L1 ? cnt : sampled(c2));
        const int32_t u = hf_ip_code_element<T, ENCODE, LIN>(a, v, pred, cnt, &cost, &d);
        int32_t u2 = 0;
        if (two)
            u2 = hf_ip_code_element<T, ENCODE, LIN>(a, v2, pred2, cnt2, &cost, &d2);
        if (L1) {
            /* both odd x, side by side in the row's odd half (past the region's end: unread) */
            *(int2 *)&region_s[hf_ip_rslot<RY, RX>(kz, ky, x - x0)] =
                make_int2(hf_ip_result<ENCODE>(u, d), hf_ip_result<ENCODE>(u2, d2));
        } else {
            keep(c, z, y, x, u, d);
            if (two)
                keep(c2, z, y, x + 2, u2, d2);
        }
    }
    if (ENCODE) {
        const unsigned long long w = __reduce_add_sync(FULL, cost);
        if ((threadIdx.x & 31u) == 0 && w)
            atomicAdd(&a.plan->cost_ip, w);
    }
    if (!L1)
        return;
    /* level 1: the region's tokens or values, four consecutive elements a thread; they lie in
     * one tile row (tiles' x edges are multiples of 4) */
    __syncthreads();
    for (unsigned j = threadIdx.x; j < RZ * RY * (RX / 4); j += HF_IP_LEVEL_THREADS) {
        const hf_ip_slots<RY, RX / 4> sc(j);
        const int kz = sc.kz, ky = sc.ky, kx = sc.kx;
        const int z = z0 + kz, y = y0 + ky, x = x0 + 4 * kx;
        if (!(z < z1 && y < y1 && x < x1))
            continue;
        const int r = (kz * RY + ky) * RX + 2 * kx;
        const int2 ev = *(const int2 *)&region_s[r], od = *(const int2 *)&region_s[r + RX / 2];
        const int32_t q[4] = {ev.x, od.x, ev.y, od.y};
        const int nv = min(4, x1 - x);
        if (ENCODE)
            hf_ip_emit4(a, hf_ip_pos(a, (uint32_t)z, (uint32_t)y, (uint32_t)x), q, nv);
        else
            hf_ip_put4<T, LIN>(a, z * sz + y * sy + (uint32_t)x, q, nv);
    }
}

/* Regions of rz x ry x rx lattice points in the level of step 2^hs. */
static uint64_t hf_ip_regions(const hf_ip_args &a, unsigned hs, uint32_t rz, uint32_t ry,
                              uint32_t rx)
{
    return (uint64_t)((hf_ip_lattice(a.n[0], hs) + rz - 1) / rz) *
           ((hf_ip_lattice(a.n[1], hs) + ry - 1) / ry) *
           ((hf_ip_lattice(a.n[2], hs) + rx - 1) / rx);
}

/* The level of step 2^hs over regions of RZ x RY x RX lattice points. */
template <typename T, bool ENCODE, bool LIN, int RZ, int RY, int RX>
static void hf_ip_level_launch(const hf_ip_args &a, unsigned hs, hf_ip_part part, cudaStream_t s)
{
    const uint64_t regions = part == HF_IP_SAMPLED
                                 ? hf_sample_runs(&a.g) * hf_ip_per(a.t[0], RZ) *
                                       hf_ip_per(a.t[1], RY) * hf_ip_per(a.t[2], RX)
                                 : hf_ip_regions(a, hs, RZ, RY, RX);
    if (hs == 0)
        hf_ip_level_kernel<T, ENCODE, LIN, RZ, RY, RX, true>
            <<<dim3((unsigned)regions, 1, a.count), HF_IP_LEVEL_THREADS, 0, s>>>(a, hs, part);
    else
        hf_ip_level_kernel<T, ENCODE, LIN, RZ, RY, RX, false>
            <<<dim3((unsigned)regions, 1, a.count), HF_IP_LEVEL_THREADS, 0, s>>>(a, hs, part);
}

/* The predictor: interpolation when tried and cheaper enough than the best Lorenzo order. */
__global__ void hf_enc_ip_pick_kernel(const hf_ip_args a_)
{
    const hf_ip_args a = hf_ip_at<true>(a_);
    hf_enc_plan *P = a.plan;
    const unsigned order = hf_best_order(P->cost, a.g.dim);
    P->pred = hf_ip_tried(a) && hf_ip_wins(P->cost_ip, P->cost[order], a.Q.pwrel) ? HF_PRED_INTERP
                                                                           : order;
}

/* Verbatim values over the reconstruction (the lists kernel checked their positions). */
template <typename T>
__global__ void __launch_bounds__(HF_IP_THREADS) hf_dec_ip_verbatim_kernel(const hf_ip_args a_,
                                                                 const uint8_t *in,
                                                                 hf_layout L)
{
    const hf_ip_args a = hf_ip_at<false>(a_);
    if (a_.dmany) {
        in = a_.dmany[blockIdx.z].in;
        L = a_.dmany[blockIdx.z].L;
    }
    if (a.sc->corrupt)
        return;
    for (uint64_t k = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; k < L.n_verb;
         k += (uint64_t)gridDim.x * blockDim.x) {
        uint64_t z, y, x;
        hf_tile_coords(&a.g, hz_get_u32(in + L.off_verb_pos + 4 * k), &z, &y, &x);
        const uint64_t i = (z * a.g.ny + y) * a.g.nx + x;
        const uint8_t *v = in + L.off_verb_val + sizeof(T) * k;
        dv_put_bits((T *)a.out, i, sizeof(T) == 4 ? hz_get_u32(v) : hz_get_u64(v));
    }
}

static unsigned hf_ip_log2(unsigned v)
{
    unsigned k = 0;
    while ((1u << k) < v)
        k++;
    return k;
}

/* Whether every pass of level lv (step top >> lv) has at most HF_IP_COARSE_MAX elements. */
static bool hf_ip_level_coarse(const hf_geom *g, unsigned lv)
{
    hf_ip_pass P;
    for (unsigned p = 3 * lv; p < 3 * lv + 3; p++) {
        hf_ip_pass_at(g, p, &P);
        if (P.npts > HF_IP_COARSE_MAX)
            return false;
    }
    return true;
}

/* Launches every pass: the chunk's first element and the leading levels whose passes have at
 * most HF_IP_COARSE_MAX elements in one CTA, then a kernel a level; encoding, the choice of
 * predictor once the costs are complete (hf_ip_part). */
template <typename T, bool ENCODE, bool LIN = false>
static cudaError_t hf_ip_launch_passes(hf_ip_args a, cudaStream_t s)
{
    const uint64_t n[3] = {a.g.nz, a.g.ny, a.g.nx}, t[3] = {a.g.tz, a.g.ty, a.g.tx};
    for (int b = 0; b < 3; b++) {
        a.n[b] = (uint32_t)n[b];
        a.t[b] = (uint32_t)t[b];
        a.tshift[b] = hf_ip_log2(a.t[b]);
    }
    a.gty = (uint32_t)a.g.gty;
    a.gtx = (uint32_t)a.g.gtx;
    const unsigned np = hf_ip_passes(&a.g), levels = np / 3;
    unsigned lv = 0;
    while (lv < levels && hf_ip_level_coarse(&a.g, lv))
        lv++;
    a.sh = lv < levels;   /* split: level 1 in hf_ip_level_kernel */
    for (int b = 0; b < 3; b++)
        a.cn[b] = a.sh ? (a.n[b] + 1) / 2 : a.n[b];
    hf_ip_pass_kernel<T, ENCODE><<<dim3(1, 1, a.count), HF_IP_COARSE_THREADS, 0, s>>>(a, 0, 3 * lv,
                                                                                np);
    /* regions by the lattice's shape: a region's slot grids cover every point of its passes
     * only where the axes it leaves out (RZ or RY of 1) have one point. At level 1 (lattice =
     * chunk, whose shape sets the tiles: 3-D chunks have nz > 1, 2-D ones nz = 1, 1-D ones
     * ny = 1 too) a region lies in one tile along z and y and in at most two along x, which
     * hf_ip_level_kernel's smask needs. 3-D regions: 2 x 32 x 64 when encoding, whose z pass
     * codes fewer points in the margins than 4 x 16 x 64 does, which decodes faster; 2 x 8 x 32
     * in a level that would have fewer than HF_IP_FEW_REGIONS of those over the launch's chunks
     * (a fraction of a wave of CTAs, each waiting on memory more than it computes): up to eight
     * times as many CTAs. */
    static_assert(4 <= HF_TILE_Z3 && 32 <= HF_TILE_Y3 && 64 <= 2 * HF_TILE_X3 &&
                      32 <= HF_TILE_2 && 128 <= 2 * HF_TILE_2 && 4096 <= 2 * HF_TILE_N,
                  "level 1's regions and the tiles");
    auto level = [&](unsigned hs, hf_ip_part part) {
        if (hf_ip_lattice(a.n[0], hs) > 1 &&
            hf_ip_regions(a, hs, 2, 32, 64) * a.count < HF_IP_FEW_REGIONS) {
            hf_ip_level_launch<T, ENCODE, LIN, 2, 8, 32>(a, hs, part, s);
        } else if (hf_ip_lattice(a.n[0], hs) > 1) {
            if constexpr (ENCODE)
                hf_ip_level_launch<T, ENCODE, LIN, 2, 32, 64>(a, hs, part, s);
            else
                hf_ip_level_launch<T, ENCODE, LIN, 4, 16, 64>(a, hs, part, s);
        } else if (hf_ip_lattice(a.n[1], hs) > 1)
            hf_ip_level_launch<T, ENCODE, LIN, 1, 32, 128>(a, hs, part, s);
        else
            hf_ip_level_launch<T, ENCODE, LIN, 1, 1, 4096>(a, hs, part, s);
    };
    for (; lv < levels; lv++) {
        const unsigned hs = levels - 1 - lv;   /* the step: hf_ip_top >> lv */
        if (ENCODE && hs == 0) {
            level(0, HF_IP_SAMPLED);
            hf_enc_ip_pick_kernel<<<dim3(1, 1, a.count), 1, 0, s>>>(a);
            level(0, HF_IP_REST);
        } else {
            level(hs, HF_IP_ALL);
        }
    }
    if (ENCODE && !a.sh)   /* the one-CTA kernel coded every point */
        hf_enc_ip_pick_kernel<<<dim3(1, 1, a.count), 1, 0, s>>>(a);
    return cudaGetLastError();
}

static hf_ip_args hf_ip_args_of(const hf_geom *g, const qz_quant *Q, int32_t *u, int32_t *delta)
{
    hf_ip_args a = {};
    a.g = *g;
    a.Q = *Q;
    a.u = u;
    a.delta = delta;
    a.count = 1;
    return a;
}

cudaError_t hf_ip_launch_encode(const hf_enc_args &e, cudaStream_t s)
{
    hf_ip_args a = hf_ip_args_of(&e.g, &e.Q, e.b.ip_u, e.b.ip_delta);
    a.in = e.in;
    a.tok = e.b.tok;
    a.R = e.R;
    a.delta2 = e.b.ip_delta2;
    a.plan = e.b.plan;
    a.many = e.many;
    a.count = e.count;
    /* ABS and REL, the common modes, get the level kernels that know it */
    if (!e.Q.pwrel)
        return e.Q.is_f32 ? hf_ip_launch_passes<float, true, true>(a, s)
                          : hf_ip_launch_passes<double, true, true>(a, s);
    return e.Q.is_f32 ? hf_ip_launch_passes<float, true>(a, s)
                      : hf_ip_launch_passes<double, true>(a, s);
}

cudaError_t hf_ip_launch_decode(const hf_dec_args &d, int sms, cudaStream_t s)
{
    hf_ip_args a = hf_ip_args_of(&d.g, &d.Q, d.delta + d.g.n, d.delta);
    a.out = d.out;
    a.sc = d.sc;
    a.dmany = d.many;
    a.count = d.count;
    /* ABS and REL on format version 3's grid, the common chunks, get the level kernels that
     * know it (qz_decoding) */
    cudaError_t e;
    if (qz_linear_v3(&d.Q))
        e = d.Q.is_f32 ? hf_ip_launch_passes<float, false, true>(a, s)
                       : hf_ip_launch_passes<double, false, true>(a, s);
    else
        e = d.Q.is_f32 ? hf_ip_launch_passes<float, false>(a, s)
                       : hf_ip_launch_passes<double, false>(a, s);
    if (e != cudaSuccess)
        return e;
    unsigned grid = (unsigned)(sms > 0 ? sms : 1) * 4u / d.count;
    const dim3 layers(grid < 2 ? 2 : grid, 1, d.count);
    if (d.Q.is_f32)
        hf_dec_ip_verbatim_kernel<float><<<layers, HF_IP_THREADS, 0, s>>>(a, d.in, d.L);
    else
        hf_dec_ip_verbatim_kernel<double><<<layers, HF_IP_THREADS, 0, s>>>(a, d.in, d.L);
    return cudaGetLastError();
}
