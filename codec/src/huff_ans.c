/* The Huffman codec's ANS form on the CPU (huff_ans.h; docs/FORMAT.md, "ANS form"): the
 * class tables from the tokens' counts, the sub-chunks coded on hz_parallel_for's threads, and
 * the decoder that turns a sub-chunk back into deltas, walking it from its last element. */
#include "huff.h"

#include "error.h"
#include "huff_ans.h"
#include "parallel.h"
#include "scratch.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The built-in tables (huff_ans_books.h): book s is entry s - 1, its frequencies from
 * book_start[s - 1]; their costs (hf_ans_cost) made once, for the writer's choice. */
static const uint16_t book_m[HF_ANS_BOOKS] = HF_ANS_BOOK_M;
static const uint32_t book_start[HF_ANS_BOOKS] = HF_ANS_BOOK_START;
static const uint16_t book_freq[] = HF_ANS_BOOK_FREQ;
static uint16_t book_cost[sizeof book_freq / sizeof *book_freq];
static pthread_once_t book_cost_once = PTHREAD_ONCE_INIT;

static void book_cost_init(void)
{
    for (size_t i = 0; i < sizeof book_freq / sizeof *book_freq; i++)
        book_cost[i] = (uint16_t)hf_ans_cost(book_freq[i]);
}

/* The cumulative frequencies of each table, and the tables' nibbles in all. */
static void finish_tables(hf_ans_tabs *A)
{
    A->nibbles = 0;
    for (unsigned c = 0; c < A->ntab; c++) {
        uint32_t run = 0;
        for (unsigned t = 0; t < A->m[c]; t++) {
            A->cum[c][t] = run;
            run += A->freq[c][t];
        }
        A->nibbles += hf_ans_table_nibbles(A->book[c], A->freq[c], A->m[c]);
    }
}

/* Table c's frequencies from book s. */
static void take_book(hf_ans_tabs *A, unsigned c, unsigned s)
{
    A->book[c] = s;
    A->m[c] = book_m[s - 1];
    for (unsigned t = 0; t < A->m[c]; t++)
        A->freq[c][t] = book_freq[book_start[s - 1] + t];
}

/* The book that codes count[0..m-1] (m > 0) for less than the stored frequencies freq, in
 * 1/256 bits with the table's nibbles at 4 bits each, or 0; a book must cover the m tokens
 * and fit the radius (book_m <= 2R). The lowest book on a tie, the stored table before it. */
static unsigned pick_book(const uint32_t *count, unsigned m, unsigned R, const uint32_t *freq)
{
    uint64_t best = 1024u * hf_ans_table_nibbles(0, freq, m);
    for (unsigned t = 0; t < m; t++)
        best += (uint64_t)count[t] * hf_ans_cost(freq[t]);
    unsigned pick = 0;
    for (unsigned s = 1; s <= HF_ANS_BOOKS; s++) {
        if (book_m[s - 1] < m || book_m[s - 1] > 2 * R)
            continue;
        const uint16_t *cost = book_cost + book_start[s - 1];
        uint64_t bits = 1024u * hf_nib_len(s);
        for (unsigned t = 0; t < m && bits < best; t++)
            bits += (uint64_t)count[t] * cost[t];
        if (bits < best) {
            best = bits;
            pick = s;
        }
    }
    return pick;
}

/* Counts of the tokens of each table over [i0, i1) of the tile-major order, into count (rows
 * of stride tokens, zeroed here). */
