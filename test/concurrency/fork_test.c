/* Two processes compressing at once. Phase 1: two children started before this process touches
 * the codec compress and decompress different data at the same moment with H5ZGPU_DEVICE's
 * executor (two processes on one GPU, on the device); their chunks must equal the CPU
 * reference's bytes. Phase 2: after this process has used the codec (on the device a CUDA
 * context exists; the codec's thread pool runs, and a pool that did not start afresh in the
 * child would hang it, as libgomp's did), two forked children compress on the CPU: no hang, the
 * same bytes. A child that hangs is killed
 * by its alarm and counts as a failure. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "util.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define NCHILD 2
/* A child still running after this many seconds is stuck (a round trip takes milliseconds). */
#define CHILD_ALARM_S 20
#define MAX_CHUNK (1u << 22)

static const struct {
    h5zgpu_dtype t;
    h5zgpu_mode mode;
    double eb;
    unsigned rank;
    uint64_t dims[3];
    tu_pattern pat;
} jobs[NCHILD] = {
    {H5ZGPU_FLOAT32, H5ZGPU_MODE_ABS, 1e-3, 3, {64, 64, 64}, TU_SMOOTH},
    {H5ZGPU_FLOAT64, H5ZGPU_MODE_REL, 1e-4, 2, {400, 333}, TU_SPECIAL},
};

/* What a child hands back, in memory shared with the parent. */
typedef struct result {
    int status;        /* h5zgpu_status of the round trip */
    int same_values;   /* decoded values equal the reference decoder's */
    size_t len;
    uint8_t chunk[MAX_CHUNK];
} result;

static h5zgpu_params params(unsigned i)
{
    h5zgpu_params p = {.codec = H5ZGPU_CODEC_FIXED, .mode = jobs[i].mode, .eb = jobs[i].eb,
                       .dtype = jobs[i].t, .rank = jobs[i].rank};
    memcpy(p.dims, jobs[i].dims, sizeof jobs[i].dims);
    return p;
}

static void *input(unsigned i, size_t *raw)
{
    h5zgpu_params p = params(i);
    size_t n = (size_t)tu_count(&p);
    *raw = n * tu_esize(p.dtype);
    void *in = malloc(*raw);
    if (in)
        tu_fill(p.dtype, n, jobs[i].pat, i + 7, in);
    return in;
}

/* The child's work: wait for the start signal on `go`, round-trip job i, report in r. */
static void child(unsigned i, int go, const h5zgpu_exec *exec, result *r)
{
    char c;
    size_t raw, got;
    alarm(CHILD_ALARM_S);
    h5zgpu_params p = params(i);
    void *in = input(i, &raw), *out = malloc(raw);
    if (!in || !out || read(go, &c, 1) != 1)
        _exit(2);
    r->status = h5zgpu_compress(&p, in, r->chunk, MAX_CHUNK, &r->len, exec);
    if (r->status == H5ZGPU_OK)
        r->status = h5zgpu_decompress(r->chunk, r->len, out, raw, &got, exec);
    char why[200];
    r->same_values = r->status == H5ZGPU_OK &&
                     tu_check_bound(p.dtype, p.mode, p.eb, in, out, raw / tu_esize(p.dtype), why,
                                    sizeof why) == 0;
    _exit(0);
}

/* Runs both children at once and compares their chunks with the CPU's. */
static void phase(const char *name, const h5zgpu_exec *exec, result *res)
{
    int go[2];
    pid_t pid[NCHILD];
    if (pipe(go) != 0) {
        tu_expect(0, "%s: pipe failed", name);
        return;
    }
    memset(res, 0, sizeof(result) * NCHILD);
    for (unsigned i = 0; i < NCHILD; i++) {
        res[i].status = -1;
        pid[i] = fork();
        if (pid[i] == 0) {
            close(go[1]);
            child(i, go[0], exec, &res[i]);
        }
        tu_expect(pid[i] > 0, "%s: fork failed", name);
    }
    close(go[0]);
    /* one byte each: both start together */
    tu_expect(write(go[1], "gg", NCHILD) == NCHILD, "%s: cannot start the children", name);
    close(go[1]);
    for (unsigned i = 0; i < NCHILD; i++) {
        int ws = 0;
        if (pid[i] > 0)
            waitpid(pid[i], &ws, 0);
        if (WIFSIGNALED(ws) && WTERMSIG(ws) == SIGALRM)
            tu_expect(0, "%s: child %u hung: killed after %d s", name, i, CHILD_ALARM_S);
        else
            tu_expect(WIFEXITED(ws) && WEXITSTATUS(ws) == 0,
                      "%s: child %u did not finish (%s %d)", name, i,
                      WIFSIGNALED(ws) ? "signal" : "exit status",
                      WIFSIGNALED(ws) ? WTERMSIG(ws) : WEXITSTATUS(ws));
    }
    /* the reference: this process, on the CPU */
    const h5zgpu_exec cpu = {H5ZGPU_EXEC_CPU, 0};
    for (unsigned i = 0; i < NCHILD; i++) {
        size_t raw, len = 0;
        h5zgpu_params p = params(i);
        void *in = input(i, &raw);
        uint8_t *chunk = malloc(MAX_CHUNK);
        h5zgpu_status st = in && chunk ? h5zgpu_compress(&p, in, chunk, MAX_CHUNK, &len, &cpu)
                                       : H5ZGPU_E_NOMEM;
        tu_expect(res[i].status == H5ZGPU_OK && res[i].same_values,
                  "%s: child %u: round trip %s, values %s", name, i,
                  res[i].status >= 0 ? h5zgpu_status_string((h5zgpu_status)res[i].status)
                                     : "never ran",
                  res[i].same_values ? "within the bound" : "wrong");
        tu_expect(st == H5ZGPU_OK && res[i].len == len && memcmp(res[i].chunk, chunk, len) == 0,
                  "%s: child %u wrote %zu bytes that differ from the CPU's %zu", name, i,
                  res[i].len, len);
        free(in);
        free(chunk);
    }
}

int main(void)
{
    result *res = mmap(NULL, sizeof(result) * NCHILD, PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (res == MAP_FAILED) {
        printf("fork_test: mmap failed\n");
        return 1;
    }
    phase("children first (H5ZGPU_DEVICE's executor)", NULL, res);
    const h5zgpu_exec cpu = {H5ZGPU_EXEC_CPU, 0};
    /* this process has now compressed: fork after the codec's threads exist */
    phase("after the parent used the codec (CPU)", &cpu, res);
    munmap(res, sizeof(result) * NCHILD);
    return tu_done("fork_test");
}
