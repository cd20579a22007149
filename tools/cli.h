/* The h5zgpu command: options shared by its subcommands, raw-file I/O and quality metrics. */
#ifndef H5ZGPU_CLI_H
#define H5ZGPU_CLI_H

#include "h5zgpu.h"

#include <stddef.h>
#include <stdint.h>

/* OpenMP where the command's build has it (its metrics' loops), else one thread. */
#define CLI_STR(...) #__VA_ARGS__
#ifdef _OPENMP
#define CLI_OMP(...) _Pragma(CLI_STR(__VA_ARGS__))
#else
#define CLI_OMP(...)
#endif

/* Threads the metrics may use: OpenMP's, or 1. */
long cli_threads(void);

/* Exit statuses: a failure of the work, and a command line that cannot be run. */
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_USAGE 2

/* Everything a subcommand may be given; each one says which options it accepts (cli_parse). */
typedef struct cli_opts {
    const char *in, *out;
    const char *pos[2];       /* positional arguments (check A B) */
    unsigned npos;
    h5zgpu_dtype dtype;       /* 0 until -t */
    unsigned rank;            /* 0 until -d */
    uint64_t dims[H5ZGPU_MAX_RANK];
    int codec, mode;          /* -1 until given */
    double eb;
    int eb_given;
    double missing;           /* cdvalues --missing: a missing value (netCDF _FillValue) */
    int missing_given;
    unsigned radius;          /* --radius: the Huffman codec's radius; 0 until given */
    const char *nccopy;       /* cdvalues --nccopy VAR: print nccopy's -F argument for VAR */
    unsigned kmax;            /* check --kmax K: the power spectrum's shells up to K; 0: all */
    double pk_band;           /* check --pk-band X: P_B/P_A within 1 +- X (default 0.01) */
    int json;
    const char *json_file;    /* check --json-file F: the JSON object to F, the table as usual */
    /* sweep: chunk edge, number of bounds, and the criteria given (NAN: not given) */
    unsigned chunk, bounds;
    double pk, psnr, ssim;
} cli_opts;

enum {
    OPT_IN = 1 << 0,
    OPT_OUT = 1 << 1,
    OPT_TYPE = 1 << 2,
    OPT_DIMS = 1 << 3,
    OPT_CODEC = 1 << 4,
    OPT_MODE = 1 << 5,
    OPT_EB = 1 << 6,
    OPT_JSON = 1 << 7,
    OPT_MISSING = 1 << 8,
    OPT_RADIUS = 1 << 9,
    OPT_NCCOPY = 1 << 10,
    OPT_KMAX = 1 << 11,
    OPT_PKBAND = 1 << 12,
    OPT_CHUNK = 1 << 13,
    OPT_BOUNDS = 1 << 14,
    OPT_PK = 1 << 15,
    OPT_PSNR = 1 << 16,
    OPT_SSIM = 1 << 17,
    OPT_JSON_FILE = 1 << 18
};

/* Parses argv (after the subcommand) into o, accepting the options in `allowed` and up to
 * `max_pos` positional arguments. Returns 0, or prints what is wrong and returns -1. */
int cli_parse(int argc, char **argv, unsigned allowed, unsigned max_pos, cli_opts *o);

/* Names of the enumerations as the command line spells them. */
const char *cli_codec_name(unsigned codec);
const char *cli_mode_name(unsigned mode);
const char *cli_dtype_name(h5zgpu_dtype t);

/* Says what is wrong with the command line; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *what);

/* "64,64,64" as -d takes it (sep ","), or "64x64x64" for reading. */
void cli_format_dims(char *buf, size_t cap, unsigned rank, const uint64_t *dims, const char *sep);

uint64_t cli_count(unsigned rank, const uint64_t *dims);
size_t cli_esize(h5zgpu_dtype t);

/* A raw array named by -t and -d: malloc'd (free it), or NULL after printing why (a file of
 * another size than the shape's). */
void *cli_read_array(const char *path, const cli_opts *o);

/* The h5repack filter string and h5py's keyword arguments of n cd_values. */
void cli_print_cd_values(const unsigned *cd, unsigned n);

/* h5zgpu sweep (sweep.c). */
int cli_sweep(int argc, char **argv);

/* Whole files. cli_read_file returns a malloc'd buffer (free it) or NULL after printing why. */
void *cli_read_file(const char *path, size_t *len);
int cli_write_file(const char *path, const void *buf, size_t len);

/* Where the codec runs for this process: H5ZGPU_DEVICE, else the GPU when one is usable. */
const char *cli_executor(void);

/* Seconds on a monotonic clock. */
double cli_now(void);

/* "12.3 MB/s" or "1.23 GB/s" for n bytes in t seconds. */
void cli_rate(char *buf, size_t cap, double bytes, double seconds);

/* Quality of b against a (n elements of type t): errors over the points where a is finite;
 * a point where a is NaN or +-Inf counts as a mismatch unless b holds the same bits. */
