/* A Nyx-style parallel writer: every MPI rank owns boxes of an N^3 domain, holds a Nyx-like
 * state of six float32 fields on its GPU (rank i uses device i mod count; the host without
 * one), and writes them to one HDF5 file with parallel HDF5:
 *
 *   mpirun -np R nyx_writer --n N --box B --out F [--path none|filter|direct[,...]]
 *       [--layout native|amrex] [--chunk C] [--codec fixed|huffman|auto]
 *       [--bound FIELD=MODE@VALUE ...] [--verify]
 *
 * --path none writes uncompressed (the baseline), filter through H5Dwrite and filter 33900,
 * direct compresses on the GPU and stores finished chunks (nyx_native.c says how). --layout
 * amrex writes AMReX's plotfile layout (nyx_amrex.c) in 1-D chunks of C elements (default
 * 1024, AMReX's HDF5_CHUNK_SIZE). --bound sets a field's bound in AMReX's MODE@VALUE style
 * (MODE ABS, REL or PWREL, or RATIO with the target ratio as VALUE, each chunk keeping the bound
 * it chose; FIELD a field name, or "all"; the AMReX layout has one bound, for "data"); the
 * default is REL@1e-3. --verify reads everything back and checks every value (under RATIO,
 * against the bound its chunk's header records).
 * Rank 0 prints per field the ratio and, with --verify, the largest error / bound, then the
 * aggregate write speed: the six fields' bytes over the time from the state in GPU memory to
 * the file closed, copies off the GPU included. Several paths (--path none,filter,direct) are
 * written in turn from the same state, each over F, for a side-by-side comparison. Exit
 * status 1 on any failure or miss. */
#define _GNU_SOURCE /* setenv, strncasecmp, sched_getaffinity */
#include "nyx_writer.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#ifdef H5ZGPU_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static const char *const path_names[] = {"none", "filter", "direct"};
static const char *const mode_names[] = {"ABS", "REL", "PWREL", "RATIO"};

static int usage(int rank, const char *why)
{
    if (!rank)
        fprintf(stderr, "nyx_writer: %s\nusage: mpirun -np R nyx_writer --n N --box B --out F "
                "[--path none|filter|direct[,...]] [--layout native|amrex] [--chunk C] "
                "[--codec fixed|huffman|auto] [--bound FIELD=MODE@VALUE ...] [--verify]\n", why);
    return 2;
}

/* FIELD=MODE@VALUE into o->bound; 0 on success. */
static int parse_bound(nw_opts *o, const char *arg)
{
    const char *eq = strchr(arg, '='), *at = eq ? strchr(eq, '@') : NULL;
    if (!eq || !at)
        return -1;
    size_t flen = (size_t)(eq - arg);
    nw_bound b;
    int m = -1;
    for (int i = 0; i < 4; i++)
        if ((size_t)(at - eq - 1) == strlen(mode_names[i]) &&
            strncasecmp(eq + 1, mode_names[i], strlen(mode_names[i])) == 0)
            m = i;
    char *end;
    b.eb = strtod(at + 1, &end);
    if (m < 0 || *end || !(b.eb >= 0) || b.eb > 1e300 ||
        (m == H5ZGPU_MODE_RATIO && !(b.eb > 1 && b.eb <= 1e6)))
        return -1;
    b.mode = (h5zgpu_mode)m;
    int hit = 0;
    for (int f = 0; f < NS_FIELDS; f++) {
        const char *name = o->amrex && f == 0 ? "data" : ns_field_names[f];
        if ((flen == 3 && strncmp(arg, "all", 3) == 0) ||
            (flen == strlen(name) && strncmp(arg, name, flen) == 0)) {
            o->bound[f] = b;
            hit = 1;
        }
    }
    return hit ? 0 : -1;
}

