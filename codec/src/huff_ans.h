/* The Huffman codec's ANS form (form 3, format versions 4 to 6), shared verbatim by the CPU
 * reference (huff_ans.c) and the CUDA kernels: the elements' tokens coded by rANS with a
 * frequency table per class of element and context, in sub-chunks that decode independently.
 * Huffman spends a whole bit or more on a token; where one delta dominates (smooth fields,
 * loose bounds) that is most of the payload, and rANS spends what the token's probability
 * says. The classes follow the interpolation's passes, whose deltas differ in spread.
 * docs/FORMAT.md, "ANS form". */
#ifndef H5ZGPU_HUFF_ANS_H
#define H5ZGPU_HUFF_ANS_H

#include "huff_ans_books.h"
#include "huff_interp.h"

#define HF_FORM_ANS 3u
/* Frequencies add up to 2^14: at 2^12 the long tails of the velocities at tight bounds cost
 * 1-3% of the stream (every used token takes at least one slot), at 2^14 0.1-0.2%. */
#define HF_ANS_BITS 14u
#define HF_ANS_M (1u << HF_ANS_BITS)
#define HF_ANS_LOW 65536u            /* states lie in [2^16, 2^32); 16-bit words renormalise */
/* Elements a sub-chunk: its final state and its length cost 6 bytes, 0.012 bits a value; a
 * sub-chunk of the payload's run token alone has no words. Sub-chunks decode in parallel, one
 * thread each, as the Huffman forms' do. */
#define HF_ANS_SUB 4096u
#define HF_ANS_CLASSES 4u
/* Each class's tokens are coded in the context of the next element's delta, 0, +-1 or more:
 * quiet and busy regions cluster (on temperature at REL 1e-3 this takes a tenth off the
 * stream). The last element of a sub-chunk has context 0. */
#define HF_ANS_CONTEXTS 3u
#define HF_ANS_TABLES (HF_ANS_CLASSES * HF_ANS_CONTEXTS)
/* From format version 6 a table may be one of the built-in tables (huff_ans_books.h) instead
 * of stored: the writer takes a book where the table's tokens cost less with it, by
 * hf_ans_cost, than with the stored table and its nibbles. On 32^3 chunks of the Nyx-like
 * fields the stored tables were 2-12% of the payload. */
#define HF_ANS_BOOKS_VERSION 6u
#define HF_ANS_SUB_WORDS (HF_ANS_SUB + 2u)   /* a word a token at most, and the state */

/* The classes of a predictor: interpolation's elements by the pass that predicts them (every
 * coordinate even: the coarser levels; else the finest level's pass along the last axis whose
 * coordinate is odd); Lorenzo's are one class. */
HZ_HD unsigned hf_ans_classes(unsigned pred)
{
    return pred == HF_PRED_INTERP ? HF_ANS_CLASSES : 1u;
}

HZ_HD unsigned hf_ans_class(unsigned pred, uint64_t z, uint64_t y, uint64_t x)
{
    if (pred != HF_PRED_INTERP)
        return 0;
    return (x & 1u) ? 3u : (y & 1u) ? 2u : (unsigned)(z & 1u);
}

/* The context a token gives the element before it: its delta's magnitude, 0, 1 or 2 for more
 * (an escape), a fill token 0. */
HZ_HD unsigned hf_ans_context(unsigned tk)
{
    if (tk == HF_TOK_ESCAPE)
        return HF_ANS_CONTEXTS - 1u;
    const unsigned z = tk < 2u ? 0u : tk - 2u, mag = (z + 1u) >> 1;
    return mag < HF_ANS_CONTEXTS - 1u ? mag : HF_ANS_CONTEXTS - 1u;
}

/* The tables of a predictor, and the table of class c in context x. */
HZ_HD unsigned hf_ans_tables_of(unsigned pred)
{
    return hf_ans_classes(pred) * HF_ANS_CONTEXTS;
}

HZ_HD unsigned hf_ans_table(unsigned c, unsigned x)
{
    return c * HF_ANS_CONTEXTS + x;
}

HZ_HD uint64_t hf_ans_nsub(uint64_t n)
{
    return (n + HF_ANS_SUB - 1) / HF_ANS_SUB;
}

/* Payload offsets of the ANS form: the count of sub-chunks with words, then the tables. */
#define HF_ANS_OFF_BUSY HF_OFF_CODEBOOK
#define HF_ANS_OFF_TABLES (HF_OFF_CODEBOOK + 4u)

/* Which sub-chunks are busy (have words) is a two-level bitmap: a bit per group of 64
 * sub-chunks, then for each group with a busy one a 64-bit mask of them. On the baryon density
 * at REL 1e-2 a 256^3 chunk (4096 sub-chunks, a handful busy) takes 8 bytes and a few masks,
 * where one bit a sub-chunk took 512 bytes, two thirds of the payload. */
#define HF_ANS_GROUP 64u

HZ_HD uint64_t hf_ans_groups(uint64_t nsub)
{
    return (nsub + HF_ANS_GROUP - 1) / HF_ANS_GROUP;
}

