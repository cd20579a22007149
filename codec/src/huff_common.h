/* The Huffman codec's arithmetic, shared verbatim by the CPU reference (huff_cpu.c,
 * huff_decode_cpu.c) and the CUDA kernels (cuda/huffman/): tile geometry, dual-quantisation Lorenzo, the token
 * alphabet, the deterministic length-limited codebook and canonical codes.
 * docs/FORMAT.md, "Huffman payload", describes the bytes these functions produce. */
#ifndef H5ZGPU_HUFF_COMMON_H
#define H5ZGPU_HUFF_COMMON_H

#include "quant.h"

/* Lorenzo prediction runs inside tiles of 16384 elements, so that a GPU block reconstructs one
 * tile by partial sums in shared memory. Measured on the 512^3 Nyx-like fields the tiles cost
 * nothing against whole-chunk Lorenzo (velocity_x REL 1e-2: 23.5 vs 22.9 estimated ratio). */
#define HF_TILE_Z3 16u
#define HF_TILE_Y3 32u
#define HF_TILE_X3 32u
#define HF_TILE_2 128u
#define HF_TILE_N 16384u
/* Tokens are coded in sub-chunks of 4096 elements, each with its bit length in the payload,
 * so that decoding is parallel; runs never cross a sub-chunk. */
#define HF_SUB 4096u
/* Longest code. Measured on the Nyx-like velocity at REL 1e-3 (~470 tokens in use, a long
 * tail), a 12-bit limit costs 6% of the ratio against 15; 15 fits the codebook's nibbles. */
#define HF_MAX_LEN 15u
#define HF_RADIUS_DEFAULT 512u
#define HF_RADIUS_MAX 1024u
#define HF_RUN_MAX 256u        /* longest run one token stands for */
#define HF_MAX_SYMS (2u * HF_RADIUS_MAX + HF_RUN_MAX)   /* HF_PAIR_K^2 = HF_RUN_MAX too */
/* |p| limit: 3-D Lorenzo sums 8 terms, so every delta fits an int32 with room for the markers
 * the decoder uses. */
#define HF_PMAX 268435455.0
#define HF_FORM_CODES 0u        /* every element is one token */
#define HF_FORM_RUNS 1u         /* runs of the commonest token become run tokens */
#define HF_FORM_PAIRS 2u        /* two neighbouring small tokens become one pair token */
/* Pair tokens join tokens 2..2+HF_PAIR_K-1 (deltas -8..7): Huffman spends at least one bit a
 * token, which a peaked distribution (deltas mostly 0 and +-1) wastes; a pair halves that. */
#define HF_PAIR_K 16u
#define HF_PAIR_MIN_RADIUS 9u   /* the radius that makes tokens 2..17 exist */
#define HF_TOK_FILL 0u          /* a fill element whose delta is 0 */
#define HF_TOK_ESCAPE 1u        /* delta in the outlier list */
/* Fixed part of the payload before the codebook. */
#define HF_OFF_CODEBOOK 24u

typedef struct hf_geom {
    uint64_t nz, ny, nx;       /* the chunk folded to 3-D, as the fixed-length codec folds it */
    unsigned tz, ty, tx;       /* tile shape */
    uint64_t gtz, gty, gtx;    /* tiles along each axis */
    uint64_t ntiles, n, nsub;
    unsigned dim;              /* 1, 2 or 3: the highest Lorenzo order the chunk allows */
} hf_geom;

/* The geometry of an array of nz x ny x nx elements coded as dim-dimensional (the tiles of
 * that dimensionality); n below 2^32. */
HZ_HD void hf_geom_set(hf_geom *g, uint64_t nz, uint64_t ny, uint64_t nx, unsigned dim)
{
    g->nz = nz;
    g->ny = ny;
    g->nx = nx;
    g->n = nz * ny * nx;
    g->tz = dim == 3 ? HF_TILE_Z3 : 1u;
    g->ty = dim == 3 ? HF_TILE_Y3 : (dim == 2 ? HF_TILE_2 : 1u);
    g->tx = dim == 3 ? HF_TILE_X3 : (dim == 2 ? HF_TILE_2 : HF_TILE_N);
    g->gtz = (nz + g->tz - 1) / g->tz;
    g->gty = (ny + g->ty - 1) / g->ty;
    g->gtx = (nx + g->tx - 1) / g->tx;
    g->ntiles = g->gtz * g->gty * g->gtx;
    g->nsub = (g->n + HF_SUB - 1) / HF_SUB;
    g->dim = dim;
}

