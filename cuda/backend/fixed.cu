/* The fixed-length codec's calls of backend_gpu.h: a chunk's statistics, encoding and assembly,
 * or its checksum and decoding, on one stream, with the results read back once. */
#include "../fixed/stages.h"
#include "workspace.h"

#include <limits.h>
#include <string.h>

/* The look-back's 62-bit offsets and a 1-D grid of tiles bound the chunks a launch takes. */
#define HZC_MAX_TILES ((uint64_t)INT_MAX)

static h5zgpu_status tiles_fit(const fl_geom *g, unsigned count)
{
    if (count * g->ntiles <= HZC_MAX_TILES)
        return H5ZGPU_OK;
    return hz_fail(H5ZGPU_E_DEVICE, "%u chunk(s) of %llu tiles are more than one GPU launch "
                                    "takes (at most %llu tiles); use smaller chunks",
                   count, (unsigned long long)g->ntiles, (unsigned long long)HZC_MAX_TILES);
}

/* Rounds a byte count up to whole 8-byte words, to lay arrays one after another. */
static uint64_t words8(uint64_t n)
{
    return (n + 7) & ~(uint64_t)7;
}

/* An encoding's: the jobs, the inputs' places (the statistics pass), the counters. */
typedef struct enc_arrays {
    fl_enc_job *jobs, *hjobs;
    const void **ins, **hins;
    hzc_scalars *sc, *hsc;
} enc_arrays;

static h5zgpu_status enc_arrays_need(hzc_ws *w, unsigned count, enc_arrays *E)
{
    const uint64_t item[3] = {sizeof(fl_enc_job), sizeof(void *), sizeof(hzc_scalars)};
    void *d[3], *h[3];
    const h5zgpu_status st = hzc_job_arrays(w, count, 3, item, d, h);
    if (st != H5ZGPU_OK)
        return st;
    E->jobs = (fl_enc_job *)d[0], E->hjobs = (fl_enc_job *)h[0];
    E->ins = (const void **)d[1], E->hins = (const void **)h[1];
    E->sc = (hzc_scalars *)d[2], E->hsc = (hzc_scalars *)h[2];
    return H5ZGPU_OK;
}

/* Chunk i's values at in[i], its payload to out[i] (a->fill_shift further when it holds fill);
 * a gives the rest, alike for all. Statistics of every chunk, one synchronisation, their
 * quantisers on the host, then the encodings and assemblies of all in two launches and one more
 * synchronisation. each[i]: H5ZGPU_OK, or H5ZGPU_E_OUTPUT_TOO_SMALL when chunk i's payload
 * needs more than a->cap (r[i].held_fill and fill_bits are set either way). */
