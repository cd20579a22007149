/* The ANS form's tables (docs/FORMAT.md, "ANS form"): random tables, stored and built-in, that
 * hf_ans_put_tables writes, hf_ans_parse reads back to the same token counts, frequencies,
 * cumulative frequencies and length, whether the buffer ends where they do (the last numbers
 * are read a nibble at a time) or runs on (eight nibbles at once); every shorter buffer, a
 * number of more than eight nibbles, frequencies that do not add up to 2^14, padding that is
 * not zero and a built-in table past the radius are refused. The built-in tables themselves:
 * each adds up to 2^14 over tokens all used; and the costs hf_ans_cost gives the writer's
 * choice are 256 x 14 - floor(256 log2 f) for every frequency f. */
#include "huff.h"
#include "huff_ans.h"
#include "util.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint32_t rnd(uint32_t n)   /* 0 .. n-1 */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

/* Table c of A: m tokens (the last used), frequencies adding up to 2^14 over a random subset,
 * some of them large (several nibbles), with runs of unused tokens between. */
static void random_table(hf_ans_tabs *A, unsigned c, unsigned R)
{
    const unsigned m = rnd(4) == 0 ? 0u : 1u + rnd(2 * R);
    uint32_t *f = A->freq[c], left = HF_ANS_M;
    A->m[c] = m;
    memset(f, 0, sizeof A->freq[c]);
    if (!m)
        return;
    const unsigned density = 1u + rnd(8);   /* a token used one time in density */
    for (unsigned t = 0; t + 1 < m && left > 1; t++)
        if (rnd(density) == 0) {
            const uint32_t most = left - 1, want = rnd(3) ? 1u + rnd(40) : 1u + rnd(most);
            f[t] = want < most ? want : most;
            left -= f[t];
        }
    f[m - 1] = left;   /* the last token is used: at least 1 */
}

static const uint16_t book_m[HF_ANS_BOOKS] = HF_ANS_BOOK_M;
static const uint32_t book_start[HF_ANS_BOOKS] = HF_ANS_BOOK_START;
static const uint16_t book_freq[] = HF_ANS_BOOK_FREQ;

/* Table c of A as book s. */
static void book_table(hf_ans_tabs *A, unsigned c, unsigned s)
{
    A->book[c] = s;
    A->m[c] = book_m[s - 1];
    memset(A->freq[c], 0, sizeof A->freq[c]);
    for (unsigned t = 0; t < A->m[c]; t++)
        A->freq[c][t] = book_freq[book_start[s - 1] + t];
}

/* Tables of A, a quarter of them built-in where a random book fits the radius. */
static void random_tables(hf_ans_tabs *A, unsigned pred, unsigned R)
{
    A->ntab = hf_ans_tables_of(pred);
    A->nibbles = 0;
    for (unsigned c = 0; c < A->ntab; c++) {
        const unsigned s = 1u + rnd(HF_ANS_BOOKS);
        A->book[c] = 0;
        if (rnd(4) == 0 && book_m[s - 1] <= 2 * R)
            book_table(A, c, s);
        else
            random_table(A, c, R);
        A->nibbles += hf_ans_table_nibbles(A->book[c], A->freq[c], A->m[c]);
    }
}

/* The family: within the widest radius, at most HF_ANS_BOOK_MOST tokens, every one used, 2^14
 * in all; and hf_ans_cost's integers equal to 256 x 14 - floor(256 log2 f). */
static void check_books(void)
{
    unsigned most = 0;
    for (unsigned s = 1; s <= HF_ANS_BOOKS; s++) {
        const unsigned m = book_m[s - 1];
        uint32_t sum = 0, zero = 0;
        for (unsigned t = 0; t < m; t++) {
            const uint32_t f = book_freq[book_start[s - 1] + t];
            sum += f;
            zero += f == 0;
        }
        most = m > most ? m : most;
        tu_expect(m >= 1 && m <= 2 * HF_RADIUS_MAX && sum == HF_ANS_M && !zero,
                  "book %u: %u tokens, sum %u, %u unused", s, m, sum, zero);
        tu_expect(s == HF_ANS_BOOKS || book_start[s] == book_start[s - 1] + m,
                  "book %u does not end where the next starts", s);
    }
    tu_expect(most == HF_ANS_BOOK_MOST, "the longest book has %u tokens, not %u", most,
              HF_ANS_BOOK_MOST);
    unsigned bad = 0;
    for (uint32_t f = 1; f <= HF_ANS_M; f++)
        bad += hf_ans_cost(f) != 256u * HF_ANS_BITS - (uint32_t)floor(256.0 * log2((double)f));
    tu_expect(bad == 0, "hf_ans_cost differs from 256 x 14 - floor(256 log2 f) for %u "
              "frequencies", bad);
}