static void count_range(const hf_geom *g, unsigned pred, const uint16_t *tok, uint64_t i0,
                        uint64_t i1, uint32_t *count, unsigned stride)
{
    memset(count, 0, (size_t)hf_ans_tables_of(pred) * stride * sizeof *count);
    if (i0 >= i1)
        return;
    hf_walk w;
    hf_walk_at(g, &w, i0);
    for (uint64_t i = i0; i < i1;) {
        /* the rest of a tile row: its classes alternate with the chunk's x */
        const uint64_t n = w.ex - w.x < i1 - i ? w.ex - w.x : i1 - i;
        const uint64_t z = w.z0 + w.z, y = w.y0 + w.y, x0 = w.x0 + w.x;
        const unsigned cls[2] = {hf_ans_class(pred, z, y, x0), hf_ans_class(pred, z, y, x0 + 1)};
        for (uint64_t j = 0; j < n; j++, i++) {
            const unsigned x =
                (i + 1) % HF_ANS_SUB && i + 1 < g->n ? hf_ans_context(tok[i + 1]) : 0;
            count[hf_ans_table(cls[j & 1], x) * stride + tok[i]]++;
        }
        w.x += (unsigned)n - 1;   /* its last element, then on past it */
        hf_walk_next(g, &w);
    }
}

typedef struct count_run {
    const hf_geom *g;
    unsigned pred, stride, slices;
    const uint16_t *tok;
    uint32_t *count;        /* a slice's counts after another's */
} count_run;

static void count_task(void *ctx, uint64_t k)
{
    const count_run *C = ctx;
    const uint64_t n = C->g->n;
    count_range(C->g, C->pred, C->tok, hz_slice_start(n, C->slices, (unsigned)k),
                hz_slice_start(n, C->slices, (unsigned)k + 1),
                C->count + k * hf_ans_tables_of(C->pred) * C->stride, C->stride);
}

/* Elements a slice of the counts counts at least: its counts cost 2R words a table to clear
 * and to add. */
#define HF_ANS_COUNT_SLICE 32768u

/* The tokens counted in slices on the pool's threads, then each table's slices summed on a
 * thread of its own (summed one table after another, they were a large part of what a 64^3
 * chunk's writer did on one thread while 15 waited). */
typedef struct merge_run {
    const count_run *C;
    uint32_t (*count)[2 * HF_RADIUS_MAX];
} merge_run;

static void merge_task(void *ctx, uint64_t b)
{
    const merge_run *M = ctx;
    const count_run *C = M->C;
    const unsigned ntab = hf_ans_tables_of(C->pred);
    uint32_t *count = M->count[b];
    memcpy(count, C->count + b * C->stride, C->stride * sizeof *count);
    for (unsigned k = 1; k < C->slices; k++) {
        const uint32_t *c = C->count + ((size_t)k * ntab + b) * C->stride;
        for (unsigned t = 0; t < C->stride; t++)
            count[t] += c[t];
    }
}

void hf_ans_count(const hf_geom *g, unsigned pred, unsigned R, const uint16_t *tok,
                  uint32_t (*count)[2 * HF_RADIUS_MAX])
{
    const unsigned ntab = hf_ans_tables_of(pred);
    count_run C = {g, pred, 2 * R, hz_slices(g->n, HF_ANS_COUNT_SLICE), tok, NULL};
    if (C.slices > 1)
        C.count = hz_scratch((size_t)C.slices * ntab * C.stride * sizeof *C.count);
    if (C.count) {
        hz_parallel_slices(C.slices, count_task, &C);
        merge_run M = {&C, count};
        hz_parallel_for(ntab, merge_task, &M);
        hz_scratch_free(C.count);
    } else {
        count_range(g, pred, tok, 0, g->n, &count[0][0], 2 * HF_RADIUS_MAX);
    }
}

/* Table b's frequencies and built-in book from its counts, a table a thread. */
typedef struct tables_run {
    unsigned R;
    hf_ans_tabs *A;         /* the counts in its cum arrays */
} tables_run;

static void table_task(void *ctx, uint64_t b)
{
    const tables_run *T = ctx;
    hf_ans_tabs *A = T->A;
    const uint32_t *count = A->cum[b];
    unsigned m = 0;
    uint64_t total = 0;
    for (unsigned t = 0; t < 2 * T->R; t++) {
        m = count[t] ? t + 1 : m;
        total += count[t];
    }
    A->m[b] = m;
    A->book[b] = 0;
    if (!m)
        return;
    hf_ans_normalize(count, m, total, A->freq[b]);
    const unsigned s = pick_book(count, m, T->R, A->freq[b]);
    if (s)
        take_book(A, (unsigned)b, s);
}

