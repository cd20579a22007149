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
/* How long an idle pool thread polls for the next call before it sleeps. A chunk's calls follow
 * each other within tens of microseconds, and a sleeping thread took longer than that to wake
 * on a 16-core virtual machine: its threads came too late to help. Only while the pool's
 * threads and a caller fit the process's cores: beyond, a polling thread takes the core another
 * needs (16 threads on 2 cores wrote at 0.44x of not polling), and a caller waiting for the
 * threads inside its call yields instead of polling. */
#define HZ_SPIN_NS 200000
/* Calls in flight at once (callers in several threads, calls inside tasks); a call finding
 * every slot taken runs its items alone, as it would with every pool thread busy. */
#define HZ_SLOTS 16
#define HZ_LINE 64

/* A call's place for pool threads to join. Its word packs (generation << 32 | places << 16 |
 * inside): the pool threads that may still join and those working on it. A pool thread joins
 * with one compare-and-swap of the word, so that joining takes no lock (16 threads queueing on
 * a mutex made an empty call cost 15-16 us on a 16-core virtual machine, where a contended
 * lock sleeps in the kernel; 6-7 us now), and one holding an older generation cannot join a
 * later call. */
typedef struct hz_slot {
    _Alignas(HZ_LINE) uint64_t word;
    int taken;              /* a call owns the slot (atomic) */
    hz_task task;           /* the call's: set before its places are published */
    void *ctx;
    uint64_t n;
    unsigned grain;         /* items taken at once */
    _Alignas(HZ_LINE) uint64_t next;   /* the first item not yet taken (atomic) */
} hz_slot;

#define WORD_GEN(w) ((w) >> 32)
#define WORD_PLACES(w) (((w) >> 16) & 0xffffu)
#define WORD_INSIDE(w) ((w) & 0xffffu)

/* Threads started on first use, parked between calls and joined at exit. The lock guards
 * starting threads and sleeping; the slots are lock-free. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t posted;  /* a call was posted, or the pool closes */
    unsigned posts;         /* calls posted so far (atomic) */
    unsigned sleepers;      /* pool threads asleep on posted or about to (atomic) */
    unsigned threads;       /* pool threads running (atomic reads outside the lock) */
    int closing;            /* the process exits: pool threads leave, none start (atomic) */
    pthread_t tid[HZ_MAX_THREADS];
    hz_slot slot[HZ_SLOTS];
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .posted = PTHREAD_COND_INITIALIZER};

static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static unsigned pool_cores = 1;   /* the cores this process may run on */

