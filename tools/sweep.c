/* h5zgpu sweep: the bound of highest ratio that meets the user's quality criteria, per codec.
 * The field is cut into the chunks a dataset would have and each bound of a log-spaced grid is
 * tried the way the filter would write them (h5zgpu_compress_batch, on the GPU when one is
 * usable), then decoded and judged: PSNR, SSIM, the power spectrum's ratio. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The grid of bounds: REL and PWREL eb from SW_HI down to SW_LO; ABS the same fractions of the
 * field's range. */
#define SW_HI 1e-1
#define SW_LO 1e-6
#define SW_BOUNDS 20
#define SW_CHUNK 64
/* Bisections (in log space) between the winning bound of the grid and the larger one that
 * failed: the grid's steps are coarse, and the criteria's edge lies between them. */
#define SW_REFINE 4

/* The field cut into chunks as HDF5 hands them to the filter: each chunk's values contiguous,
 * edge chunks whole, padded with the fill value the filter would have: the missing value, else
 * HDF5's default 0. */
typedef struct sw_chunks {
    size_t count, raw;
    double fill;
    uint64_t edge[H5ZGPU_MAX_RANK];
    void **in, **out, **back;
    size_t *cap, *len, *back_cap, *back_len;
    uint64_t (*origin)[H5ZGPU_MAX_RANK], (*shape)[H5ZGPU_MAX_RANK];
} sw_chunks;

/* One bound tried with one codec. */
typedef struct sw_try {
    unsigned codec;
    double eb, ratio, psnr, ssim, pk_dev;
    int accepted;
    double codec_s, judge_s;   /* seconds: compressing and decoding the chunks; the metrics */
} sw_try;

/* Copies the block at origin of the given shape between the field (dims) and a chunk buffer
 * (edge): into the chunk when gather, else out of it. Rows of the fastest axis at a time. */
static void copy_block(void *field, const uint64_t *dims, unsigned rank, const uint64_t *origin,
                       const uint64_t *shape, const uint64_t *edge, size_t es, void *buf,
                       int gather)
{
    uint64_t idx[H5ZGPU_MAX_RANK] = {0}, rows = cli_count(rank - 1, shape);
    size_t row = (size_t)shape[rank - 1] * es;
    for (uint64_t r = 0; r < rows; r++) {
        uint64_t at = 0, in = 0;
        for (unsigned d = 0; d < rank; d++) {
            at = at * dims[d] + origin[d] + (d + 1 < rank ? idx[d] : 0);
            in = in * edge[d] + (d + 1 < rank ? idx[d] : 0);
        }
        uint8_t *f = (uint8_t *)field + at * es, *b = (uint8_t *)buf + in * es;
        memcpy(gather ? b : f, gather ? f : b, row);
        for (unsigned d = rank - 1; d-- > 0;)   /* the next row: an odometer over the slower axes */
            if (++idx[d] < shape[d])
                break;
            else
                idx[d] = 0;
    }
}

static void chunks_free(sw_chunks *c)
{
    for (size_t i = 0; c->in && i < c->count; i++) {
        free(c->in[i]);
        free(c->out[i]);
        free(c->back[i]);
    }
    free(c->in);
    free(c->out);
    free(c->back);
    free(c->cap);
    free(c->len);
    free(c->back_cap);
    free(c->back_len);
    free(c->origin);
    free(c->shape);
}

/* Cuts the field into chunks of edge k (the field's extent where shorter), with room for each
 * one's compressed bytes. */