static h5zgpu_status encode_many(const fl_geom *g, const hzc_encode_args *a, unsigned count,
                                 const void *const *in, uint8_t *const *out,
                                 hzc_encode_result *r, h5zgpu_status *each)
{
    hzc_call c;
    enc_arrays E;
    const uint64_t n = g->nz * g->ny * g->nx, raw = n * (a->is_f32 ? 4u : 8u);
    const uint64_t tab_stride = words8(fl_tables_size(g, 1) + g->nblocks), cap = a->cap;
    const uint64_t lb_words = 2 * g->ntiles;
    uint8_t *d_in = NULL, *fin, *host;
    const fl_enc_job *one;
    uint64_t at;
    h5zgpu_status st = tiles_fit(g, count);
    if (st != H5ZGPU_OK)
        return st;
    if ((st = hzc_call_begin(&c, a->device, a->stream)) != H5ZGPU_OK)
        goto done;
    hzc_ws *w;
    w = c.ws;
    if ((st = enc_arrays_need(w, count, &E)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->part, count * sizeof(hzc_minmax) * HZC_STATS_CTAS, 0)) !=
            H5ZGPU_OK ||
        (st = hzc_buf_need(&w->tab, count * tab_stride, 0)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->pay, count * words8(cap), 0)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->status, count * lb_words * sizeof(unsigned long long), 0)) !=
            H5ZGPU_OK)
        goto done;
    if (!a->out_dev && (st = hzc_buf_need(&w->fin, count * words8(cap), 0)) != H5ZGPU_OK)
        goto done;
    if (!a->in_dev && (st = hzc_stage_in_many(&c, in, count, raw, &d_in)) != H5ZGPU_OK)
        goto done;
    for (unsigned i = 0; i < count; i++)
        E.hins[i] = a->in_dev ? in[i] : d_in + i * raw;

    /* statistics: the quantisers (a chunk alone needs no arrays on the device) */
    CK(cudaMemsetAsync(E.sc, 0, count * sizeof(hzc_scalars), c.s), "reset of the counters");
    if (count == 1) {
        CK(hzc_launch_stats(E.hins[0], n, a->is_f32, a->mode == H5ZGPU_MODE_PWREL, a->has_fill,
                            a->fill_bits, (hzc_minmax *)w->part.p, E.sc, w->sms, c.s),
           "launch of the statistics kernel");
    } else {
        CK(cudaMemcpyAsync(E.ins, E.hins, count * sizeof(void *), cudaMemcpyHostToDevice, c.s),
           "upload of the inputs' places");
        CK(hzc_launch_stats_batch(E.ins, count, n, a->is_f32, a->mode == H5ZGPU_MODE_PWREL,
                                  a->has_fill, a->fill_bits, (hzc_minmax *)w->part.p, E.sc,
                                  w->sms, c.s),
           "launch of the statistics kernel");
    }
    if ((st = hzc_sync_many(&c, E.hsc, E.sc, count)) != H5ZGPU_OK)
        goto done;
    fin = (uint8_t *)w->fin.p;
    for (unsigned i = 0; i < count; i++) {
        fl_enc_job *J = &E.hjobs[i];
        hzc_quant_from(&E.hsc[i], a, &J->Q);
        r[i].held_fill = J->Q.has_fill;
        r[i].fill_bits = J->Q.fill_bits;
        J->in = E.hins[i];
        J->tables = fl_tables_size(g, J->Q.has_fill);
        J->tab = (uint8_t *)w->tab.p + i * tab_stride;
        J->pay = (uint8_t *)w->pay.p + i * words8(cap);
        J->paycap = cap > J->tables ? cap - J->tables : 0;
        J->status = (unsigned long long *)w->status.p + i * lb_words;
        J->dst = a->out_dev ? out[i] + (J->Q.has_fill ? a->fill_shift : 0) : fin + i * words8(cap);
        J->cap = cap;
    }
    if (count == 1 && a->quant)
        *a->quant = E.hjobs[0].Q;

    /* the encodings */
    one = count == 1 ? &E.hjobs[0] : NULL;
    if (!one)
        CK(cudaMemcpyAsync(E.jobs, E.hjobs, count * sizeof(fl_enc_job), cudaMemcpyHostToDevice,
                           c.s),
           "upload of the jobs");
    CK(cudaMemsetAsync(w->status.p, 0, count * lb_words * sizeof(unsigned long long), c.s),
       "reset of the look-back status");
    CK(cudaMemsetAsync(E.sc, 0, count * sizeof(hzc_scalars), c.s), "reset of the counters");
    CK(fl_launch_encode(g, a->is_f32, a->mode == H5ZGPU_MODE_PWREL, E.jobs, one, count, E.sc,
                        c.s),
       "launch of the compression kernel");
    CK(fl_launch_assemble(E.jobs, one, count, cap, E.sc, w->sms, c.s),
       "launch of the assembly kernel");
    if ((st = hzc_sync_many(&c, E.hsc, E.sc, count)) != H5ZGPU_OK)
        goto done;
    for (unsigned i = 0; i < count; i++) {
        const fl_enc_job *J = &E.hjobs[i];
        r[i].len = J->tables + E.hsc[i].nhdr_total + E.hsc[i].bytes_total;
        r[i].eb_abs = J->Q.eb;
        r[i].sum = E.hsc[i].sum;
        each[i] = r[i].len > cap ? H5ZGPU_E_OUTPUT_TOO_SMALL : H5ZGPU_OK;
    }
    if (a->out_dev)
        goto done;

    /* host outputs: the payloads that fit, packed in the pinned buffer, then in place */
    at = 0;
    for (unsigned i = 0; i < count; i++)
        at += each[i] == H5ZGPU_OK ? words8(r[i].len) : 0;
    if ((st = hzc_buf_need(&w->host, at, 1)) != H5ZGPU_OK)
        goto done;
    host = (uint8_t *)w->host.p;
    at = 0;
    for (unsigned i = 0; i < count; i++)
        if (each[i] == H5ZGPU_OK) {
            CK(cudaMemcpyAsync(host + at, fin + i * words8(cap), r[i].len, cudaMemcpyDeviceToHost,
                               c.s),
               "download of the payload");
            at += words8(r[i].len);
        }
    CK(hzc_wait(&c), "download of the payload");
    at = 0;
    for (unsigned i = 0; i < count; i++)
        if (each[i] == H5ZGPU_OK) {
            memcpy(out[i] + (r[i].held_fill ? a->fill_shift : 0), host + at, r[i].len);
            at += words8(r[i].len);
        }
