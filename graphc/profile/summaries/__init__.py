"""Pure summaries of profile data, computed once for every renderer: the time tables
(``tables``), memory peaks (``memory``, ``memory_order``), loop nodes (``loops``), differences
(``diff``), tips (``tips``) and noise-aware comparisons (``compare``). They import only the
data layer and each other; the tables and sections of a report are laid out by ``render``."""
