"""What a user's installer and type checker see: license, classifiers, one version, py.typed.

The built wheel itself is inspected by ``.ci/run`` (step ``package``); these checks read the
sources the wheel is built from.
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

import trisect
from trisect.cli import main

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_license_is_the_apache_2_text_pyproject_declares() -> None:
    project = PROJECT["project"]
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.lstrip().startswith("Apache License\n                           Version 2.0, January 2004")
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "END OF TERMS AND CONDITIONS" in text and len(text) > 11000


def test_classifiers_say_what_the_package_is() -> None:
    classifiers = PROJECT["project"]["classifiers"]
    assert "Typing :: Typed" in classifiers
    assert not [c for c in classifiers if c.startswith("License ::")]  # PEP 639: the SPDX string says it
    requires = PROJECT["project"]["requires-python"]
    assert requires == ">=3.10"
    versions = sorted(c.rsplit(" ", 1)[1] for c in classifiers if c.startswith("Programming Language :: Python :: 3."))
    assert versions[0] == "3.10"


def test_the_package_is_typed() -> None:
    assert (ROOT / "src" / "trisect" / "py.typed").is_file()
    assert "py.typed" in PROJECT["tool"]["setuptools"]["package-data"]["trisect"]


def test_one_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert PROJECT["project"]["dynamic"] == ["version"]
    assert PROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "trisect.__version__"}
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"], out=io.StringIO())
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"trisect {trisect.__version__}\n"
    run = subprocess.run([sys.executable, "-m", "trisect", "--version"], capture_output=True, text=True, check=True)
    assert run.stdout == f"trisect {trisect.__version__}\n"
