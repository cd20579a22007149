/* Writes the golden chunks of new cases into a directory (test/golden/ in the source tree) and
 * appends their hashes to expected.txt:
 *   gen_golden DIR
 * A case whose chunk exists is left alone: the chunks of existing cases never change. */
#include "cases.h"

#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_golden DIR\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", argv[1], GOLDEN_EXPECTED);
    FILE *list = fopen(path, "a");
    if (!list) {
        perror(path);
        return 1;
    }
    if (ftell(list) == 0)
        fprintf(list, "# name input-fnv1a64 decoded-fnv1a64 (made by gen_golden.c)\n");
    int rc = 0;
    for (size_t i = 0; i < golden_count && rc == 0; i++) {
        const golden_case *c = &golden_cases[i];
        snprintf(path, sizeof path, "%s/%s.h5zg", argv[1], c->name);
        FILE *old = fopen(path, "rb");
        if (old) {
            fclose(old);
            continue;
        }
        size_t n = (size_t)tu_count(&c->params), raw = n * tu_esize(c->params.dtype);
        size_t cap = h5zgpu_compress_bound(&c->params), len = 0, outlen = 0;
        void *in = malloc(raw), *back = malloc(raw), *chunk = malloc(cap);
        tu_fill_shape(&c->params, c->pattern, c->seed, in);
        h5zgpu_exec cpu = {.kind = H5ZGPU_EXEC_CPU};
        if (h5zgpu_compress(&c->params, in, chunk, cap, &len, &cpu) != H5ZGPU_OK ||
            h5zgpu_decompress(chunk, len, back, raw, &outlen, &cpu) != H5ZGPU_OK) {
            fprintf(stderr, "%s: %s\n", c->name, h5zgpu_last_error());
            rc = 1;
        } else {
            FILE *f = fopen(path, "wb");
            if (!f || fwrite(chunk, 1, len, f) != len || fclose(f) != 0) {
                perror(path);
                rc = 1;
            }
            fprintf(list, "%s %016llx %016llx\n", c->name,
                    (unsigned long long)tu_fnv1a(in, raw), (unsigned long long)tu_fnv1a(back, raw));
        }
        free(in);
        free(back);
        free(chunk);
    }
    if (fclose(list) != 0)
        rc = 1;
    return rc;
}