/* The bytes of a busy sub-chunk's word count: from format version 5 payload byte 15 says, 1
 * when every busy sub-chunk has fewer than 256 words, else 2; version 4 has 2 and byte 15 0.
 * At loose bounds most busy sub-chunks hold a few words besides their state: on the dark
 * matter density at 1e-2 of its range, a 256^3 chunk's 241-401 counts are at most 36 and
 * took a sixth of the payload as 16-bit numbers. */
#define HF_ANS_OFF_COUNT_BYTES 15u
#define HF_ANS_COUNT_BYTES_VERSION 5u

HZ_HD unsigned hf_ans_count_bytes(uint64_t max_words)
{
    return max_words < 256u ? 1u : 2u;
}

HZ_HD uint32_t hf_ans_get_count(const uint8_t *counts, uint64_t k, unsigned count_bytes)
{
    return count_bytes == 1u ? counts[k] : hz_get_u16(counts + 2 * k);
}

HZ_HD void hf_ans_put_count(uint8_t *counts, uint64_t k, unsigned count_bytes, uint32_t words)
{
    if (count_bytes == 1u)
        counts[k] = (uint8_t)words;
    else
        hz_put_u16(counts + 2 * k, words);
}

/* Bytes from the tables' end to the stream: the groups' bits (padded to 4), the masks of the
 * busy groups, then the word counts of the busy sub-chunks (padded to 4). */
HZ_HD uint64_t hf_ans_index_bytes(uint64_t nsub, uint64_t busy_groups, uint64_t busy,
                                  unsigned count_bytes)
{
    return hf_pad4((hf_ans_groups(nsub) + 7) / 8) + 8 * busy_groups +
           hf_pad4((uint64_t)count_bytes * busy);
}

/* Element coordinates along the tile-major order, one step at a time: the tile and the
 * element's place in it. */
typedef struct hf_walk {
    uint64_t t, z0, y0, x0;
    unsigned ez, ey, ex, z, y, x;
} hf_walk;

HZ_HD void hf_walk_tile(const hf_geom *g, hf_walk *w, uint64_t t)
{
    hf_tile T;
    hf_tile_at(g, t, &T);
    w->t = t;
    w->z0 = T.z0;
    w->y0 = T.y0;
    w->x0 = T.x0;
    w->ez = T.ez;
    w->ey = T.ey;
    w->ex = T.ex;
}

/* The walk at tile-major position pos (below n). */
HZ_HD void hf_walk_at(const hf_geom *g, hf_walk *w, uint64_t pos)
{
    uint64_t z, y, x;
    hf_tile_coords(g, pos, &z, &y, &x);
    hf_walk_tile(g, w, hf_tile_of(g, z, y, x));
    w->z = (unsigned)(z - w->z0);
    w->y = (unsigned)(y - w->y0);
    w->x = (unsigned)(x - w->x0);
}

HZ_HD void hf_walk_next(const hf_geom *g, hf_walk *w)
{
    if (++w->x < w->ex)
        return;
    w->x = 0;
    if (++w->y < w->ey)
        return;
    w->y = 0;
    if (++w->z < w->ez)
        return;
    w->z = 0;
    if (w->t + 1 < g->ntiles)
        hf_walk_tile(g, w, w->t + 1);
}

HZ_HD void hf_walk_prev(const hf_geom *g, hf_walk *w)
{
    if (w->x-- > 0)
        return;
    w->x = w->ex - 1;
    if (w->y-- > 0)
        return;
    w->y = w->ey - 1;
    if (w->z-- > 0)
        return;
    if (w->t == 0)
        return;
    hf_walk_tile(g, w, w->t - 1);
    w->z = w->ez - 1;
    w->y = w->ey - 1;
    w->x = w->ex - 1;
}

HZ_HD unsigned hf_walk_class(const hf_walk *w, unsigned pred)
{
    return hf_ans_class(pred, w->z0 + w->z, w->y0 + w->y, w->x0 + w->x);
}

/* Frequencies for the counts of tokens 0..m-1 (total > 0), adding up to HF_ANS_M: each used
 * token count * M / total rounded half up, at least 1; the commonest token (the lowest on a tie)
 * takes what is left over, and an excess comes off the largest frequency (the lowest token on
 * a tie), at most half of it at a time. At most 2^11 tokens are used, so it ends. */
HZ_HD void hf_ans_normalize(const uint32_t *count, unsigned m, uint64_t total, uint32_t *freq)
{
    uint64_t sum = 0;
    unsigned top = 0;
    for (unsigned t = 0; t < m; t++) {
        const uint64_t f = count[t] ? ((uint64_t)count[t] * HF_ANS_M + total / 2) / total : 0;
        freq[t] = count[t] ? (f ? (uint32_t)f : 1u) : 0u;
        sum += freq[t];
        top = count[t] > count[top] ? t : top;
    }
    if (sum < HF_ANS_M)
        freq[top] += (uint32_t)(HF_ANS_M - sum);
    while (sum > HF_ANS_M) {
        unsigned big = 0;
        for (unsigned t = 1; t < m; t++)
            big = freq[t] > freq[big] ? t : big;
        const uint64_t take = sum - HF_ANS_M < freq[big] / 2 ? sum - HF_ANS_M : freq[big] / 2;
        freq[big] -= (uint32_t)take;
        sum -= take;
    }
}

