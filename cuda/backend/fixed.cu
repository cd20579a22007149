/* The fixed-length codec's calls of backend_gpu.h: a chunk's statistics, encoding and assembly,
 * or its checksum and decoding, on one stream, with the results read back once. */
#include "../fixed/stages.h"
#include "workspace.h"

#include <limits.h>

/* The look-back's 62-bit offsets and a 1-D grid of tiles bound the chunks a launch takes. */
#define HZC_MAX_TILES ((uint64_t)INT_MAX)

static h5zgpu_status check_tiles(const fl_geom *g)
{
    if (g->ntiles > HZC_MAX_TILES)
        return hz_fail(H5ZGPU_E_DEVICE, "chunk of %llu tiles is too large for one GPU launch "
                                        "(at most %llu); use smaller chunks",
                       (unsigned long long)g->ntiles, (unsigned long long)HZC_MAX_TILES);
    return H5ZGPU_OK;
}

h5zgpu_status hzc_fixed_encode(const fl_geom *g, const hzc_encode_args *a, hzc_encode_result *r)
{
    hzc_call c;
    qz_quant Q;
    const void *d_in;
    uint8_t *dst;
    const uint64_t n = g->nz * g->ny * g->nx;
    uint64_t tables, paycap;
    uint8_t *out = a->out;
    h5zgpu_status st = check_tiles(g);
    r->held_fill = 0;
    if (st != H5ZGPU_OK)
        return st;
    if ((st = hzc_begin_encode(&c, a, n, &d_in, &Q, r, &out)) != H5ZGPU_OK)
        goto done;
    hzc_ws *w;
    w = c.ws;
    tables = fl_tables_size(g, Q.has_fill);
    paycap = a->cap > tables ? a->cap - tables : 0;

    if ((st = hzc_buf_need(&w->tab, tables + g->nblocks, 0)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->pay, paycap, 0)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->status, 2 * g->ntiles * sizeof(unsigned long long), 0)) != H5ZGPU_OK)
        goto done;
    if (!a->out_dev && (st = hzc_buf_need(&w->fin, a->cap, 0)) != H5ZGPU_OK)
        goto done;
    dst = a->out_dev ? out : (uint8_t *)w->fin.p;
    CK(cudaMemsetAsync(w->status.p, 0, 2 * g->ntiles * sizeof(unsigned long long), c.s),
       "reset of the look-back status");
    CK(cudaMemsetAsync(w->sc, 0, sizeof(hzc_scalars), c.s), "reset of the counters");
    CK(fl_launch_encode(g, &Q, d_in, (uint8_t *)w->tab.p, (uint8_t *)w->pay.p, paycap,
                         (unsigned long long *)w->status.p, w->sc, c.s),
       "launch of the compression kernel");
    CK(fl_launch_assemble((const uint8_t *)w->tab.p, (const uint8_t *)w->pay.p, dst, a->cap, tables,
                           w->sc, w->sms, c.s),
       "launch of the assembly kernel");
    if ((st = hzc_sync_scalars(&c)) != H5ZGPU_OK)
        goto done;
    st = hzc_finish_encode(&c, a, out, dst, tables + w->hsc->nhdr_total + w->hsc->bytes_total,
                           Q.eb, "fixed-length", r);
done:
    hzc_call_end(&c, st);
    return st;
}

h5zgpu_status hzc_fixed_decode(const fl_geom *g, const hzc_decode_args *a, uint32_t *sum)
{
    const int is_f32 = a->h->dtype == H5ZGPU_FLOAT32, has_fill = (a->h->flags & HZ_FLAG_FILL) != 0;
    const uint64_t len = a->h->payload_len;
    hzc_call c;
    qz_quant Q;
    const void *d_in;
    void *d_out;
    const uint64_t n = g->nz * g->ny * g->nx, raw = n * (is_f32 ? 4u : 8u);
    const uint64_t tables = fl_tables_size(g, has_fill);
    h5zgpu_status st = check_tiles(g);
    if (st != H5ZGPU_OK)
        return st;
    if (len < tables)
        return hz_fail(H5ZGPU_E_CORRUPT, "fixed-length payload of %llu bytes is shorter than its "
                                         "tables (%llu): the chunk is damaged",
                       (unsigned long long)len, (unsigned long long)tables);
    /* as the CPU decoder: the bound and version from the header, the anchor from the payload */
    qz_decoder(&Q, a->h->mode, a->h->eb_abs, is_f32, a->h->version);
    Q.has_fill = has_fill;
    Q.fill_bits = a->h->fill_bits;
    if ((st = hzc_call_begin(&c, a->device, a->stream)) != H5ZGPU_OK)
        goto done;
    hzc_ws *w;
    w = c.ws;
    if ((st = hzc_stage_in(&c, a->in, a->in_dev, len, &d_in)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->status, 2 * g->ntiles * sizeof(unsigned long long), 0)) != H5ZGPU_OK)
        goto done;
    if (!a->out_dev && (st = hzc_buf_need(&w->fin, raw, 0)) != H5ZGPU_OK)
        goto done;
    d_out = a->out_dev ? a->out : w->fin.p;
    CK(cudaMemsetAsync(w->status.p, 0, 2 * g->ntiles * sizeof(unsigned long long), c.s),
       "reset of the look-back status");
    /* the checksum pass counts the block headers (the masks' bits) for the decoder */
    if ((st = hzc_payload_sum(&c, d_in, len, FL_OFF_MASKS / 4, g->ntiles)) != H5ZGPU_OK)
        goto done;
    CK(fl_launch_decode(g, &Q, (const uint8_t *)d_in, len, d_out,
                         (unsigned long long *)w->status.p, w->sc, c.s),
       "launch of the decompression kernel");
    st = hzc_finish_decode(&c, a, d_out, raw, "fixed-length payload is malformed (a length, "
                                              "code or offset is out of range)", sum);
done:
    hzc_call_end(&c, st);
    return st;
}