typedef struct cli_metrics {
    uint64_t n, finite, nonfinite_mismatch;
    double min, max, range;    /* of a's finite values */
    double max_abs_err;
    double rmse, nrmse, psnr;  /* NRMSE and PSNR against range; PSNR is +inf for exact data */
    double max_rel_err;        /* max_abs_err / range (0 when range is 0 and the data is exact) */
} cli_metrics;

void cli_metrics_compute(const void *a, const void *b, uint64_t n, h5zgpu_dtype t,
                         cli_metrics *m);

/* Leaves a missing value out of every metric: each element of a holding its bits (in the
 * element type) becomes NaN in a and in b (when not NULL), *differ counting those where b held
 * other bits. Returns how many there were. */
uint64_t cli_mask_missing(void *a, void *b, uint64_t n, h5zgpu_dtype t, double missing,
                          uint64_t *differ);

/* cli_metrics_compute's PSNR alone, in one lean pass, for a's range known already. */
double cli_psnr(const void *a, const void *b, uint64_t n, h5zgpu_dtype t, double range);

/* Beyond the error norms, over the points where both a and b are finite (b - a is the error):
 * the error's mean and extremes, SNR (10 log10 of a's variance over the MSE, dB; +inf when
 * exact), Pearson's correlation of a and b, the error's autocorrelation at lags 1..CLI_LAGS in
 * array order, SSIM (windows of 8 per axis, step 1, over windows of finite values; -1 when
 * there is none), the error's histogram and the PSNR of derivatives and the Laplacian. */
#define CLI_LAGS 10
#define CLI_BINS 100
typedef struct cli_quality {
    double mean_error, min_error, max_error;
    /* |error| / |A| over the points where A is not 0 (NaN when there is none) */
    double min_pw_rel, max_pw_rel, mean_pw_rel;
    double snr, pearson, ssim;
    double autocorrelation[CLI_LAGS];
    uint64_t histogram[CLI_BINS];   /* of the error, equal bins over [min_error, max_error] */
    /* PSNR of B's first differences, second differences (along each axis) and Laplacian
     * against A's; NaN when no stencil fits, +inf when exact */
    double stencil_psnr[3];
} cli_quality;

void cli_quality_compute(const void *a, const void *b, h5zgpu_dtype t, unsigned rank,
                         const uint64_t *dims, const cli_metrics *m, cli_quality *q);

/* The power spectrum of a cubic 3-D A and B: P(k) averaged over shells of integer wavenumber
 * |k| = 1..n/2 (rounded to the nearest), ratio[k-1] = P_B(k) / P_A(k), transformed on the GPU
 * (cuFFT) where the build has it and H5ZGPU_DEVICE is not cpu, else by FFTW3. 0 on success
 * (free ratio); -1 when the arrays are not cubic 3-D, hold a non-finite value (a transform
 * cannot leave points out) or memory runs out; -2 when no transform is at hand (no FFTW3 in
 * the build, and no cuFFT or no usable GPU). */
typedef struct cli_spectrum_result {
    size_t shells;
    double *ratio;
} cli_spectrum_result;

int cli_spectrum(const void *a, const void *b, h5zgpu_dtype t, unsigned rank,
                 const uint64_t *dims, cli_spectrum_result *r);

/* One field's P(k) over the same shells, so that a sweep transforms the original once:
 * p[k] for k = 0..n/2 (free p). cli_spectrum's statuses. */
typedef struct cli_power {
    size_t n;
    double *p;
} cli_power;

int cli_power_spectrum(const void *a, h5zgpu_dtype t, unsigned rank, const uint64_t *dims,
                       cli_power *pw);

/* Frees the transform's buffers and plan, which stay from one call to the next of a size. */
void cli_spectrum_release(void);

/* ratio[k-1] = b's P(k) / a's, k = 1..n/2, as cli_spectrum gives it (free r->ratio); -1 when
 * memory runs out. */
int cli_spectrum_ratio(const cli_power *a, const cli_power *b, cli_spectrum_result *r);

/* check's SSIM alone (cli_quality): -1 when no window qualifies or memory runs out. */
double cli_ssim(const void *a, const void *b, h5zgpu_dtype t, unsigned rank, const uint64_t *dims,
                double range);

/* The largest |ratio - 1| over the shells k = 1..kmax (all when kmax is 0 or past n/2). */
double cli_spectrum_deviation(const cli_spectrum_result *r, unsigned kmax);

/* The largest ratio of error to bound over all points, under the bound mode/eb promises
 * (REL over a's finite range; PWREL pointwise). Above 1 means the bound was missed; a point whose
 * bound is 0 and whose error is not counts as +inf. */
double cli_worst_error_over_bound(const void *a, const void *b, uint64_t n, h5zgpu_dtype t,
                                  h5zgpu_mode mode, double eb, const cli_metrics *m);

#endif