/* Tile t's origin and shape (edge tiles are partial), and where its elements start in the
 * tile-major sequence: the tiles in raster order, each in raster order inside. */
typedef struct hf_tile {
    uint64_t z0, y0, x0, start;
    unsigned ez, ey, ex;
} hf_tile;

HZ_HD void hf_tile_at(const hf_geom *g, uint64_t t, hf_tile *T)
{
    uint64_t tx = t % g->gtx, r = t / g->gtx, ty = r % g->gty, tz = r / g->gty;
    T->z0 = tz * g->tz;
    T->y0 = ty * g->ty;
    T->x0 = tx * g->tx;
    T->ez = (unsigned)(g->nz - T->z0 < g->tz ? g->nz - T->z0 : g->tz);
    T->ey = (unsigned)(g->ny - T->y0 < g->ty ? g->ny - T->y0 : g->ty);
    T->ex = (unsigned)(g->nx - T->x0 < g->tx ? g->nx - T->x0 : g->tx);
    /* tiles before t: full slabs of tile rows, full tile rows, then tiles in this row */
    uint64_t slab = T->z0 * g->ny * g->nx;
    uint64_t row = (uint64_t)T->ez * T->y0 * g->nx;
    uint64_t left = (uint64_t)T->ez * T->ey * T->x0;
    T->start = slab + row + left;
}

/* Tile element e (tile-major, T from hf_tile_at) as a raster index of the chunk. */
HZ_HD uint64_t hf_tile_index(const hf_geom *g, const hf_tile *T, uint64_t e)
{
    const uint64_t x = e % T->ex, r = e / T->ex;
    return ((T->z0 + r / T->ey) * g->ny + T->y0 + r % T->ey) * g->nx + T->x0 + x;
}

/* The writer chooses its predictor from costs over a sample of the tiles (docs/FORMAT.md,
 * "Lorenzo deltas and tokens"), so that one predictor alone runs over the whole chunk: every
 * tile of a chunk of at most HF_SAMPLE_ALL tiles, else one tile in each run of
 * 2^HF_SAMPLE_SHIFT consecutive tiles, at the place a hash of the run's index picks (a fixed
 * place would take the same column of tiles in every row). */
#define HF_SAMPLE_ALL 64u
#define HF_SAMPLE_SHIFT 3u

HZ_HD unsigned hf_sample_place(uint64_t run)
{
    return (uint32_t)((uint32_t)run * 0x9E3779B1u) >> (32u - HF_SAMPLE_SHIFT);
}

HZ_HD int hf_sampled(const hf_geom *g, uint64_t t)
{
    return g->ntiles <= HF_SAMPLE_ALL ||
           (t & ((1u << HF_SAMPLE_SHIFT) - 1u)) == hf_sample_place(t >> HF_SAMPLE_SHIFT);
}

/* The runs of tiles, each holding at most one sampled tile (the last may hold none). */
HZ_HD uint64_t hf_sample_runs(const hf_geom *g)
{
    const uint64_t run = 1u << HF_SAMPLE_SHIFT;
    return g->ntiles <= HF_SAMPLE_ALL ? g->ntiles : (g->ntiles + run - 1u) >> HF_SAMPLE_SHIFT;
}

/* The sampled tile of run k: ntiles or more when the run holds none. */
HZ_HD uint64_t hf_sample_tile(const hf_geom *g, uint64_t k)
{
    return g->ntiles <= HF_SAMPLE_ALL ? k : (k << HF_SAMPLE_SHIFT) + hf_sample_place(k);
}

/* The tile holding the element at chunk coordinates (z, y, x). */
HZ_HD uint64_t hf_tile_of(const hf_geom *g, uint64_t z, uint64_t y, uint64_t x)
{
    return (z / g->tz * g->gty + y / g->ty) * g->gtx + x / g->tx;
}

