/* The GPU's stages against the CPU reference's, one stage at a time, so that a difference names
 * the stage it starts in rather than only a differing chunk (gpu_identity):
 *   both codecs   the quantiser the statistics set up (bound applied, code offset or base, fill)
 *   fixed-length  the payload's tables (anchor, tile masks and predictors, fill masks), then the
 *                 block headers, then the block payloads
 *   Huffman       the axis costs and order, the sampled Lorenzo costs, the predictor, every
 *                 token, the outlier and verbatim counts, form 0's histogram, the form and the
 *                 best Huffman codebook's lengths, the payload size, each sub-chunk's stream
 *                 bits (Huffman forms), then the payload's bytes
 * over synthetic fields (smooth, noisy, spiky, masked with fill values, 1-D to 3-D, float32 and
 * float64, ABS/REL/PWREL, bounds that choose Lorenzo and interpolation, and each Huffman form)
 * and, given as arguments, whole raw float32 fields at REL 1e-2, 1e-3, 1e-4.
 *
 * usage: gpu_stages [FILE.f32 Z,Y,X]...
 * Exits 77 (skip) without a GPU. */
#include "util.h"

#include "backend_gpu.h"
#include "fixed.h"
#include "huff.h"

#include <stdlib.h>
#include <string.h>

#define SKIP_CODE 77

typedef struct stage_case {
    const char *name;
    h5zgpu_dtype t;
    h5zgpu_mode mode;
    double eb;
    unsigned rank;
    uint64_t dims[3];
    tu_pattern pat;
    int fill;   /* a fill value of -1e34 (the masked pattern's) */
} stage_case;

#define F32 H5ZGPU_FLOAT32
#define F64 H5ZGPU_FLOAT64
#define ABS H5ZGPU_MODE_ABS
#define REL H5ZGPU_MODE_REL
#define PWREL H5ZGPU_MODE_PWREL
static const stage_case cases[] = {
    {"smooth 3-D f32 REL 1e-3", F32, REL, 1e-3, 3, {40, 48, 70}, TU_FIELD, 0},
    {"smooth 3-D f32 REL 1e-2", F32, REL, 1e-2, 3, {40, 48, 70}, TU_FIELD, 0},
    {"smooth 3-D f64 ABS 1e-6", F64, ABS, 1e-6, 3, {33, 17, 65}, TU_FIELD, 0},
    {"noise 1-D f32 ABS 1e-3", F32, ABS, 1e-3, 1, {70001}, TU_NOISE, 0},
    {"spiky 2-D f32 ABS 1e-3", F32, ABS, 1e-3, 2, {300, 257}, TU_SPIKY, 0},
    {"masked 3-D f32 REL 1e-3", F32, REL, 1e-3, 3, {20, 64, 64}, TU_MASKED, 1},
    {"masked 2-D f64 ABS 1e-2", F64, ABS, 1e-2, 2, {129, 200}, TU_MASKED, 1},
    {"smooth 2-D f32 PWREL 1e-2", F32, PWREL, 1e-2, 2, {256, 300}, TU_FIELD, 0},
    {"smooth 3-D f64 PWREL 1e-4", F64, PWREL, 1e-4, 3, {16, 32, 33}, TU_FIELD, 0},
    {"constant 1-D f32 ABS 1e-3", F32, ABS, 1e-3, 1, {50000}, TU_CONSTANT, 0},
    {"NaN-masked 3-D f32 REL 1e-3", F32, REL, 1e-3, 3, {20, 64, 64}, TU_NAN_MASKED, 0},
    {"NaN-masked 2-D f64 ABS 1e-2", F64, ABS, 1e-2, 2, {129, 200}, TU_NAN_MASKED, 0},
};

static unsigned checks, tallies[4]; /* Huffman predictor 0 (interpolation), orders 1-3 */

/* Records one stage's comparison; returns whether it held. */
static int stage(const char *label, const char *what, int same)
{
    checks++;
    tu_expect(same, "%s: the GPU's %s differ from the CPU's", label, what);
    return same;
}

/* The CPU's quantiser for the chunk: the statistics, set-up and fill value hz_write_chunk's
 * runner uses. */
static void cpu_quant(const h5zgpu_params *p, const void *in, qz_quant *Q)
{
    int any;
    double lo, hi;
    qz_census census;
    qz_quant F = {.is_f32 = p->dtype == H5ZGPU_FLOAT32, .has_fill = p->has_fill,
                  .fill_bits = hz_fill_bits(p)};
    qz_stats_cpu(in, tu_count(p), &F, p->mode, &any, &lo, &hi, &census);
    qz_init(Q, p->mode, p->eb, F.is_f32, any, lo, hi);
    Q->keep = p->codec != H5ZGPU_CODEC_FIXED;
    qz_choose_fill(Q, F.has_fill, F.fill_bits, &census);
}

