"""The one way a test imports a dependency the ``[test]`` extra does not install.

``require("pyarrow", "batch")`` imports the module, or skips the test naming the extra that
installs it (``pip install -e '.[batch]'``). Call it inside the test or a fixture of a heavy
suite, not at import time, so that each test reports the skip and ``CI=true`` turns it into a
failure (``tests/conftest.py``). What ``[test]`` lists is imported plainly: a missing one is a
broken set-up, and a skip would hide it. ``tests/test_extras.py`` holds every test file to this.
"""

from __future__ import annotations

from types import ModuleType

import pytest


def require(module: str, extra: str) -> ModuleType:
    """``module``, or a skip that names the extra installing it."""
    return pytest.importorskip(module, reason=f"{module} is not installed: pip install -e '.[{extra}]'")
