"""The web app over real HTTP: sign-in, CSRF, the item page, the API, and decisions."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from services.dataflow.verify import DecisionVerifier
from tests.services.gate.conftest import LiveGate

pytestmark = pytest.mark.integration


@contextmanager
def signed_in(gate: LiveGate, who: str = "alice") -> Iterator[httpx.Client]:
    with httpx.Client(base_url=gate.url, timeout=30) as client:
        answer = client.post("/login", data={"token": gate.tokens[who]})
        assert answer.status_code == 303 and answer.headers["location"] == "/"
        yield client


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "no CSRF field on the page"
    return found.group(1)


def test_pages_need_a_session_and_a_bad_token_signs_in_nobody(live_gate: LiveGate) -> None:
    with httpx.Client(base_url=live_gate.url, timeout=30) as client:
        for path in ("/", "/items/rv-a-pass", "/stats"):
            answer = client.get(path)
            assert answer.status_code == 303 and answer.headers["location"] == "/login"
        wrong = client.post("/login", data={"token": "fwr_not-a-token"})
        assert wrong.headers["location"].startswith("/login?error")
        assert client.get("/api/queue").status_code == 401
        assert client.get("/api/queue", headers={"Authorization": "Bearer nope"}
                          ).status_code == 401


def test_the_item_page_shows_goal_steps_screens_verdict_failure_and_diff(
        live_gate: LiveGate) -> None:
    failing = live_gate.samples[1]
    with signed_in(live_gate) as client:
        page = client.get("/items/rv-b-fail").text
        assert failing.task.goal in html.unescape(page)
        assert len(re.findall(r'<section class="step[ "]', page)) == 30
        assert "<svg class=\"screen\"" in page
        assert "incomplete" in page and "checker <b>final_state</b>" in page
        assert 'class="diff"' in page
        passing = client.get("/items/rv-a-pass").text
        shot = live_gate.samples[0].episode.steps[0].observation.screenshot
        assert f'src="/blobs/{shot.sha256}"' in passing
        blob = client.get(f"/blobs/{shot.sha256}")
        assert blob.status_code == 200 and blob.headers["content-type"] == "image/svg+xml"
        assert client.get("/blobs/" + "0" * 64).status_code == 404


def test_filters_narrow_the_queue(live_gate: LiveGate) -> None:
    with signed_in(live_gate) as client:
        assert "rv-b-fail" in client.get("/?verdict=failed").text
        assert "rv-a-pass" not in client.get("/?verdict=failed").text
        assert "rv-b-fail" in client.get("/?tier=hard").text
        assert "rv-c-correction" not in client.get("/?tier=hard").text
        assert "rv-b-fail" in client.get("/?category=incomplete").text
        assert "rv-a-pass" not in client.get("/?family=memory").text
        assert "rv-b-fail" not in client.get("/?tier=easy").text


def test_a_decision_needs_the_sessions_csrf_token(live_gate: LiveGate) -> None:
    with signed_in(live_gate) as client:
        answer = client.post("/items/rv-a-pass/decision",
                             data={"decision": "approved", "csrf": "forged"})
        assert answer.status_code == 403
        assert live_gate.handle.gate.queue.items["rv-a-pass"].status == "waiting"


def test_approve_and_reject_in_the_browser_flow_publish_signed_decisions(
        live_gate: LiveGate) -> None:
    gate = live_gate.handle.gate
    with signed_in(live_gate) as client:
        csrf = csrf_of(client.get("/items/rv-a-pass").text)
        answer = client.post("/items/rv-a-pass/decision",
                             data={"decision": "approved", "csrf": csrf})
        assert answer.status_code == 303 and answer.headers["location"].startswith("/items/")
        no_reason = client.post("/items/rv-b-fail/decision",
                                data={"decision": "rejected", "csrf": csrf})
        assert "needs+a+reason" in no_reason.headers["location"]
        client.post("/items/rv-b-fail/decision",
                    data={"decision": "rejected", "reason": "loops", "csrf": csrf})
        stats = client.get("/stats").text
        assert 'id="s-approved">1<' in stats and 'id="s-rejected">1<' in stats
    assert gate.queue.items["rv-a-pass"].status == "approved"
    verifier = DecisionVerifier(gate.signer.public_key)
    for item in gate.queue.items.values():
        verifier.expect(item.request)
    results = [verifier.verify(o) for i in gate.queue.items.values() for o in i.opinions]
    assert [r.accepted for r in results] == [True, True]


def test_the_author_of_a_correction_cannot_decide_it(live_gate: LiveGate) -> None:
    with signed_in(live_gate, "carol") as client:
        assert "rv-c-correction" not in client.get("/").text
        page = client.get("/items/rv-c-correction").text
        assert 'id="decide"' not in page and "You wrote this item" in page
        answer = client.post("/items/rv-c-correction/decision",
                             data={"decision": "approved", "csrf": csrf_of(page)})
        assert "wrote+this+item" in answer.headers["location"]
    api = httpx.post(f"{live_gate.url}/api/items/rv-c-correction/decision",
                     json={"decision": "approved"},
                     headers={"Authorization": f"Bearer {live_gate.tokens['carol']}"})
    assert api.status_code == 409
    assert live_gate.handle.gate.queue.items["rv-c-correction"].status == "waiting"


def test_the_json_api(live_gate: LiveGate) -> None:
    headers = {"Authorization": f"Bearer {live_gate.tokens['alice']}"}
    with httpx.Client(base_url=live_gate.url, headers=headers, timeout=30) as client:
        queue = client.get("/api/queue").json()
        assert queue["reviewer"] == "alice" and queue["waiting"] == 3
        item = client.get("/api/items/rv-b-fail").json()
        assert len(item["episodes"][0]["steps"]) == 30 and item["verdict"] == "failed"
        made = client.post("/api/items/rv-b-fail/decision",
                           json={"decision": "rejected", "reason": "random walk"})
        assert made.status_code == 201 and made.json()["final"]
        again = client.post("/api/items/rv-b-fail/decision", json={"decision": "approved"})
        assert again.status_code == 409
        stats = client.get("/api/stats").json()
        assert stats["decisions"] == 1 and stats["reviewers"][0]["reviewer"] == "alice"


def test_revoking_or_reissuing_a_token_ends_its_sessions(live_gate: LiveGate) -> None:
    tokens = live_gate.handle.gate.tokens
    with signed_in(live_gate, "carol") as client:
        assert client.get("/").status_code == 200
        tokens.issue("carol")  # rotated: the session signed in with the old token ends
        answer = client.get("/")
        assert answer.status_code == 303 and answer.headers["location"] == "/login"


def test_every_page_refuses_framing_and_foreign_content(live_gate: LiveGate) -> None:
    with httpx.Client(base_url=live_gate.url, timeout=30) as client:
        login = client.get("/login")
    with signed_in(live_gate) as client:
        pages = [login, client.get("/"), client.get("/items/rv-b-fail"), client.get("/static/gate.js"),
                 client.get("/api/queue")]
    for answer in pages:
        assert answer.headers["X-Frame-Options"] == "DENY", answer.url
        policy = answer.headers["Content-Security-Policy"]
        assert "frame-ancestors 'none'" in policy and "script-src 'self'" in policy, answer.url
        assert "unsafe-eval" not in policy and answer.headers["X-Content-Type-Options"] == "nosniff"
