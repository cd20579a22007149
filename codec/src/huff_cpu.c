/* The Huffman codec, CPU reference. Encoding: dual quantisation (the shared quantiser,
 * quant.h, then integer Lorenzo deltas inside tiles), one token per delta, a histogram, a
 * length-limited canonical codebook and a bit stream in sub-chunks; where the commonest token
 * dominates, its runs become run tokens (cuSZ+'s run-length path). Decoding reverses it with
 * partial sums; interpolation (huff_interp.c) may replace Lorenzo. docs/FORMAT.md, "Huffman
 * payload". */
#include "huff.h"

#include "elements.h"
#include "error.h"
#include "geom.h"
#include "huff_ans.h"
#include "huff_axes.h"
#include "huff_interp.h"
#include "parallel.h"

#include <stdlib.h>
#include <string.h>

int hf_geom_init(hf_geom *g, unsigned rank, const uint64_t *dims)
{
    hz_fold f;
    if (hz_fold_dims(&f, rank, dims) != 0)
        return -1;
    memset(g, 0, sizeof *g);
    if (f.nz * f.ny * f.nx > 0xFFFFFFFFu)
        return -1;
    hf_geom_set(g, f.nz, f.ny, f.nx, f.dim);
    return 0;
}

unsigned hf_radius(unsigned asked)
{
    return asked == 0 ? HF_RADIUS_DEFAULT : asked;
}

/* ---- encoder ------------------------------------------------------------------------------ */

typedef struct hf_book {
    unsigned m;                  /* tokens 0..m-1 have their length here */
    unsigned m0, m1;             /* stored: tokens 0..m0-1, and 2R..2R+m1-1 */
    uint8_t len[HF_MAX_SYMS];
    uint16_t code[HF_MAX_SYMS];
    uint64_t bits;               /* stream bits of the whole chunk */
} hf_book;

/* One encoding; the tasks below run over tiles or sub-chunks on hz_parallel_for's threads. */
typedef struct hf_enc {
    const hf_geom *g;
    const qz_quant *Q;
    const void *in;
    unsigned R, order, form, rs;
    int32_t *p;             /* quantisation code of each element, tile-major (0: not coded);
                             * with interpolation, each element's delta */
    uint8_t *kind;          /* 0 coded, 1 fill, 2 verbatim */
    uint16_t *tok;          /* one token per element, tile-major */
    uint64_t *run_cost;     /* 4 per sample run k: the cost of Lorenzo order o over its tile at
                             * [4k + o], the tile's elements at [4k] (all 0: no tile) */
    uint64_t *tile_out;     /* outliers, then verbatim values, per tile: counts, then offsets */
    uint64_t *tile_verb;
    uint8_t *out_pos, *out_delta, *verb_pos, *verb_val;  /* where the lists go in the payload */
    const hf_book *B;
    uint64_t *sub_bit;      /* bit length of each sub-chunk, then its first bit */
    uint8_t *stream;
} hf_enc;

/* Tile t's element e as a chunk index. */
static uint64_t chunk_index(const hf_geom *g, const hf_tile *T, uint64_t e)
{
    uint64_t x = e % T->ex, r = e / T->ex;
    return ((T->z0 + r / T->ey) * g->ny + T->y0 + r % T->ey) * g->nx + T->x0 + x;
}

/* Quantises tile t: each element's code and kind. */
static void quantise_tile(hf_enc *E, uint64_t t, hf_tile *T)
{
    const hf_geom *g = E->g;
    hf_tile_at(g, t, T);
    int32_t *p = E->p + T->start;
    uint8_t *kind = E->kind + T->start;
    const uint64_t tn = (uint64_t)T->ez * T->ey * T->ex;
    for (uint64_t e = 0; e < tn; e++) {
        uint64_t bits;
        double v = hz_element(E->in, E->Q->is_f32, chunk_index(g, T, e), &bits);
        p[e] = 0;
        if (qz_is_fill(E->Q, bits))
            kind[e] = 1;
        else
            kind[e] = hf_dq_code(E->Q, v, &p[e]) ? 0 : 2; /* 2: verbatim; predicts as 0 */
    }
}

/* Quantises the tile of sample run k (hf_sample_tile) and its cost under each Lorenzo order
 * the chunk allows: the sum of the deltas' zigzag bit lengths. */
static void sample_task(void *ctx, uint64_t k)
{
    hf_enc *E = ctx;
    const hf_geom *g = E->g;
    const uint64_t t = hf_sample_tile(g, k);
    uint64_t *cost = E->run_cost + 4 * k;
    cost[0] = cost[1] = cost[2] = cost[3] = 0;
    if (t >= g->ntiles)
        return; /* a last run without a sample */
    hf_tile T;
    quantise_tile(E, t, &T);
    const int32_t *p = E->p + T.start;
    cost[0] = (uint64_t)T.ez * T.ey * T.ex; /* the elements the costs count */
    uint64_t e = 0;
    for (unsigned z = 0; z < T.ez; z++)
        for (unsigned y = 0; y < T.ey; y++)
            for (unsigned x = 0; x < T.ex; x++, e++)
                for (unsigned o = 1; o <= g->dim; o++)
                    cost[o] += hz_bitlen(hz_zigzag(hf_lorenzo(p, o, T.ey, T.ex, z, y, x, e)));
}

/* Quantises tile t when the sample left it: a Lorenzo order needs every tile's codes. */
static void rest_task(void *ctx, uint64_t t)
{
    hf_enc *E = ctx;
    hf_tile T;
    if (!hf_sampled(E->g, t))
        quantise_tile(E, t, &T);
}

/* The delta and token of tile element e under the chosen order. */
static unsigned token_at(const hf_enc *E, const hf_tile *T, uint64_t e, int64_t *d)
{
    const int32_t *p = E->p + T->start;
    unsigned x = (unsigned)(e % T->ex), y = (unsigned)(e / T->ex % T->ey);
    unsigned z = (unsigned)(e / T->ex / T->ey);
    *d = E->order == HF_PRED_INTERP ? p[e] : hf_lorenzo(p, E->order, T->ey, T->ex, z, y, x, e);
    return E->kind[T->start + e] == 1 && *d == 0 ? HF_TOK_FILL : hf_delta_token(*d, E->R);
}

