/* Writes the committed seed corpora of the fuzz targets: make_corpus DIR writes DIR/header,
 * DIR/decode (the template chunks of fuzz_common.c), DIR/payload (a template's index and its
 * payload) and DIR/roundtrip (parameter bytes and values in fuzz_roundtrip.c's layout). */
#define _POSIX_C_SOURCE 200809L /* mkdir */
#include "fuzz_common.h"
#include "util.h"

#include <string.h>
#include <sys/stat.h>

static int write_file(const char *dir, const char *sub, const char *name, const uint8_t *a,
                      size_t alen, const uint8_t *b, size_t blen)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(a, 1, alen, f) == alen && (!blen || fwrite(b, 1, blen, f) == blen);
    if (f && fclose(f) != 0)
        ok = 0;
    if (!ok)
        fprintf(stderr, "make_corpus: cannot write %s\n", path);
    return ok ? 0 : 1;
}

/* Round-trip inputs: (element type, mode, bound index, rank, form, codec selector, radius
 * exponent) and the values (fuzz_roundtrip.c's byte layout). */
static const struct {
    unsigned f64, mode, bound, rank, walk, codec, radius;
    uint8_t dims[4];
} rt[] = {
    {0, 0, 5, 1, 1, 0, 0, {64}},          {1, 1, 4, 2, 1, 0, 0, {12, 20}},
    {0, 2, 5, 3, 1, 0, 0, {5, 6, 7}},     {1, 0, 0, 4, 0, 0, 0, {2, 2, 3, 3}},
    {0, 1, 7, 1, 0, 0, 0, {50}},          {1, 2, 2, 2, 1, 0, 0, {9, 9}},
    {0, 0, 5, 1, 1, 1, 0, {64}},          {1, 1, 4, 2, 1, 1, 0, {12, 20}},
    {0, 2, 5, 3, 1, 1, 0, {5, 6, 7}},     {1, 0, 0, 4, 0, 1, 0, {2, 2, 3, 3}},
    {0, 0, 6, 3, 1, 1, 2, {8, 9, 10}},    {1, 1, 7, 1, 0, 3, 3, {50}},
    {0, 0, 5, 2, 1, 2, 0, {16, 30}},      {1, 2, 2, 2, 1, 2, 1, {9, 9}},
};

int main(int argc, char **argv)
{
    int bad = 0;
    if (argc != 2) {
        fprintf(stderr, "usage: make_corpus DIR\n");
        return 2;
    }
    static const char *const subs[] = {"header", "decode", "payload", "roundtrip"};
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[1], subs[i]);
        mkdir(argv[1], 0777); /* an existing directory is fine; write_file reports the rest */
        mkdir(path, 0777);
    }
    for (size_t i = 0; i < fz_template_count(); i++) {
        size_t len, hlen;
        const uint8_t *t = fz_template(i, &len, &hlen);
        char name[32];
        uint8_t idx = (uint8_t)i;
        snprintf(name, sizeof name, "template%zu", i);
        bad |= write_file(argv[1], "header", name, t, len, NULL, 0);
        bad |= write_file(argv[1], "decode", name, t, len, NULL, 0);
        bad |= write_file(argv[1], "payload", name, &idx, 1, t + hlen, len - hlen);
    }
    for (size_t i = 0; i < sizeof rt / sizeof rt[0]; i++) {
        uint8_t head[6], vals[4096];
        size_t n = 1, es = rt[i].f64 ? 8 : 4;
        head[0] = (uint8_t)(rt[i].f64 | rt[i].mode << 1 | rt[i].bound << 3);
        head[1] = (uint8_t)((rt[i].rank - 1) | rt[i].walk << 2 | rt[i].codec << 3 |
                            rt[i].radius << 5);
        for (unsigned d = 0; d < rt[i].rank; d++) {
            head[2 + d] = (uint8_t)(rt[i].dims[d] - 1);
            n *= rt[i].dims[d];
        }
        size_t vlen = rt[i].walk ? n : n * es;
        if (rt[i].walk) {
            for (size_t k = 0; k < n; k++) /* a gentle oscillation */
                vals[k] = (uint8_t)(int8_t)((k % 16) < 8 ? 3 : -3);
        } else {
            tu_fill(rt[i].f64 ? H5ZGPU_FLOAT64 : H5ZGPU_FLOAT32, n, TU_SPECIAL, i, vals);
        }
        char name[32];
        snprintf(name, sizeof name, "roundtrip%zu", i);
        bad |= write_file(argv[1], "roundtrip", name, head, 2 + rt[i].rank, vals, vlen);
    }
    return bad;
}