static int parse(int argc, char **argv, int rank, nw_opts *o)
{
    *o = (nw_opts){.chunk = 1024, .paths = {NW_FILTER}, .npaths = 1,
                   .codec = H5ZGPU_CODEC_HUFFMAN};
    for (int f = 0; f < NS_FIELDS; f++)
        o->bound[f] = (nw_bound){H5ZGPU_MODE_REL, 1e-3};
    for (int i = 1; i < argc; i++) {   /* --layout first: it decides what --bound names */
        if (!strcmp(argv[i], "--layout") && i + 1 < argc)
            o->amrex = !strcmp(argv[i + 1], "amrex");
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--verify")) {
            o->verify = 1;
            continue;
        }
        if (!v)
            return usage(rank, "an option without its value");
        i++;
        if (!strcmp(a, "--n")) {
            o->n = strtoul(v, NULL, 10);
        } else if (!strcmp(a, "--box")) {
            o->box = strtoul(v, NULL, 10);
        } else if (!strcmp(a, "--chunk")) {
            o->chunk = strtoul(v, NULL, 10);
        } else if (!strcmp(a, "--out")) {
            o->out = v;
        } else if (!strcmp(a, "--path")) {
            o->npaths = 0;
            for (const char *t = v; *t && o->npaths < 3; t += *t == ',') {
                int p = -1;
                size_t len = strcspn(t, ",");
                for (int k = 0; k < 3; k++)
                    p = len == strlen(path_names[k]) && !strncmp(t, path_names[k], len) ? k : p;
                if (p < 0)
                    return usage(rank, "--path is none, filter or direct, or a list of them");
                o->paths[o->npaths++] = (nw_path)p;
                t += len;
            }
        } else if (!strcmp(a, "--layout")) {
            if (strcmp(v, "native") && strcmp(v, "amrex"))
                return usage(rank, "--layout is native or amrex");
        } else if (!strcmp(a, "--codec")) {
            o->codec = !strcmp(v, "fixed")     ? H5ZGPU_CODEC_FIXED
                       : !strcmp(v, "huffman") ? H5ZGPU_CODEC_HUFFMAN
                       : !strcmp(v, "auto")    ? H5ZGPU_CODEC_AUTO
                                               : (h5zgpu_codec)-1;
            if ((int)o->codec < 0)
                return usage(rank, "--codec is fixed, huffman or auto");
        } else if (!strcmp(a, "--bound")) {
            if (parse_bound(o, v))
                return usage(rank, o->amrex ? "--bound is data=MODE@VALUE in the AMReX layout"
                                            : "--bound is FIELD=MODE@VALUE (MODE ABS, REL, "
                                              "PWREL or RATIO, whose target is above 1 and at "
                                              "most 1e6; FIELD a field name or all)");
        } else {
            return usage(rank, "unknown option");
        }
    }
    if (!o->n || !o->box || o->n % o->box || !o->out)
        return usage(rank, "--n, --box (dividing N) and --out are needed");
    for (int k = 0; k < o->npaths; k++)
        if (o->amrex && o->paths[k] == NW_DIRECT)
            return usage(rank, "the AMReX layout is written with H5Dwrite: --path none or "
                               "filter");
    if (o->amrex && (!o->chunk || (NS_FIELDS * o->box * o->box * o->box) % o->chunk))
        return usage(rank, "--chunk must divide a box's six fields (6 x box^3 elements)");
    return 0;
}

/* The rank's share of the boxes, its device, and its state (host, and GPU when there is
 * one). */
static int make_rank(const nw_opts *o, nw_rank *r)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &r->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r->size);
    size_t per = o->n / o->box;
    r->boxes_total = per * per * per;
    r->first = r->boxes_total * (size_t)r->rank / (size_t)r->size;
    r->count = r->boxes_total * (size_t)(r->rank + 1) / (size_t)r->size - r->first;
    r->most = (r->boxes_total + (size_t)r->size - 1) / (size_t)r->size;
    r->cells = o->box * o->box * o->box;
    r->device = -1;
    r->direct = calloc(1, sizeof *r->direct);
    if (!r->direct)
        return -1;
#ifdef H5ZGPU_HAVE_CUDA
    int count = 0;
    if (h5zgpu_gpu_available() && cudaGetDeviceCount(&count) == cudaSuccess && count > 0) {
        r->device = r->rank % count;
        cudaSetDevice(r->device);
        char dev[32];   /* the filter path runs on this rank's GPU too */
        snprintf(dev, sizeof dev, "gpu:%d", r->device);
        setenv("H5ZGPU_DEVICE", dev, 0);
    }