/* Tokens of tile t, and how many outliers and verbatim values it has. */
static void tokenise_task(void *ctx, uint64_t t)
{
    hf_enc *E = ctx;
    hf_tile T;
    hf_tile_at(E->g, t, &T);
    uint64_t tn = (uint64_t)T.ez * T.ey * T.ex, nout = 0, nverb = 0;
    for (uint64_t e = 0; e < tn; e++) {
        int64_t d;
        unsigned tk = token_at(E, &T, e, &d);
        E->tok[T.start + e] = (uint16_t)tk;
        nout += tk == HF_TOK_ESCAPE;
        nverb += E->kind[T.start + e] != 0 && tk != HF_TOK_FILL;
    }
    E->tile_out[t] = nout;
    E->tile_verb[t] = nverb;
}

/* Tile t's outliers and verbatim values, at its offsets in the payload's lists. */
static void lists_task(void *ctx, uint64_t t)
{
    hf_enc *E = ctx;
    hf_tile T;
    hf_tile_at(E->g, t, &T);
    uint64_t tn = (uint64_t)T.ez * T.ey * T.ex, ko = E->tile_out[t], kv = E->tile_verb[t];
    unsigned esize = E->Q->is_f32 ? 4u : 8u;
    for (uint64_t e = 0; e < tn; e++) {
        uint64_t pos = T.start + e, bits;
        unsigned tk = E->tok[pos];
        if (tk == HF_TOK_ESCAPE) {
            int64_t d;
            token_at(E, &T, e, &d);
            hz_put_u32(E->out_pos + 4 * ko, (uint32_t)pos);
            hz_put_u32(E->out_delta + 4 * ko++, (uint32_t)(int32_t)d);
        }
        if (E->kind[pos] != 0 && tk != HF_TOK_FILL) {
            hz_element(E->in, E->Q->is_f32, chunk_index(E->g, &T, e), &bits);
            hz_put_u32(E->verb_pos + 4 * kv, (uint32_t)pos);
            if (esize == 4)
                hz_put_u32(E->verb_val + 4 * kv++, (uint32_t)bits);
            else
                hz_put_u64(E->verb_val + 8 * kv++, bits);
        }
    }
}

/* Calls emit(ctx, token) for the tokens of sub-chunk s under a form. */
typedef void (*hf_emit)(void *ctx, unsigned token);

static void sub_tokens(const uint16_t *tok, uint64_t n, uint64_t s, unsigned form, unsigned rs,
                       unsigned R, hf_emit emit, void *ctx)
{
    uint64_t i = s * HF_SUB, end = i + HF_SUB < n ? i + HF_SUB : n;
    while (i < end) {
        if (form == HF_FORM_RUNS && tok[i] == rs) {
            uint64_t j = i;
            while (j < end && j - i < HF_RUN_MAX && tok[j] == rs)
                j++;
            emit(ctx, hf_run_token(R, (unsigned)(j - i)));
            i = j;
        } else if (form == HF_FORM_PAIRS && i + 1 < end && tok[i] - 2u < HF_PAIR_K &&
                   tok[i + 1] - 2u < HF_PAIR_K) {
            emit(ctx, 2u * R + (tok[i] - 2u) * HF_PAIR_K + (tok[i + 1] - 2u));
            i += 2;
        } else {
            emit(ctx, tok[i++]);
        }
    }
}

static void count_token(void *ctx, unsigned token)
{
    ((uint64_t *)ctx)[token]++;
}

typedef struct hf_key {
    uint64_t count;
    unsigned token;
} hf_key;

static int key_cmp(const void *a, const void *b)
{
    const hf_key *x = (const hf_key *)a, *y = (const hf_key *)b;
    if (x->count != y->count)
        return x->count < y->count ? -1 : 1;
    return x->token < y->token ? -1 : (x->token > y->token);
}

/* The codebook of a histogram over nsym tokens: sorted by (count, token), two-queue Huffman,
 * canonical codes. */
static void build_book(const uint64_t *hist, unsigned nsym, unsigned R, hf_book *B)
{
    hf_key keys[HF_MAX_SYMS];
    uint16_t order[HF_MAX_SYMS];
    uint32_t w[HF_MAX_SYMS], nw[HF_MAX_SYMS];
    uint32_t par[2 * HF_MAX_SYMS];
    uint8_t depth[2 * HF_MAX_SYMS];
    unsigned m = 0;
    memset(B->len, 0, sizeof B->len);
    B->m = 0;
    B->bits = 0;
    for (unsigned s = 0; s < nsym; s++)
        if (hist[s]) {
            keys[m].count = hist[s];
            keys[m++].token = s;
            B->m = s + 1;
        }
    qsort(keys, m, sizeof keys[0], key_cmp);
    for (unsigned i = 0; i < m; i++) {
        order[i] = (uint16_t)keys[i].token;
        w[i] = (uint32_t)keys[i].count;   /* at most the chunk's elements (hf_merge) */
    }
    hf_build_lengths(order, w, m, B->len, par, nw, depth);
    hf_canonical(B->len, B->m, B->code);
    B->m1 = B->m > 2 * R ? B->m - 2 * R : 0;
    B->m0 = 0;
    for (unsigned s = 0; s < B->m && s < 2 * R; s++) {
        B->bits += hist[s] * B->len[s];
        B->m0 = B->len[s] ? s + 1 : B->m0;
    }
    for (unsigned s = 2 * R; s < B->m; s++)
        B->bits += hist[s] * B->len[s];
}

static uint64_t payload_size(const hf_geom *g, unsigned esize, const hf_book *B, uint64_t n_out,
                             uint64_t n_verb)
{
    return HF_OFF_CODEBOOK + hf_pad4(hf_codebook_size(B->m0, B->m1)) + hf_pad4(2 * g->nsub) +
           hf_pad4((B->bits + 7) / 8) + 8 * n_out + (4 + esize) * n_verb;
}

/* Writes one sub-chunk's codes from bit `bit` on, least significant bit first. The bytes it
 * may share with its neighbours, its first and its last, are merged atomically. */
typedef struct hf_writer {
    uint8_t *s;
    const hf_book *B;
    uint64_t acc, first, byte, bits;   /* bits: stream bits counted (sub_bits_task) */
    unsigned nacc;
} hf_writer;

