/* clock_gettime and CLOCK_MONOTONIC are POSIX, outside strict C11 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct opt_def {
    const char *short_name, *long_name;
    unsigned bit;
    const char *expect; /* what its value looks like; NULL for a flag */
} opt_def;

static const opt_def OPTS[] = {
    {"-i", "--input", OPT_IN, "a file name"},
    {"-o", "--output", OPT_OUT, "a file name"},
    {"-t", "--type", OPT_TYPE, "f32 or f64"},
    {"-d", "--dims", OPT_DIMS, "dimensions like 512,512,512"},
    {NULL, "--codec", OPT_CODEC, "auto, fixed or huffman"},
    {NULL, "--mode", OPT_MODE, "abs, rel, pwrel or ratio"},
    {NULL, "--eb", OPT_EB, "a number like 1e-3"},
    {NULL, "--target", OPT_EB, "a target ratio like 10 (--mode ratio; the same as --eb)"},
    {NULL, "--json", OPT_JSON, NULL},
    {NULL, "--missing", OPT_MISSING, "a number like -1e34"},
    {NULL, "--radius", OPT_RADIUS, "an integer 2..1024 (the Huffman codec's radius)"},
    {NULL, "--nccopy", OPT_NCCOPY, "a netCDF variable name"},
    {NULL, "--kmax", OPT_KMAX, "a positive integer wavenumber"},
    {NULL, "--pk-band", OPT_PKBAND, "a number like 0.01"},
    {NULL, "--chunk", OPT_CHUNK, "a chunk edge like 64"},
    {NULL, "--bounds", OPT_BOUNDS, "a number of bounds, 2..100"},
    {NULL, "--pk", OPT_PK, "a tolerance like 0.01 (P(k) ratio within 1 +- X)"},
    {NULL, "--psnr", OPT_PSNR, "a PSNR in dB like 80"},
    {NULL, "--ssim", OPT_SSIM, "an SSIM like 0.99"},
    {NULL, "--json-file", OPT_JSON_FILE, "a file name"},
};

static const char *const CODEC_NAMES[] = {"auto", "fixed", "huffman"};
static const char *const MODE_NAMES[] = {"abs", "rel", "pwrel", "ratio"};
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

const char *cli_codec_name(unsigned codec)
{
    return codec < N_OF(CODEC_NAMES) ? CODEC_NAMES[codec] : "?";
}

const char *cli_mode_name(unsigned mode)
{
    return mode < N_OF(MODE_NAMES) ? MODE_NAMES[mode] : "?";
}

const char *cli_dtype_name(h5zgpu_dtype t)
{
    return t == H5ZGPU_FLOAT64 ? "f64" : "f32";
}

int cli_usage_error(const char *what)
{
    fprintf(stderr, "h5zgpu: %s (see h5zgpu --help)\n", what);
    return CLI_EXIT_USAGE;
}

void cli_format_dims(char *buf, size_t cap, unsigned rank, const uint64_t *dims, const char *sep)
{
    size_t used = 0;
    buf[0] = 0;
    for (unsigned i = 0; i < rank && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%llu", i ? sep : "",
                                 (unsigned long long)dims[i]);
}

uint64_t cli_count(unsigned rank, const uint64_t *dims)
{
    uint64_t n = 1;
    for (unsigned i = 0; i < rank; i++)
        n *= dims[i];
    return n;
}

size_t cli_esize(h5zgpu_dtype t)
{
    return t == H5ZGPU_FLOAT64 ? 8 : 4;
}

void cli_print_cd_values(const unsigned *cd, unsigned n)
{
    printf("UD=%d,0,%u", H5ZGPU_FILTER_ID, n);
    for (unsigned i = 0; i < n; i++)
        printf(",%u", cd[i]);
    printf("\ncompression=%d, compression_opts=(", H5ZGPU_FILTER_ID);
    for (unsigned i = 0; i < n; i++)
        printf(i ? ", %u" : "%u", cd[i]);
    printf(")\n");
}

static int lookup(const char *v, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v, names[i]) == 0)
            return (int)i;
    return -1;
}

static int parse_dims(const char *v, cli_opts *o)
{
    const char *s = v;
    o->rank = 0;
    for (;;) {
        char *end;
        if (o->rank == H5ZGPU_MAX_RANK) {
            fprintf(stderr, "h5zgpu: -d %s has more than %d dimensions\n", v, H5ZGPU_MAX_RANK);
            return -1;
        }
        errno = 0;
        unsigned long long d = strtoull(s, &end, 10);
        /* each dimension of a chunk is stored as u32 (docs/FORMAT.md) */
        if (end == s || *s == '-' || errno || d == 0 || d > 0xFFFFFFFFull ||
            (*end != ',' && *end != 0)) {
            fprintf(stderr,
                    "h5zgpu: -d %s is not a list of dimensions like 512,512,512 (slowest first, "
                    "each 1..4294967295)\n",
                    v);
            return -1;
        }
        o->dims[o->rank++] = d;
        if (*end == 0)
            return 0;
        s = end + 1;
    }
}

