/* libFuzzer target: the HDF5 filter's decode entry (H5Z_FLAG_REVERSE), as HDF5 calls it when it
 * reads a stored chunk. The plugin's sources are linked in and bound to the libhdf5 this program
 * links; the cd_values come from the plugin's own set_local for a dataset shaped like the chunk
 * claims to be (so the fuzzer reaches the decoder), or are left as a default when the header does
 * not parse. The filter must refuse (return 0) or return exactly the chunk's bytes. */
#include "fuzz_common.h"

#include <H5PLextern.h>
#include <hdf5.h>
#include <string.h>

#define FZ_MAX_CD 64

static const H5Z_class2_t *cls;
static unsigned long decoded; /* inputs the filter accepted: the corpus replay expects some */

static void report(void)
{
    fprintf(stderr, "fuzz_filter: decoded %lu inputs\n", decoded);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    H5open();
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    cls = H5PLget_plugin_info();
    FZ_REQUIRE(cls && H5Zregister(cls) >= 0, "the plugin did not register");
    atexit(report);
    return 0;
}

/* cd_values set_local stores for a dataset of this chunk's type and shape; 0 if HDF5 refuses
 * the shape (a chunk over 4 GiB, say). */
static size_t local_cd(const h5zgpu_info *info, unsigned cd[FZ_MAX_CD])
{
    hsize_t dims[H5ZGPU_MAX_RANK];
    size_t n = FZ_MAX_CD;
    unsigned flags, user[4] = {H5ZGPU_CODEC_FIXED, info->mode, 0, 0};
    h5zgpu_eb_to_words(info->eb, &user[2], &user[3]);
    for (unsigned i = 0; i < info->rank; i++)
        dims[i] = info->dims[i];
    hid_t type = info->dtype == H5ZGPU_FLOAT32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
    hid_t space = H5Screate_simple((int)info->rank, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    int ok = space >= 0 && dcpl >= 0 && H5Pset_chunk(dcpl, (int)info->rank, dims) >= 0 &&
             H5Pset_filter(dcpl, H5ZGPU_FILTER_ID, H5Z_FLAG_MANDATORY, 4, user) >= 0 &&
             cls->set_local(dcpl, type, space) >= 0 &&
             H5Pget_filter_by_id2(dcpl, H5ZGPU_FILTER_ID, &flags, &n, cd, 0, NULL, NULL) >= 0;
    if (space >= 0)
        H5Sclose(space);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    return ok ? n : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    h5zgpu_info info;
    unsigned cd[FZ_MAX_CD] = {H5ZGPU_CODEC_FIXED, H5ZGPU_MODE_ABS, 0, 0};
    size_t ncd = 4, buf_size = size ? size : 1;
    void *buf = malloc(buf_size);
    FZ_REQUIRE(buf, "out of memory");
    memcpy(buf, data, size);
    int parsed = h5zgpu_chunk_info(buf, size, &info) == H5ZGPU_OK && info.raw_len <= FZ_MAX_RAW;
    if (parsed) {
        fz_fix_checksum(buf, size, (size_t)info.header_len);
        size_t n = local_cd(&info, cd);
        ncd = n ? n : ncd;
    }
    size_t got = cls->filter(H5Z_FLAG_REVERSE, ncd, cd, size, &buf_size, &buf);
    FZ_REQUIRE(got == 0 || (parsed && got == info.raw_len && buf_size >= got),
               "the filter returned %zu bytes for a chunk of %llu", got,
               parsed ? (unsigned long long)info.raw_len : 0ull);
    decoded += got > 0;
    free(buf);
    H5Eclear2(H5E_DEFAULT);
    return 0;
}
