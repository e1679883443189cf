"""Compatibility layers that sit on top of graphc (nothing in graphc imports them)."""
