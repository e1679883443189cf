"""graphc's own vector math: exp, expm1, log, log1p, tanh, sigmoid and softplus in C.

The element-wise kernels (``gen_elemwise.py``, ``gen_nnet.py``) run under
``#pragma omp simd``; gcc calls the C library's SIMD variants there (glibc's libmvec), one
call per vector, whose exp and tanh in double were slower than numpy's own loops
(``benchmarks/bench_vecmath.py``). The functions here are ``static inline``, branch-free
(every special case is a select, which gcc turns into a masked blend), and use nothing but
``+ - * /``, ``fma``, compares and integer bit operations on the IEEE encoding, so gcc
inlines them into the loop and vectorizes them at the full vector width.

Design, the same for ``double`` and ``float``:

- ``exp``: ``x = n*ln2 + r`` with ``n = rint(x/ln2)`` (the 1.5*2^52 shift trick) and
  ``|r| <= ln2/2``, reduced in two steps (Cody-Waite; ``ln2``'s high part has trailing zero
  bits so ``n*LN2HI`` and ``x - n*LN2HI`` are exact); ``exp(r) = 1 + r + r*r*Q(r)``.
  ``x`` is first clamped to ``[-746, 710]`` by two integer mins on its bits (gcc makes
  the float selects three compares and two blends), where exp is ``+inf`` or rounds to
  ``+0``. A normal result is scaled by adding ``n << 52`` to ``p``'s bits, one integer
  add instead of two products; past the largest double that sum is capped at ``inf``'s
  bits. A subnormal result is rounded once, to an integer (``p*2^(n+1074) + 2^52``, the
  first term's bits formed as ``p``'s plus ``(n + 1074) << 52``), whose bits are the
  result's: no floating-point operation underflows or reads a subnormal (either takes a
  microcode assist on x86, ~100 cycles), so every input range costs the same (before,
  1e6 exps where the result is subnormal took 4.9 ms in float and 10.3 ms in double,
  against 0.8 and 2.4 elsewhere; ``tests/test_vecmath_flags.py`` reads the MXCSR
  underflow flags). gcc evaluates both arms of a select (``-fno-trapping-math``), so the
  normal lanes' rounding sum adds ``2^52`` to ``2^52``. A subnormal result leaves the
  function all the same: numpy's float operations on it (a product, a quotient) take the
  assist, and so do graphc's fused loops.
- ``expm1``: the same reduction, and ``2^n*(1 + expm1(r)) - 1`` evaluated as
  ``fma(2^n, r*r*Q(r) + c, fma(2^n, r, 2^n - 1))`` where ``c`` is the rounding error of the
  reduced argument: exact cancellation for ``n = 0``, one rounding of the large part else.
- ``log``: ``x = 2^k * m`` with ``m`` in ``[sqrt(2)/2, sqrt(2))`` read from the bits
  (subnormal inputs scaled by 2^54 first), ``f = m - 1``, ``s = f/(2+f)``, ``z = s*s`` and
  ``log(1+f) = f - f*f/2 + s*(f*f/2 + z*P(z))``, summed with ``k*ln2`` in fdlibm's order.
- ``log1p``: ``u = 1 + x`` split as for ``log`` with the rounding error of ``1 + x``
  added back as ``c/u``; ``f = x`` when ``x`` is in ``(sqrt(2)/2 - 1, sqrt(2) - 1)``.
- ``tanh``: ``e/(e + 2)`` with ``e = expm1(2|x|)`` (relative accuracy down to the
  subnormals), ``|x|`` clamped where ``tanh`` rounds to 1, the sign copied back. In
  double, ``e`` is kept as two doubles, the sum ``e + 2`` too, and the quotient is
  corrected by its residual; in float ``e`` is one sum and one fma, and the quotient one
  rounded division (the corrections of ``e`` cost 11 of 43 instructions per 16 floats,
  the quotient's would make it 1.6x slower). In double the factor 2 of ``2|x|`` is folded
  into the reduction's and ``Q``'s constants (powers of 2: the same bits) instead of
  multiplied in: the fused exp/tanh loop 0.98x the time (interleaved, three input ranges);
  in float that measured level.
- ``sigmoid``: ``e = exp(-|x|)``, ``(x >= 0 ? 1 : e) / (1 + e)`` (as the Op's numpy code);
  ``softplus``: ``max(x, 0) + log1p(exp(-|x|))``. Where ``1 + e`` rounds to 1 and
  ``log1p(e)`` to e (``|x|`` past 18.5 in float, 38 in double) they are selected as e or 1,
  and x or e, while the division and log1p get 0: a subnormal e would make them take the
  assist (5-7x the time), and log1p's ``e*e`` underflowed from there on.

``Q`` and ``P`` are Chebyshev (near-minimax) fits made by ``scripts/vecmath_coefficients.py``
(degree 9 and 6 for double, 4 and 2 for float), evaluated in Horner's scheme (double's
``Q`` as its even and odd halves in ``r*r``): the loops overlap their iterations, so the
fewest operations win over the shortest chain.

Special values follow numpy: NaN in gives NaN out; ``exp(+-inf) = inf, 0``; overflow gives
``inf`` and underflow subnormals then ``+0``; ``log(0) = -inf``, ``log(x < 0) = nan``,
``log(inf) = inf``; ``log1p(-1) = -inf``; signed zeros and tiny arguments are returned
unchanged by ``expm1``, ``log1p`` and ``tanh`` (``tanh(-0.0) = -0.0``).

Accuracy, checked by ``tests/test_vecmath.py`` against an 80-bit ``np.longdouble``
reference over uniform, normal, wide, huge, tiny and subnormal inputs, in units in the last
place of the exact value (below the normal range, of the smallest subnormal):
:data:`ULP_BOUNDS` (exp, log, log1p 1 ulp; expm1, softplus 2; sigmoid 3; tanh 1.5 in
double, 3 in float).
"""

