/* GPU faults: H5ZGPU_GPU_MEMORY_LIMIT caps the device memory the workspaces may hold. A chunk
 * that needs more must fail in the backend with H5ZGPU_E_DEVICE when the GPU is required, and
 * otherwise come out of the CPU with the CPU's bytes, saying so under H5ZGPU_VERBOSE=1; chunks
 * that fit keep using the GPU. Then a CUDA initialisation failure and a failing kernel,
 * injected with H5ZGPU_GPU_FAULT, must take the same paths, device batches reporting them too.
 * Each codec (1 fixed-length, 2 Huffman, 0 auto) in turn. Exits 77 (skip) without a GPU. */
#define _POSIX_C_SOURCE 200809L

#include "util.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SKIP_CODE 77
/* Under the cap, the workspaces of every codec for a 16^3 float32 chunk (16 KiB of input; the
 * fixed-length codec's workspace is about 4 times its input) fit together, and a 128^3 chunk's
 * (8 MiB of input) do not fit for any codec. */
#define CAP "1M"
#define SMALL_SIDE 16
#define LARGE_SIDE 128

static const h5zgpu_codec codecs[] = {H5ZGPU_CODEC_FIXED, H5ZGPU_CODEC_HUFFMAN,
                                      H5ZGPU_CODEC_AUTO};
#define NCODECS (sizeof codecs / sizeof codecs[0])

static const h5zgpu_exec on_cpu = {H5ZGPU_EXEC_CPU, 0};
static const h5zgpu_exec on_gpu = {H5ZGPU_EXEC_GPU, 0};
static const h5zgpu_exec on_auto = {H5ZGPU_EXEC_AUTO, 0};

typedef struct chunk {
    h5zgpu_params p;
    void *in, *back_cpu, *back;
    uint8_t *ref, *out;
    size_t raw, cap, ref_len;
} chunk;

static int chunk_init(chunk *c, h5zgpu_codec codec, uint64_t side)
{
    memset(c, 0, sizeof *c);
    c->p = (h5zgpu_params){.codec = codec, .mode = H5ZGPU_MODE_REL, .eb = 1e-3,
                           .dtype = H5ZGPU_FLOAT32, .rank = 3, .dims = {side, side, side}};
    c->raw = tu_count(&c->p) * 4;
    c->cap = h5zgpu_compress_bound(&c->p);
    c->in = malloc(c->raw);
    c->back_cpu = malloc(c->raw);
    c->back = malloc(c->raw);
    c->ref = malloc(c->cap);
    c->out = malloc(c->cap);
    if (!c->in || !c->back_cpu || !c->back || !c->ref || !c->out)
        return 0;
    tu_fill(c->p.dtype, tu_count(&c->p), TU_SMOOTH, side, c->in);
    size_t l;
    return h5zgpu_compress(&c->p, c->in, c->ref, c->cap, &c->ref_len, &on_cpu) == H5ZGPU_OK &&
           h5zgpu_decompress(c->ref, c->ref_len, c->back_cpu, c->raw, &l, &on_cpu) == H5ZGPU_OK;
}

static void chunk_free(chunk *c)
{
    free(c->in);
    free(c->back_cpu);
    free(c->back);
    free(c->ref);
    free(c->out);
}

static const char *codec_name(h5zgpu_codec c)
{
    return c == H5ZGPU_CODEC_FIXED ? "fixed" : c == H5ZGPU_CODEC_HUFFMAN ? "huffman" : "auto";
}

/* Compression and decompression on exec: the status of each, and the CPU's bytes when OK. */
/* What a device error's message must name: the memory cap, or the injected fault. */
static const char *cause = "H5ZGPU_GPU_MEMORY_LIMIT";

