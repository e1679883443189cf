"""``graphc-prof`` (also ``python -m graphc.profile``): profile a script, show or compare
profiles.

    graphc-prof run script.py [args...] [options]
    graphc-prof show profile.json [--n-apply N] [--n-ops N] [--full] [--width W]
                                  [--memory] [--optimizer]
    graphc-prof diff base.json new.json [--fail-above RATIO] [--rename OLD=NEW]
                     [--min-matched SHARE] [--json report.json] [-n N]
    graphc-prof ab [--base-tree DIR] [--new-tree DIR] [--processes N] [--warmup N]
                   [--fail-above RATIO]
                   [--base-cmd CMD --new-cmd CMD] script.py [args...]
        (ab's options come before the script; a command writes its profile to {json})
    graphc-prof trace profile.json out.trace.json
    graphc-prof graph profile.json out.svg|out.png|out.pdf|out.dot
    graphc-prof pprof profile.json out.pb.gz
    graphc-prof html profile.json [new.json] -o report.html
        (one profile; two: the second with its comparison to the first; or the JSON of
        ``diff``/``ab --json`` alone)

Options of ``run`` (before the script or after its arguments; ``--`` ends them):
    --json PATH            save the merged profile as JSON
    --trace PATH           write a Chrome trace (turns profile_trace on)
    --speedscope PATH      write a speedscope profile (turns profile_trace on)
    --trace-capacity N     node events kept per function in a trace
    --svg PATH, --dot PATH write the profile-coloured graph (.svg needs Graphviz)
    --html PATH            write the self-contained HTML report
    --pprof PATH           write the profile in pprof's format (gzipped profile.proto)
    --memory               record the memory profile (profile_memory)
    --optimizer            record the optimizer profile (profile_optimizer)
    --summary              print the summary at exit (the default when no file is asked for)
    --theano               serve ``import theano`` from graphc (the script runs under
                           ``python -m graphc.theano``: an unchanged Theano program)
    --full                 every row of every table in the summary (profiling__n_apply and
                           profiling__n_ops otherwise; the default fits about one screen)
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import shlex
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from graphc.flags import config as cfg
from graphc.profile.ab import Side, python_side, run_ab
from graphc.profile.data.model import FunctionProfile
from graphc.profile.registry import REGISTRY
from graphc.profile.render.compare import render
from graphc.profile.render.graphviz import write_dot, write_graph
from graphc.profile.render.html import write_html
from graphc.profile.render.pprof import write_pprof
from graphc.profile.render.speedscope import speedscope
from graphc.profile.stats import ProfileStats, load
from graphc.profile.summaries.compare import Options, compare, compare_runs

_RUN_OPTIONS = {
    "--json": True,
    "--trace": True,
    "--svg": True,
    "--dot": True,
    "--html": True,
    "--pprof": True,
    "--speedscope": True,
    "--trace-capacity": True,
    "--memory": False,
    "--optimizer": False,
    "--summary": False,
    "--full": False,
    "--theano": False,
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
                    following = next(it, None)
                    if following is None:
                        raise UsageError(f"run: {key} needs a value")
                    val = following
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
    stats = REGISTRY.registered()
    return ProfileStats.merge(stats) if stats else ProfileStats()


def cmd_run(argv: Sequence[str]) -> int:
    opts, rest = _split_run_args(argv)
    if not Path(rest[0]).is_file():
        raise UsageError(f"run: no such script: {rest[0]}")
    cfg.profile = True
    if opts.get("--memory"):
        cfg.profile_memory = True
    if opts.get("--optimizer"):
        cfg.profile_optimizer = True
    if opts.get("--full"):
        cfg.profiling__n_apply = cfg.profiling__n_ops = sys.maxsize
    if opts.get("--trace") or opts.get("--speedscope"):
        cfg.profile_trace = True
        if opts.get("--trace-capacity"):
            cfg.profiling__trace_capacity = int(opts["--trace-capacity"])
    writes_file = any(
        opts.get(k)
        for k in ("--json", "--trace", "--speedscope", "--svg", "--dot", "--html", "--pprof")
    )
    if writes_file and not opts.get("--summary"):
        cfg.profiling__destination = os.devnull
    script = rest[0]
    old_argv, old_path = sys.argv, list(sys.path)
    sys.argv = list(rest)
    sys.path.insert(0, str(Path(script).resolve().parent))
    code = 0
    try:
        if opts.get("--theano"):  # named, not imported: the runner sits above this package
            sys.argv = ["graphc.theano", *rest]
            runpy.run_module("graphc.theano", run_name="__main__", alter_sys=True)
        else:
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
        Path(str(opts["--speedscope"])).write_text(json.dumps(speedscope(stats)))
    if opts.get("--dot"):
        write_dot(stats, str(opts["--dot"]))
    if opts.get("--svg"):
        write_graph(stats, str(opts["--svg"]))
        print(f"graphc-prof: wrote {opts['--svg']}", file=sys.stderr)
    if opts.get("--html"):
        write_html(stats, str(opts["--html"]))
        print(f"graphc-prof: wrote {opts['--html']}", file=sys.stderr)
    if opts.get("--pprof"):
        write_pprof(stats, str(opts["--pprof"]))


def _gate_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--fail-above",
        type=float,
        default=1.5,
        metavar="RATIO",
        help="exit 1 when an entry's whole confidence interval of new/base is above RATIO "
        "(default 1.5; inf: never)",
    )
    p.add_argument(
        "--rename",
        action="append",
        default=[],
        metavar="OLD=NEW",
        help="a base function now called NEW (repeatable)",
    )
    p.add_argument(
        "--min-matched",
        type=float,
        default=0.9,
        metavar="SHARE",
        help="exit 1 when less than SHARE of the base time is matched (default 0.9)",
    )
    p.add_argument("--confidence", type=float, default=0.95, help="interval level")
    p.add_argument("--json", dest="json_out", help="also write the comparison as JSON here")
    p.add_argument("-n", type=int, default=20, help="rows per section")


def _renames(items: Sequence[str]) -> dict[str, str]:
    out = {}
    for item in items:
        old, eq, new = item.partition("=")
        if not eq or not old or not new:
            raise SystemExit(f"graphc-prof: --rename wants OLD=NEW, got {item!r}")
        out[old] = new
    return out


def _gate(
    args: argparse.Namespace,
    base: Sequence[Sequence[FunctionProfile]],
    new: Sequence[Sequence[FunctionProfile]],
) -> int:
    """Compare runs of two versions, print the table, write JSON; the exit code."""
    opts = Options(
        threshold=args.fail_above,
        confidence=args.confidence,
        min_matched=args.min_matched,
    )
    report = compare_runs(base, new, opts, _renames(args.rename))
    sys.stdout.write(render(report, args.n))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report.to_json(), indent=1))
    if report.under_matched:
        return 1
    return 1 if report.slower else 0


def cmd_ab(args: argparse.Namespace) -> int:
    def side(name: str, cmd: str | None, tree: str | None, python: str) -> Side:
        if cmd:
            return Side(name, tuple(shlex.split(cmd)))
        if not args.script:
            raise SystemExit(f"graphc-prof ab: give the script, or --{name}-cmd")
        return python_side(name, python, args.script, args.args, tree)

    if not (args.base_cmd or args.base_tree):
        raise SystemExit("graphc-prof ab: give --base-tree DIR or --base-cmd CMD")
    base = side("base", args.base_cmd, args.base_tree, args.base_python)
    new = side("new", args.new_cmd, args.new_tree, args.new_python)
    runs_a, runs_b = run_ab(base, new, args.processes, log=sys.stderr, warmup=args.warmup)
    return _gate(args, runs_a, runs_b)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="graphc-prof", description="graphc profiles")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("run", help="profile every function a script compiles", add_help=False)
    s = sub.add_parser("show", help="print the text summary of a profile JSON")
    s.add_argument("profile")
    s.add_argument("--n-apply", type=int, default=None, help="Apply rows (profiling__n_apply)")
    s.add_argument("--n-ops", type=int, default=None, help="Class/Op rows (profiling__n_ops)")
    s.add_argument("--full", action="store_true", help="every row of every table")
    s.add_argument("--width", type=int, default=None, help="columns (default: terminal, 100)")
    s.add_argument("--memory", action="store_true", default=None)
    s.add_argument("--optimizer", action="store_true", default=None)
    d = sub.add_parser("diff", help="compare two profiles (base, new) with a noise-aware gate")
    d.add_argument("base")
    d.add_argument("new")
    _gate_options(d)
    d.add_argument(
        "--min-delta-us", type=float, default=None, help=argparse.SUPPRESS
    )  # accepted for old scripts; the interval now decides
    a = sub.add_parser("ab", help="A/B: a workload under two versions, alternating processes")
    a.add_argument("script", nargs="?", help="the workload (run by graphc-prof run)")
    a.add_argument("args", nargs=argparse.REMAINDER, help="the workload's arguments")
    a.add_argument("--base-tree", help="checkout whose graphc is the base")
    a.add_argument("--new-tree", help="checkout whose graphc is new (default: the installed)")
    a.add_argument("--base-python", default=sys.executable)
    a.add_argument("--new-python", default=sys.executable)
    a.add_argument("--base-cmd", help="base command line; {json} is where it writes a profile")
    a.add_argument("--new-cmd", help="new command line; {json} is where it writes a profile")
    a.add_argument("--processes", type=int, default=5, help="fresh processes per side")
    a.add_argument("--warmup", type=int, default=1, help="pairs run first and discarded")
    _gate_options(a)
    t = sub.add_parser("trace", help="Chrome trace JSON from a profile JSON")
    t.add_argument("profile")
    t.add_argument("out")
    g = sub.add_parser("graph", help="profile-coloured graph: .svg (needs Graphviz) or .dot")
    g.add_argument("profile")
    g.add_argument("out")
    pp = sub.add_parser("pprof", help="pprof profile (gzipped profile.proto) from a JSON")
    pp.add_argument("profile")
    pp.add_argument("out")
    h = sub.add_parser("html", help="self-contained HTML report of a profile or a comparison")
    h.add_argument("profiles", nargs="+", metavar="JSON", help="profile; base new; or diff JSON")
    h.add_argument("-o", "--out", required=True, help="the HTML file to write")
    return p


def cmd_html(args: argparse.Namespace) -> int:
    """Write the report of one profile, of a new profile compared with a base, or of a
    comparison's JSON (``diff --json``, ``ab --json``)."""
    paths = args.profiles
    if len(paths) > 2:
        raise UsageError("html: give one profile, two (base new), or one comparison JSON")
    if len(paths) == 2:
        base, new = _load(paths[0]), _load(paths[1])
        write_html(new, args.out, compare(base.functions, new.functions))
    else:
        try:
            doc = json.loads(Path(paths[0]).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise UsageError(f"no such file: {paths[0]}") from None
        if isinstance(doc, dict) and "entries" in doc and "schema_version" not in doc:
            write_html(None, args.out, doc)
        else:
            write_html(_load(paths[0]), args.out)
    print(f"graphc-prof: wrote {args.out}", file=sys.stderr)
    return 0


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
        return _gate(args, [_load(args.base).functions], [_load(args.new).functions])
    if args.cmd == "ab":
        return cmd_ab(args)
    if args.cmd == "trace":
        _load(args.profile).to_chrome_trace(args.out)
        return 0
    if args.cmd == "pprof":
        write_pprof(_load(args.profile), args.out)
        return 0
    if args.cmd == "html":
        return cmd_html(args)
    if args.cmd == "graph":
        write_graph(_load(args.profile), args.out)
        return 0
    return 2  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