void hf_ans_tables(unsigned pred, unsigned R, hf_ans_tabs *A)
{
    A->ntab = hf_ans_tables_of(pred);
    pthread_once(&book_cost_once, book_cost_init);
    tables_run T = {R, A};
    hz_parallel_for(A->ntab, table_task, &T);
    finish_tables(A);
}

uint64_t hf_ans_table_bytes(const hf_ans_tabs *A)
{
    return hf_pad4((A->nibbles + 1) / 2);
}

void hf_ans_put_tables(const hf_ans_tabs *A, uint8_t *p)
{
    uint64_t k = 0;
    for (unsigned c = 0; c < A->ntab; c++)
        hf_ans_table_put(p, &k, A->book[c], A->freq[c], A->m[c]);
}

/* ---- sub-chunks --------------------------------------------------------------------------- */

typedef struct ans_run {
    const hf_geom *g;
    const hf_ans_tabs *A;
    unsigned pred;
    const uint16_t *tok;
    unsigned rs;            /* the run token: a sub-chunk of it alone has no words */
    uint16_t *words;        /* encoder: HF_ANS_SUB_WORDS a sub-chunk */
    uint64_t *nwords;
    /* decoder */
    const uint8_t *stream;
    const uint64_t *woff;   /* each sub-chunk's first word */
    const uint16_t *sym;    /* HF_ANS_M a class: the token of each slot */
    const hf_layout *L;
    int has_fill;
    int32_t *delta;
    int bad;
} ans_run;

/* One sub-chunk being coded: its next element i below i1, its state, its words so far. */
typedef struct enc_lane {
    uint64_t i, i1;
    uint32_t x;
    unsigned k;
    uint16_t *w;
    hf_walk wk;
} enc_lane;

/* Sub-chunk s set up in *l (returns 1), or, when it is the run token alone, given no words
 * (returns 0). */
static int enc_start(const ans_run *C, uint64_t s, enc_lane *l)
{
    const hf_geom *g = C->g;
    const uint64_t i0 = s * HF_ANS_SUB, i1 = i0 + HF_ANS_SUB < g->n ? i0 + HF_ANS_SUB : g->n;
    uint64_t same = i0;
    while (same < i1 && C->tok[same] == C->rs)
        same++;
    if (same == i1) {
        C->nwords[s] = 0;
        return 0;
    }
    *l = (enc_lane){.i = i0, .i1 = i1, .x = HF_ANS_LOW, .w = C->words + s * HF_ANS_SUB_WORDS};
    hf_walk_at(g, &l->wk, i0);
    return 1;
}

static inline void enc_step(const ans_run *C, enc_lane *l)
{
    const hf_ans_tabs *A = C->A;
    const uint64_t i = l->i++;
    const unsigned t = C->tok[i], nx = i + 1 < l->i1 ? hf_ans_context(C->tok[i + 1]) : 0;
    const unsigned b = hf_ans_table(hf_walk_class(&l->wk, C->pred), nx);
    l->x = hf_ans_put(l->x, A->freq[b][t], A->cum[b][t], l->w, &l->k);
    hf_walk_next(C->g, &l->wk);
}

static void enc_finish(const ans_run *C, uint64_t s, enc_lane *l)
{
    while (l->i < l->i1)
        enc_step(C, l);
    l->w[l->k++] = (uint16_t)l->x;
    l->w[l->k++] = (uint16_t)(l->x >> 16);
    C->nwords[s] = l->k;
}

/* Sub-chunks 2p and 2p + 1, their steps interleaved: each state's chain of dependent steps (a
 * division each) leaves the core idle between its steps, which the other chain fills. */
