/* Fixed ratio over many chunks written in batches (h5zgpu_ratio_begin, h5zgpu_ratio_account):
 * a search over a sample's total size gives the first bound and a model of the bytes around it,
 * size a chunk = size x (bound / eb)^slope; each batch then moves the model's level by what it
 * made against it and solves for what the budget has left a chunk. */
#include "h5zgpu.h"

#include "chunk.h"
#include "error.h"
#include "portable.h"
#include "ratio.h"

#ifdef H5ZGPU_HAVE_CUDA
#include "backend_gpu.h"
#endif

#include <math.h>
#include <stdlib.h>

/* The model's slope kept within these: a bit a value more for each halving of the bound at
 * 0.3 to 10 bits a value, where a sample's tries a few percent apart may see a step of the
 * codec's choices (a predictor or form giving way to another). */
#define RB_SLOPE_MOST (-3.0)
#define RB_SLOPE_LEAST (-0.1)

/* ---- the sample's search --------------------------------------------------------------- */

typedef struct sample_search {
    h5zgpu_params q;
    size_t count;
    const void *const *in;
    void *const *out;
    const size_t *out_cap;
    size_t *out_len;
    int device;
    const h5zgpu_exec *exec;
    uint8_t *heads;   /* device outputs: count x HZ_HDR_MAX, the chunks' headers ... */
    size_t *cut;      /* ... and how many bytes of each */
} sample_search;

/* The bound a REL try applied over the chunks: the geometric mean of those that applied one
 * (0 when none did: all stored raw or exact). */
static h5zgpu_status applied_of(const sample_search *c, double *applied)
{
    const uint8_t *heads = NULL;
    size_t *len = c->out_len;
#ifdef H5ZGPU_HAVE_CUDA
    if (c->device >= 0) {
        for (size_t i = 0; i < c->count; i++)
            c->cut[i] = len[i] < HZ_HDR_MAX ? len[i] : HZ_HDR_MAX;
        h5zgpu_status st = hzc_get_many((unsigned)c->count, (const void *const *)c->out,
                                        c->cut, c->heads, HZ_HDR_MAX, c->device);
        if (st != H5ZGPU_OK)
            return st;
        heads = c->heads;
    }
#endif
    double logs = 0;
    size_t k = 0;
    for (size_t i = 0; i < c->count; i++) {
        hz_header h;
        const uint8_t *at = heads ? heads + i * HZ_HDR_MAX : (const uint8_t *)c->out[i];
        const size_t avail = heads && len[i] > HZ_HDR_MAX ? HZ_HDR_MAX : len[i];
        h5zgpu_status st = hz_header_parse(at, avail, len[i], &h);
        if (st != H5ZGPU_OK)
            return st;
        if (h.eb_abs > 0) {
            logs += log(h.eb_abs);
            k++;
        }
    }
    *applied = k ? exp(logs / (double)k) : 0;
    return H5ZGPU_OK;
}

static h5zgpu_status measure_sample(void *ctx, h5zgpu_mode mode, double eb, double *applied,
                                    double *size)
{
    sample_search *c = ctx;
    size_t done;
    c->q.mode = mode;
    c->q.eb = eb;
    h5zgpu_status st =
        c->device >= 0
            ? h5zgpu_compress_device_batch(&c->q, c->count, c->in, c->out, c->out_cap,
                                           c->out_len, c->device, &done)
            : h5zgpu_compress_batch(&c->q, c->count, c->in, c->out, c->out_cap, c->out_len,
                                    c->exec, &done);
    if (st != H5ZGPU_OK)
        return st;
    *size = 0;
    for (size_t i = 0; i < c->count; i++)
        *size += (double)c->out_len[i];
    *applied = eb;
    return mode == H5ZGPU_MODE_ABS ? H5ZGPU_OK : applied_of(c, applied);
}

/* ---- the budget ------------------------------------------------------------------------ */

/* How the log of the size moves with the log of the bound near the best of a sample's tries: a
 * least-squares line through the ABS tries within a factor of 16 of its bound, which smooths
 * the steps a codec's choices make (0 with none but the best). */
