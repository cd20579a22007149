/* h5zgpu_dataset: whole-dataset writes and reads beside the HDF5 filter.
 *
 * A dataset created with filter 33900 (its only filter) is written chunk by chunk without
 * HDF5's one-chunk-at-a-time pipeline: every chunk a selection touches is cut out of the
 * caller's buffer, compressed in batches (several chunks in flight on the GPU, or the CPU when
 * there is none) and stored as finished bytes with H5Dwrite_chunk, while the next batch
 * compresses. Reads use H5Dread_chunk and batched decompression. The stored chunks are byte for
 * byte those the filter writes for the same values: a chunk the selection covers in part keeps
 * its other values (read back first, as HDF5 does), a chunk new to the file is padded with the
 * fill value, so any HDF5 reader with the plugin reads the file. Under fixed ratio (mode 3) the
 * selection's chunks instead share one budget: the bound comes from a sample of them and moves
 * batch by batch (batches of a scattered order), so that the selection as a whole lands at the
 * target; each chunk is an ABS chunk that records its bound (h5zgpu_ratio_begin, h5zgpu.h).
 *
 * This library is compiled against, and links, the HDF5 of the program that uses it (a static
 * library; the plugin itself never links HDF5). Not for use under parallel HDF5 with a file
 * opened on the MPI-IO driver: direct chunk writes there are not collective (docs/USAGE.md). */
#ifndef H5ZGPU_DATASET_H
#define H5ZGPU_DATASET_H

#include "h5zgpu.h"

#include <hdf5.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where a buffer lives. Device buffers are on the calling thread's current CUDA device. */
typedef enum h5zgpu_memory {
    H5ZGPU_MEMORY_HOST = 0,
    H5ZGPU_MEMORY_DEVICE = 1
} h5zgpu_memory;

/* The parameters the filter applies to each chunk of dset (from its stored cd_values). Fails,
 * with h5zgpu_last_error() saying why, when dset is not chunked, not float32/float64 in
 * little-endian order, or filter 33900 is not its only filter. */
h5zgpu_status h5zgpu_dataset_params(hid_t dset, h5zgpu_params *p);

/* Writes buf into the selection of dset. file_space is H5S_ALL (the whole dataset) or a
 * dataspace of dset whose selection is one block (H5Sselect_hyperslab with count 1 on every
 * axis, or all); buf holds that block's values in C order in the dataset's element type.
 * Host buffers are compressed on exec (NULL: as H5ZGPU_DEVICE says); device buffers on their
 * GPU, and only compressed bytes cross PCIe. On failure, chunks before the failing one may
 * have been written; h5zgpu_last_error() names the chunk. */
h5zgpu_status h5zgpu_dataset_write(hid_t dset, hid_t file_space, const void *buf,
                                   h5zgpu_memory where, const h5zgpu_exec *exec);

/* Reads the selection of dset into buf (as for h5zgpu_dataset_write). Chunks never written read
 * as the fill value. */
h5zgpu_status h5zgpu_dataset_read(hid_t dset, hid_t file_space, void *buf, h5zgpu_memory where,
                                  const h5zgpu_exec *exec);

#ifdef __cplusplus
}
#endif

#endif
