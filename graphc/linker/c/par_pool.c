/* The process's one pool of worker threads for split element-wise runs (config.openmp),
   built once through the compile cache by graphc.linker.c.par_pool and shared by every
   compiled element-wise module: each looks up the entry points (gc_pool_api, declared in
   par_pool_api.h, in the
   capsule api() returns) once, GIL held. One pool, so N OpenMP functions in a process
   start at most cores - 1 workers between them, not N times as many, and a spinning
   worker never competes with another module's run.

   A run is cut into blocks that the caller and the workers claim by ticket; the caller
   waits only for blocks a worker has claimed, so a worker that wakes late costs no more
   than the serial loop, and one that runs slowly takes fewer blocks.

   Waking a sleeping thread on a virtual machine takes from 30 us to milliseconds (the
   host halts an idle vCPU), so an idle worker polls for the next run while split runs
   keep coming: up to twice the longer recent gaps between them, at least
   GC_POOL_SPIN_MIN_NS and at most GC_POOL_SPIN_MAX_NS, then sleeps. The gap followed is
   the longest lately (a longer gap takes its place, a shorter one pulls it down an eighth
   of the way), since gaps come in two kinds: short between the calls of a loop, long
   where the caller does other work between loops, and the long ones are the wake-ups to
   save. A gap over GC_POOL_SPIN_MAX_NS is left out: a pause, not a rhythm to poll for. It gives its core
   back at once when it sees that it was descheduled (its clock jumped by over
   GC_POOL_JUMP_NS between two polls and the kernel counts an involuntary context switch
   of the thread: another thread wants the core; a jump without one is the host pausing
   the virtual CPU, which no thread here is waiting for) or when a module's policy runs
   a long run serially (rest()). After it was descheduled, the workers poll only
   GC_POOL_SPIN_MIN_NS for the next GC_POOL_BACKOFF split runs: the core is wanted
   elsewhere, and a worker polling on it would take a scheduler slice each time.

   A worker that takes a run on the caller's own CPU moves off it (Linux: its affinity
   becomes the process's CPUs but that one). The kernel often wakes a sleeping worker on
   the CPU of the thread that wakes it, the caller's: on a 2-vCPU virtual machine, after
   a 20 ms pause nearly every time, and with the other core busy with another process in
   half the split runs. The two then shared one core, and such a split ran no faster than
   the serial loop: fused exp/tanh split runs after a pause took 0.70-0.77x the serial
   loop's time on average, 0.50-0.53x once the worker moved. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "par_pool_api.h"

#ifndef GC_POOL_SPIN_MIN_NS
#define GC_POOL_SPIN_MIN_NS 50000.0
#endif
#ifndef GC_POOL_SPIN_MAX_NS
#define GC_POOL_SPIN_MAX_NS 20000000.0
#endif
#ifndef GC_POOL_JUMP_NS
#define GC_POOL_JUMP_NS 50000.0
#endif
#ifndef GC_POOL_BACKOFF
#define GC_POOL_BACKOFF 8
#endif
#define GC_POOL_MAXOP 64
#define GC_POOL_MAXW 63
#define GC_POOL_SPAN (1L << 24) /* a ticket is generation * SPAN + next block */


typedef struct {
    int nop;
    char *data[GC_POOL_MAXOP];
    int es[GC_POOL_MAXOP];
    gc_pool_fn fc;
    intptr_t n, blk;
    long nblk;
    int cpu; /* the caller's CPU when it posted the job, -1 where unknown */
} gc_job;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    long gen;        /* the job's generation: stored after the job, read atomically */
    long ticket;     /* gen * GC_POOL_SPAN + the next block to claim (CAS) */
    long done;       /* blocks of the job finished */
    int busy;        /* a caller owns the job (CAS): a second caller runs serially */
    long rests;      /* calls of rest() so far */
    int sleepers;    /* under mu */
    int workers;
    long spin_ns;    /* how long an idle worker polls: from the gaps between runs */
    double gap_ns;   /* the longest recent gap between split runs (see the top) */
    double last_end; /* when the last split run ended */
    long sleeps[3];  /* workers gone to sleep: spin over, descheduled, rest */
    long moved;      /* times a worker moved off the caller's CPU */
    long shared;     /* blocks a worker ran on the caller's CPU */
    int backoff;     /* split runs left after a worker was descheduled: short polls */
    pid_t pid;       /* the process that started the workers (none survive a fork) */
    gc_job job;
} gc_pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, 0, 0, 0,
             (long)GC_POOL_SPIN_MIN_NS, 0.0, 0.0, {0, 0, 0}, 0, 0, 0, 0, {0}};