static void encode_task(void *ctx, uint64_t p)
{
    ans_run *C = ctx;
    const uint64_t nsub = hf_ans_nsub(C->g->n);
    enc_lane l[2];
    int busy[2] = {0, 0};
    for (unsigned k = 0; k < 2 && 2 * p + k < nsub; k++)
        busy[k] = enc_start(C, 2 * p + k, &l[k]);
    if (busy[0] && busy[1])
        while (l[0].i < l[0].i1 && l[1].i < l[1].i1) {
            enc_step(C, &l[0]);
            enc_step(C, &l[1]);
        }
    for (unsigned k = 0; k < 2; k++)
        if (busy[k])
            enc_finish(C, 2 * p + k, &l[k]);
}

uint64_t hf_ans_encode_cpu(const hf_geom *g, unsigned pred, const hf_ans_tabs *A,
                           const uint16_t *tok, unsigned rs, uint16_t *words, uint64_t *nwords)
{
    ans_run C = {.g = g, .A = A, .pred = pred, .tok = tok, .rs = rs, .words = words,
                 .nwords = nwords};
    const uint64_t nsub = hf_ans_nsub(g->n);
    hz_parallel_for((nsub + 1) / 2, encode_task, &C);
    uint64_t total = 0;
    for (uint64_t s = 0; s < nsub; s++)
        total += nwords[s];
    return total;
}

/* ---- decoder ------------------------------------------------------------------------------ */

/* One number of the tables' nibbles at *k (of nk); 0 when it runs past them or past 2^21 (eight
 * groups with bit 3 set). Where sixteen nibbles lie ahead, the first eight are read at once: the
 * lowest group without bit 3 ends the number, and the groups' 3-bit fields are packed together
 * by halving their spacing thrice. */
static int nib_get(const uint8_t *p, uint64_t nk, uint64_t *k, uint32_t *v)
{
    if (*k + 16 <= nk) {
        const uint32_t x = (uint32_t)(hz_get_u64(p + *k / 2) >> (4 * (*k & 1)));
        const uint32_t ends = ~x & 0x88888888u;
        if (!ends)
            return 0;
        const unsigned len = (unsigned)__builtin_ctz(ends) / 4 + 1;
        uint32_t t = x & 0x77777777u;
        t = (t & 0x07070707u) | (t >> 1 & 0x38383838u);
        t = (t & 0x003F003Fu) | (t >> 2 & 0x0FC00FC0u);
        t = (t & 0x00000FFFu) | (t >> 4 & 0x00FFF000u);
        *v = t & ((1u << 3 * len) - 1u);
        *k += len;
        return 1;
    }
    uint32_t r = 0;
    for (unsigned sh = 0; sh <= 21; sh += 3) {
        if (*k >= nk)
            return 0;
        const unsigned nib = (p[*k / 2] >> (4 * (*k & 1))) & 15u;
        (*k)++;
        r |= (uint32_t)(nib & 7u) << sh;
        if (!(nib & 8u)) {
            *v = r;
            return 1;
        }
    }
    return 0;
}