done:
    hzc_call_end(&c, st);
    return st;
}

h5zgpu_status hzc_fixed_encode(const fl_geom *g, const hzc_encode_args *a, hzc_encode_result *r)
{
    h5zgpu_status each = H5ZGPU_OK;
    r->held_fill = 0;
    h5zgpu_status st = encode_many(g, a, 1, &a->in, &a->out, r, &each);
    if (st == H5ZGPU_OK && each != H5ZGPU_OK)
        st = hz_fail(each, "fixed-length payload of %llu bytes exceeds %llu",
                     (unsigned long long)r->len, (unsigned long long)a->cap);
    return st;
}

h5zgpu_status hzc_fixed_encode_batch(const fl_geom *g, const hzc_encode_args *a, unsigned count,
                                     const void *const *in, uint8_t *const *out,
                                     hzc_encode_result *r, h5zgpu_status *each)
{
    for (unsigned i = 0; i < count; i++)
        r[i].held_fill = 0;
    return encode_many(g, a, count, in, out, r, each);
}

/* A decoding's: the jobs, the payloads' spans (the checksum pass), the counters. */
typedef struct dec_arrays {
    fl_dec_job *jobs, *hjobs;
    hzc_span *spans, *hspans;
    hzc_scalars *sc, *hsc;
} dec_arrays;

static h5zgpu_status dec_arrays_need(hzc_ws *w, unsigned count, dec_arrays *D)
{
    const uint64_t item[3] = {sizeof(fl_dec_job), sizeof(hzc_span), sizeof(hzc_scalars)};
    void *d[3], *h[3];
    const h5zgpu_status st = hzc_job_arrays(w, count, 3, item, d, h);
    if (st != H5ZGPU_OK)
        return st;
    D->jobs = (fl_dec_job *)d[0], D->hjobs = (fl_dec_job *)h[0];
    D->spans = (hzc_span *)d[1], D->hspans = (hzc_span *)h[1];
    D->sc = (hzc_scalars *)d[2], D->hsc = (hzc_scalars *)h[2];
    return H5ZGPU_OK;
}

/* Payloads of count chunks of the geometry g (headers h[i]: all of one element type, codec
 * fixed-length) at pay[i] into out[i]: their checksum passes, decodings and one
 * synchronisation. each[i]: H5ZGPU_OK with sum[i], or H5ZGPU_E_CORRUPT. */