static int same_quant(const qz_quant *a, const qz_quant *b)
{
    return a->eb == b->eb && a->k0 == b->k0 && a->base == b->base && a->twoeb == b->twoeb &&
           a->has_fill == b->has_fill && a->keep == b->keep &&
           (!a->has_fill || a->fill_bits == b->fill_bits) && a->has_exact == b->has_exact &&
           (!a->has_exact || memcmp(&a->exact, &b->exact, 8) == 0);
}

static hzc_encode_args gpu_args(const h5zgpu_params *p, const void *in, uint8_t *out,
                                uint64_t cap, qz_quant *Q, hf_trace *T)
{
    hzc_encode_args a = {.mode = p->mode, .eb = p->eb, .is_f32 = p->dtype == H5ZGPU_FLOAT32,
                         .keep = p->codec != H5ZGPU_CODEC_FIXED, .radius = hf_radius(p->radius),
                         .has_fill = p->has_fill, .fill_bits = hz_fill_bits(p), .in = in,
                         .out = out, .cap = cap, .quant = Q, .trace = T};
    return a;
}

static void fixed_stages(const char *label, const h5zgpu_params *p, const void *in)
{
    fl_geom g;
    fl_geom_init(&g, p->rank, p->dims);
    const uint64_t raw = tu_count(p) * tu_esize(p->dtype);
    uint8_t *cpu = malloc(raw), *gpu = malloc(raw);
    qz_quant Qc, Qg;
    cpu_quant(p, in, &Qc);
    uint64_t lc = 0;
    h5zgpu_status sc = fl_encode_cpu(&g, &Qc, in, cpu, raw, &lc);
    hzc_encode_args a = gpu_args(p, in, gpu, raw, &Qg, NULL);
    hzc_encode_result r;
    h5zgpu_status sg = hzc_fixed_encode(&g, &a, &r);
    if (stage(label, "fixed-length quantiser (statistics)", same_quant(&Qc, &Qg)) &&
        stage(label, "fixed-length outcome", sc == sg && (sc != H5ZGPU_OK || lc == r.len)) &&
        sc == H5ZGPU_OK) {
        /* the sections in payload order: tables, then headers (one byte a non-empty block,
         * counted by the tile masks), then block payloads */
        const uint64_t tables = fl_tables_size(&g, Qc.has_fill);
        uint64_t nhdr = 0;
        for (uint64_t t = 0; t < g.ntiles; t++)
            nhdr += (uint64_t)__builtin_popcount(hz_get_u32(cpu + FL_OFF_MASKS + 4 * t));
        if (stage(label, "fixed-length tables (anchor, tile masks, predictors)",
                  memcmp(cpu, gpu, tables) == 0) &&
            stage(label, "fixed-length block headers",
                  memcmp(cpu + tables, gpu + tables, nhdr) == 0))
            stage(label, "fixed-length block payloads",
                  memcmp(cpu + tables + nhdr, gpu + tables + nhdr, lc - tables - nhdr) == 0);
    }
    free(cpu);
    free(gpu);
}

static void huff_stages(const char *label, const h5zgpu_params *p, const void *in)
{
    hf_geom g;
    if (hf_geom_init(&g, p->rank, p->dims) != 0)
        return;
    const uint64_t raw = tu_count(p) * tu_esize(p->dtype);
    const unsigned R = hf_radius(p->radius);
    uint8_t *cpu = malloc(raw), *gpu = malloc(raw);
    hf_trace *Tc = calloc(1, sizeof *Tc), *Tg = calloc(1, sizeof *Tg);
    Tc->tok = malloc(g.n * sizeof *Tc->tok);
    Tg->tok = malloc(g.n * sizeof *Tg->tok);
    Tc->subbits = calloc(g.nsub, sizeof *Tc->subbits);
    Tg->subbits = calloc(g.nsub, sizeof *Tg->subbits);
    qz_quant Qc, Qg;
    cpu_quant(p, in, &Qc);
    uint64_t lc = 0;
    h5zgpu_status sc = hf_encode_traced(&g, &Qc, R, in, cpu, raw, &lc, Tc);
    hzc_encode_args a = gpu_args(p, in, gpu, raw, &Qg, Tg);
    hzc_encode_result r;
    h5zgpu_status sg = hzc_huff_encode(&g, &a, &r);
    /* the token alphabet of the chosen form: its codebook's lengths are compared up to it */
    const unsigned nsym = Tc->form == HF_FORM_CODES ? 2 * R : 2 * R + HF_RUN_MAX;
    int ok = stage(label, "Huffman quantiser (statistics)", same_quant(&Qc, &Qg)) &&
             stage(label, "axis costs and order",
                   memcmp(Tc->axes_cost, Tg->axes_cost, sizeof Tc->axes_cost) == 0 &&
                       Tc->axes == Tg->axes) &&
             stage(label, "sampled Lorenzo costs",
                   memcmp(Tc->cost, Tg->cost, sizeof Tc->cost) == 0) &&
             stage(label, "predictor", Tc->pred == Tg->pred) &&
             stage(label, "tokens", memcmp(Tc->tok, Tg->tok, g.n * sizeof *Tc->tok) == 0) &&
             stage(label, "outlier and verbatim counts",
                   Tc->n_out == Tg->n_out && Tc->n_verb == Tg->n_verb) &&
             stage(label, "form 0 histogram",
                   memcmp(Tc->hist, Tg->hist, sizeof Tc->hist) == 0) &&
             stage(label, "form and run token", Tc->form == Tg->form && Tc->rs == Tg->rs) &&
             stage(label, "codebook lengths", memcmp(Tc->len, Tg->len, nsym) == 0) &&
             stage(label, "payload size", Tc->size == Tg->size) &&
             stage(label, "outcome", sc == sg && (sc != H5ZGPU_OK || lc == r.len));
    if (ok && sc == H5ZGPU_OK &&
        stage(label, "sub-chunk stream bits",
              memcmp(Tc->subbits, Tg->subbits, g.nsub * sizeof *Tc->subbits) == 0))
        stage(label, "payload bytes", memcmp(cpu, gpu, lc) == 0);
    if (Tc->pred < 4)
        tallies[Tc->pred]++;
    free(Tc->tok);
    free(Tg->tok);
    free(Tc->subbits);
    free(Tg->subbits);
    free(Tc);
    free(Tg);
    free(cpu);
    free(gpu);
}