h5zgpu_status hf_ans_parse(const uint8_t *p, uint64_t avail, unsigned version, unsigned pred,
                           unsigned R, hf_ans_tabs *A, uint64_t *bytes)
{
    const uint64_t nk = 2 * avail;
    const int books = version >= HF_ANS_BOOKS_VERSION;
    uint64_t k = 0;
    A->ntab = hf_ans_tables_of(pred);
    for (unsigned c = 0; c < A->ntab; c++) {
        uint32_t m, sum = 0;
        if (!nib_get(p, nk, &k, &m))
            return hz_fail(H5ZGPU_E_CORRUPT,
                           "Huffman payload is malformed: an ANS table overruns the payload");
        A->book[c] = 0;
        if (books && m >= 1 && m <= HF_ANS_BOOKS) {
            if (book_m[m - 1] > 2 * R)
                return hz_fail(H5ZGPU_E_CORRUPT, "Huffman payload is malformed: a built-in ANS "
                                                 "table names tokens past 2R");
            take_book(A, c, m);
            for (unsigned t = 0; t < A->m[c]; t++) {
                A->cum[c][t] = sum;
                sum += A->freq[c][t];
            }
            continue;
        }
        m -= books && m ? HF_ANS_BOOKS : 0;
        if (m > 2 * R)
            return hz_fail(H5ZGPU_E_CORRUPT,
                           "Huffman payload is malformed: an ANS table names tokens past 2R");
        A->m[c] = m;
        for (unsigned t = 0; t < m;) {
            uint32_t f, zeros;
            if (!nib_get(p, nk, &k, &f))
                return hz_fail(H5ZGPU_E_CORRUPT,
                               "Huffman payload is malformed: an ANS table is cut short");
            if (f) {
                if (f > HF_ANS_M)
                    return hz_fail(H5ZGPU_E_CORRUPT, "Huffman payload is malformed: an ANS "
                                                     "frequency exceeds 2^14");
                A->cum[c][t] = sum;
                A->freq[c][t++] = f;
                sum += f;
                continue;
            }
            if (!nib_get(p, nk, &k, &zeros) || zeros >= m - t - 1)
                return hz_fail(H5ZGPU_E_CORRUPT, "Huffman payload is malformed: an ANS table's "
                                                 "run of unused tokens reaches its end");
            for (uint32_t z = 0; z <= zeros; z++) {
                A->cum[c][t] = sum;
                A->freq[c][t++] = 0;
            }
        }
        if (m && sum != HF_ANS_M)
            return hz_fail(H5ZGPU_E_CORRUPT,
                           "Huffman payload is malformed: an ANS table does not add up to 2^14");
    }
    const uint64_t used = (k + 1) / 2;
    *bytes = hf_pad4(used);
    if (*bytes > avail || ((k & 1) && (p[k / 2] >> 4)))
        return hz_fail(H5ZGPU_E_CORRUPT, "Huffman payload is malformed: ANS tables overrun the "
                                         "payload or their padding is not zero");
    for (uint64_t b = used; b < *bytes; b++)
        if (p[b])
            return hz_fail(H5ZGPU_E_CORRUPT,
                           "Huffman payload is malformed: ANS table padding is not zero");
    A->nibbles = k;   /* the cumulative frequencies were set as the tables were read */
    return H5ZGPU_OK;
}

typedef struct sym_run {
    const hf_ans_tabs *A;
    uint16_t *sym;
} sym_run;

/* Table c's slots: 2^14 stores, which a chunk's twelve tables would otherwise make in series
 * while the other threads wait for its decoding. */
static void sym_task(void *ctx, uint64_t c)
{
    const sym_run *S = ctx;
    const hf_ans_tabs *A = S->A;
    uint16_t *sym = S->sym + c * HF_ANS_M;
    for (unsigned t = 0; t < A->m[c]; t++)
        for (uint32_t s = A->cum[c][t]; s < A->cum[c][t] + A->freq[c][t]; s++)
            sym[s] = (uint16_t)t;
}

void hf_ans_symbols(const hf_ans_tabs *A, uint16_t *sym)
{
    sym_run S = {A, sym};
    hz_parallel_for(A->ntab, sym_task, &S);
}

/* A busy sub-chunk being decoded from its last element to its first: the words still unread
 * (j), the state, the next element (i, down to i0), its walk and the context the element after
 * it gave. */
typedef struct ans_lane {
    const uint8_t *w;
    uint64_t j, i, i0;
    uint32_t x;
    unsigned nx;
    hf_walk wk;
    int ok;
} ans_lane;

/* Sub-chunk s: an idle one decoded whole (returns 0), or a busy one set up in *l (returns 1);
 * l->ok = 0 on an inconsistency. */
