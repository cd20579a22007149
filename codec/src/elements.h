/* Reading and writing a chunk's elements (float32 or float64, host byte order) by index: the
 * CPU codecs' one view of the caller's buffers. */
#ifndef H5ZGPU_ELEMENTS_H
#define H5ZGPU_ELEMENTS_H

#include <stdint.h>
#include <string.h>

/* Element i as a double, and its bits zero-extended. */
static inline double hz_element(const void *in, int is_f32, uint64_t i, uint64_t *bits)
{
    if (is_f32) {
        float f;
        uint32_t u;
        memcpy(&f, (const uint8_t *)in + 4 * i, 4);
        memcpy(&u, &f, 4);
        *bits = u;
        return (double)f;
    }
    double d;
    memcpy(&d, (const uint8_t *)in + 8 * i, 8);
    memcpy(bits, &d, 8);
    return d;
}

/* Stores the bits of element i. */
static inline void hz_put_element(void *out, int is_f32, uint64_t i, uint64_t bits)
{
    if (is_f32) {
        uint32_t w = (uint32_t)bits;
        memcpy((uint8_t *)out + 4 * i, &w, 4);
    } else {
        memcpy((uint8_t *)out + 8 * i, &bits, 8);
    }
}

/* The bits of a value already rounded to the element type. */
static inline uint64_t hz_value_bits(double v, int is_f32)
{
    uint64_t b = 0;
    if (is_f32) {
        float f = (float)v;
        uint32_t w;
        memcpy(&w, &f, 4);
        b = w;
    } else {
        memcpy(&b, &v, 8);
    }
    return b;
}

#endif
