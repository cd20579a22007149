/* A thread's scratch buffers for the CPU codecs: the large arrays a chunk needs (codes, tokens,
 * deltas, a permuted copy) come back from the thread's last chunk instead of from the system.
 * glibc serves blocks past its mmap threshold with fresh pages and trims freed heap tops, so a
 * chunk's arrays faulted in anew on every chunk: 13% of a Huffman write and 21% of a read of
 * 1 MiB chunks on the development machine. */
#ifndef H5ZGPU_SCRATCH_H
#define H5ZGPU_SCRATCH_H

#include <stddef.h>

/* n bytes (16-byte aligned), or NULL; free with hz_scratch_free. */
void *hz_scratch(size_t n);

/* Gives p (from hz_scratch, or NULL) back: kept for this thread's next request when it is large
 * and the thread keeps less than HZ_SCRATCH_KEEP bytes, else freed. */
void hz_scratch_free(void *p);

#endif