/* Whether polling leaves every thread of the pool, and a caller, a core of its own. */
static int may_spin(void)
{
    return __atomic_load_n(&pool.threads, __ATOMIC_RELAXED) < pool_cores;
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

/* Polls pool.posts for HZ_SPIN_NS at most; returns when it differs from seen. */
static void spin_while_posts(unsigned seen)
{
    const uint64_t until = now_ns() + HZ_SPIN_NS;
    for (unsigned k = 1; __atomic_load_n(&pool.posts, __ATOMIC_ACQUIRE) == seen; k++) {
        if (k % 64 == 0 && now_ns() > until)
            return;
        relax();
    }
}

static void run_items(hz_slot *s)
{
    for (;;) {
        uint64_t i = __atomic_fetch_add(&s->next, s->grain, __ATOMIC_RELAXED);
        if (i >= s->n)
            return;
        uint64_t end = s->n - i < s->grain ? s->n : i + s->grain;
        for (; i < end; i++)
            s->task(s->ctx, i);
    }
}

/* Joins a call with places left, runs items of it until none are left and leaves it; returns
 * whether it found one. */
static int join_one(void)
{
    for (unsigned k = 0; k < HZ_SLOTS; k++) {
        hz_slot *s = &pool.slot[k];
        uint64_t w = __atomic_load_n(&s->word, __ATOMIC_ACQUIRE);
        while (WORD_PLACES(w)) {
            const uint64_t joined = w - (1u << 16) + 1u;
            if (__atomic_compare_exchange_n(&s->word, &w, joined, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) {
                run_items(s);
                __atomic_sub_fetch(&s->word, 1u, __ATOMIC_RELEASE);
                return 1;
            }
        }
    }
    return 0;
}

static void *pool_thread(void *unused)
{
    (void)unused;
    while (!__atomic_load_n(&pool.closing, __ATOMIC_ACQUIRE)) {
        const unsigned seen = __atomic_load_n(&pool.posts, __ATOMIC_SEQ_CST);
        if (join_one())
            continue;
        if (may_spin())
            spin_while_posts(seen);
        if (__atomic_load_n(&pool.posts, __ATOMIC_SEQ_CST) != seen)
            continue;
        /* asleep until the next post: a poster reads sleepers after counting its post, this
         * thread reads posts after counting itself, so one of them sees the other */
        pthread_mutex_lock(&pool.lock);
        __atomic_add_fetch(&pool.sleepers, 1u, __ATOMIC_SEQ_CST);
        while (__atomic_load_n(&pool.posts, __ATOMIC_SEQ_CST) == seen &&
               !__atomic_load_n(&pool.closing, __ATOMIC_ACQUIRE))
            pthread_cond_wait(&pool.posted, &pool.lock);
        __atomic_sub_fetch(&pool.sleepers, 1u, __ATOMIC_SEQ_CST);
        pthread_mutex_unlock(&pool.lock);
    }
    return NULL;
}

/* Joined at exit, so that no thread of ours outlives the process's own teardown (and memory
 * checkers see every thread's memory freed). A call still running finishes its items alone. */
__attribute__((destructor)) static void pool_stop(void)
{
    pthread_mutex_lock(&pool.lock);
    __atomic_store_n(&pool.closing, 1, __ATOMIC_RELEASE);
    const unsigned n = pool.threads;
    pthread_cond_broadcast(&pool.posted);
    pthread_mutex_unlock(&pool.lock);
    for (unsigned k = 0; k < n; k++)
        pthread_join(pool.tid[k], NULL);
}

/* A child of fork() has none of the parent's pool threads: it starts with an empty pool (a
 * thread of the parent may have held the lock, or a slot, at the fork). */
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
    pool.threads = 0;
    pool.sleepers = 0;
    for (unsigned k = 0; k < HZ_SLOTS; k++) {
        pool.slot[k].word = 0;
        pool.slot[k].taken = 0;
    }
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

/* A free slot, taken, or NULL when every one is. */
static hz_slot *take_slot(void)
{
    for (unsigned k = 0; k < HZ_SLOTS; k++) {
        int was = 0;
        if (__atomic_compare_exchange_n(&pool.slot[k].taken, &was, 1, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return &pool.slot[k];
    }
    return NULL;
}

/* Starts pool threads up to want - 1 (threads that cannot be started leave their share to the
 * others), offers s's items to want - 1 of them and wakes the sleeping ones. */
static void post(hz_slot *s, unsigned want)
{
    if (__atomic_load_n(&pool.threads, __ATOMIC_ACQUIRE) + 1 < want) {
        pthread_mutex_lock(&pool.lock);
        while (!pool.closing && pool.threads + 1 < want &&
               pthread_create(&pool.tid[pool.threads], NULL, pool_thread, NULL) == 0)
            __atomic_add_fetch(&pool.threads, 1u, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&pool.lock);
    }
    const uint64_t w = __atomic_load_n(&s->word, __ATOMIC_RELAXED);
    __atomic_store_n(&s->word, (uint64_t)WORD_GEN(w) << 32 | (uint64_t)(want - 1) << 16,
                     __ATOMIC_RELEASE);
    __atomic_add_fetch(&pool.posts, 1u, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&pool.sleepers, __ATOMIC_SEQ_CST)) {
        pthread_mutex_lock(&pool.lock);
        pthread_cond_broadcast(&pool.posted);
        pthread_mutex_unlock(&pool.lock);
    }
}

/* Closes s to pool threads, waits for those inside to leave and frees it for the next call
 * (a later generation). */
static void finish(hz_slot *s)
{
    uint64_t w = __atomic_load_n(&s->word, __ATOMIC_ACQUIRE);
    while (!__atomic_compare_exchange_n(&s->word, &w, w & ~((uint64_t)0xffffu << 16), 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        ;
    const int spin = may_spin();
    while (WORD_INSIDE(__atomic_load_n(&s->word, __ATOMIC_ACQUIRE))) {
        if (spin)   /* those inside are on their last items */
            relax();
        else
            sched_yield();
    }
    __atomic_store_n(&s->word, (WORD_GEN(w) + 1) << 32, __ATOMIC_RELAXED);
    __atomic_store_n(&s->taken, 0, __ATOMIC_RELEASE);
}

static void run(uint64_t n, unsigned grain, hz_task task, void *ctx)
{
    unsigned want = width();
    /* four grains a thread at least, where the items allow */
    while (grain > 1 && n < 4u * want * grain)
        grain /= 2;
    const uint64_t useful = (n + grain - 1) / grain;
    want = want < useful ? want : (unsigned)useful;
    hz_slot *s = want > 1 ? take_slot() : NULL;
    hz_slot alone;
    if (!s)
        s = &alone;
    s->task = task;
    s->ctx = ctx;
    s->n = n;
    s->grain = grain;
    s->next = 0;
    if (s != &alone)
        post(s, want);
    run_items(s);
    if (s != &alone)
        finish(s);
}

void hz_parallel_for(uint64_t n, hz_task task, void *ctx)
{
    run(n, HZ_GRAIN, task, ctx);
}

void hz_parallel_slices(unsigned s, hz_task task, void *ctx)
{
    run(s, 1, task, ctx);
}