static int lane_start(const ans_run *C, uint64_t s, ans_lane *l)
{
    const hf_geom *g = C->g;
    const uint64_t i0 = s * HF_ANS_SUB, i1 = i0 + HF_ANS_SUB < g->n ? i0 + HF_ANS_SUB : g->n;
    uint64_t j = C->woff[s + 1] - C->woff[s];
    *l = (ans_lane){.w = C->stream + 2 * C->woff[s], .i = i1, .i0 = i0, .ok = 1};
    if (j == 0) {   /* the run token alone (a busy one has a state: hf_decode_cpu) */
        l->ok = hf_lone_valid(C->L, C->L->run_token, C->has_fill);
        for (uint64_t i = i0; l->ok && i < i1; i++)
            C->delta[i] = hf_token_delta(C->L->run_token);
        return 0;
    }
    if (j < 2) {
        l->ok = 0;
        return 0;
    }
    l->j = j - 2;
    l->x = hz_get_u16(l->w + 2 * l->j) | hz_get_u16(l->w + 2 * l->j + 2) << 16;
    l->ok = l->x >= HF_ANS_LOW;
    if (l->ok)
        hf_walk_at(g, &l->wk, i1 - 1);
    return l->ok;
}

/* The lane's next element (l->i - 1, above l->i0 and l->ok set). */
static inline void lane_step(const ans_run *C, ans_lane *l)
{
    const hf_ans_tabs *A = C->A;
    const unsigned b = hf_ans_table(hf_walk_class(&l->wk, C->pred), l->nx);
    if (!A->m[b]) {
        l->ok = 0;
        return;
    }
    const unsigned t = C->sym[b * HF_ANS_M + (l->x & (HF_ANS_M - 1u))];
    l->x = hf_ans_take(l->x, A->freq[b][t], A->cum[b][t]);
    l->nx = hf_ans_context(t);
    if (l->x < HF_ANS_LOW) {
        if (l->j == 0) {
            l->ok = 0;
            return;
        }
        l->x = l->x << 16 | hz_get_u16(l->w + 2 * --l->j);
    }
    if (!hf_lone_valid(C->L, t, C->has_fill)) {
        l->ok = 0;
        return;
    }
    C->delta[--l->i] = hf_token_delta(t);
    if (l->i > l->i0)
        hf_walk_prev(C->g, &l->wk);
}

/* The lane's remaining elements; whether the sub-chunk was consistent. */
static int lane_finish(const ans_run *C, ans_lane *l)
{
    while (l->ok && l->i > l->i0)
        lane_step(C, l);
    return l->ok && l->j == 0 && l->x == HF_ANS_LOW;
}

/* Sub-chunks 2p and 2p + 1, their steps interleaved: each state's chain of dependent lookups
 * leaves the core idle between its steps, which the other chain fills (the same deltas as one
 * at a time). */
static void decode_task(void *ctx, uint64_t p)
{
    ans_run *C = ctx;
    const uint64_t nsub = hf_ans_nsub(C->g->n);
    ans_lane l[2];
    int busy[2] = {0, 0}, ok = 1;
    for (unsigned k = 0; k < 2 && 2 * p + k < nsub; k++) {
        busy[k] = lane_start(C, 2 * p + k, &l[k]);
        ok &= l[k].ok;
    }
    if (ok && busy[0] && busy[1])
        while (l[0].ok && l[1].ok && l[0].i > l[0].i0 && l[1].i > l[1].i0) {
            lane_step(C, &l[0]);
            lane_step(C, &l[1]);
        }
    for (unsigned k = 0; k < 2 && ok; k++)
        ok = !busy[k] || lane_finish(C, &l[k]);
    if (!ok)
        __atomic_store_n(&C->bad, 1, __ATOMIC_RELAXED);
}

int hf_ans_decode_cpu(const hf_geom *g, const hf_layout *L, const hf_ans_tabs *A,
                      const uint16_t *sym, const uint8_t *stream, const uint64_t *woff,
                      int has_fill, int32_t *delta)
{
    ans_run C = {.g = g, .A = A, .pred = L->order, .stream = stream, .woff = woff, .sym = sym,
                 .L = L, .has_fill = has_fill, .delta = delta};
    hz_parallel_for((hf_ans_nsub(g->n) + 1) / 2, decode_task, &C);
    return !C.bad;
}
