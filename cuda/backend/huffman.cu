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
#include "parallel.h"
#include "scratch.h"
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

/* The ANS form's device state but its plan: each element's table entry, then each
 * sub-chunk's words (a 16-byte aligned row each), word count, first word and place among the
 * busy ones, and each group's place; laid out from p by ans_rest_at. */
static uint64_t ans_rest_bytes(const hf_geom *g)
{
    const uint64_t nsub = hf_ans_nsub(g->n), four = words8(4 * nsub);
    const uint64_t keys = (2 * (g->n + 8) + 15) & ~(uint64_t)15;
    return keys + 2 * nsub * HF_ANS_SCRATCH + 3 * four + 8 * nsub;
}

static void ans_rest_at(uint8_t *p, const hf_geom *g, hf_enc_bufs *b)
{
    const uint64_t nsub = hf_ans_nsub(g->n), four = words8(4 * nsub);
    const uint64_t keys = (2 * (g->n + 8) + 15) & ~(uint64_t)15, words = 2 * nsub * HF_ANS_SCRATCH;
    b->ans_key = (uint16_t *)p;
    b->ans_words = (uint16_t *)(p + keys);
    b->ans_nwords = (uint32_t *)(p + keys + words);
    b->ans_bidx = (uint32_t *)(p + keys + words + four);
    b->ans_gidx = (uint32_t *)(p + keys + words + 2 * four);
    b->ans_woff = (uint64_t *)(p + keys + words + 3 * four);
}

#define ANS_PLAN_BYTES ((sizeof(hf_ans_plan) + 15) & ~(uint64_t)15)

/* The ANS form's device state in w->ans: its plan, the axis costs, then the rest
 * (ans_rest_at). */
