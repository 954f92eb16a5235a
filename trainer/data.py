"""Training data: read a curator's Parquet snapshot into prompt/completion text, or build one from oracle runs.

A snapshot is a directory with `data.parquet` (string columns `prompt` and `completion`, plus
lineage columns) and `manifest.json`, as the curator writes it and `dataset.snapshotted`
announces it. A `prompt` may be a JSON list of chat messages, an already rendered chat, or the
harness context as plain text (then it is one user turn); a `completion` may be an action as
AndroidWorld JSON or in the planner's `<tool_call>` form. Both are rendered to the planner's
chat format here, so SFT teaches exactly what the policy is asked at run time.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from devices.harness.answer import InvalidAction, format_action, parse_completion
from devices.harness.context import CONTEXT_VERSION, drop_oldest_steps, step_count
from devices.suite.slips import slip_for

__all__ = ["RenderReport", "RowTooLong", "Snapshot", "SnapshotError", "build_oracle_snapshot", "filter_snapshot",
           "pack_episodes", "read_snapshot", "render_examples"]

logger = logging.getLogger(__name__)

DATA_FILE = "data.parquet"
MANIFEST_FILE = "manifest.json"


class SnapshotError(ValueError):
    """A snapshot directory is missing or malformed; the message says what is wrong."""


@dataclass(frozen=True)
class Snapshot:
    snapshot_id: str
    path: Path
    sha256: str  # of data.parquet, recorded in every checkpoint trained on it
    table: pa.Table


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def read_snapshot(path: str | Path) -> Snapshot:
    """The snapshot in `path` (a directory with data.parquet, or the Parquet file itself)."""
    path = Path(path)
    data = path / DATA_FILE if path.is_dir() else path
    if not data.is_file():
        raise SnapshotError(f"no {DATA_FILE} in {path}; pass the directory a dataset.snapshotted event names")
    table = pq.read_table(data)
    missing = {"prompt", "completion"} - set(table.column_names)
    if missing:
        raise SnapshotError(f"snapshot {data} lacks the column(s) {sorted(missing)}; SFT needs prompt and completion")
    manifest = data.parent / MANIFEST_FILE
    snapshot_id = data.parent.name
    if manifest.is_file():
        snapshot_id = json.loads(manifest.read_text()).get("snapshot_id", snapshot_id)
    return Snapshot(snapshot_id=snapshot_id, path=data.parent, sha256=_sha256(data), table=table)


def _messages(prompt: str) -> list[dict[str, Any]] | None:
    text = prompt.lstrip()
    if text.startswith("["):
        try:
            messages = json.loads(text)
        except json.JSONDecodeError:
            return None
        if isinstance(messages, list) and all(isinstance(m, dict) and "role" in m for m in messages):
            return messages
    return None


class RowTooLong(SnapshotError):
    """A row does not fit `max_length` even with all its past steps dropped."""


@dataclass
class RenderReport:
    """What rendering a snapshot did: rows used, shortened (oldest steps dropped), skipped
    (completion not an action), and the tokens of each family."""

    used: int = 0
    shortened: int = 0
    skipped: int = 0
    dropped_steps: int = 0
    recovery: int = 0  # rows that show a slip and the way on (recovery or correction rows)
    tokens_by_family: dict[str, int] = field(default_factory=dict)
    rows_by_action: dict[str, int] = field(default_factory=dict)
    sequences: int = 0  # training sequences after pack_episodes (0: not packed, one per row)
    sequence_tokens: int = 0  # tokens of those sequences: what one epoch computes on
    unpacked: int = 0  # rows whose tokens did not line up with a longer row's, trained alone

    def as_metrics(self) -> dict[str, float]:
        out = {"rows_used": float(self.used), "rows_shortened": float(self.shortened),
               "rows_skipped": float(self.skipped), "steps_dropped": float(self.dropped_steps),
               "recovery_share": self.recovery / self.used if self.used else 0.0}
        if self.sequences:
            out.update({"sequences": float(self.sequences), "sequence_tokens": float(self.sequence_tokens),
                        "rows_unpacked": float(self.unpacked),
                        "row_tokens": float(sum(self.tokens_by_family.values()))})
        out.update({f"tokens/{family}": float(n) for family, n in sorted(self.tokens_by_family.items())})
        return out


def _fit(messages: list[dict[str, Any]], completion_ids: int, tokenizer: Any, tools: Any,
         max_length: int | None) -> tuple[str, int, int]:
    """(rendered prompt, its tokens, steps dropped): the oldest steps are dropped until prompt
    plus answer fit `max_length`; RowTooLong when even the header alone does not."""
    dropped = 0
    while True:
        shown = drop_oldest_steps(messages, dropped)
        rendered = tokenizer.apply_chat_template(shown, tools=tools, tokenize=False, add_generation_prompt=True)
        length = len(tokenizer(rendered, add_special_tokens=False)["input_ids"])
        if max_length is None or length + completion_ids <= max_length:
            return rendered, length, dropped
        if dropped >= step_count(messages):
            raise RowTooLong(f"{length + completion_ids} tokens")
        dropped += 1


def render_examples(snapshot: Snapshot, tokenizer: Any, *, with_template: bool = False,
                    max_length: int | None = None, report: RenderReport | None = None,
                    ) -> tuple[list[dict[str, str]], int]:
    """(prompt, completion) texts in the planner's chat format, and how many rows were skipped.

    No row is dropped for length: a row longer than `max_length` tokens loses its oldest past
    steps until it fits, and one that cannot fit stops the run (RowTooLong names it). A row whose
    completion is not a valid action is skipped with a warning, never trained on. With
    `with_template`, each example also names its row's template (when the snapshot has one);
    `report` (a RenderReport) is filled with what happened.
    """
    from trainer.envs import action_tools

    tools = action_tools()
    report = report if report is not None else RenderReport()
    examples: list[dict[str, str]] = []
    names = set(snapshot.table.column_names)
    columns = ["prompt", "completion"] + [c for c in ("template", "family", "example_id", "recovery", "kind")
                                          if c in names]
    for index, row in enumerate(snapshot.table.select(columns).to_pylist()):
        prompt, completion = row["prompt"] or "", row["completion"] or ""
        action = parse_completion(completion)
        if isinstance(action, InvalidAction):
            report.skipped += 1
            continue
        answer = format_action(action) + tokenizer.eos_token
        answer_ids = len(tokenizer(answer, add_special_tokens=False)["input_ids"])
        messages = _messages(prompt) or [{"role": "user", "content": prompt}]
        try:
            rendered, length, dropped = _fit(messages, answer_ids, tokenizer, tools, max_length)
        except RowTooLong as error:
            name = row.get("example_id") or f"row {index}"
            raise RowTooLong(f"snapshot {snapshot.snapshot_id}'s {name} needs {error} even without its "
                             f"past steps, more than max_length={max_length}; raise max_length") from None
        family = str(row.get("family") or "unknown")
        report.used += 1
        report.shortened += dropped > 0
        report.dropped_steps += dropped
        report.recovery += bool(row.get("recovery")) or row.get("kind") == "correction"
        report.tokens_by_family[family] = report.tokens_by_family.get(family, 0) + length + answer_ids
        report.rows_by_action[action.action_type] = report.rows_by_action.get(action.action_type, 0) + 1
        example = {"prompt": rendered, "completion": answer}
        if with_template:
            example["template"] = str(row.get("template") or "unknown")
        examples.append(example)
    if report.skipped:
        logger.warning("skipped %d of %d rows of snapshot %s: their completion is not a valid action",
                       report.skipped, snapshot.table.num_rows, snapshot.snapshot_id)
    if report.shortened:
        logger.info("shortened %d of %d rows of snapshot %s to max_length=%s by dropping %d oldest steps",
                    report.shortened, report.used, snapshot.snapshot_id, max_length, report.dropped_steps)
    return examples, report.skipped


def _ids(tokenizer: Any, text: str) -> list[int]:
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def pack_episodes(examples: list[dict[str, str]], tokenizer: Any,
                  report: RenderReport | None = None) -> list[dict[str, list[int]]]:
    """The rows of `render_examples` as token sequences with a loss mask, one sequence per episode.

    Step k of an episode is shown the header and steps 1..k-1, so its prompt plus answer is the
    start of step k+1's prompt: one sequence (the last step's prompt and answer) with the loss on
    every step's answer teaches exactly what the rows teach, and computes the header once instead
    of once per step. A row joins a longer row's sequence only when its text is a prefix of it and
    its prompt's tokens are exactly the sequence's first tokens (what the policy is given at that
    step); any other row is a sequence of its own (`report.unpacked`). A shortened row (oldest
    steps dropped) is no prefix of another, so it stays alone. Returns `input_ids` and
    `completion_mask` (1 on answer tokens), the pre-tokenised form TRL's SFTTrainer takes.
    """
    report = report if report is not None else RenderReport()
    marker = "<|im_start|>assistant"
    groups: dict[str, list[dict[str, str]]] = {}
    for example in examples:  # rows of one episode share everything before the first answer
        prompt = example["prompt"]
        cut = prompt.find(marker)
        groups.setdefault(prompt[:cut] if cut >= 0 else prompt, []).append(example)
    sequences: list[dict[str, list[int]]] = []
    for rows in groups.values():
        rows.sort(key=lambda e: len(e["prompt"]) + len(e["completion"]), reverse=True)
        chains: list[tuple[str, list[dict[str, str]]]] = []  # (text of the longest row, rows it covers)
        for row in rows:
            text = row["prompt"] + row["completion"]
            host = next((chain for chain in chains if chain[0].startswith(text)), None)
            if host is None:
                chains.append((text, [row]))
            else:
                host[1].append(row)
        for _, chain in chains:
            sequences.extend(_tokenise_chain(sorted(chain, key=lambda e: len(e["prompt"])), tokenizer, report))
    report.sequences = len(sequences)
    report.sequence_tokens = sum(len(s["input_ids"]) for s in sequences)
    return sequences


def _tokenise_chain(chain: list[dict[str, str]], tokenizer: Any, report: RenderReport) -> list[dict[str, list[int]]]:
    """One sequence for rows whose texts nest (shortest first), plus one per row whose prompt
    tokens do not match the sequence's start."""
    ids: list[int] = []
    mask: list[int] = []
    alone: list[dict[str, list[int]]] = []
    done = 0  # characters of the sequence's text already tokenised
    for row in chain:
        prompt, answer = row["prompt"], row["completion"]
        gap = _ids(tokenizer, prompt[done:])
        prompt_ids = _ids(tokenizer, prompt)
        answer_ids = _ids(tokenizer, answer)
        if ids + gap != prompt_ids:  # the row's prompt would tokenise differently inside the sequence
            report.unpacked += 1
            alone.append({"input_ids": prompt_ids + answer_ids,
                          "completion_mask": [0] * len(prompt_ids) + [1] * len(answer_ids)})
            continue
        ids += gap + answer_ids
        mask += [0] * len(gap) + [1] * len(answer_ids)
        done = len(prompt) + len(answer)
    return ([{"input_ids": ids, "completion_mask": mask}] if ids else []) + alone


