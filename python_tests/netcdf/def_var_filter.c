/* netCDF-C's recipe (docs/NETCDF.md): a chunked float variable with filter 33900 set through
 * nc_def_var_filter, written, closed, read back, each value checked against the ABS bound and
 * the fill value kept exact. usage: def_var_filter OUT.nc CODEC EB_LO EB_HI */
#include <math.h>
#include <netcdf.h>
#include <netcdf_filter.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NT 4
#define NY 60
#define NX 90
#define FILL (-1e34f)

#define CHECK(call)                                                                             \
    do {                                                                                        \
        int e_ = (call);                                                                        \
        if (e_ != NC_NOERR) {                                                                   \
            fprintf(stderr, "def_var_filter: %s: %s\n", #call, nc_strerror(e_));               \
            return 1;                                                                           \
        }                                                                                       \
    } while (0)

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s OUT.nc CODEC EB_LO EB_HI\n", argv[0]);
        return 2;
    }
    static float a[NT][NY][NX], b[NT][NY][NX];
    for (int t = 0; t < NT; t++)
        for (int y = 0; y < NY; y++)
            for (int x = 0; x < NX; x++)
                a[t][y][x] = (x + y) % 7 ? 20.0f + 8.0f * sinf(0.1f * x + 0.3f * t) * cosf(0.07f * y)
                                         : FILL;
    unsigned params[7] = {(unsigned)atoi(argv[2]), 0, (unsigned)strtoul(argv[3], NULL, 10),
                          (unsigned)strtoul(argv[4], NULL, 10)};
    float fill = FILL;
    size_t chunks[3] = {2, 30, 45};
    int ncid, dims[3], var;
    CHECK(nc_create(argv[1], NC_NETCDF4 | NC_CLOBBER, &ncid));
    CHECK(nc_def_dim(ncid, "time", NT, &dims[0]));
    CHECK(nc_def_dim(ncid, "lat", NY, &dims[1]));
    CHECK(nc_def_dim(ncid, "lon", NX, &dims[2]));
    CHECK(nc_def_var(ncid, "sst", NC_FLOAT, 3, dims, &var));
    CHECK(nc_def_var_chunking(ncid, var, NC_CHUNKED, chunks));
    CHECK(nc_def_var_fill(ncid, var, NC_FILL, &fill));
    CHECK(nc_def_var_filter(ncid, var, 33900, 4, params));
    CHECK(nc_put_var_float(ncid, var, &a[0][0][0]));
    CHECK(nc_close(ncid));
    CHECK(nc_open(argv[1], NC_NOWRITE, &ncid));
    CHECK(nc_inq_varid(ncid, "sst", &var));
    CHECK(nc_get_var_float(ncid, var, &b[0][0][0]));
    CHECK(nc_close(ncid));
    double eb;
    unsigned long long bits = (unsigned long long)params[3] << 32 | params[2];
    memcpy(&eb, &bits, sizeof eb);
    size_t misses = 0;
    for (size_t i = 0; i < (size_t)NT * NY * NX; i++) {
        float w = (&a[0][0][0])[i], g = (&b[0][0][0])[i];
        misses += w == FILL ? g != FILL : !(fabs((double)g - (double)w) <= eb);
    }
    printf("def_var_filter: %zu values outside the bound\n", misses);
    return misses ? 1 : 0;
}
