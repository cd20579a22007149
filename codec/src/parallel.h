/* A parallel for over the cores, on a pool of threads started on first use and parked between
 * calls: a 64^3 Huffman chunk makes about 18 calls, and starting threads for each cost more
 * than the work on many cores. Concurrent callers share the pool; a fork()ed child starts with
 * an empty one. */
#ifndef H5ZGPU_PARALLEL_H
#define H5ZGPU_PARALLEL_H

#include <stdint.h>

typedef void (*hz_task)(void *ctx, uint64_t i);

/* Calls task(ctx, i) once for every i in [0, n), on up to H5ZGPU_THREADS (default: the online
 * cores) threads, the caller's among them; returns when all are done. */
void hz_parallel_for(uint64_t n, hz_task task, void *ctx);

/* The threads hz_parallel_for uses: H5ZGPU_THREADS, else the cores this process may run on. */
unsigned hz_threads(void);

/* For work that sums what parts of [0, n) hold (counts, extremes): how many slices of at least
 * min items each to cut it into, one a thread hz_parallel_for may use (at least 1). Slice k of s
 * holds [hz_slice_start(n, s, k), hz_slice_start(n, s, k + 1)). */
unsigned hz_slices(uint64_t n, uint64_t min);

static inline uint64_t hz_slice_start(uint64_t n, unsigned s, unsigned k)
{
    return n / s * k + n % s * k / s;
}

/* Calls task(ctx, k) for every slice k of s, a thread each (hz_parallel_for takes items in
 * groups). */
void hz_parallel_slices(unsigned s, hz_task task, void *ctx);

#endif
