#define _POSIX_C_SOURCE 200809L /* setenv */
#include "hdf5_util.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static herr_t collect(unsigned n, const H5E_error2_t *e, void *data)
{
    (void)n;
    char *buf = data;
    size_t used = strlen(buf);
    snprintf(buf + used, HT_STACK_LEN - used, "%s | ", e->desc ? e->desc : "");
    return 0;
}

void ht_error_stack(char *buf)
{
    buf[0] = 0;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect, buf);
}

void ht_user_cd(unsigned cd[4], unsigned codec, h5zgpu_mode mode, double eb)
{
    cd[0] = codec;
    cd[1] = (unsigned)mode;
    h5zgpu_eb_to_words(eb, &cd[2], &cd[3]);
}

int ht_on_device(int argc, char **argv, const char *name)
{
    if (argc != 3 || (strcmp(argv[1], "host") && strcmp(argv[1], "device"))) {
        fprintf(stderr, "usage: %s host|device FILE\n", argv[0]);
        exit(2);
    }
    if (strcmp(argv[1], "device") == 0) {
        if (!h5zgpu_gpu_available()) {
            printf("%s: no usable GPU: device buffers not tested here\n", name);
            exit(77);
        }
        return 1;
    }
    setenv("H5ZGPU_DEVICE", "cpu", 1);
    return 0;
}
