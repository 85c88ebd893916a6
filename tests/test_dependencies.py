"""Dependencies: ranges in pyproject.toml (>= the tested minimum, < the next breaking release), so
`pip install kdiagnose` sits beside other tools; exact versions only in requirements/ci.lock, which the
Makefile's install step uses as constraints."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
REQUIREMENTS = [Requirement(r) for r in [*PROJECT["dependencies"], *PROJECT["optional-dependencies"]["dev"]]]


def _lock() -> dict[str, str]:
    out = {}
    for line in (ROOT / "requirements" / "ci.lock").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            out[name.strip().lower().replace("_", "-")] = version.strip()
    return out


@pytest.mark.parametrize("req", REQUIREMENTS, ids=lambda r: r.name)
def test_every_dependency_is_a_range_not_a_pin(req: Requirement) -> None:
    ops = {s.operator for s in req.specifier}
    assert "==" not in ops
    assert ">=" in ops and "<" in ops


@pytest.mark.parametrize("req", REQUIREMENTS, ids=lambda r: r.name)
def test_the_lock_pins_each_dependency_inside_its_range(req: Requirement) -> None:
    lock = _lock()
    name = req.name.lower().replace("_", "-")
    assert name in lock, f"{name} missing from requirements/ci.lock"
    assert req.specifier.contains(lock[name]), f"{name}=={lock[name]} outside {req.specifier}"


def test_the_makefile_installs_with_the_lock_as_constraints() -> None:
    assert "pip install --quiet -c requirements/ci.lock -e '.[dev]'" in (ROOT / "Makefile").read_text()
