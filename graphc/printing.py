"""Printing graphs: ``debugprint`` (Theano's tree view), ``pprint`` (math-like) and DOT."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from graphc.graph.basic import (
    Apply,
    Constant,
    Variable,
    io_toposort,
)
from graphc.graph.fg import FunctionGraph, HasFunctionGraph
from graphc.graph.rules import RuleTable

if TYPE_CHECKING:
    from graphc.graph.basic import Op

__all__ = ["debugprint", "dprint", "pprint", "register_pprint", "render_dot", "to_dot"]


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
    if isinstance(obj, HasFunctionGraph):
        obj = obj.fgraph
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
    loops = _nodes_with_inner_graphs(roots)
    if loops:
        lines += ["", "Inner graphs of the scan ops:"]
    while loops:  # Theano's layout: each loop's step outputs, marked with ">"
        node = loops.pop(0)
        lines += ["", f"{node.op} [id {idmap.get(node)}]"]
        inputs, outputs = node.op.inner_graph()
        for out in outputs:
            _dp(out, " >", " >", depth, idmap, expanded, lines, None, print_type,
                print_destroy_map, print_view_map)  # fmt: skip
        loops += [n for n in _nodes_with_inner_graphs(outputs) if n not in loops]
    text = "\n".join(lines) + ("\n" if lines else "")
    if file == "str":
        return text
    stream = sys.stdout if file is None else file
    stream.write(text)
    return stream


def _nodes_with_inner_graphs(roots: list) -> list:
    """Apply nodes above ``roots`` whose Op runs a graph of its own (``inner_graph()``)."""
    found, seen, stack = [], set(), list(roots)
    while stack:
        v = stack.pop()
        node = getattr(v, "owner", None)
        if node is None or node in seen:
            continue
        seen.add(node)
        if hasattr(node.op, "inner_graph"):
            found.append(node)
        stack.extend(node.inputs)
    return found


def _type_str(v: Variable, print_type: bool) -> str:
    return f" <{v.type}>" if print_type else ""


def _dp(v: Variable, prefix: str, prefix_child: str, depth: int, idmap: _Ids, expanded: set,
        lines: list[str], pos: dict[Apply, int] | None, print_type: bool,
        print_destroy_map: bool, print_view_map: bool) -> None:  # fmt: skip
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

PprintRule = Callable[[Any, Apply, Variable, list[str]], str]
PPRINT_RULES: RuleTable[PprintRule] = RuleTable("pprint")
"""Per-Op-class rules ``rule(op, node, var, arg_texts) -> text``; the layer that defines an
Op registers its rule (``graphc.tensor`` registers the tensor Ops')."""


def register_pprint(*op_classes: type) -> Callable[[PprintRule], PprintRule]:
    """Decorator: use the decorated function to print nodes of ``op_classes``."""

    return PPRINT_RULES.register(*op_classes)


def _rule_for(op: Op) -> PprintRule | None:
    return PPRINT_RULES.get(op)


def pprint(obj) -> str:
    """A compact math-like rendering: ``(x + (y * 2.0))``, ``exp(x)``, ``sum(x, axis=[1])``.

    Accepts a Variable, a list of Variables or a FunctionGraph (one line per output). A
    sub-expression used more than once is printed once, under a name (``%0``), in a
    ``where`` block after the expressions, so a DAG prints in size linear in its nodes.
    """
    if isinstance(obj, FunctionGraph | HasFunctionGraph):
        fg = obj if isinstance(obj, FunctionGraph) else obj.fgraph
        roots = list(fg.outputs)
    elif isinstance(obj, list | tuple):
        roots = list(obj)
    elif isinstance(obj, Variable):
        roots = [obj]
    else:
        raise TypeError(f"pprint: expected a Variable, got {type(obj).__name__}")
    return _Pprinter(roots).render()


class _Pprinter:
    """Renders nodes in topological order (no recursion, so any depth prints)."""

    def __init__(self, roots: list[Variable]):
        self.roots = roots
        self.nodes = io_toposort([], roots)
        self.uses: dict[Variable, int] = {}
        for node in self.nodes:
            for v in node.inputs:
                self.uses[v] = self.uses.get(v, 0) + 1
        self.text: dict[Variable, str] = {}
        self.bindings: list[str] = []

    def render(self) -> str:
        for node in self.nodes:
            args = [self._get(v) for v in node.inputs]
            rule = _rule_for(node.op)
            for out in node.outputs:
                expr = rule(node.op, node, out, args) if rule else _default_rule(node, out, args)
                self.text[out] = self._maybe_bind(out, expr)
        lines = [self._get(r) for r in self.roots]
        if self.bindings:
            lines.append("where " + "\n      ".join(self.bindings))
        return "\n".join(lines)

    def _get(self, v: Variable) -> str:
        s = self.text.get(v)
        if s is None:
            s = self.text[v] = _leaf_text(v)
        return s

    def _maybe_bind(self, v: Variable, expr: str) -> str:
        if self.uses.get(v, 0) < 2 or _is_simple(expr):
            return expr
        name = f"%{len(self.bindings)}"
        self.bindings.append(f"{name} = {expr}")
        return name


def _is_simple(expr: str) -> bool:
    return len(expr) <= 12 and " " not in expr


def _leaf_text(v: Variable) -> str:
    if v.owner is not None:
        raise AssertionError(f"{v} printed before its node")
    if v.name is not None:
        return v.name
    if isinstance(v, Constant):
        import numpy as np

        data = np.asarray(v.data)
        if data.ndim == 0 or (data.size == 1 and data.ndim <= 1):
            return str(data.reshape(-1)[0].item()) if data.ndim else str(data.item())
        return str(data.tolist()) if data.size <= 8 else str(v)
    return f"<{v.type}>"


def _default_rule(node: Apply, v: Variable, args: list[str]) -> str:
    head = str(node.op)
    if len(node.outputs) > 1:
        head = f"{head}.{v.index}"
    return f"{head}({', '.join(args)})"


def atom(s: str) -> str:
    """``s`` wrapped in parentheses when it has a top-level space or a leading sign."""
    if s[:1] in "-~":
        return f"({s})"
    if " " not in s:
        return s
    depth = 0
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == " " and depth == 0:
            return f"({s})"
    return s


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
    fg = (
        obj.fgraph
        if isinstance(obj, HasFunctionGraph)
        else (obj if isinstance(obj, FunctionGraph) else None)
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
