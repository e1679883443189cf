"""Build graphc: the Python package plus the Cython stack VM extension."""

from pathlib import Path

from setuptools import setup

ext_modules = []
here = Path(__file__).parent
# the stack VM and the loop driver of scan nodes
sources = [here / "graphc" / "vm" / name for name in ("_cvm.pyx", "_loop.pyx")]
if all(pyx.exists() for pyx in sources):
    import numpy
    from Cython.Build import cythonize

    ext_modules = cythonize(
        [str(pyx.relative_to(here)) for pyx in sources],
        compiler_directives={"language_level": 3, "boundscheck": False, "wraparound": False},
        quiet=True,
    )
    for ext in ext_modules:
        ext.include_dirs.append(numpy.get_include())

setup(ext_modules=ext_modules)
