/* The filter's cd_values layout (cd_values.h, docs/FILTER.md). */
#include "cd_values.h"

#include <stdio.h>
#include <string.h>

#define HZF_IDX_OPTIONAL 5u        /* where the optional user values start */
/* set_local's part, at offsets from its start (the length of the user's part) */
#define HZF_OFF_LAYOUT 0u
#define HZF_OFF_DTYPE 1u
#define HZF_OFF_ORDER 2u
#define HZF_OFF_FILL 3u            /* 1 when a fill value follows */
#define HZF_OFF_FILL_LO 4u         /* the codec's fill value as a binary64 pattern, low word first */
#define HZF_OFF_FILL_HI 5u
#define HZF_OFF_RANK 6u
#define HZF_OFF_DIMS HZF_LOCAL_FIXED
/* 2: a value at index 4 equal to it cannot be a user's flags word (bit 1 is never a flag) */
#define HZF_LAYOUT_VERSION 2u

/* Whether cd[at..n) is exactly a part set_local wrote; if so, and p is given, what it says. */
static int local_part(size_t n, const unsigned cd[], size_t at, h5zgpu_params *p,
                      int *big_endian)
{
    if (n < at + HZF_OFF_DIMS + 1)
        return 0;
    const unsigned *l = cd + at;
    if (l[HZF_OFF_LAYOUT] != HZF_LAYOUT_VERSION ||
        (l[HZF_OFF_DTYPE] != H5ZGPU_FLOAT32 && l[HZF_OFF_DTYPE] != H5ZGPU_FLOAT64) ||
        l[HZF_OFF_ORDER] > 1 || l[HZF_OFF_FILL] > 1 || l[HZF_OFF_RANK] < 1 ||
        l[HZF_OFF_RANK] > H5ZGPU_MAX_RANK || n != at + HZF_OFF_DIMS + l[HZF_OFF_RANK])
        return 0;
    for (unsigned i = 0; i < l[HZF_OFF_RANK]; i++)
        if (l[HZF_OFF_DIMS + i] == 0)
            return 0;
    if (p) {
        p->dtype = (h5zgpu_dtype)l[HZF_OFF_DTYPE];
        p->has_fill = l[HZF_OFF_FILL] != 0;
        p->fill = h5zgpu_eb_from_words(l[HZF_OFF_FILL_LO], l[HZF_OFF_FILL_HI]);
        p->rank = l[HZF_OFF_RANK];
        for (unsigned i = 0; i < p->rank; i++)
            p->dims[i] = l[HZF_OFF_DIMS + i];
        *big_endian = l[HZF_OFF_ORDER] == 1;
    }
    return 1;
}

/* The user's part alone: its values into p, its length into *ulen. */
static int user_part(size_t n, const unsigned cd[], h5zgpu_params *p, size_t *ulen, char *why,
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
    if (cd[1] > H5ZGPU_MODE_RATIO) {
        snprintf(why, whylen,
                 "cd_values[1]=%u is not an error mode; cd_values must be " HZF_LAYOUT_HINT, cd[1]);
        return -1;
    }
    memset(p, 0, sizeof *p);
    p->codec = (h5zgpu_codec)cd[0];
    p->mode = (h5zgpu_mode)cd[1];
    p->eb = h5zgpu_eb_from_words(cd[2], cd[3]);
    if (n == HZF_USER_NELMTS || local_part(n, cd, HZF_USER_NELMTS, NULL, NULL)) {
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

int hzf_parse_user(size_t n, const unsigned cd[], h5zgpu_params *p, size_t *ulen, char *why,
                   size_t whylen)
{
    if (user_part(n, cd, p, ulen, why, whylen) < 0)
        return -1;
    if (n > *ulen && !local_part(n, cd, *ulen, NULL, NULL)) {
        snprintf(why, whylen,
                 "cd_values has %zu values after the %zu the flags word announces; cd_values "
                 "must be " HZF_LAYOUT_HINT,
                 n - *ulen, *ulen);
        return -1;
    }
    return 0;
}

int hzf_parse(size_t n, const unsigned cd[], h5zgpu_params *p, int *big_endian, char *why,
              size_t whylen)
{
    size_t ulen;
    if (user_part(n, cd, p, &ulen, why, whylen) < 0)
        return -1;
    /* the codec's fill value is set_local's: the missing value, when the user gave one */
    if (!local_part(n, cd, ulen, p, big_endian)) {
        snprintf(why, whylen,
                 "the dataset's cd_values (%zu values) lack a valid layout-%u part written by "
                 "set_local after the user's %zu values (docs/FILTER.md)",
                 n, HZF_LAYOUT_VERSION, ulen);
        return -1;
    }
    return 0;
}

size_t hzf_write_local(unsigned cd[], size_t ulen, const h5zgpu_params *p, int big_endian)
{
    unsigned *l = cd + ulen;
    l[HZF_OFF_LAYOUT] = HZF_LAYOUT_VERSION;
    l[HZF_OFF_DTYPE] = (unsigned)p->dtype;
    l[HZF_OFF_ORDER] = big_endian ? 1u : 0u;
    l[HZF_OFF_FILL] = p->has_fill ? 1u : 0u;
    h5zgpu_eb_to_words(p->has_fill ? p->fill : 0.0, &l[HZF_OFF_FILL_LO], &l[HZF_OFF_FILL_HI]);
    l[HZF_OFF_RANK] = p->rank;
    for (unsigned i = 0; i < p->rank; i++)
        l[HZF_OFF_DIMS + i] = (unsigned)p->dims[i];
    return ulen + HZF_OFF_DIMS + p->rank;
}
