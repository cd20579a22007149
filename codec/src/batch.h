/* A batch call's state (batch.c), shared with the path that codes chunks together on the GPU
 * (batch_group.c). */
#ifndef H5ZGPU_BATCH_H
#define H5ZGPU_BATCH_H

#include "h5zgpu.h"

#include <pthread.h>
#include <stddef.h>

typedef struct hz_batch {
    size_t count;
    size_t next;               /* the next chunk to take (atomic) */
    h5zgpu_status *st;         /* each chunk's status */
    unsigned char *taken;      /* each chunk: done (or failed) by hz_batch_group */
    const h5zgpu_params *p;    /* compression; NULL: decompression */
    const void *const *in;
    const size_t *in_len;
    void *const *out;
    const size_t *out_cap;
    size_t *out_len;
    const h5zgpu_exec *exec;
    int device;                /* device buffers on this CUDA device; -1: host buffers */
    pthread_mutex_t lock;      /* guards the first failure's message */
    size_t failed;             /* the lowest failing chunk so far (count: none; atomic) */
    int sleep;                 /* its threads' waits for the GPU sleep: they outnumber the cores
                                  (hzc_set_sleeping_waits) */
    char why[512];             /* its message (h5zgpu_last_error is the failing thread's) */
} hz_batch;

/* Chunk i's status; of the failures, the lowest chunk's is kept with its message. */
void hz_batch_record(hz_batch *b, size_t i, h5zgpu_status st);

/* Whether chunk i comes after a failure: it need not run (the batch reports the first). */
int hz_batch_past_failure(hz_batch *b, size_t i);

/* Device batches: chunks coded together, a pass of launches for a group of chunks (compressing
 * with the fixed-length or the Huffman codec, decompressing fixed-length chunks); those it did
 * (or that failed) are marked taken, their statuses recorded. */
void hz_batch_group(hz_batch *b);

#endif