from __future__ import annotations

import re

ULP_BOUNDS: dict[str, dict[str, float]] = {
    "float64": {"exp": 1.0, "expm1": 2.0, "log": 1.0, "log1p": 1.0, "tanh": 1.5,
                "sigmoid": 3.0, "softplus": 2.0},
    "float32": {"exp": 1.0, "expm1": 2.0, "log": 1.0, "log1p": 1.0, "tanh": 3.0,
                "sigmoid": 3.0, "softplus": 2.0},
}  # fmt: skip
"""dtype -> function -> the largest error in ulps that tests/test_vecmath.py allows. The
largest errors measured (2.8 million inputs per function and dtype: the test's samples,
jittered), float64 / float32: exp 0.97 / 0.95, expm1 1.61 / 1.36, log 0.84 / 0.84,
log1p 0.82 / 0.85, tanh 1.26 / 2.43 (from denser searches, see the README), sigmoid
2.45 / 2.40, softplus 1.61 / 1.56."""

FUNCTIONS = ("exp", "expm1", "log", "log1p", "tanh", "sigmoid", "softplus")
"""The functions defined here, as ``gc_vm_<name>_npy_float64`` and ``gc_vm_<name>_npy_float32``."""

_F64 = r"""
/* ---- graphc vector math, double (graphc/linker/c/vecmath.py) ---- */
/* an exp and a log1p in one function: more than gcc inlines of a plain static inline in
   a large module, and a call per element is a scalar loop */
#define GCVM_INLINE static inline __attribute__((always_inline))
#define GCVM_NOINLINE static __attribute__((noinline))
static inline npy_int64 gcvm_bits_f64(double x) { npy_int64 i; memcpy(&i, &x, 8); return i; }
static inline double gcvm_double(npy_int64 i) { double x; memcpy(&x, &i, 8); return x; }
/* x clamped to [lo, hi] (lo < 0 < hi) by two integer operations on its bits: a signed
   min with hi's (a negative double's bits are a negative integer) and an unsigned min with
   lo's (a positive double's are below every negative's); a NaN becomes lo or hi. gcc
   makes the two float selects three compares and two blends */
static inline double gcvm_clamp_f64(double x, double lo, double hi) {
    const npy_int64 b = gcvm_bits_f64(x), bh = gcvm_bits_f64(hi);
    const npy_uint64 u = (npy_uint64)(b < bh ? b : bh), ul = (npy_uint64)gcvm_bits_f64(lo);
    return gcvm_double((npy_int64)(u < ul ? u : ul));
}
#define GCVM_SHIFT64 0x1.8p52
#define GCVM_LN2HI64 0x1.62e42fefa3800p-1 /* n * LN2HI is exact for |n| < 2^11 */
#define GCVM_LN2LO64 0x1.ef35793c76730p-45

/* g * Q(h*r), where Q(r) = (exp(r) - 1 - r) / r^2 for |r| <= ln2/2, as E(r*r) + r*O(r*r)
   (its even and odd coefficients, each in Horner's scheme): 9 operations and r*r (the
   callers' own), against 12 in Estrin's scheme, whose shorter chain of dependent
   operations the loops do not need (they overlap the iterations). h and g are powers of
   2 known at compile time: the coefficients times their powers are exact constants, and
   every intermediate is the unscaled one's times a power of 2, so the same bits */
static inline double gcvm_qs_f64(double r, double h, double g) {
    const double z = r * r, h2 = h * h, h4 = h2 * h2, h6 = h4 * h2, h8 = h4 * h4;
    double e = fma(0x1.28917c9f3a495p-22 * g * h8, z, 0x1.a019b914881bap-16 * g * h6);
    double o = fma(0x1.af389eea54156p-26 * g * h8 * h, z, 0x1.71de0db2eb873p-19 * g * h6 * h);
    e = fma(e, z, 0x1.6c16c17889f3cp-10 * g * h4);
    o = fma(o, z, 0x1.a01a01a7c2f2cp-13 * g * h4 * h);
    e = fma(e, z, 0x1.5555555553d68p-5 * g * h2);
    o = fma(o, z, 0x1.11111111109b5p-7 * g * h2 * h);
    e = fma(e, z, 0x1.0000000000001p-1 * g);
    o = fma(o, z, 0x1.5555555555556p-3 * g * h);
    return fma(o, r, e);
}

static inline double gcvm_q_f64(double r) { return gcvm_qs_f64(r, 1.0, 1.0); }

/* w*x = k*ln2 + (r + rc)*w (rc: the rounding error of r), k = rint(w*x/ln2) = n, for w a
   power of 2 known at compile time: r and rc are the reduction of w*x over w, bit for bit */
static inline double gcvm_reduce_w_f64(double x, double w, npy_int64 *n, double *rc) {
    double k = fma(x, 0x1.71547652b82fep+0 * w, GCVM_SHIFT64);
    *n = gcvm_bits_f64(k) - gcvm_bits_f64(GCVM_SHIFT64);
    k -= GCVM_SHIFT64;
    const double rh = fma(-k, GCVM_LN2HI64 / w, x); /* exact */
    const double r = fma(-k, GCVM_LN2LO64 / w, rh);
    *rc = fma(-k, GCVM_LN2LO64 / w, rh - r);
    return r;
}

/* x = k*ln2 + r + rc, k = rint(x/ln2) = n */
static inline double gcvm_reduce_f64(double x, npy_int64 *n, double *rc) {
    return gcvm_reduce_w_f64(x, 1.0, n, rc);
}

static inline double gc_vm_exp_npy_float64(double x) {
    double rc;
    npy_int64 n;
    /* clamped where exp is +inf or rounds to +0 (n in [-1076, 1024]; a NaN is selected
       back at the end): the scaling below then needs no select of its own there */
    const double xc = gcvm_clamp_f64(x, -746.0, 710.0);
    const double r = gcvm_reduce_f64(xc, &n, &rc);
    const double p = 1.0 + (r + fma(r * r, gcvm_q_f64(r), rc));
    /* p * 2^n as n added to p's exponent field (p in [0.7, 1.42]): the bits of the
       result where it is normal; past the largest double the exponent field is 2047
       (inf with a nonzero fraction: capped at inf's bits), below 2^-1022 it is 0 or
       negative. (n + the shift's bits: the bits of k, the reduction's rounded x/ln2,
       whose low 12 bits are n's: one integer subtraction fewer) */
    const npy_int64 b = gcvm_bits_f64(p) + ((n + gcvm_bits_f64(GCVM_SHIFT64)) << 52);
    const npy_int64 yn = b < 0x7ff0000000000000LL ? b : 0x7ff0000000000000LL;
    /* a subnormal result: p * 2^(n+1074) (in [2^-3, 2^52), exact: its bits are
       b + (1074 << 52)) is rounded once to an integer m by adding 2^52, and m is the bits
       of m * 2^-1074. No floating-point operation underflows or reads a subnormal (either
       takes a microcode assist, ~100 cycles): the normal lanes add 2^52 to 2^52 (b capped
       at 2^-1022's bits; gcc computes the sum on every lane), so their m is 2^-1022's
       bits, at most yn. A subnormal lane's m is above its b (negative, or p * 2^n's
       fraction bits: (v - 1) * 2^52 against m = v * 2^51 rounded, v in [1, 2)), so the
       larger of m and yn is the result on every lane: one integer max, not a compare and
       a blend (the same bits; the fused exp/tanh loop 0.94-0.96x the time) */
    const npy_int64 bs = b < 0x0010000000000000LL ? b : 0x0010000000000000LL;
    const double t = gcvm_double(bs + (1074LL << 52)) + 0x1p52;
    const npy_int64 m = gcvm_bits_f64(t) - gcvm_bits_f64(0x1p52);
    const npy_int64 y = m > yn ? m : yn;
    /* a NaN comes out quiet (its quiet bit set, as an arithmetic operation sets it) */
    return x != x ? gcvm_double(gcvm_bits_f64(x) | 0x0008000000000000LL) : gcvm_double(y);
}

/* expm1 for x in [-60, 710] (no special values; +inf past 709.78); garbage outside. */
static inline double gcvm_expm1_core_f64(double x) {
    double rc;
    npy_int64 n;
    const double r = gcvm_reduce_f64(x, &n, &rc);
    const double tail = fma(r * r, gcvm_q_f64(r), rc);
    const npy_int64 m = n > 1023 ? 1023 : n;
    const double s = gcvm_double((m + 1023) << 52);
    const double y = fma(s, tail, fma(s, r, s - 1.0));
    return n > 1023 ? y * 2.0 : y;
}

static inline double gc_vm_expm1_npy_float64(double x) {
    /* the core on x clamped where expm1 is +inf (its last product overflows) or rounds
       to -1 (no underflowing scale factor), so no select of the result */
    const double y = gcvm_expm1_core_f64(gcvm_clamp_f64(x, -60.0, 710.0));
    /* keeps -0.0 and the subnormals exact, and a NaN (unordered: one compare) */
    return !(fabs(x) >= 0x1p-54) ? x : y;
}

/* log(1+f) - f + f*f/2 ... : the log's polynomial part, P(z) for z = s*s (Horner) */
static inline double gcvm_p_f64(double z) {
    double p = fma(0x1.2b5900de53b32p-3, z, 0x1.39fe51a7c18f9p-3);
    p = fma(p, z, 0x1.7462b51cb66b1p-3);
    p = fma(p, z, 0x1.c71c62e3f11e6p-3);
    p = fma(p, z, 0x1.2492492df281ap-2);
    p = fma(p, z, 0x1.99999999952d7p-2);
    return fma(p, z, 0x1.5555555555558p-1);
}

/* k*ln2 + log(1+f) + c, f in [sqrt(2)/2 - 1, sqrt(2) - 1] (fdlibm's summation order) */
static inline double gcvm_log_sum_f64(double dk, double f, double c) {
    const double s = f / (2.0 + f);
    const double z = s * s;
    const double hfsq = 0.5 * f * f;
    const double w = fma(s, fma(z, gcvm_p_f64(z), hfsq), fma(dk, GCVM_LN2LO64, c));
    return fma(dk, GCVM_LN2HI64, -((hfsq - w) - f));
}

/* x = 2^k * m, m in [sqrt(2)/2, sqrt(2)), for positive normal x */
static inline double gcvm_split_f64(double x, npy_int64 *k) {
    const npy_int64 t = gcvm_bits_f64(x) - 0x3fe6a09e667f3bcdLL;
    *k = t >> 52;
    return gcvm_double((t & 0x000fffffffffffffLL) + 0x3fe6a09e667f3bcdLL);
}

static inline double gc_vm_log_npy_float64(double x) {
    /* Only constants and variables are selected: gcc does not if-convert a
       floating-point operation (it may trap) that one arm of a ?: would evaluate. */
    const int sub = x < 0x1p-1022;
    npy_int64 k;
    const double m = gcvm_split_f64(x * (sub ? 0x1p54 : 1.0), &k);
    double y = gcvm_log_sum_f64((double)(k - (sub ? 54 : 0)), m - 1.0, 0.0);
    y = x == INFINITY ? x : y;
    y = x == 0.0 ? -INFINITY : y;
    y = x < 0.0 ? NAN : y;
    return x != x ? x : y;
}

/* log1p for finite x > -1 (no special values) */
static inline double gcvm_log1p_core_f64(double x) {
    const double u = 1.0 + x;
    npy_int64 k;
    const double m = gcvm_split_f64(u, &k);
    /* the part of x that 1 + x rounded away: x - (u - 1) for x < 1, 1 - (u - x) else
       (both exact), relative to u */
    const double c = ((x < 1.0 ? x : 1.0) - (u - (x < 1.0 ? 1.0 : x))) / u;
    /* x in (sqrt(2)/2 - 1, sqrt(2) - 1): log(1+f) with f = x itself, k = 0, c = 0 (one
       compare: gcc vectorizes selects on one mask more reliably than on a & of two) */
    const int small = fabs(x - 0x1.f0ed99bed9b2ep-5) < 0x1.6a09e667f3bcdp-2;
    return gcvm_log_sum_f64(small ? 0.0 : (double)k, small ? x : m - 1.0, small ? 0.0 : c);
}

static inline double gc_vm_log1p_npy_float64(double x) {
    const double y = gcvm_log1p_core_f64(x);
    double r = x == INFINITY ? x : y;
    r = x == -1.0 ? -INFINITY : r;
    r = x < -1.0 ? NAN : r;
    r = x != x ? x : r;
    return fabs(x) < 0x1p-54 ? x : r;
}

static inline double gc_vm_tanh_npy_float64(double x) {
    const double ax = fabs(x);
    const double h = ax > 22.0 ? 22.0 : ax; /* tanh rounds to 1 past 22; NaN passes */
    double rc;
    npy_int64 n;
    /* a = 2h reduced without the product 2*h: r and rc are half of a's (n in [0, 64]),
       and the factor 2 goes into s2 = 2s and Q's constants, the same bits as before (one
       multiply fewer: the fused exp/tanh loop 0.98x the time) */
    const double r = gcvm_reduce_w_f64(h, 2.0, &n, &rc);
    const double s = gcvm_double((n + 1023) << 52), s2 = gcvm_double((n + 1024) << 52);
    /* e = expm1(a) = (s - 1) + s*(2r) + s*((2r)^2 Q(2r) + 2rc), the rounding error of the
       first sum (tl) carried into the second: e is rounded once */
    const double t = fma(s2, r, s - 1.0);
    const double tl = fma(s2, r, (s - 1.0) - t);
    const double u = fma(s2, fma(r * r, gcvm_qs_f64(r, 2.0, 2.0), rc), tl);
    const double e = t + u, el = u - (e - t); /* e + el: expm1(a), e without its rounding */
    /* tanh = (e + el) / (e + el + 2): the sum as d + dl, the quotient q = e * (1/d)
       corrected by its residual (e + el) - q*(d + dl): rounding errors of the sum, the
       reciprocal and the product do not add up */
    const double d = e + 2.0;
    const double dl = (e - (d - 2.0)) + el; /* exact for e <= 2; past that (tanh > 0.76)
                                               an error small enough for a correction */
    const double w = 1.0 / d;
    const double q = e * w;
    const double res = fma(-q, dl, fma(-q, d, e) + el);
    return copysign(fma(res, w, q), x);
}

/* c ? +0 : v, as bits: gcc turns a floating-point select into a select of the operations
   that read it (1 + (c ? 0 : v) -> c ? 1 : 1 + v), which would read a subnormal v */
static inline double gcvm_zero_if_f64(int c, double v) {
    return gcvm_double(gcvm_bits_f64(v) & (c ? 0LL : -1LL));
}

/* e = exp(-|x|) small enough that 1 + e rounds to 1 and log1p(e) to e (|x| > 38: e below
   2^-54): sigmoid is e (x < 0) or 1, softplus x (x > 0) or e. There the division, the sum
   and log1p get 0 instead of e: gcc computes every arm, and an operation reading a
   subnormal e takes a microcode assist (5-7x the time) or log1p's e*e underflows */
GCVM_INLINE double gc_vm_sigmoid_npy_float64(double x) {
    const double e = gc_vm_exp_npy_float64(-fabs(x));
    const int tiny = fabs(x) > 38.0; /* a compare off exp's path */
    const double num = x >= 0.0 ? 1.0 : e; /* selects of variables: gcc if-converts */
    const double q = (tiny ? 1.0 : num) / (1.0 + gcvm_zero_if_f64(tiny, e));
    return tiny ? num : q;
}

GCVM_INLINE double gc_vm_softplus_npy_float64(double x) {
    const double e = gc_vm_exp_npy_float64(-fabs(x));
    const int tiny = fabs(x) > 38.0;
    const double xp = x > 0.0 ? x : 0.0, r = x > 0.0 ? x : e;
    const double y = xp + gcvm_log1p_core_f64(gcvm_zero_if_f64(tiny, e));
    return tiny ? r : y;
}
"""

