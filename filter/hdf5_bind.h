/* The HDF5 functions the filter calls, bound at run time to the libhdf5 that loaded the plugin.
 *
 * The plugin is not linked to libhdf5: a plugin linked to one HDF5 and loaded by another (h5py's
 * wheel bundles its own, loaded RTLD_LOCAL) calls the wrong library and fails with
 * "H5Tget_class(): not a datatype". The signatures come from the headers it is built
 * against, the oldest HDF5 supported (1.10); every call here exists unchanged from 1.10 to 2.x. */
#ifndef H5ZGPU_HDF5_BIND_H
#define H5ZGPU_HDF5_BIND_H

#include <hdf5.h>

typedef struct hzb_api {
    __typeof__(&H5Tget_class) Tget_class;
    __typeof__(&H5Tget_size) Tget_size;
    __typeof__(&H5Tget_order) Tget_order;
    __typeof__(&H5Pget_chunk) Pget_chunk;
    __typeof__(&H5Pget_filter_by_id2) Pget_filter_by_id2;
    __typeof__(&H5Pget_nfilters) Pget_nfilters;
    __typeof__(&H5Pget_filter2) Pget_filter2;
    __typeof__(&H5Pmodify_filter) Pmodify_filter;
    __typeof__(&H5Pfill_value_defined) Pfill_value_defined;
    __typeof__(&H5Pget_fill_value) Pget_fill_value;
    __typeof__(&H5Pset_fill_value) Pset_fill_value;
    __typeof__(&H5Pget_fill_time) Pget_fill_time;
    __typeof__(&H5Pset_fill_time) Pset_fill_time;
    __typeof__(&H5Epush2) Epush2;
    __typeof__(&H5Eget_num) Eget_num;
    __typeof__(&H5Eget_current_stack) Eget_current_stack;
    __typeof__(&H5Eset_current_stack) Eset_current_stack;
    /* error class and codes: globals whose values HDF5 sets when it initialises */
    const hid_t *ERR_CLS_g;
    const hid_t *PLINE_g;
    const hid_t *CANTFILTER_g;
    const hid_t *BADVALUE_g;
    const hid_t *BADTYPE_g;
    const hid_t *CANTGET_g;
    const hid_t *CANTSET_g;
    const hid_t *NOSPACE_g;
} hzb_api;

/* Binds every entry to the HDF5 library containing `caller` (an address inside it), else to
 * the first loaded libhdf5 that exports H5Pget_chunk, else to the global namespace. Returns the
 * table, or NULL when some name could not be found (the filter then refuses all work). */
const hzb_api *hzb_bind(const void *caller);

/* The bound table, or NULL when binding failed or has not happened. */
const hzb_api *hzb_get(void);

#endif
