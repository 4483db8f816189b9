"""Debian's Chromium, headless, driven by selenium through Debian's chromedriver (never a browser download).

Shared by the browser tests (tests/browser_fixture.py) and bench/report_browser.py.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
CHROME_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1400,1000",
)
INSTALL_HINT = "apt-get install chromium chromium-driver; pip install selenium"

# True once the page has loaded and every plotly div holds the SVG plotly draws.
ALL_CHARTS_DRAWN_JS = (
    "const divs = document.querySelectorAll('.plotly-graph-div');"
    "return document.readyState === 'complete' && divs.length > 0 && "
    "Array.from(divs).every(e => e.querySelector('svg.main-svg') !== null);"
)


def missing_browser() -> str:
    """Why the browser cannot run here ('' when it can)."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed"
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        return f"{CHROMIUM} or {CHROMEDRIVER} is not installed"
    return ""


@contextmanager
def chromium() -> Iterator:
    """A selenium driver of headless Chromium with a fresh profile, closed and removed on exit."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="npu-triage-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*CHROME_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def open_and_wait(driver, page: Path, timeout_s: float = 60.0) -> float:
    """Load the page and wait until every chart is drawn; returns the seconds from navigation to drawn."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get_log("browser")  # drop what earlier pages logged
    started = time.monotonic()
    driver.get(page.resolve().as_uri())
    # Polled every 50 ms, not selenium's default 500 ms: the seconds returned are the bench's draw time.
    WebDriverWait(driver, timeout_s, poll_frequency=0.05).until(lambda d: d.execute_script(ALL_CHARTS_DRAWN_JS))
    return time.monotonic() - started


# Like ALL_CHARTS_DRAWN_JS, for any page: one without charts (index, logs) is drawn once loaded.
PAGE_DRAWN_JS = (
    "const divs = document.querySelectorAll('.plotly-graph-div');"
    "return document.readyState === 'complete' && "
    "Array.from(divs).every(e => e.querySelector('svg.main-svg') !== null);"
)

FIRST_SCREEN = (1400, 900)
# Where a page's first finding card starts, in CSS px from the top of the page (None when it has none).
FIRST_FINDING_TOP_JS = (
    "const e = document.querySelector(arguments[0]);"
    "return e === null ? null : Math.round(e.getBoundingClientRect().top + window.scrollY);"
)


def first_screen(driver, page: Path, selector: str, screenshot: Path | None = None) -> int | None:
    """Open ``page`` in a 1400 x 900 viewport, wait until it is drawn, save the first screen to ``screenshot``
    and return the y where ``selector`` (the first finding's card) starts."""
    from selenium.webdriver.support.ui import WebDriverWait

    width, height = FIRST_SCREEN
    metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    try:
        driver.get(page.resolve().as_uri())
        WebDriverWait(driver, 60, poll_frequency=0.05).until(lambda d: d.execute_script(PAGE_DRAWN_JS))
        if screenshot is not None:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            driver.save_screenshot(str(screenshot))
        return driver.execute_script(FIRST_FINDING_TOP_JS, selector)
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
