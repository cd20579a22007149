/* Runs a libFuzzer target's LLVMFuzzerTestOneInput over files and directories of inputs, without
 * libFuzzer: the committed seed corpora become ordinary ctests (and run under valgrind). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* optional, as in libFuzzer: a target's one-time set-up */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    int ok = buf && n >= 0 && fread(buf, 1, (size_t)n, f) == (size_t)n;
    fclose(f);
    if (ok)
        LLVMFuzzerTestOneInput(buf, (size_t)n);
    free(buf);
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    unsigned long inputs = 0;
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    for (int a = 1; a < argc; a++) {
        struct stat st;
        if (stat(argv[a], &st) != 0) {
            fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[a]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (run_file(argv[a]) != 0)
                return 1;
            inputs++;
            continue;
        }
        DIR *d = opendir(argv[a]);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[a], e->d_name);
            if (e->d_name[0] == '.' || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
                continue;
            if (run_file(path) != 0) {
                fprintf(stderr, "%s: cannot read %s\n", argv[0], path);
                return 1;
            }
            inputs++;
        }
        if (d)
            closedir(d);
    }
    printf("%s: %lu inputs replayed, no failure\n", argv[0], inputs);
    /* an empty corpus would let this test pass without testing anything */
    return inputs ? 0 : 1;
}
