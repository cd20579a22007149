/* hz_scratch (codec/src/scratch.c): a large block given back is the one the thread's next
 * request of a like size gets, with its contents' room intact; blocks too small, too large for
 * the request or past the thread's keep are not handed out; small requests and NULL pass
 * through; a thread's kept blocks go with the thread (valgrind memcheck, which runs the tests'
 * programs in CI, would report them lost otherwise). */
#include "scratch.h"
#include "util.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#define MIB ((size_t)1 << 20)

static int aligned(const void *p)
{
    return ((uintptr_t)p & 15u) == 0;
}

static void *in_a_thread(void *arg)
{
    (void)arg;
    void *p = hz_scratch(3 * MIB);
    if (p)
        memset(p, 1, 3 * MIB);
    hz_scratch_free(p);   /* kept, then freed as the thread ends */
    return p;
}

int main(void)
{
    unsigned char *a = hz_scratch(MIB);
    tu_expect(a && aligned(a), "a 1 MiB block, 16-byte aligned");
    memset(a, 7, MIB);
    hz_scratch_free(a);
    unsigned char *b = hz_scratch(MIB - 100);
    tu_expect(b == a, "the block given back serves the next request of a like size");
    memset(b, 3, MIB - 100);
    unsigned char *c = hz_scratch(4 * MIB);
    tu_expect(c && c != a && aligned(c), "a larger request gets a block of its own");
    memset(c, 5, 4 * MIB);
    hz_scratch_free(b);
    unsigned char *d = hz_scratch(MIB / 4);
    tu_expect(d != a, "a block more than twice the request is not handed out");
    hz_scratch_free(d);
    hz_scratch_free(c);
    unsigned char *e = hz_scratch(4 * MIB);
    tu_expect(e == c, "the 4 MiB block serves a 4 MiB request again");
    hz_scratch_free(e);

    /* the thread keeps up to 64 MiB: two of five 20 MiB blocks beside the 5.25 MiB above (the
     * others go back to the system, whose next blocks may reuse their addresses) */
    void *big[5], *again[5];
    for (int i = 0; i < 5; i++) {
        big[i] = hz_scratch(20 * MIB);
        tu_expect(big[i] != NULL, "a 20 MiB block");
        if (big[i])
            memset(big[i], i, 20 * MIB);
    }
    for (int i = 0; i < 5; i++)
        hz_scratch_free(big[i]);
    for (int i = 0; i < 5; i++)
        again[i] = hz_scratch(20 * MIB);
    tu_expect(again[0] == big[0] && again[1] == big[1], "the first two 20 MiB blocks kept");
    for (int i = 0; i < 5; i++)
        hz_scratch_free(again[i]);

    unsigned char *s = hz_scratch(100);
    tu_expect(s && aligned(s), "a small request");
    hz_scratch_free(s);
    hz_scratch_free(NULL);
    tu_expect(hz_scratch(SIZE_MAX) == NULL, "an impossible request gives NULL");

    pthread_t t;
    void *from_thread = NULL;
    tu_expect(pthread_create(&t, NULL, in_a_thread, NULL) == 0 &&
                  pthread_join(t, &from_thread) == 0 && from_thread != NULL,
              "a thread's own block");
    return tu_done("scratch");
}