static h5zgpu_status ans_bufs(hzc_ws *w, const hf_geom *g, hf_enc_bufs *b,
                              unsigned long long **cost)
{
    h5zgpu_status st = hzc_buf_need(&w->ans, ANS_PLAN_BYTES + 64 + ans_rest_bytes(g), 0);
    if (st != H5ZGPU_OK)
        return st;
    uint8_t *p = (uint8_t *)w->ans.p;
    b->ans = (hf_ans_plan *)p;
    *cost = (unsigned long long *)(p + ANS_PLAN_BYTES);
    ans_rest_at(p + ANS_PLAN_BYTES + 64, g, b);
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

/* An encoding's device buffers but the ANS form's, by kind: the tokens, then int32 arrays (the
 * interpolation's codes, its deltas, its even lattice's deltas); the outlier and verbatim lists,
 * as long as cap could hold; each sub-chunk's bits; the plan; the tiles' look-back words, then
 * each sub-chunk's first bit. */
enum { ENC_TOK, ENC_REC, ENC_SUB, ENC_PLAN, ENC_STATUS, ENC_KINDS };

static void enc_sizes(const hf_geom *g, uint64_t cap, unsigned esize, uint64_t size[ENC_KINDS])
{
    const uint64_t kmax_out = cap / 8, kmax_verb = cap / (4 + esize);
    size[ENC_TOK] = words8(2 * (g->n + 8)) + 8 * g->n + 4 * hf_ip_even_count(g);
    size[ENC_REC] = words8(8 * kmax_out) + words8(4 * kmax_verb) + 8 * kmax_verb;
    size[ENC_SUB] = 4 * g->nsub;
    size[ENC_PLAN] = sizeof(hf_enc_plan);
    size[ENC_STATUS] = (2 * g->ntiles + g->nsub) * sizeof(unsigned long long);
}

/* b's buffers of those kinds at at[kind]. */
static void enc_bufs_at(hf_enc_bufs *b, const hf_geom *g, uint64_t cap, unsigned esize,
                        uint8_t *const at[ENC_KINDS])
{
    /* outliers and verbatim values beyond what cap could hold are not kept */
    b->kmax_out = cap / 8;
    b->kmax_verb = cap / (4 + esize);
    b->tok = (uint16_t *)at[ENC_TOK];
    b->ip_u = (int32_t *)(at[ENC_TOK] + words8(2 * (g->n + 8)));
    b->ip_delta = b->ip_u + g->n;
    b->ip_delta2 = b->ip_delta + g->n;
    b->verb_bits = (uint64_t *)at[ENC_REC];
    b->out_pos = (uint32_t *)(at[ENC_REC] + 8 * b->kmax_verb);
    b->out_delta = (int32_t *)(b->out_pos + b->kmax_out);
    b->verb_pos = (uint32_t *)((uint8_t *)b->out_pos + words8(8 * b->kmax_out));
    b->subbits = (uint32_t *)at[ENC_SUB];
    b->plan = (hf_enc_plan *)at[ENC_PLAN];
    b->status = (unsigned long long *)at[ENC_STATUS];
    b->suboff = (uint64_t *)(b->status + 2 * g->ntiles);   /* after the tiles' words */
    b->cap = cap;
}

/* The workspace's side stream and events, for the encoder's stages that run beside others. */
static hzc_side side_of(const hzc_ws *w)
{
    const hzc_side side = {w->side, w->fork, w->join};
    return side;
}

/* The payload is assembled in the workspace and copied out only when it fits cap, so a payload
 * that does not fit leaves out as it was (auto on the device keeps the fixed-length one). */
h5zgpu_status hzc_huff_encode(const hf_geom *g0, const hzc_encode_args *a,
                              hzc_encode_result *r)
{
    hzc_call c;
    hzc_side side;
    qz_quant Q;
    const void *d_in;
    hf_enc_bufs b;
    hf_geom cg;
    const hf_geom *g = &cg;
    unsigned long long *cost;
    const unsigned esize = a->is_f32 ? 4u : 8u;
    uint64_t size[ENC_KINDS];
    uint8_t *out = a->out;
    h5zgpu_status st;
    if ((st = hzc_begin_encode(&c, a, g0->n, &d_in, &Q, r, &out)) != H5ZGPU_OK)
        goto done;
    hzc_ws *w;
    w = c.ws;
    side = side_of(w);
    if ((st = ans_bufs(w, g0, &b, &cost)) != H5ZGPU_OK ||
        (st = choose_axes(&c, g0, &Q, cost, a->trace, &d_in, &b.axes, &cg)) != H5ZGPU_OK)
        goto done;
    enc_sizes(g, a->cap, esize, size);
    if ((st = hzc_buf_need(&w->tok, size[ENC_TOK], 0)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->rec, size[ENC_REC], 0)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->sub, size[ENC_SUB], 0)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->plan, size[ENC_PLAN], 0)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->status, size[ENC_STATUS], 0)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->fin, a->cap, 0)) != H5ZGPU_OK)
        goto done;
    {
        uint8_t *const at[ENC_KINDS] = {(uint8_t *)w->tok.p, (uint8_t *)w->rec.p,
                                        (uint8_t *)w->sub.p, (uint8_t *)w->plan.p,
                                        (uint8_t *)w->status.p};
        enc_bufs_at(&b, g, a->cap, esize, at);
    }
    b.dst = (uint8_t *)w->fin.p;
    b.tok_copy = a->trace ? a->trace->tok : NULL;
    CK(cudaMemsetAsync(w->sc, 0, sizeof(hzc_scalars), c.s), "reset of the counters");
    CK(hzc_huff_launch_encode(g, &Q, a->radius, d_in, &b, w->sc, w->sms, c.s, &side),
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

/* Rounds a byte count up to whole 16-byte rows, to lay a batch's chunks one after another. */
static uint64_t rows16(uint64_t n)
{
    return (n + 15) & ~(uint64_t)15;
}

/* A batch's per-chunk arrays in the workspace, on the device and pinned on the host in the same
 * layout: each chunk's encoding arguments, quantiser, values, counters and axis costs. */
typedef struct batch_arrays {
    hf_enc_args *args, *hargs;
    qz_quant *Qs, *hQs;
    const void **ins, **hins;
    hzc_scalars *sc, *hsc;
    unsigned long long *cost, *hcost;
    hf_axes_job *copies, *hcopies;
} batch_arrays;

static h5zgpu_status batch_arrays_need(hzc_ws *w, unsigned count, batch_arrays *B)
{
    const uint64_t item[6] = {sizeof(hf_enc_args), sizeof(qz_quant), sizeof(void *),
                              sizeof(hzc_scalars), 6 * sizeof(unsigned long long),
                              sizeof(hf_axes_job)};
    void *d[6], *h[6];
    const h5zgpu_status st = hzc_job_arrays(w, count, 6, item, d, h);
    if (st != H5ZGPU_OK)
        return st;
    B->args = (hf_enc_args *)d[0], B->hargs = (hf_enc_args *)h[0];
    B->Qs = (qz_quant *)d[1], B->hQs = (qz_quant *)h[1];
    B->ins = (const void **)d[2], B->hins = (const void **)h[2];
    B->sc = (hzc_scalars *)d[3], B->hsc = (hzc_scalars *)h[3];
    B->cost = (unsigned long long *)d[4], B->hcost = (unsigned long long *)h[4];
    B->copies = (hf_axes_job *)d[5], B->hcopies = (hf_axes_job *)h[5];
    return H5ZGPU_OK;
}

/* The axis order of each chunk (0 where the chunk is not 3-D or the bound is PWREL's): their
 * costs in one launch, one synchronisation, the choices on the host. */
static h5zgpu_status batch_axes(hzc_call *c, const hf_geom *g0, const hzc_encode_args *a,
                                unsigned count, const batch_arrays *B, unsigned *axes)
{
    h5zgpu_status st = H5ZGPU_OK;
    for (unsigned i = 0; i < count; i++)
        axes[i] = 0;
    if (g0->dim != 3 || a->mode == H5ZGPU_MODE_PWREL)
        return H5ZGPU_OK;
    CK(cudaMemcpyAsync(B->Qs, B->hQs, count * sizeof(qz_quant), cudaMemcpyHostToDevice, c->s),
       "upload of the quantisers");
    CK(hf_axes_launch_cost_many(g0, &B->hQs[0], B->Qs, B->ins, count, B->cost, c->s),
       "launch of the axis costs");
    CK(cudaMemcpyAsync(B->hcost, B->cost, count * 6 * sizeof(unsigned long long),
                       cudaMemcpyDeviceToHost, c->s),
       "download of the axis costs");
    CK(hzc_wait(c), "the axis costs");
    for (unsigned i = 0; i < count; i++)
        axes[i] = hf_axes_choose(B->hcost + 6 * i, B->hcost + 6 * i + 3);
done:
    return st;
}

static int same_shape(const hf_geom *x, const hf_geom *y)
{
    return x->nz == y->nz && x->ny == y->ny && x->nx == y->nx;
}

/* Chunk i's values at in[i] and payload to out[i] (4-aligned; a->fill_shift further, also
 * 4-aligned, when it holds fill), both in device memory; a gives the rest, alike for all. The
 * statistics of every chunk, one synchronisation, their quantisers on the host; their axis
 * orders (batch_axes) and the permuted copies; then the encodings of each coded shape's chunks
 * in one pass of launches (a grid layer a chunk, hzc_huff_launch_encode_many), and one more
 * synchronisation. The same bytes as hzc_huff_encode, each payload written where it fits cap
 * (each[i] H5ZGPU_OK), else nothing (H5ZGPU_E_OUTPUT_TOO_SMALL). */
h5zgpu_status hzc_huff_encode_batch(const hf_geom *g0, const hzc_encode_args *a, unsigned count,
                                    const void *const *in, uint8_t *const *out,
                                    hzc_encode_result *r, h5zgpu_status *each)
{
    hzc_call c;
    hzc_side side;
    batch_arrays B;
    const unsigned esize = a->is_f32 ? 4u : 8u;
    const uint64_t raw = g0->n * esize, rest = rows16(ans_rest_bytes(g0));
    uint64_t stride[ENC_KINDS] = {0}, size[ENC_KINDS];
    unsigned *axes = (unsigned *)malloc(count * sizeof *axes);
    unsigned *order = (unsigned *)malloc(count * sizeof *order);
    hf_geom *cg = (hf_geom *)malloc(count * sizeof *cg);
    int any_axes = 0;
    uint8_t *coded = NULL, *ans;
    h5zgpu_status st = H5ZGPU_OK;
    c.ws = NULL;
    c.prev_device = -1;
    if (!axes || !order || !cg) {
        st = hz_fail(H5ZGPU_E_NOMEM, "no host memory for a batch of %u chunks", count);
        goto done;
    }
    if ((st = hzc_call_begin(&c, a->device, a->stream)) != H5ZGPU_OK)
        goto done;
    hzc_ws *w;
    w = c.ws;
    side = side_of(w);
    if ((st = batch_arrays_need(w, count, &B)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->part, count * sizeof(hzc_minmax) * HZC_STATS_CTAS, 0)) !=
            H5ZGPU_OK)
        goto done;

    /* statistics: the quantisers */
    for (unsigned i = 0; i < count; i++)
        B.hins[i] = in[i];
    CK(cudaMemcpyAsync(B.ins, B.hins, count * sizeof(void *), cudaMemcpyHostToDevice, c.s),
       "upload of the inputs' places");
    CK(cudaMemsetAsync(B.sc, 0, count * sizeof(hzc_scalars), c.s), "reset of the counters");
    CK(hzc_launch_stats_batch(B.ins, count, g0->n, a->is_f32, a->mode == H5ZGPU_MODE_PWREL,
                              a->has_fill, a->fill_bits, (hzc_minmax *)w->part.p, B.sc, w->sms,
                              c.s),
       "launch of the statistics kernel");
    if ((st = hzc_sync_many(&c, B.hsc, B.sc, count)) != H5ZGPU_OK)
        goto done;
    for (unsigned i = 0; i < count; i++) {
        hzc_quant_from(&B.hsc[i], a, &B.hQs[i]);
        r[i].held_fill = B.hQs[i].has_fill;
        r[i].fill_bits = B.hQs[i].fill_bits;
    }

    /* the axis orders, the coded arrays' shapes and the buffers, the largest a chunk needs */
    if ((st = batch_axes(&c, g0, a, count, &B, axes)) != H5ZGPU_OK)
        goto done;
    for (unsigned i = 0; i < count; i++) {
        cg[i] = *g0;
        if (axes[i])
            hf_axes_geom(g0, axes[i], &cg[i]);
        any_axes |= axes[i] != 0;
        enc_sizes(&cg[i], a->cap, esize, size);
        for (int k = 0; k < ENC_KINDS; k++)
            stride[k] = rows16(size[k]) > stride[k] ? rows16(size[k]) : stride[k];
    }
    if ((st = hzc_buf_need(&w->tok, count * stride[ENC_TOK], 0)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->rec, count * stride[ENC_REC], 0)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->sub, count * stride[ENC_SUB], 0)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->plan, count * stride[ENC_PLAN], 0)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->status, count * stride[ENC_STATUS], 0)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->ans, count * (ANS_PLAN_BYTES + rest), 0)) != H5ZGPU_OK ||
        (any_axes && (st = hzc_buf_need(&w->coded, count * raw, 0)) != H5ZGPU_OK))
        goto done;
    coded = (uint8_t *)w->coded.p;
    ans = (uint8_t *)w->ans.p;   /* the chunks' ANS plans, then the rest of their state */
    {   /* the permuted copies, one launch */
        unsigned ncopy = 0;
        for (unsigned i = 0; i < count; i++)
            if (axes[i])
                B.hcopies[ncopy++] = hf_axes_job{in[i], coded + i * raw, axes[i]};
        if (ncopy)
            CK(cudaMemcpyAsync(B.copies, B.hcopies, ncopy * sizeof(hf_axes_job),
                               cudaMemcpyHostToDevice, c.s),
               "upload of the axis order's copies");
        CK(hf_axes_launch_copy_many(g0, B.hcopies, B.copies, ncopy, a->is_f32, 1, w->sms, c.s),
           "launch of the axis order's copies");
    }

    /* the chunks grouped by coded shape (in the order the shapes first come), each group's
     * arguments side by side */
    for (unsigned i = 0, placed = 0; i < count; i++) {
        int seen = 0;
        for (unsigned j = 0; j < i && !seen; j++)
            seen = same_shape(&cg[j], &cg[i]);
        for (unsigned j = i; j < count && !seen; j++)
            if (same_shape(&cg[j], &cg[i]))
                order[placed++] = j;
    }
    for (unsigned j = 0; j < count; j++) {
        const unsigned i = order[j];
        hf_enc_args *e = &B.hargs[j];
        uint8_t *const at[ENC_KINDS] = {
            (uint8_t *)w->tok.p + i * stride[ENC_TOK], (uint8_t *)w->rec.p + i * stride[ENC_REC],
            (uint8_t *)w->sub.p + i * stride[ENC_SUB], (uint8_t *)w->plan.p + i * stride[ENC_PLAN],
            (uint8_t *)w->status.p + i * stride[ENC_STATUS]};
        memset(e, 0, sizeof *e);
        e->g = cg[i];
        e->Q = B.hQs[i];
        e->R = a->radius;
        e->in = axes[i] ? (const void *)(coded + i * raw) : in[i];
        enc_bufs_at(&e->b, &cg[i], a->cap, esize, at);
        e->b.ans = (hf_ans_plan *)(ans + i * ANS_PLAN_BYTES);
        ans_rest_at(ans + count * ANS_PLAN_BYTES + i * rest, &cg[i], &e->b);
        e->b.axes = axes[i];
        e->b.dst = out[i] + (e->Q.has_fill ? a->fill_shift : 0);
        e->sc = B.sc + i;
        e->count = 1;
    }
    CK(cudaMemcpyAsync(B.args, B.hargs, count * sizeof(hf_enc_args), cudaMemcpyHostToDevice, c.s),
       "upload of the chunks' arguments");
    CK(cudaMemsetAsync(w->plan.p, 0, count * stride[ENC_PLAN], c.s), "reset of the plans");
    CK(cudaMemsetAsync(w->status.p, 0, count * stride[ENC_STATUS], c.s),
       "reset of the look-back status");
    CK(cudaMemsetAsync(ans, 0, count * ANS_PLAN_BYTES, c.s), "reset of the ANS counts");
    CK(cudaMemsetAsync(B.sc, 0, count * sizeof(hzc_scalars), c.s), "reset of the counters");
    for (unsigned j = 0, k; j < count; j += k) {   /* a launch pass a coded shape */
        for (k = 1; j + k < count && same_shape(&cg[order[j + k]], &cg[order[j]]); k++)
            ;
        hf_enc_args first = B.hargs[j];
        first.many = B.args + j;
        first.count = k;
        CK(hzc_huff_launch_encode_many(&first, w->sms, c.s, &side),
           "launch of the Huffman compression kernels");
    }
    if ((st = hzc_sync_many(&c, B.hsc, B.sc, count)) != H5ZGPU_OK)
        goto done;
    for (unsigned i = 0; i < count; i++) {
        r[i].len = B.hsc[i].bytes_total;
        r[i].eb_abs = B.hQs[i].eb;
        r[i].sum = B.hsc[i].sum;
        each[i] = r[i].len > a->cap ? H5ZGPU_E_OUTPUT_TOO_SMALL : H5ZGPU_OK;
    }