def filter_snapshot(snapshot_dir: str | Path, out_dir: str | Path, *, templates: list[str] | None = None,
                    tiers: list[str] | None = None) -> Path:
    """A copy of the snapshot with only the rows of `templates` and/or `tiers` (its manifest names
    the filter and the source snapshot); SnapshotError when no row is left."""
    snapshot = read_snapshot(snapshot_dir)
    rows = snapshot.table.to_pylist()
    if tiers and "tier" not in snapshot.table.column_names:
        from devices.suite.registry import UnknownTemplate, get_template

        def tier_of(name: str) -> str | None:
            try:
                return get_template(name).tier
            except UnknownTemplate:
                return None
        rows = [{**r, "tier": tier_of(str(r.get("template")))} for r in rows]
    kept = [r for r in rows if (not templates or r.get("template") in templates)
            and (not tiers or r.get("tier") in tiers)]
    if not kept:
        raise SnapshotError(f"no row of snapshot {snapshot.snapshot_id} matches templates={templates} tiers={tiers}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(kept), out / DATA_FILE)
    sid = f"{snapshot.snapshot_id}-filtered"
    (out / MANIFEST_FILE).write_text(json.dumps({"snapshot_id": sid, "kind": "sft", "rows": len(kept),
                                                 "source_snapshot": snapshot.snapshot_id,
                                                 "source_sha256": snapshot.sha256,
                                                 "templates": templates, "tiers": tiers}, indent=2))
    return out


def build_oracle_snapshot(out_dir: str | Path, *, split: str = "train", n_per_template: int = 1,
                          suite_seed: int = 0, templates: list[str] | None = None,
                          tiers: list[str] | None = None, snapshot_id: str | None = None,
                          recovery: float = 0.0) -> Path:
    """A snapshot like the curator's, from the oracle's episodes on a SimPhone: one row per step,
    its prompt the harness's context at that step (the one renderer). `templates` and `tiers`
    narrow the templates (both: a template must match both).

    With `recovery` (a share, 0..1), that share of the episodes (seeded) also teaches recovery:
    before one oracle tool call that takes an id, a slip (the same call with an id that does not
    exist) is played and answered with the phone's error; the slip is never a training target,
    but the rows after it show the error and the oracle's way on (column `recovery`)."""
    from devices.harness import Harness
    from devices.harness.episode import play
    from devices.sim import SimPhone
    from devices.suite.instances import generate_split
    from devices.suite.policies import OraclePolicy
    from devices.suite.registry import get_template, templates_for

    chosen = [get_template(t) for t in templates] if templates else templates_for(split)  # type: ignore[arg-type]
    if tiers:
        chosen = [t for t in chosen if t.tier in tiers]
    if not chosen:
        raise SnapshotError(f"no {split} template matches templates={templates} tiers={tiers}")
    tasks = generate_split(split, n_per_template, suite_seed, chosen)  # type: ignore[arg-type]
    harness = Harness(SimPhone())
    rows: list[dict[str, Any]] = []
    rng = random.Random(f"recovery:{split}:{suite_seed}")

    def recorder(task: Any) -> Any:
        tier = get_template(task.template).tier
        slip = {"pending": rng.random() < recovery, "done": False}

        def on_step(step: int, _observation: Any, action: Any) -> None:
            wrong = slip_for(action, rng) if slip["pending"] else None
            if wrong is not None:
                saved = harness.snapshot()
                answer = harness.act(wrong)
                if answer.result is not None and not answer.result.ok and not answer.done:
                    slip.update(pending=False, done=True)  # the error stays in the history
                else:
                    harness.restore(saved)  # the slip happened to work: take it back
            rows.append({"prompt": harness.context(), "completion": format_action(action),
                         "example_id": f"{task.task_id}:{step}", "task_id": task.task_id,
                         "template": task.template, "family": task.family, "tier": tier,
                         "action_type": action.action_type, "step": step,
                         "context_version": CONTEXT_VERSION, "recovery": slip["done"]})
        return on_step

    try:
        for task in tasks:
            play(harness, task, OraclePolicy(), on_step=recorder(task))
    finally:
        harness.close()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), out / DATA_FILE)
    sid = snapshot_id or f"oracle-{split}-{n_per_template}-{suite_seed}"
    (out / MANIFEST_FILE).write_text(json.dumps({"snapshot_id": sid, "kind": "sft", "rows": len(rows),
                                                 "source": "oracle", "split": split,
                                                 "templates": sorted({t.name for t in chosen}),
                                                 "recovery_rows": sum(r["recovery"] for r in rows),
                                                 "context_version": CONTEXT_VERSION}, indent=2))
    return out
