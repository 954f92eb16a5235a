"""HTML fragments for the item page: the UI tree as SVG boxes and one row per step.

Built in Python with explicit escaping (not in the template) because a 30-step trajectory
holds ~1,000 boxes: this is the item page's hot path, and episodes never change, so each
episode's steps are rendered once and cached.
"""

from __future__ import annotations

import json
import logging
from html import escape
from typing import Any

from schemas.episodes import EpisodeEnded, Step
from schemas.observations import Observation

__all__ = ["render_steps", "screen_svg"]

logger = logging.getLogger(__name__)

#: Screens are drawn at this width in CSS pixels (a 1080-wide phone at 1/5).
SVG_WIDTH = 216
#: Labels longer than this are cut: a box is ~50 px wide at this scale.
LABEL_CHARS = 18
#: Rendered episodes kept (an episode never changes once ended).
STEP_CACHE = 512


def _label(element: Any) -> str:
    text = element.text or element.content_description or element.hint_text or ""
    return text if len(text) <= LABEL_CHARS else text[:LABEL_CHARS - 1] + "…"


def screen_svg(observation: Observation | None, target: int | None = None) -> str:
    """The observation's UI tree as boxes; `target` (an element index) is highlighted."""
    if observation is None:
        return '<div class="noscreen">screen before the first action is not recorded</div>'
    boxes = [(i, e) for i, e in enumerate(observation.screen) if e.bounds is not None]
    if not boxes:
        return '<div class="noscreen">no UI elements (tool-only step)</div>'
    width = max(max(e.bounds.right for _, e in boxes), 1)  # type: ignore[union-attr]
    height = max(max(e.bounds.bottom for _, e in boxes), 1)  # type: ignore[union-attr]
    scale = SVG_WIDTH / width
    parts = [(f'<svg class="screen" role="img" aria-label="UI tree of step {observation.step}" '
             f'viewBox="0 0 {width} {height}" width="{SVG_WIDTH}" '
             f'height="{int(height * scale)}" xmlns="http://www.w3.org/2000/svg">'
             f'<rect class="bg" width="{width}" height="{height}"/>')]
    font = max(int(11 / scale), 10)
    for i, e in boxes:
        b = e.bounds
        assert b is not None
        kind = ("target" if i == target else "click" if e.is_clickable
                else "edit" if e.is_editable else "plain")
        title = escape(f"[{i}] {e.class_name or ''} {e.resource_id or ''} {e.text or ''}")
        parts.append(f'<g class="{kind}"><title>{title}</title>'
                     f'<rect x="{b.left}" y="{b.top}" width="{max(b.right - b.left, 1)}" '
                     f'height="{max(b.bottom - b.top, 1)}"/>')
        label = _label(e)
        if label:
            parts.append(f'<text x="{b.left + 8}" y="{b.top + font + 4}" '
                         f'font-size="{font}">{escape(label)}</text>')
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


def _json(value: Any) -> str:
    return escape(json.dumps(value, indent=1, ensure_ascii=False, default=str))


def _screen(seen: Observation | None, target: int | None) -> str:
    if seen is not None and seen.screenshot is not None:
        ref = seen.screenshot
        return (f'<img class="shot" alt="screenshot of step {seen.step}" '
                f'src="/blobs/{ref.sha256}" width="{SVG_WIDTH}" loading="lazy">')
    return screen_svg(seen, target)


def _step(step: Step, seen: Observation | None, wrong: set[int]) -> str:
    action = step.action.model_dump(mode="json", exclude_none=True)
    target = action.get("index") if step.action.action_type in ("click", "long_press",
                                                                "input_text", "scroll") else None
    obs = step.observation
    result = ""
    if obs.result is not None:
        r = obs.result
        status = "ok" if r.ok else "error"
        body = _json(r.value) if r.ok else escape(f"{r.error.code}: {r.error.message}"
                                                  if r.error else "failed")
        result = f'<div class="result {status}"><b>{escape(r.name)}</b> → <pre>{body}</pre></div>'
    extra = ""
    if obs.message:
        extra += f'<div class="message">{escape(obs.message)}</div>'
    if step.thought:
        extra += f'<details><summary>thought</summary><pre>{escape(step.thought)}</pre></details>'
    cls = "step wrong" if step.index in wrong else "step"
    return (f'<section class="{cls}" id="step-{step.index}" tabindex="-1">'
            f'<div class="seen">{_screen(seen, target)}</div>'
            f'<div class="act"><h3>step {step.index} <span class="kind">'
            f'{escape(step.action.action_type)}</span></h3>'
            f'<pre class="action">{_json(action)}</pre>{result}{extra}'
            f'<div class="meta">app {escape(obs.foreground_app or "–")} · '
            f'{step.latency_ms:.0f} ms · tokens {step.tokens.prompt}/{step.tokens.completion}'
            f'</div></div></section>')


def render_steps(episode: EpisodeEnded, wrong: frozenset[int] = frozenset()) -> str:
    """Every step: the screen the policy saw (the previous observation) beside its action
    and the result; `wrong` marks the failure trace's first wrong step(s)."""
    return _render_cached(episode.event_id, episode, wrong)


#: (episode event id, wrong steps) → HTML; insertion-ordered, oldest dropped first.
_cache: dict[tuple[str, frozenset[int]], str] = {}


def _render_cached(event_id: str, episode: EpisodeEnded, wrong: frozenset[int]) -> str:
    key = (event_id, wrong)
    html = _cache.get(key)
    if html is None:
        seen: Observation | None = None
        rows = []
        for step in episode.steps:
            rows.append(_step(step, seen, set(wrong)))
            seen = step.observation
        html = "".join(rows)
        if len(_cache) >= STEP_CACHE:
            _cache.pop(next(iter(_cache)))
        _cache[key] = html
    return html
