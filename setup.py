"""Build graphc: the Python package plus the Cython stack VM extension."""

from pathlib import Path

from setuptools import setup

ext_modules = []
pyx = Path(__file__).parent / "graphc" / "vm" / "_cvm.pyx"
if pyx.exists():
    import numpy
    from Cython.Build import cythonize

    ext_modules = cythonize(
        [str(pyx.relative_to(Path(__file__).parent))],
        compiler_directives={"language_level": 3, "boundscheck": False, "wraparound": False},
        quiet=True,
    )
    for ext in ext_modules:
        ext.include_dirs.append(numpy.get_include())

setup(ext_modules=ext_modules)
