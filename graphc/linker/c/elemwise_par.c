/* Whether a long element-wise run is split across threads: plain C, no Python and no
   OpenMP, so that graphc.linker.c.par_policy can drive it with made-up timings.

   Each compiled module keeps one gc_par_state. The first long run goes serially, the
   second split; then each run takes the way that costs less per element (a split must
   beat the serial loop by GC_PAR_MARGIN), except that a run now and then tries the other
   way so that a change of load is noticed: after GC_PAR_GAP0 runs, then at gaps doubling,
   so a steady state pays for a try rarely. The gaps double up to GC_PAR_GAP_MAX between
   tries of the serial loop (on an idle machine such a try costs a whole second run) but
   only up to GC_PAR_SPLIT_GAP_MAX between tries of a split, which the pool bounds to
   about the serial loop's time when the other core is busy: a core that frees is noticed
   within that many runs. After a split run that was chosen (not a try) comes late, the
   gap starts again at GC_PAR_GAP0: one late run in a long steady state of splitting
   (another process took the core for a moment) keeps the loop serial for a few runs
   only; a core that stays busy makes every try late again, and the gaps double as
   before.

   A split that had to wake the pool's workers (asleep after a serial run or a pause, or
   just started) measures the wake-up, 30 us to milliseconds on a virtual machine, more
   than the split: the first split and a try of splitting that did are not learnt from,
   and the next run splits again with the workers awake (once per try: a caller whose
   runs always find them asleep pays the wake-up every time, and that run is learnt). A
   split that woke the workers is never taken for a late one: its wait was the wake-up,
   not a busy core.
   A try of the serial loop sends them to sleep like any serial run: with the other core
   busy, a worker polling beside the main thread and another process slowed the serial
   run, which then made a slower split look worth keeping.

   The chosen way's cost is a moving average of its runs (each moves it a quarter of the
   way, a run over twice the average counting as twice): the mean is what a long job pays,
   and a busy second core makes split runs vary widely, but a run preempted by another
   process, which could have happened either way, moves it little. A try replaces the
   other way's cost (the old figure is stale; a lucky try is corrected by the runs it
   wins, at most a few of them). So does a split run in which the main thread waited for
   the others longer than its own share took: a thread that started late or ran slowly
   (its core is busy elsewhere), not a preempted main thread; the next run then goes
   serially, and the split is tried again at the next gap. A wait of at most
   GC_PAR_LATE_WAIT of the main thread's own time (a block or two: a worker that woke up
   near the end and took the last block) does not count as late: the run's cost says what
   that wake-up cost.

   Built with GC_PAR_FORCE (config.openmp_policy split or serial), every run goes that
   way. */
#ifndef GC_PAR_MARGIN
#define GC_PAR_MARGIN 0.95
#endif
#ifndef GC_PAR_LATE_WAIT
#define GC_PAR_LATE_WAIT 0.125
#endif
#ifndef GC_PAR_GAP0
#define GC_PAR_GAP0 4
#endif
#ifndef GC_PAR_GAP_MAX
#define GC_PAR_GAP_MAX 512
#endif
#ifndef GC_PAR_SPLIT_GAP_MAX
#define GC_PAR_SPLIT_GAP_MAX 32
#endif

typedef struct {
    double cost[2];  /* ns per element: [0] serial, [1] split; 0 until measured */
    long calls;      /* long runs decided so far */
    long next_try;   /* the run that tries the way not chosen */
    long gap;        /* runs between tries */
    int chosen;      /* the way chosen at the last decision, -1 before */
    int trying;      /* the run decided last is a try (or the first of a way) */
    int confirm;     /* the next run splits again: the last split woke the workers */
    long count[4];   /* serial runs, split runs, tries of the other way, late splits */
} gc_par_state;

#define GC_PAR_STATE_INIT {{0.0, 0.0}, 0, GC_PAR_GAP0, GC_PAR_GAP0, -1, 0, 0, {0, 0, 0, 0}}

/* The way of the next long run, given the threads available: 1 split, 0 serial. */
static int gc_par_decide(gc_par_state *s, int threads) {
    long c = s->calls++;
    int way;
#ifdef GC_PAR_FORCE /* config.openmp_policy split (1) or serial (0) */
    (void)c;
    way = threads >= 2 && GC_PAR_FORCE;
    s->count[way]++;
    return way;
#endif
    s->trying = 0;
    if (threads < 2) way = 0;
    else if (s->confirm) way = 1, s->trying = 2; /* the try again, workers awake */
    else if (s->cost[0] == 0.0 || s->cost[1] == 0.0) /* measure each way once first */
        way = s->cost[0] != 0.0, s->trying = 1;
    else {
        int best = s->cost[1] < GC_PAR_MARGIN * s->cost[0];
        long cap = best ? GC_PAR_GAP_MAX : GC_PAR_SPLIT_GAP_MAX;
        s->chosen = best;
        way = best;
        if (s->next_try > c + cap) s->next_try = c + cap;
        if (c >= s->next_try) {
            way = !best;
            s->trying = 1;
            s->count[2]++;
            s->gap = s->gap * 2 > cap ? cap : s->gap * 2;
            s->next_try = c + s->gap;
        }
    }
    s->confirm = 0;
    s->count[way]++;
    return way;
}

/* Learn from a run of ``n`` elements that took ``ns``; a split one also gives the time
   the main thread took for its own ``n_main`` elements (``main_ns``), and whether it had
   to wake the pool's workers (``woke``). */
static void gc_par_learn(gc_par_state *s, int split, double ns, double n, double main_ns,
                         double n_main, int woke) {
    if (split && woke && s->trying == 1) { /* a try that measured the wake-up: again */
        s->confirm = 1;
        return;
    }
    double per = ns / n, *c = &s->cost[split];
    int late = split && !woke && main_ns > 0.0 && n_main > 0.0 && ns > main_ns * (n / n_main)
               && ns - main_ns > GC_PAR_LATE_WAIT * main_ns;
    if (late) s->count[3]++;
    if (late && s->chosen == 1) { /* a chosen split ran late: try it again soon */
        s->gap = GC_PAR_GAP0;
        s->next_try = s->calls + GC_PAR_GAP0;
    }
    if (*c == 0.0 || late || split != s->chosen) *c = per;
    else *c += 0.25 * ((per < 2.0 * *c ? per : 2.0 * *c) - *c);
}
