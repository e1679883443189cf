"""Run one Theano example, unchanged, with a seeded ``numpy.random`` and record what it
trains: the loss of every call of a function compiled with updates (at full precision) and
when each call and each output line ended. The same file runs under a real Theano and under
``python -m graphc.theano``; it imports only numpy and ``theano``.

    python probe.py OUT.json SEED MAX_EPOCHS script.py [args...]

``MAX_EPOCHS`` > 0 stops a script that counts its own epochs (recurrent.py) after that many
epoch lines, through the ``KeyboardInterrupt`` it catches to end training early.
"""

import json
import os
import re
import runpy
import sys
import time

import numpy as np

EPOCH_LINE = re.compile(r"^Epoch \d+ ")


class _Lines:
    """``sys.stdout`` that also keeps each line written and when it ended."""

    def __init__(self, inner):
        self.inner, self.lines, self.pending = inner, [], ""

    def write(self, text):
        self.pending += text
        while "\n" in self.pending:
            line, self.pending = self.pending.split("\n", 1)
            self.lines.append((time.perf_counter(), line))
        return self.inner.write(text)

    def flush(self):
        self.inner.flush()

    def epochs(self):
        return sum(1 for _, line in self.lines if EPOCH_LINE.match(line))


def main(argv):
    out, seed, max_epochs, script = argv[0], int(argv[1]), int(argv[2]), argv[3]
    np.random.seed(seed)  # Lasagne's get_rng() is numpy.random: weights, dropout seeds, data
    import theano

    stdout = _Lines(sys.stdout)
    losses, compile_seconds = [], []
    compile_function = theano.function

    def function(*args, **kwargs):
        t0 = time.perf_counter()
        f = compile_function(*args, **kwargs)
        compile_seconds.append(time.perf_counter() - t0)
        if not kwargs.get("updates"):
            return f

        def train(*inputs):
            if max_epochs and stdout.epochs() >= max_epochs:
                raise KeyboardInterrupt  # the script's own way to stop training early
            result = f(*inputs)
            first = result[0] if isinstance(result, list) else result
            losses.append((time.perf_counter(), float(np.asarray(first))))
            return result

        return train

    theano.function = function
    sys.stdout = stdout
    sys.argv = [script, *argv[4:]]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        runpy.run_path(script, run_name="__main__")
    finally:
        sys.stdout = stdout.inner
        record = {
            "theano": os.path.dirname(theano.__file__) if hasattr(theano, "__file__") else "",
            "floatX": theano.config.floatX,
            "numpy": np.__version__,
            "losses": losses,
            "compile_seconds": compile_seconds,
            "lines": stdout.lines,
        }
        with open(out, "w") as f:
            json.dump(record, f)


if __name__ == "__main__":
    main(sys.argv[1:])