static h5zgpu_status decode_many(const fl_geom *g, unsigned count, const hz_header *h,
                                 const void *const *pay, int in_dev, void *const *out,
                                 int out_dev, int device, void *stream, uint32_t *sum,
                                 h5zgpu_status *each)
{
    hzc_call c;
    dec_arrays D;
    const int is_f32 = h[0].dtype == H5ZGPU_FLOAT32;
    const uint64_t raw = g->nz * g->ny * g->nx * (is_f32 ? 4u : 8u), lb_words = 2 * g->ntiles;
    uint64_t most = 0, staged = 0, at;
    unsigned k = 0;   /* the chunks launched: those whose payload holds its tables */
    int lin = 1;      /* all of them ABS or REL on version 3's grid (fl_launch_decode) */
    uint8_t *d_in = NULL, *fin;
    /* host copies: their places and lengths */
    void **moves = (void **)malloc(count * sizeof *moves);
    void **outs = (void **)malloc(count * sizeof *outs);
    uint64_t *lens = (uint64_t *)malloc(count * sizeof *lens);
    h5zgpu_status st = tiles_fit(g, count);
    c.ws = NULL;
    c.prev_device = -1;
    if (st == H5ZGPU_OK && (!moves || !outs || !lens))
        st = hz_fail(H5ZGPU_E_NOMEM, "no host memory for a batch of %u chunks", count);
    if (st != H5ZGPU_OK)
        goto done;
    if ((st = hzc_call_begin(&c, device, stream)) != H5ZGPU_OK)
        goto done;
    hzc_ws *w;
    w = c.ws;
    if ((st = dec_arrays_need(w, count, &D)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->status, count * lb_words * sizeof(unsigned long long), 0)) !=
            H5ZGPU_OK)
        goto done;
    if (!out_dev && (st = hzc_buf_need(&w->fin, count * raw, 0)) != H5ZGPU_OK)
        goto done;
    for (unsigned i = 0; i < count; i++) {
        const uint64_t len = h[i].payload_len;
        each[i] = len < fl_tables_size(g, (h[i].flags & HZ_FLAG_FILL) != 0) ? H5ZGPU_E_CORRUPT
                                                                               : H5ZGPU_OK;
        most = len > most ? len : most;
        staged += in_dev ? 0 : words8(len);
    }
    if (!in_dev) {   /* the payloads one after another, whole words apart */
        if ((st = hzc_buf_need(&w->in, staged, 0)) != H5ZGPU_OK ||
            (st = hzc_buf_need(&w->host, staged, 1)) != H5ZGPU_OK)
            goto done;
        at = 0;
        for (unsigned i = 0; i < count; i++) {
            moves[i] = (uint8_t *)w->host.p + at;
            lens[i] = h[i].payload_len;
            at += words8(h[i].payload_len);
        }
        if ((st = hzc_copy_host_many(count, moves, pay, lens)) != H5ZGPU_OK)
            goto done;
        CK(cudaMemcpyAsync(w->in.p, w->host.p, staged, cudaMemcpyHostToDevice, c.s),
           "upload of the payloads");
        d_in = (uint8_t *)w->in.p;
    }
    fin = (uint8_t *)w->fin.p;
    at = 0;
    for (unsigned i = 0; i < count; i++) {
        const uint8_t *src = in_dev ? (const uint8_t *)pay[i] : d_in + at;
        at += in_dev ? 0 : words8(h[i].payload_len);
        if (each[i] != H5ZGPU_OK)
            continue;
        fl_dec_job *J = &D.hjobs[k];
        qz_decoder(&J->Q, h[i].mode, h[i].eb_abs, is_f32, h[i].version);
        J->Q.has_fill = (h[i].flags & HZ_FLAG_FILL) != 0;
        J->Q.fill_bits = h[i].fill_bits;
        lin &= qz_linear_v3(&J->Q);
        J->in = src;
        J->len = h[i].payload_len;
        J->out = out_dev ? out[i] : fin + i * raw;
        J->status = (unsigned long long *)w->status.p + k * lb_words;
        D.hspans[k].p = src;
        D.hspans[k].n = h[i].payload_len;
        k++;
    }
    if (k) {
        /* a chunk alone needs no arrays on the device */
        const fl_dec_job *one = k == 1 ? &D.hjobs[0] : NULL;
        if (!one) {
            CK(cudaMemcpyAsync(D.jobs, D.hjobs, k * sizeof(fl_dec_job), cudaMemcpyHostToDevice,
                               c.s),
               "upload of the jobs");
            CK(cudaMemcpyAsync(D.spans, D.hspans, k * sizeof(hzc_span), cudaMemcpyHostToDevice,
                               c.s),
               "upload of the payloads' places");
        }
        CK(cudaMemsetAsync(w->status.p, 0, k * lb_words * sizeof(unsigned long long), c.s),
           "reset of the look-back status");
        CK(cudaMemsetAsync(D.sc, 0, k * sizeof(hzc_scalars), c.s), "reset of the counters");
        /* the checksum pass counts the block headers (the masks' bits) for the decoder */
        if (one)
            CK(hzc_launch_checksum(one->in, one->len, FL_OFF_MASKS / 4, g->ntiles, D.sc, w->sms,
                                   c.s),
               "launch of the checksum kernel");
        else
            CK(hzc_launch_checksum_batch(D.spans, k, most, FL_OFF_MASKS / 4, g->ntiles, D.sc,
                                         w->sms, c.s),
               "launch of the checksum kernel");
        CK(fl_launch_decode(g, is_f32, lin, D.jobs, one, k, D.sc, c.s),
           "launch of the decompression kernel");
        if ((st = hzc_sync_many(&c, D.hsc, D.sc, k)) != H5ZGPU_OK)
            goto done;
    }
    k = 0;
    for (unsigned i = 0; i < count; i++)
        if (each[i] == H5ZGPU_OK) {
            each[i] = D.hsc[k].corrupt ? H5ZGPU_E_CORRUPT : H5ZGPU_OK;
            sum[i] = D.hsc[k].sum;
            k++;
        }
    if (out_dev)
        goto done;

    /* host outputs: through the pinned buffer */
    if ((st = hzc_buf_need(&w->host, count * raw, 1)) != H5ZGPU_OK)
        goto done;
    CK(cudaMemcpyAsync(w->host.p, fin, count * raw, cudaMemcpyDeviceToHost, c.s),
       "download of the values");
    CK(hzc_wait(&c), "download of the values");
    k = 0;
    for (unsigned i = 0; i < count; i++)
        if (each[i] == H5ZGPU_OK) {
            moves[k] = (uint8_t *)w->host.p + i * raw;
            outs[k] = out[i];
            lens[k++] = raw;
        }
    st = hzc_copy_host_many(k, outs, (const void *const *)moves, lens);
