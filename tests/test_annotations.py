"""How much of graphc's signatures the type checker can see: at least 90% of all function
parameters (``self`` and ``cls`` aside, ``*args`` and ``**kwargs`` included) carry an
annotation, counted with ``ast`` over every ``.py`` file under graphc/.

The Op protocol is held to more: every ``make_node`` parameter is annotated.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "graphc"
MIN_ANNOTATED_SHARE = 0.90


def parameters(source: str) -> list[tuple[str, str, bool]]:
    """``(function, parameter, annotated)`` for each parameter of each function in ``source``,
    nested functions and lambdas' enclosing functions included (lambdas cannot be annotated
    and are not counted)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        a = node.args
        params = [*a.posonlyargs, *a.args, *a.kwonlyargs]
        params += [p for p in (a.vararg, a.kwarg) if p is not None]
        for p in params:
            if p.arg in ("self", "cls"):
                continue
            out.append((node.name, p.arg, p.annotation is not None))
    return out


def package_parameters(root: Path = PACKAGE) -> dict[str, list[tuple[str, str, bool]]]:
    return {
        p.relative_to(root).as_posix(): parameters(p.read_text(encoding="utf-8"))
        for p in sorted(root.rglob("*.py"))
    }


def test_counter_sees_every_kind_of_parameter():
    src = (
        "def f(a, /, b: int, *args, c=1, d: str = '', **kw: int): pass\n"
        "class C:\n"
        "    def m(self, x: float, y): pass\n"
        "    @classmethod\n"
        "    def k(cls, z): pass\n"
        "async def g(q: int): pass\n"
        "def outer():\n"
        "    def inner(w): pass\n"
    )
    got = parameters(src)
    assert sorted(got) == sorted(
        [
            ("f", "a", False),
            ("f", "b", True),
            ("f", "args", False),
            ("f", "c", False),
            ("f", "d", True),
            ("f", "kw", True),
            ("m", "x", True),
            ("m", "y", False),
            ("k", "z", False),
            ("g", "q", True),
            ("inner", "w", False),
        ]
    )


def test_counter_matches_inspect_on_a_real_module():
    # An independent count of the same thing: inspect's signatures of graphc.printing's
    # module-level functions (the module has annotated and unannotated parameters).
    import inspect

    import graphc.printing as mod

    tree = ast.parse(Path(mod.__file__).read_text(encoding="utf-8"))
    top = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    by_ast = {(f, p): ok for f, p, ok in parameters(ast.unparse(ast.Module(top, [])))}
    by_inspect = {}
    for fn in top:
        for p in inspect.signature(getattr(mod, fn.name)).parameters.values():
            by_inspect[(fn.name, p.name)] = p.annotation is not inspect.Parameter.empty
    # the nested functions are ast's alone; compare the top-level ones
    by_ast = {k: v for k, v in by_ast.items() if k[0] in {fn.name for fn in top}}
    assert len(set(by_inspect.values())) == 2, "pick a module with both kinds"
    assert by_ast == by_inspect


def test_most_parameters_are_annotated():
    per_file = package_parameters()
    total = sum(len(v) for v in per_file.values())
    annotated = sum(ok for v in per_file.values() for _, _, ok in v)
    assert total > 1000, "the counter found too few parameters: is PACKAGE right?"
    share = annotated / total
    worst = sorted(per_file, key=lambda f: -sum(not ok for _, _, ok in per_file[f]))[:5]
    assert share >= MIN_ANNOTATED_SHARE, (
        f"{annotated}/{total} = {share:.1%} of graphc's parameters are annotated, below "
        f"{MIN_ANNOTATED_SHARE:.0%}; most unannotated in {worst}"
    )


def test_make_node_parameters_are_annotated():
    missing = [
        f"{path}: make_node({p})"
        for path, params in package_parameters().items()
        for f, p, ok in params
        if f == "make_node" and not ok
    ]
    assert not missing, missing