static int chunks_cut(void *field, const cli_opts *o, unsigned k, sw_chunks *c)
{
    uint64_t grid[H5ZGPU_MAX_RANK];
    size_t es = cli_esize(o->dtype);
    memset(c, 0, sizeof *c);
    /* a float32 dataset's missing value is a float32 value (FILTER.md) */
    c->fill = !o->missing_given ? 0.0
              : o->dtype == H5ZGPU_FLOAT32 ? (double)(float)o->missing : o->missing;
    h5zgpu_params p = {.codec = H5ZGPU_CODEC_FIXED, .dtype = o->dtype, .rank = o->rank,
                       .has_fill = 1};
    for (unsigned d = 0; d < o->rank; d++) {
        c->edge[d] = p.dims[d] = k < o->dims[d] ? k : o->dims[d];
        grid[d] = (o->dims[d] + c->edge[d] - 1) / c->edge[d];
    }
    c->count = (size_t)cli_count(o->rank, grid);
    c->raw = (size_t)cli_count(o->rank, c->edge) * es;
    c->in = calloc(c->count, sizeof(void *));
    c->out = calloc(c->count, sizeof(void *));
    c->back = calloc(c->count, sizeof(void *));
    c->cap = calloc(c->count, sizeof(size_t));
    c->len = calloc(c->count, sizeof(size_t));
    c->back_cap = calloc(c->count, sizeof(size_t));
    c->back_len = calloc(c->count, sizeof(size_t));
    c->origin = calloc(c->count, sizeof *c->origin);
    c->shape = calloc(c->count, sizeof *c->shape);
    if (!c->in || !c->out || !c->back || !c->cap || !c->len || !c->back_cap || !c->back_len ||
        !c->origin || !c->shape)
        return -1;
    for (size_t i = 0; i < c->count; i++) {
        size_t rest = i;
        for (unsigned d = o->rank; d-- > 0;) {
            uint64_t g = rest % grid[d];
            rest /= grid[d];
            c->origin[i][d] = g * c->edge[d];
            c->shape[i][d] = o->dims[d] - c->origin[i][d] < c->edge[d]
                                 ? o->dims[d] - c->origin[i][d]
                                 : c->edge[d];
        }
        c->cap[i] = h5zgpu_compress_bound(&p);
        c->back_cap[i] = c->raw;
        if (!(c->in[i] = malloc(c->raw)) || !(c->back[i] = malloc(c->raw)) ||
            !(c->out[i] = malloc(c->cap[i])))
            return -1;
        for (size_t e = 0; e < c->raw / es; e++)   /* the padding */
            if (o->dtype == H5ZGPU_FLOAT32)
                ((float *)c->in[i])[e] = (float)c->fill;
            else
                ((double *)c->in[i])[e] = c->fill;
        copy_block(field, o->dims, o->rank, c->origin[i], c->shape[i], c->edge, es, c->in[i], 1);
    }
    return 0;
}

/* Compresses every chunk with p in one batch, as the filter would (HDF5's fill value 0
 * declared), decodes them into recon; the ratio of the field's bytes to the chunks'. */
static int try_bound(sw_chunks *c, const cli_opts *o, const h5zgpu_params *base, void *recon,
                     double *ratio)
{
    size_t es = cli_esize(o->dtype);
    double packed = 0;
    h5zgpu_params p = *base;
    memcpy(p.dims, c->edge, sizeof c->edge);
    p.has_fill = 1;
    p.fill = c->fill;
    if (h5zgpu_compress_batch(&p, c->count, (const void *const *)c->in, c->out, c->cap, c->len,
                              NULL, NULL) != H5ZGPU_OK ||
        h5zgpu_decompress_batch(c->count, (const void *const *)c->out, c->len, c->back,
                                c->back_cap, c->back_len, NULL, NULL) != H5ZGPU_OK) {
        fprintf(stderr, "h5zgpu: %s\n", h5zgpu_last_error());
        return -1;
    }
    for (size_t i = 0; i < c->count; i++) {
        copy_block(recon, o->dims, o->rank, c->origin[i], c->shape[i], c->edge, es, c->back[i],
                   0);
        packed += (double)c->len[i];
    }
    *ratio = (double)cli_count(o->rank, o->dims) * (double)es / packed;
    return 0;
}

/* The largest |P_B(k) / P_A(k) - 1| over k = 1..kmax (all shells when 0), as check has it. */
static double pk_deviation(const double *pa, const double *pb, size_t n, unsigned kmax)
{
    double worst = 0;
    for (size_t k = 1; k <= n / 2 && (kmax == 0 || k <= kmax); k++) {
        double r = pa[k] > 0 ? pb[k] / pa[k] : (pb[k] > 0 ? INFINITY : 1);
        worst = fmax(worst, fabs(r - 1));
    }
    return worst;
}

/* Judges recon against the field by the criteria given (pa: the field's P(k), pb room for
 * recon's); NAN for a metric not asked for. */