/* Whether a quantiser's code q (ok: it has one) is within +-HF_PMAX, which puts it in *p. */
HZ_HD int hf_dq_keep(int ok, int64_t q, int32_t *p)
{
    if (!ok || q > HF_PMAX || q < -HF_PMAX)
        return 0;
    *p = (int32_t)q;
    return 1;
}

/* Whether dual quantisation codes the value v (not a fill value): quantisable, with its code
 * within +-HF_PMAX, which goes to *p. Other values are stored verbatim. */
HZ_HD int hf_dq_code(const qz_quant *Q, double v, int32_t *p)
{
    int64_t q = 0;
    const int ok = qz_quantize(Q, v, &q);   /* before q is read */
    return hf_dq_keep(ok, q, p);
}

/* Lorenzo delta of element e = (z ey + y) ex + x of a tile whose codes p are in raster order;
 * neighbours outside the tile count as 0. Order 3 is 3-D Lorenzo, 2 is 2-D Lorenzo in each
 * z-plane, 1 the previous element of the tile's raster sequence: noisy fields (the Nyx-like
 * temperature) lose less to the lower orders, which add fewer noisy terms. */
HZ_HD int64_t hf_lorenzo(const int32_t *p, unsigned order, unsigned ey, unsigned ex, unsigned z,
                         unsigned y, unsigned x, uint64_t e)
{
#define HFP(zz, yy, xx) ((int64_t)p[((uint64_t)(zz) * ey + (yy)) * ex + (xx)])
    int64_t s = p[e];
    if (order == 1)
        return e ? s - p[e - 1] : s;
    if (x) s -= HFP(z, y, x - 1);
    if (y) s -= HFP(z, y - 1, x);
    if (x && y) s += HFP(z, y - 1, x - 1);
    if (order == 3) {
        if (z) s -= HFP(z - 1, y, x);
        if (x && z) s += HFP(z - 1, y, x - 1);
        if (y && z) s += HFP(z - 1, y - 1, x);
        if (x && y && z) s -= HFP(z - 1, y - 1, x - 1);
    }
#undef HFP
    return s;
}

/* The Lorenzo order with the smallest cost (cost[o] for order o = 1..dim), ties to the higher. */
HZ_HD unsigned hf_best_order(const unsigned long long *cost, unsigned dim)
{
    unsigned order = dim;
    for (unsigned o = dim - 1; o >= 1; o--)
        if (cost[o] < cost[order])
            order = o;
    return order;
}

/* hz_zigzag of a 32-bit delta. */
HZ_HD uint32_t hf_zigzag32(int32_t d)
{
    return ((uint32_t)d << 1) ^ (uint32_t)(d >> 31);
}

/* hz_unzigzag of a token's 32-bit code. */
HZ_HD int32_t hf_unzigzag32(uint32_t u)
{
    return (int32_t)(u >> 1) ^ -(int32_t)(u & 1u);
}

/* Token of a delta: 2 + zigzag(d) when that is below 2R, else the escape. */
HZ_HD unsigned hf_delta_token(int64_t d, unsigned R)
{
    uint64_t z = hz_zigzag(d);
    return z < 2u * R - 2u ? (unsigned)z + 2u : HF_TOK_ESCAPE;
}

/* Bits of one sub-chunk never exceed HF_SUB * HF_MAX_LEN = 61440: a u16 holds them. */
HZ_HD uint64_t hf_nsub(uint64_t n)
{
    return (n + HF_SUB - 1) / HF_SUB;
}

HZ_HD uint64_t hf_pad4(uint64_t v)
{
    return (v + 3u) & ~(uint64_t)3u;
}

/* Bytes of a stored codebook: u16 m0 and m1, then the nibbles of tokens 0..m0-1 and of tokens
 * 2R..2R+m1-1 (the run or pair tokens), so a chunk that uses few tokens stores few. */
HZ_HD uint64_t hf_codebook_size(unsigned m0, unsigned m1)
{
    return 4u + (m0 + m1 + 1u) / 2u;
}

/* Run tokens count down from the longest run, which smooth chunks use most: 2R + 256 - L. */
HZ_HD unsigned hf_run_token(unsigned R, unsigned run)
{
    return 2u * R + HF_RUN_MAX - run;
}

