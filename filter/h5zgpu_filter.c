/* The HDF5 filter 33900 "h5zgpu": can_apply, set_local and the filter function around the codec
 * API. cd_values layout: cd_values.h and docs/FILTER.md. HDF5 is reached only through the
 * run-time bound table (hdf5_bind.h); nothing here may be linked against libhdf5. */
#include "cd_values.h"
#include "hdf5_bind.h"

#include <H5PLextern.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Pushes an error naming the caller's line (not push's own) on HDF5's error stack. */
#define PUSH(a, minor, ...) push((a), (a)->minor, __func__, __LINE__, __VA_ARGS__)

static void push(const hzb_api *a, const hid_t *minor, const char *func, unsigned line,
                 const char *fmt, ...)
{
    char msg[HZF_WHY_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ssize_t before = a->Eget_num(H5E_DEFAULT);
    a->Epush2(H5E_DEFAULT, __FILE__, func, line, *a->ERR_CLS_g, *a->PLINE_g, *minor, "%s", msg);
    if (before < 0 || a->Eget_num(H5E_DEFAULT) > before)
        return;
    /* The default stack ignored the push: HDF5 >= 1.14.5 (2.0 included) pauses it while a
     * filter runs, so a read failure would name only "filter returned failure during read".
     * Push onto a copy of the stack and make the copy the default one (docs/FILTER.md). */
    hid_t copy = a->Eget_current_stack();
    if (copy < 0)
        return;
    a->Epush2(copy, __FILE__, func, line, *a->ERR_CLS_g, *a->PLINE_g, *minor, "%s", msg);
    a->Eset_current_stack(copy); /* also closes copy */
}

static const char *class_name(H5T_class_t c)
{
    static const char *const names[] = {"integer", "float",  "time",      "string",
                                        "bitfield", "opaque", "compound", "reference",
                                        "enum",    "variable-length", "array"};
    if (c >= 0 && (size_t)c < sizeof names / sizeof names[0])
        return names[c];
    return "an unknown class";
}

static int host_is_big_endian(void)
{
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 0;
}

static void swap_bytes(uint8_t *p, size_t n, size_t esize)
{
    for (size_t i = 0; i + esize <= n; i += esize)
        for (size_t j = 0; j < esize / 2; j++) {
            uint8_t t = p[i + j];
            p[i + j] = p[i + esize - 1 - j];
            p[i + esize - 1 - j] = t;
        }
}

/* A value's bits in the dataset's element type, as a comparable integer (returned) and as bytes
 * in the dataset's byte order. */
static uint64_t value_bytes(double v, size_t size, int big_endian, uint8_t bytes[8])
{
    uint64_t bits;
    if (size == 4) {
        float f = (float)v;
        uint32_t w;
        memcpy(&w, &f, 4);
        memcpy(bytes, &w, 4);
        bits = w;
    } else {
        memcpy(&bits, &v, 8);
        memcpy(bytes, &bits, 8);
    }
    if (big_endian != host_is_big_endian())
        swap_bytes(bytes, size, size);
    return bits;
}

/* A filter before h5zgpu hands it transformed bytes (shuffled, scaled, packed, compressed), not
 * the dataset's values: the bound would hold for the wrong numbers, or HDF5 would skip h5zgpu. */
static int check_pipeline(const hzb_api *a, hid_t dcpl)
{
    int nf = a->Pget_nfilters(dcpl);
    for (int i = 0; i < nf; i++) {
        unsigned flags, config;
        size_t ncd = 0;
        char name[80] = "";
        H5Z_filter_t id = a->Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, NULL, sizeof name, name,
                                          &config);
        if (id == H5ZGPU_FILTER_ID)
            return 0;
        PUSH(a, BADVALUE_g,
             "h5zgpu: filter %d (%s) comes before h5zgpu in the dataset's pipeline; h5zgpu "
             "compresses the values themselves and must be the first filter (filters after it, "
             "such as fletcher32 or deflate, are fine): drop it (h5py: shuffle=False, "
             "scaleoffset=None) or set it after h5zgpu",
             (int)id, *name ? name : "unnamed");
        return -1;
    }
    return 0;
}