static double gc_pool_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static inline void gc_pool_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* The CPU the calling thread runs on, -1 where unknown. */
static int gc_pool_cpu(void) {
#ifdef __linux__
    return sched_getcpu();
#else
    return -1;
#endif
}

/* A worker on the caller's CPU ``cpu`` moves to the process's other CPUs (see the top). */
static void gc_pool_leave(int cpu) {
#ifdef __linux__
    cpu_set_t set;
    if (cpu < 0 || cpu >= CPU_SETSIZE || gc_pool_cpu() != cpu
        || sched_getaffinity(gc_pool.pid, sizeof set, &set) != 0)
        return;
    CPU_CLR(cpu, &set);
    if (CPU_COUNT(&set) > 0 && sched_setaffinity(0, sizeof set, &set) == 0)
        __atomic_add_fetch(&gc_pool.moved, 1, __ATOMIC_RELAXED);
#else
    (void)cpu;
#endif
}

/* Claim and run blocks of job ``g`` (a copy in ``j``) until none is left; the elements
   run here, on a worker when ``worker``. A copy taken while the next job was being
   written is never used: the claim of a block fails once the ticket has moved on to
   another generation. */
static intptr_t gc_pool_work(const gc_job *j, long g, int worker) {
    intptr_t ran = 0;
    for (;;) {
        long t = __atomic_load_n(&gc_pool.ticket, __ATOMIC_ACQUIRE);
        long b = t - g * GC_POOL_SPAN;
        if (b < 0 || b >= j->nblk) return ran;
        if (!__atomic_compare_exchange_n(&gc_pool.ticket, &t, t + 1, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE))
            continue;
        intptr_t lo = (intptr_t)b * j->blk, hi = lo + j->blk < j->n ? lo + j->blk : j->n;
        char *q[GC_POOL_MAXOP];
        for (int op = 0; op < j->nop; op++) q[op] = j->data[op] + lo * j->es[op];
        if (worker && j->cpu >= 0 && gc_pool_cpu() == j->cpu)
            __atomic_add_fetch(&gc_pool.shared, 1, __ATOMIC_RELAXED);
        j->fc(hi - lo, q);
        ran += hi - lo;
        __atomic_add_fetch(&gc_pool.done, 1, __ATOMIC_RELEASE);
    }
}

/* Sleep until a job after ``seen`` is posted; ``why`` counts the reason. */
static void gc_pool_sleep(long seen, int why) {
    pthread_mutex_lock(&gc_pool.mu);
    gc_pool.sleeps[why]++;
    if (why == 1) { /* the core is wanted elsewhere: poll briefly for a while */
        __atomic_store_n(&gc_pool.backoff, GC_POOL_BACKOFF, __ATOMIC_RELAXED);
        __atomic_store_n(&gc_pool.spin_ns, (long)GC_POOL_SPIN_MIN_NS, __ATOMIC_RELAXED);
    }
    gc_pool.sleepers++;
    while (__atomic_load_n(&gc_pool.gen, __ATOMIC_ACQUIRE) == seen)
        pthread_cond_wait(&gc_pool.cv, &gc_pool.mu);
    gc_pool.sleepers--;
    pthread_mutex_unlock(&gc_pool.mu);
}

/* Involuntary context switches of the calling thread so far (-1 where unknown). */
static long gc_pool_preempted(void) {
#ifdef RUSAGE_THREAD
    struct rusage u;
    if (getrusage(RUSAGE_THREAD, &u) == 0) return u.ru_nivcsw;
#endif
    return -1;
}

/* Poll for the job after ``seen`` (sleeping when told to, see the top); its generation. */
static long gc_pool_wait(long seen) {
    double start = gc_pool_now(), last = start;
    double bound = (double)__atomic_load_n(&gc_pool.spin_ns, __ATOMIC_RELAXED);
    long rests = __atomic_load_n(&gc_pool.rests, __ATOMIC_RELAXED), g;
    long switches = gc_pool_preempted();
    for (int k = 1; (g = __atomic_load_n(&gc_pool.gen, __ATOMIC_ACQUIRE)) == seen; k++) {
        gc_pool_relax();
        if (k & 63) continue;
        double t = gc_pool_now();
        int jump = t - last > GC_POOL_JUMP_NS;
        int why = jump && (switches < 0 || gc_pool_preempted() != switches) ? 1
                  : __atomic_load_n(&gc_pool.rests, __ATOMIC_RELAXED) != rests ? 2
                  : t - start > bound ? 0 : -1;
        last = t;
        if (why < 0) continue;
        gc_pool_sleep(seen, why);
        start = last = gc_pool_now();
        bound = (double)__atomic_load_n(&gc_pool.spin_ns, __ATOMIC_RELAXED);
        rests = __atomic_load_n(&gc_pool.rests, __ATOMIC_RELAXED);
        switches = gc_pool_preempted();
    }
    return g;
}

