/* What the Huffman codec's kernel files share: CTA shapes, shared-memory budgets, the
 * arguments every encoding and decoding kernel takes, tile coordinates, the markers of the
 * token passes, and the launchers of each stage (in the order encode.cu and decode.cu call
 * them). Every value comes from the inline functions of huff_common.h and huff_interp.h, the
 * CPU reference's, so the payload matches hf_encode_cpu byte for byte. */
#ifndef H5ZGPU_CUDA_HUFF_DEVICE_CUH
#define H5ZGPU_CUDA_HUFF_DEVICE_CUH

#include "../common/device.cuh"
#include "../common/lookback.cuh"
#include "stages.h"

#define HF_THREADS 256                     /* tile kernels: a CTA a tile */
#define HF_WARPS (HF_THREADS / 32)
#define HF_SEG (HF_TILE_N / HF_WARPS)      /* a warp's share of a tile in the ordered passes */
#define HF_BATCH 16                        /* loads a thread issues before using them */
#define HF_SUB_THREADS 128                 /* decoders of a thread a sub-chunk */
#define HF_ONE_THREADS 1024                /* a CTA a task: codebooks, choice, offsets */
#define HF_TABLE (1u << HF_MAX_LEN)

/* Tiles and the codebook live in dynamic shared memory (above the 48 KiB static limit). */
#define HF_SMEM_COST (HF_TILE_N * 4u)
#define HF_SMEM_TOKEN (HF_TILE_N * 4u + HF_TILE_N / 4u + HF_RADIUS_MAX * 4u)
#define HF_SMEM_DTILE (HF_TILE_N * 4u)
#define HF_SMEM_BOOK (HF_MAX_SYMS * (4u + 4u + 8u + 8u + 4u + 2u + 2u + 4u + 1u))
#define HF_NODES_PER ((2u * HF_MAX_SYMS + HF_ONE_THREADS - 1u) / HF_ONE_THREADS)
#define HF_SMEM_TABLE (HF_TABLE * 2u)      /* the decoder table (hf_table_entry) */

extern __shared__ __align__(16) unsigned char hf_smem[];

__device__ __forceinline__ void hf_coords(const hf_tile &tl, unsigned e, unsigned *z, unsigned *y,
                                          unsigned *x)
{
    const unsigned plane = tl.ey * tl.ex;
    if (((tl.ex & (tl.ex - 1u)) | (plane & (plane - 1u))) == 0) {
        /* full tiles have power-of-two rows and planes: shifts instead of two divisions */
        *z = e >> (__ffs(plane) - 1);
        *y = (e & (plane - 1u)) >> (__ffs(tl.ex) - 1);
        *x = e & (tl.ex - 1u);
        return;
    }
    *z = e / plane;
    const unsigned r = e - *z * plane;
    *y = r / tl.ex;
    *x = r - *y * tl.ex;
}

__device__ __forceinline__ uint64_t hf_index(const hf_geom &g, const hf_tile &tl, unsigned z,
                                             unsigned y, unsigned x)
{
    return ((tl.z0 + z) * g.ny + tl.y0 + y) * g.nx + tl.x0 + x;
}

__device__ __forceinline__ unsigned hf_tile_n(const hf_tile &tl)
{
    return tl.ez * tl.ey * tl.ex;
}

/* huff_cpu.c's payload_size */
__device__ __forceinline__ uint64_t hf_size(const hf_geom &g, unsigned esize, unsigned m0,
                                            unsigned m1, uint64_t bits, uint64_t n_out,
                                            uint64_t n_verb)
{
    return HF_OFF_CODEBOOK + hf_pad4(hf_codebook_size(m0, m1)) + hf_pad4(2 * g.nsub) +
           hf_pad4((bits + 7) / 8) + 8 * n_out + (4 + esize) * n_verb;
}

/* The arguments of the chunk this CTA codes (hf_enc_args, stages.h). */
__device__ __forceinline__ hf_enc_args hf_enc_at(const hf_enc_args &a)
{
    return a.many ? a.many[blockIdx.z] : a;
}

