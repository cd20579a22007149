/* The h5zgpu command: options shared by its subcommands, raw-file I/O and quality metrics. */
#ifndef H5ZGPU_CLI_H
#define H5ZGPU_CLI_H

#include "h5zgpu.h"
#include "h5zgpu_quality.h"

#include <stddef.h>
#include <stdint.h>

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

/* The quality library's metrics of b against a as the options give them (shape, type,
 * --missing), leaving out the patterns in `skip`; 0, or -1 after printing why. */
int cli_quality(const void *a, const void *b, const cli_opts *o, unsigned skip, h5zgpu_quality *q);

/* The largest ratio of error to bound over all points, under the bound mode/eb promises
 * (REL over a's finite range; PWREL pointwise). Above 1 means the bound was missed; a point whose
 * bound is 0 and whose error is not counts as +inf. */
double cli_worst_error_over_bound(const void *a, const void *b, uint64_t n, h5zgpu_dtype t,
                                  h5zgpu_mode mode, double eb, const h5zgpu_quality *m);

#endif