static void write_token(void *ctx, unsigned token)
{
    hf_writer *W = ctx;
    W->acc |= (uint64_t)W->B->code[token] << W->nacc;
    W->nacc += W->B->len[token];
    while (W->nacc >= 8) {
        if (W->byte == W->first)
            __atomic_fetch_or(&W->s[W->byte], (uint8_t)W->acc, __ATOMIC_RELAXED);
        else
            W->s[W->byte] = (uint8_t)W->acc;
        W->byte++;
        W->acc >>= 8;
        W->nacc -= 8;
    }
}

static void add_bits(void *ctx, unsigned token)
{
    hf_writer *W = ctx;
    W->bits += W->B->len[token];
}

static void sub_bits_task(void *ctx, uint64_t s)
{
    hf_enc *E = ctx;
    hf_writer W = {.B = E->B};
    sub_tokens(E->tok, E->g->n, s, E->form, E->rs, E->R, add_bits, &W);
    E->sub_bit[s] = W.bits;
}

static void write_task(void *ctx, uint64_t s)
{
    hf_enc *E = ctx;
    uint64_t bit = E->sub_bit[s];
    hf_writer W = {.s = E->stream, .B = E->B, .first = bit >> 3, .byte = bit >> 3,
                   .nacc = (unsigned)(bit & 7)};
    sub_tokens(E->tok, E->g->n, s, E->form, E->rs, E->R, write_token, &W);
    if (W.nacc)
        __atomic_fetch_or(&W.s[W.byte], (uint8_t)W.acc, __ATOMIC_RELAXED);
}

/* Exclusive prefix sum in place; returns the total. */
static uint64_t exclusive_sum(uint64_t *v, uint64_t n)
{
    uint64_t run = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t c = v[i];
        v[i] = run;
        run += c;
    }
    return run;
}

/* Interpolation replaces the chosen Lorenzo order when its cost is enough lower: its deltas
 * and kinds then take the place of the quantisation codes (docs/FORMAT.md, "Interpolation"). */
static h5zgpu_status try_interpolation(hf_enc *E, uint64_t lorenzo_cost)
{
    const hf_geom *g = E->g;
    int32_t *delta = malloc(g->n * sizeof *delta);
    uint8_t *kind = malloc(g->n);
    uint64_t cost = delta && kind ? hf_ip_encode_cpu(g, E->Q, E->in, delta, kind) : UINT64_MAX;
    if (cost == UINT64_MAX) {
        free(delta);
        free(kind);
        return hz_fail(H5ZGPU_E_NOMEM, "out of host memory for a %llu-element chunk",
                       (unsigned long long)g->n);
    }
    if (hf_ip_wins(cost, lorenzo_cost, E->Q->pwrel)) {
        int32_t *p = E->p;
        uint8_t *k = E->kind;
        E->p = delta;
        E->kind = kind;
        E->order = HF_PRED_INTERP;
        delta = p;
        kind = k;
    }
    free(delta);
    free(kind);
    return H5ZGPU_OK;
}

h5zgpu_status hf_encode_cpu(const hf_geom *g, const qz_quant *Q, unsigned radius, const void *in,
                            uint8_t *out, uint64_t cap, uint64_t *len)
{
    return hf_encode_traced(g, Q, radius, in, out, cap, len, NULL);
}

/* The ANS form's tables, sub-chunk table and stream at out + o; returns the offset after them. */
static uint64_t put_ans_stream(const hf_ans_tabs *A, uint64_t nsub, const uint16_t *words,
                               const uint64_t *nwords, uint8_t *out, uint64_t o)
{
    const uint64_t groups = hf_ans_groups(nsub);
    uint64_t busy = 0;
    for (uint64_t s = 0; s < nsub; s++)
        busy += nwords[s] != 0;
    hz_put_u32(out + o, (uint32_t)busy);
    o += 4;
    hf_ans_put_tables(A, out + o);
    o += hf_ans_table_bytes(A);
    uint8_t *level0 = out + o;
    o += hf_pad4((groups + 7) / 8);
    for (uint64_t g = 0; g < groups; g++) {
        uint64_t mask = 0;
        for (uint64_t s = g * HF_ANS_GROUP; s < nsub && s < (g + 1) * HF_ANS_GROUP; s++)
            mask |= (uint64_t)(nwords[s] != 0) << (s % HF_ANS_GROUP);
        if (mask) {
            level0[g / 8] |= (uint8_t)(1u << (g % 8));
            hz_put_u64(out + o, mask);
            o += 8;
        }
    }
    for (uint64_t s = 0, k = 0; s < nsub; s++)
        if (nwords[s])
            hz_put_u16(out + o + 2 * k++, (uint32_t)nwords[s]);
    o += hf_pad4(2 * busy);
    for (uint64_t s = 0; s < nsub; s++)
        for (uint64_t k = 0; k < nwords[s]; k++, o += 2)
            hz_put_u16(out + o, words[s * HF_ANS_SUB_WORDS + k]);
    return hf_pad4(o);
}

/* A Huffman form's codebook, sub-chunk table and stream at out + o (the sub-chunks' lengths
 * into T); returns the offset after them. */
static uint64_t put_huffman_stream(hf_enc *E, uint8_t *out, uint64_t o, hf_trace *T)
{
    const hf_geom *g = E->g;
    const unsigned R = E->R;
    hz_put_u16(out + o, E->B->m0);
    hz_put_u16(out + o + 2, E->B->m1);
    for (unsigned k = 0; k < E->B->m0 + E->B->m1; k++) {
        unsigned t = k < E->B->m0 ? k : 2 * R + (k - E->B->m0);
        out[o + 4 + k / 2] |= (uint8_t)(E->B->len[t] << (4 * (k & 1)));
    }
    o += hf_pad4(hf_codebook_size(E->B->m0, E->B->m1));
    hz_parallel_for(g->nsub, sub_bits_task, E);
    for (uint64_t s = 0; s < g->nsub; s++) {
        hz_put_u16(out + o + 2 * s, (uint32_t)E->sub_bit[s]);
        if (T && T->subbits)
            T->subbits[s] = (uint32_t)E->sub_bit[s];
    }
    uint64_t bits = exclusive_sum(E->sub_bit, g->nsub);
    o += hf_pad4(2 * g->nsub);
    E->stream = out + o;
    hz_parallel_for(g->nsub, write_task, E);
    o += hf_pad4((bits + 7) / 8);
    return o;
}