static void *gc_pool_worker(void *arg) {
    long seen = (long)(intptr_t)arg;
    for (;;) {
        long g = gc_pool_wait(seen);
        seen = g;
        gc_job j;
        memcpy(&j, (const void *)&gc_pool.job, sizeof(j));
        gc_pool_leave(j.cpu);
        gc_pool_work(&j, g, 1);
    }
    return NULL;
}

/* Workers started so far, up to ``want``. */
static int gc_pool_start(int want) {
    if (want > GC_POOL_MAXW) want = GC_POOL_MAXW;
    while (gc_pool.workers < want) {
        pthread_t th;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&th, &attr, gc_pool_worker, (void *)(intptr_t)gc_pool.gen);
        pthread_attr_destroy(&attr);
        if (rc != 0) break;
        gc_pool.workers++;
    }
    return gc_pool.workers;
}

/* The spin bound from the gap since the last split run ended (``t0`` now). */
static void gc_pool_learn_gap(double t0) {
    if (gc_pool.last_end > 0.0) {
        double gap = t0 - gc_pool.last_end;
        double *hi = &gc_pool.gap_ns;
        if (gap <= GC_POOL_SPIN_MAX_NS) *hi = gap > *hi ? gap : *hi + 0.125 * (gap - *hi);
    }
    double spin = 2.0 * gc_pool.gap_ns;
    int backoff = __atomic_load_n(&gc_pool.backoff, __ATOMIC_RELAXED);
    if (backoff > 0) {
        __atomic_store_n(&gc_pool.backoff, backoff - 1, __ATOMIC_RELAXED);
        spin = GC_POOL_SPIN_MIN_NS;
    }
    if (spin < GC_POOL_SPIN_MIN_NS) spin = GC_POOL_SPIN_MIN_NS;
    if (spin > GC_POOL_SPIN_MAX_NS) spin = GC_POOL_SPIN_MAX_NS;
    __atomic_store_n(&gc_pool.spin_ns, (long)spin, __ATOMIC_RELAXED);
}

/* Post one run to the workers, then take blocks of it here (see gc_pool_api.split); the
   blocks are about a sixteenth of each thread's share, a multiple of 64 elements. */
