"""The gate's web app: sign in, the queue with filters, one item, decide, stats, the harness
promotions waiting for a veto (+ JSON API).

Server-rendered (Jinja2), with one small script for the keys: on the item page `a`
approves, `r` asks for a reason and rejects, `n` skips to the next item, `j`/`k` move
between steps; on the queue `j`/`k` move and Enter opens. Sessions are a random cookie
(HttpOnly, SameSite=Strict) plus a per-session CSRF token on every form; the JSON API
takes `Authorization: Bearer <reviewer token>`.

Reads are `async` handlers: they only take the queue's lock for microseconds, and running on
the event loop saves the thread-pool hop (measured with bench/gate.py). Decisions block on the
broker's acknowledgement, so they stay plain functions that run in the thread pool.
"""

from __future__ import annotations

import logging
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, get_args
from urllib.parse import quote_plus

from fastapi import Depends, FastAPI, Form, HTTPException, Query, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from markupsafe import Markup

import schemas.tasks
from devices.blobs import BlobNotFound
from schemas.tasks import Family
from schemas.verdicts import FailureTraced
from services.gate.harness import VetoRefused
from services.gate.queue import MIN_ALPHA, MIN_ALPHA_ITEMS, DecisionRefused, Item
from services.gate.render import render_steps
from services.gate.service import DecisionNotPublished, Gate
from services.gate.tokens import hash_token

__all__ = ["SESSION_COOKIE", "create_app"]

logger = logging.getLogger(__name__)

SESSION_COOKIE = "flywheel_gate"
#: Rows on the queue page: a reviewer works from the top; the count says how many more wait.
QUEUE_ROWS = 200
#: Sessions a gate keeps (oldest dropped first): far above any team of reviewers.
MAX_SESSIONS = 10_000
HERE = Path(__file__).parent
VERDICTS = ("passed", "partial", "failed", "pending")
# Read from the contract, so the filters follow when the taxonomy or the tiers grow.
CATEGORIES: tuple[str, ...] = get_args(FailureTraced.model_fields["category"].annotation)
FAMILIES: tuple[str, ...] = get_args(Family)
#: The suite's difficulty tiers (schemas.tasks.Tier where the contract has it).
TIERS: tuple[str, ...] = get_args(getattr(schemas.tasks, "Tier", Literal["easy", "medium", "hard"]))


@dataclass(frozen=True)
class Session:
    reviewer: str
    csrf: str
    token_hash: str  # the session ends when the reviewer's token is revoked or reissued


class Sessions:
    def __init__(self) -> None:
        self._by_id: dict[str, Session] = {}
        self._lock = threading.Lock()

    def open(self, reviewer: str, token_hash: str) -> str:
        sid = secrets.token_urlsafe(32)
        with self._lock:
            if len(self._by_id) >= MAX_SESSIONS:
                self._by_id.pop(next(iter(self._by_id)))
            self._by_id[sid] = Session(reviewer, secrets.token_urlsafe(24), token_hash)
        return sid

    def get(self, sid: str | None) -> Session | None:
        return None if sid is None else self._by_id.get(sid)

    def close(self, sid: str | None) -> None:
        with self._lock:
            self._by_id.pop(sid or "", None)


def _filters(family: str | None, tier: str | None, verdict: str | None,
             category: str | None) -> dict[str, Any]:
    return {"family": family or None, "verdict": verdict or None,
            "category": category or None, "tier": tier or None}


async def session(request: Request) -> Session:
    """The signed-in reviewer's session, or a redirect to the sign-in page (also when the
    reviewer's token was revoked or reissued since they signed in)."""
    found = request.app.state.sessions.get(request.cookies.get(SESSION_COOKIE))
    if found is not None and request.app.state.gate.tokens.hash_of(found.reviewer) != \
            found.token_hash:
        request.app.state.sessions.close(request.cookies.get(SESSION_COOKIE))
        found = None
    if found is None:
        raise HTTPException(303, headers={"Location": "/login"})
    return found