/* The payload of the coded array g (the chunk's folded axes in the order axes). */
static h5zgpu_status encode_coded(const hf_geom *g, const qz_quant *Q, unsigned R,
                                  const void *in, unsigned axes, uint8_t *out, uint64_t cap,
                                  uint64_t *len, hf_trace *T)
{
    const unsigned esize = Q->is_f32 ? 4u : 8u;
    const uint64_t n = g->n, nsub_ans = hf_ans_nsub(n);
    hf_enc E = {.g = g, .Q = Q, .in = in, .R = R};
    uint64_t *hist = calloc(HF_MAX_SYMS, sizeof *hist);
    hf_book *B0 = malloc(sizeof *B0), *B1 = malloc(sizeof *B1);
    hf_ans_tabs *A = malloc(sizeof *A);
    uint16_t *words = malloc(nsub_ans * HF_ANS_SUB_WORDS * sizeof *words);
    uint64_t *nwords = malloc(nsub_ans * sizeof *nwords);
    E.p = malloc(n * sizeof *E.p);
    E.kind = malloc(n);
    E.tok = malloc(n * sizeof *E.tok);
    E.run_cost = malloc(4 * hf_sample_runs(g) * sizeof *E.run_cost);
    E.tile_out = malloc(g->ntiles * sizeof *E.tile_out);
    E.tile_verb = malloc(g->ntiles * sizeof *E.tile_verb);
    E.sub_bit = malloc(g->nsub * sizeof *E.sub_bit);
    h5zgpu_status st = H5ZGPU_OK;
    if (!E.p || !E.kind || !hist || !B0 || !B1 || !E.tok || !E.run_cost || !E.tile_out ||
        !E.tile_verb || !E.sub_bit || !A || !words || !nwords) {
        st = hz_fail(H5ZGPU_E_NOMEM, "out of host memory for a %llu-element chunk",
                     (unsigned long long)n);
        goto done;
    }
    const uint64_t runs = hf_sample_runs(g);
    hz_parallel_for(runs, sample_task, &E);
    unsigned long long cost[4] = {0}; /* over the sampled tiles; [0]: their elements */
    for (uint64_t k = 0; k < runs; k++)
        for (unsigned o = 0; o <= g->dim; o++)
            cost[o] += E.run_cost[4 * k + o];
    E.order = hf_best_order(cost, g->dim);
    if (hf_ip_worth_trying(cost[E.order], cost[0], Q->pwrel) &&
        (st = try_interpolation(&E, cost[E.order])) != H5ZGPU_OK)
        goto done;
    if (E.order != HF_PRED_INTERP)
        hz_parallel_for(g->ntiles, rest_task, &E);
    hz_parallel_for(g->ntiles, tokenise_task, &E);
    uint64_t n_out = exclusive_sum(E.tile_out, g->ntiles);
    uint64_t n_verb = exclusive_sum(E.tile_verb, g->ntiles);

    /* form 0: every element a token */
    for (uint64_t i = 0; i < n; i++)
        hist[E.tok[i]]++;
    unsigned rs = 0;
    for (unsigned s = 1; s < 2 * R; s++)
        if (hist[s] > hist[rs])
            rs = s;
    if (T) {
        memcpy(T->cost, cost, sizeof cost);
        T->pred = E.order;
        if (T->tok)
            memcpy(T->tok, E.tok, n * sizeof *E.tok);
        T->n_out = n_out;
        T->n_verb = n_verb;
        memcpy(T->hist, hist, sizeof T->hist);
    }
    build_book(hist, 2 * R, R, B0);
    E.B = B0;
    E.form = HF_FORM_CODES;
    uint64_t size = payload_size(g, esize, B0, n_out, n_verb);
    /* form 1 when the commonest token is at least half of them (its runs become run tokens),
     * form 2 when the small tokens are (neighbouring pairs become pair tokens): each is built
     * when it may win, and kept when strictly smaller */
    uint64_t small = 0;
    for (unsigned t = 2; t < 2 + HF_PAIR_K && t < 2 * R; t++)
        small += hist[t];
    int may[3] = {0, 2 * hist[rs] >= n, R >= HF_PAIR_MIN_RADIUS && 2 * small >= n};
    for (unsigned f = HF_FORM_RUNS; f <= HF_FORM_PAIRS; f++) {
        if (!may[f])
            continue;
        hf_book *Bf = E.B == B1 ? B0 : B1; /* the one not holding the best so far */
        memset(hist, 0, HF_MAX_SYMS * sizeof *hist);
        for (uint64_t s = 0; s < g->nsub; s++)
            sub_tokens(E.tok, n, s, f, rs, R, count_token, hist);
        build_book(hist, 2 * R + HF_RUN_MAX, R, Bf);
        uint64_t sf = payload_size(g, esize, Bf, n_out, n_verb);
        if (sf < size) {
            E.B = Bf;
            E.form = f;
            size = sf;
        }
    }
    /* the ANS form, kept when strictly smaller than the best Huffman form */
    hf_ans_tables(g, E.order, R, E.tok, A);
    const uint64_t nw = hf_ans_encode_cpu(g, E.order, A, E.tok, rs, words, nwords);
    uint64_t busy = 0, busy_groups = 0;
    for (uint64_t first = 0; first < nsub_ans; first += HF_ANS_GROUP) {
        uint64_t in_group = 0;
        for (uint64_t s = first; s < nsub_ans && s < first + HF_ANS_GROUP; s++)
            in_group += nwords[s] != 0;
        busy += in_group;
        busy_groups += in_group != 0;
    }
    const uint64_t size_ans = HF_ANS_OFF_TABLES + hf_ans_table_bytes(A) +
                              hf_ans_index_bytes(nsub_ans, busy_groups, busy) + hf_pad4(2 * nw) +
                              8 * n_out + (4 + esize) * n_verb;
    if (size_ans < size) {
        E.form = HF_FORM_ANS;
        size = size_ans;
    }
    E.rs = E.form == HF_FORM_RUNS || E.form == HF_FORM_ANS ? rs : 0;
    if (T) {
        T->form = E.form;
        T->rs = E.rs;
        memcpy(T->len, E.B->len, sizeof T->len);
        T->size = size;
        T->axes = axes;
    }
    if (size > cap) {
        st = H5ZGPU_E_OUTPUT_TOO_SMALL;
        goto done;
    }

    memset(out, 0, size);
    qz_put_anchor(out, Q);
    out[8] = (uint8_t)E.form;
    out[9] = (uint8_t)E.order;
    hz_put_u16(out + 10, R);
    hz_put_u16(out + 12, E.rs);
    out[14] = (uint8_t)axes;
    hz_put_u32(out + 16, (uint32_t)n_out);
    hz_put_u32(out + 20, (uint32_t)n_verb);
    uint64_t o = HF_OFF_CODEBOOK;
    if (E.form == HF_FORM_ANS)
        o = put_ans_stream(A, nsub_ans, words, nwords, out, o);
    else
        o = put_huffman_stream(&E, out, o, T);
    E.out_pos = out + o;
    E.out_delta = E.out_pos + 4 * n_out;
    E.verb_pos = E.out_delta + 4 * n_out;
    E.verb_val = E.verb_pos + 4 * n_verb;
    hz_parallel_for(g->ntiles, lists_task, &E);
    *len = size;
done:
    free(E.p);
    free(E.kind);
    free(E.tok);
    free(E.run_cost);
    free(E.tile_out);
    free(E.tile_verb);
    free(E.sub_bit);
    free(hist);
    free(B0);
    free(B1);
    free(A);
    free(words);
    free(nwords);
    return st;
}

