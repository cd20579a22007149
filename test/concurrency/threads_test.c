/* Eight threads using the C API at once, each on its own data: every chunk and every decoded
 * array must be byte-identical to what one thread alone produces, and each thread's
 * h5zgpu_last_error must stay its own. The executor is H5ZGPU_DEVICE's (GPU on the device). */
#define _POSIX_C_SOURCE 200809L /* pthread_barrier_t */
#include "util.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 8
/* Round trips each thread makes while the others run: enough to interleave on 2 cores. */
#define ROUNDS 12

/* One job per thread: different shapes, types, modes and data. */
static const struct {
    h5zgpu_dtype t;
    h5zgpu_mode mode;
    double eb;
    unsigned rank;
    uint64_t dims[3];
    tu_pattern pat;
} jobs[NTHREADS] = {
    {H5ZGPU_FLOAT32, H5ZGPU_MODE_ABS, 1e-3, 3, {40, 50, 60}, TU_SMOOTH},
    {H5ZGPU_FLOAT64, H5ZGPU_MODE_REL, 1e-4, 2, {300, 257}, TU_SMOOTH},
    {H5ZGPU_FLOAT32, H5ZGPU_MODE_PWREL, 1e-2, 1, {100001}, TU_NOISE},
    {H5ZGPU_FLOAT64, H5ZGPU_MODE_ABS, 1e-6, 3, {33, 65, 17}, TU_SPECIAL},
    {H5ZGPU_FLOAT32, H5ZGPU_MODE_REL, 1e-2, 2, {512, 100}, TU_HUGE},
    {H5ZGPU_FLOAT64, H5ZGPU_MODE_PWREL, 1e-5, 3, {20, 20, 20}, TU_SMOOTH},
    {H5ZGPU_FLOAT32, H5ZGPU_MODE_ABS, 0, 1, {50000}, TU_BITS},
    {H5ZGPU_FLOAT64, H5ZGPU_MODE_ABS, 1e-2, 2, {129, 131}, TU_CONSTANT},
};

typedef struct work {
    unsigned id;
    h5zgpu_params p;
    void *in;
    size_t n, raw;
    uint8_t *ref_chunk; /* the single-threaded results */
    size_t ref_len;
    void *ref_out;
    unsigned mismatches, failures, wrong_errors;
} work;

static pthread_barrier_t start;

static h5zgpu_status round_trip(const work *w, uint8_t *chunk, size_t *len, void *out)
{
    size_t got;
    h5zgpu_status st = h5zgpu_compress(&w->p, w->in, chunk, h5zgpu_compress_bound(&w->p), len,
                                       NULL);
    return st != H5ZGPU_OK ? st : h5zgpu_decompress(chunk, *len, out, w->raw, &got, NULL);
}

static void *thread_main(void *arg)
{
    work *w = arg;
    uint8_t *chunk = malloc(h5zgpu_compress_bound(&w->p));
    void *out = malloc(w->raw);
    char want[64];
    pthread_barrier_wait(&start);
    for (unsigned r = 0; r < ROUNDS && chunk && out; r++) {
        size_t len = 0;
        h5zgpu_status st = round_trip(w, chunk, &len, out);
        if (st != H5ZGPU_OK)
            w->failures++;
        else if (len != w->ref_len || memcmp(chunk, w->ref_chunk, len) != 0 ||
                 memcmp(out, w->ref_out, w->raw) != 0)
            w->mismatches++;
        /* a failure of this thread's own: its message, not another thread's, must be kept */
        h5zgpu_params bad = w->p;
        bad.eb = -(double)(w->id + 1);
        snprintf(want, sizeof want, "%g ", bad.eb);
        if (h5zgpu_params_check(&bad) != H5ZGPU_E_INVALID_ARG ||
            strstr(h5zgpu_last_error(), want) == NULL)
            w->wrong_errors++;
    }
    free(chunk);
    free(out);
    return NULL;
}

int main(void)
{
    work w[NTHREADS];
    pthread_t th[NTHREADS];
    for (unsigned i = 0; i < NTHREADS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].id = i;
        w[i].p = (h5zgpu_params){.codec = H5ZGPU_CODEC_FIXED, .mode = jobs[i].mode,
                                 .eb = jobs[i].eb, .dtype = jobs[i].t, .rank = jobs[i].rank};
        memcpy(w[i].p.dims, jobs[i].dims, sizeof jobs[i].dims);
        w[i].n = (size_t)tu_count(&w[i].p);
        w[i].raw = w[i].n * tu_esize(jobs[i].t);
        w[i].in = malloc(w[i].raw);
        w[i].ref_out = malloc(w[i].raw);
        w[i].ref_chunk = malloc(h5zgpu_compress_bound(&w[i].p));
        if (!w[i].in || !w[i].ref_out || !w[i].ref_chunk) {
            printf("threads_test: out of memory\n");
            return 1;
        }
        tu_fill(jobs[i].t, w[i].n, jobs[i].pat, i + 1, w[i].in);
        h5zgpu_status st = round_trip(&w[i], w[i].ref_chunk, &w[i].ref_len, w[i].ref_out);
        tu_expect(st == H5ZGPU_OK, "job %u alone: %s (%s)", i, h5zgpu_status_string(st),
                  h5zgpu_last_error());
    }
    pthread_barrier_init(&start, NULL, NTHREADS);
    for (unsigned i = 0; i < NTHREADS; i++)
        tu_expect(pthread_create(&th[i], NULL, thread_main, &w[i]) == 0, "pthread_create %u", i);
    for (unsigned i = 0; i < NTHREADS; i++) {
        pthread_join(th[i], NULL);
        tu_expect(w[i].failures == 0 && w[i].mismatches == 0,
                  "job %u: %u of %u round trips failed, %u differ from the single-threaded bytes",
                  i, w[i].failures, ROUNDS, w[i].mismatches);
        tu_expect(w[i].wrong_errors == 0,
                  "job %u: h5zgpu_last_error gave another thread's message %u times", i,
                  w[i].wrong_errors);
        free(w[i].in);
        free(w[i].ref_out);
        free(w[i].ref_chunk);
    }
    pthread_barrier_destroy(&start);
    printf("threads_test: %d threads x %d round trips (executor: H5ZGPU_DEVICE=%s)\n", NTHREADS,
           ROUNDS, getenv("H5ZGPU_DEVICE") ? getenv("H5ZGPU_DEVICE") : "unset");
    return tu_done("threads_test");
}
