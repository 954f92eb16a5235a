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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from trainer.prompt import (
    InvalidAction,
    episode_messages,
    format_action,
    parse_completion,
    render_context,
)

__all__ = ["Snapshot", "SnapshotError", "build_oracle_snapshot", "read_snapshot", "render_examples"]

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


def render_examples(snapshot: Snapshot, tokenizer: Any, *, with_template: bool = False,
                    ) -> tuple[list[dict[str, str]], int]:
    """(prompt, completion) texts in the planner's chat format, and how many rows were skipped.

    A row whose completion is not a valid action is skipped with a warning, never trained on.
    With `with_template`, each example also names its row's template (when the snapshot has one).
    """
    from trainer.envs import action_tools

    tools = action_tools()
    examples: list[dict[str, str]] = []
    skipped = 0
    columns = ["prompt", "completion"] + (["template"] if "template" in snapshot.table.column_names else [])
    for row in snapshot.table.select(columns).to_pylist():
        prompt, completion = row["prompt"] or "", row["completion"] or ""
        action = parse_completion(completion)
        if isinstance(action, InvalidAction):
            skipped += 1
            continue
        if prompt.startswith("<|im_start|>"):
            rendered = prompt
        else:
            messages = _messages(prompt) or [{"role": "user", "content": prompt}]
            rendered = tokenizer.apply_chat_template(messages, tools=tools, tokenize=False,
                                                     add_generation_prompt=True)
        example = {"prompt": rendered, "completion": format_action(action) + tokenizer.eos_token}
        if with_template:
            example["template"] = str(row.get("template") or "unknown")
        examples.append(example)
    if skipped:
        logger.warning("skipped %d of %d rows of snapshot %s: their completion is not a valid action",
                       skipped, snapshot.table.num_rows, snapshot.snapshot_id)
    return examples, skipped


def build_oracle_snapshot(out_dir: str | Path, *, split: str = "train", n_per_template: int = 1,
                          suite_seed: int = 0, templates: list[str] | None = None,
                          history: int = 4, snapshot_id: str | None = None) -> Path:
    """A snapshot like the curator's, from the oracle's episodes on a SimPhone: one row per step."""
    from devices.harness import Harness
    from devices.sim import SimPhone
    from devices.suite.instances import generate_split
    from devices.suite.policies import OraclePolicy
    from devices.suite.registry import get_template

    chosen = [get_template(t) for t in templates] if templates else None
    tasks = generate_split(split, n_per_template, suite_seed, chosen)  # type: ignore[arg-type]
    harness = Harness(SimPhone())
    rows: list[dict[str, Any]] = []
    try:
        for task in tasks:
            observation = harness.reset(task)
            oracle = OraclePolicy()
            oracle.prepare(task)
            oracle.begin(task.goal, harness.catalogue())
            context = render_context(task.goal, harness.catalogue(), observation=observation)
            steps: list[tuple[Any, Any]] = []
            for step in range(task.max_steps):
                action = oracle.next_action(observation)
                prompt = json.dumps(episode_messages(context, steps, history), ensure_ascii=False)
                rows.append({"prompt": prompt, "completion": action.model_dump_json(),
                             "task_id": task.task_id, "template": task.template, "family": task.family,
                             "step": step})
                observation = harness.act(action)
                steps.append((action, observation))
                if observation.done:
                    break
    finally:
        harness.close()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), out / DATA_FILE)
    sid = snapshot_id or f"oracle-{split}-{n_per_template}-{suite_seed}"
    (out / MANIFEST_FILE).write_text(json.dumps({"snapshot_id": sid, "kind": "sft", "rows": len(rows),
                                                 "source": "oracle", "split": split}, indent=2))
    return out
