"""Run Theano code unchanged on graphc, with ``import theano`` served by graphc.

    python -m graphc.theano script.py [args...]    run a Theano program
    pytest -p graphc.theano [pytest args...]       run a Theano library's own tests
    graphc-prof run --theano script.py [args...]   profile a Theano program

The hook is ``graphc.compat.theano.install()``; importing this module installs nothing.
"""

from __future__ import annotations

import runpy
import sys
from collections.abc import Sequence
from pathlib import Path

from graphc.compat.theano import install

__all__ = ["main", "run_script"]

USAGE = "usage: python -m graphc.theano script.py [args...]"


def run_script(argv: Sequence[str]) -> None:
    """Install the hook and run ``argv[0]`` as ``__main__`` with ``sys.argv = argv``, as
    ``python script.py args...`` would (the script's folder first on ``sys.path``)."""
    script = argv[0]
    if not Path(script).is_file():
        raise FileNotFoundError(f"graphc.theano: no such script: {script}")
    install()
    old_argv, old_path = sys.argv, list(sys.path)
    sys.argv = list(argv)
    sys.path.insert(0, str(Path(script).resolve().parent))
    try:
        runpy.run_path(script, run_name="__main__")
    finally:
        sys.argv = old_argv
        sys.path[:] = old_path


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: the script's exit status, 2 on a usage error."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not args else sys.stdout)
        return 2 if not args else 0
    try:
        run_script(args)
    except FileNotFoundError as e:
        print(e, file=sys.stderr)
        return 2
    return 0


def pytest_load_initial_conftests(early_config, parser, args) -> None:
    """pytest plugin hook: serve ``import theano`` before any conftest or test imports it."""
    install()


def pytest_configure(config) -> None:
    """pytest plugin hook (also when loaded after the conftests): install the hook."""
    install()
