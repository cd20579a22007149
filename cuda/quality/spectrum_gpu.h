/* The power spectrum of the quality library on the GPU, with cuFFT: the shell sums that
 * quality/src/spectrum.c's FFTW path computes, with the same shells and weights (a C ABI for the
 * quality library; the codec library and the plugin do not link cuFFT). */
#ifndef H5ZGPU_SPECTRUM_GPU_H
#define H5ZGPU_SPECTRUM_GPU_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Shell sums of |F|^2 of an n^3 field (float32 when is_f32, else float64) in device memory when
 * in_device, else in host memory, into p[0..n/2] and their counts into w, on the current CUDA
 * device. 0 on success; -1 when a value is not
 * finite; -2 when the GPU cannot do it (no device, no memory, a shell table past shared memory):
 * the caller transforms on the CPU. The device buffers and plan stay for the next field of the
 * same size. */
int hzq_power_spectrum_gpu(const void *in, int in_device, int is_f32, size_t n, double *p,
                           double *w);

/* Frees them. */
void hzq_spectrum_gpu_release(void);

#ifdef __cplusplus
}
#endif
#endif
