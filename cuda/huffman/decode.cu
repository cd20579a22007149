/* The Huffman decoder's pipeline on one stream: the stages of hf_decode_cpu, for one chunk or for
 * chunks decoded together (a grid layer each). The host parsed the payload's fixed part
 * and built the decoder table or the ANS tables (hf_parse); the kernels check everything else
 * and set sc->corrupt on any inconsistency. */
#include "huff_device.cuh"

static cudaError_t launch_stages(const hf_dec_args &a, int sms, cudaStream_t s)
{
    cudaError_t e;
    /* the stream -> suboff -> delta (a delta or a marker per element); outliers into place */
    if ((e = a.L.form == HF_FORM_ANS ? hf_ans_launch_decode(a, sms, s)
                                     : hf_dec_launch_stream(a, sms, s)) != cudaSuccess ||
        (e = hf_dec_launch_lists(a, sms, s)) != cudaSuccess)
        return e;
    /* delta -> values, by the payload's predictor */
    if (a.L.order == HF_PRED_INTERP)
        return hf_ip_launch_decode(a, sms, s);
    return hf_dec_launch_tiles(a, s);
}

cudaError_t hzc_huff_launch_decode(const hf_geom *g, const qz_quant *Q, const hf_layout *L,
                                   const uint8_t *in, uint64_t len, const uint16_t *table,
                                   const hf_ans_dec *ans, int32_t *delta, uint64_t *suboff,
                                   void *out, hzc_scalars *sc, int sms, cudaStream_t s)
{
    (void)len;   /* hf_parse placed every part inside it */
    hf_dec_args a = {*g, *Q, *L, in, table, {}, delta, suboff, out, sc, NULL, 1};
    if (ans)
        a.ans = *ans;
    return launch_stages(a, sms, s);
}

cudaError_t hzc_huff_launch_decode_many(const hf_dec_args *a0, int sms, cudaStream_t s)
{
    return launch_stages(*a0, sms, s);
}

unsigned hzc_huff_decode_kind(const hf_dec_args *a)
{
    return a->L.form == HF_FORM_ANS ? HF_STREAM_ANS : hf_dec_stream_kind(*a);
}
