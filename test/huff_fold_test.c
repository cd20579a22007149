/* hf_fold (huff_common.h) against ITU T.81 K.3 taken literally, a pair at a time: on full
 * binary trees of every depth profile kind the codebooks meet (caterpillars, random splits,
 * balanced ones with a deep tail), the same leaf counts at each length, every length at most
 * HF_MAX_LEN and the code still complete (Kraft sum exactly 1). */
#include "huff_common.h"
#include "util.h"

#include <stdint.h>
#include <string.h>

#define DEPTHS 64u

static void fold_k3(unsigned *count, unsigned maxd)
{
    for (unsigned i = maxd; i > HF_MAX_LEN; i--)
        while (count[i] > 0) {
            unsigned j = i - 2;
            while (count[j] == 0)
                j--;
            count[i] -= 2;
            count[i - 1] += 1;
            count[j + 1] += 2;
            count[j] -= 1;
        }
}

static uint64_t state = 0x9E3779B97F4A7C15ull;
static unsigned next_random(void)
{
    return (unsigned)(tu_xorshift(&state) >> 32);
}

/* Folds count both ways and checks the result; label says which tree. */
static void check_tree(const unsigned *count, const char *label, unsigned n)
{
    unsigned a[DEPTHS], b[DEPTHS], maxd = 0, leaves = 0;
    memcpy(a, count, sizeof a);
    memcpy(b, count, sizeof b);
    for (unsigned d = 0; d < DEPTHS; d++)
        if (count[d]) {
            maxd = d;
            leaves += count[d];
        }
    fold_k3(a, maxd);
    hf_fold(b, maxd);
    uint64_t kraft = 0;
    unsigned after = 0, longest = 0;
    for (unsigned d = 1; d < DEPTHS; d++) {
        after += b[d];
        if (b[d])
            longest = d;
        if (d <= HF_MAX_LEN)
            kraft += (uint64_t)b[d] << (HF_MAX_LEN - d);
    }
    tu_expect(memcmp(a, b, sizeof a) == 0, "%s %u: hf_fold differs from K.3", label, n);
    tu_expect(longest <= HF_MAX_LEN && after == leaves && kraft == 1u << HF_MAX_LEN,
              "%s %u: longest %u, %u of %u leaves, Kraft sum %llu of %u", label, n, longest,
              after, leaves, (unsigned long long)kraft, 1u << HF_MAX_LEN);
}

int main(void)
{
    unsigned count[DEPTHS];
    /* caterpillars: one leaf at each depth 1..m-2, two at m-1 (the deepest tree of m leaves) */
    for (unsigned m = 2; m <= DEPTHS; m++) {
        memset(count, 0, sizeof count);
        for (unsigned d = 1; d + 1 < m; d++)
            count[d] = 1;
        count[m - 1] = 2;
        check_tree(count, "caterpillar of leaves", m);
    }
    /* random full binary trees: split a random leaf until there are n, depths below 64 */
    for (unsigned t = 0; t < 20000; t++) {
        static unsigned depth[4096];
        const unsigned n = 2 + next_random() % 2000;
        unsigned k = 1;
        depth[0] = 0;
        while (k < n) {
            /* deep trees need the deepest leaves split often: half the splits take the last */
            const unsigned v = next_random() % 2 ? k - 1 : next_random() % k;
            if (depth[v] >= DEPTHS - 1)
                continue;
            depth[v]++;
            depth[k++] = depth[v];
        }
        memset(count, 0, sizeof count);
        for (unsigned v = 0; v < n; v++)
            count[depth[v]]++;
        check_tree(count, "random tree of leaves", n);
    }
    /* balanced at depth 10 with a deep tail hanging off one leaf */
    for (unsigned tail = 1; tail + 10 < DEPTHS; tail++) {
        memset(count, 0, sizeof count);
        count[10] = 1023;
        for (unsigned d = 11; d < 10 + tail; d++)
            count[d] = 1;
        count[10 + tail] = 2;
        check_tree(count, "balanced tree with a tail of", tail);
    }
    return tu_done("huff_fold_test");
}