#endif
    size_t n = r->count * r->cells;
    for (int f = 0; f < NS_FIELDS; f++) {
        r->host[f] = malloc((n ? n : 1) * sizeof(float));
        if (!r->host[f])
            return -1;
        for (size_t i = 0; i < r->count; i++) {
            size_t origin[3];
            nw_box_origin(o, r->first + i, origin);
            if (ns_box(o->n, f, origin[0], origin[1], origin[2], o->box,
                       r->host[f] + i * r->cells))
                return -1;
        }
#ifdef H5ZGPU_HAVE_CUDA
        if (r->device >= 0 &&
            (cudaMalloc(&r->dev[f], (n ? n : 1) * sizeof(float)) != cudaSuccess ||
             cudaMemcpy(r->dev[f], r->host[f], n * sizeof(float), cudaMemcpyHostToDevice) !=
                 cudaSuccess))
            return -1;
#endif
    }
    return 0;
}

static void free_rank(nw_rank *r)
{
    nw_direct_free(r);
    for (int f = 0; f < NS_FIELDS; f++) {
        free(r->host[f]);
#ifdef H5ZGPU_HAVE_CUDA
        if (r->dev[f])
            cudaFree(r->dev[f]);
#endif
    }
}

static void report(const nw_opts *o, const nw_rank *r, const nw_result *res, double seconds,
                   int gpus)
{
    double bytes = (double)NS_FIELDS * (double)o->n * (double)o->n * (double)o->n * 4;
    printf("nyx_writer: N=%zu box=%zu, %d rank(s) on %s, layout %s, path %s, codec %s\n",
           o->n, o->box, r->size, gpus ? "GPUs" : "CPUs", o->amrex ? "amrex" : "native",
           path_names[o->path],
           o->path == NW_NONE                    ? "-"
           : o->codec == H5ZGPU_CODEC_FIXED      ? "fixed"
           : o->codec == H5ZGPU_CODEC_HUFFMAN    ? "huffman"
                                                 : "auto");
    if (o->amrex)
        printf("  1-D chunks of %zu elements\n", o->chunk);
    printf("  %-22s %-14s %8s %16s %8s\n", "field", "bound", "ratio",
           o->path == NW_NONE ? "max |error|" : "max error/bound", "misses");
    for (int f = 0; f < (o->amrex ? 1 : NS_FIELDS); f++) {
        char bound[48] = "-", worst[32] = "-", misses[32] = "-";
        if (o->path != NW_NONE)
            snprintf(bound, sizeof bound, "%s@%g", mode_names[o->bound[f].mode],
                     o->bound[f].eb);
        if (o->verify) {
            snprintf(worst, sizeof worst, "%.4f", res->worst[f]);
            snprintf(misses, sizeof misses, "%zu", res->misses[f]);
        }
        printf("  %-22s %-14s %8.2f %16s %8s\n", o->amrex ? "data (all six)" : ns_field_names[f],
               bound, res->ratio[f], worst, misses);
    }
    printf("  wrote %.1f MB in %.3f s: %.2f GB/s aggregate\n", bytes / 1e6, seconds,
           bytes / seconds / 1e9);
}

/* One write of the path: 1 on failure on this rank; *seconds from the first rank's start to the
 * last rank's end, *made_s the slowest rank's nw_native_write made_s. */
