#include "executor.h"

#include "error.h"
#ifdef H5ZGPU_HAVE_CUDA
#include "backend_gpu.h"
#endif

#include <stdlib.h>
#include <string.h>

static h5zgpu_status parse_env(h5zgpu_exec *ex)
{
    const char *v = getenv("H5ZGPU_DEVICE");
    ex->kind = H5ZGPU_EXEC_AUTO;
    ex->device = 0;
    if (!v || !*v || strcmp(v, "auto") == 0)
        return H5ZGPU_OK;
    if (strcmp(v, "cpu") == 0) {
        ex->kind = H5ZGPU_EXEC_CPU;
        return H5ZGPU_OK;
    }
    if (strncmp(v, "gpu", 3) == 0) {
        ex->kind = H5ZGPU_EXEC_GPU;
        if (v[3] == 0)
            return H5ZGPU_OK;
        char *end;
        long d = v[3] == ':' ? strtol(v + 4, &end, 10) : -1;
        if (v[3] == ':' && end != v + 4 && *end == 0 && d >= 0 && d < 1024) {
            ex->device = (int)d;
            return H5ZGPU_OK;
        }
    }
    return hz_fail(H5ZGPU_E_INVALID_ARG, "H5ZGPU_DEVICE='%s' is not auto, cpu, gpu or gpu:N", v);
}

int h5zgpu_gpu_available(void)
{
#ifdef H5ZGPU_HAVE_CUDA
    return hzc_device_count() > 0;
#else
    return 0;
#endif
}

h5zgpu_status hz_resolve(const h5zgpu_exec *given, hz_target *t)
{
    h5zgpu_exec ex;
    if (given) {
        if ((unsigned)given->kind > H5ZGPU_EXEC_GPU || given->device < 0)
            return hz_fail(H5ZGPU_E_INVALID_ARG,
                           "executor kind %u, device %d: the kind must be 0 (auto), 1 (CPU) or "
                           "2 (GPU) and the device a CUDA ordinal >= 0",
                           (unsigned)given->kind, given->device);
        ex = *given;
    } else {
        h5zgpu_status st = parse_env(&ex);
        if (st != H5ZGPU_OK)
            return st;
    }
    int count = 0;
#ifdef H5ZGPU_HAVE_CUDA
    if (ex.kind != H5ZGPU_EXEC_CPU)
        count = hzc_device_count();
#endif
    t->device = ex.device;
    t->required = ex.kind == H5ZGPU_EXEC_GPU;
    t->gpu = ex.kind != H5ZGPU_EXEC_CPU && ex.device < count;
    if (t->required && !t->gpu)
        return hz_fail(H5ZGPU_E_DEVICE, "the GPU was required (%s) but CUDA device "
#ifdef H5ZGPU_HAVE_CUDA
                       "%d is not usable (%d found)",
#else
                       "%d cannot be used: this build has no CUDA (%d)",
#endif
                       given ? "h5zgpu_exec kind GPU" : "H5ZGPU_DEVICE=gpu", ex.device, count);
    if (ex.kind == H5ZGPU_EXEC_AUTO && !t->gpu)
        hz_note_once(0, "no usable GPU: compressing on the CPU");
    return H5ZGPU_OK;
}

h5zgpu_status h5zgpu_exec_check(const h5zgpu_exec *exec)
{
    hz_target t;
    return hz_resolve(exec, &t);
}

int hz_fall_back(const hz_target *t, h5zgpu_status st)
{
    if (st == H5ZGPU_OK || st == H5ZGPU_E_OUTPUT_TOO_SMALL || st == H5ZGPU_E_CORRUPT ||
        t->required)
        return 0;
    hz_note_once(1, "GPU path failed (%s: %s); using the CPU", h5zgpu_status_string(st),
                 h5zgpu_last_error());
    return 1;
}
