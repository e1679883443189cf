#!/usr/bin/env bash
# Lasagne 0.1's examples under a real Theano 0.8.2 and under graphc, side by side
# (scripts/theano_reference.py: first-epoch losses, their difference, seconds per epoch).
#
#   scripts/theano_reference.sh [--examples mlp,cnn] [--epochs 3] [--floatX float64] ...
#   scripts/theano_reference.sh api OUT.json     # Theano's public names and signatures
#
# The Theano venv ($THEANO_VENV, outside the repo) is made once from the package index:
# Theano 0.8.2 with numpy 1.23 and scipy 1.10 (the last with Python 3.11 wheels it runs on),
# Lasagne 0.1, and theano_reference/sitecustomize.py for the aliases 3.11 removed. Its C
# code calls scipy's bundled OpenBLAS (LP64: numpy's own is ILP64, which Theano cannot call).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
VENV=${THEANO_VENV:-$HOME/.cache/graphc/theano-0.8.2}
if [ ! -x "$VENV/bin/python" ] || [ ! -f "$VENV/theanorc" ]; then
    python3.11 -m venv "$VENV"
    "$VENV/bin/pip" install -q numpy==1.23.5 scipy==1.10.1 Theano==0.8.2 Lasagne==0.1
    SITE=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    cp scripts/theano_reference/sitecustomize.py "$SITE/"
    mkdir -p "$VENV/blas"
    ln -sf "$SITE"/scipy.libs/* "$VENV/blas/"  # with its libgfortran, found beside it
    ln -sf "$(ls "$SITE"/scipy.libs/libopenblas*.so)" "$VENV/blas/libopenblas.so"
    cat >"$VENV/theanorc" <<RC
[global]
base_compiledir = $VENV/compiledir
[blas]
ldflags = -L$VENV/blas -Wl,-rpath,$VENV/blas -lopenblas
RC
fi
if [ "${1:-}" = api ]; then
    exec env THEANORC="$VENV/theanorc" "$VENV/bin/python" scripts/theano_reference/api.py "$2"
fi
# Lasagne 0.1's sdist (its examples) and the package itself in graphc's venv
WORK=build/lasagne
[ -f "$WORK/Lasagne-0.1.tar.gz" ] || "$PY" -m pip download -q --no-deps --no-binary :all: Lasagne==0.1 -d "$WORK"
mkdir -p "$WORK/src" && tar xzf "$WORK/Lasagne-0.1.tar.gz" -C "$WORK/src"
"$PY" -m pip show -q Lasagne >/dev/null 2>&1 || "$PY" -m pip install -q --no-deps "$WORK/Lasagne-0.1.tar.gz"
exec "$PY" scripts/theano_reference.py --theano-python "$VENV/bin/python" \
    --theanorc "$VENV/theanorc" --examples-dir "$WORK/src/Lasagne-0.1/examples" "$@"
