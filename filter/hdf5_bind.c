/* Run-time binding to the libhdf5 that loaded the plugin (see hdf5_bind.h for why). */
#define _GNU_SOURCE /* dladdr, dl_iterate_phdr, RTLD_NOLOAD, RTLD_DEFAULT */
#include "hdf5_bind.h"

#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <string.h>

/* Every name the filter uses, and where its address goes in the table. */
static const struct {
    const char *name;
    size_t off;
} names[] = {
    {"H5Tget_class", offsetof(hzb_api, Tget_class)},
    {"H5Tget_size", offsetof(hzb_api, Tget_size)},
    {"H5Tget_order", offsetof(hzb_api, Tget_order)},
    {"H5Pget_chunk", offsetof(hzb_api, Pget_chunk)},
    {"H5Pget_filter_by_id2", offsetof(hzb_api, Pget_filter_by_id2)},
    {"H5Pget_nfilters", offsetof(hzb_api, Pget_nfilters)},
    {"H5Pget_filter2", offsetof(hzb_api, Pget_filter2)},
    {"H5Pmodify_filter", offsetof(hzb_api, Pmodify_filter)},
    {"H5Pfill_value_defined", offsetof(hzb_api, Pfill_value_defined)},
    {"H5Pget_fill_value", offsetof(hzb_api, Pget_fill_value)},
    {"H5Pset_fill_value", offsetof(hzb_api, Pset_fill_value)},
    {"H5Pget_fill_time", offsetof(hzb_api, Pget_fill_time)},
    {"H5Pset_fill_time", offsetof(hzb_api, Pset_fill_time)},
    {"H5Epush2", offsetof(hzb_api, Epush2)},
    {"H5Eget_num", offsetof(hzb_api, Eget_num)},
    {"H5Eget_current_stack", offsetof(hzb_api, Eget_current_stack)},
    {"H5Eset_current_stack", offsetof(hzb_api, Eset_current_stack)},
    {"H5E_ERR_CLS_g", offsetof(hzb_api, ERR_CLS_g)},
    {"H5E_PLINE_g", offsetof(hzb_api, PLINE_g)},
    {"H5E_CANTFILTER_g", offsetof(hzb_api, CANTFILTER_g)},
    {"H5E_BADVALUE_g", offsetof(hzb_api, BADVALUE_g)},
    {"H5E_BADTYPE_g", offsetof(hzb_api, BADTYPE_g)},
    {"H5E_CANTGET_g", offsetof(hzb_api, CANTGET_g)},
    {"H5E_CANTSET_g", offsetof(hzb_api, CANTSET_g)},
    {"H5E_NOSPACE_g", offsetof(hzb_api, NOSPACE_g)},
};

/* One table per process: the plugin stays mapped (-z nodelete), so each load by an HDF5 rebinds
 * to that HDF5; two HDF5 libraries using the plugin at the same time cannot both be served. */
static hzb_api table;
static const hzb_api *bound;

static int bind_from(void *handle, hzb_api *out)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *sym = dlsym(handle, names[i].name);
        if (!sym)
            return 0;
        /* POSIX guarantees data and function pointers share a representation */
        memcpy((char *)out + names[i].off, &sym, sizeof sym);
    }
    return 1;
}

static int bind_path(const char *path, hzb_api *out)
{
    void *h = dlopen(path, RTLD_NOLOAD | RTLD_LAZY);
    if (!h)
        return 0;
    int ok = bind_from(h, out);
    /* the library stays mapped: HDF5 is running inside it and holds the plugin */
    dlclose(h);
    return ok;
}

static int base_is_libhdf5(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strncmp(base, "libhdf5", 7) == 0 && !strstr(base, "_hl");
}

/* dl_iterate_phdr callback: the first loaded libhdf5 that itself defines H5Pget_chunk (dlsym on
 * a handle also searches its dependencies, so libhdf5_cpp would otherwise pass). */
static int find_libhdf5(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    if (!info->dlpi_name || !base_is_libhdf5(info->dlpi_name))
        return 0;
    void *h = dlopen(info->dlpi_name, RTLD_NOLOAD | RTLD_LAZY);
    if (!h)
        return 0;
    Dl_info where;
    void *sym = dlsym(h, "H5Pget_chunk");
    int own = sym && dladdr(sym, &where) && where.dli_fname &&
              strcmp(where.dli_fname, info->dlpi_name) == 0;
    int ok = own && bind_from(h, (hzb_api *)data);
    dlclose(h);
    return ok;
}

const hzb_api *hzb_bind(const void *caller)
{
    Dl_info who;
    hzb_api t;
    int ok = caller && dladdr(caller, &who) && who.dli_fname && *who.dli_fname &&
             bind_path(who.dli_fname, &t);
    if (!ok)
        ok = dl_iterate_phdr(find_libhdf5, &t) != 0;
    if (!ok)
        ok = bind_from(RTLD_DEFAULT, &t);
    if (ok)
        table = t;
    bound = ok ? &table : NULL;
    return bound;
}

const hzb_api *hzb_get(void)
{
    return bound;
}