done:
    hzc_call_end(&c, st);
    free(axes);
    free(order);
    free(cg);
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
    hf_ans_dec ad = {};
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

/* A batch decoding's per-chunk arrays in the workspace (device, and pinned on the host in the
 * same layout): each grouped chunk's arguments, its payload's span (the checksum pass), its
 * counters and its axis order's copy. */
typedef struct dec_batch_arrays {
    hf_dec_args *args, *hargs;
    hzc_span *spans, *hspans;
    hzc_scalars *sc, *hsc;
    hf_axes_job *copies, *hcopies;
} dec_batch_arrays;

static h5zgpu_status dec_batch_arrays_need(hzc_ws *w, unsigned count, dec_batch_arrays *B)
{
    const uint64_t item[4] = {sizeof(hf_dec_args), sizeof(hzc_span), sizeof(hzc_scalars),
                              sizeof(hf_axes_job)};
    void *d[4], *h[4];
    const h5zgpu_status st = hzc_job_arrays(w, count, 4, item, d, h);
    if (st != H5ZGPU_OK)
        return st;
    B->args = (hf_dec_args *)d[0], B->hargs = (hf_dec_args *)h[0];
    B->spans = (hzc_span *)d[1], B->hspans = (hzc_span *)h[1];
    B->sc = (hzc_scalars *)d[2], B->hsc = (hzc_scalars *)h[2];
    B->copies = (hf_axes_job *)d[3], B->hcopies = (hf_axes_job *)h[3];
    return H5ZGPU_OK;
}