static int judge(const void *a, const void *b, const cli_opts *o, const double *pa, double *pb,
                 sw_try *t)
{
    t->psnr = t->ssim = t->pk_dev = NAN;
    if (!isnan(o->psnr) || !isnan(o->ssim)) {
        h5zgpu_quality q;
        unsigned skip = H5ZGPU_QUALITY_STATISTICS | H5ZGPU_QUALITY_STENCILS |
                        H5ZGPU_QUALITY_SPECTRUM | (isnan(o->ssim) ? H5ZGPU_QUALITY_SSIM : 0);
        if (cli_quality(a, b, o, skip, &q) != 0)
            return -1;
        t->psnr = isnan(o->psnr) ? NAN : q.psnr;
        t->ssim = q.ssim;
    }
    if (!isnan(o->pk)) {
        if (h5zgpu_power_spectrum(b, o->dtype, o->rank, o->dims, NULL, pb) != H5ZGPU_OK) {
            fprintf(stderr, "h5zgpu: no power spectrum of the reconstruction: %s\n",
                    h5zgpu_last_error());
            return -1;
        }
        t->pk_dev = pk_deviation(pa, pb, (size_t)o->dims[0], o->kmax);
    }
    t->accepted = (isnan(o->psnr) || t->psnr >= o->psnr) &&
                  (isnan(o->ssim) || t->ssim >= o->ssim) && (isnan(o->pk) || t->pk_dev <= o->pk);
    return 0;
}