static int gc_pool_split(int nop, intptr_t n, char **data, const int *es, gc_pool_fn fc,
                         int nt, double t0, double *main_ns, intptr_t *n_main) {
    if (nop > GC_POOL_MAXOP || nt < 2) return 0;
    if (gc_pool.pid != getpid()) { /* first use, or a forked child: no workers here */
        pthread_mutex_init(&gc_pool.mu, NULL);
        pthread_cond_init(&gc_pool.cv, NULL);
        gc_pool.workers = gc_pool.sleepers = gc_pool.busy = 0;
        gc_pool.pid = getpid();
    }
    int free_ = 0;
    if (!__atomic_compare_exchange_n(&gc_pool.busy, &free_, 1, 0, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return 0;
    int started = gc_pool.workers;
    if (gc_pool_start(nt - 1) < 1) {
        __atomic_store_n(&gc_pool.busy, 0, __ATOMIC_RELEASE);
        return 0;
    }
    gc_pool_learn_gap(t0);
    gc_job *j = &gc_pool.job;
    long g = gc_pool.gen + 1;
    intptr_t blk = (n / (16 * (intptr_t)nt) + 63) & ~(intptr_t)63;
    if (blk < 4096) blk = 4096;
    j->nop = nop;
    memcpy(j->data, data, (size_t)nop * sizeof(char *));
    memcpy(j->es, es, (size_t)nop * sizeof(int));
    j->fc = fc;
    j->n = n;
    j->blk = blk;
    j->nblk = (long)((n + blk - 1) / blk);
    j->cpu = gc_pool_cpu();
    gc_job mine = *j;
    __atomic_store_n(&gc_pool.done, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&gc_pool.ticket, g * GC_POOL_SPAN, __ATOMIC_RELEASE);
    /* posted under the lock, so that a worker either sleeps (counted) or sees the job */
    pthread_mutex_lock(&gc_pool.mu);
    int woke = gc_pool.sleepers > 0 || gc_pool.workers > started;
    __atomic_store_n(&gc_pool.gen, g, __ATOMIC_RELEASE);
    if (gc_pool.sleepers) pthread_cond_broadcast(&gc_pool.cv);
    pthread_mutex_unlock(&gc_pool.mu);
    *n_main = gc_pool_work(&mine, g, 0);
    *main_ns = gc_pool_now() - t0;
    for (int k = 0; __atomic_load_n(&gc_pool.done, __ATOMIC_ACQUIRE) < mine.nblk; k++) {
        gc_pool_relax();
        if ((k & 1023) == 1023) sched_yield();
    }
    gc_pool.last_end = gc_pool_now();
    __atomic_store_n(&gc_pool.busy, 0, __ATOMIC_RELEASE);
    return woke ? 2 : 1;
}

static void gc_pool_rest(void) { __atomic_add_fetch(&gc_pool.rests, 1, __ATOMIC_RELAXED); }

static gc_pool_api gc_pool_entry = {GC_POOL_API_VERSION, gc_pool_split, gc_pool_rest};

static void gc_pool_triad_block(intptr_t n, char **p) {
    double *a = (double *)p[0];
    const double *b = (const double *)p[1], *c = (const double *)p[2];
    for (intptr_t i = 0; i < n; i++) a[i] = b[i] + 3.0 * c[i];
}

/* triad(a, b, c, threads) -> a[i] = b[i] + 3 c[i] over float64 buffers, split like an
   element-wise run: split()'s answer (0: the caller ran it all, 1 split, 2 split after
   waking a worker). */
static PyObject *triad(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer a, b, c;
    int threads;
    if (!PyArg_ParseTuple(args, "w*y*y*i", &a, &b, &c, &threads)) return NULL;
    if (b.len < a.len || c.len < a.len) {
        PyBuffer_Release(&a); PyBuffer_Release(&b); PyBuffer_Release(&c);
        PyErr_SetString(PyExc_ValueError, "triad: b and c must be as long as a");
        return NULL;
    }
    char *p[3] = {(char *)a.buf, (char *)b.buf, (char *)c.buf};
    const int es[3] = {8, 8, 8};
    intptr_t n = a.len / 8, n_main;
    double main_ns;
    int split;
    Py_BEGIN_ALLOW_THREADS
    split = gc_pool_split(3, n, p, es, gc_pool_triad_block, threads, gc_pool_now(), &main_ns,
                          &n_main);
    if (!split) gc_pool_triad_block(n, p);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&a); PyBuffer_Release(&b); PyBuffer_Release(&c);
    return PyLong_FromLong(split);
}

static PyObject *rest(PyObject *self, PyObject *args) {
    (void)self; (void)args;
    gc_pool_rest();
    Py_RETURN_NONE;
}

static PyObject *api(PyObject *self, PyObject *args) {
    (void)self; (void)args;
    return PyCapsule_New(&gc_pool_entry, "graphc.linker.c.par_pool.api", NULL);
}

/* stats() -> (workers, sleeping, spin_ns, sleeps over: spin, descheduled, rest, moves off
   the caller's CPU, blocks run on it). */
static PyObject *stats(PyObject *self, PyObject *args) {
    (void)self; (void)args;
    if (gc_pool.pid != getpid()) /* no workers in this process (yet) */
        return Py_BuildValue("(iillllll)", 0, 0, 0L, 0L, 0L, 0L, 0L, 0L);
    pthread_mutex_lock(&gc_pool.mu);
    PyObject *r = Py_BuildValue("(iillllll)", gc_pool.workers, gc_pool.sleepers,
                                gc_pool.spin_ns, gc_pool.sleeps[0], gc_pool.sleeps[1],
                                gc_pool.sleeps[2],
                                __atomic_load_n(&gc_pool.moved, __ATOMIC_RELAXED),
                                __atomic_load_n(&gc_pool.shared, __ATOMIC_RELAXED));
    pthread_mutex_unlock(&gc_pool.mu);
    return r;
}

static PyMethodDef methods[] = {{"api", api, METH_NOARGS, "the entry points' capsule"},
                                {"stats", stats, METH_NOARGS, "the pool's state"},
                                {"triad", triad, METH_VARARGS, "a triad split by the pool"},
                                {"rest", rest, METH_NOARGS, "idle workers sleep now"},
                                {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "graphc_par_pool", NULL, -1,
                                 methods};
PyMODINIT_FUNC GRAPHC_INIT(void) { return PyModule_Create(&mod); }
