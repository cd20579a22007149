/* hz_parallel_for and hz_parallel_slices (codec/src/parallel.c): every item runs once, with
 * any thread count and item count; callers in several threads at once share the pool, more of
 * them than it has places for calls too, and calls made inside a call's items run; the
 * slices of hz_slices partition their range; a fork()ed child, which has none of the
 * parent's pool threads, still runs its calls; the pool threads are joined at exit (valgrind
 * memcheck, which runs the tests' programs in CI, would report their memory otherwise). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "parallel.h"
#include "util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct marks {
    uint64_t n;
    unsigned *seen;   /* how often each item ran */
} marks;

static void mark(void *ctx, uint64_t i)
{
    marks *m = ctx;
    if (i < m->n)
        __atomic_add_fetch(&m->seen[i], 1, __ATOMIC_RELAXED);
}

/* Whether a call over n items ran each exactly once. */
static int once_each(uint64_t n, int slices)
{
    marks m = {n, calloc(n ? n : 1, sizeof(unsigned))};
    if (!m.seen)
        return 0;
    if (slices)
        hz_parallel_slices((unsigned)n, mark, &m);
    else
        hz_parallel_for(n, mark, &m);
    int ok = 1;
    for (uint64_t i = 0; i < n; i++)
        ok &= m.seen[i] == 1;
    free(m.seen);
    return ok;
}

/* Item i of an outer call: an inner call of its own, as a chunk's task may make. */
static void nested(void *ctx, uint64_t i)
{
    if (!once_each(100 + i % 7, (int)(i & 1)))
        __atomic_store_n((int *)ctx, 0, __ATOMIC_RELAXED);
}

static void *caller(void *arg)
{
    int ok = 1;
    for (int k = 0; k < 50; k++)
        ok &= once_each(1000 + 37 * (uint64_t)k + (uint64_t)(uintptr_t)arg, k & 1);
    return ok ? arg : NULL;
}

int main(void)
{
    const uint64_t sizes[] = {0, 1, 2, 7, 8, 9, 63, 64, 65, 1000, 100003};
    const char *threads[] = {"1", "2", "3", "16", "64", "1000"};
    for (unsigned t = 0; t < sizeof threads / sizeof *threads; t++) {
        setenv("H5ZGPU_THREADS", threads[t], 1);
        for (unsigned s = 0; s < sizeof sizes / sizeof *sizes; s++) {
            tu_expect(once_each(sizes[s], 0), "H5ZGPU_THREADS=%s: %llu items run once each",
                      threads[t], (unsigned long long)sizes[s]);
            if (sizes[s] <= 1000)
                tu_expect(once_each(sizes[s], 1), "H5ZGPU_THREADS=%s: %llu slices run once each",
                          threads[t], (unsigned long long)sizes[s]);
        }
    }

    setenv("H5ZGPU_THREADS", "4", 1);
    pthread_t tid[6];
    int started[6];
    for (uintptr_t k = 0; k < 6; k++)
        started[k] = pthread_create(&tid[k], NULL, caller, (void *)(k + 1)) == 0;
    for (uintptr_t k = 0; k < 6; k++) {
        void *r = NULL;
        if (started[k])
            pthread_join(tid[k], &r);
        tu_expect(started[k] && r == (void *)(k + 1), "caller thread %u: 50 calls beside five "
                  "other callers, every item once", (unsigned)k);
    }

    /* more callers at once than the pool has places for calls: the rest run alone */
    pthread_t many[24];
    int many_started[24];
    for (uintptr_t k = 0; k < 24; k++)
        many_started[k] = pthread_create(&many[k], NULL, caller, (void *)(k + 1)) == 0;
    int all_ok = 1;
    for (uintptr_t k = 0; k < 24; k++) {
        void *r = NULL;
        if (many_started[k])
            pthread_join(many[k], &r);
        all_ok &= many_started[k] && r == (void *)(k + 1);
    }
    tu_expect(all_ok, "24 caller threads at once: 50 calls each, every item once");

    /* calls made inside a call's items */
    for (unsigned t = 0; t < 3; t++) {
        setenv("H5ZGPU_THREADS", threads[t + 2], 1);
        int nested_ok = 1;
        hz_parallel_for(200, nested, &nested_ok);
        tu_expect(nested_ok, "H5ZGPU_THREADS=%s: 200 items each making a call of its own, "
                  "every inner item once", threads[t + 2]);
    }
    setenv("H5ZGPU_THREADS", "4", 1);

    /* slices: at least min items each (one slice when n is smaller), no more than the threads,
     * and back to back over [0, n) */
    const uint64_t ns[] = {0, 1, 100, 65535, 65536, 1000000, 262144};
    for (unsigned i = 0; i < sizeof ns / sizeof *ns; i++) {
        const uint64_t n = ns[i], min = 65536;
        const unsigned s = hz_slices(n, min);
        int ok = s >= 1 && s <= 4 && (s == 1 || n / s >= min);
        uint64_t covered = 0;
        for (unsigned k = 0; k < s; k++) {
            const uint64_t a = hz_slice_start(n, s, k), b = hz_slice_start(n, s, k + 1);
            ok &= a == covered && b >= a;
            covered = b;
        }
        tu_expect(ok && covered == n && hz_slice_start(n, s, 0) == 0,
                  "%llu items: %u slices of at least 65536, back to back", (unsigned long long)n,
                  s);
    }

    /* the child of a fork after the pool started runs its own calls */
    tu_expect(once_each(5000, 0), "a call before the fork");
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) /* exit, not _exit: the child's pool threads are joined too */
        exit(once_each(5000, 0) && once_each(7, 1) ? 0 : 1);
    int status = 0;
    tu_expect(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
                  WEXITSTATUS(status) == 0,
              "a fork()ed child's calls run every item once");
    tu_expect(once_each(5000, 0), "the parent's calls after the fork");
    return tu_done("pool");
}