h5zgpu_status hf_encode_traced(const hf_geom *g, const qz_quant *Q, unsigned radius,
                               const void *in, uint8_t *out, uint64_t cap, uint64_t *len,
                               hf_trace *T)
{
    const size_t esize = Q->is_f32 ? 4u : 8u;
    unsigned long long cost[3];
    const unsigned axes = hf_axes_pick_cpu(g, Q, in, cost);
    if (axes == HF_AXES_NOMEM)
        return hz_fail(H5ZGPU_E_NOMEM, "out of host memory for a %llu-element chunk",
                       (unsigned long long)g->n);
    if (T)
        memcpy(T->axes_cost, cost, sizeof cost);
    if (!axes)
        return encode_coded(g, Q, radius, in, 0, out, cap, len, T);
    hf_geom cg;
    hf_axes_geom(g, axes, &cg);
    void *coded = malloc(g->n * esize);
    if (!coded)
        return hz_fail(H5ZGPU_E_NOMEM, "out of host memory for a %llu-element chunk",
                       (unsigned long long)g->n);
    hf_axes_gather_cpu(g, axes, esize, in, coded);
    h5zgpu_status st = encode_coded(&cg, Q, radius, coded, axes, out, cap, len, T);
    free(coded);
    return st;
}

/* ---- decoder ------------------------------------------------------------------------------ */

static h5zgpu_status corrupt(const char *what)
{
    return hz_fail(H5ZGPU_E_CORRUPT, "Huffman payload is malformed: %s", what);
}

/* The decoder table: entry i for the next HF_MAX_LEN stream bits i (0 where no code starts
 * them). A code of l bits fills every entry whose low l bits it is, so the table of the codes
 * up to l bits repeats every 2^l entries: each length doubles the table built so far and adds
 * its own codes (zlib's inflate builds its tables alike), instead of 2^(15 - l) scattered
 * stores a code. */
static void build_table(const uint8_t *lens, const uint16_t *code, unsigned m, uint16_t *table)
{
    uint16_t by_len[HF_MAX_SYMS];
    unsigned at[HF_MAX_LEN + 2] = {0};
    for (unsigned s = 0; s < m; s++)
        at[lens[s] + 1]++;
    for (unsigned l = 1; l <= HF_MAX_LEN + 1; l++)
        at[l] += at[l - 1];   /* at[l]: where the tokens of l bits start in by_len */
    for (unsigned s = 0; s < m; s++)
        by_len[at[lens[s]]++] = (uint16_t)s;   /* at[l] now ends length l */
    unsigned k = at[0];   /* the tokens without a code come first */
    table[0] = 0;
    for (unsigned l = 1; l <= HF_MAX_LEN; l++) {
        memcpy(table + (1u << (l - 1)), table, sizeof *table << (l - 1));
        for (; k < at[l]; k++)
            table[code[by_len[k]]] = hf_table_entry(by_len[k], l);
    }
}

/* The stream's length and the lists after it, from the payload's end. */
static h5zgpu_status place_lists(unsigned esize, uint64_t len, hf_layout *L)
{
    uint64_t tail = 8 * (uint64_t)L->n_out + (4 + esize) * (uint64_t)L->n_verb;
    if (L->off_stream + tail > len)
        return corrupt("sections overrun the payload");
    L->stream_bytes = len - tail - L->off_stream;
    L->off_out_pos = L->off_stream + L->stream_bytes;
    L->off_out_delta = L->off_out_pos + 4 * (uint64_t)L->n_out;
    L->off_verb_pos = L->off_out_delta + 4 * (uint64_t)L->n_out;
    L->off_verb_val = L->off_verb_pos + 4 * (uint64_t)L->n_verb;
    return H5ZGPU_OK;
}

h5zgpu_status hf_payload_axes(const hf_geom *g, unsigned version, const uint8_t *in,
                              uint64_t len, unsigned *axes, hf_geom *coded)
{
    *axes = version >= 4 && len > 14 ? in[14] : 0;
    if (*axes >= HF_AXES_COUNT || (*axes && g->dim != 3))
        return corrupt("axis order out of range, or set on a chunk that is not 3-D");
    if (*axes)
        hf_axes_geom(g, *axes, coded);
    else
        *coded = *g;
    return H5ZGPU_OK;
}