/* A launch's grid: x CTAs a chunk (y: 1), a layer a chunk. */
static inline dim3 hf_layers(unsigned x, const hf_enc_args &a)
{
    return dim3(x, 1, a.count);
}


/* The arguments of the chunk this CTA decodes (hf_dec_args, stages.h): the kernel's own (MANY
 * false, one chunk a launch), or its chunk's in many. Each decoding kernel comes in both
 * instantiations: a reference chosen at run time read the one chunk's arguments through a
 * generic pointer, and a copy of the struct took 456 bytes of stack and twice the registers;
 * either slowed whole fields' decoding by about a tenth. __grid_constant__ lets a kernel take
 * its argument's address. */
template <bool MANY>
__device__ __forceinline__ const hf_dec_args &hf_dec_at(const hf_dec_args &a)
{
    return MANY ? a.many[blockIdx.z] : a;
}

/* A decoding launch's grid: x CTAs a chunk, a layer a chunk. */
static inline dim3 hf_dec_layers(unsigned x, const hf_dec_args &a)
{
    return dim3(x, 1, a.count);
}

/* Markers in the quantisation codes the token kernel reads, outside every code's range. */
#define HF_CODE_FILL INT32_MIN
#define HF_CODE_VERBATIM (INT32_MIN + 1)

/* Token of an interpolation delta c, which may be a fill or verbatim marker (a verbatim value
 * takes the token of delta 0, as the CPU's tokenise_tile gives it). */
__device__ __forceinline__ unsigned hf_ip_token(int32_t c, unsigned R, bool *verb)
{
    const bool fill = c == HF_CODE_FILL;
    *verb = c == HF_CODE_VERBATIM;
    const uint32_t zz = hf_zigzag32(fill || *verb ? 0 : c);
    return fill ? HF_TOK_FILL : zz < 2u * R - 2u ? zz + 2u : HF_TOK_ESCAPE;
}

/* The interpolation's stand-in token for a verbatim value, which hf_enc_ip_tokens_kernel lists and
 * replaces by hf_ip_token's (above every token). */
#define HF_TOK_VERBATIM_MARK 0xFFFFu

/* Grid-stride passes: four CTAs an SM. */
static inline unsigned hf_grid(int sms)
{
    return (unsigned)(sms > 0 ? sms : 1) * 4u;
}

/* The same shared by the chunks of a launch: at least two CTAs a chunk. */
static inline unsigned hf_grid_each(int sms, const hf_enc_args &a)
{
    const unsigned g = hf_grid(sms) / a.count;
    return g < 2u ? 2u : g;
}

/* The same for a decoding launch. */
static inline unsigned hf_dec_grid_each(int sms, const hf_dec_args &a)
{
    const unsigned g = hf_grid(sms) / a.count;
    return g < 2u ? 2u : g;
}

/* CTAs of `threads` for `per` threads a sub-chunk */
static inline unsigned hf_sub_grid(uint64_t nsub, unsigned per, unsigned threads)
{
    return (unsigned)((nsub * per + threads - 1) / threads);
}

/* A kernel of a tile a CTA, its dynamic shared memory above the 48 KiB default. */
template <typename K>
static cudaError_t hf_tile_launch(K kernel, unsigned grid, unsigned smem, const hf_enc_args &a,
                                  cudaStream_t s)
{
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess)
        return e;
    kernel<<<hf_layers(grid, a), HF_THREADS, smem, s>>>(a);
    return cudaGetLastError();
}

/* ---- the stages (encode.cu and decode.cu call them in this order) ---- */

/* tokens.cu: the Lorenzo orders' costs over the sampled tiles (hf_sampled) into plan->cost. */
cudaError_t hf_enc_launch_sample(const hf_enc_args &a, cudaStream_t s);

/* interp.cu: the interpolation candidate, when plan->cost says it is worth trying: its cost
 * over the sampled tiles into plan->cost_ip (short of it where it lost before the last sampled
 * region: hf_ip_lost), the predictor into plan->pred; when that is the
 * interpolation, its tokens under radius R into tok (HF_TOK_VERBATIM_MARK for a verbatim
 * value) and an outlier's delta at its place in ip_delta (else tok is left partly written).
 * ip_u (n int32) and ip_delta2 (hf_ip_even_count int32) are scratch. */
