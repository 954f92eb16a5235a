"""Benchmark of the review gate: item page latency (p50/p99) and decisions/s with 20
concurrent reviewers on loopback, for a 30-step trajectory.

The gate runs as `flywheel run` starts it (uvicorn in a thread, the feed on a real local
broker, Ed25519 signing, decisions acknowledged by the broker before the answer). The
reviewers run in a separate process (asyncio + httpx, one signed-in client each) so the load
generator does not share the gate's interpreter. Every figure is the median over --reps
repetitions, set against a baseline from the same run: `/healthz` under the same load (the
web stack's floor) for latency; for decisions/s, the same signed events published straight
through the gate's publisher from 20 threads (the broker's ack floor) and the rate of
`/healthz` requests under the same load (the HTTP floor).

How to run (from the repository root; not a test):

    .venv/bin/python bench/gate.py               # 5 repetitions
    .venv/bin/python bench/gate.py --reps 7 --requests 50
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from schemas.reviews import ReviewDecided, ReviewRequested
from schemas.topics import TOPICS
from services.gate.launch import start_gate
from services.gate.samples import run_sample
from services.gate.service import FEED_TOPICS, GateTopics
from services.gate.settings import GateSettings
from streams.admin import create_topics
from streams.broker import LocalBroker
from streams.producer import TypedProducer

__all__ = ["main"]

logger = logging.getLogger(__name__)

#: The issue's load: 20 reviewers at once, a 30-step trajectory, p99 under 100 ms.
REVIEWERS = 20
STEPS = 30
P99_TARGET_MS = 100.0
#: Distinct trajectories behind the items: enough that the page cache cannot hold just one.
TRAJECTORIES = 20
TABLE_WIDTH = 120


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(q * len(ordered)), len(ordered) - 1)]


async def _reviewer_pages(url: str, token: str, paths: list[str]) -> list[float]:
    import httpx

    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        answer = await client.post("/login", data={"token": token})
        if answer.status_code != 303:
            raise RuntimeError(f"sign-in failed: {answer.status_code}")
        out = []
        for path in paths:
            start = time.perf_counter()
            page = await client.get(path)
            out.append((time.perf_counter() - start) * 1000)
            if page.status_code != 200:
                raise RuntimeError(f"GET {path}: {page.status_code}")
        return out


async def _reviewer_decisions(url: str, token: str, review_ids: list[str]) -> int:
    import httpx

    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as client:
        for review_id in review_ids:
            answer = await client.post(f"/api/items/{review_id}/decision",
                                       json={"decision": "approved"})
            if answer.status_code != 201:
                raise RuntimeError(f"decision on {review_id}: {answer.status_code} "
                                   f"{answer.text[:200]}")
        return len(review_ids)


def _client(job: dict, out: multiprocessing.Queue) -> None:
    """Runs in the load process: all reviewers at once; returns latencies or the elapsed time."""

    async def run() -> object:
        start = time.perf_counter()
        if job["kind"] == "pages":
            lists = await asyncio.gather(*(_reviewer_pages(job["url"], t, p)
                                           for t, p in zip(job["tokens"], job["paths"],
                                                           strict=True)))
            return {"latencies": [x for lst in lists for x in lst],
                    "elapsed": time.perf_counter() - start}
        done = await asyncio.gather(*(_reviewer_decisions(job["url"], t, ids)
                                      for t, ids in zip(job["tokens"], job["ids"], strict=True)))
        return {"decisions": sum(done), "elapsed": time.perf_counter() - start}

    try:
        out.put(asyncio.run(run()))
    except Exception as error:  # noqa: BLE001 - reported to the parent as a failure
        out.put(RuntimeError(str(error)))


def _load(job: dict) -> object:
    ctx = multiprocessing.get_context("spawn")
    results: multiprocessing.Queue = ctx.Queue()
    process = ctx.Process(target=_client, args=(job, results))
    process.start()
    result = results.get(timeout=600)
    process.join(timeout=30)
    if isinstance(result, Exception):
        raise result
    return result


def main(reps: int = typer.Option(5, min=3, help="Repetitions per figure (median reported)."),
         requests: int = typer.Option(25, min=5, help="Item pages each reviewer loads per rep."),
         decisions: int = typer.Option(10, min=2, help="Decisions each reviewer makes per rep."),
         ) -> None:
    """Measure the gate under 20 concurrent reviewers and print medians with baselines."""
    logging.basicConfig(level=logging.ERROR)
    console = Console(width=max(Console().width, TABLE_WIDTH))
    with tempfile.TemporaryDirectory(prefix="gate-bench-") as tmp, \
            LocalBroker.on_free_port(Path(tmp) / "broker") as broker:
        suffix = uuid.uuid4().hex[:8]
        topics = GateTopics(*(TOPICS[n].renamed(f"bench-{suffix}-{n}") for n in FEED_TOPICS))
        create_topics(broker.bootstrap, topics.all(), with_dlq=True)
        console.print(f"building {TRAJECTORIES} {STEPS}-step trajectories on SimPhones …")
        samples = [run_sample("note_phone_of_relation", i, policy="random", steps=STEPS)
                   for i in range(TRAJECTORIES)]
        assert all(len(s.episode.steps) == STEPS for s in samples)
        items_needed = reps * REVIEWERS * decisions + TRAJECTORIES
        by_type = {name: t for t in topics.all() for name in t.type_names}
        with TypedProducer(broker.bootstrap) as producer:
            for s in samples:
                for event in s.events:
                    producer.send(by_type[event.type], event)
            extra = items_needed - TRAJECTORIES
            for n in range(extra):
                base = samples[n % TRAJECTORIES].request
                producer.send(topics.reviews, ReviewRequested.model_validate(
                    {**base.model_dump(), "event_id": uuid.uuid4().hex,
                     "review_id": f"rv-bench-{n:05d}"}))
            producer.flush()
        handle = start_gate(broker.bootstrap, Path(tmp), GateSettings(port=0), topics=topics,
                            create_key=True)
        try:
            gate = handle.gate
            tokens = [gate.tokens.issue(f"reviewer{i:02d}") for i in range(REVIEWERS)]
            deadline = time.monotonic() + 120
            while len(gate.queue.items) < items_needed or len(gate.queue.episodes) < TRAJECTORIES:
                if time.monotonic() > deadline:
                    raise RuntimeError("the gate did not load the bench items within 120 s")
                time.sleep(0.1)
            console.print(f"gate on {handle.url} with {len(gate.queue.items):,} items; "
                          f"{REVIEWERS} reviewers, {reps} repetitions")
            page_ids = [s.request.review_id for s in samples]
            p50s, p99s, base50, base99, rates, floors, http = [], [], [], [], [], [], []
            solo, solo_base, cpu_page, cpu_health = [], [], [], []
            for rep in range(reps):
                paths = [[f"/items/{page_ids[(r + k) % TRAJECTORIES]}" for k in range(requests)]
                         for r in range(REVIEWERS)]
                cpu = _cpu_s()
                lat = _load({"kind": "pages", "url": handle.url, "tokens": tokens,
                             "paths": paths})["latencies"]
                cpu_page.append((_cpu_s() - cpu) * 1000 / len(lat))
                p50s.append(_percentile(lat, 0.50))
                p99s.append(_percentile(lat, 0.99))
                cpu = _cpu_s()
                answer = _load({"kind": "pages", "url": handle.url, "tokens": tokens,
                                "paths": [["/healthz"] * requests] * REVIEWERS})
                cpu_health.append((_cpu_s() - cpu) * 1000 / len(answer["latencies"]))
                health = answer["latencies"]
                http.append(len(health) / answer["elapsed"])  # sign-ins included: a floor
                base50.append(_percentile(health, 0.50))
                base99.append(_percentile(health, 0.99))
                # one reviewer alone: the page's own cost, without queueing behind 19 others
                solo.append(statistics.median(_load({
                    "kind": "pages", "url": handle.url, "tokens": tokens[:1],
                    "paths": [[f"/items/{page_ids[k % TRAJECTORIES]}"
                               for k in range(requests)]]})["latencies"]))
                solo_base.append(statistics.median(_load({
                    "kind": "pages", "url": handle.url, "tokens": tokens[:1],
                    "paths": [["/healthz"] * requests]})["latencies"]))
                start = rep * REVIEWERS * decisions
                ids = [[f"rv-bench-{start + r * decisions + k:05d}" for k in range(decisions)]
                       for r in range(REVIEWERS)]
                made = _load({"kind": "decisions", "url": handle.url, "tokens": tokens,
                              "ids": ids})
                rates.append(made["decisions"] / made["elapsed"])
                floors.append(_publish_floor(gate, REVIEWERS * decisions))
                console.print(f"rep {rep + 1}/{reps}: item page p50 {p50s[-1]:.1f} ms, "
                              f"p99 {p99s[-1]:.1f} ms; {rates[-1]:,.0f} decisions/s")
        finally:
            handle.stop()
    table = Table("figure", "median", "baseline", "baseline median", "× baseline",
                  title=f"gate benchmark: {REVIEWERS} concurrent reviewers, {STEPS}-step "
                        f"trajectory, medians of {reps} repetitions")
    rows = [("item page, 1 reviewer, p50 (ms)", statistics.median(solo), "/healthz p50",
             statistics.median(solo_base)),
            ("gate CPU per item page (ms)", statistics.median(cpu_page),
             "gate CPU per /healthz", statistics.median(cpu_health)),
            ("item page p50 (ms)", statistics.median(p50s), "/healthz p50",
             statistics.median(base50)),
            ("item page p99 (ms)", statistics.median(p99s), "/healthz p99",
             statistics.median(base99)),
            ("decisions/s (signed, acked)", statistics.median(rates),
             "publish signed events, 20 threads", statistics.median(floors)),
            ("decisions/s (signed, acked)", statistics.median(rates),
             "GET /healthz/s, same 20 clients", statistics.median(http))]
    for name, value, base_name, base in rows:
        table.add_row(name, f"{value:,.1f}", base_name, f"{base:,.1f}",
                      f"{value / base:.2f}" if base else "n/a")
    console.print(table)
    p99 = statistics.median(p99s)
    console.print(f"item page p99 {p99:.1f} ms {'meets' if p99 < P99_TARGET_MS else 'misses'} "
                  f"the {P99_TARGET_MS:.0f} ms target")


def _cpu_s() -> float:
    """CPU seconds of this process (the gate: web server, feed and producer threads)."""
    times = os.times()
    return times.user + times.system


def _publish_floor(gate: object, n: int) -> float:
    """Signed decisions published straight through the gate's publisher from 20 threads."""
    signer, publisher = gate.signer, gate.publisher  # type: ignore[attr-defined]
    events = [signer.sign(ReviewDecided(
        review_id=f"rv-floor-{uuid.uuid4().hex}", decision="approved", reviewer="floor",
        decision_id=uuid.uuid4().hex, source="bench/1", correlation_id="bench"))
        for _ in range(n)]
    start = time.perf_counter()
    with ThreadPoolExecutor(REVIEWERS) as pool:
        list(pool.map(publisher.publish, events))
    return n / (time.perf_counter() - start)


if __name__ == "__main__":
    typer.run(main)