/* The low len bits of code in reverse order (the stream is read from its low bits up). */
HZ_HD unsigned hf_reverse(unsigned code, unsigned len)
{
    unsigned r = code & 0xFFFFu;   /* len <= 16: the low 16 bits reversed, then the top len */
    r = (r & 0x5555u) << 1 | (r >> 1 & 0x5555u);
    r = (r & 0x3333u) << 2 | (r >> 2 & 0x3333u);
    r = (r & 0x0F0Fu) << 4 | (r >> 4 & 0x0F0Fu);
    r = (r & 0x00FFu) << 8 | (r >> 8 & 0x00FFu);
    return r >> (16u - len);
}

/* The two-queue Huffman construction over m >= 2 leaves already sorted by (count, token)
 * ascending, w[i] the weight of leaf i: nodes 0..m-1 are the leaves, m..2m-2 the internal nodes
 * in creation order (nondecreasing weight); par[v] receives each node's parent, nw[i] internal
 * node m+i's weight. Ties take the leaf first. Weights are token counts, which sum to at most a
 * chunk's elements (below 2^32, hf_geom_init): 32 bits hold every sum, and only the root's, which
 * no step compares, can reach the empty queue's mark. The two queues' heads are kept two deep
 * in registers, so each step's choice waits on no load, and the step is written without
 * branches: both queues' next heads are loaded, and the choice selects. */
HZ_HD void hf_merge(const uint32_t *w, unsigned m, uint32_t *par, uint32_t *nw)
{
    const uint32_t none = 0xFFFFFFFFu;
    unsigned li = 0, ii = 0;   /* the next leaf and the next internal node (m + ii) to take */
    uint32_t l0 = w[0], l1 = w[1], i0 = none, i1 = none;
    for (unsigned k = 0; k + 1 < m; k++) {   /* makes internal node m + k */
        uint32_t sum = 0;
        for (int j = 0; j < 2; j++) {
            const int leaf = li < m && l0 <= i0;
            const uint32_t l2 = li + 2 < m ? w[li + 2] : none;
            const uint32_t i2 = ii + 2 < k ? nw[ii + 2] : none;
            par[leaf ? li : m + ii] = m + k;
            sum += leaf ? l0 : i0;
            l0 = leaf ? l1 : l0;
            l1 = leaf ? l2 : l1;
            i0 = leaf ? i0 : i1;
            i1 = leaf ? i1 : i2;
            li += (unsigned)leaf;
            ii += (unsigned)!leaf;
        }
        nw[k] = sum;
        i0 = ii == k ? sum : i0;   /* the queue was empty: the new node heads it */
        i1 = ii + 1 == k ? sum : i1;
    }
}

/* r splits (0 < r < 2^h - 1, h = i - 1 - d) in K.3's order below one leaf at depth d, which the
 * caller took off count[d]: the leaf splits, then its first child's subtree fills down to depth
 * i - 1 (2^(h-1) - 1 splits) before its second child splits. */
HZ_HD void hf_fold_part(unsigned *count, unsigned d, unsigned i, uint64_t r)
{
    while (r > 0) {
        r--;
        d++;   /* two children at depth d */
        const unsigned h = i - 1u - d;
        const uint64_t fill = ((uint64_t)1 << h) - 1u;
        if (r >= fill) {   /* the first child's subtree fills; the second goes on */
            count[i - 1u] += (unsigned)((uint64_t)1 << h);
            r -= fill;
        } else {           /* the first goes on; the second stays a leaf */
            count[d]++;
        }
    }
    count[d]++;
}

/* Folds leaf depths above HF_MAX_LEN back as JPEG does (ITU T.81 K.3: two leaves of the deepest
 * level go up one level and down below the deepest leaf at least two levels above, which
 * splits, keeping the code complete). count[l] is the number of leaves at depth l (l < 64),
 * maxd the deepest. K.3 moves a pair at a time; here each level's pairs move at once, in
 * closed form: the splits take the deepest leaves first, so each leaf at depth d <= i - 2 takes
 * 2^(i-1-d) - 1 of them, its subtree filled down to depth i - 1, before the next is touched, and
 * the last one touched takes the rest (hf_fold_part). One thread of the GPU's codebook kernel
 * runs this: K.3's thousands of steps on deep trees took most of that kernel's 0.47 ms on
 * velocity_x at REL 1e-4. huff_fold_test checks the two agree. */
