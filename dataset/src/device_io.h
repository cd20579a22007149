/* Whole-dataset writes and reads with device buffers (CUDA builds; otherwise they refuse). */
#ifndef H5ZGPU_DATASET_DEVICE_IO_H
#define H5ZGPU_DATASET_DEVICE_IO_H

#include "plan.h"

h5zgpu_status ds_write_device(const ds_plan *pl, const void *d_block);
h5zgpu_status ds_read_device(const ds_plan *pl, void *d_block);

#endif
