/* h5zgpu quality metrics: how far a reconstruction B is from its original A, on host or device
 * arrays, on the GPU (one fused pass per access pattern) or on the CPU (the reference, every core
 * where the build has OpenMP). Both executors compute the same sums in double precision and
 * finish them in one place, so their results agree to rounding (1e-6 relative at worst).
 *
 * The patterns:
 *   point-wise   error norms, PSNR, the error's extremes, mean and histogram, |error| / |A|,
 *                SNR, Pearson's correlation, the error's autocorrelation at lags 1..10;
 *   stencil      the PSNR of B's first and second differences and Laplacian against A's;
 *   windowed     SSIM over windows of 8 per axis (an axis's length where shorter), step 1;
 *   spectrum     for a cubic 3-D field, the ratio P_B(k) / P_A(k) of the power spectra over
 *                shells of integer wavenumber (cuFFT on the GPU, FFTW3 on the CPU, where the
 *                build has them).
 * Points where A holds the missing value (when one is given) are left out of every metric, as
 * the codec leaves them out of its ranges; points where A or B is not finite are left out of all
 * but the counts and the error norms (where a finite A against a non-finite B is an infinite
 * error). */
#ifndef H5ZGPU_QUALITY_H
#define H5ZGPU_QUALITY_H

#include "h5zgpu.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define H5ZGPU_QUALITY_LAGS 10
#define H5ZGPU_QUALITY_BINS 100

/* Patterns to leave out (the error norms come always). */
#define H5ZGPU_QUALITY_STATISTICS 1u /* mean/min/max error, histogram, SNR, Pearson, lags */
#define H5ZGPU_QUALITY_STENCILS 2u   /* derivative, second derivative and Laplacian PSNR */
#define H5ZGPU_QUALITY_SSIM 4u
#define H5ZGPU_QUALITY_SPECTRUM 8u
#define H5ZGPU_QUALITY_ALL 15u

/* What became of the power spectrum. */
typedef enum h5zgpu_pk_status {
    H5ZGPU_PK_SKIPPED = 0,         /* not asked for */
    H5ZGPU_PK_DONE = 1,
    H5ZGPU_PK_NOT_APPLICABLE = 2,  /* not cubic 3-D (4 a side at least), a value not finite or a
                                    * point missing (a transform cannot leave points out) */
    H5ZGPU_PK_NO_TRANSFORM = 3     /* the build has neither FFTW3 nor cuFFT (or not the GPU's
                                    * for device arrays) */
} h5zgpu_pk_status;

typedef struct h5zgpu_quality_options {
    h5zgpu_exec exec;        /* AUTO: H5ZGPU_DEVICE when set, else the GPU when usable */
    int device_pointers;     /* a and b are CUDA device pointers: GPU (or AUTO) executor only */
    int has_missing;         /* leave out the points where A holds `missing` (compared by its */
    double missing;          /* bits in the element type, so a NaN matches that NaN only) */
    unsigned skip;           /* H5ZGPU_QUALITY_* flags of patterns not wanted; 0: none */
    /* the spectrum: P_B(k) / P_A(k) for k = 1..n/2 into pk_ratio[k - 1] (up to pk_capacity
     * shells; NULL: not written), and the shells pk_max_deviation spans, 1..pk_kmax (0: all) */
    double *pk_ratio;
    size_t pk_capacity;
    unsigned pk_kmax;
} h5zgpu_quality_options;

typedef struct h5zgpu_quality {
    uint64_t elements;
    uint64_t finite;              /* points where A is finite (and not missing) */
    uint64_t nonfinite_mismatch;  /* points where A is NaN or +-Inf and B holds other bits */
    uint64_t missing;             /* points left out as missing */
    uint64_t missing_mismatch;    /* of those, where B holds other bits than A */
    /* the error norms, over the points where A is finite */
    double min, max, range;       /* of A */
    double max_abs_error, max_rel_error;   /* max |B - A|, and over the range */
    double rmse, nrmse, psnr;     /* NRMSE and PSNR against the range; PSNR +inf when exact */
    /* H5ZGPU_QUALITY_STATISTICS, over the points where both are finite (NaN when not computed) */
    double mean_error, min_error, max_error;           /* of B - A */
    double min_pw_rel, max_pw_rel, mean_pw_rel;        /* |B - A| / |A| where A != 0 */
    double snr;                   /* 10 log10(var A / MSE), dB */
    double pearson;
    double autocorrelation[H5ZGPU_QUALITY_LAGS];      /* of B - A at lags 1.., array order */
    uint64_t error_histogram[H5ZGPU_QUALITY_BINS];     /* equal bins over [min_error, max_error] */
    /* H5ZGPU_QUALITY_STENCILS: NaN when no stencil fits, +inf when exact */
    double derivative_psnr, second_derivative_psnr, laplacian_psnr;
    /* H5ZGPU_QUALITY_SSIM: the mean over the windows holding only finite values of both (and
     * whose SSIM does not overflow); -1 when there is none */
    double ssim;
    /* H5ZGPU_QUALITY_SPECTRUM: the shells k = 1..n/2 and the largest |P_B/P_A - 1| over
     * k = 1..pk_kmax (NaN unless pk_status is H5ZGPU_PK_DONE) */
    h5zgpu_pk_status pk_status;
    size_t pk_shells;
    double pk_max_deviation;
    /* where it ran, and the seconds each part took (setup: the GPU's context, which a process's
     * first call creates; staging: host arrays onto the GPU) */
    h5zgpu_exec_kind executor;
    double seconds_setup, seconds_staging;
    double seconds_pointwise, seconds_stencils, seconds_ssim, seconds_spectrum;
} h5zgpu_quality;

/* The metrics of B against A, two arrays of `rank` axes of extents `dims` (C order) and element
 * type `dtype`; opt NULL for the defaults (AUTO, host pointers, no missing value, every pattern).
 * H5ZGPU_E_DEVICE when the GPU was required (or the pointers are device pointers) and cannot do
 * it; with AUTO and host pointers a GPU failure falls back to the CPU. Concurrent calls wait for
 * each other (the GPU's buffers and the transforms' workspaces are the process's). */
h5zgpu_status h5zgpu_quality_compute(const void *a, const void *b, h5zgpu_dtype dtype,
                                     unsigned rank, const uint64_t *dims,
                                     const h5zgpu_quality_options *opt, h5zgpu_quality *q);

/* P(k) of one cubic 3-D field x (n a side), the mean of |F|^2 over the shell of integer
 * wavenumber k, into p[k] for k = 0..n/2, where h5zgpu_quality_compute would compute it (opt
 * NULL for the defaults; its exec, device_pointers and missing count). H5ZGPU_E_INVALID_ARG
 * when x is not cubic 3-D or holds a value not finite (or missing); H5ZGPU_E_UNSUPPORTED when
 * the build has no transform for it. */
h5zgpu_status h5zgpu_power_spectrum(const void *x, h5zgpu_dtype dtype, unsigned rank,
                                    const uint64_t *dims, const h5zgpu_quality_options *opt,
                                    double *p);

/* The device buffers the GPU path keeps from one call to the next (for host arrays of one size
 * in a loop, such as a bound sweep) and the transforms' buffers and plans are freed here. */
void h5zgpu_quality_release(void);

#ifdef __cplusplus
}
#endif
#endif
