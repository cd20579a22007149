#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "parallel.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define HZ_MAX_THREADS 64
/* Items taken at once, at most: a tile of the fixed-length codec is 2048 values, tens of
 * microseconds; fewer when that would leave threads without items. */
#define HZ_GRAIN 8
/* How long an idle pool thread, or a caller waiting for pool threads, polls before it sleeps.
 * A chunk's calls follow each other within tens of microseconds, and a sleeping thread took
 * longer than that to wake on a 16-core virtual machine: its threads came too late to help.
 * Only while the pool's threads and a caller fit the process's cores: beyond, a polling thread
 * takes the core another needs (16 threads on 2 cores wrote at 0.44x of not polling). */
#define HZ_SPIN_NS 200000

typedef struct hz_job {
    hz_task task;
    void *ctx;
    uint64_t n, next;       /* next: the first item not yet taken (atomic) */
    unsigned grain;         /* items taken at once */
    unsigned places;        /* pool threads that may still join; listed while > 0 */
    unsigned inside;        /* pool threads working on it */
    struct hz_job *later;   /* the next listed job */
} hz_job;

/* Threads started on first use, parked between calls and joined at exit. The lock guards
 * everything but a job's next. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t posted;  /* a job was listed, or the pool closes */
    pthread_cond_t left;    /* a pool thread left a job */
    hz_job *first;          /* listed jobs, oldest first */
    unsigned posts;         /* jobs listed so far (read without the lock while polling) */
    unsigned threads;       /* pool threads running */
    int closing;            /* the process exits: pool threads leave, none start */
    pthread_t tid[HZ_MAX_THREADS];
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER,
           .posted = PTHREAD_COND_INITIALIZER,
           .left = PTHREAD_COND_INITIALIZER};

static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static unsigned pool_cores = 1;   /* the cores this process may run on */

/* Whether polling leaves every thread of the pool, and a caller, a core of its own (under the
 * lock). */
static int may_spin(void)
{
    return pool.threads < pool_cores;
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Polls *word for HZ_SPIN_NS at most; returns when it equals value (equal) or differs from
 * it (!equal). */
static void spin_until(const unsigned *word, unsigned value, int equal)
{
    const uint64_t until = now_ns() + HZ_SPIN_NS;
    for (unsigned k = 1; (__atomic_load_n(word, __ATOMIC_ACQUIRE) == value) != equal; k++) {
        if (k % 64 == 0 && now_ns() > until)
            return;
        relax();
    }
}

static void run_items(hz_job *j)
{
    for (;;) {
        uint64_t i = __atomic_fetch_add(&j->next, j->grain, __ATOMIC_RELAXED);
        if (i >= j->n)
            return;
        uint64_t end = j->n - i < j->grain ? j->n : i + j->grain;
        for (; i < end; i++)
            j->task(j->ctx, i);
    }
}

static void unlist(hz_job *j)
{
    hz_job **at = &pool.first;
    while (*at != j)
        at = &(*at)->later;
    *at = j->later;
    j->places = 0;
}

static void *pool_thread(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&pool.lock);
    while (!pool.closing) {
        hz_job *j = pool.first;
        if (!j) {
            const unsigned seen = pool.posts;
            const int spin = may_spin();
            pthread_mutex_unlock(&pool.lock);
            if (spin)
                spin_until(&pool.posts, seen, 0);
            pthread_mutex_lock(&pool.lock);
            if (pool.posts == seen && !pool.closing)
                pthread_cond_wait(&pool.posted, &pool.lock);
            continue;
        }
        if (--j->places == 0)
            unlist(j);
        __atomic_add_fetch(&j->inside, 1, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&pool.lock);
        run_items(j);
        pthread_mutex_lock(&pool.lock);
        if (__atomic_sub_fetch(&j->inside, 1, __ATOMIC_RELEASE) == 0)
            pthread_cond_broadcast(&pool.left);
    }
    pthread_mutex_unlock(&pool.lock);
    return NULL;
}

/* Joined at exit, so that no thread of ours outlives the process's own teardown (and memory
 * checkers see every thread's memory freed). A call still running finishes its items alone. */
