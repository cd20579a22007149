/* The helper thread of a pipelined batch (worker.h). */
#include "worker.h"

#include "error.h"

#include <stdio.h>

/* Runs work(arg) on a new thread, or on this one when none can be had. */
static h5zgpu_status start(ds_worker *w, void *(*work)(void *), void *arg)
{
    w->st = H5ZGPU_OK;
    if (pthread_create(&w->thread, NULL, work, arg) != 0) {
        work(arg);
        return w->st == H5ZGPU_OK ? H5ZGPU_OK : hz_fail(w->st, "%s", w->msg);
    }
    w->running = 1;
    return H5ZGPU_OK;
}

static void wait_for(ds_worker *w)
{
    if (w->running) {
        pthread_join(w->thread, NULL);
        w->running = 0;
    }
}

/* Waits for the work; its failure becomes this thread's h5zgpu_last_error. */
static h5zgpu_status join(ds_worker *w)
{
    wait_for(w);
    return w->st == H5ZGPU_OK ? H5ZGPU_OK : hz_fail(w->st, "%s", w->msg);
}

void ds_worker_failed(ds_worker *w, const ds_plan *pl, size_t k, h5zgpu_status st,
                      const char *what)
{
    ds_overlap ov;
    char where[256];
    ds_overlap_of(pl, k, &ov);
    w->st = st;
    snprintf(w->msg, sizeof w->msg, "h5zgpu_dataset: %s the chunk at %s: %s", what,
             ds_origin_text(pl, ov.origin, where, sizeof where), h5zgpu_last_error());
}

h5zgpu_status ds_pipeline(const ds_plan *pl, size_t size, ds_slot *const slots[2],
                          const ds_stages *stages)
{
    h5zgpu_status st = H5ZGPU_OK;
    ds_slot *prev = NULL;
    for (size_t first = 0, i = 0; st == H5ZGPU_OK && (first < pl->nchunks || prev); i++) {
        ds_slot *cur = first < pl->nchunks ? slots[i % 2] : NULL;
        if (cur) {
            cur->first = first;
            cur->count = pl->nchunks - first < size ? pl->nchunks - first : size;
            st = stages->prepare(cur, stages->ctx);
            first += cur->count;
        }
        if (prev) {
            h5zgpu_status done = join(&prev->w);
            st = st != H5ZGPU_OK ? st : done;
        }
        if (cur && st == H5ZGPU_OK)
            st = start(&cur->w, stages->work, cur);
        if (prev && st == H5ZGPU_OK && stages->finish)
            st = stages->finish(prev, stages->ctx);
        prev = cur;
    }
    wait_for(&slots[0]->w);   /* after a failure: the other batch's work, left unreported */
    wait_for(&slots[1]->w);
    return st;
}
