/* The HDF5 filter 33900 "h5zgpu": three callbacks and one cd_values parser around the codec API.
 * cd_values layout: docs/FILTER.md. HDF5 is reached only through the run-time bound table
 * (hdf5_bind.h); nothing here may be linked against libhdf5. */
#include "hdf5_bind.h"
#include "h5zgpu.h"

#include <H5PLextern.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The four values users pass (DESIGN.md), optionally a flags word and a missing value, then what
 * set_local appends after them (docs/FILTER.md). */
#define HZF_USER_NELMTS 4u
#define HZF_IDX_UFLAGS 4u          /* optional user flags word */
#define HZF_UFLAG_MISSING 1u       /* bit 0: a missing value follows (2 words) */
/* bit 2: a Huffman radius follows (1 word, after the missing value). Bit 1 stays unused: a
 * flags word of 2 marks set_local's part. */
#define HZF_UFLAG_RADIUS 4u
#define HZF_IDX_OPTIONAL 5u        /* where the optional values start */
#define HZF_USER_MAX_NELMTS 8u
/* set_local's part, at offsets from its start U (4, 5 or 7: the length of the user's part) */
#define HZF_OFF_LAYOUT 0u
#define HZF_OFF_DTYPE 1u
#define HZF_OFF_ORDER 2u
#define HZF_OFF_FILL 3u            /* 1 when a fill value follows */
#define HZF_OFF_FILL_LO 4u         /* the codec's fill value as a binary64 pattern, low word first */
#define HZF_OFF_FILL_HI 5u
#define HZF_OFF_RANK 6u
#define HZF_OFF_DIMS 7u
/* 2: a flags word at index 4 equal to it cannot be a user's (flags are 0 or 1) */
#define HZF_LAYOUT_VERSION 2u
#define HZF_ORDER_LE 0u
#define HZF_ORDER_BE 1u
#define HZF_MAX_NELMTS (HZF_USER_MAX_NELMTS + HZF_OFF_DIMS + H5ZGPU_MAX_RANK)

#define HZF_LAYOUT_HINT                                                                          \
    "{codec (0 auto, 1 fixed, 2 huffman), mode (0 ABS, 1 REL, 2 PWREL), eb low word, eb high " \
    "word}, optionally followed by {flags (bit 0: a missing value follows, bit 2: a Huffman "    \
    "radius follows), missing value low word, high word, radius}"

#define HZF_MSG_LEN 640

