/* Whole-dataset writes and reads with host buffers (pipelined batches on the codec API). */
#ifndef H5ZGPU_DATASET_HOST_IO_H
#define H5ZGPU_DATASET_HOST_IO_H

#include "plan.h"

h5zgpu_status ds_write_host(const ds_plan *pl, const void *block, const h5zgpu_exec *exec);
h5zgpu_status ds_read_host(const ds_plan *pl, void *block, const h5zgpu_exec *exec);

#endif