static herr_t can_apply(hid_t dcpl, hid_t type, hid_t space)
{
    (void)space;
    const hzb_api *a = hzb_get();
    if (!a)
        return -1;
    H5T_class_t cls = a->Tget_class(type);
    size_t size = a->Tget_size(type);
    if (cls != H5T_FLOAT || (size != 4 && size != 8)) {
        PUSH(a, BADTYPE_g,
             "h5zgpu: dataset type is %s of %zu bytes; h5zgpu compresses only float32 and "
             "float64",
             class_name(cls), size);
        return -1;
    }
    unsigned flags, cd[HZF_MAX_NELMTS];
    size_t n = HZF_MAX_NELMTS;
    if (a->Pget_filter_by_id2(dcpl, H5ZGPU_FILTER_ID, &flags, &n, cd, 0, NULL, NULL) < 0) {
        PUSH(a, CANTGET_g, "h5zgpu: cannot read the filter's cd_values");
        return -1;
    }
    h5zgpu_params p;
    size_t ulen;
    char why[HZF_WHY_LEN];
    if (n > HZF_MAX_NELMTS) {
        PUSH(a, BADVALUE_g, "h5zgpu: %zu cd_values, more than any valid layout; cd_values must be "
             HZF_LAYOUT_HINT, n);
        return -1;
    }
    if (hzf_parse_user(n, cd, &p, &ulen, why, sizeof why) < 0) {
        PUSH(a, BADVALUE_g, "h5zgpu: %s", why);
        return -1;
    }
    if (p.has_fill && size == 4 && p.fill == p.fill && (double)(float)p.fill != p.fill) {
        PUSH(a, BADVALUE_g,
             "h5zgpu: missing value %.17g (cd_values[5..6]) is not a float32 value, and the "
             "dataset is float32; pass the float32 value converted to double",
             p.fill);
        return -1;
    }
    hsize_t dims[H5ZGPU_MAX_RANK];
    int rank = a->Pget_chunk(dcpl, H5ZGPU_MAX_RANK, dims);
    if (rank < 1) {
        PUSH(a, CANTGET_g, "h5zgpu: the dataset must be chunked (H5Pset_chunk)");
        return -1;
    }
    p.dtype = size == 4 ? H5ZGPU_FLOAT32 : H5ZGPU_FLOAT64;
    p.rank = (unsigned)rank;
    for (int i = 0; i < rank; i++)
        p.dims[i] = dims[i];
    if (h5zgpu_params_check(&p) != H5ZGPU_OK) {
        PUSH(a, BADVALUE_g, "h5zgpu: %s; cd_values are " HZF_LAYOUT_HINT, h5zgpu_last_error());
        return -1;
    }
    if (check_pipeline(a, dcpl) < 0)
        return -1;
    /* where the chunks will be compressed: a bad H5ZGPU_DEVICE, or a GPU it requires and this
     * machine lacks, is said now rather than at the first write */
    if (h5zgpu_exec_check(NULL) != H5ZGPU_OK) {
        PUSH(a, BADVALUE_g, "h5zgpu: %s", h5zgpu_last_error());
        return -1;
    }
    return 1;
}

/* The codec's fill value, and HDF5 set up to write exactly it into the parts of a chunk no one
 * wrote (an edge chunk's padding, the rest of a chunk written in parts): such elements must stay
 * out of REL ranges. The codec's fill value is the user's missing value when given, else the
 * dataset's fill value (HDF5's default 0 counts), else +0.0 (an undefined fill value pads with
 * zeros). HDF5 pads with zeros under fill time NEVER (netCDF's NOFILL), so that is raised to
 * ALLOC when the fill value is not +0.0; a missing value becomes the dataset's fill value unless
 * the user set a different one, which is refused. */
