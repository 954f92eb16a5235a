"""Draws a suite report as a PNG: per-family bars with the weighted overall, and per-template scores."""

from __future__ import annotations

import logging
from pathlib import Path

from devices.suite.evaluate import SuiteReport

__all__ = ["plot_report"]

logger = logging.getLogger(__name__)

#: MobilePA-Bench's family weights, printed under each bar so the overall can be read off.
_WEIGHTS = {"tool": 0.5, "memory": 0.2, "skills": 0.2, "subagent": 0.1}


def plot_report(report: SuiteReport, path: str | Path) -> Path:
    """Writes the report's score chart to `path` (PNG) and returns it."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on servers and in CI
    import matplotlib.pyplot as plt

    families = list(_WEIGHTS)
    names = sorted(report.template_scores,
                   key=lambda n: (families.index(report.template_families[n]), n))
    fig, (left, right) = plt.subplots(
        1, 2, figsize=(14, max(4.0, 0.22 * len(names))),
        gridspec_kw={"width_ratios": [1, 2]})
    family_scores = [getattr(report.scores, f) for f in families]
    bars = left.bar([f"{f}\n×{_WEIGHTS[f]}" for f in families], family_scores,
                    color=["#4c72b0", "#55a868", "#c44e52", "#8172b2"])
    left.bar_label(bars, fmt="%.2f")
    left.axhline(report.overall, color="black", linestyle="--", linewidth=1)  # the overall
    left.set_ylim(0, 1.08)
    left.set_ylabel("score")
    left.set_title(f"{report.policy} on {report.split}: overall {report.overall:.3f} "
                   f"(dashed)\n{report.episodes} episodes")
    colours = {"tool": "#4c72b0", "memory": "#55a868", "skills": "#c44e52", "subagent": "#8172b2"}
    right.barh(names, [report.template_scores[n] for n in names],
               color=[colours[report.template_families[n]] for n in names])
    right.invert_yaxis()
    right.margins(y=0.01)
    right.set_xlim(0, 1)
    right.tick_params(axis="y", labelsize=7)
    right.set_xlabel("score per template")
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out
