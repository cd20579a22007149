/* Compresses and decompresses one small array through the installed library. */
#include <h5zgpu.h>

#include <math.h>
#include <stdio.h>

int main(void)
{
    float in[256], back[256];
    unsigned char chunk[2048];
    size_t len, n;
    for (int i = 0; i < 256; i++)
        in[i] = (float)i / 256.0f;
    h5zgpu_params p = {.codec = H5ZGPU_CODEC_FIXED, .mode = H5ZGPU_MODE_ABS, .eb = 1e-3,
                       .dtype = H5ZGPU_FLOAT32, .rank = 1, .dims = {256}};
    if (h5zgpu_compress(&p, in, chunk, sizeof chunk, &len, NULL) != H5ZGPU_OK ||
        h5zgpu_decompress(chunk, len, back, sizeof back, &n, NULL) != H5ZGPU_OK) {
        printf("consumer: %s\n", h5zgpu_last_error());
        return 1;
    }
    for (int i = 0; i < 256; i++)
        if (fabs((double)back[i] - (double)in[i]) > 1e-3) {
            printf("consumer: element %d misses the bound\n", i);
            return 1;
        }
    printf("consumer: %s, 1024 -> %zu bytes\n", h5zgpu_version(), len);
    return 0;
}