static double slope_near(const hz_ratio_tries *T)
{
    const hz_ratio_try *b = &T->t[T->best];
    double sx = 0, sy = 0, sxx = 0, sxy = 0, k = 0;
    for (int i = 0; i < T->n; i++) {
        const hz_ratio_try *t = &T->t[i];
        const double x = log(t->applied / b->applied);
        if (t->mode == H5ZGPU_MODE_ABS && t->size > 0 && fabs(x) <= log(16.0)) {
            const double y = log(t->size / b->size);
            sx += x;
            sy += y;
            sxx += x * x;
            sxy += x * y;
            k++;
        }
    }
    const double den = k * sxx - sx * sx, slope = k >= 2 && den > 0 ? (k * sxy - sx * sy) / den : 0;
    return hz_is_finite(slope) ? slope : 0;
}

h5zgpu_status h5zgpu_ratio_begin(const h5zgpu_params *p, uint64_t total, size_t count,
                                 const void *const *in, void *const *out, const size_t *out_cap,
                                 size_t *out_len, int device, const h5zgpu_exec *exec,
                                 h5zgpu_ratio_budget *b)
{
    if (!p || !b || (count && (!in || !out || !out_cap || !out_len)))
        return hz_fail(H5ZGPU_E_INVALID_ARG, "a pointer is NULL");
    const h5zgpu_params P = *p;   /* p may be &b->p */
    h5zgpu_status st = h5zgpu_params_check(&P);
    if (st != H5ZGPU_OK)
        return st;
    if (count > total)
        return hz_fail(H5ZGPU_E_INVALID_ARG, "h5zgpu_ratio_begin: a sample of %zu chunks out of "
                       "%llu", count, (unsigned long long)total);
    *b = (h5zgpu_ratio_budget){.p = P, .total = total};
    if (!count || P.mode != H5ZGPU_MODE_RATIO)
        return H5ZGPU_OK;
    sample_search c = {.q = P, .count = count, .in = in, .out = out, .out_cap = out_cap,
                       .out_len = out_len, .device = device, .exec = exec};
    if (device >= 0) {
        c.heads = malloc(count * HZ_HDR_MAX);
        c.cut = malloc(count * sizeof *c.cut);
        if (!c.heads || !c.cut) {
            free(c.heads);
            free(c.cut);
            return hz_fail(H5ZGPU_E_NOMEM, "out of host memory for %zu chunk headers", count);
        }
    }
    const double values = (double)hz_count(P.rank, P.dims), all = values * (double)count;
    hz_ratio_tries T = {.n = 0};
    st = hz_ratio_search(all, all * (double)hz_esize(P.dtype), P.eb, 0, measure_sample, &c, &T);
    const hz_ratio_try best = T.t[T.best];   /* zeros when the search failed */
    if (st == H5ZGPU_OK && best.mode == H5ZGPU_MODE_ABS && best.size > 0) {
        double slope = slope_near(&T);
        if (slope == 0) {   /* no other try near it: one at twice its bound */
            double applied, size;
            st = measure_sample(&c, H5ZGPU_MODE_ABS, 2 * best.applied, &applied, &size);
            slope = size > 0 ? log(size / best.size) / log(2.0) : 0;
        }
        b->on = 1;
        b->p.mode = H5ZGPU_MODE_ABS;
        b->p.eb = b->eb = best.applied;
        b->size = best.size / (double)count;
        b->slope = fmax(RB_SLOPE_MOST, fmin(RB_SLOPE_LEAST, slope));
        b->want = values * (double)hz_esize(P.dtype) * (double)total / P.eb;
    }
    free(c.heads);
    free(c.cut);
    return st;
}

void h5zgpu_ratio_account(h5zgpu_ratio_budget *b, const size_t *len, size_t count)
{
    if (!b || (count && !len))
        return;
    double bytes = 0;
    for (size_t i = 0; i < count; i++)
        bytes += (double)len[i];
    b->made += bytes;
    b->done += count;
    if (!b->on || b->done >= b->total)
        return;
    /* the model's level moved by what the batches made against it, the last batch weighing
     * half (a batch is a sample too), then solved for what a chunk may take from here on; at
     * most two halvings or doublings a batch */
    const double model = b->size * exp(b->slope * log(b->p.eb / b->eb));
    if (bytes > 0) {
        const double off = log(bytes / ((double)count * model));
        b->level = b->batches++ ? 0.5 * (b->level + off) : off;
    }
    const double left = (b->want - b->made) / (double)(b->total - b->done);
    const double eb =
        left > 0 ? b->eb * exp((log(left / b->size) - b->level) / b->slope) : 4 * b->p.eb;
    b->p.eb = fmax(b->p.eb / 4, fmin(b->p.eb * 4, eb));
}

size_t h5zgpu_ratio_budget_size(void)
{
    return sizeof(h5zgpu_ratio_budget);
}
