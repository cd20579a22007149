/* A Nyx-style write: the field lives in GPU memory, each HDF5 chunk is compressed on the GPU
 * (h5zgpu_compress_device) and handed to HDF5 as finished bytes with H5Dwrite_chunk, so no
 * uncompressed data crosses PCIe. The dataset carries filter 33900, so any HDF5 reader with the
 * plugin (h5py, h5dump, this program) reads it back; the program does, and checks every value.
 *
 * usage: gpu_direct_write FILE [N]    (N^3 float32 field, N a multiple of 64; default 256)
 * Needs HDF5_PLUGIN_PATH naming the plugin's directory (for H5Dcreate and the read back). */
#include "h5zgpu.h"

#include <cuda_runtime_api.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CHUNK 64
#define REL_EB 1e-3

#define CHECK(cond, ...)                                                                        \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            fprintf(stderr, "gpu_direct_write: " __VA_ARGS__);                                  \
            fputc('\n', stderr);                                                                \
            goto done;                                                                          \
        }                                                                                       \
    } while (0)

/* A smooth positive test field, standing in for what the simulation computed on the GPU. */
static float value(size_t z, size_t y, size_t x)
{
    return (float)(1.0 + 0.5 * sin(0.05 * (double)z) * cos(0.03 * (double)y) +
                   0.25 * sin(0.07 * (double)x + 0.02 * (double)z));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE [N]\n", argv[0]);
        return 2;
    }
    size_t n = argc > 2 ? (size_t)atol(argv[2]) : 256;
    if (n == 0 || n % CHUNK) {
        fprintf(stderr, "gpu_direct_write: N must be a positive multiple of %d\n", CHUNK);
        return 2;
    }
    if (!h5zgpu_gpu_available()) {
        printf("gpu_direct_write: no usable GPU: nothing to show here\n");
        return 77; /* ctest's skip code */
    }
    int rc = 1;
    size_t total = n * n * n, per = (size_t)CHUNK * CHUNK * CHUNK;
    float *host = malloc(total * sizeof *host), *back = malloc(total * sizeof *back);
    float *d_field = NULL, *d_chunk = NULL;
    void *d_out = NULL, *out = NULL;
    hid_t file = -1, space = -1, dcpl = -1, dset = -1;
    cudaStream_t stream = NULL;
    h5zgpu_params p = {.codec = H5ZGPU_CODEC_FIXED, .mode = H5ZGPU_MODE_REL, .eb = REL_EB,
                       .dtype = H5ZGPU_FLOAT32, .rank = 3, .dims = {CHUNK, CHUNK, CHUNK}};
    size_t cap = h5zgpu_compress_bound(&p), stored = 0;
    CHECK(host && back && (out = malloc(cap)), "out of host memory");
    for (size_t z = 0; z < n; z++)
        for (size_t y = 0; y < n; y++)
            for (size_t x = 0; x < n; x++)
                host[(z * n + y) * n + x] = value(z, y, x);
    CHECK(cudaStreamCreate(&stream) == cudaSuccess && cudaMalloc((void **)&d_field,
          total * sizeof(float)) == cudaSuccess && cudaMalloc((void **)&d_chunk,
          per * sizeof(float)) == cudaSuccess && cudaMalloc(&d_out, cap) == cudaSuccess &&
          cudaMemcpy(d_field, host, total * sizeof(float), cudaMemcpyHostToDevice) ==
          cudaSuccess, "cannot place the field on the GPU");

    unsigned cd[4] = {p.codec, p.mode, 0, 0};
    h5zgpu_eb_to_words(p.eb, &cd[2], &cd[3]);
    hsize_t dims[3] = {n, n, n}, cdims[3] = {CHUNK, CHUNK, CHUNK};
    file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    space = H5Screate_simple(3, dims, NULL);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    CHECK(file >= 0 && H5Pset_chunk(dcpl, 3, cdims) >= 0 &&
          H5Pset_filter(dcpl, H5ZGPU_FILTER_ID, H5Z_FLAG_MANDATORY, 4, cd) >= 0,
          "cannot set up the file");
    dset = H5Dcreate2(file, "baryon_density", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl,
                      H5P_DEFAULT);
    CHECK(dset >= 0, "H5Dcreate failed: is the plugin on HDF5_PLUGIN_PATH?");

    for (size_t cz = 0; cz < n; cz += CHUNK)
        for (size_t cy = 0; cy < n; cy += CHUNK)
            for (size_t cx = 0; cx < n; cx += CHUNK) {
                /* gather the chunk into contiguous device memory, on the GPU */
                struct cudaMemcpy3DParms m = {0};
                m.srcPtr = (struct cudaPitchedPtr){d_field, n * sizeof(float), n, n};
                m.srcPos = (struct cudaPos){cx * sizeof(float), cy, cz};
                m.dstPtr = (struct cudaPitchedPtr){d_chunk, CHUNK * sizeof(float), CHUNK, CHUNK};
                m.extent = (struct cudaExtent){CHUNK * sizeof(float), CHUNK, CHUNK};
                m.kind = cudaMemcpyDeviceToDevice;
                size_t len = 0;
                CHECK(cudaMemcpy3DAsync(&m, stream) == cudaSuccess, "chunk gather failed");
                h5zgpu_status st = h5zgpu_compress_device(&p, d_chunk, d_out, cap, &len, 0, stream);
                CHECK(st == H5ZGPU_OK, "compression failed: %s", h5zgpu_last_error());
                CHECK(cudaMemcpyAsync(out, d_out, len, cudaMemcpyDeviceToHost, stream) ==
                      cudaSuccess && cudaStreamSynchronize(stream) == cudaSuccess,
                      "copy back failed");
                hsize_t off[3] = {cz, cy, cx};
                CHECK(H5Dwrite_chunk(dset, H5P_DEFAULT, 0, off, len, out) >= 0,
                      "H5Dwrite_chunk failed");
                stored += len;
            }
    H5Dclose(dset);
    dset = H5Dopen2(file, "baryon_density", H5P_DEFAULT);
    CHECK(dset >= 0 && H5Dread(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0,
          "reading back through the filter failed");
    size_t misses = 0;
    for (size_t cz = 0; cz < n; cz += CHUNK)
        for (size_t cy = 0; cy < n; cy += CHUNK)
            for (size_t cx = 0; cx < n; cx += CHUNK) {
                double lo = INFINITY, hi = -INFINITY;
                for (int pass = 0; pass < 2; pass++)
                    for (size_t z = cz; z < cz + CHUNK; z++)
                        for (size_t y = cy; y < cy + CHUNK; y++)
                            for (size_t x = cx; x < cx + CHUNK; x++) {
                                size_t i = (z * n + y) * n + x;
                                double v = host[i];
                                if (!pass) {
                                    lo = v < lo ? v : lo;
                                    hi = v > hi ? v : hi;
                                } else {
                                    misses += !(fabs((double)back[i] - v) <= REL_EB * (hi - lo));
                                }
                            }
            }
    printf("gpu_direct_write: %zu^3 float32 written chunk by chunk from GPU memory, ratio %.2f, "
           "%zu values outside their chunk's REL %g bound\n",
           n, (double)(total * sizeof(float)) / (double)stored, misses, REL_EB);
    rc = misses != 0;
done:
    if (dset >= 0)
        H5Dclose(dset);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (space >= 0)
        H5Sclose(space);
    if (file >= 0)
        H5Fclose(file);
    cudaFree(d_field);
    cudaFree(d_chunk);
    cudaFree(d_out);
    if (stream)
        cudaStreamDestroy(stream);
    free(host);
    free(back);
    free(out);
    return rc;
}
