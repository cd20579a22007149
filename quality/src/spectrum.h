/* The power spectrum of one field (spectrum.c): P(k) averaged over shells of integer
 * wavenumber |k| = 0..n/2 (rounded to the nearest) of a cubic n^3 field, the half spectrum of
 * the real-to-complex transform standing for both halves. */
#ifndef H5ZGPU_QUALITY_SPECTRUM_H
#define H5ZGPU_QUALITY_SPECTRUM_H

#include <stddef.h>
#include <stdint.h>

/* hq_power's statuses: P(k) computed; a value not finite (a transform cannot leave points out)
 * or no memory; no transform at hand (no FFTW3 in the build, and no cuFFT or the GPU could not:
 * device arrays have only the GPU's). */
enum { HQ_PK_OK = 0, HQ_PK_FAILED = -1, HQ_PK_NO_TRANSFORM = -2 };

/* Whether the shape is one the transform takes: cubic 3-D, at least 4 a side. */
int hq_transformable(unsigned rank, const uint64_t *dims);

/* P(k) of the n^3 field `in` (float32 when f32, else float64) into p[0..n/2]: on the GPU
 * (cuFFT) when on_gpu and the build has it, in device memory when in_device, else with FFTW. */
int hq_power(const void *in, int on_gpu, int in_device, int f32, size_t n, double *p);

/* Frees the transforms' buffers and plans, which stay from one call to the next of a size. */
void hq_spectrum_release(void);

#endif
