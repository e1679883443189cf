#define GC_MAXD 64
#define GC_MAXOP 64
#define GC_BLK 512
#define GC_MAXBC 8
#ifdef _OPENMP
#include <omp.h>
#endif
#ifndef GC_PAR_MIN
#define GC_PAR_MIN 200000 /* elements before a run is split across threads */
#endif
typedef void (*gc_contig_fn)(npy_intp n, char **p);
typedef void (*gc_strided_fn)(npy_intp n, char **p, const npy_intp *s);

/* Input k as an owned reference to an ndarray of ``typenum`` and ``nd`` dimensions
   (numpy scalars become 0-d arrays); NULL with TypeError otherwise. */
static PyArrayObject *gc_input(PyObject *o, int k, int nd, int typenum, const char *name) {
    PyArrayObject *a;
    if (PyArray_Check(o)) {
        Py_INCREF(o);
        a = (PyArrayObject *)o;
    } else if (PyArray_IsScalar(o, Generic)) {
        a = (PyArrayObject *)PyArray_FromScalar(o, NULL);
        if (a == NULL) return NULL;
    } else {
        PyErr_Format(PyExc_TypeError, "%s: input %d is not an ndarray (got %.100s)",
                     name, k, Py_TYPE(o)->tp_name);
        return NULL;
    }
    if (PyArray_NDIM(a) != nd || !PyArray_EquivTypenums(PyArray_TYPE(a), typenum)
        || !PyArray_ISNOTSWAPPED(a)) {
        PyArray_Descr *want = PyArray_DescrFromType(typenum);
        PyErr_Format(PyExc_TypeError,
                     "%s: input %d is a %d-d array of dtype %S, expected %d-d of dtype %S",
                     name, k, PyArray_NDIM(a), (PyObject *)PyArray_DESCR(a), nd,
                     want ? (PyObject *)want : Py_None);
        Py_XDECREF(want);
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

static void gc_shape_str(char *buf, size_t cap, PyArrayObject *a) {
    size_t len = 0;
    int nd = PyArray_NDIM(a);
    len += snprintf(buf + len, cap - len, "(");
    for (int d = 0; d < nd && len < cap; d++)
        len += snprintf(buf + len, cap - len, d + 1 < nd || nd > 1 ? "%ld, " : "%ld,",
                        (long)PyArray_DIM(a, d));
    if (nd > 1 && len >= 2 && len < cap) len -= 2;
    if (len < cap) snprintf(buf + len, cap - len, ")");
}

static int gc_broadcast(PyArrayObject **in, int nin, int nd, npy_intp *shape,
                        const char *name) {
    for (int d = 0; d < nd; d++) {
        shape[d] = 1;
        for (int i = 0; i < nin; i++) {
            npy_intp s = PyArray_DIM(in[i], d);
            if (s == 1) continue;
            if (shape[d] == 1) shape[d] = s;
            else if (shape[d] != s) {
                char msg[1024], one[160];
                size_t len = 0;
                for (int j = 0; j < nin && len < sizeof(msg); j++) {
                    gc_shape_str(one, sizeof(one), in[j]);
                    len += snprintf(msg + len, sizeof(msg) - len, "%s%s", j ? " " : "", one);
                }
                PyErr_Format(PyExc_ValueError,
                             "%s: input shapes %s do not broadcast (axis %d: %ld vs %ld)",
                             name, msg, d, (long)shape[d], (long)s);
                return -1;
            }
        }
    }
    return 0;
}

/* The previous array in the slot when it can be overwritten, else a new C-order array. */
static PyArrayObject *gc_prepare_output(PyObject **slot, int nd, const npy_intp *shape,
                                        int typenum) {
    PyObject *o = *slot;
    if (o != NULL && PyArray_CheckExact(o) && Py_REFCNT(o) == 1) {
        PyArrayObject *a = (PyArrayObject *)o;
        if (PyArray_NDIM(a) == nd && PyArray_TYPE(a) == typenum
            && PyArray_IS_C_CONTIGUOUS(a) && PyArray_ISWRITEABLE(a)
            && PyArray_CHKFLAGS(a, NPY_ARRAY_OWNDATA)) {
            int same = 1;
            for (int d = 0; d < nd; d++)
                if (PyArray_DIM(a, d) != shape[d]) same = 0;
            if (same) return a;
        }
    }
    PyObject *n = PyArray_EMPTY(nd, (npy_intp *)shape, typenum, 0);
    if (n == NULL) return NULL;
    Py_XSETREF(*slot, n);
    return (PyArrayObject *)n;
}

static void gc_extent(PyArrayObject *a, char **lo, char **hi) {
    char *l = PyArray_BYTES(a), *h = l;
    for (int d = 0; d < PyArray_NDIM(a); d++) {
        npy_intp n = PyArray_DIM(a, d), s = PyArray_STRIDE(a, d);
        if (n == 0) { *lo = *hi = l; return; }
        if (s > 0) h += s * (n - 1); else l += s * (n - 1);
    }
    *lo = l;
    *hi = h + PyArray_ITEMSIZE(a);
}

static int gc_overlap(PyArrayObject *a, PyArrayObject *b) {
    char *al, *ah, *bl, *bh;
    gc_extent(a, &al, &ah);
    gc_extent(b, &bl, &bh);
    return al < bh && bl < ah;
}

static int gc_same_layout(PyArrayObject *a, PyArrayObject *b) {
    if (PyArray_BYTES(a) != PyArray_BYTES(b) || PyArray_NDIM(a) != PyArray_NDIM(b)) return 0;
    for (int d = 0; d < PyArray_NDIM(a); d++)
        if (PyArray_DIM(a, d) != PyArray_DIM(b, d)
            || (PyArray_DIM(a, d) > 1 && PyArray_STRIDE(a, d) != PyArray_STRIDE(b, d)))
            return 0;
    return 1;
}

/* Byte strides of ``a`` broadcast to ``shape`` (0 on size-1 axes). */
static void gc_strides(PyArrayObject *a, int nd, npy_intp *st) {
    for (int d = 0; d < nd; d++)
        st[d] = PyArray_DIM(a, d) == 1 ? 0 : PyArray_STRIDE(a, d);
}

static void gc_fill(char *buf, const char *v, int es, npy_intp n) {
    switch (es) {
    case 1: memset(buf, *v, (size_t)n); break;
#define GC_FILL(U) { U x; memcpy(&x, v, sizeof(U)); \
        for (npy_intp j = 0; j < n; j++) ((U *)buf)[j] = x; }
    case 2: GC_FILL(npy_uint16) break;
    case 4: GC_FILL(npy_uint32) break;
    default: GC_FILL(npy_uint64) break;
    }
}

/* config.openmp (built with -fopenmp): a long run may be split across threads. Whether
   it is, is decided per compiled module from its own timings (the policy in
   elemwise_par.c), so that splitting never costs more than the serial loop for long: the
   second core may be busy with another process or idle. Runs of at least GC_PAR_MIN
   elements are timed; each thread gets at least GC_PAR_MIN / 2 of them (OMP_NUM_THREADS
   or the CPUs the process may use bound the threads). The decisions are also counted in
   graphc.linker.c.par_policy.COUNTS, over all modules (see par_policy.counts()).

   A split run goes to the process's one pool of worker threads (par_pool.c, shared by
   every module; its entry points are looked up once) rather than an OpenMP parallel
   region, whose end waits for every thread of the team: a worker whose core is busy may
   not run for a scheduler slice (milliseconds), and the main thread would wait for it.
   There the run is cut into blocks that the main thread and the workers claim in turn;
   the main thread waits only for blocks a worker has claimed. A run the policy keeps
   serial tells the pool, whose idle workers then stop polling for the next run. */
#ifdef _OPENMP
#include <time.h>
#include "par_pool_api.h"
static gc_par_state gc_par = GC_PAR_STATE_INIT;
static npy_int64 *gc_par_counts = NULL; /* par_policy.COUNTS' data, once looked up */
static int gc_par_looked = 0;
static const gc_pool_api *gc_pool = NULL; /* the pool's entry points, once looked up */
static int gc_pool_looked = 0;

static double gc_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* ``module.name`` (or what ``module.name()`` returns, when ``call``), a new reference, or
   NULL without an exception set: the caller goes on without it; GIL held. */
static PyObject *gc_module_value(const char *module, const char *name, int call) {
    PyObject *m = PyImport_ImportModule(module);
    PyObject *v = !m ? NULL
                     : call ? PyObject_CallMethod(m, name, NULL) : PyObject_GetAttrString(m, name);
    Py_XDECREF(m);
    PyErr_Clear();
    return v;
}

/* par_policy.COUNTS (an int64 array kept alive by its module), or NULL; GIL held. */
static npy_int64 *gc_par_shared_counts(void) {
    if (gc_par_looked) return gc_par_counts;
    gc_par_looked = 1;
    PyObject *a = gc_module_value("graphc.linker.c.par_policy", "COUNTS", 0);
    if (a && PyArray_Check(a) && PyArray_TYPE((PyArrayObject *)a) == NPY_INT64
        && PyArray_SIZE((PyArrayObject *)a) >= 4
        && PyArray_IS_C_CONTIGUOUS((PyArrayObject *)a))
        gc_par_counts = (npy_int64 *)PyArray_DATA((PyArrayObject *)a);
    else
        Py_CLEAR(a);
    return gc_par_counts; /* the reference to ``a`` is kept for good */
}

/* The pool's entry points (graphc.linker.c.par_pool.api(), a capsule kept alive by the
   pool's module), or NULL: then every run goes serially; GIL held. */
static const gc_pool_api *gc_pool_shared(void) {
    if (gc_pool_looked) return gc_pool;
    gc_pool_looked = 1;
    PyObject *c = gc_module_value("graphc.linker.c.par_pool", "api", 1);
    const gc_pool_api *p = c ? (const gc_pool_api *)PyCapsule_GetPointer(
                                   c, "graphc.linker.c.par_pool.api") : NULL;
    PyErr_Clear();
    if (p && p->version == GC_POOL_API_VERSION) gc_pool = p;
    Py_XDECREF(c);
    return gc_pool;
}
#endif

/* One contiguous run of ``n`` elements over ``nop`` operands; with OpenMP a long one may
   be split across threads (see above). Returns 1 when done here, 0 when the caller runs
   it serially. */
static int gc_ew_par(int nop, npy_intp n, char **data, const int *es, gc_contig_fn fc) {
#ifdef _OPENMP
    if (n < GC_PAR_MIN) return 0;
    npy_intp fit = n / (GC_PAR_MIN / 2 > 0 ? GC_PAR_MIN / 2 : 1);
    int nt = omp_get_max_threads();
    if (fit < nt) nt = (int)fit;
    long before[4];
    memcpy(before, gc_par.count, sizeof(before));
    const gc_pool_api *pool = nt >= 2 ? gc_pool_shared() : NULL;
    int split = gc_par_decide(&gc_par, pool ? nt : 1);
    double main_ns = 0.0, t0 = gc_now_ns();
    npy_intp n_main = 0;
    if (split) split = pool->split(nop, n, data, es, fc, nt, t0, &main_ns, &n_main);
    else if (pool) pool->rest();
    if (!split) fc(n, data);
    gc_par_learn(&gc_par, split != 0, gc_now_ns() - t0, (double)n, main_ns,
                 (double)n_main, split == 2);
    npy_int64 *shared = gc_par_shared_counts();
    if (shared)
        for (int k = 0; k < 4; k++) shared[k] += gc_par.count[k] - before[k];
    return 1;
#else
    (void)nop; (void)n; (void)data; (void)es; (void)fc;
    return 0;
#endif
}

/* The fast path of a thunk whose inputs all have one shape, C-contiguous and aligned: one
   contiguous run (no broadcasting, dimension merging or strides), the same kernel and
   elements as gc_ew_loop. */
static void gc_ew_flat(int nop, npy_intp n, char **data, const int *es, gc_contig_fn fc) {
    if (n > 0 && !gc_ew_par(nop, n, data, es, fc)) fc(n, data);
}

/* Whether inputs ``in[0..nin)`` (ndarrays of one dtype family, checked by the caller) are
   native-order, aligned, C-contiguous and of one shape: the fast path's condition. */
static int gc_flat_inputs(PyArrayObject *const *in, int nin, int nd) {
    for (int k = 0; k < nin; k++) {
        PyArrayObject *a = in[k];
        if (!PyArray_CHKFLAGS(a, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED)
            || !PyArray_ISNOTSWAPPED(a) || PyArray_NDIM(a) != nd)
            return 0;
        if (k > 0)
            for (int d = 0; d < nd; d++)
                if (PyArray_DIM(a, d) != PyArray_DIM(in[0], d)) return 0;
    }
    return 1;
}

/* C-contiguous ``a`` and ``b`` share bytes (and are not the same array data). */
static int gc_flat_overlap(PyArrayObject *a, PyArrayObject *b) {
    char *al = PyArray_BYTES(a), *bl = PyArray_BYTES(b);
    if (al == bl) return 0;
    return al < bl + PyArray_NBYTES(b) && bl < al + PyArray_NBYTES(a);
}

/* Run an element loop over ``nop`` operands (inputs first) of broadcast shape ``shape``;
   ``st[op * nd + d]`` are byte strides (0 where broadcast). */
static void gc_ew_loop(int nop, int nin, int nd, const npy_intp *shape, char **data,
                       const npy_intp *st, const int *es, gc_contig_fn fc, gc_strided_fn fs) {
    npy_intp sh[GC_MAXD + 1], s[(GC_MAXD + 1) * GC_MAXOP], idx[GC_MAXD + 1];
    char *ptr[GC_MAXOP], *q[GC_MAXOP];
    int m = 0;
    for (int d = 0; d < nd; d++) {
        if (shape[d] == 0) return;
        if (shape[d] == 1) continue;
        if (m > 0) {
            int ok = 1;
            for (int op = 0; op < nop; op++)
                if (s[(m - 1) * nop + op] != st[op * nd + d] * shape[d]) { ok = 0; break; }
            if (ok) {
                sh[m - 1] *= shape[d];
                for (int op = 0; op < nop; op++) s[(m - 1) * nop + op] = st[op * nd + d];
                continue;
            }
        }
        sh[m] = shape[d];
        for (int op = 0; op < nop; op++) s[m * nop + op] = st[op * nd + d];
        m++;
    }
    if (m == 0) {
        sh[0] = 1;
        for (int op = 0; op < nop; op++) s[op] = 0;
        m = 1;
    }
    npy_intp n = sh[m - 1];
    const npy_intp *is = &s[(m - 1) * nop];
    int contig = 1, nbc = 0, bc[GC_MAXOP];
    for (int op = 0; op < nop; op++) {
        bc[op] = 0;
        if (is[op] == es[op]) continue;
        if (is[op] == 0 && op < nin && n > 1) { bc[op] = 1; nbc++; continue; }
        if (n == 1) continue;
        contig = 0;
    }
    if (nbc > GC_MAXBC) contig = 0;
    /* one long contiguous run: maybe split across threads (config.openmp) */
    if (m == 1 && contig && nbc == 0 && gc_ew_par(nop, n, data, es, fc)) return;
    npy_uint64 bufmem[GC_MAXBC][GC_BLK];
    for (int op = 0; op < nop; op++) ptr[op] = data[op];
    for (int d = 0; d < m; d++) idx[d] = 0;
    for (;;) {
        if (!contig) {
            fs(n, ptr, is);
        } else if (nbc == 0 || n == 1) {
            fc(n, ptr);
        } else {
            npy_intp blk = n < GC_BLK ? n : GC_BLK;
            int b = 0;
            for (int op = 0; op < nop; op++)
                if (bc[op]) {
                    gc_fill((char *)bufmem[b], ptr[op], es[op], blk);
                    q[op] = (char *)bufmem[b++];
                }
            for (npy_intp done = 0; done < n; done += blk) {
                npy_intp c = n - done < blk ? n - done : blk;
                for (int op = 0; op < nop; op++)
                    if (!bc[op]) q[op] = ptr[op] + done * es[op];
                fc(c, q);
            }
        }
        int d = m - 2;
        for (; d >= 0; d--) {
            idx[d]++;
            for (int op = 0; op < nop; op++) ptr[op] += s[d * nop + op];
            if (idx[d] < sh[d]) break;
            for (int op = 0; op < nop; op++) ptr[op] -= s[d * nop + op] * sh[d];
            idx[d] = 0;
        }
        if (d < 0) break;
    }
}

/* Reductions: for each output element (kept axes, C order) init, step over runs of the
   reduced axes (innermost run: n elements, byte stride s), fin. */
typedef void (*gc_rinit_fn)(void *acc);
typedef void (*gc_rstep_fn)(npy_intp n, const char *p, npy_intp s, void *acc);
typedef void (*gc_rfin_fn)(const void *acc, char *out);

static void gc_reduce(int nk, const npy_intp *kd, const npy_intp *ks, int nr,
                      const npy_intp *rd0, const npy_intp *rs0, int reorder, const char *data,
                      char *out, npy_intp oes, gc_rinit_fn init, gc_rstep_fn step,
                      gc_rfin_fn fin) {
    npy_intp rd[GC_MAXD + 1], rs[GC_MAXD + 1], ri[GC_MAXD + 1], ki[GC_MAXD + 1];
    npy_intp nout = 1;
    for (int d = 0; d < nk; d++) nout *= kd[d];
    if (nout == 0) return;
    int m = 0, empty = 0;
    for (int d = 0; d < nr; d++) {
        if (rd0[d] == 0) empty = 1;
        if (rd0[d] <= 1) continue;
        rd[m] = rd0[d]; rs[m] = rs0[d]; m++;
    }
    if (reorder) { /* largest |stride| outermost */
        for (int a = 1; a < m; a++)
            for (int b = a; b > 0; b--) {
                npy_intp x = rs[b - 1] < 0 ? -rs[b - 1] : rs[b - 1];
                npy_intp y = rs[b] < 0 ? -rs[b] : rs[b];
                if (x >= y) break;
                npy_intp t = rs[b]; rs[b] = rs[b - 1]; rs[b - 1] = t;
                t = rd[b]; rd[b] = rd[b - 1]; rd[b - 1] = t;
            }
    }
    int c = 0;
    for (int d = 0; d < m; d++) {
        if (c > 0 && rs[c - 1] == rs[d] * rd[d]) {
            rd[c - 1] *= rd[d];
            rs[c - 1] = rs[d];
            continue;
        }
        rd[c] = rd[d]; rs[c] = rs[d]; c++;
    }
    m = c;
    if (m == 0) { rd[0] = 1; rs[0] = 0; m = 1; }
    double accmem[8];
    const char *base = data;
    for (int d = 0; d < nk; d++) ki[d] = 0;
    for (npy_intp o = 0; o < nout; o++) {
        init(accmem);
        if (!empty) {
            const char *p = base;
            for (int d = 0; d < m; d++) ri[d] = 0;
            for (;;) {
                step(rd[m - 1], p, rs[m - 1], accmem);
                int d = m - 2;
                for (; d >= 0; d--) {
                    ri[d]++;
                    p += rs[d];
                    if (ri[d] < rd[d]) break;
                    p -= rs[d] * rd[d];
                    ri[d] = 0;
                }
                if (d < 0) break;
            }
        }
        fin(accmem, out);
        out += oes;
        for (int d = nk - 1; d >= 0; d--) {
            ki[d]++;
            base += ks[d];
            if (ki[d] < kd[d]) break;
            base -= ks[d] * kd[d];
            ki[d] = 0;
        }
    }
}
/* Reductions with the accumulator in the output: out = op(out, x) over the input in
   memory order (largest stride outermost), when the input's innermost axis is kept.
   Returns 0 (nothing done) otherwise. */
static int gc_reduce_acc(PyArrayObject *x, const int *is_red, PyArrayObject *out,
                         gc_rinit_fn init, gc_rfin_fn fin, gc_contig_fn fc, gc_strided_fn fs) {
    int nd = PyArray_NDIM(x), k = 0;
    npy_intp shape[GC_MAXD], sx[GC_MAXD], so[GC_MAXD], st[3 * GC_MAXD];
    for (int d = 0; d < nd; d++) {
        shape[d] = PyArray_DIM(x, d);
        sx[d] = shape[d] == 1 ? 0 : PyArray_STRIDE(x, d);
        so[d] = is_red[d] ? 0 : (shape[d] == 1 ? 0 : PyArray_STRIDE(out, k));
        if (!is_red[d]) k++;
    }
    for (int a = 1; a < nd; a++) /* stable: largest |stride| first */
        for (int b = a; b > 0; b--) {
            npy_intp u = sx[b - 1] < 0 ? -sx[b - 1] : sx[b - 1];
            npy_intp v = sx[b] < 0 ? -sx[b] : sx[b];
            if (u >= v) break;
            npy_intp t = sx[b]; sx[b] = sx[b - 1]; sx[b - 1] = t;
            t = so[b]; so[b] = so[b - 1]; so[b - 1] = t;
            t = shape[b]; shape[b] = shape[b - 1]; shape[b - 1] = t;
        }
    int last = -1;
    for (int d = 0; d < nd; d++)
        if (shape[d] > 1) last = d;
    if (last < 0 || so[last] == 0) return 0;
    double accmem[8];
    npy_intp nout = PyArray_SIZE(out), oes = PyArray_ITEMSIZE(out);
    char *o = PyArray_BYTES(out);
    init(accmem);
    for (npy_intp j = 0; j < nout; j++) fin(accmem, o + j * oes);
    char *data[3] = {PyArray_BYTES(x), o, o};
    int es[3] = {(int)PyArray_ITEMSIZE(x), (int)oes, (int)oes};
    for (int d = 0; d < nd; d++) {
        st[d] = sx[d];
        st[nd + d] = so[d];
        st[2 * nd + d] = so[d];
    }
    gc_ew_loop(3, 2, nd, shape, data, st, es, fc, fs);
    return 1;
}
