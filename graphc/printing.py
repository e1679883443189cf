"""Printing graphs: ``debugprint`` (Theano's tree view), ``pprint`` (math-like) and DOT."""

from __future__ import annotations

import shutil
import subprocess
import sys
from typing import Any

from graphc.graph.basic import Apply, Constant, Variable, io_toposort
from graphc.graph.fg import FunctionGraph

__all__ = ["debugprint", "dprint", "pprint", "render_dot", "to_dot"]


# ------------------------------------------------------------------ debugprint


def char_from_number(number: int) -> str:
    """0 -> 'A', 25 -> 'Z', 26 -> 'BA' (Theano's base-26 ids)."""
    digits = []
    while True:
        number, r = divmod(number, 26)
        digits.append(chr(ord("A") + r))
        if number == 0:
            break
    return "".join(reversed(digits))


class _Ids:
    def __init__(self, kind: str, done: dict | None):
        if kind not in ("CHAR", "id", "int", ""):
            raise ValueError(f"debugprint: ids must be 'CHAR', 'id', 'int' or '', got {kind!r}")
        self.kind = kind
        self.done = {} if done is None else done

    def get(self, obj) -> str:
        if obj in self.done:
            return self.done[obj]
        if self.kind == "CHAR":
            s = char_from_number(len(self.done))
        elif self.kind == "int":
            s = str(len(self.done))
        elif self.kind == "id":
            s = str(id(obj))
        else:
            s = ""
        self.done[obj] = s
        return s


def _roots(obj) -> tuple[list[Variable], list[Apply] | None]:
    """The Variables to print and, for function graphs, the toposort used for indices."""
    fg = getattr(getattr(obj, "maker", None), "fgraph", None)
    if fg is not None:
        obj = fg
    if isinstance(obj, FunctionGraph):
        return list(obj.outputs), obj.toposort()
    if isinstance(obj, Variable):
        return [obj], None
    if isinstance(obj, Apply):
        return list(obj.outputs), None
    if isinstance(obj, list | tuple) and all(isinstance(v, Variable | Apply) for v in obj):
        out: list[Variable] = []
        for v in obj:
            out.extend(v.outputs if isinstance(v, Apply) else [v])
        return out, None
    raise TypeError(
        f"debugprint: cannot print {type(obj).__name__}; pass a Variable, a list of Variables, "
        "an Apply, a FunctionGraph or a compiled function"
    )


def debugprint(
    obj: Any,
    file: Any = None,
    ids: str = "CHAR",
    print_type: bool = False,
    depth: int = -1,
    done: dict | None = None,
    print_destroy_map: bool = False,
    print_view_map: bool = False,
):
    """Print the graph of ``obj`` as an indented tree, one line per Variable.

    An Apply node reached a second time is printed as its header line only (same id), so
    shared sub-graphs appear once. ``file="str"`` returns the text; ``file=None`` prints to
    stdout. For a FunctionGraph (or compiled function) each node line ends with its position
    in the topological order.
    """
    roots, order = _roots(obj)
    pos = {node: i for i, node in enumerate(order)} if order is not None else None
    idmap = _Ids(ids, done)
    lines: list[str] = []
    expanded: set = set()
    for r in roots:
        _dp(r, "", "", depth, idmap, expanded, lines, pos, print_type, print_destroy_map,
            print_view_map)  # fmt: skip
    text = "\n".join(lines) + ("\n" if lines else "")
    if file == "str":
        return text
    stream = sys.stdout if file is None else file
    stream.write(text)
    return stream


def _type_str(v: Variable, print_type: bool) -> str:
    return f" <{v.type}>" if print_type else ""


def _dp(v, prefix, prefix_child, depth, idmap, expanded, lines, pos, print_type,
        print_destroy_map, print_view_map) -> None:  # fmt: skip
    """Pre-order walk with an explicit stack (graphs can be deeper than Python's
    recursion limit)."""
    stack = [(v, prefix, prefix_child, depth)]
    while stack:
        v, prefix, prefix_child, depth = stack.pop()
        if depth == 0:
            continue
        node = v.owner
        id_str = f" [id {idmap.get(node if node is not None else v)}]" if idmap.kind else ""
        if node is None:
            lines.append(f"{prefix}{_leaf_name(v)}{id_str}{_type_str(v, print_type)}")
            continue
        op = node.op
        name = str(op) if len(node.outputs) == 1 else f"{op}.{v.index}"
        extra = ""
        if print_destroy_map and getattr(op, "destroy_map", None):
            extra += f" d={dict(op.destroy_map)}"
        if print_view_map and getattr(op, "view_map", None):
            extra += f" v={dict(op.view_map)}"
        if pos is not None and node in pos:
            extra += f" {pos[node]}"
        vname = f" '{v.name}'" if v.name else " ''"
        lines.append(f"{prefix}{name}{id_str}{vname}{_type_str(v, print_type)}{extra}")
        if node in expanded:
            continue
        expanded.add(node)
        children = []
        for k, inp in enumerate(node.inputs):
            last = k == len(node.inputs) - 1
            children.append(
                (inp, prefix_child + " |", prefix_child + ("  " if last else " |"), depth - 1)
            )
        stack.extend(reversed(children))


