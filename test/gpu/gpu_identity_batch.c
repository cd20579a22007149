/* gpu_identity's batch cases: the host and device batch APIs on the GPU against the CPU chunk
 * for chunk, and device batches decoding chunks of mixed modes in shared launches. */
#include "gpu_identity.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

/* One batch case: count chunks of p, chunk i filled with patterns[(pat0 + i) % ...], through
 * the device batch API and the host batch API on the GPU; each must give the CPU's bytes
 * chunk for chunk, and decode to the CPU's values; a damaged chunk in a device batch must be
 * the failure reported. */
static void batch_case(const h5zgpu_params *p, size_t count, size_t pat0)
{
    const size_t raw = tu_count(p) * (p->dtype == H5ZGPU_FLOAT32 ? 4 : 8);
    const size_t cap = h5zgpu_compress_bound(p);
    const h5zgpu_exec on_gpu = {H5ZGPU_EXEC_GPU, 0};
    uint8_t *h_in = malloc(count * raw), *h_cpu = malloc(count * cap), *h_out = malloc(count * cap);
    uint8_t *want = malloc(raw), *got = malloc(count * raw), *d_all = NULL;
    const void **in = malloc(count * sizeof *in), **d_in = malloc(count * sizeof *d_in);
    const void **cin = malloc(count * sizeof *cin);
    void **out = malloc(count * sizeof *out), **d_out = malloc(count * sizeof *d_out);
    void **back = malloc(count * sizeof *back), **d_back = malloc(count * sizeof *d_back);
    size_t *caps = malloc(count * sizeof *caps), *raws = malloc(count * sizeof *raws);
    size_t *lens = malloc(count * sizeof *lens), *cpu_len = malloc(count * sizeof *cpu_len);
    size_t *back_len = malloc(count * sizeof *back_len), done = 0;
    int ok = h_in && h_cpu && h_out && want && got && in && d_in && cin && out && d_out &&
             back && d_back && caps && raws && lens && cpu_len && back_len &&
             cudaMalloc((void **)&d_all, count * (raw + cap + raw)) == cudaSuccess;
    tu_expect(ok, "batch of %zu chunks: buffers", count);
    for (size_t i = 0; ok && i < count; i++) {
        fill(p, patterns[(pat0 + i) % npatterns], 40 + i,
             h_in + i * raw);
        ok = h5zgpu_compress(p, h_in + i * raw, h_cpu + i * cap, cap, &cpu_len[i], &on_cpu) ==
                 H5ZGPU_OK &&
             cudaMemcpy(d_all + i * raw, h_in + i * raw, raw, cudaMemcpyHostToDevice) ==
                 cudaSuccess;
        in[i] = h_in + i * raw;
        out[i] = h_out + i * cap;
        back[i] = got + i * raw;
        d_in[i] = d_all + i * raw;
        d_out[i] = d_all + count * raw + i * cap;
        d_back[i] = d_all + count * (raw + cap) + i * raw;
        caps[i] = cap;
        raws[i] = raw;
    }
    for (int dev = 0; ok && dev < 2; dev++) {
        const char *api = dev ? "device batch" : "host batch on the GPU";
        memset(lens, 0, count * sizeof *lens);
        h5zgpu_status st =
            dev ? h5zgpu_compress_device_batch(p, count, d_in, d_out, caps, lens, 0, &done)
                : h5zgpu_compress_batch(p, count, in, out, caps, lens, &on_gpu, &done);
        tu_expect(st == H5ZGPU_OK && done == count, "%s, codec %s, mode %u: %s (%s)", api,
                  codec_name(p->codec), (unsigned)p->mode, h5zgpu_status_string(st),
                  h5zgpu_last_error());
        if (dev && st == H5ZGPU_OK)
            for (size_t i = 0; i < count; i++)
                if (cudaMemcpy(h_out + i * cap, d_out[i], lens[i], cudaMemcpyDeviceToHost) !=
                    cudaSuccess)
                    st = H5ZGPU_E_DEVICE;
        for (size_t i = 0; st == H5ZGPU_OK && i < count; i++)
            tu_expect(lens[i] == cpu_len[i] &&
                          memcmp(h_out + i * cap, h_cpu + i * cap, lens[i]) == 0,
                      "%s, codec %s, mode %u: chunk %zu of %zu differs from the CPU's", api,
                      codec_name(p->codec), (unsigned)p->mode, i, count);
        for (size_t i = 0; i < count; i++)
            cin[i] = dev ? (const void *)d_out[i] : (const void *)(h_cpu + i * cap);
        memcpy(lens, cpu_len, count * sizeof *lens);
        st = st == H5ZGPU_OK
                 ? dev ? h5zgpu_decompress_device_batch(count, cin, lens, d_back, raws, back_len,
                                                        0, &done)
                       : h5zgpu_decompress_batch(count, cin, lens, back, raws, back_len, &on_gpu,
                                                 &done)
                 : st;
        tu_expect(st == H5ZGPU_OK, "%s decompression, codec %s: %s (%s)", api,
                  codec_name(p->codec), h5zgpu_status_string(st), h5zgpu_last_error());
        for (size_t i = 0; st == H5ZGPU_OK && i < count; i++) {
            size_t l = 0;
            int same = h5zgpu_decompress(h_cpu + i * cap, cpu_len[i], want, raw, &l, &on_cpu) ==
                           H5ZGPU_OK &&
                       back_len[i] == raw &&
                       (!dev || cudaMemcpy(got + i * raw, d_back[i], raw,
                                           cudaMemcpyDeviceToHost) == cudaSuccess) &&
                       memcmp(got + i * raw, want, raw) == 0;
            tu_expect(same, "%s, codec %s: chunk %zu decodes unlike the CPU", api,
                      codec_name(p->codec), i);
        }
        /* a damaged chunk: the first failure in chunk order, the chunks before it done */
        const size_t bad = count / 2;
        uint8_t byte = 0;
        if (dev && st == H5ZGPU_OK &&
            cudaMemcpy(&byte, (uint8_t *)d_out[bad] + lens[bad] - 1, 1,
                       cudaMemcpyDeviceToHost) == cudaSuccess) {
            byte ^= 0x5A;
            cudaMemcpy((uint8_t *)d_out[bad] + lens[bad] - 1, &byte, 1, cudaMemcpyHostToDevice);
            st = h5zgpu_decompress_device_batch(count, cin, lens, d_back, raws, back_len, 0,
                                                &done);
            char want_msg[64];
            snprintf(want_msg, sizeof want_msg, "chunk %zu of the batch", bad);
            tu_expect(st == H5ZGPU_E_CORRUPT && done == bad &&
                          strstr(h5zgpu_last_error(), want_msg) != NULL,
                      "%s, codec %s: chunk %zu damaged gave %s, %zu done, '%s'", api,
                      codec_name(p->codec), bad, h5zgpu_status_string(st), done,
                      h5zgpu_last_error());
        }
    }
    cudaFree(d_all);
    free(h_in), free(h_cpu), free(h_out), free(want), free(got), free(in), free(d_in);
    free(cin), free(out), free(d_out), free(back), free(d_back), free(caps), free(raws);
    free(lens), free(cpu_len), free(back_len);
}

