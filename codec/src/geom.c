#include "geom.h"

#include "h5zgpu.h"

int hz_fold_dims(hz_fold *f, unsigned rank, const uint64_t *dims)
{
    uint64_t nu[H5ZGPU_MAX_RANK];
    unsigned k = 0;
    for (unsigned i = 0; i < rank; i++) {
        if (dims[i] == 0)
            return -1;
        if (dims[i] > 1)
            nu[k++] = dims[i];
    }
    f->nz = f->ny = f->nx = 1;
    if (k > 3) {
        uint64_t lead = 1;
        for (unsigned i = 0; i + 2 < k; i++)
            lead *= nu[i];
        nu[0] = lead;
        nu[1] = nu[k - 2];
        nu[2] = nu[k - 1];
        k = 3;
    }
    if (k == 3) {
        f->nz = nu[0];
        f->ny = nu[1];
        f->nx = nu[2];
    } else if (k == 2) {
        f->ny = nu[0];
        f->nx = nu[1];
    } else if (k == 1) {
        f->nx = nu[0];
    }
    f->dim = k < 1 ? 1 : k;
    return 0;
}
