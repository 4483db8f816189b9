"""The HTML report opened in a real headless Chromium: no JS errors, every section and chart drawn, no injection.

Needs Debian's ``chromium`` and ``chromium-driver`` and PyPI's ``selenium``; skips without them unless
the CI variable is set (CI must have them). Screenshots go to reports/screenshots/ (git-ignored).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from analyzer.ingest import load_export
from analyzer.ingest.database import connect
from analyzer.report.html import CHARTS, write_html
from tests.report_cases import HOSTILE_IMG, HOSTILE_SCRIPT, add_big_run, add_hostile_run, diagnosis_for

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / "reports" / "screenshots"
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
CHROME_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--window-size=1400,1000")
RENDER_LIMIT_S = 10.0
SIZE_LIMIT_BYTES = 30 * 1024 * 1024


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must provide it (apt-get install chromium chromium-driver; pip install selenium)")
    pytest.skip(f"{reason} (apt-get install chromium chromium-driver; pip install selenium)")


@pytest.fixture(scope="module")
def browser():
    """Headless Debian Chromium through the Debian chromedriver, with a fresh profile; never a download."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _unavailable("selenium is not installed")
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        _unavailable(f"{CHROMIUM} or {CHROMEDRIVER} is not installed")
    profile = tempfile.mkdtemp(prefix="npu-triage-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*CHROME_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def _open(driver, page: Path, timeout_s: float = 60.0) -> float:
    """Load the page and wait until every plotly div has drawn its SVG; returns the seconds it took."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get_log("browser")  # drop what earlier pages logged
    started = time.monotonic()
    driver.get(page.resolve().as_uri())
    WebDriverWait(driver, timeout_s).until(lambda d: d.execute_script(
        "const divs = document.querySelectorAll('.plotly-graph-div');"
        "return document.readyState === 'complete' && divs.length > 0 && "
        "Array.from(divs).every(e => e.querySelector('svg.main-svg') !== null);"))
    return time.monotonic() - started


def _check_page(driver, finding_count: int) -> None:
    """No JS errors; every finding section and every chart present and drawn."""
    assert driver.execute_script("return window.__errors") == []
    severe = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    assert severe == []
    sections = driver.execute_script("return Array.from(document.querySelectorAll('section.finding')).map(e => e.id)")
    assert sections == [f"finding-{i}" for i in range(1, finding_count + 1)]
    drawn = driver.execute_script(
        "return Array.from(document.querySelectorAll('.plotly-graph-div'))"
        ".map(e => [e.id, e.querySelectorAll('svg.main-svg').length > 0])")
    ids = {div_id for div_id, _ in drawn}
    assert {f"chart-{key.replace('_', '-')}" for key in CHARTS} <= ids
    assert len(drawn) == len(CHARTS) + finding_count
    assert all(ok for _, ok in drawn), [div_id for div_id, ok in drawn if not ok]


def _screenshot(driver, name: str) -> Path:
    """A PNG of the whole page (window grown to the page height, capped) under reports/screenshots/."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1400, min(int(height), 8000))
    time.sleep(0.3)  # let plotly's responsive resize settle
    path = SCREENSHOTS / f"{name}.png"
    driver.save_screenshot(str(path))
    driver.set_window_size(1400, 1000)
    return path


def test_report_browser_real_level1_renders_without_errors(browser, real_dir, tmp_path):
    ingested = load_export(real_dir / "torch_npu_level1_rank0_text")
    run_id = ingested.run_ids[0]
    diagnosis = diagnosis_for(ingested.con, run_id)
    page = write_html(diagnosis, ingested.con, tmp_path / "report.html")
    _open(browser, page)
    _check_page(browser, len(diagnosis.findings))
    assert _screenshot(browser, "torch_npu_level1_rank0_text").stat().st_size > 10_000


def test_report_browser_hostile_names_show_as_text_without_alert(browser, tmp_path):
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By

    con = connect()
    diagnosis = add_hostile_run(con)
    page = write_html(diagnosis, con, tmp_path / "report.html")
    _open(browser, page)
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018 (raises when no dialog is open)
    _check_page(browser, len(diagnosis.findings))
    text = browser.find_element(By.TAG_NAME, "body").text
    assert HOSTILE_SCRIPT in text and HOSTILE_IMG in text
    assert browser.find_elements(By.CSS_SELECTOR, "img") == []
    assert browser.execute_script("return document.querySelectorAll('main script').length") == len(
        CHARTS) + len(diagnosis.findings)
    ticks = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#chart-pareto .xtick text")]
    assert HOSTILE_SCRIPT in ticks and HOSTILE_IMG in ticks
    _screenshot(browser, "hostile_names")


def test_report_browser_two_million_tasks_small_and_fast(browser, tmp_path):
    con = connect()
    diagnosis = add_big_run(con, 2_000_000)
    started = time.monotonic()
    page = write_html(diagnosis, con, tmp_path / "report.html")
    render_s = time.monotonic() - started
    size = page.stat().st_size
    load_s = _open(browser, page)
    print(f"\n2M tasks: render_html {render_s:.2f} s, {size / 1e6:.2f} MB, headless Chromium draw {load_s:.2f} s")
    assert size < SIZE_LIMIT_BYTES
    assert load_s < RENDER_LIMIT_S
    _check_page(browser, len(diagnosis.findings))
    _screenshot(browser, "generated_2m_tasks")
