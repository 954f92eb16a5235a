"""The run report: one offline HTML file rebuilt from the archive, that a headless browser opens
with no network and whose chart is an embedded image."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from schemas.training import EvalReported, FamilyScores, Interval
from services.archiver.rows import new_rows, to_table
from services.archiver.store import ArchiveStore
from services.cli.report_cmd import build_report, write_report
from tests.services.archiver.helpers import record_of


def _archive(root: Path) -> Path:
    events = [EvalReported(source="trainer/0", correlation_id="run", subject="checkpoint", subject_id=f"ck-{g}",
                           split="dev", episodes=40, scores=FamilyScores(tool=0.1 * g, memory=0, skills=0, subagent=0),
                           overall=0.05 * g, tier_scores={"easy": 0.1 * g},
                           intervals={"overall": Interval(low=0.0, high=0.1 * g)}, success=0.05 * g,
                           general_perplexity=35.0 + g, general_tool_use=0.0) for g in (1, 2)]
    records = [record_of(e, topic="flywheel.evals", offset=i) for i, e in enumerate(events)]
    ArchiveStore(root).write(to_table(new_rows(records, set()), 1))
    return root


def test_the_report_holds_each_generation_and_needs_no_network(tmp_path: Path) -> None:
    page = build_report(_archive(tmp_path / "archive"))
    assert "ck-1" in page and "ck-2" in page and "Scores per generation" in page
    assert "data:image/png;base64," in page
    assert "http://" not in page and "https://" not in page  # nothing to fetch
    empty = build_report(tmp_path / "nothing")
    assert "none in the archive" in empty


def test_a_headless_browser_opens_it_offline(tmp_path: Path) -> None:
    chromium, driver_path = shutil.which("chromium") or "/usr/bin/chromium", shutil.which("chromedriver") or "/usr/bin/chromedriver"
    if not (Path(chromium).exists() and Path(driver_path).exists()):
        pytest.skip("headless Chromium is not installed: 'make test' installs chromium and chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    path = write_report(_archive(tmp_path / "archive"), tmp_path / "report.html")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--proxy-server=127.0.0.1:9", "--window-size=1280,1600"):  # any network use would fail
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        driver.get(path.as_uri())
        assert driver.title == "Flywheel report"
        image = driver.find_element(By.TAG_NAME, "img")
        assert driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth", image) > 100
        rows = driver.find_elements(By.CSS_SELECTOR, "table tr")
        assert any("ck-2" in r.text for r in rows)
    finally:
        driver.quit()


def test_a_promoted_harness_change_is_listed_with_its_deltas(tmp_path: Path) -> None:
    from schemas.harness import HarnessPromoted

    promoted = HarnessPromoted(source="evolver/0", correlation_id="run", proposal_id="prop-7", harness="h-new",
                               previous="h-old", motivated_by=["f1", "f2"], dev_delta=0.05, test_delta=0.02)
    root = tmp_path / "archive"
    ArchiveStore(root).write(to_table(new_rows([record_of(promoted, topic="flywheel.harness", offset=0)], set()), 1))
    page = build_report(root)
    assert "prop-7" in page and "h-new" in page and "<td>2</td>" in page
    assert "promoted proposal" not in build_report(_archive(tmp_path / "other"))  # none promoted: no table
