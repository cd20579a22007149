/* The Huffman codec's calls of backend_gpu.h: the statistics, then the encoding pipeline into
 * the workspace (copied out only when it fits); or the payload's head parsed and the decoder
 * table built on the host (hf_parse), then the decoding pipeline. */
#include "../huffman/stages.h"
#include "huff_axes.h"
#include "workspace.h"

#include <stdlib.h>
#include <string.h>

extern "C" {
#include "huff.h"
}

#define HF_TABLE_ENTRIES (1u << HF_MAX_LEN)   /* the Huffman decoder table */

/* Rounds a byte count up to whole 8-byte words, to lay arrays one after another. */
static uint64_t words8(uint64_t n)
{
    return (n + 7) & ~(uint64_t)7;
}

/* The stages of an encoding just run, as hf_encode_traced records them (tests). */
static h5zgpu_status read_trace(const hf_geom *g, const hf_enc_bufs *b, hf_trace *T)
{
    h5zgpu_status st = H5ZGPU_OK;
    hf_enc_plan *P = (hf_enc_plan *)malloc(sizeof *P);
    if (!P)
        return hz_fail(H5ZGPU_E_NOMEM, "no host memory for a trace");
    CK(cudaMemcpy(P, b->plan, sizeof *P, cudaMemcpyDeviceToHost), "download of the plan");
    if (T->subbits && !P->too_small && P->form != HF_FORM_ANS)
        CK(cudaMemcpy(T->subbits, b->subbits, g->nsub * sizeof *T->subbits,
                      cudaMemcpyDeviceToHost),
           "download of the sub-chunk lengths");
    memcpy(T->cost, P->cost, sizeof T->cost);
    T->pred = P->pred;
    T->axes = b->axes;
    T->n_out = P->n_out;
    T->n_verb = P->n_verb;
    for (unsigned t = 0; t < HF_MAX_SYMS; t++)
        T->hist[t] = P->hist[t];
    T->form = P->form;
    /* the payload's run token, as the CPU records it */
    T->rs = P->form == HF_FORM_RUNS || P->form == HF_FORM_ANS ? P->rs : 0;
    memcpy(T->len, P->len, sizeof T->len);
    T->size = P->size;
done:
    free(P);
    return st;
}

/* The ANS form's device state in w->ans: its plan, the axis costs, each element's table entry,
 * then each sub-chunk's words (a 16-byte aligned row each), word count, first word and place
 * among the busy ones, and each group's place. */
static h5zgpu_status ans_bufs(hzc_ws *w, const hf_geom *g, hf_enc_bufs *b,
                              unsigned long long **cost)
{
    const uint64_t nsub = hf_ans_nsub(g->n), plan = (sizeof(hf_ans_plan) + 15) & ~(uint64_t)15;
    const uint64_t words = 2 * nsub * HF_ANS_SCRATCH, four = words8(4 * nsub);
    const uint64_t keys = (2 * (g->n + 8) + 15) & ~(uint64_t)15;
    h5zgpu_status st =
        hzc_buf_need(&w->ans, plan + 64 + keys + words + 3 * four + 8 * nsub, 0);
    if (st != H5ZGPU_OK)
        return st;
    uint8_t *p = (uint8_t *)w->ans.p;
    b->ans = (hf_ans_plan *)p;
    *cost = (unsigned long long *)(p + plan);
    b->ans_key = (uint16_t *)(p + plan + 64);
    p += keys;
    b->ans_words = (uint16_t *)(p + plan + 64);
    b->ans_nwords = (uint32_t *)(p + plan + 64 + words);
    b->ans_bidx = (uint32_t *)(p + plan + 64 + words + four);
    b->ans_gidx = (uint32_t *)(p + plan + 64 + words + 2 * four);
    b->ans_woff = (uint64_t *)(p + plan + 64 + words + 3 * four);
    return H5ZGPU_OK;
}

/* The axis order of the chunk g0 at *d_in: its costs on the device, the choice on the host (one
 * synchronisation), and when it permutes, the coded array in w->coded (then *d_in) and its
 * geometry in *g. */
