"""Fixtures for harness tests: a SimPhone inside the default harness, reset to a plain task."""

from __future__ import annotations

import pytest

from devices.harness.harness import Harness
from devices.sim.phone import SimPhone
from tests.devices.sim.conftest import make_task


@pytest.fixture
def phone() -> Harness:
    harness = Harness(SimPhone())
    harness.reset(make_task())
    return harness