async def api_reviewer(request: Request) -> str:
    """The reviewer named by the request's bearer token, or 401."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    gate: Gate = request.app.state.gate
    reviewer = gate.tokens.reviewer_for(token.strip()) if scheme.lower() == "bearer" else None
    if reviewer is None:
        raise HTTPException(401, "a valid reviewer token is required (Authorization: Bearer)")
    return reviewer


#: Sent with every response: pages load only the gate's own script, styles and images, cannot be
#: framed (clickjacking a review decision), and post forms only back to the gate.
SECURITY_HEADERS = {
    "Content-Security-Policy": ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                                "img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


class _Views:
    """What every route group shares: the gate, its queue, the sessions and the templates,
    with the page, item and CSRF helpers the handlers call."""

    def __init__(self, gate: Gate, sessions: Sessions) -> None:
        self.gate, self.sessions, self.queue = gate, sessions, gate.queue
        self.templates = Jinja2Templates(directory=str(HERE / "templates"))

    def check_csrf(self, current: Session, token: str) -> None:
        if not secrets.compare_digest(current.csrf, token):
            raise HTTPException(403, "the form is stale or forged (CSRF token mismatch); "
                                     "reload the page")

    def page(self, request: Request, name: str, current: Session | None, status_code: int = 200,
             **context: Any) -> Response:
        gate = self.gate
        return self.templates.TemplateResponse(request, name, {
            "me": current.reviewer if current else None,
            "csrf": current.csrf if current else "", "counts": self.queue.counts(),
            "harness_pending": len(gate.harness.pending()) if gate.harness else 0, **context},
            status_code=status_code)

    def item_view(self, item: Item) -> dict[str, Any]:
        queue = self.queue
        info = queue.info(item)
        episodes = []
        for episode_id in item.request.subject_ids:
            episode = queue.episodes.get(episode_id)
            failures = queue.failures.get(episode_id, [])
            wrong = frozenset(f.step_index for f in failures if f.step_index is not None)
            verdict = queue.verdicts.get(episode_id)
            diff = None
            if verdict is not None:
                diff = verdict.details.get("state_diff")
            if diff is None:
                diff = next((f.evidence.get("state_diff") for f in failures
                             if "state_diff" in f.evidence), None)
            if diff is None and episode is not None:
                diff = self.gate.state_diff(episode, info)
            episodes.append({
                "id": episode_id, "episode": episode, "verdict": verdict, "failures": failures,
                "diff": diff if isinstance(diff, list) else None,
                "steps": Markup(render_steps(episode, wrong)) if episode else None})
        return {"item": item, "review": item.request, "info": info,
                "family": queue.family(item), "tier": queue.tier(item),
                "verdict": queue.verdict(item), "episodes": episodes}

    def harness_page(self, request: Request, current: Session, error: str | None = None,
                     done: str | None = None, status_code: int = 200) -> Response:
        board = self.gate.harness
        return self.page(request, "harness.html", current, status_code=status_code, error=error,
                         done=done, rows=board.pending() if board else [],
                         window_s=board.config.veto_window_s if board else 0.0,
                         key_id=self.gate.signer.key_id)

    def veto_or_status(self, proposal_id: str, reviewer: str, note: str) -> tuple[int, str]:
        """(201, the veto's event id) or (HTTP status, one sentence)."""
        try:
            return 201, self.gate.veto(proposal_id, reviewer, note).event_id
        except KeyError as error:
            return 404, str(error.args[0])
        except VetoRefused as error:
            return 409, str(error)
        except DecisionNotPublished as error:
            return 503, str(error)


def create_app(gate: Gate) -> FastAPI:
    """The web app around `gate` (which owns the key, the queue and the publisher)."""
    app = FastAPI(title="flywheel gate", docs_url=None, redoc_url=None, openapi_url=None)

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Any) -> Response:
        response = await call_next(request)
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)  # a route's own (a blob's stricter CSP) wins
        return response
    sessions = Sessions()
    app.state.gate = gate
    app.state.sessions = sessions
    views = _Views(gate, sessions)
    _sign_in_routes(app, views)
    _review_pages(app, views)
    _harness_routes(app, views)
    _file_routes(app, views)
    _api_routes(app, views)
    return app


def _sign_in_routes(app: FastAPI, views: _Views) -> None:
    """Sign in with a reviewer token (a session cookie), sign out."""
    gate, sessions = views.gate, views.sessions

    @app.get("/login", response_class=HTMLResponse)
    async def login_form(request: Request, error: str | None = None) -> Response:
        return views.page(request, "login.html", None, error=error)

    @app.post("/login")
    async def login(token: Annotated[str, Form()] = "") -> Response:
        reviewer = gate.tokens.reviewer_for(token.strip())
        if reviewer is None:
            return RedirectResponse("/login?error=unknown+token", status_code=303)
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(SESSION_COOKIE, sessions.open(reviewer, hash_token(token.strip())),
                            httponly=True, samesite="strict")
        return response

    @app.post("/logout")
    def logout(request: Request, current: Annotated[Session, Depends(session)],
               csrf: Annotated[str, Form()] = "") -> Response:
        views.check_csrf(current, csrf)
        sessions.close(request.cookies.get(SESSION_COOKIE))
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(SESSION_COOKIE)
        return response


