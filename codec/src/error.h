/* This thread's last failure message (h5zgpu_last_error). */
#ifndef H5ZGPU_ERROR_H
#define H5ZGPU_ERROR_H

#include "h5zgpu.h"

/* Records a printf-style message for this thread and returns st. */
h5zgpu_status hz_fail(h5zgpu_status st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* One line on stderr, once per process and key, when H5ZGPU_VERBOSE=1. */
void hz_note_once(int key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
