/* A parallel for over the cores, with threads that live for one call only: unlike an OpenMP
 * pool, nothing is left parked in the process, so a fork()ed child and a plugin unloaded by
 * HDF5 are both safe. */
#ifndef H5ZGPU_PARALLEL_H
#define H5ZGPU_PARALLEL_H

#include <stdint.h>

typedef void (*hz_task)(void *ctx, uint64_t i);

/* Calls task(ctx, i) once for every i in [0, n), on up to H5ZGPU_THREADS (default: the online
 * cores) threads, the caller's among them; returns when all are done. */
void hz_parallel_for(uint64_t n, hz_task task, void *ctx);

#endif
