/* Where a call's work runs: H5ZGPU_DEVICE or the caller's h5zgpu_exec resolved against the
 * GPUs this process can use, and when a GPU failure may be redone on the CPU. */
#ifndef H5ZGPU_EXECUTOR_H
#define H5ZGPU_EXECUTOR_H

#include "h5zgpu.h"

typedef struct hz_target {
    int gpu;       /* run on the GPU */
    int required;  /* no CPU fallback: H5ZGPU_DEVICE=gpu or h5zgpu_exec kind GPU */
    int device;
} hz_target;

/* given, or H5ZGPU_DEVICE when given is NULL; an error when it is malformed or asks for a GPU
 * this process cannot use. */
h5zgpu_status hz_resolve(const h5zgpu_exec *given, hz_target *t);

/* Whether a GPU call that returned st should be redone on the CPU (and says so once when
 * H5ZGPU_VERBOSE=1): not when it succeeded, ran out of room, found the chunk damaged, or the
 * GPU was required. */
int hz_fall_back(const hz_target *t, h5zgpu_status st);

#endif
