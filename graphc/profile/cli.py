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
    graphc-prof export profile.json --format NAME [-o OUT] [--all-calls] [show's options]
    graphc-prof trace profile.json out.trace.json
    graphc-prof graph profile.json out.svg|out.png|out.pdf|out.dot
    graphc-prof pprof profile.json out.pb.gz
    graphc-prof html profile.json [new.json] -o report.html
        (one profile; two: the second with its comparison to the first; or the JSON of
        ``diff``/``ab --json`` alone)

The export formats (``export --format NAME``, ``run --NAME PATH``, the converting commands
trace, graph, pprof) are the table ``graphc.profile.render.formats.RENDERERS``.

Options of ``run`` (before the script or after its arguments; ``--`` ends them):
    --NAME PATH            write the profile in the export format NAME (listed below:
                           --json, --trace, --svg, --html, --pprof, --csv, --pstats...)
    --trace-capacity N     node events kept per function in a trace
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
from graphc.profile.data.options import SummaryOptions
from graphc.profile.registry import REGISTRY
from graphc.profile.render.base import Renderer, as_text
from graphc.profile.render.compare import render
from graphc.profile.render.formats import RENDERERS
from graphc.profile.render.html import HtmlRenderer
from graphc.profile.stats import ProfileStats, load
from graphc.profile.summaries.compare import Options, Report, compare, compare_runs

#: run's options besides the export formats (``--NAME PATH``): whether each takes a value.
_RUN_OPTIONS = {
    "--trace-capacity": True,
    "--memory": False,
    "--optimizer": False,
    "--summary": False,
    "--full": False,
    "--theano": False,
}


def _run_options() -> dict[str, bool]:
    """Every option of run: one per export format, then ``_RUN_OPTIONS``."""
    return {**{f"--{name}": True for name in RENDERERS}, **_RUN_OPTIONS}


def _run_help() -> str:
    rows = [f"    --{name} PATH".ljust(27) + r.description for name, r in RENDERERS.items()]
    return f"{__doc__}\nExport formats (run --NAME PATH, export --format NAME):\n" + "\n".join(rows)


def _split_run_args(argv: Sequence[str]) -> tuple[dict[str, str | bool], list[str]]:
    """Our options (before the script or after its arguments) and the script's argv.

    Options of graphc-prof may come before the script, or after it; everything else after
    the script is passed to it (use ``--`` to pass a name graphc-prof also knows)."""
    options = _run_options()
    opts: dict[str, str | bool] = {}
    rest: list[str] = []
    it = iter(argv)
    passthrough = False
    for a in it:
        if passthrough:
            rest.append(a)
        elif a == "--":
            passthrough = True
        elif a.split("=", 1)[0] in options:
            key, eq, val = a.partition("=")
            if options[key]:
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
    asked = [r for name, r in RENDERERS.items() if opts.get(f"--{name}")]
    if any(r.needs_trace for r in asked):
        cfg.profile_trace = True
        if opts.get("--trace-capacity"):
            cfg.profiling__trace_capacity = int(opts["--trace-capacity"])
    if asked and not opts.get("--summary"):
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
    """Write every export format run was asked for (``--NAME PATH``)."""
    options = SummaryOptions.from_config()
    for name, r in RENDERERS.items():
        path = opts.get(f"--{name}")
        if path:
            _write(r, stats, str(path), options)


def _write(r: Renderer, stats: ProfileStats, path: str, options: SummaryOptions) -> None:
    r.write(stats, path, options)
    note = r.note(stats)
    print(f"graphc-prof: wrote {path}" + (f" ({note})" if note else ""), file=sys.stderr)


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


def _summary_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--n-apply", type=int, default=None, help="Apply rows (profiling__n_apply)")
    p.add_argument("--n-ops", type=int, default=None, help="Class/Op rows (profiling__n_ops)")
    p.add_argument("--full", action="store_true", help="every row of every table")
    p.add_argument("--width", type=int, default=None, help="columns (default: terminal, 100)")
    p.add_argument("--memory", action="store_true", default=None)
    p.add_argument("--optimizer", action="store_true", default=None)


def _options(args: argparse.Namespace) -> SummaryOptions:
    everything = sys.maxsize if args.full else None
    return SummaryOptions.from_config(
        n_apply_to_print=everything or args.n_apply,
        n_ops_to_print=everything or args.n_ops,
        memory=args.memory,
        optimizer=args.optimizer,
        all_calls=getattr(args, "all_calls", None),
        width=args.width,
    )


def _commands() -> dict[str, list[Renderer]]:
    """The converting commands (``COMMAND profile.json OUT``) and their formats."""
    out: dict[str, list[Renderer]] = {}
    for r in RENDERERS.values():
        if r.command:
            out.setdefault(r.command, []).append(r)
    return out


def _command_help(formats: Sequence[Renderer]) -> str:
    if len(formats) == 1:
        return f"{formats[0].description}, from a profile JSON"
    suffixes = ", ".join(r.extension for r in formats)
    return f"{formats[0].description} or the same drawn ({suffixes}, by OUT's suffix)"


def _for_file(formats: Sequence[Renderer], out: str) -> Renderer:
    """The one format, or the one whose suffix ``out`` has."""
    if len(formats) == 1:
        return formats[0]
    for r in formats:
        if out.lower().endswith(r.extension):
            return r
    suffixes = ", ".join(r.extension for r in formats)
    raise UsageError(f"cannot tell the format of {out!r}: use a name ending in {suffixes}")


def cmd_export(args: argparse.Namespace) -> int:
    """Write a saved profile in ``--format`` to ``--out`` (standard output without)."""
    r = RENDERERS[args.format]
    stats, options = _load(args.profile), _options(args)
    if args.out:
        _write(r, stats, args.out, options)
        return 0
    doc = stats.output(r, options)
    if isinstance(doc, bytes):
        sys.stdout.buffer.write(doc)
    else:
        sys.stdout.write(doc)
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="graphc-prof", description="graphc profiles")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("run", help="profile every function a script compiles", add_help=False)
    s = sub.add_parser("show", help="print the text summary of a profile JSON")
    s.add_argument("profile")
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
    _summary_options(s)
    e = sub.add_parser("export", help="write a profile JSON in another format")
    e.add_argument("profile")
    e.add_argument("--format", required=True, choices=list(RENDERERS), help="export format")
    e.add_argument("-o", "--out", help="file to write (default: standard output)")
    e.add_argument("--all-calls", action="store_true", default=None,
                   help="count the first calls too (profiling__all_calls)")  # fmt: skip
    _summary_options(e)
    for command, formats in _commands().items():
        c = sub.add_parser(command, help=_command_help(formats))
        c.add_argument("profile")
        c.add_argument("out")
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
        report: Report | dict | None = compare(base.functions, new.functions)
        stats = new
    else:
        try:
            doc = json.loads(Path(paths[0]).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise UsageError(f"no such file: {paths[0]}") from None
        if isinstance(doc, dict) and "entries" in doc and "schema_version" not in doc:
            stats, report = ProfileStats(), doc  # a comparison alone
        else:
            stats, report = _load(paths[0]), None
    _write(HtmlRenderer(report), stats, args.out, SummaryOptions.from_config())
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
            print(_run_help())
            return 0
        return cmd_run(argv[1:])
    args = _parser().parse_args(argv)
    if args.cmd == "show":
        sys.stdout.write(as_text(_load(args.profile).output(RENDERERS["text"], _options(args))))
        return 0
    if args.cmd == "diff":
        return _gate(args, [_load(args.base).functions], [_load(args.new).functions])
    if args.cmd == "ab":
        return cmd_ab(args)
    if args.cmd == "html":
        return cmd_html(args)
    if args.cmd == "export":
        return cmd_export(args)
    formats = _commands().get(args.cmd)
    if formats:
        r = _for_file(formats, args.out)
        r.write(_load(args.profile), args.out, SummaryOptions.from_config())
        return 0
    return 2  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
