/* The filter under MPI-parallel HDF5: every rank writes its slab of one chunked, compressed
 * dataset collectively (HDF5 >= 1.10.2 requires collective I/O for filtered parallel writes),
 * then every rank reads the whole dataset back and checks each value against its chunk's REL
 * bound in double precision. The plugin is found through HDF5_PLUGIN_PATH and binds at run time
 * to the MPI build of libhdf5 that loaded it.
 *   mpiexec -n N mpi_filter_test FILE */
#include <hdf5.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FILTER_ID 33900
#define EB 1e-3
#define SLAB 32                /* z planes a rank writes: two chunks deep */
#define NY 48
#define NX 40
#define CHUNK 16

/* A smooth positive field with structure at several scales (no exact zeros: 0 is the fill). */
static double field(size_t z, size_t y, size_t x)
{
    return 100.0 + 40.0 * sin(0.11 * (double)z) * cos(0.07 * (double)y) + 0.5 * (double)x +
           3.0 * sin(0.9 * (double)(x + y + z));
}

static int fail(int rank, const char *what)
{
    fprintf(stderr, "mpi_filter_test rank %d: %s\n", rank, what);
    return 1;
}

int main(int argc, char **argv)
{
    int rank, size, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 2) {
        if (!rank)
            fprintf(stderr, "usage: mpiexec -n N %s FILE\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    hsize_t dims[3] = {(hsize_t)size * SLAB, NY, NX}, chunk[3] = {CHUNK, CHUNK, CHUNK};
    size_t n = (size_t)dims[0] * NY * NX, slab = (size_t)SLAB * NY * NX;
    float *all = malloc(n * sizeof *all), *back = malloc(n * sizeof *back);
    if (!all || !back)
        return fail(rank, "out of memory");
    for (size_t z = 0; z < dims[0]; z++)
        for (size_t y = 0; y < NY; y++)
            for (size_t x = 0; x < NX; x++)
                all[(z * NY + y) * NX + x] = (float)field(z, y, x);

    /* REL 1e-3: cd_values {codec fixed, mode REL, eb low word, eb high word} */
    double eb = EB;
    unsigned long long bits;
    memcpy(&bits, &eb, 8);
    unsigned cd[4] = {1, 1, (unsigned)(bits & 0xFFFFFFFFu), (unsigned)(bits >> 32)};

    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hid_t space = H5Screate_simple(3, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 3, chunk);
    H5Pset_filter(dcpl, FILTER_ID, H5Z_FLAG_MANDATORY, 4, cd);
    hid_t dset = H5Dcreate2(file, "rho", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (file < 0 || dset < 0) {
        bad = fail(rank, "creating the filtered dataset failed (is the plugin on HDF5_PLUGIN_PATH?)");
        goto done;
    }
    hsize_t start[3] = {(hsize_t)rank * SLAB, 0, 0}, count[3] = {SLAB, NY, NX};
    hid_t fsel = H5Dget_space(dset), msel = H5Screate_simple(3, count, NULL);
    H5Sselect_hyperslab(fsel, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    if (H5Dwrite(dset, H5T_NATIVE_FLOAT, msel, fsel, dxpl, all + (size_t)rank * slab) < 0)
        bad = fail(rank, "collective H5Dwrite failed");
    hsize_t stored = H5Dget_storage_size(dset);
    H5Pclose(dxpl);
    H5Sclose(msel);
    H5Sclose(fsel);
    H5Dclose(dset);
    H5Fclose(file);
    MPI_Barrier(MPI_COMM_WORLD);
    if (!bad && stored >= n * sizeof(float))
        bad = fail(rank, "the dataset was stored without compression");

    /* every rank reads everything back and checks every value against its chunk's bound */
    file = H5Fopen(argv[1], H5F_ACC_RDONLY, fapl);
    dset = file < 0 ? -1 : H5Dopen2(file, "rho", H5P_DEFAULT);
    if (dset < 0 || H5Dread(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) < 0) {
        bad = fail(rank, "reading the dataset back failed");
    } else {
        size_t misses = 0;
        for (size_t cz = 0; cz < dims[0]; cz += CHUNK)
            for (size_t cy = 0; cy < NY; cy += CHUNK)
                for (size_t cx = 0; cx < NX; cx += CHUNK) {
                    double lo = INFINITY, hi = -INFINITY;
                    for (size_t z = cz; z < cz + CHUNK; z++)
                        for (size_t y = cy; y < cy + CHUNK && y < NY; y++)
                            for (size_t x = cx; x < cx + CHUNK && x < NX; x++) {
                                double v = all[(z * NY + y) * NX + x];
                                lo = v < lo ? v : lo;
                                hi = v > hi ? v : hi;
                            }
                    double bound = EB * (hi - lo);
                    for (size_t z = cz; z < cz + CHUNK; z++)
                        for (size_t y = cy; y < cy + CHUNK && y < NY; y++)
                            for (size_t x = cx; x < cx + CHUNK && x < NX; x++) {
                                size_t i = (z * NY + y) * NX + x;
                                misses += !(fabs((double)back[i] - (double)all[i]) <= bound);
                            }
                }
        if (misses)
            bad = fail(rank, "values miss their chunk's REL bound");
        if (!rank)
            printf("mpi_filter_test: %d ranks, %zu values, ratio %.2f, %zu outside the bound\n",
                   size, n, (double)(n * sizeof(float)) / (double)stored, misses);
    }
    if (dset >= 0)
        H5Dclose(dset);
    if (file >= 0)
        H5Fclose(file);
done:
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Pclose(fapl);
    free(all);
    free(back);
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return any;
}
