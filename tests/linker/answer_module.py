"""A tiny C extension for the compile-cache tests, and the environment of child processes
that import graphc from this checkout."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SRC = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
static PyObject *answer(PyObject *self, PyObject *args) { return PyLong_FromLong(42); }
static PyMethodDef methods[] = {
    {"answer", answer, METH_NOARGS, "the answer"}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "graphc_test", NULL, -1, methods};
PyMODINIT_FUNC GRAPHC_INIT(void) { return PyModule_Create(&def); }
"""


def variant(tag: str) -> str:
    """SRC with a distinguishing comment: a different key, the same behaviour."""
    return f"/* {tag} */\n{SRC}"


def child_env(**extra: str) -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, **extra}
