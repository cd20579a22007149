#include "cases.h"

#define F32 H5ZGPU_FLOAT32
#define F64 H5ZGPU_FLOAT64
#define FIXED H5ZGPU_CODEC_FIXED

const golden_case golden_cases[] = {
    {"v1_f32_1d_abs", {FIXED, H5ZGPU_MODE_ABS, 1e-3, F32, 1, {1000}}, TU_SMOOTH, 1},
    {"v1_f64_1d_pwrel", {FIXED, H5ZGPU_MODE_PWREL, 1e-3, F64, 1, {777}}, TU_SMOOTH, 2},
    {"v1_f32_2d_rel", {FIXED, H5ZGPU_MODE_REL, 1e-3, F32, 2, {37, 45}}, TU_SMOOTH, 3},
    {"v1_f64_2d_abs_special", {FIXED, H5ZGPU_MODE_ABS, 1e-4, F64, 2, {64, 64}}, TU_SPECIAL, 4},
    {"v1_f32_3d_rel", {FIXED, H5ZGPU_MODE_REL, 1e-2, F32, 3, {9, 17, 13}}, TU_SMOOTH, 5},
    {"v1_f64_3d_pwrel", {FIXED, H5ZGPU_MODE_PWREL, 1e-2, F64, 3, {8, 8, 8}}, TU_SMOOTH, 6},
    {"v1_f32_4d_abs_noise", {FIXED, H5ZGPU_MODE_ABS, 1e-2, F32, 4, {2, 3, 5, 7}}, TU_NOISE, 7},
    {"v1_f32_1d_raw", {FIXED, H5ZGPU_MODE_ABS, 0, F32, 1, {300}}, TU_BITS, 8},
    {"v1_f32_3d_rel_fill", {FIXED, H5ZGPU_MODE_REL, 1e-3, F32, 3, {12, 20, 28}, 1, -1e34}, TU_LAND, 9},
    {"v1_f64_2d_abs_fill", {FIXED, H5ZGPU_MODE_ABS, 1e-2, F64, 2, {40, 50}, 1, -1e34}, TU_LAND, 10},
};
const size_t golden_count = sizeof golden_cases / sizeof golden_cases[0];
