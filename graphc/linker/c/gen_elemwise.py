"""C thunks for Elemwise.

Numpy broadcasting checked at run time, any strides (negative, zero), in-place outputs,
output buffers reused when the slot's previous array is free. Each node gets two kernels
over one run of elements: a contiguous one (``#pragma omp simd``: exp, log, tanh, sigmoid,
... are graphc's inline vector math, ``vecmath.py``; other functions call libmvec's SIMD
variants; AVX-512 intrinsics where the CPU has them and ``vector_code`` covers the body)
and a strided one. The shared driver ``gc_ew_loop``
(``elemwise_driver.c``) collapses dimensions and picks the kernel per run; zero-stride
(broadcast) operands of an otherwise contiguous run are expanded into a small block buffer
so the contiguous kernel still applies.

The thunk body is built in steps: declarations, input checks, in-place checks, operands,
outputs, then the loop call and the cleanup.

A multi-output loop (a multi-output Composite) gives each output the broadcast shape of the
inputs it reads. When one is smaller than the loop (an axis of unknown size is 1 at run
time), or the inputs do not broadcast together (they meet only in different outputs), the
thunk runs one loop per output over that output's own shape: the inputs it does not read
point at zeros and the other outputs at a sink, all through zero strides. ``ElemwiseSums``
is the same loop with accumulator operands (zero strides too): each kernel call sums its
run in registers and adds that to the accumulator once (atomically when OpenMP splits the
loop).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from graphc.graph.basic import Apply
from graphc.linker.c.common import c_string, ctype, typenum
from graphc.linker.c.elemwise_support import SUPPORT, _hash, _store
from graphc.linker.c.registry import CThunkCode, register_c
from graphc.linker.c.vecmath import VECTOR_MATH, calls_bounded, stays_inline, vector_math_flops
from graphc.linker.c.vector_code import VectorCode, vector_code
from graphc.scalar.basic import Composite, ScalarOp
from graphc.scalar.c_code import c_expr, c_support, composite_c_body
from graphc.tensor.elemwise import Elemwise
from graphc.tensor.math import ElemwiseSums


def elemwise_exprs(
    op: ScalarOp, names: Sequence[str], in_dtypes: Sequence[str], out_dtypes: Sequence[str]
) -> tuple[list[str], list[str]] | None:
    """Statements and output expressions of a scalar Op over element names, or None."""
    if isinstance(op, Composite):
        return composite_c_body(op, names)
    if len(out_dtypes) != 1:
        return None
    e = c_expr(op, list(names), list(in_dtypes), out_dtypes[0])
    return None if e is None else ([], [e])


def scalar_code(
    op: ScalarOp, in_dt: Sequence[str], out_dt: Sequence[str]
) -> tuple[list[str], list[str]] | None:
    """``elemwise_exprs`` over the elements ``x0, x1...``, or None when ``op`` has no C."""
    names = [f"x{k}" for k in range(len(in_dt))]
    try:
        return elemwise_exprs(op, names, in_dt, out_dt)
    except (NotImplementedError, ValueError, TypeError):
        return None


BLOCK_BYTES = 256
"""Bytes of the widest operand per block of a blocked kernel (four 512-bit vectors): see
:func:`_blocked_kernel`."""

BLOCKED_FLOPS = 45
"""Vector-math flops per element (``vecmath.FLOPS``) from which a kernel is blocked.
Measured in cache (32768 doubles, 65536 floats): double tanh (56 flops) 0.85-0.95x the
time, softplus 0.76-0.86x, exp and tanh fused (49 in float) 0.86-0.93x; the shorter
functions alone (exp, expm1, log, log1p, sigmoid: 24-37 flops) 0.85-1.2x, mostly slower."""


def _kernels(
    in_dt: list[str],
    out_dt: list[str],
    lines: list[str],
    outs: list[str],
    sums: Sequence[tuple[str, str]] = (),
    inplace: bool = False,
    vector: VectorCode | None = None,
) -> str:
    """NAME_c (contiguous run, vectorized) and NAME_s (strided run) of one node; ``sums``
    are ``(expression, dtype)`` accumulated into the operands after the outputs;
    ``inplace``: an output is written over an input; ``vector``: the body's AVX-512 code
    (``vector_code``), which NAME_c (or a blocked one's blocks) runs where the CPU has
    AVX-512, or None."""
    nin, nk = len(in_dt), len(out_dt)
    # Base pointers are loaded once, before the loop: read inside it (where a store through
    # an output could, for the compiler, change p[] itself) they become gathers/scatters.
    bases_c = [f"const {ctype(d)} *q{k} = (const {ctype(d)} *)p[{k}];" for k, d in enumerate(in_dt)]
    bases_c += [
        f"{ctype(d)} *q{nin + k} = ({ctype(d)} *)p[{nin + k}];" for k, d in enumerate(out_dt)
    ]
    reads_c = [f"const {ctype(d)} x{k} = q{k}[i];" for k, d in enumerate(in_dt)]
    reads_s = [
        f"const {ctype(d)} x{k} = *(const {ctype(d)} *)(p[{k}] + i * s[{k}]);"
        for k, d in enumerate(in_dt)
    ]
    writes_c = [f"q{nin + k}[i] = {_store(e, d)};" for k, (e, d) in enumerate(zip(outs, out_dt))]
    writes_s = [
        f"*({ctype(d)} *)(p[{nin + k}] + i * s[{nin + k}]) = {_store(e, d)};"
        for k, (e, d) in enumerate(zip(outs, out_dt))
    ]
    # sums accumulate in double whatever their dtype (Theano's acc_dtype of float32)
    accs = [f"a{j} += (npy_float64)(({ctype(d)})({e}));" for j, (e, d) in enumerate(sums)]
    init = "".join(f"    npy_float64 a{j} = 0;\n" for j in range(len(sums)))
    fin = "".join(
        f"#pragma omp atomic\n    *(npy_float64 *)p[{nin + nk + j}] += a{j};\n"
        for j in range(len(sums))
    )
    red = f" reduction(+:{','.join(f'a{j}' for j in range(len(sums)))})" if sums else ""
    # Outputs are written after all inputs of the element are read (in-place safe).
    inner_c = "\n        ".join([*reads_c, *lines, *writes_c, *accs])
    inner_s = "\n        ".join([*reads_s, *lines, *writes_s, *accs])

    def plain(head: str, start: str) -> str:
        loop = f"    for (npy_intp i = {start}; i < n; i++) {{\n        {inner_c}\n    }}\n"
        bases = "".join(f"    {b}\n" for b in bases_c)
        return f"{head} {{\n{bases}{init}#pragma omp simd{red}\n{loop}{fin}}}\n"

    contiguous = plain("static void NAME_c(npy_intp n, char **p)", "0")
    strided = (
        "static void NAME_s(npy_intp n, char **p, const npy_intp *s) {\n"
        + init
        + "    for (npy_intp i = 0; i < n; i++) {\n"
        f"        {inner_s}\n"
        "    }\n" + fin + "}\n"
    )
    if vector_math_flops(inner_c) >= BLOCKED_FLOPS and stays_inline(contiguous + strided):
        # inline as the plain kernel would be: the blocked one repeats the body
        tail = plain("GCVM_NOINLINE void NAME_t(npy_intp i0, npy_intp n, char **p)", "i0")
        body = (in_dt, out_dt, lines, outs, sums)
        blocked = _blocked_kernel(*body, bases_c, init, fin, red, not inplace, vector)
        return tail + blocked + calls_bounded(strided, strided_from=0)
    if vector is not None and not sums and stays_inline(contiguous + strided):
        vectors = _vector_kernel(bases_c, nin, vector)
        contiguous = f"#ifdef __AVX512F__\n{vectors}#else\n{contiguous}#endif\n"
    return calls_bounded(contiguous + strided, strided_from=len(contiguous))


def _vector_kernel(bases: list[str], nin: int, vector: VectorCode) -> str:
    """NAME_c running the body's ``vector`` code (``vector_code``) one vector at a time,
    the last partial vector through masked loads and stores (which touch no other byte)."""
    v, lines, outs = vector

    def step(masked: bool) -> list[str]:
        """One vector's statements, its lanes under the mask ``m`` if ``masked``."""
        load = f"{v.op('maskz_loadu')}(m, " if masked else f"{v.op('loadu')}("
        store, mask = (v.op("mask_storeu"), ", m") if masked else (v.op("storeu"), "")
        return [
            *(f"const {v.ctype} x{k} = {load}q{k} + i);" for k in range(nin)),
            *lines,
            *(f"{store}(q{nin + k} + i{mask}, {e});" for k, e in enumerate(outs)),
        ]

    body = [
        "static void NAME_c(npy_intp n, char **p) {",
        *(f"    {b}" for b in bases),
        "    npy_intp i = 0;",
        f"    for (; i + {v.lanes} <= n; i += {v.lanes}) {{",
        *(f"        {c}" for c in step(False)),
        "    }",
        "    if (i < n) {",
        f"        const {v.mask} m = ({v.mask})((1u << (n - i)) - 1);",
        *(f"        {c}" for c in step(True)),
        "    }",
        "}",
    ]
    return "\n".join(body) + "\n"


def _block_function(
    name: str,
    size: int,
    in_dt: list[str],
    out_dt: list[str],
    lines: list[str],
    outs: list[str],
    sums: Sequence[tuple[str, str]],
    apart: bool,
    vector: VectorCode | None = None,
) -> list[str]:
    """``name``: ``size`` elements computed, then stored (and the sums' terms written to
    ``u0, u1...``): computed into local arrays first, or, where the outputs are ``apart``
    from the inputs, stored directly through ``restrict`` pointers, by the body's
    ``vector`` code (``vector_code.py``) where the CPU has AVX-512 and there are no sums."""
    params = [f"const {ctype(d)} *b{k}" for k, d in enumerate(in_dt)]
    params += [f"{ctype(d)} *o{k}" for k, d in enumerate(out_dt)]
    params += [f"npy_float64 *u{j}" for j in range(len(sums))]
    terms = [f"u{j}[j] = (npy_float64)(({ctype(d)})({e}));" for j, (e, d) in enumerate(sums)]
    loop = [
        "#pragma omp simd",
        f"    for (npy_intp j = 0; j < {size}; j++) {{",
        *(f"        const {ctype(d)} x{k} = b{k}[j];" for k, d in enumerate(in_dt)),
        *(f"        {line}" for line in lines),
    ]
    if apart:
        params = [q.replace(" *", " *restrict ") for q in params]
        scalar = [
            f"GCVM_INLINE void {name}({', '.join(params)}) {{",
            *loop,
            *(f"        o{k}[j] = {_store(e, d)};" for k, (e, d) in enumerate(zip(outs, out_dt))),
            *(f"        {t}" for t in terms),
            "    }",
            "}",
        ]
        if vector is None or sums:
            return scalar
        head = f"GCVM_INLINE void {name}({', '.join(params)})"
        vectors = _vector_block(head, size, len(in_dt), vector)
        return ["#ifdef __AVX512F__", *vectors, "#else", *scalar, "#endif"]
    return [
        f"GCVM_INLINE void {name}({', '.join(params)}) {{",
        *(f"    {ctype(d)} r{k}[{size}];" for k, d in enumerate(out_dt)),
        *loop,
        *(f"        r{k}[j] = {_store(e, d)};" for k, (e, d) in enumerate(zip(outs, out_dt))),
        *(f"        {t}" for t in terms),
        "    }",
        "#pragma omp simd",
        f"    for (npy_intp j = 0; j < {size}; j++) {{",
        *(f"        o{k}[j] = r{k}[j];" for k in range(len(out_dt))),
        "    }",
        "}",
    ]


def _vector_block(head: str, size: int, nin: int, vector: VectorCode) -> list[str]:
    """A block function (``head``, its parameters as :func:`_block_function`'s) over
    ``size`` elements of ``nin`` inputs running the body's ``vector`` code."""
    v, lines, outs = vector
    return [
        f"{head} {{",
        f"#pragma GCC unroll {size // v.lanes}",
        f"    for (npy_intp j = 0; j < {size}; j += {v.lanes}) {{",
        *(f"        const {v.ctype} x{k} = {v.op('loadu')}(b{k} + j);" for k in range(nin)),
        *(f"        {c}" for c in lines),
        *(f"        {v.op('storeu')}(o{k} + j, {e});" for k, e in enumerate(outs)),
        "    }",
        "}",
    ]


def _blocked_kernel(
    in_dt: list[str],
    out_dt: list[str],
    lines: list[str],
    outs: list[str],
    sums: Sequence[tuple[str, str]],
    bases: list[str],
    init: str,
    fin: str,
    red: str,
    apart: bool,
    vector: VectorCode | None = None,
) -> str:
    """NAME_c for a body whose vector-math calls are long chains of dependent operations
    (:data:`BLOCKED_FLOPS`). ``NAME_b`` computes a block of four vectors. Stored through
    pointers that may alias the inputs' (in place), each vector's store would keep gcc from
    starting the next vector's chain before it, and the core would run the vectors one
    after the other, its scheduler full of one chain's waiting operations. So an in-place
    kernel computes the block into local arrays that nothing else can point at, then
    stores them; any other (``apart``) stores through ``restrict`` pointers, without the
    copy (the fused exp/tanh loop 0.976-0.986x the time in float, 0.984-0.992x in
    double), unless a call's outputs overlap its inputs after all (a scan step's state
    updated in its one row): that call runs ``NAME_l``, the blocks through local arrays.
    After the last full block, ``NAME_v`` does one vector at a time, and ``NAME_t`` (the
    plain loop, out of line, defined by the caller) the last partial vector: all of a
    short run, such as a loop step's row, then costs what it did unblocked. With one block
    function only, or the plain loop inline, gcc compiled the blocks' loop into a slower
    schedule (0.94-0.96x instead of 0.89x)."""
    nin, nk, ns = len(in_dt), len(out_dt), len(sums)
    blk = BLOCK_BYTES // max(np.dtype(d).itemsize for d in [*in_dt, *out_dt])
    vec = blk // 4
    here = [f"q{k} + i0" for k in range(nin + nk)] + [f"u{j}" for j in range(ns)]

    def call(name: str, count: int) -> list[str]:
        """``name`` at ``i0``, its sums' ``count`` terms added."""
        adds = [f"    a{j} += u{j}[j];" for j in range(ns)]
        loop = [f"#pragma omp simd{red}", f"for (npy_intp j = 0; j < {count}; j++) {{"]
        return [f"{name}({', '.join(here)});", *((*loop, *adds, "}") if sums else ())]

    def loop(name: str, count: int, indent: str = "    ") -> list[str]:
        head = f"for (; i0 + {count} <= n; i0 += {count}) {{"
        return [indent + c for c in (head, *(f"    {c}" for c in call(name, count)), "}")]

    direct = [*loop("NAME_b", blk), *loop("NAME_v", vec)]
    overlap = _overlap_test(nin, nk) if apart else ""
    kernel = [
        "static void NAME_c(npy_intp n, char **p) {",
        *(f"    {b}" for b in bases),
        init.rstrip("\n"),
        *(f"    npy_float64 u{j}[{blk}];" for j in range(ns)),
        "    npy_intp i0 = 0;",
        *(
            [f"    if ({overlap}) {{", *loop("NAME_l", blk, " " * 8), "    } else {",
             *(f"    {c}" for c in direct), "    }"]
            if overlap else direct
        ),
        "    if (i0 < n) NAME_t(i0, n, p);",
        fin.rstrip("\n"),
        "}",
    ]  # fmt: skip
    body = (in_dt, out_dt, lines, outs, sums)
    blocks = [
        *_block_function("NAME_b", blk, *body, apart, vector),
        *_block_function("NAME_v", vec, *body, apart, vector),
    ]
    if overlap:
        blocks += _block_function("NAME_l", blk, *body, False)
    return "\n".join([*blocks, *(line for line in kernel if line)]) + "\n"


def _overlap_test(nin: int, nk: int) -> str:
    """The C condition that one of the ``nk`` outputs' run of ``n`` elements overlaps one of
    the ``nin`` inputs' (then ``restrict`` would not hold); empty without outputs."""

    def overlap(a: int, b: int) -> str:
        return (
            f"((npy_uintp)q{a} < (npy_uintp)(q{b} + n) && (npy_uintp)q{b} < (npy_uintp)(q{a} + n))"
        )

    return " || ".join(overlap(nin + o, i) for o in range(nk) for i in range(nin))


def _declarations(label: str, nin: int, nop: int, ndx: int) -> list[str]:
    return [
        f"    const char *name = {label};",
        f"    PyArrayObject *in[{nin}], *tmp[{nin}], *own[{nin}];",
        f"    npy_intp shape[{ndx}], st[{nop * ndx}];",
        f"    char *data[{nop}];",
        f"    int es[{nop}];",
        "    int rc = -1;",
        f"    for (int k = 0; k < {nin}; k++) tmp[k] = own[k] = NULL;",
    ]


def _flat_path(
    name: str, in_dt: list[str], out_dt: list[str], nd: int, inplace: dict[int, int]
) -> list[str]:
    """The fast path: inputs of one shape, C-contiguous, aligned and native-order (the
    thunk's inputs are ndarrays of the declared types: ``graphc_checked``) run as one
    contiguous kernel call, without broadcasting or strides. An in-place output that is
    not writeable or that another input overlaps goes to the general path (which copies
    or raises), before any output is touched."""
    nin = len(in_dt)
    b = [
        "    PyArrayObject *const *fin = (PyArrayObject *const *)inputs;",
        f"    int flat = gc_flat_inputs(fin, {nin}, {nd});",
    ]
    for j in sorted(set(inplace.values())):
        b.append(f"    flat = flat && PyArray_ISWRITEABLE(fin[{j}]);")
        b += [
            f"    flat = flat && !gc_flat_overlap(fin[{k}], fin[{j}]);"
            for k in range(nin)
            if k != j
        ]
    b.append("    if (flat) {")
    b += [
        f"        data[{k}] = PyArray_BYTES(fin[{k}]); es[{k}] = {np.dtype(d).itemsize};"
        for k, d in enumerate(in_dt)
    ]
    for o, d in enumerate(out_dt):
        slot = nin + o
        if o in inplace:
            j = inplace[o]
            b.append(f"        Py_INCREF(inputs[{j}]); Py_XSETREF(*o{o}, inputs[{j}]);")
            b.append(f"        data[{slot}] = PyArray_BYTES(fin[{j}]);")
        else:
            b.append(
                f"        {{ PyArrayObject *a = gc_prepare_output(o{o}, {nd},"
                f" PyArray_DIMS(fin[0]), {typenum(d)});"
            )
            b.append(f"          if (a == NULL) FAIL; data[{slot}] = PyArray_BYTES(a); }}")
        b.append(f"        es[{slot}] = {np.dtype(d).itemsize};")
    b += [
        f"        gc_ew_flat({nin + len(out_dt)}, PyArray_SIZE(fin[0]), data, es, {name}_c);",
        "        return 0;",
        "    }",
    ]
    return b


def _input_checks(
    in_dt: list[str], nd: int, inplace: dict[int, int], deps: list | None = None
) -> list[str]:
    """Inputs as arrays of the declared types, broadcast to ``shape``, aligned (copies of
    misaligned ones; an in-place input must be an aligned ndarray). With ``deps`` (per
    output, the inputs it reads) also each output's own shape ``oshK`` and ``slow``."""
    nin = len(in_dt)
    b = [
        f"    if (!(own[{k}] = in[{k}] = gc_input(inputs[{k}], {k}, {nd}, {typenum(d)}, name)))"
        " goto done;"
        for k, d in enumerate(in_dt)
    ]
    for j in set(inplace.values()):
        b.append(
            f"    if ((PyObject *)in[{j}] != inputs[{j}]) {{ PyErr_Format(PyExc_TypeError, "
            '"%s: the in-place input is not an ndarray", name); goto done; }'
        )
    if deps is None:
        b.append(f"    if (gc_broadcast(in, {nin}, {nd}, shape, name) < 0) goto done;")
    else:
        b += _own_shapes(nin, nd, deps)
    for k in range(nin):
        if k in inplace.values():
            b.append(
                f"    if (!PyArray_ISALIGNED(in[{k}])) {{ PyErr_Format(PyExc_ValueError, "
                '"%s: the in-place input is not aligned", name); goto done; }'
            )
            continue
        b.append(
            f"    if (!PyArray_ISALIGNED(in[{k}])) {{\n"
            f"        if (!(tmp[{k}] = (PyArrayObject *)PyArray_NewCopy(in[{k}], NPY_CORDER)))"
            " goto done;\n"
            f"        in[{k}] = tmp[{k}];\n"
            "    }"
        )
    return b


def _own_shapes(nin: int, nd: int, deps: list) -> list[str]:
    """``shape`` (the loop's, with ``slow`` set where the inputs do not broadcast together)
    and per output ``oshK``, the broadcast of the inputs it reads (an error there is the
    error of the unfused graph); ``slow`` when one differs from the loop's."""
    b = [
        "    int slow = 0;",
        f"    for (int d = 0; d < {nd}; d++) {{",
        "        shape[d] = 1;",
        f"        for (int k = 0; k < {nin}; k++) {{",
        "            npy_intp n = PyArray_DIM(in[k], d);",
        "            if (n == 1) continue;",
        "            if (shape[d] == 1) shape[d] = n; else if (shape[d] != n) slow = 1;",
        "        }",
        "    }",
    ]
    for o, ks in enumerate(deps):
        b.append(f"    npy_intp osh{o}[{max(nd, 1)}];")
        b.append(f"    {{ PyArrayObject *sub[] = {{{', '.join(f'in[{k}]' for k in ks)}}};")
        b.append(f"      if (gc_broadcast(sub, {len(ks)}, {nd}, osh{o}, name) < 0) goto done; }}")
        b.append(f"    for (int d = 0; d < {nd}; d++) slow |= osh{o}[d] != shape[d];")
    return b


def _inplace_checks(nin: int, nd: int, inplace: dict[int, int]) -> list[str]:
    """``fitJ``: whether in-place input J can hold the output. An in-place input the
    broadcast grows (an axis of unknown size that is 1 at run time) cannot: then the output
    is a new array, as without the pattern. Other inputs overlapping it are copied first."""
    b = []
    for j in set(inplace.values()):
        b.append(f"    int fit{j} = 1;")
        b.append(
            f"    for (int d = 0; d < {nd}; d++) fit{j} &= PyArray_DIM(in[{j}], d) == shape[d];"
        )
        b.append(
            f'    if (fit{j} && PyArray_FailUnlessWriteable(in[{j}], "an in-place input") < 0)'
            " goto done;"
        )
        for k in range(nin):
            if k == j:
                continue
            b.append(
                f"    if (fit{j} && !tmp[{k}] && in[{k}] != in[{j}] && gc_overlap(in[{k}], in[{j}])"
                f" && !gc_same_layout(in[{k}], in[{j}])) {{\n"
                f"        if (!(tmp[{k}] = (PyArrayObject *)PyArray_NewCopy(in[{k}], NPY_CORDER)))"
                " goto done;\n"
                f"        in[{k}] = tmp[{k}];\n"
                "    }"
            )
    return b


def _input_operands(in_dt: list[str], nd: int) -> list[str]:
    b = []
    for k, d in enumerate(in_dt):
        b.append(f"    data[{k}] = PyArray_BYTES(in[{k}]); es[{k}] = {np.dtype(d).itemsize};")
        b.append(f"    gc_strides(in[{k}], {nd}, &st[{k * max(nd, 1)}]);")
    return b


def _outputs(
    nin: int, out_dt: list[str], nd: int, inplace: dict[int, int], own: bool = False
) -> list[str]:
    """Each output: its in-place input when that fits, else a reused or new array (of its
    own shape ``oshK`` when ``own``, never in place on the slow path)."""
    b = []
    for o, d in enumerate(out_dt):
        slot = nin + o
        shape = f"osh{o}" if own else "shape"
        if o in inplace:
            j = inplace[o]
            b.append(
                f"    {{ PyArrayObject *a = in[{j}];\n"
                f"      if (fit{j}{' && !slow' if own else ''}) {{\n"
                f"        Py_INCREF((PyObject *)inputs[{j}]);\n"
                f"        Py_XSETREF(*o{o}, (PyObject *)inputs[{j}]);\n"
                f"      }} else if (!(a = gc_prepare_output(o{o}, {nd}, {shape},"
                f" {typenum(d)}))) {{\n"
                "        goto done;\n"
                "      }"
            )
        else:
            b.append(
                f"    {{ PyArrayObject *a = gc_prepare_output(o{o}, {nd}, {shape}, {typenum(d)});"
                "\n      if (a == NULL) goto done;"
            )
        b.append(
            f"      data[{slot}] = PyArray_BYTES(a); es[{slot}] = {np.dtype(d).itemsize};"
            f" gc_strides(a, {nd}, &st[{slot * max(nd, 1)}]); }}"
        )
    return b


def _sum_operands(nin: int, nk: int, sum_dt: list[str], nd: int) -> list[str]:
    """The accumulators ``accJ``, operands after the outputs with zero strides."""
    b = []
    for j in range(len(sum_dt)):
        slot = nin + nk + j
        b.append(f"    npy_float64 acc{j} = 0;")
        b.append(f"    data[{slot}] = (char *)&acc{j}; es[{slot}] = 0;")
        b.append(f"    for (int d = 0; d < {max(nd, 1)}; d++) st[{slot * max(nd, 1)} + d] = 0;")
    return b


def _slow_loops(name: str, nin: int, nop: int, nd: int, deps: list) -> list[str]:
    """One loop per output (or sum) over its own shape: the inputs it does not read are
    zeros, the other outputs and sums go to a sink, all through zero strides."""
    ndx = max(nd, 1)
    b = [
        "        npy_uint64 zero[2] = {0, 0}, sink[2];",
        f"        char *d2[{nop}]; npy_intp st2[{nop * ndx}];",
    ]
    for o, ks in enumerate(deps):
        b.append("        memset(st2, 0, sizeof(st2));")
        for slot in range(nop):
            if slot in ks or slot == nin + o:
                b.append(f"        d2[{slot}] = data[{slot}];")
                b.append(
                    f"        memcpy(&st2[{slot * ndx}], &st[{slot * ndx}],"
                    f" {ndx} * sizeof(npy_intp));"
                )
            else:
                b.append(f"        d2[{slot}] = (char *){'zero' if slot < nin else 'sink'};")
        b.append(
            f"        gc_ew_loop({nop}, {nin}, {nd}, osh{o}, d2, st2, es, {name}_c, {name}_s);"
        )
    return b


def _loop_and_cleanup(
    name: str, nin: int, nop: int, nd: int, deps: list | None = None, sum_dt: Sequence = ()
) -> list[str]:
    loop = f"gc_ew_loop({nop}, {nin}, {nd}, shape, data, st, es, {name}_c, {name}_s);"
    if deps is None:
        b = [f"    {loop}"]
    else:
        b = [
            f"    if (!slow) {loop}",
            "    else {",
            *_slow_loops(name, nin, nop, nd, deps),
            "    }",
        ]
    nk = nop - nin - len(sum_dt)
    for j, d in enumerate(sum_dt):
        b.append(
            f"    {{ PyArrayObject *a = gc_prepare_output(o{nk + j}, 0, NULL, {typenum(d)});\n"
            "      if (a == NULL) goto done;\n"
            f"      *({ctype(d)} *)PyArray_DATA(a) = ({ctype(d)})acc{j}; }}"
        )
    return [
        *b,
        "    rc = 0;",
        "done:",
        *(f"    Py_XDECREF(tmp[{k}]); Py_XDECREF(own[{k}]);" for k in range(nin)),
        "    if (rc < 0) FAIL;",
    ]


@register_c(Elemwise)
def gen_elemwise(node: Apply) -> CThunkCode | None:
    op = node.op
    kept = tuple(range(len(node.outputs)))
    return _loop_code(node, op.scalar_op, kept, (), dict(op.inplace_pattern))


@register_c(ElemwiseSums)
def gen_elemwise_sums(node: Apply) -> CThunkCode | None:
    op = node.op
    return _loop_code(node, op.inner, op.kept, op.summed, {})


def _loop_code(
    node: Apply, scalar_op: ScalarOp, kept: tuple, summed: tuple, inplace: dict
) -> CThunkCode | None:
    """The thunk of one loop over ``node``'s inputs computing ``scalar_op``: the arrays of
    its outputs ``kept`` (the node's first outputs) and the sums over every axis of its
    outputs ``summed`` (the node's last outputs, 0-d)."""
    in_dt = [i.type.dtype for i in node.inputs]
    all_dt = list(scalar_op.output_dtypes(*in_dt))
    out_dt, sum_dt = [all_dt[k] for k in kept], [all_dt[k] for k in summed]
    nin, nop = len(in_dt), len(in_dt) + len(kept) + len(summed)
    nd = node.outputs[0].type.ndim if kept else node.inputs[0].type.ndim
    if nop > 64 or nd > 32:
        return None
    got = scalar_code(scalar_op, in_dt, all_dt)
    if got is None:
        return None
    lines, outs = got
    sums = [(outs[k], d) for k, d in zip(summed, sum_dt)]
    vector = None if summed else vector_code(scalar_op, in_dt, all_dt)
    if vector is not None:
        vector = vector._replace(outs=[vector.outs[k] for k in kept])
    kern = _kernels(in_dt, out_dt, lines, [outs[k] for k in kept], sums, bool(inplace), vector)
    name = "gc_ew_" + _hash(kern)
    kern = kern.replace("NAME", name)
    # per output (and sum), the inputs it reads; None when every output reads every input
    all_deps = getattr(scalar_op, "output_deps", None)
    deps = None
    if all_deps is not None:
        deps = [all_deps[k] or tuple(range(nin)) for k in (*kept, *summed)]
        if all(len(ks) == nin for ks in deps):
            deps = None
    flat = _flat_path(name, in_dt, out_dt, nd, inplace) if deps is None and not summed else []
    body = [
        *_declarations(c_string(str(node.op)), nin, nop, max(nd, 1)),
        *flat,
        *_input_checks(in_dt, nd, inplace, deps),
        *_inplace_checks(nin, nd, inplace),
        *_input_operands(in_dt, nd),
        *_sum_operands(nin, len(kept), sum_dt, nd),
        *_outputs(nin, out_dt, nd, inplace, deps is not None),
        *_loop_and_cleanup(name, nin, nop, nd, deps, sum_dt),
    ]
    vector_math = [VECTOR_MATH] if "_mm512_" in kern else []  # the kernel runs vector code
    support = (*SUPPORT, *c_support(scalar_op), *vector_math, kern)
    return CThunkCode(body="\n".join(body), support=support,
                      kernel="" if summed else f"{name}_c")  # fmt: skip
