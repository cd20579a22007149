/* The ANS form's stored tables (docs/FORMAT.md, "ANS form"): random tables that
 * hf_ans_put_tables writes, hf_ans_parse reads back to the same token counts, frequencies,
 * cumulative frequencies and length, whether the buffer ends where they do (the last numbers
 * are read a nibble at a time) or runs on (eight nibbles at once); every shorter buffer, a
 * number of more than eight nibbles, frequencies that do not add up to 2^14 and padding that
 * is not zero are refused. */
#include "huff.h"
#include "huff_ans.h"
#include "util.h"

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

static void random_tables(hf_ans_tabs *A, unsigned pred, unsigned R)
{
    A->ntab = hf_ans_tables_of(pred);
    A->nibbles = 0;
    for (unsigned c = 0; c < A->ntab; c++) {
        random_table(A, c, R);
        A->nibbles += hf_ans_table_nibbles(A->freq[c], A->m[c]);
    }
}

/* Parses the tables' bytes at p (avail of them); 1 when they read as A wrote them. */
static int reads_back(const hf_ans_tabs *A, const uint8_t *p, uint64_t avail, unsigned pred,
                      unsigned R, uint64_t bytes, const char *what)
{
    static hf_ans_tabs B;
    uint64_t got = 0;
    const h5zgpu_status st = hf_ans_parse(p, avail, pred, R, &B, &got);
    int ok = st == H5ZGPU_OK && got == bytes && B.ntab == A->ntab;
    for (unsigned c = 0; ok && c < A->ntab; c++) {
        uint32_t run = 0;
        ok = B.m[c] == A->m[c];
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
    const h5zgpu_status st = hf_ans_parse(p, avail, pred, R, &B, &got);
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
            A.nibbles += hf_ans_table_nibbles(A.freq[c], 1);
        }
        memset(buf, 0, sizeof buf);
        hf_ans_put_tables(&A, buf);
        refused(buf, sizeof buf, 1, 8, "a table adding up to 2^14 - 1");
    }
    printf("ans_tables_test: %u random table sets read back\n", cases);
    return tu_done("ans_tables_test");
}
