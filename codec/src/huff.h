/* The Huffman codec (codec 2), CPU reference: the specification the CUDA kernels match byte for
 * byte. Payload layout: docs/FORMAT.md, "Huffman payload". */
#ifndef H5ZGPU_HUFF_H
#define H5ZGPU_HUFF_H

#include "huff_common.h"
#include "h5zgpu.h"

#include <stddef.h>

/* Lays the tile grid over the chunk folded to at most 3-D. Returns -1 if the shape is empty or
 * has 2^32 elements or more (positions in the payload are 32-bit). */
int hf_geom_init(hf_geom *g, unsigned rank, const uint64_t *dims);

/* The radius a caller asked for: 0 means the default; else 2..HF_RADIUS_MAX. */
unsigned hf_radius(unsigned asked);

/* Encodes into out[0..cap) with the quantiser Q (qz_init, as the fixed-length codec);
 * H5ZGPU_E_OUTPUT_TOO_SMALL when the payload would not fit (the caller then stores it raw). */
h5zgpu_status hf_encode_cpu(const hf_geom *g, const qz_quant *Q, unsigned radius, const void *in,
                            uint8_t *out, uint64_t cap, uint64_t *len);

/* What the encoder decided at each stage, in order: for tests that compare the executors stage
 * by stage (gpu_stages), filled by hf_encode_traced and by the GPU backend. tok and subbits
 * are the caller's (n and nsub entries) or NULL. */
typedef struct hf_trace {
    unsigned long long cost[4];   /* the sampled tiles' Lorenzo costs, [0] their elements */
    unsigned pred;                /* a Lorenzo order or HF_PRED_INTERP */
    unsigned axes;                /* the axis order (huff_axes.h) */
    unsigned long long axes_cost[3];   /* its costs, per folded axis */
    uint16_t *tok;                /* each element's token, tile-major */
    uint64_t n_out, n_verb;
    uint64_t hist[HF_MAX_SYMS];   /* form 0's token counts */
    unsigned form, rs;            /* the chosen form; form 0's commonest token */
    uint8_t len[HF_MAX_SYMS];     /* the chosen codebook's lengths */
    uint64_t size;                /* payload bytes */
    uint32_t *subbits;            /* each sub-chunk's stream bits */
} hf_trace;

/* hf_encode_cpu, recording its stages into T. */
h5zgpu_status hf_encode_traced(const hf_geom *g, const qz_quant *Q, unsigned radius,
                               const void *in, uint8_t *out, uint64_t cap, uint64_t *len,
                               hf_trace *T);

/* The axis order (huff_axes.c): the writer's choice for the chunk g (its costs into cost;
 * HF_AXES_NOMEM when out of memory), and the copies from the chunk into the coded array and
 * back. */
#define HF_AXES_NOMEM 0xFFFFFFFFu
unsigned hf_axes_pick_cpu(const hf_geom *g, const qz_quant *Q, const void *in,
                          unsigned long long cost[3]);
void hf_axes_gather_cpu(const hf_geom *g, unsigned axes, size_t esize, const void *chunk,
                        void *coded);
void hf_axes_scatter_cpu(const hf_geom *g, unsigned axes, size_t esize, const void *coded,
                         void *chunk);

/* Decodes a payload of exactly len bytes from a chunk of the given format version (from 2 it may
 * use interpolation); every count, code, length and position is checked before use
 * (H5ZGPU_E_CORRUPT). Q comes from qz_decoder and the chunk header's fill value; the
 * payload gives its base or code offset. */
h5zgpu_status hf_decode_cpu(const hf_geom *g, unsigned version, qz_quant *Q, const uint8_t *in,
                            uint64_t len, void *out);

/* Deltas the decoder marks before it places outliers: a fill token, and an escape token still
 * waiting for its outlier. */
#define HF_MARK_FILL INT32_MIN
#define HF_MARK_ESCAPE (INT32_MIN + 1)

/* The interpolation predictor (huff_interp.h) over the whole chunk: each element's delta and
 * kind (0 coded, 1 fill, 2 verbatim) at its tile-major position, as dual quantisation leaves
 * them for the Lorenzo orders. Returns its cost over the sampled tiles (hf_sampled), to
 * compare with the orders' (UINT64_MAX when out of memory); it stops after the pass where that
 * cost no longer wins against lorenzo_cost (hf_ip_wins), the arrays then incomplete. */
uint64_t hf_ip_encode_cpu(const hf_geom *g, const qz_quant *Q, const void *in, int32_t *delta,
                          uint8_t *kind, uint64_t lorenzo_cost);

/* Every element's value from its tile-major deltas (outliers placed, fill tokens
 * HF_MARK_FILL); verbatim values are left to the caller. H5ZGPU_E_CORRUPT when an escape has
 * no outlier or a code leaves the interpolation's range. */
h5zgpu_status hf_ip_decode_cpu(const hf_geom *g, const qz_quant *Q, const int32_t *delta,
                               void *out);

/* The parts of a Huffman payload, located from its fixed part and codebook (the first avail
 * bytes, at most HF_HEAD_MAX are read) and its length: the host side of either decoder. The
 * sub-chunk table and the stream are checked by the decoder that reads them. table receives the
 * decoder table (2^HF_MAX_LEN entries). */
/* The longest head: the ANS form's twelve tables of up to 2R = 2048 tokens, five nibbles a
 * frequency and four for the count, and its groups' bits (2^32 / 4096 / 64 of them; a Huffman
 * codebook is shorter). */