/* Whether chunks x and y of a batch decoding go in one launch: the same coded shape, predictor,
 * radius and kernels (so the same shared memory and grids), and the same element type, mode
 * and format grid, which the kernels a launch picks may hold as constants. */
static int same_launch(const hf_dec_args *x, const hf_dec_args *y)
{
    return same_shape(&x->g, &y->g) && x->L.order == y->L.order &&
           x->L.radius == y->L.radius && x->ans.ntab == y->ans.ntab &&
           hzc_huff_decode_kind(x) == hzc_huff_decode_kind(y) && x->Q.is_f32 == y->Q.is_f32 &&
           x->Q.pwrel == y->Q.pwrel && x->Q.grid == y->Q.grid && x->Q.fine == y->Q.fine;
}

/* The bytes of a chunk's slot for its tables in a batch's upload: the Huffman decoder table, or
 * the ANS form's entries (frequency | cumulative << 16) of each table's tokens 0..2R-1. */
#define DEC_TABLE_MOST rows16(4ull * HF_ANS_TABLES * 2 * HF_RADIUS_MAX)

/* Parses a chunk's head (header h, the first nhead bytes of its payload at pay), and when the
 * chunk can join the batch's launches (its payload 4-aligned: the kernels read words) puts its
 * tables in its slot and its arguments in d: *used is then the slot's bytes used, else 0. A
 * holds the ANS tables on the way. The head's verdict: H5ZGPU_OK, or what the parsing found. */
