/* The h5zgpu command: cd_values for h5repack and h5py, raw-array compression in the chunk format
 * (one file = one chunk, docs/FORMAT.md), and quality metrics. A client of the public C API. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char USAGE[] =
    "usage:\n"
    "  h5zgpu cdvalues [--codec auto|fixed|huffman] --mode abs|rel|pwrel --eb X\n"
    "                  (or --mode ratio --target R: each chunk's bound chosen for ratio R)\n"
    "                  [--missing V [-t f32|f64]]  (a missing value; -t f32 rounds it to float32)\n"
    "                  [--radius R]  (Huffman: deltas within +-R are coded, 2..1024, default 512)\n"
    "                  [--nccopy VAR]\n"
    "      print the h5repack filter string (UD=...) and the h5py keyword arguments; with\n"
    "      --nccopy, nccopy's -F argument for variable VAR instead\n"
    "  h5zgpu compress -i IN -o OUT -t f32|f64 -d Z,Y,X [--codec C] --mode M --eb X [--radius R]\n"
    "      compress a raw little-endian array into one h5zgpu chunk; report ratio, throughput\n"
    "      and the largest error against the bound\n"
    "  h5zgpu decompress -i IN -o OUT\n"
    "      restore the raw array from a chunk written by compress\n"
    "  h5zgpu check A B -t f32|f64 -d Z,Y,X [--json | --json-file F] [--kmax K] [--pk-band X]\n"
    "               [--missing V]\n"
    "      quality of raw array B against raw array A: max abs error, max error / range, RMSE,\n"
    "      NRMSE, PSNR, SNR, the error's mean, extremes and histogram, Pearson, SSIM (8^3\n"
    "      windows), the error's autocorrelation at lags 1..10, derivatives' and Laplacian's\n"
    "      PSNR; --missing V leaves V's points out of every metric\n"
    "  h5zgpu sweep FIELD -t f32|f64 -d Z,Y,X [--psnr X] [--ssim X] [--pk X [--kmax K]]\n"
    "               [--codec C] [--mode M] [--chunk K] [--bounds N] [--missing V] [--json]\n"
    "      per codec (default fixed and huffman), the bound of highest ratio whose reconstruction\n"
    "      meets every criterion given: PSNR >= X dB, SSIM >= X, P(k) ratio within 1 +- X; N\n"
    "      bounds (default 20) from 1e-1 to 1e-6 (abs: of the range; default mode rel), refined\n"
    "      by bisection, the field in chunks of K per axis (default 64) as the filter writes them\n"
    "  h5zgpu --help | --version\n"
    "\n"
    "  --codec defaults to huffman. Dimensions are slowest-varying first, as in HDF5 and C.\n"
    "  Modes: abs |x'-x| <= eb; rel |x'-x| <= eb * (max - min) of the finite values;\n"
    "  pwrel |x'-x| <= eb * |x| (0 <= eb < 1).\n"
    "  Environment: H5ZGPU_DEVICE=auto|cpu|gpu|gpu:N picks the executor, H5ZGPU_VERBOSE=1 reports\n"
    "  a fallback to the CPU.\n";

/* Options every parameterised command needs, checked by the library itself. */
static int build_params(const cli_opts *o, int need_shape, h5zgpu_params *p)
{
    if (o->mode < 0 || !o->eb_given)
        return cli_usage_error("--mode and --eb (--target for --mode ratio) are required");
    if (need_shape && (!o->dtype || !o->rank))
        return cli_usage_error("-t f32|f64 and -d Z,Y,X are required");
    memset(p, 0, sizeof *p);
    p->codec = o->codec < 0 ? H5ZGPU_CODEC_HUFFMAN : (h5zgpu_codec)o->codec;
    p->mode = (h5zgpu_mode)o->mode;
    p->eb = o->eb;
    p->radius = o->radius;
    p->dtype = need_shape ? o->dtype : H5ZGPU_FLOAT32;
    p->rank = need_shape ? o->rank : 1;
    if (need_shape)
        memcpy(p->dims, o->dims, sizeof(uint64_t) * o->rank);
    else
        p->dims[0] = 1;
    return 0;
}