static void push(const hzb_api *a, const hid_t *minor, const char *func, const char *fmt, ...)
{
    char msg[HZF_MSG_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ssize_t before = a->Eget_num(H5E_DEFAULT);
    a->Epush2(H5E_DEFAULT, __FILE__, func, __LINE__, *a->ERR_CLS_g, *a->PLINE_g, *minor, "%s",
              msg);
    if (before < 0 || a->Eget_num(H5E_DEFAULT) > before)
        return;
    /* The default stack ignored the push: HDF5 >= 1.14.5 (2.0 included) pauses it while a
     * filter runs, so a read failure would name only "filter returned failure during read".
     * Push onto a copy of the stack and make the copy the default one (docs/FILTER.md). */
    hid_t copy = a->Eget_current_stack();
    if (copy < 0)
        return;
    a->Epush2(copy, __FILE__, func, __LINE__, *a->ERR_CLS_g, *a->PLINE_g, *minor, "%s", msg);
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

/* The user's values into p (codec, mode, eb, missing value as the fill) and the length of the
 * user's part into *ulen. Values after that part are set_local's. Returns 0, or -1 with why. */
static int parse_user(size_t n, const unsigned cd[], h5zgpu_params *p, size_t *ulen, char *why,
                      size_t whylen)
{
    if (n < HZF_USER_NELMTS) {
        snprintf(why, whylen, "cd_values must be " HZF_LAYOUT_HINT "; got %zu values", n);
        return -1;
    }
    if (cd[0] > H5ZGPU_CODEC_HUFFMAN) {
        snprintf(why, whylen, "cd_values[0]=%u is not a codec; cd_values must be " HZF_LAYOUT_HINT,
                 cd[0]);
        return -1;
    }
    if (cd[1] > H5ZGPU_MODE_PWREL) {
        snprintf(why, whylen,
                 "cd_values[1]=%u is not an error mode; cd_values must be " HZF_LAYOUT_HINT, cd[1]);
        return -1;
    }
    memset(p, 0, sizeof *p);
    p->codec = (h5zgpu_codec)cd[0];
    p->mode = (h5zgpu_mode)cd[1];
    p->eb = h5zgpu_eb_from_words(cd[2], cd[3]);
    /* a flags word equal to the layout version is set_local's part of a copied dcpl */
    if (n == HZF_USER_NELMTS || cd[HZF_IDX_UFLAGS] == HZF_LAYOUT_VERSION) {
        *ulen = HZF_USER_NELMTS;
        return 0;
    }
    unsigned flags = cd[HZF_IDX_UFLAGS];
    if (flags & ~(HZF_UFLAG_MISSING | HZF_UFLAG_RADIUS)) {
        snprintf(why, whylen,
                 "cd_values[4]=%u has unknown flag bits (bit 0, a missing value follows, and bit "
                 "2, a radius follows, are defined); cd_values must be " HZF_LAYOUT_HINT,
                 flags);
        return -1;
    }
    size_t need = HZF_IDX_OPTIONAL + (flags & HZF_UFLAG_MISSING ? 2u : 0u) +
                  (flags & HZF_UFLAG_RADIUS ? 1u : 0u);
    if (n < need) {
        snprintf(why, whylen,
                 "cd_values[4]=%u announces %zu more values but only %zu follow; cd_values must "
                 "be " HZF_LAYOUT_HINT,
                 flags, need - HZF_IDX_OPTIONAL, n - HZF_IDX_OPTIONAL);
        return -1;
    }
    size_t i = HZF_IDX_OPTIONAL;
    if (flags & HZF_UFLAG_MISSING) {
        p->has_fill = 1;
        p->fill = h5zgpu_eb_from_words(cd[i], cd[i + 1]);
        i += 2;
    }
    if (flags & HZF_UFLAG_RADIUS)
        p->radius = cd[i++];
    *ulen = i;
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
        push(a, a->BADTYPE_g, __func__,
             "h5zgpu: dataset type is %s of %zu bytes; h5zgpu compresses only float32 and "
             "float64",
             class_name(cls), size);
        return -1;
    }
    unsigned flags, cd[HZF_MAX_NELMTS];
    size_t n = HZF_MAX_NELMTS;
    if (a->Pget_filter_by_id2(dcpl, H5ZGPU_FILTER_ID, &flags, &n, cd, 0, NULL, NULL) < 0) {
        push(a, a->CANTGET_g, __func__, "h5zgpu: cannot read the filter's cd_values");
        return -1;
    }
    h5zgpu_params p;
    size_t ulen;
    char why[HZF_MSG_LEN];
    if (parse_user(n, cd, &p, &ulen, why, sizeof why) < 0) {
        push(a, a->BADVALUE_g, __func__, "h5zgpu: %s", why);
        return -1;
    }
    if (p.has_fill && size == 4 && p.fill == p.fill && (double)(float)p.fill != p.fill) {
        push(a, a->BADVALUE_g, __func__,
             "h5zgpu: missing value %.17g (cd_values[5..6]) is not a float32 value, and the "
             "dataset is float32; pass the float32 value converted to double",
             p.fill);
        return -1;
    }
    hsize_t dims[H5ZGPU_MAX_RANK];
    int rank = a->Pget_chunk(dcpl, H5ZGPU_MAX_RANK, dims);
    if (rank < 1) {
        push(a, a->CANTGET_g, __func__, "h5zgpu: the dataset must be chunked (H5Pset_chunk)");
        return -1;
    }
    p.dtype = size == 4 ? H5ZGPU_FLOAT32 : H5ZGPU_FLOAT64;
    p.rank = (unsigned)rank;
    for (int i = 0; i < rank; i++)
        p.dims[i] = dims[i];
    if (h5zgpu_params_check(&p) != H5ZGPU_OK) {
        push(a, a->BADVALUE_g, __func__, "h5zgpu: %s; cd_values are " HZF_LAYOUT_HINT,
             h5zgpu_last_error());
        return -1;
    }
    return 1;
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

/* The dataset's fill value, which HDF5 also writes into the part of an edge chunk beyond the
 * dataset: the codec keeps it out of REL ranges and returns it bit for bit. HDF5's default
 * fill value (0) counts; an undefined one does not. */
static int read_fill(const hzb_api *a, hid_t dcpl, hid_t type, int *has_fill, double *fill)
{
    H5D_fill_value_t status;
    uint8_t bytes[8];
    size_t size = a->Tget_size(type);
    *has_fill = 0;
    *fill = 0;
    if (a->Pfill_value_defined(dcpl, &status) < 0)
        return -1;
    if (status == H5D_FILL_VALUE_UNDEFINED)
        return 0;
    if (size > sizeof bytes || a->Pget_fill_value(dcpl, type, bytes) < 0)
        return -1;
    if ((a->Tget_order(type) == H5T_ORDER_BE) != host_is_big_endian())
        swap_bytes(bytes, size, size);
    if (size == 4) {
        float v;
        memcpy(&v, bytes, 4);
        *fill = v;
    } else {
        memcpy(fill, bytes, 8);
    }
    *has_fill = 1;
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
        n < HZF_USER_NELMTS) {
        push(a, a->CANTGET_g, __func__, "h5zgpu: cannot read the filter's cd_values");
        return -1;
    }
    int rank = a->Pget_chunk(dcpl, H5ZGPU_MAX_RANK, dims);
    if (rank < 1) {
        push(a, a->CANTGET_g, __func__, "h5zgpu: cannot read the dataset's chunk shape");
        return -1;
    }
    int has_fill;
    double fill;
    if (read_fill(a, dcpl, type, &has_fill, &fill) < 0) {
        push(a, a->CANTGET_g, __func__, "h5zgpu: cannot read the dataset's fill value");
        return -1;
    }
    h5zgpu_params user;
    size_t ulen;
    char why[HZF_MSG_LEN];
    if (parse_user(n, cd, &user, &ulen, why, sizeof why) < 0) {
        push(a, a->BADVALUE_g, __func__, "h5zgpu: %s", why);
        return -1;
    }
    /* the user's missing value takes precedence over HDF5's fill value: the codec has one */
    if (user.has_fill) {
        has_fill = 1;
        fill = user.fill;
    }
    /* values a previous set_local appended (a copied dcpl) are replaced, not extended */
    unsigned *l = cd + ulen;
    l[HZF_OFF_LAYOUT] = HZF_LAYOUT_VERSION;
    l[HZF_OFF_DTYPE] = a->Tget_size(type) == 4 ? H5ZGPU_FLOAT32 : H5ZGPU_FLOAT64;
    l[HZF_OFF_ORDER] = a->Tget_order(type) == H5T_ORDER_BE ? HZF_ORDER_BE : HZF_ORDER_LE;
    l[HZF_OFF_FILL] = (unsigned)has_fill;
    h5zgpu_eb_to_words(has_fill ? fill : 0.0, &l[HZF_OFF_FILL_LO], &l[HZF_OFF_FILL_HI]);
    l[HZF_OFF_RANK] = (unsigned)rank;
    for (int i = 0; i < rank; i++)
        l[HZF_OFF_DIMS + i] = (unsigned)dims[i];
    if (a->Pmodify_filter(dcpl, H5ZGPU_FILTER_ID, flags, ulen + HZF_OFF_DIMS + (size_t)rank, cd) <
        0) {
        push(a, a->CANTSET_g, __func__, "h5zgpu: cannot store the filter's local cd_values");
        return -1;
    }
    return 1;
}

/* The values set_local appended: element type, whether bytes must be swapped, the codec's fill
 * value, chunk shape. */
static int parse_local(size_t n, const unsigned cd[], h5zgpu_params *p, int *swap, char *why,
                       size_t whylen)
{
    size_t ulen;
    if (parse_user(n, cd, p, &ulen, why, whylen) < 0)
        return -1;
    const unsigned *l = cd + ulen;
    if (n <= ulen + HZF_OFF_RANK || l[HZF_OFF_LAYOUT] != HZF_LAYOUT_VERSION ||
        (l[HZF_OFF_DTYPE] != H5ZGPU_FLOAT32 && l[HZF_OFF_DTYPE] != H5ZGPU_FLOAT64) ||
        l[HZF_OFF_ORDER] > HZF_ORDER_BE || l[HZF_OFF_FILL] > 1 || l[HZF_OFF_RANK] < 1 ||
        l[HZF_OFF_RANK] > H5ZGPU_MAX_RANK || n != ulen + HZF_OFF_DIMS + l[HZF_OFF_RANK]) {
        snprintf(why, whylen,
                 "the dataset's cd_values (%zu values) lack a valid layout-%u part written by "
                 "set_local after the user's %zu values (docs/FILTER.md)",
                 n, HZF_LAYOUT_VERSION, ulen);
        return -1;
    }
    p->dtype = (h5zgpu_dtype)l[HZF_OFF_DTYPE];
    p->has_fill = l[HZF_OFF_FILL] != 0;
    p->fill = h5zgpu_eb_from_words(l[HZF_OFF_FILL_LO], l[HZF_OFF_FILL_HI]);
    p->rank = l[HZF_OFF_RANK];
    for (unsigned i = 0; i < p->rank; i++)
        p->dims[i] = l[HZF_OFF_DIMS + i];
    *swap = (l[HZF_OFF_ORDER] == HZF_ORDER_BE) != host_is_big_endian();
    return 0;
}

static size_t encode(const hzb_api *a, size_t n, const unsigned cd[], size_t nbytes,
                     size_t *buf_size, void **buf)
{
    h5zgpu_params p;
    int swap;
    char why[HZF_MSG_LEN];
    uint8_t *native = NULL, *out = NULL;
    size_t ret = 0, len = 0;
    if (parse_local(n, cd, &p, &swap, why, sizeof why) < 0) {
        push(a, a->BADVALUE_g, __func__, "h5zgpu: %s", why);
        goto done;
    }
    size_t esize = p.dtype == H5ZGPU_FLOAT32 ? 4 : 8, count = 1;
    for (unsigned i = 0; i < p.rank; i++)
        count *= (size_t)p.dims[i];
    if (count * esize != nbytes) {
        push(a, a->BADVALUE_g, __func__,
             "h5zgpu: chunk of %zu bytes does not match the chunk shape in cd_values (%zu "
             "elements of %zu bytes)",
             nbytes, count, esize);
        goto done;
    }
    size_t cap = h5zgpu_compress_bound(&p);
    if (cap == 0) {
        push(a, a->BADVALUE_g, __func__, "h5zgpu: %s", h5zgpu_last_error());
        goto done;
    }
    /* swap a copy: when an optional filter fails HDF5 stores the input buffer as it is */
    const void *in = *buf;
    if (swap) {
        if (!(native = malloc(nbytes))) {
            push(a, a->NOSPACE_g, __func__, "h5zgpu: out of memory (%zu bytes)", nbytes);
            goto done;
        }
        memcpy(native, *buf, nbytes);
        swap_bytes(native, nbytes, esize);
        in = native;
    }
    if (!(out = malloc(cap))) {
        push(a, a->NOSPACE_g, __func__, "h5zgpu: out of memory (%zu bytes)", cap);
        goto done;
    }
    h5zgpu_status st = h5zgpu_compress(&p, in, out, cap, &len, NULL);
    if (st != H5ZGPU_OK) {
        push(a, a->CANTFILTER_g, __func__, "h5zgpu: compression failed (%s): %s",
             h5zgpu_status_string(st), h5zgpu_last_error());
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

static size_t decode(const hzb_api *a, size_t n, const unsigned cd[], size_t nbytes,
                     size_t *buf_size, void **buf)
{
    h5zgpu_params p;
    h5zgpu_info info;
    int swap;
    char why[HZF_MSG_LEN];
    uint8_t *out = NULL;
    size_t ret = 0, len = 0;
    h5zgpu_status st;
    if (parse_local(n, cd, &p, &swap, why, sizeof why) < 0) {
        push(a, a->BADVALUE_g, __func__, "h5zgpu: %s", why);
        goto done;
    }
    if ((st = h5zgpu_chunk_info(*buf, nbytes, &info)) != H5ZGPU_OK)
        goto fail;
    /* the header is not yet checksummed: trust its size only if the dataset agrees with it */
    uint64_t want = p.dtype == H5ZGPU_FLOAT32 ? 4 : 8;
    for (unsigned i = 0; i < p.rank; i++)
        want *= p.dims[i];
    if (info.raw_len != want) {
        push(a, a->CANTFILTER_g, __func__,
             "h5zgpu: cannot decompress a chunk (corrupt chunk): its header describes %llu bytes, "
             "the dataset's chunks hold %llu",
             (unsigned long long)info.raw_len, (unsigned long long)want);
        goto done;
    }
    if (info.raw_len > SIZE_MAX || !(out = malloc((size_t)info.raw_len))) {
        push(a, a->NOSPACE_g, __func__, "h5zgpu: out of memory (%llu bytes)",
             (unsigned long long)info.raw_len);
        goto done;
    }
    if ((st = h5zgpu_decompress(*buf, nbytes, out, (size_t)info.raw_len, &len, NULL)) !=
        H5ZGPU_OK)
        goto fail;
    if (swap)
        swap_bytes(out, len, info.dtype == H5ZGPU_FLOAT32 ? 4 : 8);
    free(*buf);
    *buf = out;
    *buf_size = (size_t)info.raw_len;
    out = NULL;
    ret = len;
    goto done;
fail:
    push(a, a->CANTFILTER_g, __func__, "h5zgpu: cannot decompress a chunk (%s): %s",
         h5zgpu_status_string(st), h5zgpu_last_error());
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
