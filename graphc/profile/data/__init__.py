"""Plain profile data: the records the VM and the compile steps fill (``model``), their
container (``profiles.ProfileData``), adding (``merge``), the steady state (``steady``), JSON
(``serialize``), the VM stats adapter (``vmstats``) and ``options.SummaryOptions``.

Nothing here imports a summary or a renderer (``tests/test_profile_layering.py``)."""
