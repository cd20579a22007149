/* What gpu_identity.c shares with its batch cases (gpu_identity_batch.c). */
#ifndef H5ZGPU_TEST_GPU_IDENTITY_H
#define H5ZGPU_TEST_GPU_IDENTITY_H

#include "util.h"

extern const h5zgpu_exec on_cpu, on_gpu;
/* the codecs to check (--codecs), and the patterns the cases take in turn */
extern h5zgpu_codec codecs[3];
extern size_t ncodecs;
extern const int patterns[];
extern const size_t npatterns;

const char *codec_name(unsigned c);
/* p's shape filled with pattern pat (util's, or gpu_identity.c's own) */
void fill(const h5zgpu_params *p, int pat, uint64_t seed, void *a);

void device_batch(void);
void mixed_batch(void);

#endif
