"""``graphc-prof`` (also ``python -m graphc.profile``): profile a script, show or compare
profiles.

    graphc-prof run script.py [args...] [options]
    graphc-prof show profile.json [--n-apply N] [--n-ops N] [--full] [--width W]
                                  [--memory] [--optimizer]
    graphc-prof diff base.json new.json [--fail-above RATIO] [--min-delta-us US] [-n N]
    graphc-prof trace profile.json out.trace.json
    graphc-prof graph profile.json out.svg|out.png|out.pdf|out.dot

Options of ``run`` (before the script or after its arguments; ``--`` ends them):
    --json PATH            save the merged profile as JSON
    --trace PATH           write a Chrome trace (turns profile_trace on)
    --speedscope PATH      write a speedscope profile (turns profile_trace on)
    --trace-capacity N     node events kept per function in a trace
    --svg PATH, --dot PATH write the profile-coloured graph (.svg needs Graphviz)
    --memory               record the memory profile (profile_memory)
    --optimizer            record the optimizer profile (profile_optimizer)
    --summary              print the summary at exit (the default when no file is asked for)
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from graphc.profile.stats import ProfileStats, load

_RUN_OPTIONS = {
    "--json": True,
    "--trace": True,
    "--svg": True,
    "--dot": True,
    "--speedscope": True,
    "--trace-capacity": True,
    "--memory": False,
    "--optimizer": False,
    "--summary": False,
}


def _split_run_args(argv: Sequence[str]) -> tuple[dict[str, str | bool], list[str]]:
    """Our options (before the script or after its arguments) and the script's argv.

    Options of graphc-prof may come before the script, or after it; everything else after
    the script is passed to it (use ``--`` to pass a name graphc-prof also knows)."""
    opts: dict[str, str | bool] = {}
    rest: list[str] = []
    it = iter(argv)
    passthrough = False
    for a in it:
        if passthrough:
            rest.append(a)
        elif a == "--":
            passthrough = True
        elif a.split("=", 1)[0] in _RUN_OPTIONS:
            key, eq, val = a.partition("=")
            if _RUN_OPTIONS[key]:
                if not eq:
                    val = next(it, None)
                    if val is None:
                        raise UsageError(f"run: {key} needs a value")
                opts[key] = val
            else:
                opts[key] = True
        else:
            rest.append(a)
    if not rest:
        raise UsageError("run: give the script to run")
    return opts, rest


def collect() -> ProfileStats:
    """All profiles registered at exit in this process, merged into one ProfileStats."""
    from graphc.profile.registry import REGISTRY

    stats = REGISTRY.registered()
    return ProfileStats.merge(stats) if stats else ProfileStats()


def cmd_run(argv: Sequence[str]) -> int:
    opts, rest = _split_run_args(argv)
    if not Path(rest[0]).is_file():
        raise UsageError(f"run: no such script: {rest[0]}")
    from graphc.flags import config as cfg

    cfg.profile = True
    if opts.get("--memory"):
        cfg.profile_memory = True
    if opts.get("--optimizer"):
        cfg.profile_optimizer = True
    if opts.get("--trace") or opts.get("--speedscope"):
        cfg.profile_trace = True
        if opts.get("--trace-capacity"):
            cfg.profiling__trace_capacity = int(opts["--trace-capacity"])
    writes_file = any(opts.get(k) for k in ("--json", "--trace", "--speedscope", "--svg", "--dot"))
    if writes_file and not opts.get("--summary"):
        cfg.profiling__destination = os.devnull
    script = rest[0]
    old_argv, old_path = sys.argv, list(sys.path)
    sys.argv = list(rest)
    sys.path.insert(0, str(Path(script).resolve().parent))
    code = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except Exception:  # noqa: BLE001 - report, then still write what was profiled
        traceback.print_exc()
        code = 1
    finally:
        sys.argv = old_argv
        sys.path[:] = old_path
    stats = collect()
    _write_outputs(stats, opts)
    n = len(stats.functions)
    calls = sum(f.calls for f in stats.functions)
    print(f"graphc-prof: {n} function(s) profiled, {calls} call(s)", file=sys.stderr)
    return code


def _write_outputs(stats: ProfileStats, opts: dict[str, str | bool]) -> None:
    if opts.get("--json"):
        stats.save(str(opts["--json"]))
        print(f"graphc-prof: wrote {opts['--json']}", file=sys.stderr)
    if opts.get("--trace"):
        doc = stats.to_chrome_trace(str(opts["--trace"]))
        dropped = doc["otherData"]["dropped_events"]
        extra = f" ({dropped} events dropped: raise --trace-capacity)" if dropped else ""
        print(f"graphc-prof: wrote {opts['--trace']}{extra}", file=sys.stderr)
    if opts.get("--speedscope"):
        import json

        from graphc.profile.trace import speedscope

        Path(str(opts["--speedscope"])).write_text(json.dumps(speedscope(stats)))
    if opts.get("--dot"):
        from graphc.profile.graphviz import write_dot

        write_dot(stats, str(opts["--dot"]))
    if opts.get("--svg"):
        from graphc.profile.graphviz import write_graph

        write_graph(stats, str(opts["--svg"]))
        print(f"graphc-prof: wrote {opts['--svg']}", file=sys.stderr)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="graphc-prof", description="graphc profiles")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("run", help="profile every function a script compiles", add_help=False)
    s = sub.add_parser("show", help="print the text summary of a profile JSON")
    s.add_argument("profile")
    s.add_argument("--n-apply", type=int, default=10, help="Apply rows (default 10)")
    s.add_argument("--n-ops", type=int, default=20, help="Class and Op rows (default 20)")
    s.add_argument("--full", action="store_true", help="every row of every table")
    s.add_argument("--width", type=int, default=None, help="columns (default: terminal, 100)")
    s.add_argument("--memory", action="store_true", default=None)
    s.add_argument("--optimizer", action="store_true", default=None)
    d = sub.add_parser("diff", help="compare two profiles (base, new)")
    d.add_argument("base")
    d.add_argument("new")
    d.add_argument(
        "--fail-above",
        type=float,
        default=None,
        metavar="RATIO",
        help="exit 1 when an entry is slower by more than RATIO (beyond noise)",
    )
    d.add_argument(
        "--min-delta-us",
        type=float,
        default=5.0,
        help="ignore median differences smaller than this (default 5 us)",
    )
    d.add_argument("-n", type=int, default=20, help="rows per section")
    t = sub.add_parser("trace", help="Chrome trace JSON from a profile JSON")
    t.add_argument("profile")
    t.add_argument("out")
    g = sub.add_parser("graph", help="profile-coloured graph: .svg (needs Graphviz) or .dot")
    g.add_argument("profile")
    g.add_argument("out")
    return p


class UsageError(Exception):
    """Wrong use of the command: reported in one line, exit status 2."""


def _load(path: str) -> ProfileStats:
    """A profile JSON, or a UsageError saying why it cannot be read."""
    try:
        return load(path)
    except FileNotFoundError:
        raise UsageError(f"no such profile: {path}") from None
    except (ValueError, KeyError, TypeError) as e:  # not JSON, or not a graphc profile
        raise UsageError(f"{path} is not a graphc profile JSON ({e})") from None


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except UsageError as e:
        print(f"graphc-prof: error: {e}", file=sys.stderr)
        return 2
    except (ValueError, RuntimeError, OSError) as e:  # e.g. no trace recorded, no Graphviz
        print(f"graphc-prof: error: {e}", file=sys.stderr)
        return 2


def _main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "run":
        if len(argv) > 1 and argv[1] in ("-h", "--help"):
            print(__doc__)
            return 0
        return cmd_run(argv[1:])
    args = _parser().parse_args(argv)
    if args.cmd == "show":
        everything = sys.maxsize if args.full else None
        _load(args.profile).summary(
            n_apply_to_print=everything or args.n_apply,
            n_ops_to_print=everything or args.n_ops,
            memory=args.memory,
            optimizer=args.optimizer,
            width=args.width,
        )
        return 0
    if args.cmd == "diff":
        from graphc.profile.bench import compare, render

        verdicts = compare(_load(args.base), _load(args.new), args.fail_above,
                           args.min_delta_us * 1000)  # fmt: skip
        sys.stdout.write(render(verdicts, args.n))
        if args.fail_above is not None:
            if any(v.failed for v in verdicts):
                return 1
            print(f"OK: nothing slower than {args.fail_above:g}x beyond the noise")
        return 0
    if args.cmd == "trace":
        _load(args.profile).to_chrome_trace(args.out)
        return 0
    if args.cmd == "graph":
        from graphc.profile.graphviz import write_graph

        write_graph(_load(args.profile), args.out)
        return 0
    return 2  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