/* The batch APIs: chunks of one shape and every pattern (noise stored raw, fill, NaN), each
 * error mode, both element types; in device batches the fixed-length codec's chunks are coded
 * together in groups of at most 128 MiB of values, so three 64 MiB chunks make two groups, and
 * the Huffman codec's of at most 8 MiB in groups when compressing. */
void device_batch(void)
{
    for (size_t k = 0; k < ncodecs; k++) {
        h5zgpu_params p = {.codec = codecs[k], .mode = H5ZGPU_MODE_REL, .eb = 1e-3,
                           .dtype = H5ZGPU_FLOAT32, .rank = 3, .dims = {24, 40, 33}};
        batch_case(&p, 12, 0);
        h5zgpu_params q = {.codec = codecs[k], .mode = H5ZGPU_MODE_PWREL, .eb = 1e-3,
                           .dtype = H5ZGPU_FLOAT64, .rank = 2, .dims = {70, 90},
                           .has_fill = 1, .fill = -1e34};
        batch_case(&q, 13, 5);
        h5zgpu_params l = {.codec = codecs[k], .mode = H5ZGPU_MODE_ABS, .eb = 0,
                           .dtype = H5ZGPU_FLOAT32, .rank = 1, .dims = {5000}};
        batch_case(&l, 12, 3);
        if (codecs[k] == H5ZGPU_CODEC_FIXED) {
            h5zgpu_params g = {.codec = codecs[k], .mode = H5ZGPU_MODE_REL, .eb = 1e-3,
                               .dtype = H5ZGPU_FLOAT32, .rank = 2, .dims = {4096, 4096}};
            batch_case(&g, 3, 9);
        }
    }
}

