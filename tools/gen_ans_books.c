/* gen_ans_books: the ANS form's built-in tables of format version 6 (huff_ans_books.h), from
 * the Nyx-like fields. Chunks of 32^3 and 64^3 of each field are coded at six REL bounds; the
 * tables' token counts (about 15,000 tables of 256 tokens or fewer) are clustered into
 * HF_ANS_BOOKS distributions by the cost the writer measures (hf_ans_cost), each table going to
 * the book that codes it for least, each book the mean of its tables' distributions. The books
 * are then ordered by how many tables the writer's rule would give them (the first seven have
 * one-nibble numbers).
 *   python3 bench/gen_nyx_like.py DIR 256 11 && build/tools/gen_ans_books DIR 256 >
 *     codec/src/huff_ans_books.h
 * The tables are part of the format: this program documents how they were made, and what it
 * writes must never replace a released family (a new family is a new format version). Fields
 * generated again differ in their last bits (the FFT library's), and the clustering follows
 * them: a rerun gives a family as good, not the same numbers. */
#include "huff.h"
#include "huff_ans.h"
#include "huff_axes.h"
#include "quant.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOOKS 32u        /* the family's size */
#define MOST 256u        /* tokens a book covers at most */
#define ROUNDS 16u

typedef struct table {
    unsigned m;
    uint64_t total;
    uint32_t count[MOST];
    uint32_t freq[MOST];   /* its own frequencies, as the writer makes them */
} table;

typedef struct book {
    unsigned m;
    double p[MOST];
    uint32_t freq[MOST], cost[MOST];
} book;

static table *tabs;
static size_t ntabs, captabs;

static void add_tables(uint32_t (*count)[2 * HF_RADIUS_MAX], unsigned ntab, unsigned R)
{
    for (unsigned b = 0; b < ntab; b++) {
        unsigned m = 0;
        uint64_t total = 0;
        for (unsigned t = 0; t < 2 * R; t++) {
            m = count[b][t] ? t + 1 : m;
            total += count[b][t];
        }
        if (!m || m > MOST)
            continue;
        if (ntabs == captabs) {
            captabs = captabs ? 2 * captabs : 4096;
            tabs = realloc(tabs, captabs * sizeof *tabs);
            if (!tabs)
                exit(1);
        }
        table *T = &tabs[ntabs++];
        memset(T, 0, sizeof *T);
        T->m = m;
        T->total = total;
        memcpy(T->count, count[b], m * sizeof *T->count);
        hf_ans_normalize(T->count, m, total, T->freq);
    }
}

/* One chunk of c^3 at (z, y, x) of the n^3 field, coded at REL eb; its tables' counts kept. */
static void code_chunk(const float *field, unsigned n, unsigned c, unsigned z, unsigned y,
                       unsigned x, double eb)
{
    const uint64_t dims[3] = {c, c, c}, cn = (uint64_t)c * c * c;
    float *in = malloc(cn * sizeof *in);
    uint8_t *out = malloc(cn * 8 + 65536);
    uint16_t *tok = malloc(cn * sizeof *tok);
    uint32_t(*count)[2 * HF_RADIUS_MAX] = malloc(HF_ANS_TABLES * sizeof *count);
    hf_trace *T = calloc(1, sizeof *T);
    if (!in || !out || !tok || !count || !T)
        exit(1);
    for (unsigned i = 0; i < c; i++)
        for (unsigned j = 0; j < c; j++)
            memcpy(in + ((uint64_t)i * c + j) * c,
                   field + (((uint64_t)z + i) * n + y + j) * n + x, c * sizeof *in);
    int any;
    double lo, hi;
    qz_census census;
    qz_quant F = {.is_f32 = 1}, Q;
    qz_stats_cpu(in, cn, &F, H5ZGPU_MODE_REL, &any, &lo, &hi, &census);
    qz_init(&Q, H5ZGPU_MODE_REL, eb, 1, any, lo, hi);
    Q.keep = 1;
    qz_choose_fill(&Q, 0, 0, &census);
    hf_geom g, cg;
    uint64_t len;
    const unsigned R = hf_radius(0);
    T->tok = tok;
    hf_geom_init(&g, 3, dims);
    if (hf_encode_traced(&g, &Q, R, in, out, cn * 8 + 65536, &len, T) == H5ZGPU_OK) {
        hf_axes_geom(&g, T->axes, &cg);
        hf_ans_count(&cg, T->pred, R, tok, count);
        add_tables(count, hf_ans_tables_of(T->pred), R);
    }
    free(in);
    free(out);
    free(tok);
    free(count);
    free(T);
}

