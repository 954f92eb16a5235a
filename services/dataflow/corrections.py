"""Failures into the model side: correction examples join the next snapshot at a set share.

The curator turns failure traces that have an oracle continuation into correction examples
(the context at the first wrong step, the oracle's action as the target). This module is
the selection: `mix_corrections` adds corrections to a snapshot's regular examples so that
they make up `share` of the result (seeded sample without replacement; all of them, and the
lower effective share reported, when there are too few), each row marked in `origin`.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass

import pyarrow as pa

__all__ = ["DEFAULT_SHARE", "MixReport", "corrections_needed", "mix_corrections"]

logger = logging.getLogger(__name__)

#: A fifth of the snapshot: enough to move the model off its failure modes without drowning
#: the regular demonstrations (the trainer issue's default; configurable per run).
DEFAULT_SHARE = 0.2
ORIGIN_COLUMN = "origin"


@dataclass(frozen=True)
class MixReport:
    regular: int
    corrections_available: int
    corrections_used: int
    share_wanted: float

    @property
    def share(self) -> float:
        total = self.regular + self.corrections_used
        return self.corrections_used / total if total else 0.0


def corrections_needed(regular: int, share: float) -> int:
    """How many corrections make them `share` of regular + corrections."""
    if not 0.0 <= share < 1.0:
        raise ValueError(f"the corrections share must be in [0, 1), got {share}")
    return round(share * regular / (1.0 - share))


def mix_corrections(examples: pa.Table, corrections: pa.Table, share: float = DEFAULT_SHARE,
                    *, seed: int = 0, mark: str | None = ORIGIN_COLUMN,
                    ) -> tuple[pa.Table, MixReport]:
    """`examples` plus a seeded sample of `corrections` making up `share` of the rows, with a
    `mark` column ('example' or 'correction'; None: no column, for tables that already say,
    like the curator's `kind`). The two tables must share their columns."""
    if set(examples.column_names) != set(corrections.column_names):
        missing = sorted(set(examples.column_names) ^ set(corrections.column_names))
        raise ValueError(f"corrections and examples differ in columns {missing}; build both "
                         "with the curator's example schema")
    want = corrections_needed(examples.num_rows, share)
    picked = sorted(random.Random(seed).sample(range(corrections.num_rows),
                                               min(want, corrections.num_rows)))
    chosen = corrections.select(examples.column_names).take(pa.array(picked, pa.int64()))
    report = MixReport(regular=examples.num_rows, corrections_available=corrections.num_rows,
                       corrections_used=len(picked), share_wanted=share)
    if len(picked) < want:
        logger.info("only %d corrections for a wanted %d: effective share %.3f", len(picked),
                    want, report.share)
    if mark is None:
        return pa.concat_tables([examples, chosen]), report
    mixed = pa.concat_tables([
        examples.append_column(mark, pa.array(["example"] * examples.num_rows)),
        chosen.append_column(mark, pa.array(["correction"] * chosen.num_rows)),
    ])
    return mixed, report