static int cmd_cdvalues(int argc, char **argv)
{
    cli_opts o;
    h5zgpu_params p;
    unsigned lo, hi;
    int rc;
    if (cli_parse(argc, argv,
                  OPT_CODEC | OPT_MODE | OPT_EB | OPT_MISSING | OPT_TYPE | OPT_RADIUS | OPT_NCCOPY,
                  0, &o) != 0)
        return CLI_EXIT_USAGE;
    if ((rc = build_params(&o, 0, &p)) != 0)
        return rc;
    /* judge codec, mode, bound and radius as the filter will */
    if (h5zgpu_params_check(&p) != H5ZGPU_OK) {
        fprintf(stderr, "h5zgpu: %s\n", h5zgpu_last_error());
        return CLI_EXIT_USAGE;
    }
    /* {codec, mode, eb low, eb high}, then a flags word and what it announces (FILTER.md) */
    unsigned cd[8], n = 0, flags = 0;
    h5zgpu_eb_to_words(p.eb, &lo, &hi);
    cd[n++] = (unsigned)p.codec;
    cd[n++] = (unsigned)p.mode;
    cd[n++] = lo;
    cd[n++] = hi;
    if (o.missing_given || o.radius) {
        flags = (o.missing_given ? 1u : 0u) | (o.radius ? 4u : 0u);
        cd[n++] = flags;
    }
    if (o.missing_given) {
        /* the filter compares bits in the element type: a float32 dataset needs a float32 value */
        double missing = o.dtype == H5ZGPU_FLOAT32 ? (double)(float)o.missing : o.missing;
        h5zgpu_eb_to_words(missing, &cd[n], &cd[n + 1]);
        n += 2;
    }
    if (o.radius)
        cd[n++] = o.radius;
    if (o.nccopy) {   /* nccopy -F VAR,ID,cd...: netCDF-C's filter spec, nothing else */
        printf("%s,%d", o.nccopy, H5ZGPU_FILTER_ID);
        for (unsigned i = 0; i < n; i++)
            printf(",%u", cd[i]);
        printf("\n");
        return 0;
    }
    cli_print_cd_values(cd, n);
    return 0;
}

