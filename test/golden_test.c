/* Golden chunks (test/golden/): each must still decode to the same values, alone and in a batch
 * of them all, and today's encoder must still write the same bytes for the cases of today's
 * format version, on whichever executor H5ZGPU_DEVICE picks. Each chunk must also still
 * exercise what its case says it covers (cases.c). */
#include "golden/cases.h"

#include <stdlib.h>
#include <string.h>

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    long size;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)size)) && fread(buf, 1, (size_t)size, f) == (size_t)size) {
        *len = (size_t)size;
    } else {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

/* The expected hashes of one case from expected.txt; 0 when it is not listed. */
static int expected(const char *dir, const char *name, unsigned long long *in_hash,
                    unsigned long long *out_hash)
{
    char path[4096], line[512], got[256];
    snprintf(path, sizeof path, "%s/%s", dir, GOLDEN_EXPECTED);
    FILE *f = fopen(path, "r");
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        found = sscanf(line, "%255s %llx %llx", got, in_hash, out_hash) == 3 &&
                strcmp(got, name) == 0;
    if (f)
        fclose(f);
    return found;
}

/* Offsets in the Huffman payload (docs/FORMAT.md, "Huffman payload"). */
#define HUFF_OFF_FORM 8u
#define HUFF_OFF_ORDER 9u   /* the predictor */
#define HUFF_OFF_RUN_TOKEN 12u
#define HUFF_OFF_AXES 14u          /* format version 4 */
#define HUFF_OFF_COUNT_BYTES 15u   /* format version 5 */
#define HUFF_OFF_N_OUT 16u
#define HUFF_ANS_TABLES 28u        /* the ANS form's tables */
#define HUFF_ANS_BOOKS 32u         /* format version 6: head numbers of built-in tables */
#define HUFF_OFF_N_VERB 20u
#define HUFF_FIXED_LEN 24u

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The built-in tables of a format version 6 ANS payload: tables with head numbers 1..32, the
 * others (empty or stored) read past. */
static unsigned ans_books(const uint8_t *pay)
{
    const unsigned ntab = pay[HUFF_OFF_ORDER] == 0 ? 12u : 3u;
    unsigned books = 0;
    size_t k = 0;
    for (unsigned t = 0; t < ntab; t++) {
        const uint32_t h = tu_nib_read(pay + HUFF_ANS_TABLES, &k);
        books += h >= 1 && h <= HUFF_ANS_BOOKS;
        for (uint32_t i = 0; h > HUFF_ANS_BOOKS && i < h - HUFF_ANS_BOOKS; i++)
            if (tu_nib_read(pay + HUFF_ANS_TABLES, &k) == 0)
                i += tu_nib_read(pay + HUFF_ANS_TABLES, &k);
    }
    return books;
}

static void check_covers(const golden_case *c, const uint8_t *chunk, const h5zgpu_info *info)
{
    const golden_covers *w = &c->covers;
    if (w->codec == 0)
        return;
    tu_expect(info->codec == w->codec, "%s: written with codec %u, the case covers codec %u",
              c->name, info->codec, w->codec);
    if (info->codec != H5ZGPU_CODEC_HUFFMAN || info->payload_len < HUFF_FIXED_LEN)
        return;
    const uint8_t *pay = chunk + info->header_len;
    unsigned form = pay[HUFF_OFF_FORM], order = pay[HUFF_OFF_ORDER];
    unsigned run_token = pay[HUFF_OFF_RUN_TOKEN] | (unsigned)pay[HUFF_OFF_RUN_TOKEN + 1] << 8;
    uint32_t n_out = get_u32(pay + HUFF_OFF_N_OUT), n_verb = get_u32(pay + HUFF_OFF_N_VERB);
    unsigned axes = pay[HUFF_OFF_AXES], count_bytes = pay[HUFF_OFF_COUNT_BYTES];
    unsigned books = info->format_version >= 6 && form == 3 ? ans_books(pay) : 0u;
    tu_expect(form == w->form && order == w->order && run_token == w->run_token &&
                  (n_out > 0) == w->outliers && (n_verb > 0) == w->verbatim &&
                  axes == w->axes && count_bytes == w->count_bytes && books == w->books,
              "%s: Huffman form %u, order %u, run token %u, %u outliers, %u verbatim values, "
              "axes %u, count bytes %u, books %u; the case covers form %u, order %u, run token "
              "%u, %s outliers, %s verbatim values, axes %u, count bytes %u, books %u",
              c->name, form, order, run_token, n_out, n_verb, axes, count_bytes, books, w->form,
              w->order, w->run_token, w->outliers ? "some" : "no", w->verbatim ? "some" : "no",
              w->axes, w->count_bytes, w->books);
}

static void check_case(const char *dir, const golden_case *c)
{
    char path[4096], why[256];
    unsigned long long in_hash = 0, out_hash = 0;
    size_t n = (size_t)tu_count(&c->params), raw = n * tu_esize(c->params.dtype);
    size_t cap = h5zgpu_compress_bound(&c->params), len = 0, glen = 0;
    snprintf(path, sizeof path, "%s/%s.h5zg", dir, c->name);
    uint8_t *golden = read_file(path, &glen);
    void *in = malloc(raw), *back = malloc(raw), *chunk = malloc(cap);
    tu_expect(golden != NULL, "%s: cannot read %s", c->name, path);
    tu_expect(expected(dir, c->name, &in_hash, &out_hash), "%s: not listed in %s", c->name,
              GOLDEN_EXPECTED);
    if (!golden)
        goto done;
    tu_fill_shape(&c->params, c->pattern, c->seed, in);
    tu_expect(tu_fnv1a(in, raw) == in_hash, "%s: the input generator changed", c->name);

    h5zgpu_info info;
    h5zgpu_status st = h5zgpu_chunk_info(golden, glen, &info);
    unsigned version = (unsigned)(c->name[1] - '0');   /* "v1_" .. "v6_" */
    tu_expect(st == H5ZGPU_OK && info.format_version == version && info.raw_len == raw,
              "%s: header unreadable or not format version %u (%s)", c->name, version,
              h5zgpu_last_error());
    if (st == H5ZGPU_OK)
        check_covers(c, golden, &info);
    st = h5zgpu_decompress(golden, glen, back, raw, &len, NULL);
    tu_expect(st == H5ZGPU_OK && len == raw && tu_fnv1a(back, raw) == out_hash,
              "%s: golden chunk decodes differently (%s)", c->name,
              st == H5ZGPU_OK ? "other values" : h5zgpu_last_error());
    if (st == H5ZGPU_OK) {
        /* a fixed-ratio chunk is held to the bound its header records */
        const int ratio = c->params.mode == H5ZGPU_MODE_RATIO;
        size_t misses = tu_check_bound(c->params.dtype, ratio ? info.mode : c->params.mode,
                                       ratio ? info.eb : c->params.eb, in, back, n, why,
                                       sizeof why);
        tu_expect(misses == 0, "%s: %zu values miss the bound; first: %s", c->name, misses, why);
    }
    /* older versions are read forever, and written no more; so are chunks of an earlier writer */
    if (version < H5ZGPU_FORMAT_VERSION || c->earlier_writer)
        goto done;
    st = h5zgpu_compress(&c->params, in, chunk, cap, &len, NULL);
    tu_expect(st == H5ZGPU_OK && len == glen && memcmp(chunk, golden, glen) == 0,
              "%s: the encoder no longer writes the golden bytes (%zu vs %zu bytes)", c->name, len,
              glen);
done:
    free(golden);
    free(in);
    free(back);
    free(chunk);
}

/* Every golden chunk in one h5zgpu_decompress_batch, in the cases' order and reversed: format
 * versions, codecs, modes, element types and shapes mixed, as a dataset rewritten across
 * versions holds them, and each chunk must decode as it does alone. (Device batches, whose
 * chunks share launches, are held to the same by gpu_identity's mixed batch.) */
static void check_batch(const char *dir, int reversed)
{
    const size_t n = golden_count;
    const void **in = calloc(n, sizeof *in);
    void **out = calloc(n, sizeof *out);
    size_t *in_len = calloc(n, sizeof *in_len), *cap = calloc(n, sizeof *cap);
    size_t *got = calloc(n, sizeof *got), *which = calloc(n, sizeof *which), k = 0, done = 0;
    unsigned long long *want = calloc(n, sizeof *want), in_hash;
    const int ok = in && out && in_len && cap && got && which && want;
    tu_expect(ok, "no memory for the batch");
    for (size_t j = 0; ok && j < n; j++) {
        const golden_case *c = &golden_cases[reversed ? n - 1 - j : j];
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.h5zg", dir, c->name);
        cap[k] = (size_t)tu_count(&c->params) * tu_esize(c->params.dtype);
        in[k] = read_file(path, &in_len[k]);
        out[k] = malloc(cap[k]);
        which[k] = reversed ? n - 1 - j : j;
        if (in[k] && out[k] && expected(dir, c->name, &in_hash, &want[k]))
            k++;   /* a chunk that cannot be read failed check_case already */
        else {
            free((void *)in[k]);
            free(out[k]);
        }
    }
    h5zgpu_status st =
        ok ? h5zgpu_decompress_batch(k, in, in_len, out, cap, got, NULL, &done) : H5ZGPU_E_NOMEM;
    tu_expect(st == H5ZGPU_OK && done == k, "a batch of the %zu golden chunks%s: %s (%zu done)",
              k, reversed ? ", reversed" : "", h5zgpu_last_error(), done);
    for (size_t j = 0; st == H5ZGPU_OK && j < k; j++)
        tu_expect(got[j] == cap[j] && tu_fnv1a(out[j], cap[j]) == want[j],
                  "%s: decodes differently in a batch of every golden chunk%s",
                  golden_cases[which[j]].name, reversed ? ", reversed" : "");
    for (size_t j = 0; j < k; j++) {
        free((void *)in[j]);
        free(out[j]);
    }
    free(in);
    free(out);
    free(in_len);
    free(cap);
    free(got);
    free(which);
    free(want);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: golden_test GOLDEN_DIR\n");
        return 2;
    }
    for (size_t i = 0; i < golden_count; i++)
        check_case(argv[1], &golden_cases[i]);
    check_batch(argv[1], 0);
    check_batch(argv[1], 1);
    return tu_done("golden");
}