static h5zgpu_status choose_axes(hzc_call *c, const hf_geom *g0, const qz_quant *Q,
                                 unsigned long long *cost, hf_trace *T, const void **d_in,
                                 unsigned *axes, hf_geom *g)
{
    h5zgpu_status st = H5ZGPU_OK;
    unsigned long long hc[6] = {0};
    *axes = 0;
    *g = *g0;
    if (g0->dim == 3 && !Q->pwrel) {
        /* read back through pinned memory: a copy to pageable memory would wait by itself */
        if ((st = hzc_buf_need(&c->ws->hhead, sizeof hc, 1)) != H5ZGPU_OK)
            return st;
        CK(hf_axes_launch_cost(g0, Q, *d_in, cost, c->s), "launch of the axis costs");
        CK(cudaMemcpyAsync(c->ws->hhead.p, cost, sizeof hc, cudaMemcpyDeviceToHost, c->s),
           "download of the axis costs");
        CK(hzc_wait(c), "the axis costs");
        memcpy(hc, c->ws->hhead.p, sizeof hc);
        *axes = hf_axes_choose(hc, hc + 3);
    }
    if (T)
        memcpy(T->axes_cost, hc, sizeof T->axes_cost);
    if (!*axes)
        return H5ZGPU_OK;
    hf_axes_geom(g0, *axes, g);
    if ((st = hzc_buf_need(&c->ws->coded, g0->n * (Q->is_f32 ? 4u : 8u), 0)) != H5ZGPU_OK)
        return st;
    CK(hf_axes_launch_copy(g0, *axes, Q->is_f32, 1, *d_in, c->ws->coded.p, c->ws->sms, c->s),
       "launch of the axis order's copy");
    *d_in = c->ws->coded.p;
done:
    return st;
}

/* The payload is assembled in the workspace and copied out only when it fits cap, so a payload
 * that does not fit leaves out as it was (auto on the device keeps the fixed-length one). */
h5zgpu_status hzc_huff_encode(const hf_geom *g0, const hzc_encode_args *a,
                              hzc_encode_result *r)
{
    hzc_call c;
    qz_quant Q;
    const void *d_in;
    hf_enc_bufs b;
    hf_geom cg;
    const hf_geom *g = &cg;
    unsigned long long *cost;
    const unsigned esize = a->is_f32 ? 4u : 8u;
    uint64_t rec_bytes, sub_bytes;
    uint8_t *out = a->out;
    h5zgpu_status st;
    if ((st = hzc_begin_encode(&c, a, g0->n, &d_in, &Q, r, &out)) != H5ZGPU_OK)
        goto done;
    hzc_ws *w;
    w = c.ws;
    if ((st = ans_bufs(w, g0, &b, &cost)) != H5ZGPU_OK ||
        (st = choose_axes(&c, g0, &Q, cost, a->trace, &d_in, &b.axes, &cg)) != H5ZGPU_OK)
        goto done;

    /* outliers and verbatim values beyond what cap could hold are not kept */
    b.kmax_out = a->cap / 8;
    b.kmax_verb = a->cap / (4 + esize);
    rec_bytes = words8(8 * b.kmax_out) + words8(4 * b.kmax_verb) + 8 * b.kmax_verb;
    sub_bytes = 4 * g->nsub;
    /* tokens, then int32 arrays: interpolation's codes, its deltas, its even lattice's deltas */
    if ((st = hzc_buf_need(&w->tok, words8(2 * (g->n + 8)) + 8 * g->n + 4 * hf_ip_even_count(g),
                           0)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->rec, rec_bytes, 0)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->sub, sub_bytes, 0)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->plan, sizeof(hf_enc_plan), 0)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->status, (2 * g->ntiles + g->nsub) * sizeof(unsigned long long),
                           0)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->fin, a->cap, 0)) != H5ZGPU_OK)
        goto done;
    b.tok = (uint16_t *)w->tok.p;
    b.ip_u = (int32_t *)((uint8_t *)w->tok.p + words8(2 * (g->n + 8)));
    b.ip_delta = b.ip_u + g->n;
    b.ip_delta2 = b.ip_delta + g->n;
    b.verb_bits = (uint64_t *)w->rec.p;
    b.out_pos = (uint32_t *)((uint8_t *)w->rec.p + 8 * b.kmax_verb);
    b.out_delta = (int32_t *)(b.out_pos + b.kmax_out);
    b.verb_pos = (uint32_t *)((uint8_t *)b.out_pos + words8(8 * b.kmax_out));
    b.subbits = (uint32_t *)w->sub.p;
    b.status = (unsigned long long *)w->status.p;
    b.suboff = (uint64_t *)(b.status + 2 * g->ntiles);   /* after the tiles' words */
    b.plan = (hf_enc_plan *)w->plan.p;
    b.dst = (uint8_t *)w->fin.p;
    b.cap = a->cap;
    b.tok_copy = a->trace ? a->trace->tok : NULL;
    CK(cudaMemsetAsync(w->sc, 0, sizeof(hzc_scalars), c.s), "reset of the counters");
    CK(hzc_huff_launch_encode(g, &Q, a->radius, d_in, &b, w->sc, w->sms, c.s),
       "launch of the Huffman compression kernels");
    if ((st = hzc_sync_scalars(&c)) != H5ZGPU_OK)
        goto done;
    if (a->trace && (st = read_trace(g, &b, a->trace)) != H5ZGPU_OK)
        goto done;
    st = hzc_finish_encode(&c, a, out, b.dst, w->hsc->bytes_total, Q.eb, "Huffman", r);