static h5zgpu_status dec_batch_parse(const hf_geom *g0, const hz_header *h, const void *pay,
                                     const uint8_t *head, size_t nhead, hf_ans_tabs *A,
                                     uint8_t *slot, hf_dec_args *d, unsigned *axes,
                                     uint64_t *used)
{
    const int is_f32 = h->dtype == H5ZGPU_FLOAT32;
    hf_geom cg;
    memset(d, 0, sizeof *d);
    *used = 0;
    qz_decoder(&d->Q, h->mode, h->eb_abs, is_f32, h->version);
    d->Q.has_fill = (h->flags & HZ_FLAG_FILL) != 0;
    d->Q.fill_bits = h->fill_bits;
    h5zgpu_status st = hf_payload_axes(g0, h->version, head, h->payload_len, axes, &cg);
    if (st == H5ZGPU_OK)
        st = hf_parse(&cg, h->version, is_f32 ? 4u : 8u, head, nhead, h->payload_len, &d->L,
                      (uint16_t *)slot, A);
    if (st == H5ZGPU_OK && !qz_get_anchor(head, &d->Q))
        st = H5ZGPU_E_CORRUPT;
    if (st != H5ZGPU_OK || ((uintptr_t)pay & 3u))
        return st;
    d->g = cg;
    if (d->L.form != HF_FORM_ANS) {   /* hf_parse built the decoder table in the slot */
        *used = rows16(sizeof(uint16_t) * HF_TABLE_ENTRIES);
        return H5ZGPU_OK;
    }
    d->ans.ntab = A->ntab;
    d->ans.span = 2 * d->L.radius;
    uint32_t *fc = (uint32_t *)slot;
    for (unsigned b = 0; b < A->ntab; b++) {
        d->ans.m[b] = A->m[b];
        for (unsigned t = 0; t < d->ans.span; t++)
            fc[b * d->ans.span + t] = t < A->m[b] ? A->freq[b][t] | A->cum[b][t] << 16 : 0u;
    }
    *used = rows16(4ull * A->ntab * d->ans.span);
    return H5ZGPU_OK;
}