def _review_pages(app: FastAPI, views: _Views) -> None:
    """The queue with its filters, one item, the decision form, the stats page."""
    gate, queue, page = views.gate, views.queue, views.page

    @app.get("/", response_class=HTMLResponse)
    async def queue_page(request: Request, current: Annotated[Session, Depends(session)],
                         family: str | None = None, tier: str | None = None,
                         verdict: str | None = None, category: str | None = None,
                         status: str = "waiting") -> Response:
        filters = _filters(family, tier, verdict, category)
        items = queue.select(reviewer=current.reviewer if status == "waiting" else None,
                             status=status, **filters)
        rows = []
        for i in items[:QUEUE_ROWS]:
            info = queue.info(i)
            rows.append({"item": i, "family": queue.family(i), "tier": queue.tier(i),
                         "verdict": queue.verdict(i), "categories": sorted(queue.categories(i)),
                         "goal": info.goal if info else i.request.summary})
        return page(request, "queue.html", current, rows=rows, total=len(items),
                    filters=filters, status=status, families=FAMILIES, verdicts=VERDICTS,
                    categories=CATEGORIES, tiers=TIERS)

    @app.get("/items/{review_id}", response_class=HTMLResponse)
    async def item_page(request: Request, review_id: str,
                        current: Annotated[Session, Depends(session)],
                        error: str | None = None) -> Response:
        item = queue.items.get(review_id)
        if item is None:
            raise HTTPException(404, f"no review {review_id!r} is in the queue")
        gate.opened(review_id, current.reviewer)
        nxt = gate.next_for(current.reviewer, after=review_id)
        may_decide = queue.may_decide(item, current.reviewer)
        return page(request, "item.html", current, error=error,
                    next_id=nxt.review_id if nxt and nxt.review_id != review_id else None,
                    may_decide=may_decide, **views.item_view(item))

    @app.post("/items/{review_id}/decision")
    def decide_form(review_id: str, current: Annotated[Session, Depends(session)],
                    decision: Annotated[str, Form()], reason: Annotated[str, Form()] = "",
                    csrf: Annotated[str, Form()] = "") -> Response:
        views.check_csrf(current, csrf)
        try:
            gate.decide(review_id, current.reviewer, decision, reason)
        except KeyError as error:
            raise HTTPException(404, str(error.args[0])) from None
        except (DecisionRefused, DecisionNotPublished) as error:
            return RedirectResponse(f"/items/{review_id}?error={quote_plus(str(error))}",
                                    status_code=303)
        nxt = gate.next_for(current.reviewer, after=review_id)
        return RedirectResponse(f"/items/{nxt.review_id}" if nxt else "/?done=1",
                                status_code=303)

    @app.get("/stats", response_class=HTMLResponse)
    async def stats_page(request: Request,
                         current: Annotated[Session, Depends(session)]) -> Response:
        kappa, pairs = queue.kappa()
        return page(request, "stats.html", current, kappa=kappa, pairs=pairs,
                    alpha=queue.alpha_by_family(), min_alpha=MIN_ALPHA, min_alpha_items=MIN_ALPHA_ITEMS,
                    reviewers=queue.throughput(), decided=gate.decided, refused=gate.refused,
                    key_id=gate.signer.key_id)


def _harness_routes(app: FastAPI, views: _Views) -> None:
    """The harness promotions waiting for a veto, and the veto form."""

    @app.get("/harness", response_class=HTMLResponse)
    async def harness_list(request: Request, current: Annotated[Session, Depends(session)],
                           vetoed: str | None = None) -> Response:
        done = (f"Vetoed {vetoed}: the evolver rejects it when it reads the veto."
                if vetoed else None)
        return views.harness_page(request, current, done=done)

    @app.post("/harness/{proposal_id}/veto")
    def veto_form(request: Request, proposal_id: str,
                  current: Annotated[Session, Depends(session)],
                  note: Annotated[str, Form()] = "", csrf: Annotated[str, Form()] = ""
                  ) -> Response:
        views.check_csrf(current, csrf)
        status, said = views.veto_or_status(proposal_id, current.reviewer, note)
        if status != 201:
            return views.harness_page(request, current, error=said, status_code=status)
        return RedirectResponse(f"/harness?vetoed={quote_plus(proposal_id)}", status_code=303)