/* A book's frequencies from its distribution: every token below m used, so that any table of
 * m tokens or fewer can take it. */
static void make_book(book *B)
{
    uint32_t c[MOST];
    uint64_t total = 0;
    for (unsigned t = 0; t < B->m; t++)
        total += c[t] = 1u + (uint32_t)(B->p[t] * (1u << 24));
    hf_ans_normalize(c, B->m, total, B->freq);
    for (unsigned t = 0; t < B->m; t++)
        B->cost[t] = hf_ans_cost(B->freq[t]);
}

static uint64_t book_bits(const book *B, const table *T)
{
    uint64_t bits = 0;
    for (unsigned t = 0; t < T->m; t++)
        bits += (uint64_t)T->count[t] * B->cost[t];
    return bits;
}

/* The writer's rule (huff_ans.c, pick_book): the table's own cost and nibbles against each
 * book's; the book chosen (1-based, as numbered in order) or 0, and the saving. */
static unsigned writer_pick(const book *bk, const unsigned *order, const table *T,
                            uint64_t *own, uint64_t *saved)
{
    uint64_t best = 1024u * hf_ans_table_nibbles(0, T->freq, T->m);
    for (unsigned t = 0; t < T->m; t++)
        best += T->count[t] * (uint64_t)hf_ans_cost(T->freq[t]);
    *own = best;
    unsigned pick = 0;
    for (unsigned s = 1; s <= BOOKS; s++) {
        const book *B = &bk[order[s - 1]];
        if (B->m < T->m)
            continue;
        const uint64_t bits = 1024u * hf_nib_len(s) + book_bits(B, T);
        if (bits < best) {
            best = bits;
            pick = s;
        }
    }
    *saved = *own - best;
    return pick;
}

static double entropy(const table *T)
{
    double h = 0;
    for (unsigned t = 0; t < T->m; t++)
        if (T->count[t]) {
            const double q = (double)T->count[t] / T->total;
            h -= q * log2(q);
        }
    return h;
}

static int by_entropy(const void *a, const void *b)
{
    const double x = entropy(a), y = entropy(b);
    return x < y ? -1 : x > y;
}

static void print_array(const char *name, const uint32_t *v, size_t n)
{
    printf("#define %s \\\n    {", name);
    for (size_t i = 0; i < n; i++)
        printf("%s%u%s", i % 12 ? " " : "\\\n     ", v[i], i + 1 < n ? "," : "");
    printf("}\n");
}