static int set_value(const opt_def *d, const char *v, cli_opts *o)
{
    char *end;
    switch (d->bit) {
    case OPT_IN: o->in = v; return 0;
    case OPT_OUT: o->out = v; return 0;
    case OPT_JSON_FILE: o->json_file = v; return 0;
    case OPT_TYPE:
        if (strcmp(v, "f32") == 0)
            o->dtype = H5ZGPU_FLOAT32;
        else if (strcmp(v, "f64") == 0)
            o->dtype = H5ZGPU_FLOAT64;
        else
            break;
        return 0;
    case OPT_DIMS: return parse_dims(v, o);
    case OPT_CODEC:
        if ((o->codec = lookup(v, CODEC_NAMES, N_OF(CODEC_NAMES))) >= 0)
            return 0;
        break;
    case OPT_MODE:
        if ((o->mode = lookup(v, MODE_NAMES, N_OF(MODE_NAMES))) >= 0)
            return 0;
        break;
    case OPT_EB:
        o->eb = strtod(v, &end);
        o->eb_given = 1;
        if (end != v && *end == 0)
            return 0; /* range and sign are the library's to judge (h5zgpu_params_check) */
        break;
    case OPT_RADIUS: {
        unsigned long r = strtoul(v, &end, 10);
        if (end != v && *end == 0 && v[0] != '-' && r >= 2 && r <= 65535) {
            o->radius = (unsigned)r; /* the library judges the range (h5zgpu_params_check) */
            return 0;
        }
        break;
    }
    case OPT_KMAX: {
        unsigned long k = strtoul(v, &end, 10);
        if (end != v && *end == 0 && v[0] != '-' && k >= 1 && k <= 1u << 30) {
            o->kmax = (unsigned)k;
            return 0;
        }
        break;
    }
    case OPT_PKBAND:
        o->pk_band = strtod(v, &end);
        if (end != v && *end == 0 && o->pk_band >= 0 && isfinite(o->pk_band))
            return 0;
        break;
    case OPT_NCCOPY:
        if (*v && !strchr(v, ',') && !strchr(v, '|')) {   /* nccopy -F's separators */
            o->nccopy = v;
            return 0;
        }
        break;
    case OPT_CHUNK:
    case OPT_BOUNDS: {
        unsigned long k = strtoul(v, &end, 10);
        unsigned long most = d->bit == OPT_BOUNDS ? 100 : 0xFFFFFFFFul;
        if (end != v && *end == 0 && v[0] != '-' && k >= (d->bit == OPT_BOUNDS ? 2 : 1) &&
            k <= most) {
            *(d->bit == OPT_CHUNK ? &o->chunk : &o->bounds) = (unsigned)k;
            return 0;
        }
        break;
    }
    case OPT_PK:
    case OPT_PSNR:
    case OPT_SSIM: {
        double x = strtod(v, &end);
        if (end != v && *end == 0 && isfinite(x) && (d->bit == OPT_PSNR || x >= 0)) {
            *(d->bit == OPT_PK ? &o->pk : d->bit == OPT_PSNR ? &o->psnr : &o->ssim) = x;
            return 0;
        }
        break;
    }
    case OPT_MISSING:
        o->missing = strtod(v, &end);
        o->missing_given = 1;
        if (end != v && *end == 0)
            return 0;
        break;
    }
    fprintf(stderr, "h5zgpu: %s %s is not valid; expected %s\n", d->long_name, v, d->expect);
    return -1;
}

int cli_parse(int argc, char **argv, unsigned allowed, unsigned max_pos, cli_opts *o)
{
    memset(o, 0, sizeof *o);
    o->codec = o->mode = -1;
    o->pk_band = 0.01;
    o->pk = o->psnr = o->ssim = NAN;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const opt_def *d = NULL;
        for (size_t k = 0; k < N_OF(OPTS) && !d; k++)
            if ((OPTS[k].short_name && strcmp(a, OPTS[k].short_name) == 0) ||
                strcmp(a, OPTS[k].long_name) == 0)
                d = &OPTS[k];
        if (!d && a[0] == '-' && a[1] != 0) {
            fprintf(stderr, "h5zgpu: unknown option %s (see h5zgpu --help)\n", a);
            return -1;
        }
        if (!d) {
            if (o->npos == max_pos) {
                fprintf(stderr, "h5zgpu: unexpected argument %s (see h5zgpu --help)\n", a);
                return -1;
            }
            o->pos[o->npos++] = a;
            continue;
        }
        if (!(allowed & d->bit)) {
            fprintf(stderr, "h5zgpu: option %s does not apply to this command\n", a);
            return -1;
        }
        if (!d->expect) {
            o->json = 1;
            continue;
        }
        if (i + 1 == argc) {
            fprintf(stderr, "h5zgpu: option %s needs a value\n", a);
            return -1;
        }
        if (set_value(d, argv[++i], o) != 0)
            return -1;
    }
    return 0;
}

