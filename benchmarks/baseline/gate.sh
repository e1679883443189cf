#!/usr/bin/env bash
# Performance gate: the baseline workload under the base commit and under this tree, in
# alternating fresh processes (graphc-prof ab: a discarded warm-up pair, then pairs run back
# to back and judged by their ratios): the calls of its functions and, as timed entries,
# compiles of a scan gradient and of an element-wise chain. Fails when something is slower
# than GATE_RATIO with its whole confidence interval, or when the profiles do not match.
#
#   GATE_BASE    commit to compare with (default: the merge base with $GATE_TARGET when
#                set, e.g. origin/main, else the parent commit HEAD^)
#   GATE_RATIO   the gate (default 1.5)     GATE_PROCESSES  processes per side (default 4)
#   GATE_CALLS   calls per function and process (default 100)
#   GATE_COMPILES  timed compiles of each compile entry per process (default 9)
#   PY           the Python with graphc's dependencies (default .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-.venv/bin/python}
case "$PY" in */*) PY="$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY")" ;; esac
OUT=build/ci-prof
BASE_TREE=build/ci-base
base=${GATE_BASE:-}
if [ -z "$base" ] && [ -n "${GATE_TARGET:-}" ]; then
    base=$(git merge-base HEAD "$GATE_TARGET")
fi
if [ -z "$base" ] && [ "$(git rev-parse --is-shallow-repository)" = true ]; then
    git fetch -q --deepen=1 || true  # a shallow CI checkout may lack the parent
fi
if [ -z "$base" ]; then
    if ! git rev-parse -q --verify 'HEAD^{commit}' >/dev/null \
        || ! git rev-parse -q --verify 'HEAD^' >/dev/null; then
        echo "performance gate skipped: HEAD has no parent commit to compare with"
        exit 0
    fi
    base=$(git rev-parse 'HEAD^')
fi
echo "performance gate: $(git rev-parse --short "$base") (base) vs this tree (new)"
mkdir -p "$OUT"
git worktree remove --force "$BASE_TREE" 2>/dev/null || rm -rf "$BASE_TREE"
git worktree prune
git worktree add -q --detach "$BASE_TREE" "$base"
trap 'git worktree remove --force "$BASE_TREE" 2>/dev/null || true' EXIT
# The base needs its Cython VM and loop driver: reuse this tree's builds when the sources
# are the same (a base without one would run another VM or loop, and be judged for it).
if git diff --quiet "$base" HEAD -- graphc/vm/_cvm.pyx graphc/vm/_loop.pyx \
    && ls graphc/vm/_cvm*.so graphc/vm/_loop*.so >/dev/null 2>&1; then
    cp graphc/vm/_cvm*.so graphc/vm/_loop*.so "$BASE_TREE/graphc/vm/"
else
    "$PY" -m pip install -q cython
    (cd "$BASE_TREE" && "$PY" setup.py -q build_ext --inplace)
fi
# One BLAS/OpenMP thread: the gate judges graphc, not how busy the machine's cores are.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
"$PY" -m graphc.profile ab --base-tree "$BASE_TREE" --new-tree . \
    --processes "${GATE_PROCESSES:-4}" --fail-above "${GATE_RATIO:-1.5}" \
    --json "$OUT/ab.json" -n 8 \
    benchmarks/baseline/workload.py --calls "${GATE_CALLS:-100}" \
    --compiles "${GATE_COMPILES:-9}"