static void run_case(const char *label, const h5zgpu_params *p, const void *in)
{
    h5zgpu_params q = *p;
    q.codec = H5ZGPU_CODEC_FIXED;
    fixed_stages(label, &q, in);
    q.codec = H5ZGPU_CODEC_HUFFMAN;
    for (unsigned radius = 0; radius <= 16; radius += 16) {   /* the default, 512, and 16 */
        q.radius = radius;
        huff_stages(label, &q, in);
    }
}

static int run_file(const char *path, const char *shape)
{
    h5zgpu_params p = {.dtype = H5ZGPU_FLOAT32, .mode = H5ZGPU_MODE_REL, .rank = 3};
    unsigned long long z, y, x;
    if (sscanf(shape, "%llu,%llu,%llu", &z, &y, &x) != 3) {
        fprintf(stderr, "gpu_stages: shape '%s' is not Z,Y,X\n", shape);
        return 0;
    }
    p.dims[0] = z, p.dims[1] = y, p.dims[2] = x;
    const size_t bytes = (size_t)(z * y * x) * 4;
    float *v = malloc(bytes);
    FILE *f = fopen(path, "rb");
    const int got = f && v && fread(v, 1, bytes, f) == bytes;
    if (f)
        fclose(f);
    if (!got) {
        fprintf(stderr, "gpu_stages: cannot read %zu bytes from %s\n", bytes, path);
        free(v);
        return 0;
    }
    for (double eb = 1e-2; eb > 0.5e-4; eb /= 10) {
        char label[512];
        p.eb = eb;
        snprintf(label, sizeof label, "%s REL %g", path, eb);
        run_case(label, &p, v);
    }
    free(v);
    return 1;
}

int main(int argc, char **argv)
{
    if (!h5zgpu_gpu_available()) {
        printf("gpu_stages: no usable GPU: skipped\n");
        return SKIP_CODE;
    }
    if (argc > 1) {
        for (int i = 1; i + 1 < argc; i += 2)
            if (!run_file(argv[i], argv[i + 1]))
                return 2;
    } else {
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            const stage_case *c = &cases[k];
            h5zgpu_params p = {.dtype = c->t, .mode = c->mode, .eb = c->eb, .rank = c->rank,
                               .has_fill = c->fill, .fill = -1e34};
            memcpy(p.dims, c->dims, sizeof c->dims);
            void *in = malloc(tu_count(&p) * tu_esize(c->t));
            tu_fill_shape(&p, c->pat, k + 1, in);
            run_case(c->name, &p, in);
            free(in);
        }
        /* the cases must keep reaching the interpolation and a Lorenzo order */
        tu_expect(tallies[0] > 0 && tallies[1] + tallies[2] + tallies[3] > 0,
                  "the cases no longer cover both predictors (interpolation %u, Lorenzo %u)",
                  tallies[0], tallies[1] + tallies[2] + tallies[3]);
    }
    printf("gpu_stages: %u stage checks; Huffman predictors interpolation/Lorenzo 1/2/3: "
           "%u/%u/%u/%u\n",
           checks, tallies[0], tallies[1], tallies[2], tallies[3]);
    return tu_done("gpu_stages");
}