static int cmd_compress(int argc, char **argv)
{
    cli_opts o;
    h5zgpu_params p;
    h5zgpu_info info;
    h5zgpu_quality m;
    void *in = NULL, *out = NULL, *back = NULL;
    size_t in_len = 0, out_len = 0, back_len = 0;
    char shape[512], dims_arg[512], rate_c[32], rate_d[32];
    int rc;
    if (cli_parse(argc, argv, OPT_IN | OPT_OUT | OPT_TYPE | OPT_DIMS | OPT_CODEC | OPT_MODE | OPT_EB |
                      OPT_RADIUS,
                  0, &o) != 0)
        return CLI_EXIT_USAGE;
    if (!o.in || !o.out)
        return cli_usage_error("-i IN and -o OUT are required");
    if ((rc = build_params(&o, 1, &p)) != 0)
        return rc;
    if (h5zgpu_params_check(&p) != H5ZGPU_OK) {
        fprintf(stderr, "h5zgpu: %s\n", h5zgpu_last_error());
        return CLI_EXIT_USAGE;
    }
    rc = CLI_EXIT_FAIL;
    uint64_t n = cli_count(p.rank, p.dims);
    size_t raw = (size_t)n * cli_esize(p.dtype);
    cli_format_dims(shape, sizeof shape, p.rank, p.dims, "x");
    cli_format_dims(dims_arg, sizeof dims_arg, p.rank, p.dims, ",");
    if (!(in = cli_read_file(o.in, &in_len)))
        goto done;
    if (in_len != raw) {
        fprintf(stderr, "h5zgpu: %s holds %zu bytes but -t %s -d %s needs %zu\n", o.in, in_len,
                cli_dtype_name(p.dtype), dims_arg, raw);
        goto done;
    }
    size_t cap = h5zgpu_compress_bound(&p);
    if (!(out = malloc(cap)) || !(back = malloc(raw))) {
        fprintf(stderr, "h5zgpu: no memory for %zu + %zu bytes of buffers\n", cap, raw);
        goto done;
    }
    double t0 = cli_now();
    h5zgpu_status st = h5zgpu_compress(&p, in, out, cap, &out_len, NULL);
    double t1 = cli_now();
    if (st != H5ZGPU_OK) {
        fprintf(stderr, "h5zgpu: compression failed (%s): %s\n", h5zgpu_status_string(st),
                h5zgpu_last_error());
        goto done;
    }
    if (cli_write_file(o.out, out, out_len) != 0)
        goto done;
    /* decompress in memory to measure the error actually made */
    double t2 = cli_now();
    st = h5zgpu_decompress(out, out_len, back, raw, &back_len, NULL);
    double t3 = cli_now();
    if (st != H5ZGPU_OK || h5zgpu_chunk_info(out, out_len, &info) != H5ZGPU_OK) {
        fprintf(stderr, "h5zgpu: the chunk just written does not decompress: %s\n",
                h5zgpu_last_error());
        goto done;
    }
    cli_opts shape_of = o;   /* the error norms alone, over the chunk's shape */
    shape_of.missing_given = 0;
    if (cli_quality(in, back, &shape_of, H5ZGPU_QUALITY_ALL, &m) != 0)
        goto done;
    /* the bound the header records: a fixed-ratio chunk chose its own */
    double worst = cli_worst_error_over_bound(in, back, n, p.dtype, info.mode, info.eb, &m);
    cli_rate(rate_c, sizeof rate_c, (double)raw, t1 - t0);
    cli_rate(rate_d, sizeof rate_d, (double)raw, t3 - t2);

    printf("h5zgpu compress %s -> %s\n", o.in, o.out);
    printf("  input          %s %s, %zu bytes\n", cli_dtype_name(p.dtype), shape, raw);
    printf("  codec          %s (payload %s), %s eb %g, absolute bound applied %g\n",
           cli_codec_name(p.codec),
           info.codec == 0 ? "stored raw: it did not shrink" : cli_codec_name(info.codec),
           cli_mode_name(p.mode), p.eb, info.eb_abs);
    printf("  executor       %s\n", cli_executor());
    printf("  compressed     %zu bytes, ratio %.2f\n", out_len, (double)raw / (double)out_len);
    printf("  compress       %s (%.3f ms)\n", rate_c, (t1 - t0) * 1e3);
    printf("  decompress     %s (%.3f ms)\n", rate_d, (t3 - t2) * 1e3);
    printf("  max abs error  %.6g (max error / bound %.4f: %s)\n", m.max_abs_error, worst,
           worst <= 1 ? "bound holds" : "BOUND MISSED");
    if (m.nonfinite_mismatch)
        printf("  NaN/Inf        %llu values did not come back bit for bit\n",
               (unsigned long long)m.nonfinite_mismatch);
    rc = worst <= 1 ? 0 : CLI_EXIT_FAIL;
done:
    free(in);
    free(out);
    free(back);
    return rc;
}

static int cmd_decompress(int argc, char **argv)
{
    cli_opts o;
    h5zgpu_info info;
    void *in = NULL, *out = NULL;
    size_t in_len = 0, out_len = 0;
    char shape[512], rate[32];
    int rc = CLI_EXIT_FAIL;
    if (cli_parse(argc, argv, OPT_IN | OPT_OUT, 0, &o) != 0)
        return CLI_EXIT_USAGE;
    if (!o.in || !o.out)
        return cli_usage_error("-i IN and -o OUT are required");
    if (!(in = cli_read_file(o.in, &in_len)))
        goto done;
    if (h5zgpu_chunk_info(in, in_len, &info) != H5ZGPU_OK) {
        fprintf(stderr, "h5zgpu: %s is not an h5zgpu chunk: %s\n", o.in, h5zgpu_last_error());
        goto done;
    }
    if (!(out = malloc(info.raw_len ? info.raw_len : 1))) {
        fprintf(stderr, "h5zgpu: no memory for %llu bytes\n", (unsigned long long)info.raw_len);
        goto done;
    }
    double t0 = cli_now();
    h5zgpu_status st = h5zgpu_decompress(in, in_len, out, info.raw_len, &out_len, NULL);
    double t1 = cli_now();
    if (st != H5ZGPU_OK) {
        fprintf(stderr, "h5zgpu: decompression of %s failed (%s): %s\n", o.in,
                h5zgpu_status_string(st), h5zgpu_last_error());
        goto done;
    }
    if (cli_write_file(o.out, out, out_len) != 0)
        goto done;
    cli_format_dims(shape, sizeof shape, info.rank, info.dims, "x");
    cli_rate(rate, sizeof rate, (double)out_len, t1 - t0);
    printf("h5zgpu decompress %s -> %s\n", o.in, o.out);
    printf("  chunk          %s %s, format %u, %s, %s eb %g, absolute bound applied %g\n",
           cli_dtype_name(info.dtype), shape, info.format_version,
           info.codec == 0 ? "stored raw" : cli_codec_name(info.codec), cli_mode_name(info.mode),
           info.eb, info.eb_abs);
    printf("  executor       %s\n", cli_executor());
    printf("  ratio          %.2f (%zu -> %zu bytes)\n", (double)out_len / (double)in_len, in_len,
           out_len);
    printf("  decompress     %s (%.3f ms)\n", rate, (t1 - t0) * 1e3);
    rc = 0;
done:
    free(in);
    free(out);
    return rc;
}

