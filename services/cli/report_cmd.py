"""`flywheel report`: one offline HTML file about a data dir's runs, rebuilt from the event archive.

`flywheel run` writes it at `<data dir>/report.html` when it stops; `flywheel report` rebuilds it
at any time (`--out` elsewhere). It needs nothing but the file: styles are inline and the charts
are PNGs embedded as data URIs, so it opens offline and can be mailed. Sections, each read from
the archived events:

- **Scores per generation**: every `eval.reported` of a checkpoint (dev), overall with its 95%
  interval, per family and tier, success, output tokens and tool calls per episode, and the
  general-capability figures when measured; a chart of overall with its interval.
- **Data**: every `dataset.snapshotted` (rows, rows per family and tier, templates, correction rows,
  admission policy).
- **GRPO+CARE**: `rl.group_scored` groups by CARE regime and template.
- **Failures**: `failure.traced` by category, per hour (the taxonomy over time).
- **Review**: `review.requested` and `review.decided` counts by decision and reviewer; from the gate's
  last `review.stats_reported`, trajectories reviewed per hour, gold right and alpha per family.
- **Harness rounds**: proposals, promotions, rejections and vetoes; each promoted change with its
  harness versions, dev and test deltas and how many failure traces motivated it.
"""

from __future__ import annotations

import base64
import html
import io
from collections import Counter, defaultdict
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from services.archiver.query import payloads
from services.cli.archive_cmd import ArchiveOption, fail

__all__ = ["REPORT_FILE", "build_report", "register", "write_report"]

console = Console()
REPORT_FILE = "report.html"
#: The event types the report reads.
REPORTED = ("eval.reported", "dataset.snapshotted", "rl.group_scored", "failure.traced", "review.requested",
            "review.decided", "review.stats_reported", "harness.proposed", "harness.promoted", "harness.rejected", "harness.vetoed",
            "checkpoint.saved", "episode.ended")
STYLE = ("body{font-family:system-ui,sans-serif;margin:2rem;max-width:72rem;color:#222}"
         "table{border-collapse:collapse;margin:.5rem 0 1.5rem}td,th{border:1px solid #ccc;padding:.25rem .5rem;"
         "text-align:right}th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}"
         "h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2rem}.muted{color:#777}")


def _events(files: list[Path]) -> dict[str, list[dict[str, Any]]]:
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for kind, payload in payloads(files, REPORTED):
        by_type[kind].append(payload)
    return by_type


def _by_tier(composition: dict[str, int]) -> str:
    """A snapshot's `family/template/tier` row counts summed per family and tier:
    `memory/easy 25 · memory/hard 108 · …` (the per-template counts are in its manifest)."""
    cells: Counter[str] = Counter()
    for key, rows in composition.items():
        family, tier = key.split("/", 1)[0], key.rsplit("/", 1)[-1]
        cells[f"{family}/{tier}"] += int(rows)
    return " · ".join(f"{cell} {n}" for cell, n in sorted(cells.items()))


