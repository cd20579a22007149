/* What the HDF5 tests share: the error stack as one string, the user's four cd_values, and the
 * dataset tests' choice of buffer. */
#ifndef H5ZGPU_TEST_HDF5_UTIL_H
#define H5ZGPU_TEST_HDF5_UTIL_H

#include "h5zgpu.h"

#define HT_STACK_LEN 4096

/* The descriptions HDF5 left on its error stack, "desc | desc | ...", into buf (HT_STACK_LEN). */
void ht_error_stack(char *buf);

/* {codec, mode, eb low word, eb high word}. */
void ht_user_cd(unsigned cd[4], unsigned codec, h5zgpu_mode mode, double eb);

/* The dataset tests' argv: "NAME host|device FILE". Returns 1 for device buffers (exits 77,
 * saying why, when no GPU is usable), 0 for host buffers (the CPU executor then, in every
 * build); exits 2 with the usage otherwise. */
int ht_on_device(int argc, char **argv, const char *name);

#endif
