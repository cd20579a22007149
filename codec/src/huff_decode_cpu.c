/* The Huffman codec's decoder, CPU reference: the payload's parts located and checked
 * (hf_parse, also the GPU decoder's host side), the stream into deltas (Huffman codes, or rANS
 * through huff_ans.c), then values by partial sums or the interpolation (huff_interp.c), and
 * the axes put back (huff_axes.c). docs/FORMAT.md, "Huffman payload". */
#include "huff.h"

#include "elements.h"
#include "error.h"
#include "huff_ans.h"
#include "huff_axes.h"
#include "huff_interp.h"
#include "parallel.h"
#include "scratch.h"

#include <stdlib.h>
#include <string.h>

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
    const int sized_counts = version >= HF_ANS_COUNT_BYTES_VERSION && L->form == HF_FORM_ANS;
    L->count_bytes = sized_counts ? in[HF_ANS_OFF_COUNT_BYTES] : 2u;
    if (L->form > (version >= 4 ? HF_FORM_ANS : HF_FORM_PAIRS) ||
        (sized_counts ? L->count_bytes != 1 && L->count_bytes != 2 : in[15] != 0) ||
        (version < 4 && in[14]))
        return corrupt("unknown form or reserved bytes set, or ANS word counts neither 1 nor 2 "
                       "bytes");
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
        if ((st = hf_ans_parse(in + HF_ANS_OFF_TABLES, avail - HF_ANS_OFF_TABLES, version,
                               L->order, L->radius, A, &tb)) != H5ZGPU_OK)
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
        L->off_stream =
            L->off_sub + hf_ans_index_bytes(nsub, L->busy_groups, L->busy, L->count_bytes);
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
        hz_put_element(D->out, Q->is_f32, hf_tile_index(D->g, &T, e), bits);
    }
    for (uint64_t v = first_verbatim(D, T.start); v < D->L->n_verb; v++) {
        uint64_t pos = hz_get_u32(D->in + D->L->off_verb_pos + 4 * v);
        if (pos >= T.start + tn)
            break;
        const uint8_t *b = D->in + D->L->off_verb_val + esize * v;
        hz_put_element(D->out, Q->is_f32, hf_tile_index(D->g, &T, pos - T.start),
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
    uint16_t *sym = hz_scratch((size_t)A->ntab * HF_ANS_M * sizeof *sym);
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
            woff[s + 1] =
                woff[s] + (has && k < L->busy ? hf_ans_get_count(counts, k, L->count_bytes) : 0);
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
    for (const uint8_t *b = counts + (uint64_t)L->count_bytes * k; b < in + L->off_stream; b++)
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
    hz_scratch_free(sym);
    return st;
}

/* Decodes the coded array g (the chunk's folded axes, permuted when the payload says so) into
 * out. */
static h5zgpu_status decode_coded(const hf_geom *g, unsigned version, qz_quant *Q,
                                  const uint8_t *in, uint64_t len, void *out)
{
    const unsigned esize = Q->is_f32 ? 4u : 8u;
    /* the tables of the payload's form only (hf_parse checks the form byte itself) */
    const int ans = len > 8 && in[8] == HF_FORM_ANS;
    hf_layout L;
    uint16_t *table = ans ? NULL : hz_scratch(sizeof(uint16_t) << HF_MAX_LEN);
    hf_ans_tabs *A = ans ? hz_scratch(sizeof *A) : NULL;
    hf_dec D = {.g = g, .Q = Q, .L = &L, .table = table, .in = in, .out = out};
    D.delta = hz_scratch(g->n * sizeof *D.delta);
    D.sub_bit = ans ? NULL : malloc(g->nsub * sizeof *D.sub_bit);
    h5zgpu_status st = H5ZGPU_OK;
    if (!D.delta || (ans ? !A : !table || !D.sub_bit)) {
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
    hz_scratch_free(table);
    hz_scratch_free(A);
    hz_scratch_free(D.delta);
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
    void *coded = hz_scratch(g->n * esize);
    if (!coded)
        return hz_fail(H5ZGPU_E_NOMEM, "out of host memory for a %llu-element chunk",
                       (unsigned long long)g->n);
    if ((st = decode_coded(&cg, version, Q, in, len, coded)) == H5ZGPU_OK)
        hf_axes_scatter_cpu(g, axes, esize, coded, out);
    hz_scratch_free(coded);
    return st;
}