h5zgpu_status hf_parse(const hf_geom *g, unsigned version, unsigned esize, const uint8_t *in,
                       uint64_t avail, uint64_t len, hf_layout *L, uint16_t *table,
                       hf_ans_tabs *A)
{
    uint8_t lens[HF_MAX_SYMS];
    uint16_t code[HF_MAX_SYMS];
    if (avail > len)
        avail = len;
    if (avail < HF_OFF_CODEBOOK + 4)
        return corrupt("shorter than its fixed part");
    L->form = in[8];
    L->radius = hz_get_u16(in + 10);
    L->run_token = hz_get_u16(in + 12);
    L->n_out = hz_get_u32(in + 16);
    L->n_verb = hz_get_u32(in + 20);
    L->order = in[9];
    L->axes = version >= 4 ? in[14] : 0;   /* checked by hf_payload_axes */
    if (L->form > (version >= 4 ? HF_FORM_ANS : HF_FORM_PAIRS) || in[15] ||
        (version < 4 && in[14]))
        return corrupt("unknown form or reserved bytes set");
    if (L->order == HF_PRED_INTERP ? version < 2 : L->order > g->dim)
        return corrupt("predictor neither interpolation (format version 2) nor a Lorenzo order "
                       "of the chunk's dimensionality");
    if (L->radius < 2 || L->radius > HF_RADIUS_MAX)
        return corrupt("radius outside 2..1024");
    if (L->form == HF_FORM_RUNS || L->form == HF_FORM_ANS ? L->run_token >= 2 * L->radius
                                                         : L->run_token != 0)
        return corrupt("run token out of range");
    if (L->form == HF_FORM_PAIRS && L->radius < HF_PAIR_MIN_RADIUS)
        return corrupt("pair form with a radius below 9");
    if (L->n_out > g->n || L->n_verb > g->n)
        return corrupt("more outliers or verbatim values than elements");
    if (L->form == HF_FORM_ANS) {
        uint64_t tb;
        h5zgpu_status st;
        if (!A)
            return corrupt("ANS form where only Huffman codes are read");
        const uint64_t nsub = hf_ans_nsub(g->n);
        L->busy = hz_get_u32(in + HF_ANS_OFF_BUSY);
        if (L->busy > nsub)
            return corrupt("more ANS sub-chunks with words than sub-chunks");
        if ((st = hf_ans_parse(in + HF_ANS_OFF_TABLES, avail - HF_ANS_OFF_TABLES, L->order,
                               L->radius, A, &tb)) != H5ZGPU_OK)
            return st;
        L->ntokens = 2 * L->radius;
        L->off_sub = HF_ANS_OFF_TABLES + tb;
        /* the groups' bits: how many masks follow */
        const uint64_t groups = hf_ans_groups(nsub), l0 = hf_pad4((groups + 7) / 8);
        if (L->off_sub + l0 > avail)
            return corrupt("the busy groups' bits overrun the payload");
        L->busy_groups = 0;
        for (uint64_t b = 0; b < 8 * l0; b++) {
            const unsigned bit = in[L->off_sub + b / 8] >> (b % 8) & 1u;
            if (bit && b >= groups)
                return corrupt("the busy groups' padding is not zero");
            L->busy_groups += bit;
        }
        if (L->busy_groups > L->busy)
            return corrupt("more busy groups than busy sub-chunks");
        L->off_stream = L->off_sub + hf_ans_index_bytes(nsub, L->busy_groups, L->busy);
        return place_lists(esize, len, L);
    }
    unsigned nsym = 2 * L->radius + (L->form == HF_FORM_CODES ? 0 : HF_RUN_MAX);
    unsigned m0 = hz_get_u16(in + HF_OFF_CODEBOOK), m1 = hz_get_u16(in + HF_OFF_CODEBOOK + 2);
    uint64_t cb = hf_pad4(hf_codebook_size(m0, m1));
    if (m0 + m1 == 0 || m0 > 2 * L->radius || m1 > nsym - 2 * L->radius ||
        HF_OFF_CODEBOOK + cb > avail)
        return corrupt("codebook size out of range");
    L->ntokens = m1 ? 2 * L->radius + m1 : m0;
    memset(lens, 0, L->ntokens);
    for (unsigned k = 0; k < m0 + m1; k++) {
        unsigned v = (in[HF_OFF_CODEBOOK + 4 + k / 2] >> (4 * (k & 1))) & 15u;
        lens[k < m0 ? k : 2 * L->radius + (k - m0)] = (uint8_t)v;
    }
    if ((m0 + m1) & 1u ? in[HF_OFF_CODEBOOK + 4 + (m0 + m1) / 2] >> 4 : 0)
        return corrupt("codebook padding is not zero");
    for (uint64_t b = HF_OFF_CODEBOOK + 4 + (m0 + m1 + 1) / 2; b < HF_OFF_CODEBOOK + cb; b++)
        if (in[b])
            return corrupt("codebook padding is not zero");
    if (!hf_canonical(lens, L->ntokens, code))
        return corrupt("code lengths over-fill the code space");
    build_table(lens, code, L->ntokens, table);
    L->off_sub = HF_OFF_CODEBOOK + cb;
    L->off_stream = L->off_sub + hf_pad4(2 * g->nsub);
    return place_lists(esize, len, L);
}

/* Decodes sub-chunk s into deltas (markers for fill and escape tokens); returns 0 on any
 * inconsistency. */
static int decode_sub(const hf_geom *g, const hf_layout *L, const uint16_t *table,
                      const uint8_t *stream, uint64_t bit, uint64_t nbits, uint64_t s,
                      int has_fill, int32_t *delta)
{
    uint64_t i = s * HF_SUB, end = i + HF_SUB < g->n ? i + HF_SUB : g->n, stop = bit + nbits;
    const unsigned R = L->radius;
    while (i < end) {
        if (bit >= stop)
            return 0;
        uint64_t win = hf_peek64(stream, L->stream_bytes, bit >> 3) >> (bit & 7);
        unsigned ent = table[win & ((1u << HF_MAX_LEN) - 1u)];
        unsigned tk = ent & 0xFFFu, l = ent >> 12;
        if (l == 0 || bit + l > stop)
            return 0;
        bit += l;
        if (tk >= 2 * R && L->form == HF_FORM_PAIRS) { /* two small deltas */
            if (end - i < 2)
                return 0;
            delta[i++] = (int32_t)hz_unzigzag((tk - 2 * R) / HF_PAIR_K);
            delta[i++] = (int32_t)hz_unzigzag((tk - 2 * R) % HF_PAIR_K);
            continue;
        }
        if (tk >= 2 * R) { /* a run of the run token */
            uint64_t run = HF_RUN_MAX - (tk - 2 * R);
            if (run > end - i)
                return 0;
            int32_t d = hf_run_delta(L);
            if (!hf_run_valid(d, has_fill))
                return 0;
            for (uint64_t k = 0; k < run; k++)
                delta[i++] = d;
            continue;
        }
        if (!hf_lone_valid(L, tk, has_fill))
            return 0;
        delta[i++] = hf_token_delta(tk);
    }
    return bit == stop;
}

/* Partial sums give a tile's codes from its deltas (the inverse of Lorenzo): along the tile's
 * raster sequence for order 1, along x and y for order 2, and along z too for order 3.
 * Wrapping arithmetic keeps damaged input defined. */
