/* Fixed ratio over a whole selection (h5zgpu_ratio_budget): a sample of the chunks the block
 * covers whole gives the bound the write starts at, and the batches, each a scattered run of
 * the block's chunks (ds_plan_scatter), move it towards what the selection's budget has left.
 * A sample misjudges fields whose chunks differ much (the densities' clumps, a region all
 * missing); the batches see the whole block, so the selection as a whole lands near its
 * target. */
#ifndef H5ZGPU_DATASET_RATIO_SAMPLE_H
#define H5ZGPU_DATASET_RATIO_SAMPLE_H

#include "plan.h"

/* Chunks sampled: a 32nd of those the block covers whole, at least 8 (all when fewer), at most
 * 256 MiB of them (one chunk at the least): a sample's try costs that share of a write, and a
 * larger sample would tell the batches little more. */
#define DS_RATIO_SHARE 32u
#define DS_RATIO_LEAST 8u
#define DS_RATIO_BYTES ((size_t)256 << 20)

/* The sampled chunks' indices into pick (at most ds_ratio_most(pl)): the first whole ones in
 * pl's order, which ds_plan_scatter spreads over the block; returns how many: 0 when the block
 * covers no chunk whole. */
size_t ds_ratio_most(const ds_plan *pl);
size_t ds_ratio_sample(const ds_plan *pl, size_t *pick);

/* Chunks a batch under fixed ratio: at most an eighth of the selection's, so that eight batches
 * or more correct the bound. */
size_t ds_ratio_batch(const ds_plan *pl, size_t size);

/* A budget that leaves pl's parameters as they are (reads, and writes of other modes). */
void ds_ratio_off(const ds_plan *pl, h5zgpu_ratio_budget *b);

/* The budget of a write from a sample of the block in host memory, coded on exec (off when no
 * chunk is covered whole or the sample is exact at any bound: each chunk then searches its
 * own). */
h5zgpu_status ds_ratio_host(const ds_plan *pl, const void *block, const h5zgpu_exec *exec,
                            h5zgpu_ratio_budget *b);

#endif
