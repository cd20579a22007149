/* The pipeline both buffer kinds run: batches of chunks through two slots, the calling thread
 * doing a batch's HDF5 calls (cutting or reading it, storing it) while a helper thread does the
 * codec work of the batch beside it. A worker's failure keeps its status and a message naming
 * the chunk, reported by the calling thread. */
#ifndef H5ZGPU_DATASET_WORKER_H
#define H5ZGPU_DATASET_WORKER_H

#include "plan.h"

#include <pthread.h>

typedef struct ds_worker {
    pthread_t thread;
    int running;
    h5zgpu_status st;
    char msg[512];
} ds_worker;


/* Records, on the worker's thread, that chunk k failed while `what` (its message then
 * h5zgpu_last_error()). */
void ds_worker_failed(ds_worker *w, const ds_plan *pl, size_t k, h5zgpu_status st,
                      const char *what);

/* What the pipeline knows of a batch: the first member of each kind of batch. */
typedef struct ds_slot {
    ds_worker w;
    size_t first, count;   /* chunks first .. first+count-1 */
} ds_slot;

typedef struct ds_stages {
    h5zgpu_status (*prepare)(ds_slot *s, void *ctx);   /* calling thread, before the work */
    void *(*work)(void *slot);                          /* the helper thread */
    h5zgpu_status (*finish)(ds_slot *s, void *ctx);    /* calling thread, after it (or NULL) */
    void *ctx;
} ds_stages;

/* All of pl's chunks, `size` a batch, through the two slots in turn: batch i is prepared, then
 * batch i-1 finished while batch i works. Returns the first failure. */
h5zgpu_status ds_pipeline(const ds_plan *pl, size_t size, ds_slot *const slots[2],
                          const ds_stages *st);

#endif