_F32 = r"""
/* ---- graphc vector math, float (graphc/linker/c/vecmath.py) ---- */
static inline npy_int32 gcvm_bits_f32(float x) { npy_int32 i; memcpy(&i, &x, 4); return i; }
static inline float gcvm_float(npy_int32 i) { float x; memcpy(&x, &i, 4); return x; }
static inline float gcvm_clamp_f32(float x, float lo, float hi) { /* as in double */
    const npy_int32 b = gcvm_bits_f32(x), bh = gcvm_bits_f32(hi);
    const npy_uint32 u = (npy_uint32)(b < bh ? b : bh), ul = (npy_uint32)gcvm_bits_f32(lo);
    return gcvm_float((npy_int32)(u < ul ? u : ul));
}
#define GCVM_SHIFT32 0x1.8p23f
#define GCVM_LN2HI32 0x1.62e4p-1f /* n * LN2HI is exact for |n| < 2^10 */
#define GCVM_LN2LO32 0x1.7f7d1cp-20f

static inline float gcvm_q_f32(float r) {
    const float r2 = r * r;
    const float p01 = fmaf(0x1.5554dep-3f, r, 0x1p-1f);
    const float p23 = fmaf(0x1.120b62p-7f, r, 0x1.55551ap-5f);
    return fmaf(fmaf(0x1.6d10fcp-10f, r2, p23), r2, p01);
}

static inline float gcvm_reduce_f32(float x, npy_int32 *n, float *rc) {
    float k = fmaf(x, 0x1.715476p+0f, GCVM_SHIFT32);
    *n = gcvm_bits_f32(k) - gcvm_bits_f32(GCVM_SHIFT32);
    k -= GCVM_SHIFT32;
    const float rh = fmaf(-k, GCVM_LN2HI32, x);
    const float r = fmaf(-k, GCVM_LN2LO32, rh);
    *rc = fmaf(-k, GCVM_LN2LO32, rh - r);
    return r;
}

static inline float gc_vm_exp_npy_float32(float x) {
    float rc;
    npy_int32 n;
    /* as in double: n in [-150, 128] */
    const float xc = gcvm_clamp_f32(x, -104.0f, 89.0f);
    const float r = gcvm_reduce_f32(xc, &n, &rc);
    const float p = 1.0f + (r + fmaf(r * r, gcvm_q_f32(r), rc));
    const npy_int32 b = gcvm_bits_f32(p) + ((n + gcvm_bits_f32(GCVM_SHIFT32)) << 23);
    const npy_int32 yn = b < 0x7f800000 ? b : 0x7f800000;
    const npy_int32 bs = b < 0x00800000 ? b : 0x00800000;
    const float t = gcvm_float(bs + (149 << 23)) + 0x1p23f;
    const npy_int32 m = gcvm_bits_f32(t) - gcvm_bits_f32(0x1p23f);
    const npy_int32 y = m > yn ? m : yn;
    /* a NaN comes out quiet (its quiet bit set, as an arithmetic operation sets it) */
    return x != x ? gcvm_float(gcvm_bits_f32(x) | 0x00400000) : gcvm_float(y);
}

static inline float gcvm_expm1_core_f32(float x) {
    float rc;
    npy_int32 n;
    const float r = gcvm_reduce_f32(x, &n, &rc);
    const float tail = fmaf(r * r, gcvm_q_f32(r), rc);
    const npy_int32 m = n > 127 ? 127 : n;
    const float s = gcvm_float((m + 127) << 23);
    const float y = fmaf(s, tail, fmaf(s, r, s - 1.0f));
    return n > 127 ? y * 2.0f : y;
}

static inline float gc_vm_expm1_npy_float32(float x) {
    const float y = gcvm_expm1_core_f32(gcvm_clamp_f32(x, -30.0f, 89.0f)); /* as in double */
    return !(fabsf(x) >= 0x1p-25f) ? x : y;
}

static inline float gcvm_log_sum_f32(float dk, float f, float c) {
    const float s = f / (2.0f + f);
    const float z = s * s;
    const float hfsq = 0.5f * f * f;
    const float p = fmaf(fmaf(0x1.2ee656p-2f, z, 0x1.997c2ep-2f), z, 0x1.55555cp-1f);
    const float w = fmaf(s, fmaf(z, p, hfsq), fmaf(dk, GCVM_LN2LO32, c));
    return fmaf(dk, GCVM_LN2HI32, -((hfsq - w) - f));
}

static inline float gcvm_split_f32(float x, npy_int32 *k) {
    const npy_int32 t = gcvm_bits_f32(x) - 0x3f3504f3;
    *k = t >> 23;
    return gcvm_float((t & 0x007fffff) + 0x3f3504f3);
}

static inline float gc_vm_log_npy_float32(float x) {
    const int sub = x < 0x1p-126f;
    npy_int32 k;
    const float m = gcvm_split_f32(x * (sub ? 0x1p25f : 1.0f), &k);
    float y = gcvm_log_sum_f32((float)(k - (sub ? 25 : 0)), m - 1.0f, 0.0f);
    y = x == INFINITY ? x : y;
    y = x == 0.0f ? -INFINITY : y;
    y = x < 0.0f ? NAN : y;
    return x != x ? x : y;
}

static inline float gcvm_log1p_core_f32(float x) {
    const float u = 1.0f + x;
    npy_int32 k;
    const float m = gcvm_split_f32(u, &k);
    const float c = ((x < 1.0f ? x : 1.0f) - (u - (x < 1.0f ? 1.0f : x))) / u;
    const int small = fabsf(x - 0x1.f0ed9ap-5f) < 0x1.6a09e6p-2f;
    return gcvm_log_sum_f32(small ? 0.0f : (float)k, small ? x : m - 1.0f, small ? 0.0f : c);
}

static inline float gc_vm_log1p_npy_float32(float x) {
    const float y = gcvm_log1p_core_f32(x);
    float r = x == INFINITY ? x : y;
    r = x == -1.0f ? -INFINITY : r;
    r = x < -1.0f ? NAN : r;
    r = x != x ? x : r;
    return fabsf(x) < 0x1p-25f ? x : r;
}

static inline float gc_vm_tanh_npy_float32(float x) {
    const float ax = fabsf(x);
    const float a = 2.0f * (ax > 10.0f ? 10.0f : ax);
    float rc;
    npy_int32 n;
    const float r = gcvm_reduce_f32(a, &n, &rc); /* n in [0, 29] */
    const float s = gcvm_float((n + 127) << 23);
    /* e = expm1(a) = (s - 1) + s*r + s*r*r*Q(r), without double's corrections (the
       reduction's rounding error rc, the first sum's): in float they moved the largest
       error over every third float in [0.18, 10.5] from 2.15 to 2.24 ulp, and the
       largest of all (2.5, near 0.06, where n = 0) is where both are 0; 32 instructions
       per 16 floats instead of 43 */
    const float t = fmaf(s, r, s - 1.0f);
    const float e = fmaf(s, r * r * gcvm_q_f32(r), t);
    /* one division, without double's correction of the quotient: here it would cost as
       much per vector as in double for twice the lanes (tanh 1.6x slower) */
    return copysignf(e / (e + 2.0f), x);
}

static inline float gcvm_zero_if_f32(int c, float v) {
    return gcvm_float(gcvm_bits_f32(v) & (c ? 0 : -1));
}

/* as in double, for |x| > 18.5 (e below 2^-26) */
GCVM_INLINE float gc_vm_sigmoid_npy_float32(float x) {
    const float e = gc_vm_exp_npy_float32(-fabsf(x));
    const int tiny = fabsf(x) > 18.5f;
    const float num = x >= 0.0f ? 1.0f : e;
    const float q = (tiny ? 1.0f : num) / (1.0f + gcvm_zero_if_f32(tiny, e));
    return tiny ? num : q;
}

GCVM_INLINE float gc_vm_softplus_npy_float32(float x) {
    const float e = gc_vm_exp_npy_float32(-fabsf(x));
    const int tiny = fabsf(x) > 18.5f;
    const float xp = x > 0.0f ? x : 0.0f, r = x > 0.0f ? x : e;
    const float y = xp + gcvm_log1p_core_f32(gcvm_zero_if_f32(tiny, e));
    return tiny ? r : y;
}
"""