__attribute__((destructor)) static void pool_stop(void)
{
    pthread_mutex_lock(&pool.lock);
    pool.closing = 1;
    const unsigned n = pool.threads;
    pthread_cond_broadcast(&pool.posted);
    pthread_mutex_unlock(&pool.lock);
    for (unsigned k = 0; k < n; k++)
        pthread_join(pool.tid[k], NULL);
}

/* A child of fork() has none of the parent's pool threads: it starts with an empty pool (a
 * thread of the parent may have held the lock at the fork). */
static void before_fork(void)
{
    pthread_mutex_lock(&pool.lock);
}

static void after_fork_parent(void)
{
    pthread_mutex_unlock(&pool.lock);
}

static void after_fork_child(void)
{
    pthread_mutex_init(&pool.lock, NULL);
    pthread_cond_init(&pool.posted, NULL);
    pthread_cond_init(&pool.left, NULL);
    pool.first = NULL;
    pool.threads = 0;
}

/* Registered once. Safe because nothing unloads this code: the plugin is linked nodelete
 * (filter/CMakeLists.txt) and the shared library too (codec/CMakeLists.txt). */
static void pool_init(void)
{
    cpu_set_t mine;
    long cores = sched_getaffinity(0, sizeof mine, &mine) == 0 ? CPU_COUNT(&mine)
                                                                : sysconf(_SC_NPROCESSORS_ONLN);
    pool_cores = cores > 0 ? (unsigned)cores : 1u;
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

/* H5ZGPU_THREADS, else the cores this process may run on, at most HZ_MAX_THREADS. */
static unsigned width(void)
{
    pthread_once(&pool_once, pool_init);
    const char *env = getenv("H5ZGPU_THREADS");
    long want = env && atol(env) > 0 ? atol(env) : pool_cores;
    return want > HZ_MAX_THREADS ? HZ_MAX_THREADS : (unsigned)want;
}

unsigned hz_threads(void)
{
    return width();
}

unsigned hz_slices(uint64_t n, uint64_t min)
{
    const uint64_t most = min ? n / min : n, want = width();
    return most < 1 ? 1u : (unsigned)(most < want ? most : want);
}

/* Lists j for want - 1 pool threads, starting threads up to that many (threads that cannot be
 * started leave their share to the others). */
static void post(hz_job *j, unsigned want)
{
    pthread_mutex_lock(&pool.lock);
    while (!pool.closing && pool.threads + 1 < want &&
           pthread_create(&pool.tid[pool.threads], NULL, pool_thread, NULL) == 0)
        pool.threads++;
    j->places = want - 1;
    hz_job **at = &pool.first;
    while (*at)
        at = &(*at)->later;
    *at = j;
    __atomic_add_fetch(&pool.posts, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&pool.posted);
    pthread_mutex_unlock(&pool.lock);
}

static void run(uint64_t n, unsigned grain, hz_task task, void *ctx)
{
    unsigned want = width();
    /* four grains a thread at least, where the items allow */
    while (grain > 1 && n < 4u * want * grain)
        grain /= 2;
    const uint64_t useful = (n + grain - 1) / grain;
    want = want < useful ? want : (unsigned)useful;
    hz_job j = {.task = task, .ctx = ctx, .n = n, .grain = grain};
    if (want > 1)
        post(&j, want);
    run_items(&j);
    if (want <= 1)
        return;
    /* every item is taken: no pool thread may join any more; wait for those inside */
    pthread_mutex_lock(&pool.lock);
    if (j.places)
        unlist(&j);
    const int spin = may_spin();
    pthread_mutex_unlock(&pool.lock);
    if (spin)
        spin_until(&j.inside, 0, 1);
    pthread_mutex_lock(&pool.lock);
    while (__atomic_load_n(&j.inside, __ATOMIC_ACQUIRE))
        pthread_cond_wait(&pool.left, &pool.lock);
    pthread_mutex_unlock(&pool.lock);
}

void hz_parallel_for(uint64_t n, hz_task task, void *ctx)
{
    run(n, HZ_GRAIN, task, ctx);
}

void hz_parallel_slices(unsigned s, hz_task task, void *ctx)
{
    run(s, 1, task, ctx);
}
