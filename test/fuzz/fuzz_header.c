/* libFuzzer target: the chunk header reader (h5zgpu_chunk_info) on arbitrary bytes. What it
 * accepts must describe the bytes it was given (docs/FORMAT.md, "Chunk header"). */
#include "fuzz_common.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    h5zgpu_info info;
    if (h5zgpu_chunk_info(data, size, &info) != H5ZGPU_OK)
        return 0;
    uint64_t n = 1;
    for (unsigned i = 0; i < info.rank; i++) {
        FZ_REQUIRE(info.dims[i] >= 1 && info.dims[i] <= UINT32_MAX, "dimension %u is %llu", i,
                   (unsigned long long)info.dims[i]);
        n *= info.dims[i];
    }
    size_t es = info.dtype == H5ZGPU_FLOAT32 ? 4 : 8;
    FZ_REQUIRE(info.format_version >= 1 && info.format_version <= H5ZGPU_FORMAT_VERSION,
               "accepted format version %u", info.format_version);
    FZ_REQUIRE(info.codec <= 2 && (info.dtype == H5ZGPU_FLOAT32 || info.dtype == H5ZGPU_FLOAT64) &&
                   (unsigned)info.mode <= 2 && info.rank >= 1 && info.rank <= H5ZGPU_MAX_RANK,
               "accepted codec %u dtype %u mode %u rank %u", info.codec, (unsigned)info.dtype,
               (unsigned)info.mode, info.rank);
    FZ_REQUIRE(info.eb >= 0 && isfinite(info.eb) && info.eb_abs >= 0 && isfinite(info.eb_abs),
               "accepted bounds %g, %g", info.eb, info.eb_abs);
    FZ_REQUIRE(info.header_len >= 40 + 4 * (uint64_t)info.rank &&
                   info.header_len + info.payload_len == size,
               "header %llu + payload %llu bytes in a %zu-byte chunk",
               (unsigned long long)info.header_len, (unsigned long long)info.payload_len, size);
    FZ_REQUIRE(info.raw_len == n * es, "raw_len %llu for %llu elements",
               (unsigned long long)info.raw_len, (unsigned long long)n);
    FZ_REQUIRE(info.codec != 0 || info.payload_len == info.raw_len,
               "raw chunk of %llu payload bytes for %llu", (unsigned long long)info.payload_len,
               (unsigned long long)info.raw_len);
    return 0;
}