VECTOR_MATH = r"""
/* ---- exp and tanh on one AVX-512 vector (graphc/linker/c/vecmath.py) ----
   The scalar forms above, step for step, with the instructions gcc does not emit from
   them: a float min/max clamp that keeps a NaN (vmaxps/vminps return their second operand
   when one is a NaN), and vscalef for the scale by 2^n, which rounds a subnormal result
   once, as the scalar form's integer path does. The same bits (every float input, 10^9
   random doubles and the edge ranges). vector_code.py's kernels call them; exp only on
   CPUs that write a subnormal result (vscalef's) at full speed. */
#ifdef __AVX512F__
#include <immintrin.h>
#define GCV_F32(v) _mm512_set1_ps(v)
#define GCV_SIGN32 _mm512_set1_epi32((int)0x80000000u)
static inline __m512 gcv16_neg_f32(__m512 x) { /* the sign bit flipped, as C's -x */
    return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(x), GCV_SIGN32));
}

static inline __m512 gcv_q_f32(__m512 r) {
    const __m512 r2 = _mm512_mul_ps(r, r);
    const __m512 p01 = _mm512_fmadd_ps(GCV_F32(0x1.5554dep-3f), r, GCV_F32(0x1p-1f));
    const __m512 p23 = _mm512_fmadd_ps(GCV_F32(0x1.120b62p-7f), r, GCV_F32(0x1.55551ap-5f));
    return _mm512_fmadd_ps(_mm512_fmadd_ps(GCV_F32(0x1.6d10fcp-10f), r2, p23), r2, p01);
}

/* k = round(x / ln2) as a float, and r = x - k*ln2 (rh: its first step) */
static inline __m512 gcv_reduce_f32(__m512 x, __m512 *k, __m512 *rh) {
    const __m512 s = _mm512_fmadd_ps(x, GCV_F32(0x1.715476p+0f), GCV_F32(GCVM_SHIFT32));
    *k = _mm512_sub_ps(s, GCV_F32(GCVM_SHIFT32));
    *rh = _mm512_fnmadd_ps(*k, GCV_F32(GCVM_LN2HI32), x);
    return _mm512_fnmadd_ps(*k, GCV_F32(GCVM_LN2LO32), *rh);
}

static inline __m512 gcv16_exp_f32(__m512 x) {
    __m512 k, rh;
    const __m512 xc = _mm512_min_ps(GCV_F32(89.0f), _mm512_max_ps(GCV_F32(-104.0f), x));
    const __m512 r = gcv_reduce_f32(xc, &k, &rh);
    const __m512 rc = _mm512_fnmadd_ps(k, GCV_F32(GCVM_LN2LO32), _mm512_sub_ps(rh, r));
    const __m512 tail = _mm512_fmadd_ps(_mm512_mul_ps(r, r), gcv_q_f32(r), rc);
    const __m512 p = _mm512_add_ps(GCV_F32(1.0f), _mm512_add_ps(r, tail));
    return _mm512_scalef_ps(p, k);
}

static inline __m512 gcv16_tanh_f32(__m512 x) {
    __m512 k, rh;
    const __m512 a = _mm512_mul_ps(GCV_F32(2.0f), _mm512_min_ps(GCV_F32(10.0f), _mm512_abs_ps(x)));
    const __m512 r = gcv_reduce_f32(a, &k, &rh);
    const __m512 s = _mm512_scalef_ps(GCV_F32(1.0f), k);
    const __m512 t = _mm512_fmadd_ps(s, r, _mm512_sub_ps(s, GCV_F32(1.0f)));
    const __m512 e = _mm512_fmadd_ps(s, _mm512_mul_ps(_mm512_mul_ps(r, r), gcv_q_f32(r)), t);
    const __m512i q = _mm512_castps_si512(_mm512_div_ps(e, _mm512_add_ps(e, GCV_F32(2.0f))));
    /* copysign: x's bit where the sign bit is, else q's */
    return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(q, _mm512_castps_si512(x), GCV_SIGN32,
                                                         0xd8));
}

/* ---- double exp and tanh on 8 lanes, as the float ones above ---- */
#define GCV_F64(v) _mm512_set1_pd(v)
#define GCV_SIGN64 _mm512_set1_epi64((long long)0x8000000000000000ull)
static inline __m512d gcv8_neg_f64(__m512d x) {
    return _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(x), GCV_SIGN64));
}

static inline __m512d gcv_qs_f64(__m512d r, double h, double g) { /* gcvm_qs_f64 */
    const double h2 = h * h, h4 = h2 * h2, h6 = h4 * h2, h8 = h4 * h4;
    const __m512d z = _mm512_mul_pd(r, r);
    __m512d e = _mm512_fmadd_pd(GCV_F64(0x1.28917c9f3a495p-22 * g * h8), z,
                                GCV_F64(0x1.a019b914881bap-16 * g * h6));
    __m512d o = _mm512_fmadd_pd(GCV_F64(0x1.af389eea54156p-26 * g * h8 * h), z,
                                GCV_F64(0x1.71de0db2eb873p-19 * g * h6 * h));
    e = _mm512_fmadd_pd(e, z, GCV_F64(0x1.6c16c17889f3cp-10 * g * h4));
    o = _mm512_fmadd_pd(o, z, GCV_F64(0x1.a01a01a7c2f2cp-13 * g * h4 * h));
    e = _mm512_fmadd_pd(e, z, GCV_F64(0x1.5555555553d68p-5 * g * h2));
    o = _mm512_fmadd_pd(o, z, GCV_F64(0x1.11111111109b5p-7 * g * h2 * h));
    e = _mm512_fmadd_pd(e, z, GCV_F64(0x1.0000000000001p-1 * g));
    o = _mm512_fmadd_pd(o, z, GCV_F64(0x1.5555555555556p-3 * g * h));
    return _mm512_fmadd_pd(o, r, e);
}

static inline __m512d gcv_reduce_w_f64(__m512d x, double w, __m512d *k, __m512d *rc) {
    const __m512d s = _mm512_fmadd_pd(x, GCV_F64(0x1.71547652b82fep+0 * w),
                                      GCV_F64(GCVM_SHIFT64));
    *k = _mm512_sub_pd(s, GCV_F64(GCVM_SHIFT64));
    const __m512d rh = _mm512_fnmadd_pd(*k, GCV_F64(GCVM_LN2HI64 / w), x);
    const __m512d r = _mm512_fnmadd_pd(*k, GCV_F64(GCVM_LN2LO64 / w), rh);
    *rc = _mm512_fnmadd_pd(*k, GCV_F64(GCVM_LN2LO64 / w), _mm512_sub_pd(rh, r));
    return r;
}

static inline __m512d gcv8_exp_f64(__m512d x) {
    __m512d k, rc;
    const __m512d xc = _mm512_min_pd(GCV_F64(710.0), _mm512_max_pd(GCV_F64(-746.0), x));
    const __m512d r = gcv_reduce_w_f64(xc, 1.0, &k, &rc);
    const __m512d tail = _mm512_fmadd_pd(_mm512_mul_pd(r, r), gcv_qs_f64(r, 1.0, 1.0), rc);
    const __m512d p = _mm512_add_pd(GCV_F64(1.0), _mm512_add_pd(r, tail));
    return _mm512_scalef_pd(p, k);
}

static inline __m512d gcv8_tanh_f64(__m512d x) { /* gc_vm_tanh_npy_float64, step for step */
    __m512d k, rc;
    const __m512d h = _mm512_min_pd(GCV_F64(22.0), _mm512_abs_pd(x));
    const __m512d r = gcv_reduce_w_f64(h, 2.0, &k, &rc);
    /* s = 2^n and s2 = 2s (exact), as the scalar form's (its exponent-bit arithmetic made
       the fused exp/tanh loop 1.06-1.07x slower, a second vscalefpd 1.03-1.05x) */
    const __m512d s = _mm512_scalef_pd(GCV_F64(1.0), k), s2 = _mm512_add_pd(s, s);
    const __m512d sm1 = _mm512_sub_pd(s, GCV_F64(1.0));
    const __m512d t = _mm512_fmadd_pd(s2, r, sm1);
    const __m512d tl = _mm512_fmadd_pd(s2, r, _mm512_sub_pd(sm1, t));
    const __m512d qr = _mm512_fmadd_pd(_mm512_mul_pd(r, r), gcv_qs_f64(r, 2.0, 2.0), rc);
    const __m512d u = _mm512_fmadd_pd(s2, qr, tl);
    const __m512d e = _mm512_add_pd(t, u), el = _mm512_sub_pd(u, _mm512_sub_pd(e, t));
    const __m512d d = _mm512_add_pd(e, GCV_F64(2.0));
    const __m512d dl = _mm512_add_pd(_mm512_sub_pd(e, _mm512_sub_pd(d, GCV_F64(2.0))), el);
    const __m512d w = _mm512_div_pd(GCV_F64(1.0), d);
    const __m512d q = _mm512_mul_pd(e, w);
    const __m512d res = _mm512_fnmadd_pd(q, dl, _mm512_add_pd(_mm512_fnmadd_pd(q, d, e), el));
    const __m512i y = _mm512_castpd_si512(_mm512_fmadd_pd(res, w, q));
    return _mm512_castsi512_pd(_mm512_ternarylogic_epi64(y, _mm512_castpd_si512(x), GCV_SIGN64,
                                                         0xd8)); /* copysign */
}
#endif
"""
"""The AVX-512 forms: support code of the kernels with vector code (``vector_code.py``)
only, since ``<immintrin.h>`` adds 0.15 s to the compile of a module."""