done:
    free(moves);
    free(outs);
    free(lens);
    hzc_call_end(&c, st);
    return st;
}

h5zgpu_status hzc_fixed_decode(const fl_geom *g, const hzc_decode_args *a, uint32_t *sum)
{
    h5zgpu_status each;
    h5zgpu_status st = decode_many(g, 1, a->h, (const void *const *)&a->in, a->in_dev, &a->out,
                                   a->out_dev, a->device, a->stream, sum, &each);
    if (st == H5ZGPU_OK && each != H5ZGPU_OK) {
        const uint64_t tables = fl_tables_size(g, (a->h->flags & HZ_FLAG_FILL) != 0);
        st = a->h->payload_len < tables
                 ? hz_fail(H5ZGPU_E_CORRUPT, "fixed-length payload of %llu bytes is shorter "
                                             "than its tables (%llu): the chunk is damaged",
                           (unsigned long long)a->h->payload_len, (unsigned long long)tables)
                 : hz_fail(H5ZGPU_E_CORRUPT, "fixed-length payload is malformed (a length, "
                                             "code or offset is out of range): the chunk is "
                                             "damaged");
    }
    return st;
}

h5zgpu_status hzc_fixed_decode_batch(const fl_geom *g, unsigned count, const hz_header *h,
                                     const void *const *pay, int dev, void *const *out,
                                     int device, uint32_t *sum, h5zgpu_status *each)
{
    return decode_many(g, count, h, pay, dev, out, dev, device, NULL, sum, each);
}