static int settle_fill(const hzb_api *a, hid_t dcpl, hid_t type, const h5zgpu_params *user,
                       h5zgpu_params *p)
{
    H5D_fill_value_t status;
    H5D_fill_time_t when;
    uint8_t bytes[8], want[8];
    size_t size = a->Tget_size(type);
    int be = a->Tget_order(type) == H5T_ORDER_BE;
    if (a->Pfill_value_defined(dcpl, &status) < 0 || a->Pget_fill_time(dcpl, &when) < 0 ||
        (status != H5D_FILL_VALUE_UNDEFINED && a->Pget_fill_value(dcpl, type, bytes) < 0)) {
        PUSH(a, CANTGET_g, "h5zgpu: cannot read the dataset's fill value and fill time");
        return -1;
    }
    double fill = 0.0;
    if (status != H5D_FILL_VALUE_UNDEFINED) {
        if (be != host_is_big_endian())
            swap_bytes(bytes, size, size);
        if (size == 4) {
            float f;
            memcpy(&f, bytes, 4);
            fill = f;
        } else {
            memcpy(&fill, bytes, 8);
        }
    }
    p->has_fill = 1;
    p->fill = user->has_fill ? user->fill : fill;
    uint64_t fill_bits = value_bytes(p->fill, size, be, want);
    uint64_t dset_bits = value_bytes(fill, size, be, bytes);
    if (user->has_fill && status != H5D_FILL_VALUE_UNDEFINED && fill_bits != dset_bits) {
        if (status == H5D_FILL_VALUE_USER_DEFINED) {
            PUSH(a, BADVALUE_g,
                 "h5zgpu: the missing value %.9g differs from the dataset's fill value %.9g, "
                 "which HDF5 writes into the parts of chunks no one wrote; set the fill value "
                 "to the missing value (h5py: fillvalue=...)",
                 p->fill, fill);
            return -1;
        }
        status = H5D_FILL_VALUE_UNDEFINED; /* HDF5's default 0: replaced below */
    }
    if (user->has_fill && status == H5D_FILL_VALUE_UNDEFINED &&
        a->Pset_fill_value(dcpl, type, want) < 0) {
        PUSH(a, CANTSET_g, "h5zgpu: cannot make the missing value the dataset's fill value");
        return -1;
    }
    uint64_t zero_bits = value_bytes(0.0, size, be, bytes);
    if (when == H5D_FILL_TIME_NEVER && fill_bits != zero_bits &&
        a->Pset_fill_time(dcpl, H5D_FILL_TIME_ALLOC) < 0) {
        PUSH(a, CANTSET_g, "h5zgpu: cannot set the dataset's fill time");
        return -1;
    }
    return 0;
}

