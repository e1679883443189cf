"""``scan``: loops in the graph, with gradients through them (Theano's ``theano.scan``,
importable as ``graphc.scan`` and from ``graphc.scan_module`` as in Theano)."""

from graphc.scan_module import grad as _grad  # noqa: F401 - registers scan's gradient
from graphc.scan_module import rewrites as _rewrites  # noqa: F401 - registers its rewrites
from graphc.scan_module.build import scan, until
from graphc.scan_module.op import Scan, ScanInfo, ScanInner
from graphc.scan_module.views import foldl, foldr, map, reduce

__all__ = ["Scan", "ScanInfo", "ScanInner", "foldl", "foldr", "map", "reduce", "scan", "until"]