int main(int argc, char **argv)
{
    static const char *fields[] = {"baryon_density", "dark_matter_density", "temperature",
                                   "velocity_x", "velocity_y", "velocity_z"};
    static const double bounds[] = {1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 1e-5};
    if (argc != 3) {
        fprintf(stderr, "usage: gen_ans_books DIR N (DIR/nyx_<field>.f32, N^3 float32)\n");
        return 2;
    }
    const unsigned n = (unsigned)atoi(argv[2]);
    float *field = malloc((size_t)n * n * n * sizeof *field);
    for (unsigned f = 0; f < 6; f++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/nyx_%s.f32", argv[1], fields[f]);
        FILE *fp = fopen(path, "rb");
        if (!fp || fread(field, sizeof *field, (size_t)n * n * n, fp) != (size_t)n * n * n) {
            fprintf(stderr, "gen_ans_books: cannot read %s\n", path);
            return 1;
        }
        fclose(fp);
        for (unsigned e = 0; e < sizeof bounds / sizeof *bounds; e++)
            for (unsigned c = 32; c <= 64; c *= 2) {
                const unsigned per = n / c, step = c == 32 ? 8 : 4;   /* 1/8, 1/4 of them */
                for (unsigned k = 0; k < per * per * per; k += step) {
                    const unsigned j = k + (k / step) % step;   /* not one column */
                    if (j < per * per * per)
                        code_chunk(field, n, c, j / (per * per) * c, j / per % per * c,
                                   j % per * c, bounds[e]);
                }
            }
    }
    free(field);
    fprintf(stderr, "gen_ans_books: %zu tables\n", ntabs);
    qsort(tabs, ntabs, sizeof *tabs, by_entropy);

    static book bk[BOOKS];
    unsigned *of = malloc(ntabs * sizeof *of);
    for (unsigned j = 0; j < BOOKS; j++) {   /* the first books: quantiles of the entropy */
        const size_t a = ntabs * j / BOOKS, b = ntabs * (j + 1) / BOOKS;
        for (size_t i = a; i < b; i++)
            of[i] = j;
    }
    for (unsigned r = 0; r <= ROUNDS; r++) {
        if (r > 0)   /* each table to its cheapest book */
            for (size_t i = 0; i < ntabs; i++) {
                uint64_t best = UINT64_MAX;
                for (unsigned j = 0; j < BOOKS; j++) {
                    if (bk[j].m < tabs[i].m)
                        continue;
                    const uint64_t bits = book_bits(&bk[j], &tabs[i]);
                    if (bits < best) {
                        best = bits;
                        of[i] = j;
                    }
                }
            }
        for (unsigned j = 0; j < BOOKS; j++) {   /* each book the mean of its tables */
            book nb = {0};
            size_t members = 0;
            for (size_t i = 0; i < ntabs; i++) {
                if (of[i] != j)
                    continue;
                members++;
                nb.m = tabs[i].m > nb.m ? tabs[i].m : nb.m;
                for (unsigned t = 0; t < tabs[i].m; t++)
                    nb.p[t] += (double)tabs[i].count[t] / tabs[i].total;
            }
            if (!members)
                continue;   /* keeps what it had */
            for (unsigned t = 0; t < nb.m; t++)
                nb.p[t] /= (double)members;
            bk[j] = nb;
            make_book(&bk[j]);
        }
    }

    /* the writer's rule over every table: order the books by the tables they win */
    unsigned order[BOOKS], wins[BOOKS] = {0};
    for (unsigned j = 0; j < BOOKS; j++)
        order[j] = j;
    uint64_t own_all = 0, saved_all = 0, own_i, saved_i;
    for (size_t i = 0; i < ntabs; i++) {
        const unsigned s = writer_pick(bk, order, &tabs[i], &own_i, &saved_i);
        if (s)
            wins[s - 1]++;
    }
    for (unsigned a = 0; a < BOOKS; a++)   /* most wins first; the lower book on a tie */
        for (unsigned b = a + 1; b < BOOKS; b++)
            if (wins[order[b]] > wins[order[a]] ||
                (wins[order[b]] == wins[order[a]] && order[b] < order[a])) {
                const unsigned o = order[a];
                order[a] = order[b];
                order[b] = o;
            }
    size_t taken = 0;
    for (size_t i = 0; i < ntabs; i++) {
        taken += writer_pick(bk, order, &tabs[i], &own_i, &saved_i) != 0;
        own_all += own_i;
        saved_all += saved_i;
    }
    fprintf(stderr, "gen_ans_books: %zu of %zu tables take a book; %.2f%% of the tables' "
                    "tokens and stored tables saved\n",
            taken, ntabs, 100.0 * saved_all / own_all);

    static uint32_t ms[BOOKS], start[BOOKS], freq[BOOKS * MOST];
    size_t k = 0;
    unsigned most = 0;
    for (unsigned s = 0; s < BOOKS; s++) {
        const book *B = &bk[order[s]];
        ms[s] = B->m;
        start[s] = (uint32_t)k;
        most = B->m > most ? B->m : most;
        for (unsigned t = 0; t < B->m; t++)
            freq[k++] = B->freq[t];
    }
    printf("/* The ANS form's built-in tables of format version 6 (docs/FORMAT.md, \"ANS form\"):\n"
           " * book s (1..HF_ANS_BOOKS) covers tokens 0..HF_ANS_BOOK_M[s - 1] - 1, every one"
           " used,\n"
           " * with frequencies HF_ANS_BOOK_FREQ from HF_ANS_BOOK_START[s - 1] adding up to"
           " 2^14.\n"
           " * Written by tools/gen_ans_books.c from the Nyx-like fields; part of the format,"
           " never to\n"
           " * change. */\n"
           "#ifndef H5ZGPU_HUFF_ANS_BOOKS_H\n#define H5ZGPU_HUFF_ANS_BOOKS_H\n\n"
           "#define HF_ANS_BOOKS %uu\n"
           "#define HF_ANS_BOOK_MOST %uu   /* the longest book's tokens */\n",
           BOOKS, most);
    print_array("HF_ANS_BOOK_M", ms, BOOKS);
    print_array("HF_ANS_BOOK_START", start, BOOKS);
    print_array("HF_ANS_BOOK_FREQ", freq, k);
    printf("\n#endif\n");
    free(of);
    free(tabs);
    return 0;
}