cudaError_t hf_ip_launch_encode(const hf_enc_args &a, cudaStream_t s);

/* tokens.cu: for plan->pred, each tile's tokens into tok, its histogram added to plan->hist,
 * and the outlier and verbatim lists in element order (out_*, verb_*, their counts
 * plan->n_out and n_verb), tiles placed by the decoupled look-back (status, plan->ticket). */
cudaError_t hf_enc_launch_tokens(const hf_enc_args &a, cudaStream_t s);

/* codebook.cu: from plan->hist, form 0's commonest token plan->rs and which forms may win,
 * plan->may. */
cudaError_t hf_enc_launch_may_win(const hf_enc_args &a, cudaStream_t s);

/* stream_encode.cu: the token counts of forms 1 and 2 (those plan->may allows) from tok into
 * plan->hist_alt. */
cudaError_t hf_enc_launch_form_hists(const hf_enc_args &a, cudaStream_t s);

/* codebook.cu: each form's length-limited canonical codebook and size into plan->book[form];
 * then the smallest one (ties to the lower form) into plan->form, cl, len, m0, m1, bits, size,
 * and plan->too_small when the payload would not fit cap. */
cudaError_t hf_enc_launch_codebooks(const hf_enc_args &a, cudaStream_t s);

/* stream_encode.cu: the bit stream of the chosen form into dst at its offset (sub-chunks packed
 * apart, their lengths into subbits, scanned into suboff, then placed), the rest of the payload
 * (fixed part, codebook, sub-chunk table, outliers, verbatim values) around it, and the checksum
 * into sc->sum; nothing when plan->too_small. */
cudaError_t hf_enc_launch_stream(const hf_enc_args &a, int sms, cudaStream_t s);

/* ans_encode.cu: the ANS form's counts (into ans->count, which the caller zeroes), tables and
 * sub-chunks from tok (before the stream's packing reuses it); the choice against plan->form
 * (hf_enc_launch_codebooks') by exact size; then (after the payload is zeroed) its sections. */
cudaError_t hf_ans_launch_code(const hf_enc_args &a, int sms, cudaStream_t s);
cudaError_t hf_ans_launch_choose(const hf_enc_args &a, cudaStream_t s);
cudaError_t hf_ans_launch_place(const hf_enc_args &a, int sms, cudaStream_t s);

/* ans_decode.cu: the ANS form's stream -> delta (markers for fill and escape tokens), in place
 * of hf_dec_launch_stream; the tables in a.ans. */
cudaError_t hf_ans_launch_decode(const hf_dec_args &a, int sms, cudaStream_t s);

/* stream_decode.cu: the kernel that decodes a Huffman form's stream, by its bits an element
 * (HF_STREAM_ANS: ans_decode.cu's, for the ANS form); chunks decoded in one launch need the
 * same. */
#define HF_STREAM_RUNS 0u
#define HF_STREAM_SPLIT 1u
#define HF_STREAM_SUB 2u
#define HF_STREAM_ANS 3u
unsigned hf_dec_stream_kind(const hf_dec_args &a);

/* stream_decode.cu: the sub-chunks' bit offsets into suboff (with the checks of the table's and
 * the stream's padding), then every element's delta or token marker into delta. */
cudaError_t hf_dec_launch_stream(const hf_dec_args &a, int sms, cudaStream_t s);

/* decode_values.cu: the outliers into their escape markers (both lists checked). */
cudaError_t hf_dec_launch_lists(const hf_dec_args &a, int sms, cudaStream_t s);

/* interp.cu: values from the deltas of an interpolated payload (outliers placed) into out, the
 * n int32 after the deltas scratch for the codes, then its verbatim values; a damaged delta
 * sets sc->corrupt. */
cudaError_t hf_ip_launch_decode(const hf_dec_args &a, int sms, cudaStream_t s);

/* decode_values.cu: a Lorenzo payload's values from its deltas by partial sums, a CTA a tile,
 * with its fill and verbatim values. */
cudaError_t hf_dec_launch_tiles(const hf_dec_args &a, cudaStream_t s);

#endif