/* A device batch decoding Huffman chunks of one shape written in different modes (REL, PWREL,
 * ABS; a dataset whose filter settings changed holds such chunks), which share the decoder's
 * launches: each must decode to the CPU's values, whichever mode comes first. The cube keeps
 * the coded shape whatever axis order a chunk takes, and at this bound every chunk takes the
 * interpolation and the ANS form (checked, so that the case keeps covering it). */
void mixed_batch(void)
{
    static const h5zgpu_mode modes[] = {H5ZGPU_MODE_REL, H5ZGPU_MODE_PWREL, H5ZGPU_MODE_ABS,
                                        H5ZGPU_MODE_PWREL, H5ZGPU_MODE_REL, H5ZGPU_MODE_ABS};
    enum { COUNT = sizeof modes / sizeof modes[0] };
    h5zgpu_params p = {.codec = H5ZGPU_CODEC_HUFFMAN, .eb = 0.03, .dtype = H5ZGPU_FLOAT32,
                       .rank = 3, .dims = {40, 40, 40}};
    /* chunks 256 bytes apart on the device: their payloads start 4-aligned, as a launch that
     * several chunks share needs */
    const size_t raw = tu_count(&p) * 4, cap = (h5zgpu_compress_bound(&p) + 255) & ~(size_t)255;
    uint8_t *h_in = malloc(raw), *h_c = malloc(COUNT * cap), *want = malloc(raw);
    uint8_t *got = malloc(raw), *d_all = NULL;
    const void *d_in[COUNT];
    void *d_back[COUNT];
    size_t len[COUNT], raws[COUNT], back_len[COUNT], done = 0;
    int ok = h_in && h_c && want && got &&
             cudaMalloc((void **)&d_all, COUNT * (cap + raw)) == cudaSuccess;
    tu_expect(ok, "mixed batch: buffers");
    for (size_t i = 0; ok && i < COUNT; i++) {
        p.mode = modes[i];
        fill(&p, TU_FIELD, 60 + i % 2, h_in);
        h5zgpu_info info;
        ok = h5zgpu_compress(&p, h_in, h_c + i * cap, cap, &len[i], &on_cpu) == H5ZGPU_OK &&
             h5zgpu_chunk_info(h_c + i * cap, len[i], &info) == H5ZGPU_OK &&
             cudaMemcpy(d_all + i * cap, h_c + i * cap, len[i], cudaMemcpyHostToDevice) ==
                 cudaSuccess;
        const uint8_t *pay = h_c + i * cap + info.header_len;
        tu_expect(ok && info.codec == H5ZGPU_CODEC_HUFFMAN && pay[8] == 3 && pay[9] == 0,
                  "mixed batch: chunk %zu (mode %u) is not an interpolation chunk of the ANS "
                  "form", i, (unsigned)modes[i]);
        d_in[i] = d_all + i * cap;
        d_back[i] = d_all + COUNT * cap + i * raw;
        raws[i] = raw;
    }
    h5zgpu_status st = ok ? h5zgpu_decompress_device_batch(COUNT, d_in, len, d_back, raws,
                                                            back_len, 0, &done)
                          : H5ZGPU_E_DEVICE;
    tu_expect(st == H5ZGPU_OK && done == COUNT, "mixed batch: %s (%s)", h5zgpu_status_string(st),
              h5zgpu_last_error());
    for (size_t i = 0; st == H5ZGPU_OK && i < COUNT; i++) {
        size_t l = 0;
        const int same =
            h5zgpu_decompress(h_c + i * cap, len[i], want, raw, &l, &on_cpu) == H5ZGPU_OK &&
            back_len[i] == raw &&
            cudaMemcpy(got, d_back[i], raw, cudaMemcpyDeviceToHost) == cudaSuccess &&
            memcmp(got, want, raw) == 0;
        tu_expect(same, "mixed batch: chunk %zu (mode %u) decodes unlike the CPU", i,
                  (unsigned)modes[i]);
    }
    cudaFree(d_all);
    free(h_in), free(h_c), free(want), free(got);
}