done:
    hzc_call_end(&c, st);
    return st;
}

/* The ANS form's tables for the device: packed entries of every table (zero past its tokens)
 * in the pinned host, uploaded into w->ans with room for the buckets and offsets. */
static h5zgpu_status ans_upload(hzc_call *c, const hf_geom *g, const hf_layout *L,
                                const hf_ans_tabs *A, hf_ans_dec *d)
{
    hzc_ws *w = c->ws;
    const unsigned span = 2 * L->radius;
    const uint64_t fc_bytes = words8(4ull * A->ntab * span);
    const uint64_t bucket_bytes = words8(2ull * A->ntab * HF_ANS_BUCKETS);
    h5zgpu_status st;
    if ((st = hzc_buf_need(&w->ans, fc_bytes + bucket_bytes + 8 * (hf_ans_nsub(g->n) + 1), 0)) !=
            H5ZGPU_OK ||
        (st = hzc_buf_need(&w->htab, fc_bytes, 1)) != H5ZGPU_OK)
        return st;
    uint32_t *h = (uint32_t *)w->htab.p;
    d->ntab = A->ntab;
    d->span = span;
    for (unsigned b = 0; b < A->ntab; b++) {
        d->m[b] = A->m[b];
        for (unsigned t = 0; t < span; t++)
            h[b * span + t] = t < A->m[b] ? A->freq[b][t] | A->cum[b][t] << 16 : 0u;
    }
    uint8_t *p = (uint8_t *)w->ans.p;
    d->fc = (const uint32_t *)p;
    d->bucket = (uint16_t *)(p + fc_bytes);
    d->woff = (uint64_t *)(p + fc_bytes + bucket_bytes);
    CK(cudaMemcpyAsync(p, h, 4ull * A->ntab * span, cudaMemcpyHostToDevice, c->s),
       "upload of the ANS tables");
done:
    return st;
}

