"""Renderers: every export is a ``base.Renderer`` (name, file extension, binary or text,
``render(stats, options)``) and ``formats.RENDERERS`` is their table by name: the text
summary (``text``, with ``loops``' Scan section), the legacy ProfileMode text (``legacy``),
JSON, Chrome traces (``trace``), speedscope, Graphviz (``graphviz``), the HTML report,
pprof, CSV (``csv_table``) and Python's profiler stats (``pstats_file``). Comparison
reports (``compare``) and ``fmt``'s shared formatting sit beside them. Each reads the data
and summaries layers and takes a ``SummaryOptions`` where a layout is chosen."""