static void partial_sums(int32_t *d, unsigned order, uint64_t ez, uint64_t ey, uint64_t ex)
{
    uint32_t *u = (uint32_t *)d;
    uint64_t plane = ey * ex, tn = ez * plane;
    if (order == 1) {
        for (uint64_t e = 1; e < tn; e++)
            u[e] += u[e - 1];
        return;
    }
    for (uint64_t r = 0; r < ez * ey; r++)
        for (uint64_t x = 1; x < ex; x++)
            u[r * ex + x] += u[r * ex + x - 1];
    for (uint64_t z = 0; z < ez; z++)
        for (uint64_t y = 1; y < ey; y++)
            for (uint64_t x = 0; x < ex; x++)
                u[z * plane + y * ex + x] += u[z * plane + (y - 1) * ex + x];
    if (order == 3)
        for (uint64_t z = 1; z < ez; z++)
            for (uint64_t k = 0; k < plane; k++)
                u[z * plane + k] += u[(z - 1) * plane + k];
}

/* One decoding; its tasks run over sub-chunks and tiles. */
typedef struct hf_dec {
    const hf_geom *g;
    const qz_quant *Q;
    const hf_layout *L;
    const uint16_t *table;
    const uint8_t *in, *stream;
    uint64_t *sub_bit;      /* first bit of each sub-chunk */
    int32_t *delta;
    void *out;
    int bad;
} hf_dec;

static void decode_task(void *ctx, uint64_t s)
{
    hf_dec *D = ctx;
    uint64_t nb = hz_get_u16(D->in + D->L->off_sub + 2 * s);
    if (!decode_sub(D->g, D->L, D->table, D->stream, D->sub_bit[s], nb, s, D->Q->has_fill,
                    D->delta))
        __atomic_store_n(&D->bad, 1, __ATOMIC_RELAXED);
}

