/* GPU faults: H5ZGPU_GPU_MEMORY_LIMIT caps the device memory the workspaces may hold. A chunk
 * that needs more must fail in the backend with H5ZGPU_E_DEVICE when the GPU is required, and
 * otherwise come out of the CPU with the CPU's bytes, saying so under H5ZGPU_VERBOSE=1; chunks
 * that fit keep using the GPU. Exits 77 (skip) without a GPU. */
#define _POSIX_C_SOURCE 200809L

#include "util.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SKIP_CODE 77
/* Under the cap, a 32^3 float32 chunk's workspace (about 0.5 MiB) fits and a 128^3 one's (about
 * 30 MiB) does not. */
#define CAP "1M"
#define SMALL_SIDE 32
#define LARGE_SIDE 128

static const h5zgpu_exec on_cpu = {H5ZGPU_EXEC_CPU, 0};
static const h5zgpu_exec on_gpu = {H5ZGPU_EXEC_GPU, 0};
static const h5zgpu_exec on_auto = {H5ZGPU_EXEC_AUTO, 0};

typedef struct chunk {
    h5zgpu_params p;
    void *in, *back_cpu, *back;
    uint8_t *ref, *out;
    size_t raw, cap, ref_len;
} chunk;

static int chunk_init(chunk *c, uint64_t side)
{
    memset(c, 0, sizeof *c);
    c->p = (h5zgpu_params){.codec = H5ZGPU_CODEC_FIXED, .mode = H5ZGPU_MODE_REL, .eb = 1e-3,
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

/* Compression and decompression on exec: the status of each, and the CPU's bytes when OK. */
static void expect_run(const char *what, chunk *c, const h5zgpu_exec *ex, h5zgpu_status want)
{
    size_t len = 0, l = 0;
    h5zgpu_status s = h5zgpu_compress(&c->p, c->in, c->out, c->cap, &len, ex);
    tu_expect(s == want, "%s: compress gave %s, expected %s (%s)", what, h5zgpu_status_string(s),
              h5zgpu_status_string(want), h5zgpu_last_error());
    if (s == H5ZGPU_OK)
        tu_expect(len == c->ref_len && memcmp(c->out, c->ref, len) == 0,
                  "%s: compressed bytes differ from the CPU's (%zu against %zu)", what, len,
                  c->ref_len);
    if (s == H5ZGPU_E_DEVICE)
        tu_expect(strstr(h5zgpu_last_error(), "H5ZGPU_GPU_MEMORY_LIMIT") != NULL,
                  "%s: the error does not name the limit: %s", what, h5zgpu_last_error());
    s = h5zgpu_decompress(c->ref, c->ref_len, c->back, c->raw, &l, ex);
    tu_expect(s == want, "%s: decompress gave %s, expected %s (%s)", what,
              h5zgpu_status_string(s), h5zgpu_status_string(want), h5zgpu_last_error());
    if (s == H5ZGPU_OK)
        tu_expect(memcmp(c->back, c->back_cpu, c->raw) == 0,
                  "%s: decompressed values differ from the CPU's", what);
}

/* The device-pointer API has no CPU to fall back on: over the cap it reports the fault. */
static void expect_device_api(const char *what, chunk *c, h5zgpu_status want)
{
    void *din = NULL, *dout = NULL;
    size_t len = 0;
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

int main(void)
{
    if (!h5zgpu_gpu_available()) {
        printf("gpu_faults: skipped: no usable CUDA device\n");
        return SKIP_CODE;
    }
    /* read once, at the first allocation: set before any GPU work */
    setenv("H5ZGPU_GPU_MEMORY_LIMIT", CAP, 1);
    setenv("H5ZGPU_VERBOSE", "1", 1);
    chunk small, large;
    int ok = chunk_init(&small, SMALL_SIDE) && chunk_init(&large, LARGE_SIDE);
    tu_expect(ok, "inputs and CPU references: %s", h5zgpu_last_error());
    if (!ok)
        goto done;

    expect_run("under the cap, GPU required", &small, &on_gpu, H5ZGPU_OK);
    expect_run("over the cap, GPU required", &large, &on_gpu, H5ZGPU_E_DEVICE);
    expect_device_api("over the cap, device pointers", &large, H5ZGPU_E_DEVICE);

    /* the fallback's note goes to stderr: catch it in a file */
    FILE *log = tmpfile();
    int saved = dup(STDERR_FILENO);
    ok = log && saved >= 0 && fflush(stderr) == 0 && dup2(fileno(log), STDERR_FILENO) >= 0;
    tu_expect(ok, "cannot redirect stderr to a temporary file");
    if (!ok)
        goto done;
    expect_run("over the cap, auto", &large, &on_auto, H5ZGPU_OK);
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
    expect_run("under the cap after a fault, GPU required", &small, &on_gpu, H5ZGPU_OK);
    expect_device_api("under the cap, device pointers", &small, H5ZGPU_OK);
done:
    chunk_free(&small);
    chunk_free(&large);
    return tu_done("gpu_faults");
}