static herr_t set_local(hid_t dcpl, hid_t type, hid_t space)
{
    (void)space;
    const hzb_api *a = hzb_get();
    if (!a)
        return -1;
    unsigned flags, cd[HZF_MAX_NELMTS];
    size_t n = HZF_MAX_NELMTS;
    hsize_t dims[H5ZGPU_MAX_RANK];
    if (a->Pget_filter_by_id2(dcpl, H5ZGPU_FILTER_ID, &flags, &n, cd, 0, NULL, NULL) < 0 ||
        n > HZF_MAX_NELMTS) {
        PUSH(a, CANTGET_g, "h5zgpu: cannot read the filter's cd_values");
        return -1;
    }
    int rank = a->Pget_chunk(dcpl, H5ZGPU_MAX_RANK, dims);
    if (rank < 1) {
        PUSH(a, CANTGET_g, "h5zgpu: cannot read the dataset's chunk shape");
        return -1;
    }
    h5zgpu_params user, p;
    size_t ulen;
    char why[HZF_WHY_LEN];
    if (hzf_parse_user(n, cd, &user, &ulen, why, sizeof why) < 0) {
        PUSH(a, BADVALUE_g, "h5zgpu: %s", why);
        return -1;
    }
    p = user;
    p.dtype = a->Tget_size(type) == 4 ? H5ZGPU_FLOAT32 : H5ZGPU_FLOAT64;
    p.rank = (unsigned)rank;
    for (int i = 0; i < rank; i++)
        p.dims[i] = dims[i];
    if (settle_fill(a, dcpl, type, &user, &p) < 0)
        return -1;
    /* values a previous set_local appended (a copied dcpl) are replaced, not extended */
    n = hzf_write_local(cd, ulen, &p, a->Tget_order(type) == H5T_ORDER_BE);
    /* mandatory: h5py marks filters optional, and HDF5 stores a chunk whose optional filter
     * failed uncompressed and in silence; a chunk h5zgpu cannot write as asked is an error */
    if (a->Pmodify_filter(dcpl, H5ZGPU_FILTER_ID, flags & ~(unsigned)H5Z_FLAG_OPTIONAL, n, cd) <
        0) {
        PUSH(a, CANTSET_g, "h5zgpu: cannot store the filter's local cd_values");
        return -1;
    }
    return 1;
}

static size_t encode(const hzb_api *a, size_t n, const unsigned cd[], size_t nbytes,
                     size_t *buf_size, void **buf)
{
    h5zgpu_params p;
    int big_endian;
    char why[HZF_WHY_LEN];
    uint8_t *native = NULL, *out = NULL;
    size_t ret = 0, len = 0;
    if (hzf_parse(n, cd, &p, &big_endian, why, sizeof why) < 0) {
        PUSH(a, BADVALUE_g, "h5zgpu: %s", why);
        goto done;
    }
    size_t esize = p.dtype == H5ZGPU_FLOAT32 ? 4 : 8, count = 1;
    for (unsigned i = 0; i < p.rank; i++)
        count *= (size_t)p.dims[i];
    if (count * esize != nbytes) {
        PUSH(a, BADVALUE_g,
             "h5zgpu: chunk of %zu bytes does not match the chunk shape in cd_values (%zu "
             "elements of %zu bytes)",
             nbytes, count, esize);
        goto done;
    }
    size_t cap = h5zgpu_compress_bound(&p);
    if (cap == 0) {
        PUSH(a, BADVALUE_g, "h5zgpu: %s", h5zgpu_last_error());
        goto done;
    }
    /* swap a copy: HDF5 keeps the input buffer when a filter fails */
    const void *in = *buf;
    if (big_endian != host_is_big_endian()) {
        if (!(native = malloc(nbytes))) {
            PUSH(a, NOSPACE_g, "h5zgpu: out of memory (%zu bytes)", nbytes);
            goto done;
        }
        memcpy(native, *buf, nbytes);
        swap_bytes(native, nbytes, esize);
        in = native;
    }
    if (!(out = malloc(cap))) {
        PUSH(a, NOSPACE_g, "h5zgpu: out of memory (%zu bytes)", cap);
        goto done;
    }
    h5zgpu_status st = h5zgpu_compress(&p, in, out, cap, &len, NULL);
    if (st != H5ZGPU_OK) {
        PUSH(a, CANTFILTER_g, "h5zgpu: compression failed (%s): %s", h5zgpu_status_string(st),
             h5zgpu_last_error());
        goto done;
    }
    free(*buf);
    *buf = out;
    *buf_size = cap;
    out = NULL;
    ret = len;
done:
    free(native);
    free(out);
    return ret;
}

/* "float32 [16 x 32 x 32]" into s. */
static void describe(char *s, size_t len, h5zgpu_dtype dtype, unsigned rank, const uint64_t *dims)
{
    int k = snprintf(s, len, "%s [", dtype == H5ZGPU_FLOAT32 ? "float32" : "float64");
    for (unsigned i = 0; i < rank && k > 0 && (size_t)k < len; i++)
        k += snprintf(s + k, len - (size_t)k, "%s%llu", i ? " x " : "",
                      (unsigned long long)dims[i]);
    if (k > 0 && (size_t)k < len)
        snprintf(s + k, len - (size_t)k, "]");
}