def _file_routes(app: FastAPI, views: _Views) -> None:
    """Screenshots from the blob store, the gate's script and styles, the health check."""
    gate = views.gate

    @app.get("/blobs/{sha256}")
    async def blob(sha256: str, current: Annotated[Session, Depends(session)]) -> Response:
        if gate.blobs is None or len(sha256) != 64 or not all(c in "0123456789abcdef"
                                                              for c in sha256):
            raise HTTPException(404, "no such blob")
        try:
            data = gate.blobs.get(sha256)
        except BlobNotFound:
            raise HTTPException(404, "no such blob") from None
        media = "image/svg+xml" if data.lstrip().startswith(b"<svg") else (
            "image/png" if data.startswith(b"\x89PNG") else "application/octet-stream")
        return Response(data, media_type=media, headers={
            "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
            "Cache-Control": "private, max-age=86400, immutable"})

    @app.get("/static/{name}")
    async def static(name: str) -> Response:
        if name not in ("gate.js", "gate.css"):
            raise HTTPException(404, "no such file")
        return FileResponse(HERE / "static" / name, headers={"Cache-Control": "max-age=3600"})

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        return {"ok": True, "key_id": gate.signer.key_id, **views.queue.counts()}


def _api_routes(app: FastAPI, views: _Views) -> None:
    """The JSON API `flywheel review` uses (bearer token): queue, item, decide, harness, veto,
    stats."""
    gate, queue = views.gate, views.queue

    @app.get("/api/queue")
    async def api_queue(reviewer: Annotated[str, Depends(api_reviewer)],
                        family: str | None = None, tier: str | None = None,
                        verdict: str | None = None, category: str | None = None,
                        limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> dict[str, Any]:
        items = queue.select(reviewer=reviewer, **_filters(family, tier, verdict, category))
        return {"reviewer": reviewer, "items": [
            {"review_id": i.review_id, "summary": i.request.summary, "family": queue.family(i),
             "tier": queue.tier(i), "verdict": queue.verdict(i), "reasons": i.request.reasons}
            for i in items[:limit]], "waiting": len(items)}

    @app.get("/api/items/{review_id}")
    async def api_item(review_id: str, reviewer: Annotated[str, Depends(api_reviewer)]
                       ) -> dict[str, Any]:
        item = queue.items.get(review_id)
        if item is None:
            raise HTTPException(404, f"no review {review_id!r} is in the queue")
        gate.opened(review_id, reviewer)
        return _api_item_json(review_id, item, views.item_view(item))

    @app.post("/api/items/{review_id}/decision")
    def api_decide(review_id: str, body: dict[str, Any],
                   reviewer: Annotated[str, Depends(api_reviewer)]) -> JSONResponse:
        try:
            signed = gate.decide(review_id, reviewer, str(body.get("decision", "")),
                                 str(body.get("reason", "")))
        except KeyError as error:
            raise HTTPException(404, str(error.args[0])) from None
        except DecisionRefused as error:
            return JSONResponse({"error": str(error)}, status_code=409)
        except DecisionNotPublished as error:
            return JSONResponse({"error": str(error)}, status_code=503)
        return JSONResponse({"decision_id": signed.decision_id, "final": signed.final,
                             "decision": signed.decision}, status_code=201)

    @app.get("/api/harness")
    async def api_harness(reviewer: Annotated[str, Depends(api_reviewer)]) -> dict[str, Any]:
        board = gate.harness
        return {"veto_window_s": board.config.veto_window_s if board else 0.0,
                "pending": [row.to_json() for row in (board.pending() if board else [])]}

    @app.post("/api/harness/{proposal_id}/veto")
    def api_veto(proposal_id: str, reviewer: Annotated[str, Depends(api_reviewer)],
                 body: dict[str, Any] | None = None) -> JSONResponse:
        status, said = views.veto_or_status(proposal_id, reviewer,
                                            str((body or {}).get("note", "")))
        if status != 201:
            return JSONResponse({"error": said}, status_code=status)
        return JSONResponse({"event_id": said, "proposal_id": proposal_id}, status_code=201)

    @app.get("/api/stats")
    async def api_stats(reviewer: Annotated[str, Depends(api_reviewer)]) -> dict[str, Any]:
        return gate.stats_event().model_dump(mode="json")


def _api_item_json(review_id: str, item: Item, view: dict[str, Any]) -> dict[str, Any]:
    """One item for the JSON API: the request, its episodes' steps (without screens), verdicts,
    failures and state diffs."""
    return {
        "review_id": review_id, "request": item.request.model_dump(mode="json"),
        "goal": view["info"].goal if view["info"] else None, "family": view["family"],
        "tier": view["tier"], "verdict": view["verdict"], "status": item.status,
        "episodes": [{
            "episode_id": e["id"],
            "steps": [s.model_dump(mode="json", exclude={"observation": {"screen"}})
                      for s in (e["episode"].steps if e["episode"] else [])],
            "verdict": e["verdict"].model_dump(mode="json") if e["verdict"] else None,
            "failures": [f.model_dump(mode="json") for f in e["failures"]],
            "state_diff": e["diff"]} for e in view["episodes"]]}