# Out-of-line twins: ``#pragma omp declare simd`` makes gcc compile one SIMD clone of each
# (called per vector from the loop) instead of inlining the function at every use.
_OUT_OF_LINE = "".join(
    f"#pragma omp declare simd notinbranch\n__attribute__((noinline)) static {c} "
    f"gc_vmo_{fn}_{ct}({c} x) {{ return gc_vm_{fn}_{ct}(x); }}\n"
    for ct, c in (("npy_float64", "double"), ("npy_float32", "float"))
    for fn in FUNCTIONS
)

VECMATH = _F64 + _F32 + _OUT_OF_LINE
"""The C definitions (support code of every element-wise kernel)."""

INLINE_CALLS = 8
"""A node's kernels (contiguous and strided loop) with more vector-math calls than this call
the out-of-line SIMD clones: inlining the 33 ``tanh`` of a long fused chain made its C
compile 40% slower, while out-of-line calls cost a kernel ~10%."""

_CALL = re.compile(r"\bgc_vm_(?=\w+\()")


_FLOPS_CALL = re.compile(r"\bgc_vm_(\w+)_npy_(float64|float32)\(")


def vector_math_flops(code: str) -> float:
    """The floating-point operations (:data:`FLOPS`) of the vector-math calls in C text
    ``code``: a kernel body's per element."""
    return sum(FLOPS[ct][fn] for fn, ct in _FLOPS_CALL.findall(code))