/* JSON has no infinities: a PSNR of exact data is written as null. */
static void json_number(FILE *f, const char *key, double v, int last)
{
    if (isfinite(v))
        fprintf(f, "  \"%s\": %.17g%s\n", key, v, last ? "" : ",");
    else
        fprintf(f, "  \"%s\": null%s\n", key, last ? "" : ",");
}

/* "key": [v, ...] of n doubles, the last key of the object or not. */
static void json_doubles(FILE *f, const char *key, const double *v, size_t n, int last)
{
    fprintf(f, "  \"%s\": [", key);
    for (size_t k = 0; k < n; k++)
        fprintf(f, k ? ", %.17g" : "%.17g", v[k]);
    fprintf(f, "]%s\n", last ? "" : ",");
}

/* check's results as one JSON object. */
static void check_json(FILE *f, const h5zgpu_quality *q, const double *pk_ratio, double pk_band)
{
    fprintf(f, "{\n  \"elements\": %llu,\n  \"finite\": %llu,\n  \"nonfinite_mismatch\": %llu,\n",
            (unsigned long long)q->elements, (unsigned long long)q->finite,
            (unsigned long long)q->nonfinite_mismatch);
    fprintf(f, "  \"missing\": %llu,\n  \"missing_mismatch\": %llu,\n",
            (unsigned long long)q->missing, (unsigned long long)q->missing_mismatch);
    json_number(f, "min", q->min, 0);
    json_number(f, "max", q->max, 0);
    json_number(f, "range", q->range, 0);
    json_number(f, "max_abs_error", q->max_abs_error, 0);
    json_number(f, "max_rel_error", q->max_rel_error, 0);
    json_number(f, "rmse", q->rmse, 0);
    json_number(f, "nrmse", q->nrmse, 0);
    json_number(f, "psnr", q->psnr, 0);
    json_number(f, "mean_error", q->mean_error, 0);
    json_number(f, "min_error", q->min_error, 0);
    json_number(f, "max_error", q->max_error, 0);
    json_number(f, "snr", q->snr, 0);
    json_number(f, "pearson", q->pearson, 0);
    json_number(f, "ssim", q->ssim < 0 ? NAN : q->ssim, 0);
    json_number(f, "derivative_psnr", q->derivative_psnr, 0);
    json_number(f, "second_derivative_psnr", q->second_derivative_psnr, 0);
    json_number(f, "laplacian_psnr", q->laplacian_psnr, 0);
    json_number(f, "pw_rel_error_min", q->min_pw_rel, 0);
    json_number(f, "pw_rel_error_max", q->max_pw_rel, 0);
    json_number(f, "pw_rel_error_mean", q->mean_pw_rel, 0);
    json_number(f, "pk_ratio_max_deviation", q->pk_max_deviation, 0);
    if (q->pk_status == H5ZGPU_PK_DONE)
        fprintf(f, "  \"pk_within_band\": %s,\n",
                q->pk_max_deviation <= pk_band ? "true" : "false");
    else
        fprintf(f, "  \"pk_within_band\": null,\n");
    json_doubles(f, "pk_ratio", pk_ratio, q->pk_status == H5ZGPU_PK_DONE ? q->pk_shells : 0, 0);
    fprintf(f, "  \"error_histogram\": [");
    for (int k = 0; k < H5ZGPU_QUALITY_BINS; k++)
        fprintf(f, k ? ", %llu" : "%llu", (unsigned long long)q->error_histogram[k]);
    fprintf(f, "],\n");
    fprintf(f, "  \"executor\": \"%s\",\n", q->executor == H5ZGPU_EXEC_GPU ? "gpu" : "cpu");
    fprintf(f, "  \"seconds\": {\"setup\": %.6f, \"staging\": %.6f, \"pointwise\": %.6f, "
               "\"stencils\": %.6f, \"ssim\": %.6f, \"power_spectrum\": %.6f},\n",
            q->seconds_setup, q->seconds_staging, q->seconds_pointwise, q->seconds_stencils,
            q->seconds_ssim, q->seconds_spectrum);
    json_doubles(f, "autocorrelation", q->autocorrelation, H5ZGPU_QUALITY_LAGS, 1);
    fprintf(f, "}\n");
}

