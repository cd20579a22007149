/* The golden chunks: deterministic inputs and the parameters that compressed them. Each format
 * version is pinned by these forever (a case's name starts with its version, "v1_", "v2_",
 * "v3_", "v4_", "v5_", "v6_"): never change a case, add new ones. The cases of today's version
 * also pin the writer's bytes. */
#ifndef H5ZGPU_GOLDEN_CASES_H
#define H5ZGPU_GOLDEN_CASES_H

#include "../util.h"

/* What a case's chunk must exercise, so that the set keeps covering each path of the format
 * (docs/FORMAT.md): the codec the header names and, for Huffman payloads, the form, the
 * predictor (0 interpolation, else the Lorenzo order), the run token (forms 1 and 3: 0 fill,
 * 1 escape, else a delta's), whether outliers and verbatim values occur, the axis order, the
 * ANS form's word count bytes and its built-in tables.
 * codec 0 leaves it unchecked (the first cases, which predate the table). */
typedef struct golden_covers {
    unsigned codec, form, order, run_token;
    int outliers, verbatim;
    unsigned axes;          /* format version 4: the axis order (0 before) */
    unsigned count_bytes;   /* format version 5, the ANS form: a word count's bytes (0 else) */
    unsigned books;         /* format version 6, the ANS form: its built-in tables (0 else) */
} golden_covers;

typedef struct golden_case {
    const char *name; /* file: <name>.h5zg */
    h5zgpu_params params;
    tu_pattern pattern; /* filled over params' shape (tu_fill_shape) */
    uint64_t seed;
    golden_covers covers;
    /* 1: a chunk of today's version that an earlier writer made, which today's writes
     * otherwise (a NaN became the chunk's fill value): decoded, not written again */
    int earlier_writer;
} golden_case;

extern const golden_case golden_cases[];
extern const size_t golden_count;

/* The file listing each case's input and decoded-output hashes. */
#define GOLDEN_EXPECTED "expected.txt"

#endif
