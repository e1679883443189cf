"""Theano 0.8.2's CorrMM, forward and both gradients, run on request from another process.

Run by the Theano venv's Python (``bench_conv.corrmm_theano_ops`` starts it), so that a
graphc benchmark can interleave real Theano calls with its own. One JSON request a line
on stdin, one JSON reply a line on stdout:

    {"build": [x_shape, w_shape, border, dtype]}   -> {"ok": true}  (compile the three)
    {"args": [op, path, ...]}                      -> {"ok": true}  (load op's inputs)
    {"run": op, "out": path or null}               -> {"ok": true}  (call; save the result)

``op`` is 0 forward (x, w), 1 gradient w.r.t. the input (w, g), 2 w.r.t. the filters
(x, g). Theano's CorrMM correlates; the filters are flipped here to convolve as graphc's
default ``filter_flip=True`` does.
"""

import json
import sys

import numpy as np


def build(x_shape, w_shape, border, dtype):
    import theano
    import theano.tensor as tt
    from theano.tensor.nnet.corr import CorrMM, CorrMM_gradInputs, CorrMM_gradWeights

    x, w, g = (tt.TensorType(dtype, (False,) * 4)(n) for n in "xwg")
    wf = w[:, :, ::-1, ::-1]
    outs = (
        ([x, w], CorrMM(border)(x, wf)),
        ([w, g], CorrMM_gradInputs(border)(wf, g, x_shape[2:])),
        ([x, g], CorrMM_gradWeights(border)(x, g, w_shape[2:])[:, :, ::-1, ::-1]),
    )
    return [theano.function(ins, out) for ins, out in outs]


def main():
    fns, args = None, {}
    for line in sys.stdin:
        req = json.loads(line)
        if "build" in req:
            fns = build(*req["build"])
        elif "args" in req:
            op, *paths = req["args"]
            args[op] = [np.load(p) for p in paths]
        else:
            out = fns[req["run"]](*args[req["run"]])
            if req.get("out"):
                np.save(req["out"], np.asarray(out))
        sys.stdout.write('{"ok": true}\n')
        sys.stdout.flush()


if __name__ == "__main__":
    main()
