#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char last[512] = "no error";

h5zgpu_status hz_fail(h5zgpu_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last, sizeof last, fmt, ap);
    va_end(ap);
    return st;
}

const char *h5zgpu_last_error(void)
{
    return last;
}

void hz_note_once(int key, const char *fmt, ...)
{
    static int said[8];
    const char *v = getenv("H5ZGPU_VERBOSE");
    if (!v || strcmp(v, "1") != 0 || key < 0 || key >= 8 ||
        __atomic_exchange_n(&said[key], 1, __ATOMIC_RELAXED))
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("h5zgpu: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

const char *h5zgpu_status_string(h5zgpu_status s)
{
    switch (s) {
    case H5ZGPU_OK: return "ok";
    case H5ZGPU_E_INVALID_ARG: return "invalid argument";
    case H5ZGPU_E_UNSUPPORTED: return "unsupported";
    case H5ZGPU_E_OUTPUT_TOO_SMALL: return "output buffer too small";
    case H5ZGPU_E_CORRUPT: return "corrupt chunk";
    case H5ZGPU_E_VERSION: return "chunk from a newer format version";
    case H5ZGPU_E_NOMEM: return "out of memory";
    case H5ZGPU_E_DEVICE: return "GPU failure";
    }
    return "unknown status";
}