static int cmd_check(int argc, char **argv)
{
    cli_opts o;
    h5zgpu_quality q;
    void *a = NULL, *b = NULL;
    double *pk_ratio = NULL;
    size_t a_len = 0, b_len = 0;
    char shape[512];
    int rc = CLI_EXIT_FAIL;
    if (cli_parse(argc, argv,
                  OPT_TYPE | OPT_DIMS | OPT_JSON | OPT_KMAX | OPT_PKBAND | OPT_MISSING |
                      OPT_JSON_FILE,
                  2, &o) != 0)
        return CLI_EXIT_USAGE;
    if (o.npos != 2)
        return cli_usage_error("check needs two files, A (the original) and B");
    if (!o.dtype || !o.rank)
        return cli_usage_error("check reads raw arrays: give -t f32|f64 and -d Z,Y,X "
                               "(HDF5 datasets, file.h5:/dataset, through the Python package's "
                               "h5zgpu command)");
    uint64_t n = cli_count(o.rank, o.dims);
    size_t raw = (size_t)n * cli_esize(o.dtype);
    cli_format_dims(shape, sizeof shape, o.rank, o.dims, ",");
    if (!(a = cli_read_file(o.pos[0], &a_len)) || !(b = cli_read_file(o.pos[1], &b_len)))
        goto done;
    if (a_len != raw || b_len != raw) {
        fprintf(stderr, "h5zgpu: -t %s -d %s needs %zu bytes; %s holds %zu and %s holds %zu\n",
                cli_dtype_name(o.dtype), shape, raw, o.pos[0], a_len, o.pos[1], b_len);
        goto done;
    }
    /* the spectrum's ratio, shells k = 1..n/2 of a cubic field */
    size_t shells = o.rank == 3 ? (size_t)o.dims[0] / 2 + 1 : 1;
    if (!(pk_ratio = malloc(sizeof(double) * shells)))
        goto done;
    h5zgpu_quality_options opt = {.has_missing = o.missing_given, .missing = o.missing,
                                  .pk_ratio = pk_ratio, .pk_capacity = shells, .pk_kmax = o.kmax};
    if (h5zgpu_quality_compute(a, b, o.dtype, o.rank, o.dims, &opt, &q) != H5ZGPU_OK) {
        fprintf(stderr, "h5zgpu: %s\n", h5zgpu_last_error());
        goto done;
    }
    h5zgpu_quality_release();
    if (o.json_file) {   /* the object beside the table, for a caller that wants both */
        FILE *f = fopen(o.json_file, "w");
        if (f)
            check_json(f, &q, pk_ratio, o.pk_band);
        if (!f || fclose(f) != 0) {
            fprintf(stderr, "h5zgpu: cannot write %s\n", o.json_file);
            goto done;
        }
    }
    if (o.json) {
        check_json(stdout, &q, pk_ratio, o.pk_band);
    } else {
        printf("h5zgpu check %s against %s (-t %s -d %s)\n", o.pos[1], o.pos[0],
               cli_dtype_name(o.dtype), shape);
        printf("  range          %.6g (min %.6g, max %.6g, %llu finite of %llu)\n", q.range, q.min,
               q.max, (unsigned long long)q.finite, (unsigned long long)q.elements);
        printf("  max abs error  %.6g\n", q.max_abs_error);
        printf("  max rel error  %.6g (of the range)\n", q.max_rel_error);
        printf("  RMSE           %.6g\n", q.rmse);
        printf("  NRMSE          %.6g\n", q.nrmse);
        printf("  PSNR           %.2f dB\n", q.psnr);
        printf("  SNR            %.2f dB\n", q.snr);
        printf("  error          mean %.6g, min %.6g, max %.6g\n", q.mean_error, q.min_error,
               q.max_error);
        printf("  Pearson        %.9f\n", q.pearson);
        if (q.ssim >= 0)
            printf("  SSIM           %.9f (windows of 8 per axis)\n", q.ssim);
        printf("  PSNR of first differences %.2f dB, second %.2f dB, Laplacian %.2f dB\n",
               q.derivative_psnr, q.second_derivative_psnr, q.laplacian_psnr);
        printf("  |error| / |A|  min %.6g, max %.6g, mean %.6g\n", q.min_pw_rel, q.max_pw_rel,
               q.mean_pw_rel);
        if (q.pk_status == H5ZGPU_PK_DONE)
            printf("  P(k) ratio     max |P_B/P_A - 1| %.3g over k = 1..%zu: %s the 1 +- %g band\n",
                   q.pk_max_deviation, o.kmax && o.kmax < q.pk_shells ? (size_t)o.kmax : q.pk_shells,
                   q.pk_max_deviation <= o.pk_band ? "within" : "OUTSIDE", o.pk_band);
        else
            printf("  P(k) ratio     %s\n",
                   q.pk_status == H5ZGPU_PK_NO_TRANSFORM
                       ? "(no transform: this build has no FFTW3)"
                       : "(only for cubic 3-D finite fields, no point missing)");
        printf("  autocorrelation of the error, lags 1..%d:", H5ZGPU_QUALITY_LAGS);
        for (int k = 0; k < H5ZGPU_QUALITY_LAGS; k++)
            printf(" %.3f", q.autocorrelation[k]);
        printf("\n");
        printf("  NaN/Inf        %llu values differ in their bits\n",
               (unsigned long long)q.nonfinite_mismatch);
        if (o.missing_given)
            printf("  missing %-6g %llu points left out, %llu of them differ in their bits\n",
                   o.missing, (unsigned long long)q.missing, (unsigned long long)q.missing_mismatch);
        printf("  computed on    the %s: %.3f s (setup %.3f, staging %.3f, passes %.3f)\n",
               q.executor == H5ZGPU_EXEC_GPU ? "GPU" : "CPU",
               q.seconds_setup + q.seconds_staging + q.seconds_pointwise + q.seconds_stencils +
                   q.seconds_ssim + q.seconds_spectrum,
               q.seconds_setup, q.seconds_staging,
               q.seconds_pointwise + q.seconds_stencils + q.seconds_ssim + q.seconds_spectrum);
    }
    rc = 0;
done:
    free(pk_ratio);
    free(a);
    free(b);
    return rc;
}

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
} command;

static const command COMMANDS[] = {
    {"cdvalues", cmd_cdvalues},
    {"compress", cmd_compress},
    {"decompress", cmd_decompress},
    {"check", cmd_check},
    {"sweep", cli_sweep},
};

int main(int argc, char **argv)
{
    /* before any CUDA context: queues for 16 chunks in flight a batch (codec/src/batch.c) */
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
    if (argc < 2)
        return cli_usage_error("no command given");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(USAGE, stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("%s, HDF5 filter %d (\"%s\")\n", h5zgpu_version(), H5ZGPU_FILTER_ID,
               H5ZGPU_FILTER_NAME);
        printf("executor: %s\n", cli_executor());
        return 0;
    }
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        if (strcmp(argv[1], COMMANDS[i].name) == 0)
            return COMMANDS[i].run(argc - 2, argv + 2);
    fprintf(stderr, "h5zgpu: unknown command %s (cdvalues, compress, decompress, check, sweep; see "
                    "h5zgpu --help)\n",
            argv[1]);
    return CLI_EXIT_USAGE;
}