/* A bar on a terminal's stderr over one codec's tries; a new line when it is full. */
static void progress(size_t done, size_t total, const sw_try *t, const cli_opts *o)
{
    static size_t shown;
    if (!isatty(STDERR_FILENO) || (done == total && shown == total))
        return;
    shown = done;
    char bar[31];
    size_t fill = done * 30 / total;
    for (size_t i = 0; i < 30; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[30] = 0;
    fprintf(stderr, "\r[%s] %zu/%zu %s %s %.1e", bar, done, total, cli_codec_name(t->codec),
            cli_mode_name((unsigned)o->mode), t->eb);
    if (done == total)
        fprintf(stderr, "\n");
}

/* The cd_values of a try: codec, mode, bound, and the missing value when one was given. */
static unsigned try_cd_values(const sw_try *t, const cli_opts *o, unsigned *cd)
{
    unsigned n = 4;
    cd[0] = t->codec;
    cd[1] = (unsigned)o->mode;
    h5zgpu_eb_to_words(t->eb, &cd[2], &cd[3]);
    if (o->missing_given) {
        cd[n++] = 1;   /* flag bit 0: a missing value follows */
        h5zgpu_eb_to_words(o->dtype == H5ZGPU_FLOAT32 ? (double)(float)o->missing : o->missing,
                           &cd[n], &cd[n + 1]);
        n += 2;
    }
    return n;
}

/* JSON has no infinities: an exact PSNR, or a metric not asked for, is null. */
static void json_value(const char *key, double v, const char *after)
{
    if (isfinite(v))
        printf("\"%s\": %.17g%s", key, v, after);
    else
        printf("\"%s\": null%s", key, after);
}

static void print_json(const sw_try *tries, size_t ntry, const int *win, const unsigned *codecs,
                       size_t ncodec, const cli_opts *o, unsigned chunk)
{
    printf("{\n  \"mode\": \"%s\",\n  \"chunk\": %u,\n  \"criteria\": {",
           cli_mode_name((unsigned)o->mode), chunk);
    json_value("pk", o->pk, ", ");
    printf("\"kmax\": %u, ", o->kmax);
    json_value("psnr", o->psnr, ", ");
    json_value("ssim", o->ssim, "},\n  \"tries\": [\n");
    for (size_t i = 0; i < ntry; i++) {
        const sw_try *t = &tries[i];
        printf("    {\"codec\": \"%s\", ", cli_codec_name(t->codec));
        json_value("eb", t->eb, ", ");
        json_value("ratio", t->ratio, ", ");
        json_value("psnr", t->psnr, ", ");
        json_value("ssim", t->ssim, ", ");
        json_value("pk_ratio_max_deviation", t->pk_dev, ", ");
        json_value("codec_seconds", t->codec_s, ", ");
        json_value("metrics_seconds", t->judge_s, ", ");
        printf("\"accepted\": %s}%s\n", t->accepted ? "true" : "false", i + 1 < ntry ? "," : "");
    }
    printf("  ],\n  \"winners\": {");
    for (size_t c = 0; c < ncodec; c++) {
        printf("%s\"%s\": ", c ? ", " : "", cli_codec_name(codecs[c]));
        if (win[c] < 0) {
            printf("null");
            continue;
        }
        const sw_try *t = &tries[win[c]];
        unsigned cd[7], ncd = try_cd_values(t, o, cd);
        printf("{");
        json_value("eb", t->eb, ", ");
        json_value("ratio", t->ratio, ", ");
        printf("\"cd_values\": [");
        for (unsigned k = 0; k < ncd; k++)
            printf(k ? ", %u" : "%u", cd[k]);
        printf("]}");
    }
    printf("}\n}\n");
}

static void print_table_row(const sw_try *t)
{
    printf("  %-8s %9.3g %9.2f", cli_codec_name(t->codec), t->eb, t->ratio);
    printf(isnan(t->psnr) ? "         -" : " %9.2f", t->psnr);
    printf(isnan(t->ssim) ? "           -" : " %11.6f", t->ssim);
    printf(isnan(t->pk_dev) ? "          -" : " %10.3g", t->pk_dev);
    printf("  %s\n", t->accepted ? "yes" : "no");
}

static void print_winners(const sw_try *tries, const int *win, const unsigned *codecs,
                          size_t ncodec, const cli_opts *o)
{
    int best = -1;
    for (size_t c = 0; c < ncodec; c++) {
        if (win[c] < 0) {
            printf("%s: no bound of the grid meets the criteria\n", cli_codec_name(codecs[c]));
            continue;
        }
        const sw_try *t = &tries[win[c]];
        unsigned cd[7], ncd = try_cd_values(t, o, cd);
        printf("%s: %s %.3g, ratio %.2f\n", cli_codec_name(t->codec),
               cli_mode_name((unsigned)o->mode), t->eb, t->ratio);
        cli_print_cd_values(cd, ncd);
        if (best < 0 || t->ratio > tries[best].ratio)
            best = win[c];
    }
    if (best >= 0 && ncodec > 1)
        printf("best: %s %s %.3g, ratio %.2f\n", cli_codec_name(tries[best].codec),
               cli_mode_name((unsigned)o->mode), tries[best].eb, tries[best].ratio);
}

int cli_sweep(int argc, char **argv)
{
    cli_opts o;
    if (cli_parse(argc, argv,
                  OPT_TYPE | OPT_DIMS | OPT_CODEC | OPT_MODE | OPT_JSON | OPT_KMAX | OPT_CHUNK |
                      OPT_BOUNDS | OPT_PK | OPT_PSNR | OPT_SSIM | OPT_MISSING,
                  1, &o) != 0)
        return CLI_EXIT_USAGE;
    if (o.npos != 1 || !o.dtype || !o.rank)
        return cli_usage_error("sweep needs a raw field with -t f32|f64 and -d Z,Y,X");
    if (isnan(o.pk) && isnan(o.psnr) && isnan(o.ssim))
        return cli_usage_error("sweep needs a criterion: --pk X, --psnr X or --ssim X");
    if (o.mode < 0)
        o.mode = H5ZGPU_MODE_REL;
    if (o.mode == H5ZGPU_MODE_RATIO)
        return cli_usage_error("sweep searches a bound: --mode abs, rel or pwrel");
    const unsigned both[2] = {H5ZGPU_CODEC_FIXED, H5ZGPU_CODEC_HUFFMAN};
    unsigned one = (unsigned)o.codec;
    const unsigned *codecs = o.codec < 0 ? both : &one;
    size_t ncodec = o.codec < 0 ? 2 : 1, nb = o.bounds ? o.bounds : SW_BOUNDS, ntry = 0;
    unsigned chunk = o.chunk ? o.chunk : SW_CHUNK;
    uint64_t n = cli_count(o.rank, o.dims);
    int rc = CLI_EXIT_FAIL, win[2] = {-1, -1};
    sw_chunks c;
    double *pa = NULL, *pb = NULL;   /* the field's P(k) and a reconstruction's */
    h5zgpu_quality ma;
    sw_try *tries = calloc((nb + SW_REFINE) * ncodec, sizeof *tries);
    void *a = cli_read_array(o.pos[0], &o), *recon = malloc((size_t)n * cli_esize(o.dtype));
    memset(&c, 0, sizeof c);
    if (!a || !tries || !recon)
        goto done;
    if (chunks_cut(a, &o, chunk, &c) != 0) {
        fprintf(stderr, "h5zgpu: no memory for the chunks\n");
        goto done;
    }
    /* the chunks hold the missing value; the metrics leave it out (cli_quality) */
    if (cli_quality(a, a, &o, H5ZGPU_QUALITY_ALL, &ma) != 0)   /* the field's range */
        goto done;
    if (!isnan(o.pk)) {
        size_t shells = o.rank == 3 ? (size_t)o.dims[0] / 2 + 1 : 1;
        pa = malloc(sizeof(double) * shells * 2);
        pb = pa ? pa + shells : NULL;
        /* a transform cannot leave the missing points out: a field holding them is refused */
        h5zgpu_quality_options miss = {.has_missing = o.missing_given, .missing = o.missing};
        h5zgpu_status st = pa ? h5zgpu_power_spectrum(a, o.dtype, o.rank, o.dims, &miss, pa)
                              : H5ZGPU_E_NOMEM;
        if (st != H5ZGPU_OK) {
            fprintf(stderr, "h5zgpu: --pk needs %s\n",
                    st == H5ZGPU_E_UNSUPPORTED
                        ? "a transform: a build with FFTW3 (Debian: libfftw3-dev) or cuFFT"
                        : "a cubic 3-D field of finite values, without a missing value");
            goto done;
        }
    }
    if (!o.json) {
        char shape[512];
        cli_format_dims(shape, sizeof shape, o.rank, o.dims, ",");
        printf("h5zgpu sweep %s (-t %s -d %s), chunks of %u, %zu %s bounds from %g to %g%s, "
               "executor %s\n",
               o.pos[0], cli_dtype_name(o.dtype), shape, chunk, nb, cli_mode_name((unsigned)o.mode),
               SW_HI, SW_LO, o.mode == H5ZGPU_MODE_ABS ? " of the range" : "", cli_executor());
        printf("  %-8s %9s %9s %9s %11s %10s  %s\n", "codec", "bound", "ratio", "PSNR", "SSIM",
               "P(k) dev", "meets");
    }
    for (size_t ci = 0; ci < ncodec; ci++) {
        double lo = 0, hi = 0;   /* the refinement's accepted and failed bounds */
        for (size_t b = 0; b < nb + SW_REFINE; b++) {
            double eb;
            if (b < nb) {
                double frac = SW_HI * pow(SW_LO / SW_HI, (double)b / (double)(nb - 1));
                eb = o.mode == H5ZGPU_MODE_ABS ? frac * ma.range : frac;
            } else if (b == nb) {
                /* refine only below a larger bound that failed, tried just before the winner */
                size_t w = win[ci] < 0 ? 0 : (size_t)win[ci] - ci * (nb + SW_REFINE);
                if (win[ci] < 0 || w == 0 || tries[win[ci] - 1].accepted)
                    break;
                lo = tries[win[ci]].eb;
                hi = tries[win[ci] - 1].eb;
                eb = sqrt(lo * hi);
            } else {
                eb = sqrt(lo * hi);
            }
            sw_try *t = &tries[ntry++];
            t->codec = codecs[ci];
            t->eb = eb;
            h5zgpu_params p = {.codec = (h5zgpu_codec)t->codec, .mode = (h5zgpu_mode)o.mode,
                               .eb = t->eb, .dtype = o.dtype, .rank = o.rank};
            double t0 = cli_now();
            if (try_bound(&c, &o, &p, recon, &t->ratio) != 0)
                goto done;
            double t1 = cli_now();
            if (judge(a, recon, &o, pa, pb, t) != 0)
                goto done;
            t->codec_s = t1 - t0;
            t->judge_s = cli_now() - t1;
            /* the highest ratio wins; on a tie the larger bound (REL applies the largest power
             * of two below its bound: neighbouring bounds may write the same bytes) */
            if (t->accepted && (win[ci] < 0 || t->ratio > tries[win[ci]].ratio ||
                                (t->ratio == tries[win[ci]].ratio && t->eb > tries[win[ci]].eb)))
                win[ci] = (int)(t - tries);
            if (b >= nb)
                *(t->accepted ? &lo : &hi) = eb;
            progress(b + 1, nb + SW_REFINE, t, &o);
            if (!o.json)
                print_table_row(t);
        }
        progress(nb + SW_REFINE, nb + SW_REFINE, &tries[ntry - 1], &o);
    }
    if (o.json)
        print_json(tries, ntry, win, codecs, ncodec, &o, chunk);
    else
        print_winners(tries, win, codecs, ncodec, &o);
    rc = win[0] >= 0 || win[1] >= 0 ? 0 : CLI_EXIT_FAIL;
done:
    chunks_free(&c);
    h5zgpu_quality_release();
    free(pa);
    free(tries);
    free(a);
    free(recon);
    return rc;
}