#define HF_HEAD_MAX (HF_OFF_CODEBOOK + 12u * (2u + 5u * HF_RADIUS_MAX) + 4u + 2052u)
typedef struct hf_layout {
    unsigned form, order, radius, run_token, ntokens;
    unsigned axes;                /* format version 4: the axis order (huff_axes.h) */
    uint32_t busy, busy_groups;   /* the ANS form: sub-chunks with words, their groups, */
    unsigned count_bytes;         /* and the bytes of a word count (huff_ans.h) */
    uint32_t n_out, n_verb;
    uint64_t off_sub, off_stream, stream_bytes, off_out_pos, off_out_delta, off_verb_pos,
        off_verb_val;
} hf_layout;

/* The ANS form's tables (huff_ans.h): per class and context its tokens 0..m-1, their
 * frequencies and cumulative frequencies, and the nibbles the tables take. */
typedef struct hf_ans_tabs {
    unsigned ntab;                       /* classes x contexts (huff_ans.h) */
    unsigned m[12];
    unsigned book[12];                   /* format version 6: the built-in table, or 0 */
    uint32_t freq[12][2 * HF_RADIUS_MAX];
    uint32_t cum[12][2 * HF_RADIUS_MAX];
    uint64_t nibbles;
} hf_ans_tabs;

/* hf_parse for every form: g is the coded array's geometry (hf_layout_geom) and A receives the
 * ANS form's tables (NULL: the caller reads only the other forms, which fill table). */
h5zgpu_status hf_parse(const hf_geom *g, unsigned version, unsigned esize, const uint8_t *in,
                       uint64_t avail, uint64_t len, hf_layout *L, uint16_t *table,
                       hf_ans_tabs *A);

/* The axis order of a payload (byte 14; 0 before format version 4, and 0 unless the chunk is
 * 3-D): H5ZGPU_E_CORRUPT when out of range. g is the folded chunk's geometry; *coded receives
 * the coded array's. */
h5zgpu_status hf_payload_axes(const hf_geom *g, unsigned version, const uint8_t *in,
                              uint64_t len, unsigned *axes, hf_geom *coded);

/* ---- the ANS form (huff_ans.c) ---- */

/* The form-0 tokens of the coded array g under predictor pred, radius R, counted by table:
 * tokens 0..2R-1 of the rows of pred's tables (hf_ans_tables_of; the rest of count is not
 * read, nor written where the counts come in slices). */
void hf_ans_count(const hf_geom *g, unsigned pred, unsigned R, const uint16_t *tok,
                  uint32_t (*count)[2 * HF_RADIUS_MAX]);

/* The tables, each stored or a built-in one, from the counts hf_ans_count left in A->cum. */
void hf_ans_tables(unsigned pred, unsigned R, hf_ans_tabs *A);
/* Bytes the tables take in the payload (padded to 4), and the tables written at p (zeroed). */
uint64_t hf_ans_table_bytes(const hf_ans_tabs *A);
void hf_ans_put_tables(const hf_ans_tabs *A, uint8_t *p);
/* Codes every sub-chunk into words (HF_ANS_SUB_WORDS a sub-chunk), its word count into
 * nwords[s] (0 for a sub-chunk of run token rs alone); returns the words in all. */
uint64_t hf_ans_encode_cpu(const hf_geom *g, unsigned pred, const hf_ans_tabs *A,
                           const uint16_t *tok, unsigned rs, uint16_t *words, uint64_t *nwords);
/* The tables at p (avail bytes to the payload's end) of a chunk of format version; *bytes
 * their padded length. */
h5zgpu_status hf_ans_parse(const uint8_t *p, uint64_t avail, unsigned version, unsigned pred,
                           unsigned R, hf_ans_tabs *A, uint64_t *bytes);
/* The decoder's slot table: HF_ANS_M entries a table, the token of each slot. */
void hf_ans_symbols(const hf_ans_tabs *A, uint16_t *sym);
/* Every sub-chunk's deltas (markers for fill and escape tokens) from the stream, whose
 * sub-chunk s holds words woff[s]..woff[s+1]; 0 on any inconsistency. */
int hf_ans_decode_cpu(const hf_geom *g, const hf_layout *L, const hf_ans_tabs *A,
                      const uint16_t *sym, const uint8_t *stream, const uint64_t *woff,
                      int has_fill, int32_t *delta);

/* The delta a token stands for alone (not a pair): the fill or escape mark, else the delta
 * it codes. */
HZ_HD int32_t hf_token_delta(uint32_t tk)
{
    return tk == HF_TOK_FILL     ? HF_MARK_FILL
           : tk == HF_TOK_ESCAPE ? HF_MARK_ESCAPE
                                 : hf_unzigzag32(tk - 2u);
}

/* The delta a run of the run token stands for. */
HZ_HD int32_t hf_run_delta(const hf_layout *L)
{
    return hf_token_delta(L->run_token);
}

/* The stream checks both decoders make of a token. A run of the run token (delta run_d) may
 * stand only where a fill run has a fill value; a token alone (not a run, not a pair) may not
 * be the run form's run token, which stands only in runs, nor a fill token without a fill
 * value. */
HZ_HD int hf_run_valid(int32_t run_d, int has_fill)
{
    return run_d != HF_MARK_FILL || has_fill;
}

HZ_HD int hf_lone_valid(const hf_layout *L, unsigned tk, int has_fill)
{
    return !(L->form == HF_FORM_RUNS && tk == L->run_token) && (tk != HF_TOK_FILL || has_fill);
}

#endif