void *cli_read_file(const char *path, size_t *len)
{
    void *buf = NULL;
    FILE *f = fopen(path, "rb");
    long size;
    if (!f) {
        fprintf(stderr, "h5zgpu: cannot open %s: %s\n", path, strerror(errno));
        return NULL;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, "h5zgpu: cannot find the size of %s: %s\n", path, strerror(errno));
        goto done;
    }
    /* one spare byte so an empty file still gets a distinct buffer */
    if (!(buf = malloc((size_t)size + 1))) {
        fprintf(stderr, "h5zgpu: no memory for %ld bytes of %s\n", size, path);
        goto done;
    }
    if (fread(buf, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "h5zgpu: cannot read %s: %s\n", path, strerror(errno));
        free(buf);
        buf = NULL;
        goto done;
    }
    *len = (size_t)size;
done:
    fclose(f);
    return buf;
}

void *cli_read_array(const char *path, const cli_opts *o)
{
    size_t len = 0, want = (size_t)cli_count(o->rank, o->dims) * cli_esize(o->dtype);
    void *a = cli_read_file(path, &len);
    if (a && len != want) {
        char shape[512];
        cli_format_dims(shape, sizeof shape, o->rank, o->dims, ",");
        fprintf(stderr, "h5zgpu: -t %s -d %s needs %zu bytes; %s holds %zu\n",
                cli_dtype_name(o->dtype), shape, want, path, len);
        free(a);
        a = NULL;
    }
    return a;
}

int cli_write_file(const char *path, const void *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "h5zgpu: cannot create %s: %s\n", path, strerror(errno));
        return -1;
    }
    int ok = fwrite(buf, 1, len, f) == len;
    ok = (fclose(f) == 0) && ok;
    if (!ok)
        fprintf(stderr, "h5zgpu: cannot write %s: %s\n", path, strerror(errno));
    return ok ? 0 : -1;
}

const char *cli_executor(void)
{
    const char *v = getenv("H5ZGPU_DEVICE");
    if (v && strcmp(v, "cpu") == 0)
        return "cpu";
    if (v && strncmp(v, "gpu", 3) == 0)
        return v; /* "gpu" or "gpu:N"; the codec fails if it is not usable */
    return h5zgpu_gpu_available() ? "gpu" : "cpu";
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cli_rate(char *buf, size_t cap, double bytes, double seconds)
{
    double mbs = seconds > 0 ? bytes / seconds / 1e6 : INFINITY;
    if (mbs >= 1000)
        snprintf(buf, cap, "%.2f GB/s", mbs / 1e3);
    else
        snprintf(buf, cap, "%.1f MB/s", mbs);
}

static double at(const void *p, uint64_t i, h5zgpu_dtype t)
{
    return t == H5ZGPU_FLOAT32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

int cli_quality(const void *a, const void *b, const cli_opts *o, unsigned skip, h5zgpu_quality *q)
{
    h5zgpu_quality_options opt = {.has_missing = o->missing_given, .missing = o->missing,
                                  .skip = skip};
    if (h5zgpu_quality_compute(a, b, o->dtype, o->rank, o->dims, &opt, q) == H5ZGPU_OK)
        return 0;
    fprintf(stderr, "h5zgpu: %s\n", h5zgpu_last_error());
    return -1;
}

double cli_worst_error_over_bound(const void *a, const void *b, uint64_t n, h5zgpu_dtype t,
                                  h5zgpu_mode mode, double eb, const h5zgpu_quality *m)
{
    double worst = m->nonfinite_mismatch ? INFINITY : 0;
    for (uint64_t i = 0; i < n; i++) {
        double x = at(a, i, t);
        if (!isfinite(x))
            continue;
        double e = fabs(at(b, i, t) - x);
        double bound = mode == H5ZGPU_MODE_ABS   ? eb
                       : mode == H5ZGPU_MODE_REL ? eb * m->range
                                                 : eb * fabs(x);
        double r = bound > 0 ? e / bound : (e == 0 ? 0 : INFINITY);
        if (isnan(r) || r > worst)
            worst = isnan(r) ? INFINITY : r;
    }
    return worst;
}
