"""`evaluate` on the sim: an episode a device error ends counts in overall, and the faults are
reported beside it with the score excluding them."""

from __future__ import annotations

import pytest

from devices.suite.evaluate import evaluate


def test_an_episode_a_device_error_ends_counts_in_overall_and_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    from devices import sim
    from devices.protocol import DeviceLost

    class DroppingPhone(sim.SimPhone):
        """Drops off on the first action of every other episode."""

        resets = 0

        def reset(self, task):  # type: ignore[no-untyped-def]
            type(self).resets += 1
            return super().reset(task)

        def act(self, action):  # type: ignore[no-untyped-def]
            if type(self).resets % 2 == 0:
                raise DeviceLost("the phone dropped off (injected)")
            return super().act(action)

    monkeypatch.setattr(sim, "SimPhone", DroppingPhone)
    report = evaluate("oracle", "dev", n_per_template=1, progress=False)
    assert report.episodes // 4 < report.faults < report.episodes  # roughly every other episode
    assert report.fault_share == report.faults / report.episodes
    assert report.overall < report.overall_excluding_faults == pytest.approx(1.0, abs=0.02)
