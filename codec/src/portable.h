/* Arithmetic shared by the CPU codecs and the CUDA kernels.
 *
 * Byte-identical output on both executors rests on every double operation being one IEEE
 * operation rounded to nearest: on the device the explicit _rn intrinsics keep nvcc from fusing
 * a multiply and an add into an FMA; on the host the build passes -ffp-contract=off. */
#ifndef H5ZGPU_PORTABLE_H
#define H5ZGPU_PORTABLE_H

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define HZ_HD __host__ __device__ __forceinline__
#else
#include <math.h>
/* inlined on the host too, so that a loop compiled for SSE4.1 (HZ_CPU_CLONES) compiles them
 * so as well */
#define HZ_HD static inline __attribute__((always_inline))
#endif

/* Host helpers of such loops, inlined into them whatever their size. */
#define HZ_INLINE static inline __attribute__((always_inline))

/* A CPU codec's per-value loop compiled three times on x86-64 Linux, for AVX2, SSE4.1 and any
 * x86-64, the loader picking one (an ifunc): the quantiser rounds with rint several times a
 * value, one instruction with SSE4.1 and a sequence of about ten without, and the loops of
 * quant_rows.h run four doubles at a time with AVX2. The same IEEE operations every way, so the
 * same bytes. */
#if !defined(__CUDACC__) && defined(__x86_64__) && defined(__linux__) && \
    ((defined(__clang__) && __clang_major__ >= 14) || (!defined(__clang__) && __GNUC__ >= 8))
#define HZ_CPU_CLONES __attribute__((target_clones("avx2", "sse4.1", "default")))
#else
#define HZ_CPU_CLONES
#endif

HZ_HD double hz_add(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
}

HZ_HD double hz_sub(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dsub_rn(a, b);
#else
    return a - b;
#endif
}

HZ_HD double hz_mul(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}

/* Rounds a double to float32 and back: what a float32 output element will hold. */
HZ_HD double hz_to_f32(double v)
{
#ifdef __CUDA_ARCH__
    return (double)__double2float_rn(v);
#else
    return (double)(float)v;
#endif
}

HZ_HD int hz_is_finite(double v)
{
    return v - v == 0.0;   /* NaN and +-Inf give NaN */
}

/* 2^n, exact: ldexp(1.0, n), built from its bits where it is a normal double (ldexp is a
 * library call on the device). */
HZ_HD double hz_pow2(int n)
{
    if (n < -1022 || n > 1023)
        return ldexp(1.0, n);
    const uint64_t b = (uint64_t)(n + 1023) << 52;
    double v;
    memcpy(&v, &b, 8);
    return v;
}

/* Signed to unsigned and back, small magnitudes to small codes: 0, -1, 1, -2 -> 0, 1, 2, 3. */
HZ_HD uint64_t hz_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

HZ_HD int64_t hz_unzigzag(uint64_t u)
{
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

/* Bits needed to write v: 0 for 0. */
HZ_HD unsigned hz_bitlen(uint64_t v)
{
#ifdef __CUDA_ARCH__
    return 64u - (unsigned)__clzll((long long)v);   /* __clzll(0) is 64 */
#else
    /* without a branch: zero and non-zero deltas mix, and a mispredicted branch costs more */
    return 64u - (unsigned)__builtin_clzll(v | 1u) - (v == 0);
#endif
}

/* Little-endian stores and loads, byte by byte so alignment never matters. */
HZ_HD void hz_put_u16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

HZ_HD void hz_put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

HZ_HD void hz_put_u64(uint8_t *p, uint64_t v)
{
    hz_put_u32(p, (uint32_t)v);
    hz_put_u32(p + 4, (uint32_t)(v >> 32));
}

HZ_HD uint32_t hz_get_u16(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8);
}

HZ_HD uint32_t hz_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

HZ_HD uint64_t hz_get_u64(const uint8_t *p)
{
    return (uint64_t)hz_get_u32(p) | ((uint64_t)hz_get_u32(p + 4) << 32);
}

HZ_HD void hz_put_f64(uint8_t *p, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    hz_put_u64(p, u);
}

HZ_HD double hz_get_f64(const uint8_t *p)
{
    uint64_t u = hz_get_u64(p);
    double v;
    memcpy(&v, &u, 8);
    return v;
}

/* murmur3's finaliser: a bijection on 32 bits with full avalanche. */
HZ_HD uint32_t hz_fmix32(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

/* One term of the chunk checksum (docs/FORMAT.md): word i of a zero-padded byte string. The
 * terms are summed mod 2^32, so the GPU computes the sum as a parallel reduction. */
HZ_HD uint32_t hz_checksum_term(uint32_t word, uint64_t i)
{
    return hz_fmix32(word ^ (uint32_t)(0x9E3779B9u * (uint32_t)(i + 1)) ^
                     (uint32_t)((i >> 32) * 0x7FEB352Du));
}

#endif
