"""Renderers: the text summary (``text``, with ``loops``' Scan section), the legacy
ProfileMode text (``legacy``), comparison reports (``compare``), Chrome traces (``trace``),
speedscope (``speedscope``) and Graphviz (``graphviz``); ``fmt`` holds their shared
formatting. Each reads the data and summaries layers and takes a ``SummaryOptions`` where
a layout is chosen."""
