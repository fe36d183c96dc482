"""The compiled part of the wheel: mypyc compiles the hot path from the package's own .py files.

pyproject.toml holds everything else. Only ``build_wheel`` of ``build_backend/trisect_build.py``
sets TRISECT_COMPILE=1; every other build (editable installs, the sdist, a pure wheel) passes
no extension modules, so setuptools builds a pure-Python package. The wheel keeps every ``.py``
beside its extension module: Python imports the extension, and ``TRISECT_PURE=1`` at run time
(``trisect/native.py``) imports the ``.py`` instead. Without a working C compiler and Python's
headers the build says so on one line and makes the pure-Python wheel.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
# the per-delta and whole-output path: the engine, the argument codecs, the message layer
COMPILED = ("engine", "codecs", "message")
# mypyc's -O level (3: what black and mypy ship with); TRISECT_MYPYC_OPT overrides it for a quick build
OPT_LEVEL = os.environ.get("TRISECT_MYPYC_OPT", "3")
# the shared library of the compiled modules: inside the package (trisect/_native__mypyc), not a
# top-level module named by a hash of the module list
GROUP = "trisect._native"


def say(line: str) -> None:
    print(f"trisect build: {line}", file=sys.stderr, flush=True)


def sources() -> list[str]:
    found = []
    for package in COMPILED:
        for path in sorted((ROOT / "src" / "trisect" / package).glob("*.py")):
            if path.name != "__init__.py":  # the packages' re-exports stay interpreted
                found.append(str(path.relative_to(ROOT)))
    return found


def compiler_missing() -> str | None:
    """Why no extension module can be built here (no C compiler, no Python headers), or None."""
    from distutils.ccompiler import new_compiler
    from distutils.errors import CCompilerError, DistutilsError
    from distutils.sysconfig import customize_compiler

    include = sysconfig.get_paths()["include"]
    if not (Path(include) / "Python.h").is_file():
        return f"no Python.h in {include} (install Python's development headers)"
    compiler = new_compiler()
    customize_compiler(compiler)
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / "probe.c"
        probe.write_text("#include <Python.h>\nint trisect_probe(void) { return Py_IsInitialized(); }\n")
        try:
            compiler.compile([str(probe)], output_dir=tmp, include_dirs=[include])
        except (CCompilerError, DistutilsError, OSError) as error:
            return f"no working C compiler ({str(error).strip().splitlines()[-1] if str(error).strip() else error})"
    return None


class BuildExt(build_ext):
    """build_ext that falls back to pure Python if compiling fails after all (the probe passed)."""

    def run(self) -> None:
        from distutils.errors import CCompilerError, DistutilsError

        try:
            super().run()
        except (CCompilerError, DistutilsError, OSError) as error:
            say(f"compiling failed ({error}); this wheel is PURE PYTHON (the .py files, same behaviour, slower)")
            self.distribution.ext_modules = []


def ext_modules() -> list[object]:
    if os.environ.get("TRISECT_COMPILE") != "1":
        if os.environ.get("TRISECT_COMPILE") == "0":  # build_wheel, told not to compile
            say("TRISECT_PURE=1 or not CPython: building the PURE PYTHON wheel (nothing compiled)")
        return []
    missing = compiler_missing()
    if missing:
        say(f"{missing}: building the PURE PYTHON wheel (same behaviour, slower; nothing compiled)")
        return []
    from mypyc.build import mypycify

    paths = sources()
    say(f"compiling {len(paths)} modules with mypyc (-O{OPT_LEVEL}): {', '.join(COMPILED)}")
    return list(mypycify(paths, opt_level=OPT_LEVEL, strip_asserts=False, group_name=GROUP))


if __name__ == "__main__":  # setuptools' backend runs this file as __main__; tests import it
    setup(ext_modules=ext_modules(), cmdclass={"build_ext": BuildExt})
