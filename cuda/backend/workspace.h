/* One GPU call's state (internal to cuda/backend/): a pool of per-device workspaces whose
 * buffers grow and stay, the call's stream and device, host staging through pinned memory, and
 * the quantiser set up from the device's statistics. Written without the C++ runtime (no new,
 * no exceptions, no static guards) so that the static library links into a C program or plugin
 * with cudart alone. */
#ifndef H5ZGPU_CUDA_WORKSPACE_H
#define H5ZGPU_CUDA_WORKSPACE_H

#include "../common/stages.h"

extern "C" {
#include "backend_gpu.h"
#include "error.h"
}

typedef struct hzc_buf {
    void *p;
    size_t cap;
} hzc_buf;

typedef struct hzc_ws {
    int device, busy, sms;
    cudaStream_t stream;      /* for calls given no stream; blocking, so it orders with the
                                 legacy default stream as a caller of the NULL stream expects */
    hzc_buf in, tab, pay, fin, status, part;   /* device */
    hzc_buf tok, rec, sub, plan;               /* device, Huffman codec */
    hzc_buf ans, coded;                        /* device, Huffman codec: the ANS form's state,
                                                  the chunk with its axes permuted */
    hzc_buf host;                              /* pinned */
    hzc_buf htab;                              /* pinned: the Huffman decoder table (a
                                                  batch's: a slot a chunk) */
    hzc_buf hhead;                             /* pinned: a Huffman payload's head and the
                                                  ANS tables parsed from it */
    hzc_buf jobs, hjobs;                       /* device and its pinned mirror: a launch's
                                                  per-chunk arrays (hzc_job_arrays) */
    cudaEvent_t done;                          /* hzc_wait's, when it sleeps */
    cudaStream_t side;                         /* non-blocking: a pipeline's stages that may
                                                  run beside the call stream's, */
    cudaEvent_t fork, join;                    /* which they leave and rejoin by these */
    hzc_scalars *sc;                           /* device */
    hzc_scalars *hsc;                          /* pinned */
    struct hzc_ws *next;
} hzc_ws;

/* The state of one call: its workspace, stream, and the caller's device to restore. */
typedef struct hzc_call {
    hzc_ws *ws;
    cudaStream_t s;
    int prev_device;
} hzc_call;

/* A CUDA failure as our error: the CPU path is used unless the GPU is required. */
h5zgpu_status hzc_cuda_fail(cudaError_t e, const char *what);

/* Runs call; on a CUDA error sets st (hzc_cuda_fail) and jumps to done. */
#define CK(call, what)                                                                        \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess) {                                                              \
            st = hzc_cuda_fail(e_, what);                                                         \
            goto done;                                                                        \
        }                                                                                     \
    } while (0)

/* Grow-only: a buffer of at least n bytes (the old contents are not kept); pinned host memory,
 * or device memory booked against H5ZGPU_GPU_MEMORY_LIMIT. */
h5zgpu_status hzc_buf_need(hzc_buf *b, uint64_t n, int pinned);

/* A launch's per-chunk arrays in w->jobs (device) and w->hjobs (pinned host, the same layout,
 * to fill and upload or to read back): array k of count items of item[k] bytes, k < n, one
 * after another at 16-byte boundaries; d[k] and h[k] their places. */
h5zgpu_status hzc_job_arrays(hzc_ws *w, unsigned count, unsigned n, const uint64_t *item,
                             void **d, void **h);

/* Takes a workspace of the device and the stream (the workspace's own when stream is NULL). */
h5zgpu_status hzc_call_begin(hzc_call *c, int device, void *stream);

/* Gives the workspace back (and its chunk buffers after a device failure) and restores the
 * caller's device. */
void hzc_call_end(hzc_call *c, h5zgpu_status st);

/* Whether host memory at p is page-locked for CUDA: copies go straight to and from it. */
int hzc_host_pinned(const void *p);

/* Device copy of a host input (through the pinned staging buffer) or the input itself. */
h5zgpu_status hzc_stage_in(hzc_call *c, const void *in, int in_dev, uint64_t n, const void **d_in);

/* Copies of len[i] bytes from src[i] to dst[i] between host buffers, over the cores when they
 * are large. */
h5zgpu_status hzc_copy_host_many(unsigned count, void *const *dst, const void *const *src,
                                 const uint64_t *len);

/* Device copies of count host inputs of n bytes each, one after another from *d_base: gathered
 * into the pinned staging buffer over the cores, then one upload. */
h5zgpu_status hzc_stage_in_many(hzc_call *c, const void *const *in, unsigned count, uint64_t n,
                                uint8_t **d_base);

/* Waits for the work queued on the call's stream: on the workspace's blocking event where the
 * thread's waits sleep (hzc_set_sleeping_waits), leaving the cores to the launches of the other
 * chunks in flight, else as CUDA does by default (spinning, where the cores allow). */
cudaError_t hzc_wait(const hzc_call *c);

/* Reads back the call's counters and waits for its work: where kernel failures show. */
h5zgpu_status hzc_sync_scalars(hzc_call *c);

/* The same for count counters at sc (device) into hsc (pinned). */
h5zgpu_status hzc_sync_many(hzc_call *c, hzc_scalars *hsc, const hzc_scalars *sc, unsigned count);

/* The quantiser of an encoding a from its chunk's statistics hs (qz_init, keep, and the chunk's
 * fill value). */
void hzc_quant_from(const hzc_scalars *hs, const hzc_encode_args *a, qz_quant *Q);

/* The start of an encoding of n values: the call (hzc_call_begin; the caller ends it), the
 * values on the device (*d_in), the quantiser from their statistics (*Q, and a->quant for
 * tests), r->held_fill, and *out = a->out, moved past the fill value's room when the chunk holds
 * fill elements. */
h5zgpu_status hzc_begin_encode(hzc_call *c, const hzc_encode_args *a, uint64_t n,
                               const void **d_in, qz_quant *Q, hzc_encode_result *r,
                               uint8_t **out);

/* Zeroes the call's counters and launches the checksum pass over the payload at d_in
 * (hzc_launch_checksum, with its popcount of npop words from pop_word). */
h5zgpu_status hzc_payload_sum(hzc_call *c, const void *d_in, uint64_t len, uint64_t pop_word,
                              uint64_t npop);

/* The end of an encoding whose payload of len bytes the kernels left at src: refused when it
 * exceeds a->cap, else delivered to out (unless it is there already) with the bound applied and
 * its checksum sum. what names the codec in the message. */
h5zgpu_status hzc_finish_encode(hzc_call *c, const hzc_encode_args *a, uint8_t *out,
                                const void *src, uint64_t len, double eb_abs, const char *what,
                                hzc_encode_result *r);

/* The end of a decoding: waits for the kernels, refuses the chunk when they found it damaged
 * (why), delivers the raw bytes at d_out to a->out and gives the payload's checksum sum. */
h5zgpu_status hzc_finish_decode(hzc_call *c, const hzc_decode_args *a, const void *d_out,
                                uint64_t raw, const char *why, uint32_t *sum);

/* Copies the n bytes the device produced at src to out (device or host). */
h5zgpu_status hzc_deliver(hzc_call *c, void *out, int out_dev, const void *src, uint64_t n,
                          const char *what);

#endif
