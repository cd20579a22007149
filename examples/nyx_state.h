/* A Nyx-like cosmology state on an N^3 grid: six float32 fields with log-normal densities, a
 * temperature that follows the density, and large-scale velocities, built from sums of plane
 * waves (separable, so a box costs a few multiply-adds a value) plus a little small-scale
 * noise. Deterministic: any rank computes any box's values. */
#ifndef H5ZGPU_EXAMPLES_NYX_STATE_H
#define H5ZGPU_EXAMPLES_NYX_STATE_H

#include <stddef.h>

#define NS_FIELDS 6

extern const char *const ns_field_names[NS_FIELDS];

/* The box of b^3 values whose first corner is (z0, y0, x0), C order, into out; -1 when out of
 * memory. */
int ns_box(size_t n, int field, size_t z0, size_t y0, size_t x0, size_t b, float *out);

#endif