/* First verbatim value at or after position pos (the positions are checked increasing). */
static uint64_t first_verbatim(const hf_dec *D, uint64_t pos)
{
    uint64_t lo = 0, hi = D->L->n_verb;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (hz_get_u32(D->in + D->L->off_verb_pos + 4 * mid) < pos)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Tile t: partial sums, values, then its verbatim values. */
static void tile_task(void *ctx, uint64_t t)
{
    hf_dec *D = ctx;
    const qz_quant *Q = D->Q;
    unsigned esize = Q->is_f32 ? 4u : 8u;
    uint8_t fill[HF_TILE_N];
    hf_tile T;
    hf_tile_at(D->g, t, &T);
    uint64_t tn = (uint64_t)T.ez * T.ey * T.ex;
    int32_t *d = D->delta + T.start;
    for (uint64_t e = 0; e < tn; e++) {
        if (d[e] == HF_MARK_ESCAPE) { /* an escape token without its outlier */
            __atomic_store_n(&D->bad, 1, __ATOMIC_RELAXED);
            return;
        }
        fill[e] = d[e] == HF_MARK_FILL;
        if (fill[e])
            d[e] = 0;
    }
    partial_sums(d, D->L->order, T.ez, T.ey, T.ex);
    for (uint64_t e = 0; e < tn; e++) {
        uint64_t bits = fill[e] ? Q->fill_bits : hz_value_bits(qz_reconstruct(Q, d[e]), Q->is_f32);
        hz_put_element(D->out, Q->is_f32, chunk_index(D->g, &T, e), bits);
    }
    for (uint64_t v = first_verbatim(D, T.start); v < D->L->n_verb; v++) {
        uint64_t pos = hz_get_u32(D->in + D->L->off_verb_pos + 4 * v);
        if (pos >= T.start + tn)
            break;
        const uint8_t *b = D->in + D->L->off_verb_val + esize * v;
        hz_put_element(D->out, Q->is_f32, chunk_index(D->g, &T, pos - T.start),
                       esize == 4 ? hz_get_u32(b) : hz_get_u64(b));
    }
}

/* The Huffman forms' stream into D->delta: the sub-chunks' bit lengths, then each decoded. */
static h5zgpu_status huffman_stream(hf_dec *D)
{
    const hf_geom *g = D->g;
    const hf_layout *L = D->L;
    const uint8_t *in = D->in;
    uint64_t bit = 0;
    for (uint64_t s = 0; s < g->nsub; s++) {
        D->sub_bit[s] = bit;
        bit += hz_get_u16(in + L->off_sub + 2 * s);
    }
    for (uint64_t b = L->off_sub + 2 * g->nsub; b < L->off_stream; b++)
        if (in[b])
            return corrupt("sub-chunk table padding is not zero");
    if (hf_pad4((bit + 7) / 8) != L->stream_bytes ||
        ((bit & 7) && (D->stream[bit >> 3] >> (bit & 7))))
        return corrupt("stream length disagrees with its sub-chunks");
    for (uint64_t b = (bit + 7) / 8; b < L->stream_bytes; b++)
        if (D->stream[b])
            return corrupt("stream padding is not zero");
    hz_parallel_for(g->nsub, decode_task, D);
    return D->bad ? corrupt("a sub-chunk's tokens do not match its bit length") : H5ZGPU_OK;
}

/* The ANS form's stream into D->delta. */
static h5zgpu_status ans_stream(hf_dec *D, const hf_ans_tabs *A)
{
    const hf_geom *g = D->g;
    const hf_layout *L = D->L;
    const uint8_t *in = D->in;
    const uint64_t nsub = hf_ans_nsub(g->n);
    uint64_t *woff = malloc((nsub + 1) * sizeof *woff);
    uint16_t *sym = malloc((size_t)A->ntab * HF_ANS_M * sizeof *sym);
    h5zgpu_status st = H5ZGPU_OK;
    if (!woff || !sym) {
        st = hz_fail(H5ZGPU_E_NOMEM, "out of host memory for a %llu-element chunk",
                     (unsigned long long)g->n);
        goto done;
    }
    const uint64_t groups = hf_ans_groups(nsub);
    const uint8_t *level0 = in + L->off_sub, *masks = level0 + hf_pad4((groups + 7) / 8);
    const uint8_t *counts = masks + 8 * (uint64_t)L->busy_groups;
    uint64_t k = 0, gi = 0;
    woff[0] = 0;
    for (uint64_t gr = 0; gr < groups; gr++) {
        const int marked = level0[gr / 8] >> (gr % 8) & 1u;
        const uint64_t mask = marked ? hz_get_u64(masks + 8 * gi++) : 0;
        const uint64_t first = gr * HF_ANS_GROUP;
        /* a group marked busy has a busy sub-chunk, and none past the last */
        if (marked && !mask) {
            st = corrupt("a busy group without a busy sub-chunk");
            goto done;
        }
        for (uint64_t j = 0; j < HF_ANS_GROUP; j++) {
            const int has = mask >> j & 1u;
            if (first + j >= nsub) {
                if (has) {
                    st = corrupt("a busy sub-chunk past the last");
                    goto done;
                }
                continue;
            }
            const uint64_t s = first + j;
            woff[s + 1] = woff[s] + (has && k < L->busy ? hz_get_u16(counts + 2 * k) : 0);
            if (has && (k++ >= L->busy || woff[s + 1] - woff[s] < 2)) {
                st = corrupt("the busy sub-chunks disagree with their count, or one has no "
                             "state");
                goto done;
            }
        }
    }
    if (k != L->busy) {
        st = corrupt("the busy sub-chunks disagree with their count");
        goto done;
    }
    for (const uint8_t *b = counts + 2 * k; b < in + L->off_stream; b++)
        if (*b) {
            st = corrupt("sub-chunk table padding is not zero");
            goto done;
        }
    if (hf_pad4(2 * woff[nsub]) != L->stream_bytes) {
        st = corrupt("stream length disagrees with its sub-chunks");
        goto done;
    }
    for (uint64_t b = 2 * woff[nsub]; b < L->stream_bytes; b++)
        if (D->stream[b]) {
            st = corrupt("stream padding is not zero");
            goto done;
        }
    hf_ans_symbols(A, sym);
    if (!hf_ans_decode_cpu(g, L, A, sym, D->stream, woff, D->Q->has_fill, D->delta))
        st = corrupt("a sub-chunk's ANS words do not decode to its tokens");
done:
    free(woff);
    free(sym);
    return st;
}

/* Decodes the coded array g (the chunk's folded axes, permuted when the payload says so) into
 * out. */
static h5zgpu_status decode_coded(const hf_geom *g, unsigned version, qz_quant *Q,
                                  const uint8_t *in, uint64_t len, void *out)
{
    const unsigned esize = Q->is_f32 ? 4u : 8u;
    hf_layout L;
    uint16_t *table = malloc(sizeof(uint16_t) << HF_MAX_LEN);
    hf_ans_tabs *A = malloc(sizeof *A);
    hf_dec D = {.g = g, .Q = Q, .L = &L, .table = table, .in = in, .out = out};
    D.delta = malloc(g->n * sizeof *D.delta);
    D.sub_bit = malloc(g->nsub * sizeof *D.sub_bit);
    h5zgpu_status st = H5ZGPU_OK;
    if (!table || !A || !D.delta || !D.sub_bit) {
        st = hz_fail(H5ZGPU_E_NOMEM, "out of host memory for a %llu-element chunk",
                     (unsigned long long)g->n);
        goto done;
    }
    if ((st = hf_parse(g, version, esize, in, len, len, &L, table, A)) != H5ZGPU_OK)
        goto done;
    if (!qz_get_anchor(in, Q)) {
        st = corrupt("base or code offset out of range");
        goto done;
    }
    D.stream = in + L.off_stream;
    for (uint64_t v = 0; v < L.n_verb; v++) {
        uint64_t pos = hz_get_u32(in + L.off_verb_pos + 4 * v);
        if (pos >= g->n || (v && pos <= hz_get_u32(in + L.off_verb_pos + 4 * (v - 1)))) {
            st = corrupt("verbatim positions do not increase within the chunk");
            goto done;
        }
    }
    st = L.form == HF_FORM_ANS ? ans_stream(&D, A) : huffman_stream(&D);
    if (st != H5ZGPU_OK)
        goto done;
    for (uint64_t k = 0; k < L.n_out; k++) {
        uint64_t pos = hz_get_u32(in + L.off_out_pos + 4 * k);
        int32_t d = (int32_t)hz_get_u32(in + L.off_out_delta + 4 * k);
        if (pos >= g->n || (k && pos <= hz_get_u32(in + L.off_out_pos + 4 * (k - 1))) ||
            D.delta[pos] != HF_MARK_ESCAPE || d <= HF_MARK_ESCAPE) {
            st = corrupt("an outlier's position or value is invalid");
            goto done;
        }
        D.delta[pos] = d;
    }
    if (L.order != HF_PRED_INTERP) {
        hz_parallel_for(g->ntiles, tile_task, &D);
        if (D.bad)
            st = corrupt("an escape token has no outlier");
        goto done;
    }
    if ((st = hf_ip_decode_cpu(g, Q, D.delta, out)) != H5ZGPU_OK) {
        if (st == H5ZGPU_E_CORRUPT)
            st = corrupt("an escape token has no outlier, or a code leaves the interpolation's "
                         "range");
        goto done;
    }
    for (uint64_t v = 0; v < L.n_verb; v++) {
        uint64_t pos = hz_get_u32(in + L.off_verb_pos + 4 * v), x, y, z;
        const uint8_t *b = in + L.off_verb_val + esize * v;
        hf_tile_coords(g, pos, &z, &y, &x);
        hz_put_element(out, Q->is_f32, (z * g->ny + y) * g->nx + x,
                       esize == 4 ? hz_get_u32(b) : hz_get_u64(b));
    }
done:
    free(table);
    free(A);
    free(D.delta);
    free(D.sub_bit);
    return st;
}

h5zgpu_status hf_decode_cpu(const hf_geom *g, unsigned version, qz_quant *Q, const uint8_t *in,
                            uint64_t len, void *out)
{
    const size_t esize = Q->is_f32 ? 4u : 8u;
    unsigned axes;
    hf_geom cg;
    h5zgpu_status st = hf_payload_axes(g, version, in, len, &axes, &cg);
    if (st != H5ZGPU_OK || !axes)
        return st != H5ZGPU_OK ? st : decode_coded(g, version, Q, in, len, out);
    void *coded = malloc(g->n * esize);
    if (!coded)
        return hz_fail(H5ZGPU_E_NOMEM, "out of host memory for a %llu-element chunk",
                       (unsigned long long)g->n);
    if ((st = decode_coded(&cg, version, Q, in, len, coded)) == H5ZGPU_OK)
        hf_axes_scatter_cpu(g, axes, esize, coded, out);
    free(coded);
    return st;
}
