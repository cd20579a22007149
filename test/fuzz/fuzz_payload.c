/* libFuzzer target: the payload decoders (fixed-length and Huffman, by the template's codec)
 * behind a valid header. The first input byte
 * picks one of the valid template chunks (fuzz_common.c); the rest replaces its payload, and the
 * header's payload length and checksum are rewritten to match. Seeds: the templates' payloads. */
#include "fuzz_common.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t tlen, hlen, plen = size - 1;
    const uint8_t *t = fz_template(data[0] % fz_template_count(), &tlen, &hlen);
    uint8_t *chunk = malloc(hlen + plen);
    FZ_REQUIRE(chunk, "out of memory");
    memcpy(chunk, t, hlen);
    memcpy(chunk + hlen, data + 1, plen);
    for (unsigned b = 0; b < 8; b++)
        chunk[FZ_OFF_PAYLOAD_LEN + b] = (uint8_t)((uint64_t)plen >> (8 * b));
    fz_fix_checksum(chunk, hlen + plen, hlen);
    fz_decode_check(chunk, hlen + plen);
    free(chunk);
    return 0;
}
