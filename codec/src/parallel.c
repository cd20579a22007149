#define _POSIX_C_SOURCE 200809L /* sysconf */
#include "parallel.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define HZ_MAX_THREADS 64
/* Items taken at once: a tile of the fixed-length codec is 2048 values, tens of microseconds. */
#define HZ_GRAIN 8

typedef struct hz_job {
    hz_task task;
    void *ctx;
    uint64_t n, next;
} hz_job;

static void *worker(void *arg)
{
    hz_job *j = arg;
    for (;;) {
        uint64_t i = __atomic_fetch_add(&j->next, HZ_GRAIN, __ATOMIC_RELAXED);
        if (i >= j->n)
            return NULL;
        uint64_t end = j->n - i < HZ_GRAIN ? j->n : i + HZ_GRAIN;
        for (; i < end; i++)
            j->task(j->ctx, i);
    }
}

static unsigned thread_count(uint64_t n)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const char *env = getenv("H5ZGPU_THREADS");
    long want = env && atol(env) > 0 ? atol(env) : cores;
    uint64_t useful = (n + HZ_GRAIN - 1) / HZ_GRAIN;
    if (want < 1)
        want = 1;
    if (want > HZ_MAX_THREADS)
        want = HZ_MAX_THREADS;
    return (uint64_t)want < useful ? (unsigned)want : (unsigned)useful;
}

void hz_parallel_for(uint64_t n, hz_task task, void *ctx)
{
    hz_job job = {task, ctx, n, 0};
    pthread_t tid[HZ_MAX_THREADS];
    unsigned started = 0, want = thread_count(n);
    /* threads that cannot be created leave their share to the others */
    while (started + 1 < want && pthread_create(&tid[started], NULL, worker, &job) == 0)
        started++;
    worker(&job);
    for (unsigned k = 0; k < started; k++)
        pthread_join(tid[k], NULL);
}
