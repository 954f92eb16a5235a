"""The gate in a real browser: headless Chromium (Debian's chromium + chromium-driver) through
Selenium signs in, opens an item, approves with `a`, rejects with `r` and a reason, and
sees the stats page. A screenshot of the item page is kept under var/test-artifacts/."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.services.gate.conftest import LiveGate
from tests.services.gate.helpers import wait_for

pytestmark = pytest.mark.integration

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
#: Where the item page's screenshot is kept (CI uploads var/test-artifacts).
ARTIFACTS = Path(__file__).resolve().parents[3] / "var" / "test-artifacts"
#: Page loads and key presses on loopback take milliseconds; a safety net, not a speed check.
WAIT_S = 20


@pytest.fixture
def browser() -> Iterator[object]:
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.skip("headless Chromium is not installed: 'make test' installs chromium and "
                    "chromium-driver (apt-get install chromium chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1280,1600"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(0)
    try:
        yield driver
    finally:
        driver.quit()


def test_a_reviewer_approves_and_rejects_with_the_keyboard(live_gate: LiveGate,
                                                           browser: object) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    driver = browser
    wait = WebDriverWait(driver, WAIT_S)
    queue = live_gate.handle.gate.queue

    # sign in
    driver.get(f"{live_gate.url}/items/rv-a-pass")
    wait.until(ec.presence_of_element_located((By.ID, "token")))
    assert driver.current_url.endswith("/login")
    driver.find_element(By.ID, "token").send_keys(live_gate.tokens["alice"], Keys.ENTER)
    wait.until(ec.presence_of_element_located((By.ID, "queue")))
    rows = driver.find_elements(By.CSS_SELECTOR, "#queue tr.row")
    assert len(rows) == 3

    # j moves the selection, Enter opens the item
    body = driver.find_element(By.TAG_NAME, "body")
    body.send_keys("j")
    assert "selected" in rows[1].get_attribute("class")
    body.send_keys("k", Keys.ENTER)
    wait.until(ec.presence_of_element_located((By.ID, "decide")))
    assert driver.current_url.endswith("/items/rv-a-pass")
    goal = driver.find_element(By.ID, "goal").text
    assert goal == live_gate.samples[0].task.goal
    assert driver.find_elements(By.CSS_SELECTOR, "img.shot")  # the stored screenshot

    # the failing 30-step item: keep its page as an artefact, then approve the first with a
    driver.get(f"{live_gate.url}/items/rv-b-fail")
    wait.until(ec.presence_of_element_located((By.ID, "decide")))
    assert len(driver.find_elements(By.CSS_SELECTOR, "section.step")) == 30
    assert driver.find_elements(By.CSS_SELECTOR, "svg.screen")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "gate-item-page.png"
    assert driver.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    print(f"\nitem page screenshot: {shot}")

    driver.get(f"{live_gate.url}/items/rv-a-pass")
    wait.until(ec.presence_of_element_located((By.ID, "decide")))
    driver.find_element(By.TAG_NAME, "body").send_keys("a")
    wait.until(ec.url_contains("/items/rv-b-fail"))  # on to the next item
    wait_for(lambda: queue.items["rv-a-pass"].status == "approved", what="the approval")

    # r without a reason only opens the reason box; typing one and Enter rejects
    driver.find_element(By.TAG_NAME, "body").send_keys("r")
    reason = driver.switch_to.active_element
    assert reason.get_attribute("id") == "reason"
    assert queue.items["rv-b-fail"].status == "waiting"
    reason.send_keys("random taps, the note was never written", Keys.ENTER)
    wait.until(ec.url_contains("/items/rv-c-correction"))  # carol's correction is next
    item = queue.items["rv-b-fail"]
    assert item.status == "rejected"
    assert item.final is not None and item.final.reason.startswith("random taps")
    assert item.final.signature and item.final.reviewer == "alice"

    # the stats page
    driver.get(f"{live_gate.url}/stats")
    assert driver.find_element(By.ID, "s-approved").text == "1"
    assert driver.find_element(By.ID, "s-rejected").text == "1"
    assert driver.find_element(By.ID, "s-waiting").text == "1"
    assert "alice" in driver.find_element(By.ID, "reviewers").text


def test_a_keyboard_only_reviewer_clears_twenty_items_and_the_report_shows_the_rate(
        bootstrap: str, fresh_topic, tmp_path: Path, browser: object) -> None:  # type: ignore[no-untyped-def]
    """Sign in, `n` opens the first item, `a` twenty times approves each and moves on: no mouse.
    The gate's own figure (trajectories per hour of time on items) is on /stats, in its
    review.stats_reported event, and in the run report built from that event."""
    import time

    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    from services.archiver.rows import new_rows, to_table
    from services.archiver.store import ArchiveStore
    from services.cli.report_cmd import build_report
    from services.gate.launch import start_gate
    from services.gate.samples import run_sample
    from services.gate.settings import GateSettings
    from tests.services.archiver.helpers import record_of
    from tests.services.gate.helpers import fresh_gate_topics, publish

    topics = fresh_gate_topics(fresh_topic)
    samples = [run_sample("note_phone_of_relation", 200 + i, review_id=f"rv-k{i:02d}") for i in range(20)]
    publish(bootstrap, topics, [e for s in samples for e in s.events])
    handle = start_gate(bootstrap, tmp_path, GateSettings(port=0), topics=topics, create_key=True,
                        local_reviewer="alice")
    try:
        queue = handle.gate.queue
        wait_for(lambda: len(queue.items) == 20 and len(queue.verdicts) == 20, what="the gate's queue")
        driver = browser
        wait = WebDriverWait(driver, WAIT_S)
        driver.get(f"{handle.url}/")
        wait.until(ec.presence_of_element_located((By.ID, "token")))
        driver.find_element(By.ID, "token").send_keys(handle.local_token or "", Keys.ENTER)
        wait.until(ec.presence_of_element_located((By.ID, "queue")))
        started = time.monotonic()
        driver.find_element(By.TAG_NAME, "body").send_keys("n")
        for i in range(20):
            wait.until(ec.url_contains(f"/items/rv-k{i:02d}"))
            wait.until(ec.presence_of_element_located((By.ID, "decide")))
            driver.find_element(By.TAG_NAME, "body").send_keys("a")
            wait_for(lambda i=i: queue.items[f"rv-k{i:02d}"].status == "approved", what=f"approval {i}")
        wait.until(ec.url_contains("done=1"))
        elapsed = time.monotonic() - started
        print(f"\nkeyboard-only: 20 trajectories in {elapsed:.1f} s = {20 * 3600 / elapsed:,.0f} per hour")
        assert queue.counts()["approved"] == 20
        (alice,) = queue.throughput()
        assert alice.decisions == 20 and alice.per_hour > 0 and alice.median_s is not None
        driver.get(f"{handle.url}/stats")
        assert driver.find_element(By.ID, "s-approved").text == "20"
        event = handle.gate.stats_event()
    finally:
        handle.stop()
    archive = tmp_path / "archive"
    ArchiveStore(archive).write(to_table(new_rows([record_of(event, topic="flywheel.reviews", offset=0)], set()), 1))
    page = build_report(archive)
    assert "trajectories reviewed per hour" in page and f"<td>{round(alice.per_hour)}</td>" in page