def _leaf_name(v: Variable) -> str:
    if v.name is not None:
        return v.name
    if isinstance(v, Constant):
        return str(v)
    return f"<{v.type}>"


dprint = debugprint


# ------------------------------------------------------------------ pprint

_BINARY = {
    "add": "+", "sub": "-", "mul": "*", "true_div": "/", "int_div": "//", "mod": "%",
    "pow": "**", "eq": "==", "neq": "!=", "lt": "<", "gt": ">", "le": "<=", "ge": ">=",
    "and": "&", "or": "|", "xor": "^",
}  # fmt: skip
_UNARY = {"neg": "-", "invert": "~"}
_REDUCE = {"add": "sum", "mul": "prod", "maximum": "max", "minimum": "min", "and": "all",
           "or": "any"}  # fmt: skip


def pprint(obj) -> str:
    """A compact math-like rendering: ``(x + (y * 2.0))``, ``exp(x)``, ``sum(x, axis=[1])``.

    Accepts a Variable, a list of Variables or a FunctionGraph (one line per output).
    """
    if isinstance(obj, FunctionGraph) or hasattr(getattr(obj, "maker", None), "fgraph"):
        fg = obj if isinstance(obj, FunctionGraph) else obj.maker.fgraph
        return "\n".join(_pp(o, {}) for o in fg.outputs)
    if isinstance(obj, list | tuple):
        return "\n".join(_pp(o, {}) for o in obj)
    if not isinstance(obj, Variable):
        raise TypeError(f"pprint: expected a Variable, got {type(obj).__name__}")
    return _pp(obj, {})


def _pp(v: Variable, memo: dict) -> str:
    if v in memo:
        return memo[v]
    memo[v] = s = _pp_uncached(v, memo)
    return s


def _pp_uncached(v: Variable, memo: dict) -> str:
    node = v.owner
    if node is None:
        if v.name is not None:
            return v.name
        if isinstance(v, Constant):
            import numpy as np

            data = np.asarray(v.data)
            if data.ndim == 0 or (data.size == 1 and data.ndim <= 1):
                return str(data.reshape(-1)[0].item()) if data.ndim else str(data.item())
            return str(data.tolist()) if data.size <= 8 else str(v)
        return f"<{v.type}>"
    op = node.op
    args = [_pp(i, memo) for i in node.inputs]
    cls = type(op).__name__
    if cls == "Elemwise":
        sop = op.scalar_op
        name = sop.name
        if name in _BINARY and len(args) >= 2:
            return "(" + f" {_BINARY[name]} ".join(args) + ")"
        if name in _UNARY:
            return f"{_UNARY[name]}{args[0]}"
        if name.startswith("convert_to_"):
            return f"cast({args[0]}, {name[len('convert_to_') :]!r})"
        if name == "round_half_to_even":
            name = "round"
        return f"{name}({', '.join(args)})"
    if cls == "CAReduce":
        fn = _REDUCE.get(op.scalar_op.name, op.scalar_op.name)
        return f"{fn}({args[0]}, axis={list(op.axis)})"
    if cls == "DimShuffle":
        inp = node.inputs[0]
        n_lead = len(op.new_order) - inp.ndim
        if n_lead >= 0 and list(op.new_order) == ["x"] * n_lead + list(range(inp.ndim)):
            return args[0]  # leading broadcast axes only: implicit in the math form
        if op.is_transpose and inp.ndim == 2 and op.new_order == (1, 0):
            return f"{_atom(args[0])}.T"
        order = ", ".join(repr(o) if o == "x" else str(o) for o in op.new_order)
        return f"{_atom(args[0])}.dimshuffle({order})"
    if cls in ("Subtensor", "AdvancedSubtensor"):
        from graphc.tensor.subtensor import format_index

        return f"{_atom(args[0])}[{format_index(op.idx_list, args[1:])}]"
    if cls == "AdvancedSubtensor1":
        return f"{_atom(args[0])}[{args[1]}]"
    if cls in ("IncSubtensor", "AdvancedIncSubtensor", "AdvancedIncSubtensor1"):
        fn = "set_subtensor" if op.set_instead_of_inc else "inc_subtensor"
        if cls == "AdvancedIncSubtensor1":
            idx = args[2]
        else:
            from graphc.tensor.subtensor import format_index

            idx = format_index(op.idx_list, args[2:])
        return f"{fn}({_atom(args[0])}[{idx}], {args[1]})"
    if cls == "Shape":
        return f"{_atom(args[0])}.shape"
    if cls == "Shape_i":
        return f"{_atom(args[0])}.shape[{op.i}]"
    if cls == "Reshape":
        return f"reshape({args[0]}, {args[1]})"
    if cls == "MakeVector":
        return "[" + ", ".join(args) + "]"
    if cls in ("Dot", "Dot22"):
        return f"({args[0]} @ {args[1]})"
    head = str(op)
    if len(node.outputs) > 1:
        head = f"{head}.{v.index}"
    return f"{head}({', '.join(args)})"


