/* The public entry points: plan the selection, then the host or device path. */
#include "device_io.h"
#include "host_io.h"

#include "error.h"

static h5zgpu_status run(hid_t dset, hid_t file_space, const void *buf, h5zgpu_memory where,
                         const h5zgpu_exec *exec, int writing)
{
    ds_plan pl;
    if (!buf)
        return hz_fail(H5ZGPU_E_INVALID_ARG, "h5zgpu_dataset: no buffer");
    if (where != H5ZGPU_MEMORY_HOST && where != H5ZGPU_MEMORY_DEVICE)
        return hz_fail(H5ZGPU_E_INVALID_ARG, "h5zgpu_dataset: memory kind %d is neither host "
                       "nor device", (int)where);
    h5zgpu_status st = exec ? h5zgpu_exec_check(exec) : H5ZGPU_OK;
    if (st == H5ZGPU_OK)
        st = ds_plan_make(dset, file_space, &pl);
    if (st != H5ZGPU_OK || pl.nchunks == 0)
        return st;
    if (writing && pl.p.mode == H5ZGPU_MODE_RATIO)
        ds_plan_scatter(&pl);   /* every batch a sample of the block: ratio_sample.h */
    if (where == H5ZGPU_MEMORY_DEVICE)
        return writing ? ds_write_device(&pl, buf) : ds_read_device(&pl, (void *)buf);
    return writing ? ds_write_host(&pl, buf, exec) : ds_read_host(&pl, (void *)buf, exec);
}

h5zgpu_status h5zgpu_dataset_write(hid_t dset, hid_t file_space, const void *buf,
                                   h5zgpu_memory where, const h5zgpu_exec *exec)
{
    return run(dset, file_space, buf, where, exec, 1);
}

h5zgpu_status h5zgpu_dataset_read(hid_t dset, hid_t file_space, void *buf, h5zgpu_memory where,
                                  const h5zgpu_exec *exec)
{
    return run(dset, file_space, buf, where, exec, 0);
}
