/* libFuzzer target: the whole decoder on the CPU (h5zgpu_decompress, H5ZGPU_EXEC_CPU). The
 * input's checksum is recomputed when its header parses, so the fuzzer gets past the checksum to
 * the payload decoder; a header that does not parse goes in as it is. */
#include "fuzz_common.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    h5zgpu_info info;
    /* a copy of exactly `size` bytes: ASan sees reads past the chunk */
    uint8_t *chunk = malloc(size ? size : 1);
    FZ_REQUIRE(chunk, "out of memory");
    memcpy(chunk, data, size);
    if (h5zgpu_chunk_info(chunk, size, &info) == H5ZGPU_OK)
        fz_fix_checksum(chunk, size, (size_t)info.header_len);
    fz_decode_check(chunk, size);
    free(chunk);
    return 0;
}