/* Parses the tables' bytes at p (avail of them); 1 when they read as A wrote them. */
static int reads_back(const hf_ans_tabs *A, const uint8_t *p, uint64_t avail, unsigned pred,
                      unsigned R, uint64_t bytes, const char *what)
{
    static hf_ans_tabs B;
    uint64_t got = 0;
    const h5zgpu_status st = hf_ans_parse(p, avail, HF_ANS_BOOKS_VERSION, pred, R, &B, &got);
    int ok = st == H5ZGPU_OK && got == bytes && B.ntab == A->ntab;
    for (unsigned c = 0; ok && c < A->ntab; c++) {
        uint32_t run = 0;
        ok = B.m[c] == A->m[c] && B.book[c] == A->book[c];
        for (unsigned t = 0; ok && t < A->m[c]; t++) {
            ok = B.freq[c][t] == A->freq[c][t] && B.cum[c][t] == run;
            run += A->freq[c][t];
        }
    }
    tu_expect(ok, "%s: parse gave %d, %llu bytes of %llu", what, (int)st,
              (unsigned long long)got, (unsigned long long)bytes);
    return ok;
}

static void refused(const uint8_t *p, uint64_t avail, unsigned pred, unsigned R,
                    const char *what)
{
    static hf_ans_tabs B;
    uint64_t got = 0;
    const h5zgpu_status st = hf_ans_parse(p, avail, HF_ANS_BOOKS_VERSION, pred, R, &B, &got);
    tu_expect(st == H5ZGPU_E_CORRUPT, "%s: parse gave %d, not a refusal", what, (int)st);
}

int main(void)
{
    static hf_ans_tabs A;
    static uint8_t buf[HF_HEAD_MAX + 64];
    const unsigned radii[] = {2, 9, 64, 512, HF_RADIUS_MAX};
    const unsigned preds[] = {1, HF_PRED_INTERP};
    unsigned cases = 0;
    for (unsigned trial = 0; trial < 400; trial++) {
        const unsigned R = radii[trial % 5], pred = preds[trial / 5 % 2];
        char what[96];
        random_tables(&A, pred, R);
        const uint64_t bytes = hf_ans_table_bytes(&A);
        memset(buf, 0, sizeof buf);
        hf_ans_put_tables(&A, buf);
        snprintf(what, sizeof what, "trial %u (R %u, %u tables, %llu bytes)", trial, R, A.ntab,
                 (unsigned long long)bytes);
        if (!reads_back(&A, buf, bytes, pred, R, bytes, what))
            continue;
        /* the payload running on after the tables (bytes that would be its next parts) */
        for (uint64_t b = bytes; b < bytes + 64; b++)
            buf[b] = (uint8_t)(0x80u | rnd(256));
        reads_back(&A, buf, bytes + 64, pred, R, bytes, what);
        for (uint64_t cut = 0; cut < bytes; cut += 1u + rnd(7))
            refused(buf, cut, pred, R, "a cut short table");
        if ((A.nibbles + 1) / 2 < bytes) {   /* padding: its first byte set */
            buf[(A.nibbles + 1) / 2] = 1;
            refused(buf, bytes + 64, pred, R, "padding not zero");
        }
        cases++;
    }
    /* a first token count with bit 3 set in eight nibbles (past 2^21), read eight at once and
     * a nibble at a time */
    memset(buf, 0x88, 32);
    refused(buf, 32, 1, 8, "a number of more than eight nibbles");
    refused(buf, 4, 1, 8, "a number of more than eight nibbles, at the end");
    /* one token of frequency 2^14 - 1: the tables do not add up */
    {
        memset(&A, 0, sizeof A);
        A.ntab = hf_ans_tables_of(1);
        for (unsigned c = 0; c < A.ntab; c++) {
            A.m[c] = 1;
            A.freq[c][0] = HF_ANS_M - (c == 1);
            A.nibbles += hf_ans_table_nibbles(0, A.freq[c], 1);
        }
        memset(buf, 0, sizeof buf);
        hf_ans_put_tables(&A, buf);
        refused(buf, sizeof buf, 1, 8, "a table adding up to 2^14 - 1");
    }
    /* a built-in table of more tokens than the radius allows (2R = 4 tokens) */
    {
        memset(&A, 0, sizeof A);
        A.ntab = hf_ans_tables_of(1);
        for (unsigned c = 0; c < A.ntab; c++) {
            book_table(&A, c, 1);
            A.nibbles += hf_ans_table_nibbles(A.book[c], A.freq[c], A.m[c]);
        }
        memset(buf, 0, sizeof buf);
        hf_ans_put_tables(&A, buf);
        reads_back(&A, buf, sizeof buf, 1, HF_RADIUS_MAX, hf_ans_table_bytes(&A), "books");
        refused(buf, sizeof buf, 1, 2, "a built-in table past 2R");
    }
    check_books();
    printf("ans_tables_test: %u random table sets read back\n", cases);
    return tu_done("ans_tables_test");
}
