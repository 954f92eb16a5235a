"""The five lines `flywheel run` ends with: what ran, whether the model improved (with its
interval), where the details are, how to resume, how to review.

The summary table above them has every figure; these lines are what a newcomer reads first.
"Improved" compares the last generation's dev score with the first one's (the base model's,
generation 0, where the run scored it; then the held-out test split's too) and says "improved"
only when the last one's 95% interval lies above the first one's score, "worse" only when it
lies below it, and "no clear change" otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["closing_lines", "verdict"]


def verdict(first: Any, last: Any) -> str:
    """How the last generation's score on a split compares with the first's, with its interval."""
    low, high = last.overall_ci
    if low > first.overall:
        word = "improved"
    elif high < first.overall:
        word = "worse"
    else:
        word = "no clear change"
    return f"{word}: {last.split} {first.overall:.3f} → {last.overall:.3f} [95% CI {low:.3f}, {high:.3f}]"


def closing_lines(*, data_dir: Path, episodes: int | None, snapshot: str | None, rows: int | None,
                  summaries: Sequence[Any], stopped: str | None, base_model: str | None,
                  gate_url: str | None, waiting: int | None, report: Path | None = None) -> list[str]:
    """The five lines (each a plain sentence; the caller prints them)."""
    ran = f"ran {episodes:,} episodes" if episodes is not None else "ran the archive and device runners"
    if snapshot is not None:
        ran += f" into snapshot {snapshot} ({rows:,} rows)" if rows is not None else f" into snapshot {snapshot}"
    trained = [s for s in summaries if s.stage != "base"]
    if trained:
        ran += f", then trained {len(trained)} generation(s) of {base_model}"
    if len(summaries) >= 2:
        first, last = summaries[0], summaries[-1]
        against = "base" if first.stage == "base" else "first generation"
        improved = f"model (last generation against the {against}): " + verdict(first.evaluation, last.evaluation)
        if first.held_out is not None and last.held_out is not None:
            improved += "; held-out templates, " + verdict(first.held_out, last.held_out)
    elif summaries:
        e = summaries[0].evaluation
        improved = (f"model: one generation, dev {e.overall:.3f} [95% CI {e.overall_ci[0]:.3f}, "
                    f"{e.overall_ci[1]:.3f}]; a second one is needed to say whether training helps")
    else:
        improved = "model: not trained in this run" + (f" ({stopped})" if stopped else "")
    details = (f"details: the report {report} (offline HTML), the log {data_dir / 'logs' / 'run.log'}"
               if report is not None else
               f"details: the table above, the log {data_dir / 'logs' / 'run.log'}, and "
               f"`flywheel sql \"SELECT type, count(*) FROM events GROUP BY type\"`")
    resume = ("resume: run `flywheel run` again with the same data dir; finished generations are "
              "reused and a stopped one resumes" + (f" ({stopped})" if stopped else ""))
    if gate_url is not None:
        review = (f"review: {waiting:,} item(s) wait at {gate_url} (or `flywheel review`)"
                  if waiting else f"review: nothing waits; the gate was at {gate_url}")
    else:
        review = "review: `flywheel review` reads the gate's queue in the terminal"
    return [ran, improved, details, resume, review]