def _atom(s: str) -> str:
    """``s`` wrapped in parentheses when it has a top-level space or a leading sign."""
    depth = 0
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == " " and depth == 0:
            return f"({s})"
    return f"({s})" if s[:1] in "-~" else s


# ------------------------------------------------------------------ DOT


def _esc(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def to_dot(obj, name: str = "G") -> str:
    """Graphviz DOT text: one box per Variable, one ellipse per Apply node.

    Edges go input -> apply -> output; an input the node overwrites (``destroy_map``) is drawn
    bold red with the label ``destroyed``, an input an output views (``view_map``) dashed
    blue with the label ``view``. Graph inputs are green, outputs blue, constants grey.
    """
    roots, _ = _roots(obj)
    fg = getattr(getattr(obj, "maker", None), "fgraph", None) or (
        obj if isinstance(obj, FunctionGraph) else None
    )
    nodes = io_toposort([], roots) if fg is None else fg.toposort()
    var_ids: dict[Variable, str] = {}
    lines = [f"digraph {name} {{", "  rankdir=TB;", '  node [fontname="Helvetica"];']
    outs = set(roots)

    def var(v: Variable) -> str:
        if v in var_ids:
            return var_ids[v]
        vid = var_ids[v] = f"v{len(var_ids)}"
        text = v.name if v.name is not None else (str(v) if isinstance(v, Constant) else "")
        label = f"{_esc(text)}\\n{_esc(str(v.type))}" if text else _esc(str(v.type))
        attrs = ["shape=box"]
        if isinstance(v, Constant):
            attrs += ["style=filled", "fillcolor=lightgrey"]
        elif v.owner is None:
            attrs += ["style=filled", "fillcolor=palegreen"]
        elif v in outs:
            attrs += ["style=filled", "fillcolor=lightblue"]
        lines.append(f'  {vid} [label="{label}", {", ".join(attrs)}];')
        return vid

    for k, node in enumerate(nodes):
        aid = f"a{k}"
        lines.append(f'  {aid} [label="{_esc(str(node.op))}", shape=ellipse];')
        destroyed = {i for ins in getattr(node.op, "destroy_map", {}).values() for i in ins}
        viewed = {i for ins in getattr(node.op, "view_map", {}).values() for i in ins}
        for i, inp in enumerate(node.inputs):
            vid = var(inp)
            attrs = [f'label="{i}"'] if len(node.inputs) > 1 else []
            if i in destroyed:
                attrs = [f'label="{i} destroyed"', "color=red", "style=bold"]
            elif i in viewed:
                attrs = [f'label="{i} view"', "color=blue", "style=dashed"]
            lines.append(f"  {vid} -> {aid}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";")
        for out in node.outputs:
            lines.append(f"  {aid} -> {var(out)};")
    for r in roots:
        var(r)
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_dot(dot_text: str, path: str, format: str = "svg") -> str:
    """Render DOT text to ``path`` with Graphviz's ``dot`` program; returns ``path``."""
    exe = shutil.which("dot")
    if exe is None:
        raise RuntimeError(
            "Graphviz's `dot` program was not found on PATH; install graphviz "
            "(e.g. `apt-get install graphviz` or `conda install graphviz`) to render graphs"
        )
    proc = subprocess.run(
        [exe, f"-T{format}", "-o", str(path)], input=dot_text, text=True, capture_output=True
    )
    if proc.returncode != 0:
        raise RuntimeError(f"dot failed (exit {proc.returncode}): {proc.stderr.strip()}")
    return str(path)


from graphc.tensor.print_op import Print  # noqa: E402,F401  (graphc.printing.Print, Theano's)
