/* The golden chunks: deterministic inputs and the parameters that compressed them. Format
 * version 1 is pinned by these forever: never change a case, add new ones. */
#ifndef H5ZGPU_GOLDEN_CASES_H
#define H5ZGPU_GOLDEN_CASES_H

#include "../util.h"

typedef struct golden_case {
    const char *name; /* file: <name>.h5zg */
    h5zgpu_params params;
    tu_pattern pattern;
    uint64_t seed;
} golden_case;

extern const golden_case golden_cases[];
extern const size_t golden_count;

/* The file listing each case's input and decoded-output hashes. */
#define GOLDEN_EXPECTED "expected.txt"

#endif