/* The tables' nibbles (docs/FORMAT.md, "ANS form"): numbers as 3-bit groups, low first, bit 3
 * set on every group but the last; per table its head number, then for a stored table the
 * frequencies of tokens 0..m-1, a zero frequency followed by the number of further zeros. */
HZ_HD unsigned hf_nib_len(uint32_t v)
{
    unsigned k = 1;
    while (v >= 8u) {
        v >>= 3;
        k++;
    }
    return k;
}

/* A table's head number in format version 6: 0 for an empty table, book s (1..HF_ANS_BOOKS)
 * for a built-in one, HF_ANS_BOOKS + m for a stored table of m tokens; in versions 4 and 5
 * every table is stored and its head number is m. */
HZ_HD uint32_t hf_ans_head(unsigned book, unsigned m)
{
    return book ? book : m ? m + HF_ANS_BOOKS : 0u;
}

/* Nibbles of one table; freq holds m entries, the last nonzero (m = 0: none); a built-in
 * table (book > 0) is its head number alone. */
HZ_HD uint64_t hf_ans_table_nibbles(unsigned book, const uint32_t *freq, unsigned m)
{
    uint64_t k = hf_nib_len(hf_ans_head(book, m));
    for (unsigned t = 0; !book && t < m;) {
        if (freq[t]) {
            k += hf_nib_len(freq[t++]);
            continue;
        }
        unsigned z = t;
        while (freq[z] == 0)
            z++;   /* freq[m - 1] is not zero */
        k += 1 + hf_nib_len(z - t - 1);
        t = z;
    }
    return k;
}

HZ_HD void hf_nib_put(uint8_t *p, uint64_t *k, uint32_t v)
{
    for (;;) {
        const unsigned nib = (v & 7u) | (v >= 8u ? 8u : 0u);
        p[*k / 2] |= (uint8_t)(nib << (4 * (*k & 1)));
        (*k)++;
        if (v < 8u)
            return;
        v >>= 3;
    }
}

HZ_HD void hf_ans_table_put(uint8_t *p, uint64_t *k, unsigned book, const uint32_t *freq,
                            unsigned m)
{
    hf_nib_put(p, k, hf_ans_head(book, m));
    for (unsigned t = 0; !book && t < m;) {
        if (freq[t]) {
            hf_nib_put(p, k, freq[t++]);
            continue;
        }
        unsigned z = t;
        while (freq[z] == 0)
            z++;
        hf_nib_put(p, k, 0);
        hf_nib_put(p, k, z - t - 1);
        t = z;
    }
}

/* The cost of a token of frequency f (1..2^14) in 1/256 bits, 256 x 14 - floor(256 log2 f),
 * in integers so that every executor makes the same choice of table: the mantissa in [1, 2)
 * with 30 fraction bits, squared eight times, gives a fraction bit each time it reaches 2. */
HZ_HD uint32_t hf_ans_cost(uint32_t f)
{
    unsigned e = 0;
    while (f >> (e + 1))
        e++;
    uint64_t m = (uint64_t)f << (30u - e);
    uint32_t frac = 0;
    for (unsigned i = 0; i < 8; i++) {
        m = (m * m) >> 30;
        frac <<= 1;
        if (m >> 31) {
            m >>= 1;
            frac |= 1u;
        }
    }
    return 256u * (HF_ANS_BITS - e) - frac;
}

/* Whether state x must give out its low word before coding a token of frequency f: whether
 * x >= f 2^18, which for whole numbers is floor(x / 2^18) >= f (no 64-bit product at
 * f = 2^14). */
HZ_HD int hf_ans_full(uint32_t x, uint32_t f)
{
    return x >> (32u - HF_ANS_BITS) >= f;
}

/* State x (already renormalised) after coding a token of frequency f, cumulative c. */
HZ_HD uint32_t hf_ans_code(uint32_t x, uint32_t f, uint32_t c)
{
    return ((x / f) << HF_ANS_BITS) + x % f + c;
}

/* Codes token frequency f, cumulative frequency c onto state x; a word out to w[*k] when the
 * state must shrink first. */
HZ_HD uint32_t hf_ans_put(uint32_t x, uint32_t f, uint32_t c, uint16_t *w, unsigned *k)
{
    if (hf_ans_full(x, f)) {
        w[(*k)++] = (uint16_t)x;
        x >>= 16;
    }
    return hf_ans_code(x, f, c);
}

/* The state after decoding the token of slot x mod M, of frequency f and cumulative frequency
 * c, before renormalisation. */
HZ_HD uint32_t hf_ans_take(uint32_t x, uint32_t f, uint32_t c)
{
    return f * (x >> HF_ANS_BITS) + (x & (HF_ANS_M - 1u)) - c;
}

#endif