h5zgpu_status hzc_huff_decode(const hf_geom *g0, const hzc_decode_args *a, uint32_t *sum)
{
    const int is_f32 = a->h->dtype == H5ZGPU_FLOAT32;
    const uint64_t len = a->h->payload_len;
    hzc_call c;
    qz_quant Q;
    hf_layout L;
    hf_geom cg;
    const hf_geom *g = &cg;
    unsigned axes = 0;
    hf_ans_dec ad;
    const void *d_in;
    void *d_out, *d_coded;
    /* the head: the fixed part and a codebook, or the ANS form's tables (up to 61 KiB) */
    uint8_t *head;
    hf_ans_tabs *A;
    const unsigned esize = is_f32 ? 4u : 8u;
    const uint64_t raw = g0->n * esize, nhead = len < HF_HEAD_MAX ? len : HF_HEAD_MAX;
    const uint64_t htab = 4ull * HF_ANS_TABLES * 2 * HF_RADIUS_MAX;   /* the larger use */
    uint16_t *table;
    h5zgpu_status st;
    /* as the CPU decoder: the bound and version from the header, the anchor from the payload */
    qz_decoder(&Q, a->h->mode, a->h->eb_abs, is_f32, a->h->version);
    Q.has_fill = (a->h->flags & HZ_FLAG_FILL) != 0;
    Q.fill_bits = a->h->fill_bits;
    if ((st = hzc_call_begin(&c, a->device, a->stream)) != H5ZGPU_OK)
        goto done;
    hzc_ws *w;
    w = c.ws;
    /* pinned and kept with the workspace (a call's host allocations of a quarter MiB cost
     * more than decoding a small chunk): the upload below is asynchronous, and the next call
     * on this workspace comes after this one's last synchronisation */
    if ((st = hzc_buf_need(&w->htab, htab, 1)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->hhead, words8(HF_HEAD_MAX) + sizeof *A, 1)) != H5ZGPU_OK)
        goto done;
    table = (uint16_t *)w->htab.p;
    head = (uint8_t *)w->hhead.p;
    A = (hf_ans_tabs *)(head + words8(HF_HEAD_MAX));
    if (a->in_dev) {
        CK(cudaMemcpyAsync(head, a->in, nhead, cudaMemcpyDeviceToHost, c.s),
           "download of the payload's head");
        CK(hzc_wait(&c), "download of the payload's head");
    } else {
        memcpy(head, a->in, nhead);
    }
    if ((st = hf_payload_axes(g0, a->h->version, head, len, &axes, &cg)) != H5ZGPU_OK ||
        (st = hf_parse(g, a->h->version, esize, head, nhead, len, &L, table, A)) != H5ZGPU_OK)
        goto done;
    if (!qz_get_anchor(head, &Q)) {
        st = hz_fail(H5ZGPU_E_CORRUPT, "Huffman payload is malformed (base or code offset out of "
                                       "range): the chunk is damaged");
        goto done;
    }
    /* the kernels read the a->stream a 32-bit word at a time */
    if (a->in_dev && ((uintptr_t)a->in & 3u)) {
        if ((st = hzc_buf_need(&w->in, len, 0)) != H5ZGPU_OK)
            goto done;
        CK(cudaMemcpyAsync(w->in.p, a->in, len, cudaMemcpyDeviceToDevice, c.s),
           "alignment of the payload");
        d_in = w->in.p;
    } else if ((st = hzc_stage_in(&c, a->in, a->in_dev, len, &d_in)) != H5ZGPU_OK) {
        goto done;
    }
    /* the deltas, and for interpolation its codes after them */
    if ((st = hzc_buf_need(&w->tok, (L.order == HF_PRED_INTERP ? 8 : 4) * g->n, 0)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->sub, 8 * (g->nsub + 1), 0)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->plan, sizeof(uint16_t) * HF_TABLE_ENTRIES, 0)) != H5ZGPU_OK)
        goto done;
    if (!a->out_dev && (st = hzc_buf_need(&w->fin, raw, 0)) != H5ZGPU_OK)
        goto done;
    if (axes && (st = hzc_buf_need(&w->coded, raw, 0)) != H5ZGPU_OK)
        goto done;
    d_out = a->out_dev ? a->out : w->fin.p;
    d_coded = axes ? w->coded.p : d_out;   /* the coded array, then the chunk's order */
    if (L.form == HF_FORM_ANS) {
        if ((st = ans_upload(&c, g, &L, A, &ad)) != H5ZGPU_OK)
            goto done;
    } else {
        CK(cudaMemcpyAsync(w->plan.p, table, sizeof(uint16_t) * HF_TABLE_ENTRIES,
                           cudaMemcpyHostToDevice, c.s),
           "upload of the decoder table");
    }
    if ((st = hzc_payload_sum(&c, d_in, len, 0, 0)) != H5ZGPU_OK)
        goto done;
    CK(hzc_huff_launch_decode(g, &Q, &L, (const uint8_t *)d_in, len,
                              (const uint16_t *)w->plan.p, &ad, (int32_t *)w->tok.p,
                              (uint64_t *)w->sub.p, d_coded, w->sc, w->sms, c.s),
       "launch of the Huffman decompression kernels");
    if (axes)
        CK(hf_axes_launch_copy(g0, axes, is_f32, 0, d_coded, d_out, w->sms, c.s),
           "launch of the axis order's copy back");
    st = hzc_finish_decode(&c, a, d_out, raw, "Huffman payload is malformed (a code, length or "
                                              "position is invalid)", sum);
done:
    hzc_call_end(&c, st);
    return st;
}