static size_t decode(const hzb_api *a, size_t n, const unsigned cd[], size_t nbytes,
                     size_t *buf_size, void **buf)
{
    h5zgpu_params p;
    h5zgpu_info info;
    int big_endian;
    char why[HZF_WHY_LEN];
    uint8_t *out = NULL;
    size_t ret = 0, len = 0;
    h5zgpu_status st;
    if (hzf_parse(n, cd, &p, &big_endian, why, sizeof why) < 0) {
        PUSH(a, BADVALUE_g, "h5zgpu: %s", why);
        goto done;
    }
    if ((st = h5zgpu_chunk_info(*buf, nbytes, &info)) != H5ZGPU_OK)
        goto fail;
    /* the header is not yet checksummed: trust it only where the dataset agrees with it. A
     * chunk of another type or shape (H5Dwrite_chunk given another dataset's chunk) would
     * decode to reinterpreted bits. */
    int same = info.dtype == p.dtype && info.rank == p.rank;
    for (unsigned i = 0; same && i < p.rank; i++)
        same = info.dims[i] == p.dims[i];
    if (!same) {
        char has[160], want[160];
        describe(has, sizeof has, info.dtype, info.rank, info.dims);
        describe(want, sizeof want, p.dtype, p.rank, p.dims);
        PUSH(a, CANTFILTER_g,
             "h5zgpu: cannot decompress a chunk: its header describes %s, the dataset's chunks "
             "are %s (a chunk written with H5Dwrite_chunk for another dataset?)",
             has, want);
        goto done;
    }
    if (info.raw_len > SIZE_MAX || !(out = malloc((size_t)info.raw_len))) {
        PUSH(a, NOSPACE_g, "h5zgpu: out of memory (%llu bytes)", (unsigned long long)info.raw_len);
        goto done;
    }
    if ((st = h5zgpu_decompress(*buf, nbytes, out, (size_t)info.raw_len, &len, NULL)) !=
        H5ZGPU_OK)
        goto fail;
    if (big_endian != host_is_big_endian())
        swap_bytes(out, len, info.dtype == H5ZGPU_FLOAT32 ? 4 : 8);
    free(*buf);
    *buf = out;
    *buf_size = (size_t)info.raw_len;
    out = NULL;
    ret = len;
    goto done;
fail:
    PUSH(a, CANTFILTER_g, "h5zgpu: cannot decompress a chunk (%s): %s", h5zgpu_status_string(st),
         h5zgpu_last_error());
done:
    free(out);
    return ret;
}

static size_t filter(unsigned flags, size_t n, const unsigned cd[], size_t nbytes,
                     size_t *buf_size, void **buf)
{
    const hzb_api *a = hzb_get();
    if (!a)
        return 0;
    if (flags & H5Z_FLAG_REVERSE)
        return decode(a, n, cd, nbytes, buf_size, buf);
    return encode(a, n, cd, nbytes, buf_size, buf);
}

static const H5Z_class2_t h5zgpu_class = {
    .version = H5Z_CLASS_T_VERS,
    .id = H5ZGPU_FILTER_ID,
    .encoder_present = 1,
    .decoder_present = 1,
    .name = H5ZGPU_FILTER_NAME,
    .can_apply = can_apply,
    .set_local = set_local,
    .filter = filter,
};

H5PL_type_t H5PLget_plugin_type(void)
{
    return H5PL_TYPE_FILTER;
}

const void *H5PLget_plugin_info(void)
{
    /* called by the libhdf5 that is loading us: bind to that one */
    hzb_bind(__builtin_return_address(0));
    return &h5zgpu_class;
}
