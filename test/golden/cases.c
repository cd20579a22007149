#include "cases.h"

#define F32 H5ZGPU_FLOAT32
#define F64 H5ZGPU_FLOAT64
#define FIXED H5ZGPU_CODEC_FIXED
#define HUFF H5ZGPU_CODEC_HUFFMAN
#define AUTO H5ZGPU_CODEC_AUTO
#define ABS H5ZGPU_MODE_ABS
#define REL H5ZGPU_MODE_REL
#define PWREL H5ZGPU_MODE_PWREL
#define RATIO H5ZGPU_MODE_RATIO
/* covers: codec written; Huffman form (0 codes, 1 runs, 2 pairs), order, run token; outliers,
 * verbatim values */

const golden_case golden_cases[] = {
    {"v1_f32_1d_abs", {FIXED, H5ZGPU_MODE_ABS, 1e-3, F32, 1, {1000}}, TU_SMOOTH, 1},
    {"v1_f64_1d_pwrel", {FIXED, H5ZGPU_MODE_PWREL, 1e-3, F64, 1, {777}}, TU_SMOOTH, 2},
    {"v1_f32_2d_rel", {FIXED, H5ZGPU_MODE_REL, 1e-3, F32, 2, {37, 45}}, TU_SMOOTH, 3},
    {"v1_f64_2d_abs_special", {FIXED, H5ZGPU_MODE_ABS, 1e-4, F64, 2, {64, 64}}, TU_SPECIAL, 4},
    {"v1_f32_3d_rel", {FIXED, H5ZGPU_MODE_REL, 1e-2, F32, 3, {9, 17, 13}}, TU_SMOOTH, 5},
    {"v1_f64_3d_pwrel", {FIXED, H5ZGPU_MODE_PWREL, 1e-2, F64, 3, {8, 8, 8}}, TU_SMOOTH, 6},
    {"v1_f32_4d_abs_noise", {FIXED, H5ZGPU_MODE_ABS, 1e-2, F32, 4, {2, 3, 5, 7}}, TU_NOISE, 7},
    {"v1_f32_1d_raw", {FIXED, H5ZGPU_MODE_ABS, 0, F32, 1, {300}}, TU_BITS, 8},
    {"v1_f32_3d_rel_fill", {FIXED, H5ZGPU_MODE_REL, 1e-3, F32, 3, {12, 20, 28}, 1, (double)(float)-1e34}, TU_LAND, 9},
    {"v1_f64_2d_abs_fill", {FIXED, H5ZGPU_MODE_ABS, 1e-2, F64, 2, {40, 50}, 1, -1e34}, TU_LAND, 10},
    /* Huffman (codec 2): each form, order and dimensionality, radii, fill with NaN/Inf, outliers */
    {"v1_huff_f32_1d_abs", {HUFF, ABS, 1e-3, F32, 1, {5000}}, TU_FIELD, 11, {2, 0, 1, 0, 1, 0}},
    {"v1_huff_f64_1d_abs_runs", {HUFF, ABS, 1e-3, F64, 1, {20000}}, TU_CONSTANT, 12, {2, 1, 1, 2, 0, 0}},
    {"v1_huff_f32_2d_rel", {HUFF, REL, 1e-3, F32, 2, {150, 140}}, TU_FIELD, 13, {2, 2, 2, 0, 0, 0}},
    {"v1_huff_f64_2d_pwrel", {HUFF, PWREL, 1e-3, F64, 2, {60, 70}}, TU_FIELD, 14, {2, 0, 2, 0, 1, 0}},
    {"v1_huff_f32_3d_rel", {HUFF, REL, 1e-3, F32, 3, {20, 40, 36}}, TU_FIELD, 15, {2, 2, 3, 0, 0, 1}},
    {"v1_huff_f64_3d_abs", {HUFF, ABS, 1e-4, F64, 3, {18, 33, 35}}, TU_FIELD, 16, {2, 2, 3, 0, 1, 1}},
    {"v1_huff_f32_3d_abs_noise", {HUFF, ABS, 1e-2, F32, 3, {16, 20, 24}}, TU_NOISE, 17, {2, 0, 1, 0, 0, 0}},
    {"v1_huff_f32_3d_rel_masked", {HUFF, REL, 1e-3, F32, 3, {12, 40, 50}, 1, (double)(float)-1e34}, TU_MASKED, 18, {2, 1, 1, 0, 0, 1}},
    {"v1_huff_f64_2d_abs_masked", {HUFF, ABS, 1e-3, F64, 2, {100, 120}, 1, -1e34}, TU_MASKED, 19, {2, 1, 2, 0, 1, 1}},
    {"v1_huff_f32_2d_abs_spiky_r8", {HUFF, ABS, 1e-3, F32, 2, {90, 100}, 0, 0, 8}, TU_SPIKY, 20, {2, 0, 2, 0, 1, 0}},
    {"v1_huff_f64_3d_rel_spiky_r4", {HUFF, REL, 1e-3, F64, 3, {10, 30, 30}, 0, 0, 4}, TU_SPIKY, 21, {2, 1, 1, 2, 1, 0}},
    {"v1_huff_f64_2d_abs_escapes", {HUFF, ABS, 1e-4, F64, 2, {40, 50}}, TU_SPECIAL, 23, {2, 1, 1, 1, 1, 1}},
    {"v1_huff_f32_4d_rel", {HUFF, REL, 1e-3, F32, 4, {3, 10, 12, 14}}, TU_FIELD, 22, {2, 0, 3, 0, 0, 0}},
    /* auto (codec 0): the smaller payload, the fixed-length one on special values */
    {"v1_auto_f64_2d_abs_special", {AUTO, ABS, 1e-4, F64, 2, {64, 64}}, TU_SPECIAL, 4, {1, 0, 0, 0, 0, 0}},
    {"v1_auto_f32_3d_rel_land", {AUTO, REL, 1e-3, F32, 3, {12, 20, 28}, 1, (double)(float)-1e34}, TU_LAND, 9, {2, 0, 1, 0, 0, 1}},
    /* format version 2: Huffman with interpolation (predictor 0) in 1, 2 and 3 dimensions,
     * float32 and float64, ABS/REL/PWREL, fill, verbatim values, outliers, partial tiles, auto */
    {"v2_huff_f32_3d_rel_masked", {HUFF, REL, 1e-3, F32, 3, {12, 40, 50}, 1, (double)(float)-1e34}, TU_MASKED, 18, {2, 1, 0, 0, 0, 1}},
    {"v2_huff_f32_3d_rel_r4_outliers", {HUFF, REL, 1e-2, F32, 3, {21, 34, 47}, 0, 0, 4}, TU_FIELD, 24, {2, 1, 0, 2, 1, 0}},
    {"v2_huff_f32_3d_rel_field", {HUFF, REL, 1e-2, F32, 3, {21, 34, 47}}, TU_FIELD, 24, {2, 1, 0, 2, 0, 0}},
    {"v2_huff_f64_1d_rel_field", {HUFF, REL, 3e-2, F64, 1, {7000}}, TU_FIELD, 25, {2, 2, 0, 0, 0, 0}},
    {"v2_huff_f32_3d_pwrel_field", {HUFF, PWREL, 0.3, F32, 3, {20, 30, 40}}, TU_FIELD, 26, {2, 1, 0, 2, 0, 0}},
    {"v2_auto_f32_3d_rel_field", {AUTO, REL, 1e-2, F32, 3, {30, 30, 30}}, TU_FIELD, 29, {2, 1, 0, 2, 0, 0}},
    /* format version 3: the grid of 2 eb steps from 0 every write of a chunk shares, offset by
     * k0; REL's power-of-two bound; the interpolation's fine codes inside their zone and whole
     * ones beyond it. The inputs of versions 1 and 2, and a few more. */
    {"v3_f32_1d_abs", {FIXED, ABS, 1e-3, F32, 1, {1000}}, TU_SMOOTH, 1, {1, 0, 0, 0, 0, 0}},
    {"v3_f64_1d_pwrel", {FIXED, PWREL, 1e-3, F64, 1, {777}}, TU_SMOOTH, 2, {1, 0, 0, 0, 0, 0}},
    {"v3_f32_2d_rel", {FIXED, REL, 1e-3, F32, 2, {37, 45}}, TU_SMOOTH, 3, {1, 0, 0, 0, 0, 0}},
    {"v3_f64_2d_abs_special", {FIXED, ABS, 1e-4, F64, 2, {64, 64}}, TU_SPECIAL, 4, {1, 0, 0, 0, 0, 0}, 1},
    {"v3_f32_3d_rel", {FIXED, REL, 1e-2, F32, 3, {9, 17, 13}}, TU_SMOOTH, 5, {1, 0, 0, 0, 0, 0}},
    {"v3_f64_3d_pwrel", {FIXED, PWREL, 1e-2, F64, 3, {8, 8, 8}}, TU_SMOOTH, 6, {1, 0, 0, 0, 0, 0}},
    {"v3_f32_4d_abs_noise", {FIXED, ABS, 1e-2, F32, 4, {2, 3, 5, 7}}, TU_NOISE, 7, {1, 0, 0, 0, 0, 0}},
    {"v3_f32_1d_lossless", {FIXED, ABS, 0, F32, 1, {300}}, TU_CONSTANT, 8, {1, 0, 0, 0, 0, 0}},
    {"v3_f32_3d_rel_fill", {FIXED, REL, 1e-3, F32, 3, {12, 20, 28}, 1, (double)(float)-1e34}, TU_LAND, 9, {1, 0, 0, 0, 0, 0}},
    {"v3_f64_2d_abs_fill", {FIXED, ABS, 1e-2, F64, 2, {40, 50}, 1, -1e34}, TU_LAND, 10, {1, 0, 0, 0, 0, 0}},
    {"v3_huff_f32_1d_abs", {HUFF, ABS, 1e-3, F32, 1, {5000}}, TU_FIELD, 11, {2, 0, 1, 0, 1, 0}},
    {"v3_huff_f64_1d_abs_runs", {HUFF, ABS, 1e-3, F64, 1, {20000}}, TU_CONSTANT, 12, {2, 1, 1, 2, 0, 0}},
    {"v3_huff_f32_2d_rel", {HUFF, REL, 1e-3, F32, 2, {150, 140}}, TU_FIELD, 13, {2, 0, 2, 0, 0, 1}},
    {"v3_huff_f64_2d_pwrel", {HUFF, PWREL, 1e-3, F64, 2, {60, 70}}, TU_FIELD, 14, {2, 0, 2, 0, 1, 0}},
    {"v3_huff_f32_3d_rel", {HUFF, REL, 1e-3, F32, 3, {20, 40, 36}}, TU_FIELD, 15, {2, 2, 3, 0, 1, 1}},
    {"v3_huff_f64_3d_abs", {HUFF, ABS, 1e-4, F64, 3, {18, 33, 35}}, TU_FIELD, 16, {2, 2, 3, 0, 1, 1}},
    {"v3_huff_f32_3d_abs_noise", {HUFF, ABS, 1e-2, F32, 3, {16, 20, 24}}, TU_NOISE, 17, {2, 0, 1, 0, 0, 1}},
    {"v3_huff_f32_3d_rel_masked", {HUFF, REL, 1e-3, F32, 3, {12, 40, 50}, 1, (double)(float)-1e34}, TU_MASKED, 18, {2, 1, 3, 0, 0, 1}},
    {"v3_huff_f64_2d_abs_masked", {HUFF, ABS, 1e-3, F64, 2, {100, 120}, 1, -1e34}, TU_MASKED, 19, {2, 1, 2, 0, 1, 1}},
    {"v3_huff_f32_2d_abs_spiky_r8", {HUFF, ABS, 1e-3, F32, 2, {90, 100}, 0, 0, 8}, TU_SPIKY, 20, {2, 0, 2, 0, 1, 1}},
    {"v3_huff_f64_3d_rel_spiky_r4", {HUFF, REL, 1e-3, F64, 3, {10, 30, 30}, 0, 0, 4}, TU_SPIKY, 21, {2, 1, 1, 2, 1, 0}},
    {"v3_huff_f64_2d_abs_escapes", {HUFF, ABS, 1e-4, F64, 2, {40, 50}}, TU_SPECIAL, 23, {2, 1, 1, 1, 1, 1}, 1},
    {"v3_huff_f32_4d_rel", {HUFF, REL, 1e-3, F32, 4, {3, 10, 12, 14}}, TU_FIELD, 22, {2, 0, 3, 0, 1, 1}},
    {"v3_auto_f64_2d_abs_special", {AUTO, ABS, 1e-4, F64, 2, {64, 64}}, TU_SPECIAL, 4, {1, 0, 0, 0, 0, 0}, 1},
    {"v3_auto_f32_3d_rel_land", {AUTO, REL, 1e-3, F32, 3, {12, 20, 28}, 1, (double)(float)-1e34}, TU_LAND, 9, {2, 0, 1, 0, 0, 1}},
    {"v3_huff_f32_3d_rel_r4_outliers", {HUFF, REL, 1e-2, F32, 3, {21, 34, 47}, 0, 0, 4}, TU_FIELD, 24, {2, 1, 0, 2, 1, 1}},
    {"v3_huff_f32_3d_rel_field", {HUFF, REL, 1e-2, F32, 3, {21, 34, 47}}, TU_FIELD, 24, {2, 1, 0, 2, 0, 1}},
    {"v3_huff_f64_1d_rel_field", {HUFF, REL, 3e-2, F64, 1, {7000}}, TU_FIELD, 25, {2, 2, 0, 0, 0, 1}},
    {"v3_huff_f32_3d_pwrel_field", {HUFF, PWREL, 0.3, F32, 3, {20, 30, 40}}, TU_FIELD, 26, {2, 1, 0, 2, 0, 0}},
    {"v3_auto_f32_3d_rel_field", {AUTO, REL, 1e-2, F32, 3, {30, 30, 30}}, TU_FIELD, 29, {2, 2, 0, 0, 0, 1}},
    /* the interpolation on both sides of its fine zone, and ABS's k0 far from 0 */
    {"v3_huff_f32_3d_abs_zone", {HUFF, ABS, 9e-3, F32, 3, {21, 34, 47}}, TU_FIELD, 24, {2, 1, 0, 2, 0, 1}},
    {"v3_huff_f64_3d_abs_zone", {HUFF, ABS, 9e-3, F64, 3, {21, 34, 47}}, TU_FIELD, 24, {2, 1, 0, 2, 0, 1}},
    {"v3_f32_2d_abs_offset", {FIXED, ABS, 1e-3, F32, 2, {40, 50}}, TU_FIELD, 30, {1, 0, 0, 0, 0, 0}},
    /* a NaN as the chunk's fill value: the special values' NaN again (the writer of the three
     * cases marked 1 above), and NaN masks with nothing declared or beside a declared 0 */
    {"v3_f64_2d_abs_special_nanfill", {FIXED, ABS, 1e-4, F64, 2, {64, 64}}, TU_SPECIAL, 4, {1, 0, 0, 0, 0, 0}},
    {"v3_huff_f64_2d_abs_escapes_nanfill", {HUFF, ABS, 1e-4, F64, 2, {40, 50}}, TU_SPECIAL, 23, {2, 1, 1, 1, 1, 1}},
    {"v3_auto_f64_2d_abs_special_nanfill", {AUTO, ABS, 1e-4, F64, 2, {64, 64}}, TU_SPECIAL, 4, {1, 0, 0, 0, 0, 0}},
    {"v3_f32_3d_abs_nan_masked", {FIXED, ABS, 1e-3, F32, 3, {12, 40, 50}}, TU_NAN_MASKED, 18, {1, 0, 0, 0, 0, 0}},
    {"v3_huff_f32_3d_rel_nan_masked", {HUFF, REL, 1e-3, F32, 3, {12, 40, 50}}, TU_NAN_MASKED, 18, {2, 1, 3, 0, 0, 1}},
    {"v3_huff_f64_2d_abs_nan_masked_fill0", {HUFF, ABS, 1e-3, F64, 2, {100, 120}, 1, 0.0}, TU_NAN_MASKED, 19, {2, 1, 2, 0, 1, 1}},
    /* fixed ratio (mode 3): ordinary ABS chunks whose bound the search chose; they pin the
     * search (its tries, model and tolerance) as the writer's bytes */
    {"v3_ratio_huff_f32_3d_t10", {HUFF, RATIO, 10, F32, 3, {21, 34, 47}}, TU_FIELD, 24, {0}},
    {"v3_ratio_fixed_f64_2d_t5_fill", {FIXED, RATIO, 5, F64, 2, {40, 50}, 1, -1e34}, TU_LAND, 10, {0}},
    {"v3_ratio_auto_f32_3d_t20", {AUTO, RATIO, 20, F32, 3, {30, 30, 30}}, TU_FIELD, 29, {0}},
    /* format version 4: the Huffman codec's axis order and ANS form (every other payload as
     * version 3 writes it). The inputs of version 3, and the ANS form's own cases. */
    {"v4_f32_1d_abs", {FIXED, ABS, 1e-3, F32, 1, {1000}}, TU_SMOOTH, 1, {1, 0, 0, 0, 0, 0}},
    {"v4_f64_1d_pwrel", {FIXED, PWREL, 1e-3, F64, 1, {777}}, TU_SMOOTH, 2, {1, 0, 0, 0, 0, 0}},
    {"v4_f32_2d_rel", {FIXED, REL, 1e-3, F32, 2, {37, 45}}, TU_SMOOTH, 3, {1, 0, 0, 0, 0, 0}},
    {"v4_f32_3d_rel", {FIXED, REL, 1e-2, F32, 3, {9, 17, 13}}, TU_SMOOTH, 5, {1, 0, 0, 0, 0, 0}},
    {"v4_f64_3d_pwrel", {FIXED, PWREL, 1e-2, F64, 3, {8, 8, 8}}, TU_SMOOTH, 6, {1, 0, 0, 0, 0, 0}},
    {"v4_f32_4d_abs_noise", {FIXED, ABS, 1e-2, F32, 4, {2, 3, 5, 7}}, TU_NOISE, 7, {1, 0, 0, 0, 0, 0}},
    {"v4_f32_1d_lossless", {FIXED, ABS, 0, F32, 1, {300}}, TU_CONSTANT, 8, {1, 0, 0, 0, 0, 0}},
    {"v4_f32_3d_rel_fill", {FIXED, REL, 1e-3, F32, 3, {12, 20, 28}, 1, (double)(float)-1e34}, TU_LAND, 9, {1, 0, 0, 0, 0, 0}},
    {"v4_f64_2d_abs_fill", {FIXED, ABS, 1e-2, F64, 2, {40, 50}, 1, -1e34}, TU_LAND, 10, {1, 0, 0, 0, 0, 0}},
    {"v4_huff_f32_1d_abs", {HUFF, ABS, 1e-3, F32, 1, {5000}}, TU_FIELD, 11, {2, 0, 1, 0, 1, 0, 0}},
    {"v4_huff_f64_1d_abs_runs", {HUFF, ABS, 1e-3, F64, 1, {20000}}, TU_CONSTANT, 12, {2, 3, 1, 2, 0, 0, 0}},
    {"v4_huff_f32_2d_rel", {HUFF, REL, 1e-3, F32, 2, {150, 140}}, TU_FIELD, 13, {2, 3, 2, 2, 0, 1, 0}},
    {"v4_huff_f64_2d_pwrel", {HUFF, PWREL, 1e-3, F64, 2, {60, 70}}, TU_FIELD, 14, {2, 0, 2, 0, 1, 0, 0}},
    {"v4_huff_f32_3d_rel", {HUFF, REL, 1e-3, F32, 3, {20, 40, 36}}, TU_FIELD, 15, {2, 3, 3, 2, 1, 1, 3}},
    {"v4_huff_f64_3d_abs", {HUFF, ABS, 1e-4, F64, 3, {18, 33, 35}}, TU_FIELD, 16, {2, 3, 3, 2, 1, 1, 5}},
    {"v4_huff_f32_3d_abs_noise", {HUFF, ABS, 1e-2, F32, 3, {16, 20, 24}}, TU_NOISE, 17, {2, 0, 0, 0, 0, 1, 0}},
    {"v4_huff_f32_3d_rel_masked", {HUFF, REL, 1e-3, F32, 3, {12, 40, 50}, 1, (double)(float)-1e34}, TU_MASKED, 18, {2, 1, 3, 0, 0, 1, 5}},
    {"v4_huff_f64_2d_abs_masked", {HUFF, ABS, 1e-3, F64, 2, {100, 120}, 1, -1e34}, TU_MASKED, 19, {2, 3, 2, 0, 1, 1, 0}},
    {"v4_huff_f32_2d_abs_spiky_r8", {HUFF, ABS, 1e-3, F32, 2, {90, 100}, 0, 0, 8}, TU_SPIKY, 20, {2, 3, 2, 2, 1, 1, 0}},
    {"v4_huff_f64_3d_rel_spiky_r4", {HUFF, REL, 1e-3, F64, 3, {10, 30, 30}, 0, 0, 4}, TU_SPIKY, 21, {2, 3, 1, 2, 1, 0, 0}},
    {"v4_huff_f32_4d_rel", {HUFF, REL, 1e-3, F32, 4, {3, 10, 12, 14}}, TU_FIELD, 22, {2, 3, 3, 2, 1, 1, 2}},
    {"v4_auto_f32_3d_rel_land", {AUTO, REL, 1e-3, F32, 3, {12, 20, 28}, 1, (double)(float)-1e34}, TU_LAND, 9, {2, 0, 0, 0, 1, 1, 2}},
    {"v4_huff_f32_3d_rel_r4_outliers", {HUFF, REL, 1e-2, F32, 3, {21, 34, 47}, 0, 0, 4}, TU_FIELD, 24, {2, 3, 0, 2, 1, 1, 3}},
    {"v4_huff_f32_3d_rel_field", {HUFF, REL, 1e-2, F32, 3, {21, 34, 47}}, TU_FIELD, 24, {2, 3, 0, 2, 0, 1, 3}},
    {"v4_huff_f64_1d_rel_field", {HUFF, REL, 3e-2, F64, 1, {7000}}, TU_FIELD, 25, {2, 3, 0, 2, 0, 1, 0}},
    {"v4_huff_f32_3d_pwrel_field", {HUFF, PWREL, 0.3, F32, 3, {20, 30, 40}}, TU_FIELD, 26, {2, 1, 0, 2, 0, 0, 0}},
    {"v4_auto_f32_3d_rel_field", {AUTO, REL, 1e-2, F32, 3, {30, 30, 30}}, TU_FIELD, 29, {2, 3, 0, 2, 0, 1, 4}},
    {"v4_huff_f32_3d_abs_zone", {HUFF, ABS, 9e-3, F32, 3, {21, 34, 47}}, TU_FIELD, 24, {2, 3, 0, 2, 0, 1, 3}},
    {"v4_huff_f64_3d_abs_zone", {HUFF, ABS, 9e-3, F64, 3, {21, 34, 47}}, TU_FIELD, 24, {2, 3, 0, 2, 0, 1, 3}},
    {"v4_f32_2d_abs_offset", {FIXED, ABS, 1e-3, F32, 2, {40, 50}}, TU_FIELD, 30, {1, 0, 0, 0, 0, 0}},
    {"v4_f64_2d_abs_special_nanfill", {FIXED, ABS, 1e-4, F64, 2, {64, 64}}, TU_SPECIAL, 4, {1, 0, 0, 0, 0, 0}},
    {"v4_huff_f64_2d_abs_escapes_nanfill", {HUFF, ABS, 1e-4, F64, 2, {40, 50}}, TU_SPECIAL, 23, {2, 1, 1, 1, 1, 1, 0}},
    {"v4_auto_f64_2d_abs_special_nanfill", {AUTO, ABS, 1e-4, F64, 2, {64, 64}}, TU_SPECIAL, 4, {1, 0, 0, 0, 0, 0}},
    {"v4_f32_3d_abs_nan_masked", {FIXED, ABS, 1e-3, F32, 3, {12, 40, 50}}, TU_NAN_MASKED, 18, {1, 0, 0, 0, 0, 0}},
    {"v4_huff_f32_3d_rel_nan_masked", {HUFF, REL, 1e-3, F32, 3, {12, 40, 50}}, TU_NAN_MASKED, 18, {2, 1, 3, 0, 0, 1, 5}},
    {"v4_huff_f64_2d_abs_nan_masked_fill0", {HUFF, ABS, 1e-3, F64, 2, {100, 120}, 1, 0.0}, TU_NAN_MASKED, 19, {2, 3, 2, 0, 1, 1, 0}},
    {"v4_ratio_huff_f32_3d_t10", {HUFF, RATIO, 10, F32, 3, {21, 34, 47}}, TU_FIELD, 24, {2, 3, 3, 2, 1, 1, 3}},
    {"v4_ratio_fixed_f64_2d_t5_fill", {FIXED, RATIO, 5, F64, 2, {40, 50}, 1, -1e34}, TU_LAND, 10, {1, 0, 0, 0, 0, 0}},
    {"v4_ratio_auto_f32_3d_t20", {AUTO, RATIO, 20, F32, 3, {30, 30, 30}}, TU_FIELD, 29, {2, 3, 0, 2, 0, 1, 4}},
    /* ANS (form 3) beside the Huffman forms: interpolation with the axes permuted, Lorenzo,
     * 1-D interpolation, fill, float64 */
    {"v4_huff_f32_3d_abs_axes", {HUFF, ABS, 1e-2, F32, 3, {24, 40, 36}}, TU_FIELD, 31, {2, 3, 0, 2, 0, 1, 5}},
    {"v4_huff_f64_3d_abs_lorenzo_ans", {HUFF, ABS, 1e-6, F64, 3, {33, 17, 65}}, TU_FIELD, 32, {2, 2, 3, 0, 1, 0, 4}},
    {"v4_huff_f32_1d_abs_smooth", {HUFF, ABS, 1e-1, F32, 1, {40000}}, TU_SMOOTH, 33, {2, 3, 0, 2, 0, 1, 0}},
    {"v4_huff_f32_2d_abs_ans_fill", {HUFF, ABS, 1e-2, F32, 2, {100, 120}, 1, (double)(float)-1e34}, TU_MASKED, 34, {2, 1, 2, 0, 0, 1, 0}},
};
const size_t golden_count = sizeof golden_cases / sizeof golden_cases[0];
