#!/usr/bin/env bash
# Run a subset of the test suite with every generated C module compiled with AddressSanitizer
# (and UndefinedBehaviorSanitizer), in a private compile cache; exit non-zero on any error.
#
#   scripts/asan_check.sh                 # the default subset
#   FUZZ_EXAMPLES=400 scripts/asan_check.sh -k c_modes   # extra pytest arguments pass through
#
# How: graphc's compiler is $CC, which may carry arguments, so CC="cc -fsanitize=..." builds
# instrumented modules; GRAPHC_COMPILEDIR keeps them apart from the normal cache (the cache
# key does not see flags given through $CC). The Python interpreter is not instrumented, so
# the sanitizer runtimes are LD_PRELOADed. Leak detection is off (CPython and numpy keep
# allocations until exit by design). The Cython VM (_cvm) is not rebuilt instrumented.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-.venv/bin/python}
BASE_CC=${ASAN_CC:-cc}
SANITIZERS=${SANITIZERS:-address,undefined}

libs=()
for lib in libasan.so libubsan.so; do
    case "$lib:$SANITIZERS" in
        libubsan.so:*undefined*|libasan.so:*address*) ;;
        *) continue ;;
    esac
    path=$($BASE_CC -print-file-name="$lib")
    if [ ! -f "$path" ]; then
        echo "asan_check: $BASE_CC has no $lib; install the sanitizer runtime (e.g. libasan8)" >&2
        exit 2
    fi
    libs+=("$path")
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GRAPHC_COMPILEDIR="$tmp/cache"
export CC="$BASE_CC -fsanitize=$SANITIZERS -fno-omit-frame-pointer -fno-sanitize-recover=all -g"
export LD_PRELOAD="${libs[*]}"
# reports go to files: pytest captures stderr and a sanitizer abort would lose it
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:allocator_may_return_null=1:halt_on_error=1:exitcode=86:log_path=$tmp/asan}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1:exitcode=87:log_path=$tmp/ubsan}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

status=0
"$PY" -m pytest -q -p no:cacheprovider \
    tests/test_bad_input.py tests/test_debugmode.py tests/test_threads.py \
    tests/test_fuzz.py -k "not gradients" \
    --fuzz-examples="${FUZZ_EXAMPLES:-40}" "$@" || status=$?

for report in "$tmp"/asan.* "$tmp"/ubsan.*; do
    [ -f "$report" ] || continue
    echo "asan_check: sanitizer report $report:" >&2
    cat "$report" >&2
    if grep -q 'ERROR: \|runtime error' "$report" && [ "$status" -eq 0 ]; then status=1; fi
done

# the run must really have used instrumented modules
n_so=$(find "$GRAPHC_COMPILEDIR" -name '*.so' | wc -l)
n_asan=0
while IFS= read -r so; do
    if nm -D "$so" 2>/dev/null | grep -q '__asan_\|__ubsan_'; then n_asan=$((n_asan + 1)); fi
done < <(find "$GRAPHC_COMPILEDIR" -name '*.so')
echo "asan_check: $n_asan of $n_so generated modules instrumented; pytest exit status $status"
if [ "$n_asan" -eq 0 ]; then
    echo "asan_check: no instrumented module was built (is the C linker available?)" >&2
    exit 3
fi
exit "$status"