HZ_HD void hf_fold(unsigned *count, unsigned maxd)
{
    for (unsigned i = maxd; i > HF_MAX_LEN; i--) {
        uint64_t pairs = count[i] / 2u;
        count[i - 1u] += (unsigned)pairs;
        count[i] = 0;
        for (unsigned d = i - 2u; pairs > 0; d--) {
            const unsigned h = i - 1u - d;
            const uint64_t fill = ((uint64_t)1 << h) - 1u;
            uint64_t full = pairs / fill;
            full = full < count[d] ? full : count[d];
            count[d] -= (unsigned)full;
            count[i - 1u] += (unsigned)(full << h);
            pairs -= full * fill;
            if (pairs > 0 && count[d] > 0) {
                count[d]--;
                hf_fold_part(count, d, i, pairs);
                pairs = 0;
            }
            if (d == 0)
                break;   /* a complete code always has room: not reached */
        }
    }
}

/* Code lengths over m leaves already sorted by (count, token) ascending: order[i] is a token,
 * w[i] its weight. par and depth are scratch of 2m entries, nw of m. Depths are capped at 63
 * (a tree that deep needs more than 2^32 tokens). The folded lengths, shortest first, go to the
 * leaves from the most frequent down. A lone leaf gets length 1. Writes len[order[i]]. */
HZ_HD void hf_build_lengths(const uint16_t *order, const uint32_t *w, unsigned m, uint8_t *len,
                            uint32_t *par, uint32_t *nw, uint8_t *depth)
{
    unsigned count[64] = {0};
    if (m <= 1) {
        if (m)
            len[order[0]] = 1;
        return;
    }
    hf_merge(w, m, par, nw);
    unsigned root = 2u * m - 2u, maxd = 0;
    depth[root] = 0;
    for (unsigned v = root; v-- > 0;) {
        unsigned d = depth[par[v]] + 1u;
        depth[v] = (uint8_t)(d > 63u ? 63u : d);
        if (v < m) {
            count[depth[v]]++;
            maxd = depth[v] > maxd ? depth[v] : maxd;
        }
    }
    hf_fold(count, maxd);
    unsigned l = 1;
    for (unsigned k = m; k-- > 0;) {
        while (count[l] == 0)
            l++;
        count[l]--;
        len[order[k]] = (uint8_t)l;
    }
}

/* Canonical codes (deflate's assignment: by length, then token), stored bit-reversed because
 * the stream is written least significant bit first. Returns 0 when the lengths over-fill the
 * code space (a damaged codebook). */
HZ_HD int hf_canonical(const uint8_t *len, unsigned m, uint16_t *code)
{
    unsigned count[HF_MAX_LEN + 1] = {0}, next[HF_MAX_LEN + 1];
    for (unsigned s = 0; s < m; s++)
        count[len[s]]++;
    count[0] = 0;
    unsigned c = 0, space = 0;
    for (unsigned l = 1; l <= HF_MAX_LEN; l++) {
        c = (c + count[l - 1]) << 1;
        next[l] = c;
        space += count[l] << (HF_MAX_LEN - l);
    }
    if (space > (1u << HF_MAX_LEN))
        return 0;
    for (unsigned s = 0; s < m; s++)
        if (len[s])
            code[s] = (uint16_t)hf_reverse(next[len[s]]++, len[s]);
    return 1;
}

/* Decoder table entry for the next HF_MAX_LEN stream bits: token | length << 12 (tokens are
 * below HF_MAX_SYMS < 4096); 0 = no code. */
HZ_HD uint16_t hf_table_entry(unsigned token, unsigned len)
{
    return (uint16_t)(token | (len << 12));
}

/* Reads the 8 stream bytes at byte offset b of a stream of nbytes (zeros past its end). */
HZ_HD uint64_t hf_peek64(const uint8_t *s, uint64_t nbytes, uint64_t b)
{
    uint64_t v = 0;
    if (b + 8 <= nbytes)
        return hz_get_u64(s + b);
    for (unsigned i = 0; i < 8 && b + i < nbytes; i++)
        v |= (uint64_t)s[b + i] << (8 * i);
    return v;
}

#endif
