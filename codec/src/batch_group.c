/* Chunks of a device batch coded together: a group of fixed-length chunks goes through one pass
 * of launches (statistics, encoding and assembly of all; or checksums and decoding of all), a
 * group of Huffman chunks through a few (compressing: statistics, axis orders, then the
 * encoding's stages; decompressing: the heads parsed on the host, then the decoding's stages),
 * where a call a chunk pays its launches and synchronisations once for each. The policy
 * (policy.c) then writes each chunk exactly as a call a chunk would: stored raw where it did
 * not shrink, the header in front. Host batches stay with a call a chunk, several in flight
 * (batch.c): there each chunk's copies across PCIe overlap the others' kernels, which measured
 * faster than groups that copy all their chunks, then code them. */
#include "batch.h"

#ifdef H5ZGPU_HAVE_CUDA
#include "backend_gpu.h"
#include "chunk.h"
#include "error.h"
#include "fixed.h"
#include "huff.h"
#include "policy.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Values of the chunks coded in one pass: the device holds about three times as much for
 * fixed-length chunks (values, block payloads, assembled payloads), about nine times as much
 * for Huffman ones (tokens, codes, deltas, the outlier lists' room and the ANS state). */
#define HZ_BATCH_BYTES (128u << 20)
#define HZ_BATCH_BYTES_HUFFMAN (64u << 20)

/* Huffman chunks larger than this stay a call each, several in flight (batch.c): their kernels
 * fill the GPU alone, and a group's synchronisations would hold fewer of them in flight
 * (16 MiB chunks of velocity_x on an H100: 57.5 GB/s in groups, 79.6 a call each). */
#define HZ_HUFFMAN_GROUP_CHUNK ((uint64_t)8 << 20)

/* Huffman chunks a group takes at most: each holds its own tables beside its values (the
 * encoder's ANS plan, 192 KiB; the decoder's tables, up to 96 KiB, and its head), which
 * thousands of small chunks in one group would multiply into gigabytes. 64 is a group of 1 MiB
 * chunks, the dataset library's largest batch. */
#define HZ_HUFFMAN_GROUP_MOST 64u

/* Groups in flight: one group's synchronisations and host work overlap the others' kernels.
 * Eight, the GPU queues CUDA gives a process by default: a Huffman group waits on its chunks'
 * serial ANS chains, and eight groups of 1 or 4 MiB chunks decoded 1.1-1.5x faster than four.
 * A group of fewer than HZ_GROUP_MIN_BYTES of values pays more for them than the overlap
 * saves. */
#define HZ_GROUP_THREADS 8
#define HZ_GROUP_MIN_BYTES (32u << 20)

/* Chunks a group takes of n chunks of raw bytes each: n spread over the threads, but at least
 * HZ_GROUP_MIN_BYTES of values, at most most_bytes and 65535 chunks (a grid row or layer
 * each). */
static unsigned group_size(size_t n, uint64_t raw, uint64_t most_bytes)
{
    raw = raw ? raw : 1;
    const uint64_t fit = most_bytes / raw, least = (HZ_GROUP_MIN_BYTES + raw - 1) / raw;
    const uint64_t most = fit < 1 ? 1u : fit > 65535 ? 65535u : fit;
    const uint64_t spread = (n + HZ_GROUP_THREADS - 1) / HZ_GROUP_THREADS;
    const uint64_t want = spread > least ? spread : least;
    return (unsigned)(want < most ? want : most);
}

/* group_size for chunks of the codec: Huffman groups hold at most HZ_HUFFMAN_GROUP_MOST. */
static unsigned group_size_of(h5zgpu_codec codec, size_t n, uint64_t raw)
{
    if (codec != H5ZGPU_CODEC_HUFFMAN)
        return group_size(n, raw, HZ_BATCH_BYTES);
    const unsigned gs = group_size(n, raw, HZ_BATCH_BYTES_HUFFMAN);
    return gs < HZ_HUFFMAN_GROUP_MOST ? gs : HZ_HUFFMAN_GROUP_MOST;
}

/* Groups 0..ngroups-1 run by up to HZ_GROUP_THREADS threads, the caller's among them, each
 * with its arrays (scratch). */
typedef struct group_pool {
    hz_batch *b;
    size_t ngroups, next;   /* next: atomic */
    void (*run)(struct group_pool *P, size_t j, void *scratch);
    void *(*scratch_new)(const struct group_pool *P);
    void *ctx;              /* the kind's data */
    unsigned gs;            /* chunks a group takes at most */
} group_pool;

static void *group_worker(void *arg)
{
    group_pool *P = arg;
    void *scratch = P->scratch_new(P);
    for (size_t j; scratch && (j = __atomic_fetch_add(&P->next, 1, __ATOMIC_RELAXED)) < P->ngroups;)
        P->run(P, j, scratch);
    free(scratch);
    return NULL;
}

static void run_groups(group_pool *P)
{
    pthread_t tid[HZ_GROUP_THREADS];
    unsigned nt = 0;
    while (nt + 1 < HZ_GROUP_THREADS && nt + 1 < P->ngroups &&
           pthread_create(&tid[nt], NULL, group_worker, P) == 0)
        nt++;
    group_worker(P);
    for (unsigned k = 0; k < nt; k++)
        pthread_join(tid[k], NULL);
}

/* A decompression group's GPU pass failed with st before any of its chunks (the first, first)
 * was written: recorded (device buffers have no CPU path to fall back on). */
static void group_failed(group_pool *P, size_t first, h5zgpu_status st)
{
    P->b->taken[first] = 1;
    hz_batch_record(P->b, first, st);
}

/* ---- compression ----------------------------------------------------------------------------- */

/* A chunk whose payload the group made: the policy takes it as made, stores the values raw
 * where it did not shrink, and puts the header in front (device outputs: into hdr, for one
 * copy of the group's headers at the end). */
typedef struct made_run {
    const hz_payload *res;
    h5zgpu_status st;     /* H5ZGPU_OK or H5ZGPU_E_OUTPUT_TOO_SMALL */
    const void *in;
    int device;
    uint8_t *hdr;
    size_t *hlen;
} made_run;

static h5zgpu_status made_encode(const hz_runner *r, unsigned codec, uint8_t *base,
                                 uint64_t shift, uint64_t cap, int keep, hz_payload *res)
{
    const made_run *m = r->ctx;
    (void)codec, (void)base, (void)shift, (void)cap, (void)keep;   /* the group's codec, as made */
    *res = *m->res;
    return m->st;
}

static h5zgpu_status made_store_raw(const hz_runner *r, uint8_t *dst, uint64_t raw,
                                    uint32_t *sum)
{
    const made_run *m = r->ctx;
    h5zgpu_status st = hzc_copy(dst, 1, m->in, 1, raw, m->device, NULL);
    return st == H5ZGPU_OK ? hzc_sum(dst, raw, sum, m->device, NULL) : st;
}

static h5zgpu_status made_put_header(const hz_runner *r, uint8_t *dst, const uint8_t *hdr,
                                     size_t len)
{
    const made_run *m = r->ctx;
    (void)dst;   /* copied with the group's other headers */
    memcpy(m->hdr, hdr, len);
    *m->hlen = len;
    return H5ZGPU_OK;
}

/* Whether the chunks may be coded together: the fixed-length or the Huffman codec (not auto)
 * with an error bound, and outputs that hold any chunk (else the calls a chunk say what is
 * wrong); Huffman chunks of at most HZ_HUFFMAN_GROUP_CHUNK bytes of values, a shape its
 * payload takes, and payloads that start 4-aligned (its kernels store words). */
static int compress_eligible(const hz_batch *b)
{
    const h5zgpu_params *p = b->p;
    hf_geom hg;
    if ((p->codec != H5ZGPU_CODEC_FIXED && p->codec != H5ZGPU_CODEC_HUFFMAN) ||
        p->mode == H5ZGPU_MODE_RATIO || h5zgpu_params_check(p) != H5ZGPU_OK)
        return 0;
    const int huff = p->codec == H5ZGPU_CODEC_HUFFMAN;
    if (huff && hf_geom_init(&hg, p->rank, p->dims) != 0)
        return 0;
    if (huff && hz_count(p->rank, p->dims) * hz_esize(p->dtype) > HZ_HUFFMAN_GROUP_CHUNK)
        return 0;
    const size_t bound = h5zgpu_compress_bound(p), lo = hz_header_len(p->rank, 0);
    const size_t shift = hz_header_len(p->rank, HZ_FLAG_FILL) - lo;
    for (size_t i = 0; i < b->count; i++) {
        if (!b->in[i] || !b->out[i] || b->out_cap[i] < bound)
            return 0;
        if (huff && (((uintptr_t)b->out[i] + lo) % 4 || shift % 4))
            return 0;
    }
    return 1;
}

/* The per-group arrays of a compression, one set a thread (after the struct, the arrays). */
typedef struct enc_group {
    hzc_encode_result *r;
    h5zgpu_status *each;
    uint8_t **outs;
    uint8_t *hdrs;
    size_t *hlens;
} enc_group;

static void *enc_group_new(const group_pool *P)
{
    const size_t gs = P->gs;
    enc_group *G = malloc(sizeof *G + gs * (sizeof *G->r + sizeof *G->each + sizeof *G->outs +
                                            HZ_HDR_MAX + sizeof *G->hlens));
    if (!G)
        return NULL;
    /* eight-byte members first */
    G->r = (hzc_encode_result *)(G + 1);
    G->outs = (uint8_t **)(G->r + gs);
    G->hlens = (size_t *)(G->outs + gs);
    G->each = (h5zgpu_status *)(G->hlens + gs);
    G->hdrs = (uint8_t *)(G->each + gs);
    return G;
}

/* Chunks [from, from + k) coded in one pass on device dev, then written by the policy. A
 * failure of the pass returns before any chunk is written; a chunk's failure after it is
 * recorded. */
static h5zgpu_status compress_group(hz_batch *b, size_t from, unsigned k, int dev,
                                    const enc_group *G)
{
    const h5zgpu_params *p = b->p;
    const size_t lo = hz_header_len(p->rank, 0);
    const int huff = p->codec == H5ZGPU_CODEC_HUFFMAN;
    hzc_encode_args a = {.mode = p->mode, .eb = p->eb, .is_f32 = p->dtype == H5ZGPU_FLOAT32,
                         .keep = hz_keeps_fine_codes(p), .radius = hf_radius(p->radius),
                         .has_fill = p->has_fill, .fill_bits = hz_fill_bits(p),
                         .in_dev = 1, .out_dev = 1,
                         .fill_shift = hz_header_len(p->rank, HZ_FLAG_FILL) - lo,
                         .cap = hz_count(p->rank, p->dims) * hz_esize(p->dtype), .device = dev};
    for (unsigned i = 0; i < k; i++)
        G->outs[i] = (uint8_t *)b->out[from + i] + lo;
    h5zgpu_status st;
    if (huff) {
        hf_geom hg;
        hf_geom_init(&hg, p->rank, p->dims);
        st = hzc_huff_encode_batch(&hg, &a, k, b->in + from, G->outs, G->r, G->each);
    } else {
        fl_geom g;
        fl_geom_init(&g, p->rank, p->dims);
        st = hzc_fixed_encode_batch(&g, &a, k, b->in + from, G->outs, G->r, G->each);
    }
    if (st != H5ZGPU_OK)
        return st;
    unsigned w = 0;   /* the chunks written */
    for (; w < k; w++) {
        const size_t c = from + w;
        const hzc_encode_result *r = &G->r[w];
        hz_payload res = {.len = r->len, .eb_abs = r->eb_abs, .sum = r->sum,
                          .held_fill = r->held_fill, .fill_bits = r->fill_bits};
        made_run m = {&res, G->each[w], b->in[c], b->device, G->hdrs + w * HZ_HDR_MAX,
                      &G->hlens[w]};
        hz_runner run = {.p = p, .encode = made_encode, .store_raw = made_store_raw,
                         .put_header = made_put_header, .ctx = &m};
        b->taken[c] = 1;
        hz_batch_record(b, c, hz_write_chunk(&run, b->out[c], b->out_cap[c], &b->out_len[c]));
        if (b->st[c] != H5ZGPU_OK)
            break;
    }
    for (unsigned i = 0; i < w; i++)
        G->outs[i] = b->out[from + i];   /* the headers go in front */
    if ((st = hzc_put_many(w, G->hdrs, HZ_HDR_MAX, G->hlens, G->outs, dev)) != H5ZGPU_OK)
        hz_batch_record(b, from, st);
    return H5ZGPU_OK;
}

static void compress_run(group_pool *P, size_t j, void *scratch)
{
    hz_batch *b = P->b;
    const size_t from = j * P->gs;
    if (hz_batch_past_failure(b, from))
        return;
    const unsigned k = b->count - from < P->gs ? (unsigned)(b->count - from) : P->gs;
    /* a pass that fails writes no chunk: the calls a chunk then take the group's chunks, each
     * needing a fraction of a group's device memory (H5ZGPU_GPU_MEMORY_LIMIT), and report a
     * failure of their own */
    (void)compress_group(b, from, k, b->device, scratch);
}

static void compress_all(hz_batch *b)
{
    const h5zgpu_params *p = b->p;
    const unsigned gs =
        group_size_of(p->codec, b->count, hz_count(p->rank, p->dims) * hz_esize(p->dtype));
    group_pool P = {.b = b, .ngroups = (b->count + gs - 1) / gs, .run = compress_run,
                    .scratch_new = enc_group_new, .gs = gs};
    run_groups(&P);
}

/* ---- decompression --------------------------------------------------------------------------- */

/* The header of chunk i into h from its bytes at hdr (copied from the device), 0 when it does
 * not read: the call a chunk then says why. */
static int read_header(const hz_batch *b, size_t i, const uint8_t *hdr, hz_header *h)
{
    if (b->in_len[i] < HZ_HDR_FIXED)
        return 0;
    const unsigned rank = hdr[8] <= H5ZGPU_MAX_RANK ? hdr[8] : 0;
    const size_t hlen = hz_header_len(rank, hdr[9]);
    return rank && hz_header_parse(hdr, b->in_len[i] >= hlen ? hlen : b->in_len[i],
                                   b->in_len[i], h) == H5ZGPU_OK;
}

/* The per-group arrays of a decompression, one set a thread (after the struct, the arrays). */
typedef struct dec_group {
    hz_header *h;
    const void **pay;
    void **outs;
    uint32_t *sum;
    h5zgpu_status *each;
    const size_t *idx;      /* the group's chunks */
} dec_group;

static void *dec_group_new(const group_pool *P)
{
    const size_t gs = P->gs;
    dec_group *G = malloc(sizeof *G + gs * (sizeof *G->h + sizeof *G->pay + sizeof *G->outs +
                                            sizeof *G->sum + sizeof *G->each));
    if (!G)
        return NULL;
    /* eight-byte members first */
    G->h = (hz_header *)(G + 1);
    G->pay = (const void **)(G->h + gs);
    G->outs = (void **)(G->pay + gs);
    G->each = (h5zgpu_status *)(G->outs + gs);
    G->sum = (uint32_t *)(G->each + gs);
    return G;
}

/* Chunks G->idx[0..k) (headers all[]) decoded in one pass on device dev; their checksums
 * checked. */
static h5zgpu_status decompress_group(hz_batch *b, unsigned k, int dev, const uint8_t *hdrs,
                                      const hz_header *all, dec_group *G)
{
    for (unsigned j = 0; j < k; j++) {
        const size_t i = G->idx[j];
        G->h[j] = all[i];
        G->pay[j] = (const uint8_t *)b->in[i] + hz_header_len(G->h[j].rank, G->h[j].flags);
        G->outs[j] = b->out[i];
    }
    const hz_header *h0 = &G->h[0];
    const int huff = h0->codec == H5ZGPU_CODEC_HUFFMAN;
    h5zgpu_status st;
    if (huff) {
        hf_geom g;
        hf_geom_init(&g, h0->rank, h0->dims);
        st = hzc_huff_decode_batch(&g, k, G->h, G->pay, G->outs, dev, G->sum, G->each);
    } else {
        fl_geom g;
        fl_geom_init(&g, h0->rank, h0->dims);
        st = hzc_fixed_decode_batch(&g, k, G->h, G->pay, 1, G->outs, dev, G->sum, G->each);
    }
    if (st != H5ZGPU_OK)
        return st;
    for (unsigned j = 0; j < k; j++) {
        const size_t i = G->idx[j];
        const uint8_t *hdr = hdrs + i * HZ_HDR_MAX;
        st = G->each[j] != H5ZGPU_OK
                 ? hz_fail(G->each[j], huff ? "Huffman payload is malformed (a code, length or "
                                              "position is invalid): the chunk is damaged"
                                            : "fixed-length payload is malformed (a length, code "
                                              "or offset is out of range): the chunk is damaged")
                 : hz_check_sum(hdr, &G->h[j], G->sum[j]);
        b->taken[i] = 1;
        if (st == H5ZGPU_OK)
            b->out_len[i] = hz_count(G->h[j].rank, G->h[j].dims) * hz_esize(G->h[j].dtype);
        hz_batch_record(b, i, st);
    }
    return H5ZGPU_OK;
}

/* Whether chunk i (header h) joins the group of the chunk with header h0: fixed-length, or
 * Huffman of at most HZ_HUFFMAN_GROUP_CHUNK bytes of values in a shape its payload takes; the
 * same codec, shape and element type as h0; and room for its values. */
static int joins(const hz_batch *b, size_t i, const hz_header *h, const hz_header *h0)
{
    const uint64_t raw = hz_count(h->rank, h->dims) * hz_esize(h->dtype);
    hf_geom hg;
    const int coded = h->codec == H5ZGPU_CODEC_FIXED ||
                      (h->codec == H5ZGPU_CODEC_HUFFMAN && raw <= HZ_HUFFMAN_GROUP_CHUNK &&
                       hf_geom_init(&hg, h->rank, h->dims) == 0);
    return coded && h->codec == h0->codec && h->rank == h0->rank && h->dtype == h0->dtype &&
           memcmp(h->dims, h0->dims, h->rank * sizeof h->dims[0]) == 0 && b->out[i] &&
           b->out_cap[i] >= raw;
}

/* The groups of a decompression: group j is chunks idx[start[j] .. start[j + 1]). */
typedef struct dec_plan {
    const hz_header *all;
    const uint8_t *hdrs;    /* device chunks' headers, HZ_HDR_MAX apart */
    size_t *idx, *start;
} dec_plan;

static void decompress_run(group_pool *P, size_t j, void *scratch)
{
    const dec_plan *D = P->ctx;
    dec_group *G = scratch;
    const size_t first = D->idx[D->start[j]];
    if (hz_batch_past_failure(P->b, first))
        return;
    G->idx = D->idx + D->start[j];
    const h5zgpu_status st = decompress_group(P->b, (unsigned)(D->start[j + 1] - D->start[j]),
                                              P->b->device, D->hdrs, D->all, G);
    if (st != H5ZGPU_OK)
        group_failed(P, first, st);
}

static void decompress_all(hz_batch *b)
{
    const size_t n = b->count;
    uint8_t *hdrs = NULL;
    hz_header *all = malloc(n * sizeof *all);
    unsigned char *ok = calloc(n, 1), *placed = calloc(n, 1);
    size_t *idx = malloc(n * sizeof *idx), *start = malloc((n + 1) * sizeof *start);
    if (!all || !ok || !placed || !idx || !start)
        goto done;
    for (size_t i = 0; i < n; i++)
        if (!b->in[i])
            goto done;   /* the calls a chunk say so */
    /* the headers, in one copy */
    if (!(hdrs = malloc(n * HZ_HDR_MAX)))
        goto done;
    for (size_t i = 0; i < n; i++)
        idx[i] = b->in_len[i] < HZ_HDR_MAX ? b->in_len[i] : HZ_HDR_MAX;
    if (hzc_get_many((unsigned)n, b->in, idx, hdrs, HZ_HDR_MAX, b->device) != H5ZGPU_OK)
        goto done;
    size_t joined = 0;
    for (size_t i = 0; i < n; i++) {
        ok[i] = read_header(b, i, hdrs + i * HZ_HDR_MAX, &all[i]);
        joined += ok[i] && joins(b, i, &all[i], &all[i]);
    }
    /* groups: the first chunk not yet placed that may join one, then those like it */
    size_t ng = 0, used = 0;
    unsigned gs = 1;   /* the largest group */
    for (size_t first = 0; first < n; first++) {
        if (placed[first] || !ok[first] || !joins(b, first, &all[first], &all[first]))
            continue;
        const hz_header *h0 = &all[first];
        const uint64_t raw = hz_count(h0->rank, h0->dims) * hz_esize(h0->dtype);
        const unsigned most = group_size_of((h5zgpu_codec)h0->codec, joined, raw);
        start[ng++] = used;
        for (size_t i = first; i < n && used - start[ng - 1] < most; i++)
            if (!placed[i] && ok[i] && joins(b, i, &all[i], h0)) {
                placed[i] = 1;
                idx[used++] = i;
            }
        gs = used - start[ng - 1] > gs ? (unsigned)(used - start[ng - 1]) : gs;
    }
    start[ng] = used;
    dec_plan D = {all, hdrs, idx, start};
    group_pool P = {.b = b, .ngroups = ng, .run = decompress_run,
                    .scratch_new = dec_group_new, .ctx = &D, .gs = gs};
    if (ng)
        run_groups(&P);
done:
    free(hdrs);
    free(all);
    free(ok);
    free(placed);
    free(idx);
    free(start);
}

void hz_batch_group(hz_batch *b)
{
    if (b->count == 0 || b->device < 0)
        return;
    if (b->p && compress_eligible(b))
        compress_all(b);
    else if (!b->p)
        decompress_all(b);
}
#else
void hz_batch_group(hz_batch *b)
{
    (void)b;   /* no device buffers in this build */
}
#endif
