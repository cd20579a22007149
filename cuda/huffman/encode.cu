/* The Huffman encoder's pipeline on the call's stream, the Huffman forms' codebooks on a side
 * stream beside the ANS form: the stages of hf_encode_cpu in the order their results are
 * needed, for one chunk or for chunks coded together (a grid layer each). What each
 * stage reads and writes is said at its launcher (huff_device.cuh); the plan (stages.h) carries
 * the counts and the codebook between them. */
#include "huff_device.cuh"

static cudaError_t launch_stages(const hf_enc_args &a, int sms, cudaStream_t s,
                                 const hzc_side *side)
{
    cudaError_t e;
    /* the predictor: values -> plan->cost (Lorenzo orders) -> plan->cost_ip, plan->pred */
    if ((e = hf_enc_launch_sample(a, s)) != cudaSuccess ||
        (e = hf_ip_launch_encode(a, s)) != cudaSuccess)
        return e;
    /* tokens: values (or the interpolation's deltas) -> tok, plan->hist, outliers, verbatims */
    if ((e = hf_enc_launch_tokens(a, s)) != cudaSuccess ||
        (a.b.tok_copy && (e = cudaMemcpyAsync(a.b.tok_copy, a.b.tok, a.g.n * sizeof *a.b.tok,
                                              cudaMemcpyDeviceToHost, s)) != cudaSuccess))
        return e;
    /* what both forms need: plan->hist -> plan->rs, plan->may */
    if ((e = hf_enc_launch_may_win(a, s)) != cudaSuccess)
        return e;
    /* the Huffman forms on the side stream, beside the ANS form's coding: their codebooks are
     * kernels of a CTA or three, which left the rest of the device idle (plan->hist_alt ->
     * plan->book[] -> plan->form, size) */
    if ((e = cudaEventRecord(side->fork, s)) != cudaSuccess ||
        (e = cudaStreamWaitEvent(side->s, side->fork, 0)) != cudaSuccess ||
        (e = hf_enc_launch_form_hists(a, side->s)) != cudaSuccess ||
        (e = hf_enc_launch_codebooks(a, side->s)) != cudaSuccess ||
        (e = cudaEventRecord(side->join, side->s)) != cudaSuccess)
        return e;
    /* the ANS form: tok + plan->pred, rs -> its tables and sub-chunks; then the choice by size
     * against the Huffman forms' */
    if ((e = hf_ans_launch_code(a, sms, s)) != cudaSuccess ||
        (e = cudaStreamWaitEvent(s, side->join, 0)) != cudaSuccess ||
        (e = hf_ans_launch_choose(a, s)) != cudaSuccess)
        return e;
    /* the payload: tok + the chosen codebook, or the ANS sub-chunks -> dst, sc->sum */
    return hf_enc_launch_stream(a, sms, s);
}

cudaError_t hzc_huff_launch_encode(const hf_geom *g, const qz_quant *Q, unsigned radius,
                                   const void *in, const hf_enc_bufs *b, hzc_scalars *sc,
                                   int sms, cudaStream_t s, const hzc_side *side)
{
    hf_enc_args a = {*g, *Q, radius, in, *b, sc, NULL, 1};
    cudaError_t e;
    if ((e = cudaMemsetAsync(b->plan, 0, sizeof(hf_enc_plan), s)) != cudaSuccess ||
        (e = cudaMemsetAsync(b->status, 0, 2 * g->ntiles * sizeof(unsigned long long), s)) !=
            cudaSuccess ||
        (e = cudaMemsetAsync(b->ans->count, 0, sizeof b->ans->count, s)) != cudaSuccess)
        return e;
    return launch_stages(a, sms, s, side);
}

cudaError_t hzc_huff_launch_encode_many(const hf_enc_args *a0, int sms, cudaStream_t s,
                                        const hzc_side *side)
{
    return launch_stages(*a0, sms, s, side);
}