def stays_inline(kernel: str) -> bool:
    """Whether :func:`calls_bounded` leaves ``kernel``'s vector-math calls inline."""
    return len(_CALL.findall(kernel)) <= INLINE_CALLS


def calls_bounded(kernel: str, strided_from: int | None = None) -> str:
    """``kernel`` (C text), its vector-math calls made out of line when there are more than
    ``INLINE_CALLS`` of them; from ``strided_from`` on (the strided loop, which is not
    vectorized) always out of line, so each function is inlined once per node at most."""
    if not stays_inline(kernel):
        return _CALL.sub("gc_vmo_", kernel)
    if strided_from is None:
        return kernel
    return kernel[:strided_from] + _CALL.sub("gc_vmo_", kernel[strided_from:])


FLOPS: dict[str, dict[str, float]] = {
    "float64": {"exp": 34, "expm1": 37, "log": 30, "log1p": 33,
                "tanh": 55, "sigmoid": 36, "softplus": 68},
    "float32": {"exp": 24, "expm1": 27, "log": 22, "log1p": 25,
                "tanh": 25, "sigmoid": 26, "softplus": 50},
}  # fmt: skip
"""dtype -> function -> floating-point operations per element, as a roofline counts
executed operations (add, sub, mul, div, min, max 1, fma 2; compares, selects,
conversions and bit operations 0), counted in each function's AVX-512 SIMD clone by
``scripts/vecmath_flops.py`` (which prints this table); ``tests/test_vecmath_flops.py``
recounts and fails when it is stale. The benchmarks' roofline shares divide by it."""