static void expect_run(const char *step, chunk *c, const h5zgpu_exec *ex, h5zgpu_status want)
{
    size_t len = 0, l = 0;
    char what[128];
    snprintf(what, sizeof what, "%s, %s", codec_name(c->p.codec), step);
    h5zgpu_status s = h5zgpu_compress(&c->p, c->in, c->out, c->cap, &len, ex);
    tu_expect(s == want, "%s: compress gave %s, expected %s (%s)", what, h5zgpu_status_string(s),
              h5zgpu_status_string(want), h5zgpu_last_error());
    if (s == H5ZGPU_OK)
        tu_expect(len == c->ref_len && memcmp(c->out, c->ref, len) == 0,
                  "%s: compressed bytes differ from the CPU's (%zu against %zu)", what, len,
                  c->ref_len);
    if (s == H5ZGPU_E_DEVICE)
        tu_expect(strstr(h5zgpu_last_error(), cause) != NULL,
                  "%s: the error does not name %s: %s", what, cause, h5zgpu_last_error());
    s = h5zgpu_decompress(c->ref, c->ref_len, c->back, c->raw, &l, ex);
    tu_expect(s == want, "%s: decompress gave %s, expected %s (%s)", what,
              h5zgpu_status_string(s), h5zgpu_status_string(want), h5zgpu_last_error());
    if (s == H5ZGPU_OK)
        tu_expect(memcmp(c->back, c->back_cpu, c->raw) == 0,
                  "%s: decompressed values differ from the CPU's", what);
}

/* The device-pointer API has no CPU to fall back on: over the cap it reports the fault. */
static void expect_device_api(const char *step, chunk *c, h5zgpu_status want)
{
    void *din = NULL, *dout = NULL;
    size_t len = 0;
    char what[128];
    snprintf(what, sizeof what, "%s, %s", codec_name(c->p.codec), step);
    int ok = cudaMalloc(&din, c->raw) == cudaSuccess && cudaMalloc(&dout, c->cap) == cudaSuccess &&
             cudaMemcpy(din, c->in, c->raw, cudaMemcpyHostToDevice) == cudaSuccess;
    tu_expect(ok, "%s: test buffers on the device", what);
    if (ok) {
        h5zgpu_status s = h5zgpu_compress_device(&c->p, din, dout, c->cap, &len, 0, NULL);
        tu_expect(s == want, "%s: compress_device gave %s, expected %s (%s)", what,
                  h5zgpu_status_string(s), h5zgpu_status_string(want), h5zgpu_last_error());
        if (s == H5ZGPU_OK)
            tu_expect(len == c->ref_len &&
                          cudaMemcpy(c->out, dout, len, cudaMemcpyDeviceToHost) == cudaSuccess &&
                          memcmp(c->out, c->ref, len) == 0,
                      "%s: compress_device bytes differ from the CPU's", what);
    }
    cudaFree(din);
    cudaFree(dout);
}

/* A device batch of BATCH_COPIES copies of c (chunks coded together where the codec allows):
 * its compression gives want, naming the cause when it fails, and the CPU's bytes when not. */
#define BATCH_COPIES 2

static void expect_device_batch(const char *step, chunk *c, h5zgpu_status want)
{
    void *din[BATCH_COPIES] = {NULL}, *dout[BATCH_COPIES] = {NULL};
    size_t cap[BATCH_COPIES], len[BATCH_COPIES] = {0}, done = 0;
    char what[128];
    snprintf(what, sizeof what, "%s, %s", codec_name(c->p.codec), step);
    int ok = 1;
    for (unsigned i = 0; i < BATCH_COPIES && ok; i++) {
        cap[i] = c->cap;
        ok = cudaMalloc(&din[i], c->raw) == cudaSuccess &&
             cudaMalloc(&dout[i], c->cap) == cudaSuccess &&
             cudaMemcpy(din[i], c->in, c->raw, cudaMemcpyHostToDevice) == cudaSuccess;
    }
    tu_expect(ok, "%s: test buffers on the device", what);
    if (ok) {
        h5zgpu_status s = h5zgpu_compress_device_batch(&c->p, BATCH_COPIES,
                                                       (const void *const *)din, dout, cap, len,
                                                       0, &done);
        tu_expect(s == want, "%s: compress_device_batch gave %s, expected %s (%s)", what,
                  h5zgpu_status_string(s), h5zgpu_status_string(want), h5zgpu_last_error());
        if (s == H5ZGPU_E_DEVICE)
            tu_expect(strstr(h5zgpu_last_error(), cause) != NULL,
                      "%s: the error does not name %s: %s", what, cause, h5zgpu_last_error());
        for (unsigned i = 0; s == H5ZGPU_OK && i < BATCH_COPIES; i++)
            tu_expect(len[i] == c->ref_len &&
                          cudaMemcpy(c->out, dout[i], len[i], cudaMemcpyDeviceToHost) ==
                              cudaSuccess &&
                          memcmp(c->out, c->ref, len[i]) == 0,
                      "%s: chunk %u's bytes differ from the CPU's", what, i);
    }
    for (unsigned i = 0; i < BATCH_COPIES; i++) {
        cudaFree(din[i]);
        cudaFree(dout[i]);
    }
}

