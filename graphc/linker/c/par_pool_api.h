/* The entry points of the process's one worker pool (par_pool.c), as every element-wise
   module compiled with config.openmp reaches them: par_pool.c fills one gc_pool_api and
   graphc.linker.c.par_pool.api() hands it out in a capsule; a module uses it only when
   its version is GC_POOL_API_VERSION. Both C texts take in this one declaration. */
#include <stdint.h>

#define GC_POOL_API_VERSION 2

typedef void (*gc_pool_fn)(intptr_t n, char **p);

typedef struct {
    int version;
    /* Run ``n`` elements of ``fc`` over ``nop`` operands (element sizes ``es``) on the
       caller and up to ``nt`` - 1 workers; 0 when the pool is taken or has no worker
       (the caller runs the loop), else the caller's elements and its ns since ``t0``
       until no block was left, and 1, or 2 when a worker was asleep (woken for this run,
       or just started). */
    int (*split)(int nop, intptr_t n, char **data, const int *es, gc_pool_fn fc, int nt,
                 double t0, double *main_ns, intptr_t *n_main);
    void (*rest)(void); /* a long run goes serially: idle workers sleep now */
} gc_pool_api;