/* The bytes of each payload's head a batch decoding downloads first: a Huffman codebook and the
 * ANS form's tables of the chunks grouped (8 MiB of values at most) fit with room to spare,
 * where HF_HEAD_MAX (63.5 KiB) would fetch a 1 MiB chunk's whole payload. A head that needs
 * more is decoded by a call of its own, which reads HF_HEAD_MAX. */
#define DEC_HEAD_FIRST (16u << 10)

/* Chunks a thread parses at least: a head takes tens of microseconds, a thread of the pool
 * about as long to join. */
#define DEC_PARSE_SLICE 4

/* A batch's heads parsed over the cores: chunk i's verdict in each[i] (H5ZGPU_E_OUTPUT_TOO_SMALL:
 * a call decodes it; H5ZGPU_E_NOMEM: no room for the parse), its tables in slot i of tabs. */
typedef struct dec_parse_run {
    const hf_geom *g0;
    const hz_header *h;
    const void *const *pay;
    const uint8_t *heads;   /* DEC_HEAD_FIRST apart */
    const size_t *nhead;
    uint8_t *tabs;          /* DEC_TABLE_MOST apart */
    hf_dec_args *job;
    unsigned *axes;
    uint64_t *used;
    h5zgpu_status *each;
    unsigned count, slices;
} dec_parse_run;

static void dec_parse_task(void *ctx, uint64_t k)
{
    const dec_parse_run *P = (const dec_parse_run *)ctx;
    hf_ans_tabs *A = (hf_ans_tabs *)hz_scratch(sizeof *A);   /* the thread's, group after group */
    const uint64_t i1 = hz_slice_start(P->count, P->slices, (unsigned)k + 1);
    for (uint64_t i = hz_slice_start(P->count, P->slices, (unsigned)k); i < i1; i++) {
        P->used[i] = 0;
        if (!A) {
            P->each[i] = H5ZGPU_E_NOMEM;
            continue;
        }
        const h5zgpu_status ps = dec_batch_parse(
            P->g0, &P->h[i], P->pay[i], P->heads + i * DEC_HEAD_FIRST, P->nhead[i], A,
            P->tabs + i * DEC_TABLE_MOST, &P->job[i], &P->axes[i], &P->used[i]);
        /* damaged: decoded by no one; not joining (used 0) or a head past the first bytes: a
         * call decodes it */
        P->each[i] = ps == H5ZGPU_OK ? (P->used[i] ? H5ZGPU_OK : H5ZGPU_E_OUTPUT_TOO_SMALL)
                     : P->nhead[i] < P->h[i].payload_len ? H5ZGPU_E_OUTPUT_TOO_SMALL
                                                          : ps;
    }
    hz_scratch_free(A);
}

