"""The Apply nodes as CSV: one row per node per function (a loop body's nodes under the
body's own function name), for spreadsheets and ``csv.DictReader``."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

from graphc.profile.data.model import FunctionProfile
from graphc.profile.data.options import SummaryOptions
from graphc.profile.data.profiles import ProfileData
from graphc.profile.data.steady import steady_state
from graphc.profile.render.base import Renderer
from graphc.profile.summaries.sampling import scaled
from graphc.profile.summaries.tables import pct

HEADER = (
    "function", "node", "op", "class", "calls", "total_s", "per_call_s",
    "pct_of_function", "source",
)  # fmt: skip


def _rows(fp: FunctionProfile) -> Iterator[list[object]]:
    total = fp.thunk_ns()
    for n in fp.nodes:
        source = n.origins[0].split(" <- ", 1)[0] if n.origins else ""
        per_call = n.ns_total / n.calls / 1e9 if n.calls else 0.0
        yield [fp.name, n.position, n.op_name, n.op_class, n.calls, n.ns_total / 1e9,
               per_call, round(pct(n.ns_total, total), 4), source]  # fmt: skip
        if n.inner is not None:
            yield from _rows(n.inner)


class CsvRenderer(Renderer):
    """One row per Apply node: its function, position, Op, class, calls, seconds in total
    and per call, share of its function's node time (%) and first source line. The first
    calls are left out unless ``options.all_calls``; sampled profiles are scaled up."""

    name = "csv"
    extension = ".csv"
    description = "one CSV row per Apply node (calls, seconds, share, source line)"

    def render(self, stats: ProfileData, options: SummaryOptions) -> str:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(HEADER)
        for fp in stats.functions:
            writer.writerows(_rows(scaled(fp if options.all_calls else steady_state(fp))))
        return out.getvalue()