int main(void)
{
    if (!h5zgpu_gpu_available()) {
        printf("gpu_faults: skipped: no usable CUDA device\n");
        return SKIP_CODE;
    }
    /* read once, at the first allocation: set before any GPU work */
    setenv("H5ZGPU_GPU_MEMORY_LIMIT", CAP, 1);
    setenv("H5ZGPU_VERBOSE", "1", 1);
    chunk small[NCODECS], large[NCODECS];
    int ok = 1;
    memset(small, 0, sizeof small);
    memset(large, 0, sizeof large);
    for (size_t k = 0; k < NCODECS && ok; k++)
        ok = chunk_init(&small[k], codecs[k], SMALL_SIDE) &&
             chunk_init(&large[k], codecs[k], LARGE_SIDE);
    tu_expect(ok, "inputs and CPU references: %s", h5zgpu_last_error());
    if (!ok)
        goto done;

    for (size_t k = 0; k < NCODECS; k++) {
        expect_run("under the cap, GPU required", &small[k], &on_gpu, H5ZGPU_OK);
        expect_run("over the cap, GPU required", &large[k], &on_gpu, H5ZGPU_E_DEVICE);
        expect_device_api("over the cap, device pointers", &large[k], H5ZGPU_E_DEVICE);
    }

    /* the fallback's note goes to stderr, once a process: catch it in a file */
    FILE *log = tmpfile();
    int saved = dup(STDERR_FILENO);
    ok = log && saved >= 0 && fflush(stderr) == 0 && dup2(fileno(log), STDERR_FILENO) >= 0;
    tu_expect(ok, "cannot redirect stderr to a temporary file");
    if (!ok)
        goto done;
    for (size_t k = 0; k < NCODECS; k++)
        expect_run("over the cap, auto", &large[k], &on_auto, H5ZGPU_OK);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    char note[1024] = "";
    rewind(log);
    size_t got = fread(note, 1, sizeof note - 1, log);
    note[got] = 0;
    fclose(log);
    tu_expect(strstr(note, "GPU path failed") && strstr(note, "H5ZGPU_GPU_MEMORY_LIMIT"),
              "H5ZGPU_VERBOSE=1 did not note the fallback; stderr held: '%s'", note);

    /* a failed call leaves the GPU usable for chunks that fit */
    for (size_t k = 0; k < NCODECS; k++) {
        expect_run("under the cap after a fault, GPU required", &small[k], &on_gpu, H5ZGPU_OK);
        expect_device_api("under the cap, device pointers", &small[k], H5ZGPU_OK);
    }

    /* CUDA initialisation failure, then a failing kernel: the CPU's bytes under auto, the error
     * when the GPU is required or device pointers were given, and the GPU usable afterwards */
    static const char *const faults[] = {"init", "kernel"};
    for (size_t f = 0; f < 2; f++) {
        char step[64];
        setenv("H5ZGPU_GPU_FAULT", faults[f], 1);
        cause = "H5ZGPU_GPU_FAULT";
        for (size_t k = 0; k < NCODECS; k++) {
            snprintf(step, sizeof step, "%s fault, auto", faults[f]);
            expect_run(step, &small[k], &on_auto, H5ZGPU_OK);
            snprintf(step, sizeof step, "%s fault, GPU required", faults[f]);
            expect_run(step, &small[k], &on_gpu, H5ZGPU_E_DEVICE);
            snprintf(step, sizeof step, "%s fault, device pointers", faults[f]);
            expect_device_api(step, &small[k], H5ZGPU_E_DEVICE);
            snprintf(step, sizeof step, "%s fault, device batch", faults[f]);
            expect_device_batch(step, &small[k], H5ZGPU_E_DEVICE);
        }
        unsetenv("H5ZGPU_GPU_FAULT");
        for (size_t k = 0; k < NCODECS; k++) {
            snprintf(step, sizeof step, "after the %s fault, GPU required", faults[f]);
            expect_run(step, &small[k], &on_gpu, H5ZGPU_OK);
        }
    }
done:
    for (size_t k = 0; k < NCODECS; k++) {
        chunk_free(&small[k]);
        chunk_free(&large[k]);
    }
    return tu_done("gpu_faults");
}