def _table(head: list[str], rows: list[list[Any]]) -> str:
    cells = "".join(f"<th>{html.escape(str(h))}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_fmt(v))}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><tr>{cells}</tr>{body}</table>" if rows else "<p class=muted>none in the archive</p>"


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return "" if value is None else str(value)


def _chart(evals: list[dict[str, Any]]) -> str:
    """Dev overall per generation with its 95% interval, as an embedded PNG."""
    if not evals:
        return ""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = list(range(1, len(evals) + 1))
    ys = [e["overall"] for e in evals]
    lows = [y - (e.get("intervals", {}).get("overall", {}).get("low", y)) for y, e in zip(ys, evals, strict=True)]
    highs = [(e.get("intervals", {}).get("overall", {}).get("high", y)) - y for y, e in zip(ys, evals, strict=True)]
    fig, ax = plt.subplots(figsize=(6, 2.8))
    ax.errorbar(xs, ys, yerr=[lows, highs], marker="o", capsize=3, label="dev overall (95% CI)")
    ax.set_xlabel("evaluation (in order)")
    ax.set_ylim(0, 1)
    ax.set_xticks(xs)
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode()
    return f'<img alt="dev overall per generation" src="data:image/png;base64,{data}">'


def build_report(archive_root: Path, title: str = "Flywheel report") -> str:
    """The report's HTML, from the archive under `archive_root`."""
    from services.archiver.store import ArchiveStore

    events = _events(ArchiveStore(archive_root).files())
    evals = [e for e in events["eval.reported"] if e.get("subject") == "checkpoint"]
    parts = [(f"<!doctype html><html><head><meta charset=utf-8><title>{html.escape(title)}</title>"
             f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>"),
             (f"<p class=muted>rebuilt from the event archive at {html.escape(str(archive_root))}: "
             f"{len(events['episode.ended']):,} episodes, {len(events['checkpoint.saved'])} checkpoints</p>")]
    parts.append("<h2>Scores per generation (dev)</h2>" + _chart(evals))
    families = sorted({f for e in evals for f in (e.get("scores") or {})})
    tiers = sorted({t for e in evals for t in (e.get("tier_scores") or {})})
    rows = []
    for e in evals:
        ci = (e.get("intervals") or {}).get("overall") or {}
        rows.append([e.get("subject_id"), e.get("episodes"), e.get("overall"),
                     f"[{ci.get('low', 0):.3f}, {ci.get('high', 0):.3f}]", e.get("success"),
                     *[(e.get("scores") or {}).get(f) for f in families],
                     *[(e.get("tier_scores") or {}).get(t) for t in tiers],
                     e.get("mean_output_tokens"), e.get("mean_tool_calls"),
                     e.get("general_perplexity"), e.get("general_tool_use")])
    parts.append(_table(["checkpoint", "episodes", "overall", "95% CI", "success", *families,
                         *[f"tier {t}" for t in tiers], "output tokens", "tool calls", "general perplexity",
                         "general tool use"], rows))
    parts.append("<h2>Data</h2>" + _table(
        ["snapshot", "rows", "rows by family and tier", "templates", "correction rows", "admitted by"],
        [[s.get("snapshot_id"), s.get("rows"), _by_tier(s.get("composition") or {}),
          len(s.get("composition") or {}), (s.get("counts") or {}).get("correction_rows", 0),
          s.get("admission_policy")] for s in events["dataset.snapshotted"]]))
    regimes = Counter((g.get("regime"), g.get("template")) for g in events["rl.group_scored"])
    parts.append("<h2>GRPO+CARE groups by regime</h2>" + _table(
        ["regime", "template", "groups"], [[r, t, n] for (r, t), n in sorted(regimes.items(), key=str)]))
    hours: dict[str, Counter[str]] = defaultdict(Counter)
    for f in events["failure.traced"]:
        hours[str(f.get("occurred_at", ""))[:13]][str(f.get("category"))] += 1
    categories = sorted({c for counter in hours.values() for c in counter})
    parts.append("<h2>Failures by category, per hour (UTC)</h2>" + _table(
        ["hour", *categories], [[h, *[hours[h].get(c, 0) for c in categories]] for h in sorted(hours)]))
    decided = Counter((d.get("decision"), d.get("reviewer")) for d in events["review.decided"])
    parts.append(f"<h2>Review</h2><p>{len(events['review.requested']):,} items sent for review, "
                 f"{len(events['review.decided']):,} decisions</p>" + _table(
                     ["decision", "reviewer", "items"], [[d, r, n] for (d, r), n in sorted(decided.items(), key=str)]))
    if events["review.stats_reported"]:  # the gate's last report: throughput, gold and agreement
        last = events["review.stats_reported"][-1]
        parts.append("<p>trajectories reviewed per hour of reviewing time, per reviewer (the gate's last report):</p>"
                     + _table(["reviewer", "decisions", "per hour", "median s", "gold right"],
                              [[r.get("reviewer"), r.get("decisions"), round(float(r.get("per_hour") or 0.0)),
                                r.get("median_s"),
                                f"{r.get('gold_correct', 0)} of {r.get('gold_decided')}" if r.get("gold_decided") else "–"]
                               for r in last.get("reviewers") or []]))
        alpha = last.get("alpha_by_family") or {}
        if alpha:
            parts.append(_table(["family", "Krippendorff's alpha"],
                                [[f, "n/a" if a is None else f"{a:.3f}"] for f, a in sorted(alpha.items())]))
    parts.append("<h2>Harness rounds</h2>" + _table(
        ["proposed", "promoted", "rejected", "vetoed"],
        [[len(events["harness.proposed"]), len(events["harness.promoted"]), len(events["harness.rejected"]),
          len(events["harness.vetoed"])]]))
    if events["harness.promoted"]:  # what changed, and the failures that motivated it
        parts.append(_table(["promoted proposal", "harness", "from", "dev delta", "test delta", "failures behind it"],
                            [[p.get("proposal_id"), p.get("harness"), p.get("previous"), p.get("dev_delta"),
                              p.get("test_delta"), len(p.get("motivated_by") or [])]
                             for p in events["harness.promoted"]]))
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(archive_root: Path, out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(build_report(archive_root), encoding="utf-8")
    return out


def report(
    out: Annotated[Path | None, typer.Option(help="Where to write the HTML (default: <data dir>/report.html).")] = None,
    archive: ArchiveOption = None,
) -> None:
    """Rebuild the offline HTML report from the event archive: scores per generation with
    intervals, data, CARE regimes, failures over time, review and harness rounds."""
    from services.archiver.settings import load_archiver_settings
    from streams.settings import load_bus_settings

    try:
        data_dir = Path(load_bus_settings().data_dir)
        archive_root = archive or load_archiver_settings().resolved_archive_dir(data_dir)
        path = write_report(archive_root, out or data_dir / REPORT_FILE)
    except (ValueError, OSError) as error:
        fail(str(error))
    console.print(f"report: {path}", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("report")(report)