static int timed_write(const nw_opts *o, const nw_rank *r, hid_t fapl, double *seconds,
                       double *made_s)
{
    double made = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int bad = (o->amrex ? nw_amrex_write(o, r, fapl) : nw_native_write(o, r, fapl, &made)) != 0;
    MPI_Barrier(MPI_COMM_WORLD);
    *seconds = MPI_Wtime() - t0;
    MPI_Allreduce(&made, made_s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return bad;
}

/* One path, written twice as a simulation writes every so many steps: the first write pays
 * for what a process sets up once (CUDA contexts, the library's workspaces, the plugin's
 * loading), the second is the one reported. Then the inspection; 1 on a failure or a miss on
 * any rank. */
static int write_one(const nw_opts *o, const nw_rank *r, hid_t fapl, int gpus)
{
    nw_result res, all;
    int any_bad = 0;
    double first = 0, seconds = 0, slowest = 0;
    memset(&res, 0, sizeof res);
    memset(&all, 0, sizeof all);
    int bad = timed_write(o, r, fapl, &first, &slowest);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    bad = bad || timed_write(o, r, fapl, &seconds, &slowest);
    if (bad)
        fprintf(stderr, "nyx_writer rank %d: the %s write failed\n", r->rank,
                path_names[o->path]);
    else if ((o->amrex ? nw_amrex_inspect(o, r, fapl, &res)
                       : nw_native_inspect(o, r, fapl, &res)) != 0)
        bad = 1, fprintf(stderr, "nyx_writer rank %d: reading the file back failed\n", r->rank);
    MPI_Allreduce(res.worst, all.worst, NS_FIELDS, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(res.misses, all.misses, NS_FIELDS, MPI_UNSIGNED_LONG, MPI_SUM,
                  MPI_COMM_WORLD);
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    memcpy(all.ratio, res.ratio, sizeof all.ratio);
    size_t misses = 0;
    for (int f = 0; f < NS_FIELDS; f++)
        misses += all.misses[f];
    if (r->rank == 0 && !any_bad) {
        report(o, r, &all, seconds, gpus);
        printf("  (the process's first write: %.3f s)\n", first);
        if (o->path == NW_DIRECT)
            printf("  compressing ended after %.3f s (the slowest rank), storing in turn (beside "
                   "it) %.3f s later\n", slowest, seconds - slowest);
    }
    return any_bad || misses ? 1 : 0;
}

/* Rank 0 warns when some GPU rank may run on one CPU core only: mpirun binds each rank to a
 * core by default, and a device batch's host threads (its groups, the copies' waits) then take
 * turns on it. On two H100s, 512^3 in boxes of 128^3, Huffman, --path direct wrote 5.9-6.3 GB/s
 * from one rank bound to a core and 10.4-10.7 with --bind-to none. */
static void warn_one_core(const nw_rank *r)
{
    cpu_set_t set;
    int cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
    if (r->device < 0 || cores == 0)
        cores = 1 << 30;   /* on the host, or not known: nothing to say */
    MPI_Allreduce(MPI_IN_PLACE, &cores, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (r->rank == 0 && cores < 2)
        fprintf(stderr, "nyx_writer: a GPU rank may run on one CPU core only (mpirun binds each "
                        "rank to a core by default); the device batches' host threads share it. "
                        "Run with --bind-to none (OpenMPI) or give each rank several cores.\n");
}

int main(int argc, char **argv)
{
    int rank, level;
    /* before any CUDA context (MPI may make one): queues for 16 chunks in flight a batch */
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
    /* the direct path compresses on a thread that calls no MPI */
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &level);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    nw_opts o;
    nw_rank r = {0};
    int rc = parse(argc, argv, rank, &o);
    if (rc) {
        MPI_Finalize();
        return rc;
    }
    o.threads = level >= MPI_THREAD_FUNNELED;
    int bad = make_rank(&o, &r) != 0, gpus = 0, any_bad = 0;
    if (bad)
        fprintf(stderr, "nyx_writer rank %d: making the state failed (out of memory?)\n", rank);
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    int on_gpu = r.device >= 0;
    MPI_Allreduce(&on_gpu, &gpus, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (any_bad) {
        free_rank(&r);
        MPI_Finalize();
        return 1;
    }
    warn_one_core(&r);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    /* as AMReX sets them: metadata read once and broadcast, written collectively */
    H5Pset_all_coll_metadata_ops(fapl, 1);
    H5Pset_coll_metadata_write(fapl, 1);

    int failed = 0;
    for (int k = 0; k < o.npaths && !failed; k++) {
        o.path = o.paths[k];
        failed = write_one(&o, &r, fapl, gpus);
    }
    H5Pclose(fapl);
    free_rank(&r);
    MPI_Finalize();
    return failed;
}
