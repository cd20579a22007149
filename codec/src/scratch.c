#include "scratch.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#define HZ_SCRATCH_MIN ((size_t)64 << 10)   /* smaller blocks: malloc's own bins serve them */
#define HZ_SCRATCH_KEEP ((size_t)64 << 20)  /* bytes a thread keeps between requests */
#define HZ_SCRATCH_SLOTS 16
#define HZ_SCRATCH_HEAD 16                  /* the block's size, before the caller's bytes */

typedef struct scratch_cache {
    unsigned count;
    size_t held;
    unsigned char *blk[HZ_SCRATCH_SLOTS];   /* blocks as malloc gave them, head first */
    size_t size[HZ_SCRATCH_SLOTS];
} scratch_cache;

/* The thread's cache; the key frees it when the thread ends (the TLS pointer keeps it reachable
 * for leak checkers while the thread lives). The destructor's code stays loaded: the plugin is
 * linked nodelete (filter/CMakeLists.txt), and nothing unloads the libraries. */
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t key;
static int key_ok;
static _Thread_local scratch_cache *tls;

static void cache_free(void *arg)
{
    scratch_cache *c = arg;
    for (unsigned i = 0; i < c->count; i++)
        free(c->blk[i]);
    free(c);
}

static void key_init(void)
{
    key_ok = pthread_key_create(&key, cache_free) == 0;
}

static scratch_cache *cache(void)
{
    if (tls)
        return tls;
    pthread_once(&key_once, key_init);
    scratch_cache *c = key_ok ? calloc(1, sizeof *c) : NULL;
    if (c && pthread_setspecific(key, c) != 0) {
        free(c);
        c = NULL;
    }
    return tls = c;
}

void *hz_scratch(size_t n)
{
    scratch_cache *c = n >= HZ_SCRATCH_MIN ? cache() : NULL;
    if (c) {   /* the smallest kept block that holds n without wasting more than n */
        unsigned best = HZ_SCRATCH_SLOTS;
        for (unsigned i = 0; i < c->count; i++)
            if (c->size[i] >= n && c->size[i] / 2 <= n &&
                (best == HZ_SCRATCH_SLOTS || c->size[i] < c->size[best]))
                best = i;
        if (best < HZ_SCRATCH_SLOTS) {
            unsigned char *b = c->blk[best];
            c->held -= c->size[best];
            c->count--;
            c->blk[best] = c->blk[c->count];
            c->size[best] = c->size[c->count];
            return b + HZ_SCRATCH_HEAD;
        }
    }
    if (n > SIZE_MAX - HZ_SCRATCH_HEAD)
        return NULL;
    unsigned char *b = malloc(n + HZ_SCRATCH_HEAD);
    if (!b)
        return NULL;
    *(size_t *)b = n;
    return b + HZ_SCRATCH_HEAD;
}

void hz_scratch_free(void *p)
{
    if (!p)
        return;
    unsigned char *b = (unsigned char *)p - HZ_SCRATCH_HEAD;
    const size_t n = *(size_t *)b;
    scratch_cache *c = n >= HZ_SCRATCH_MIN ? cache() : NULL;
    if (c && c->count < HZ_SCRATCH_SLOTS && c->held + n <= HZ_SCRATCH_KEEP) {
        c->blk[c->count] = b;
        c->size[c->count++] = n;
        c->held += n;
        return;
    }
    free(b);
}