/* The payloads' heads in one download, parsed over the host's cores into pinned slots; the
 * chunks whose payloads are 4-aligned in passes of launches, one for each same_launch kind
 * (a grid layer a chunk), with one checksum pass, one copy back
 * for the axis orders and one synchronisation; any other chunk a call. */
h5zgpu_status hzc_huff_decode_batch(const hf_geom *g0, unsigned count, const hz_header *h,
                                    const void *const *pay, void *const *out, int device,
                                    uint32_t *sum, h5zgpu_status *each)
{
    hzc_call c;
    dec_batch_arrays B;
    const int is_f32 = h[0].dtype == H5ZGPU_FLOAT32;
    const uint64_t raw = g0->n * (is_f32 ? 4u : 8u);
    const uint64_t delta_stride = rows16(8 * g0->n), sub_stride = rows16(8 * (g0->nsub + 1));
    const uint64_t side_stride = rows16(2ull * HF_ANS_TABLES * HF_ANS_BUCKETS) +
                                 rows16(8 * (hf_ans_nsub(g0->n) + 1));   /* buckets, words */
    const uint64_t tabs_bytes = count * DEC_TABLE_MOST;
    uint8_t *heads = (uint8_t *)malloc((size_t)count * DEC_HEAD_FIRST);
    size_t *nhead = (size_t *)calloc(count, sizeof *nhead);
    unsigned *order = (unsigned *)malloc(count * sizeof *order), k = 0, ncopy = 0;
    unsigned *axes = (unsigned *)calloc(count, sizeof *axes);
    hf_dec_args *job = (hf_dec_args *)malloc(count * sizeof *job);
    uint64_t *used = (uint64_t *)calloc(count, sizeof *used), width = 0;
    int any_axes = 0;
    h5zgpu_status st = H5ZGPU_OK;
    c.ws = NULL;
    c.prev_device = -1;
    if (!heads || !nhead || !order || !axes || !job || !used) {
        st = hz_fail(H5ZGPU_E_NOMEM, "no host memory for a batch of %u chunks", count);
        goto done;
    }
    for (unsigned i = 0; i < count; i++)
        nhead[i] = h[i].payload_len < DEC_HEAD_FIRST ? h[i].payload_len : DEC_HEAD_FIRST;
    if ((st = hzc_get_many(count, pay, nhead, heads, DEC_HEAD_FIRST, device)) != H5ZGPU_OK ||
        (st = hzc_call_begin(&c, device, NULL)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&c.ws->htab, tabs_bytes, 1)) != H5ZGPU_OK)
        goto done;
    {
        dec_parse_run P = {g0,   h,      pay,  heads, nhead, (uint8_t *)c.ws->htab.p,
                           job,  axes,   used, each,  count, hz_slices(count, DEC_PARSE_SLICE)};
        hz_parallel_slices(P.slices, dec_parse_task, &P);
    }
    for (unsigned i = 0; i < count; i++) {
        if (each[i] == H5ZGPU_E_NOMEM) {
            st = hz_fail(H5ZGPU_E_NOMEM, "no host memory to parse a batch's Huffman tables");
            goto done;
        }
        width = used[i] > width ? used[i] : width;
    }
    /* the joining chunks by launch, in the order each kind first comes */
    for (unsigned i = 0; i < count; i++) {
        int seen = each[i] != H5ZGPU_OK;
        for (unsigned j = 0; j < i && !seen; j++)
            seen = each[j] == H5ZGPU_OK && same_launch(&job[j], &job[i]);
        for (unsigned j = i; j < count && !seen; j++)
            if (each[j] == H5ZGPU_OK && same_launch(&job[j], &job[i]))
                order[k++] = j;
    }
    for (unsigned j = 0; j < k; j++)
        any_axes |= axes[order[j]] != 0;
    if (k) {
        hzc_ws *w;
        w = c.ws;
        if ((st = dec_batch_arrays_need(w, k, &B)) != H5ZGPU_OK ||
            (st = hzc_buf_need(&w->tok, k * delta_stride, 0)) != H5ZGPU_OK ||
            (st = hzc_buf_need(&w->sub, k * sub_stride, 0)) != H5ZGPU_OK ||
            (st = hzc_buf_need(&w->ans, tabs_bytes + k * side_stride, 0)) != H5ZGPU_OK ||
            (any_axes && (st = hzc_buf_need(&w->coded, k * raw, 0)) != H5ZGPU_OK))
            goto done;
        uint8_t *dtabs = (uint8_t *)w->ans.p, *coded = (uint8_t *)w->coded.p;
        uint64_t most = 0;
        for (unsigned j = 0; j < k; j++) {
            const unsigned i = order[j];
            hf_dec_args *d = &B.hargs[j];
            *d = job[i];
            uint8_t *side = dtabs + tabs_bytes + j * side_stride;
            if (d->L.form == HF_FORM_ANS) {
                d->ans.fc = (const uint32_t *)(dtabs + i * DEC_TABLE_MOST);
                d->ans.bucket = (uint16_t *)side;
                d->ans.woff = (uint64_t *)(side + rows16(2ull * HF_ANS_TABLES * HF_ANS_BUCKETS));
            } else {
                d->table = (const uint16_t *)(dtabs + i * DEC_TABLE_MOST);
            }
            d->in = (const uint8_t *)pay[i];
            d->delta = (int32_t *)((uint8_t *)w->tok.p + j * delta_stride);
            d->suboff = (uint64_t *)((uint8_t *)w->sub.p + j * sub_stride);
            d->out = axes[i] ? (void *)(coded + j * raw) : out[i];
            d->sc = B.sc + j;
            d->count = 1;
            B.hspans[j].p = (const uint8_t *)pay[i];
            B.hspans[j].n = h[i].payload_len;
            most = h[i].payload_len > most ? h[i].payload_len : most;
            if (axes[i])
                B.hcopies[ncopy++] = hf_axes_job{coded + j * raw, out[i], axes[i]};
        }
        CK(cudaMemcpy2DAsync(dtabs, DEC_TABLE_MOST, w->htab.p, DEC_TABLE_MOST, width, count,
                             cudaMemcpyHostToDevice, c.s),
           "upload of the tables");   /* each slot's bytes in use, at most */
        CK(cudaMemcpyAsync(B.args, B.hargs, k * sizeof(hf_dec_args), cudaMemcpyHostToDevice,
                           c.s),
           "upload of the chunks' arguments");
        CK(cudaMemcpyAsync(B.spans, B.hspans, k * sizeof(hzc_span), cudaMemcpyHostToDevice,
                           c.s),
           "upload of the payloads' places");
        if (ncopy)
            CK(cudaMemcpyAsync(B.copies, B.hcopies, ncopy * sizeof(hf_axes_job),
                               cudaMemcpyHostToDevice, c.s),
               "upload of the axis order's copies");
        CK(cudaMemsetAsync(B.sc, 0, k * sizeof(hzc_scalars), c.s), "reset of the counters");
        CK(hzc_launch_checksum_batch(B.spans, k, most, 0, 0, B.sc, w->sms, c.s),
           "launch of the checksum kernel");
        for (unsigned j = 0, n; j < k; j += n) {   /* a launch pass a kind */
            for (n = 1; j + n < k && same_launch(&B.hargs[j + n], &B.hargs[j]); n++)
                ;
            hf_dec_args first = B.hargs[j];
            first.many = B.args + j;
            first.count = n;
            CK(hzc_huff_launch_decode_many(&first, w->sms, c.s),
               "launch of the Huffman decompression kernels");
        }
        CK(hf_axes_launch_copy_many(g0, B.hcopies, B.copies, ncopy, is_f32, 0, w->sms, c.s),
           "launch of the axis order's copies back");
        if ((st = hzc_sync_many(&c, B.hsc, B.sc, k)) != H5ZGPU_OK)
            goto done;
        for (unsigned j = 0; j < k; j++) {
            each[order[j]] = B.hsc[j].corrupt ? H5ZGPU_E_CORRUPT : H5ZGPU_OK;
            sum[order[j]] = B.hsc[j].sum;
        }
    }
    hzc_call_end(&c, st);   /* the calls below take workspaces of their own */
    c.ws = NULL;
    c.prev_device = -1;
    /* the others a call each */
    for (unsigned i = 0; i < count; i++) {
        if (each[i] != H5ZGPU_E_OUTPUT_TOO_SMALL)
            continue;
        const hzc_decode_args a = {.h = &h[i], .in = (const uint8_t *)pay[i], .in_dev = 1,
                                   .out = out[i], .out_dev = 1, .device = device,
                                   .stream = NULL};
        each[i] = hzc_huff_decode(g0, &a, &sum[i]);
        if (each[i] != H5ZGPU_OK && each[i] != H5ZGPU_E_CORRUPT) {
            st = each[i];
            goto done;
        }
    }
done:
    hzc_call_end(&c, st);
    free(heads);
    free(nhead);
    free(order);
    free(axes);
    free(job);
    free(used);
    return st;
}
