/* What the HDF5 tests share: the error stack as one string, and the user's four cd_values. */
#ifndef H5ZGPU_TEST_HDF5_UTIL_H
#define H5ZGPU_TEST_HDF5_UTIL_H

#include "h5zgpu.h"

#define HT_STACK_LEN 4096

/* The descriptions HDF5 left on its error stack, "desc | desc | ...", into buf (HT_STACK_LEN). */
void ht_error_stack(char *buf);

/* {codec, mode, eb low word, eb high word}. */
void ht_user_cd(unsigned cd[4], unsigned codec, h5zgpu_mode mode, double eb);

#endif
