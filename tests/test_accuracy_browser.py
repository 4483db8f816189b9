"""accuracy.html in a real headless Chromium: no JS errors, every heatmap drawn, the profile's times shown."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from analyzer.cli import main
from fixtures.dumps.generate import generate
from tests.browser_fixture import require_browser
from tests.headless_chromium import chromium, open_and_wait

pytestmark = pytest.mark.browser
SCREENSHOTS = Path(__file__).resolve().parents[1] / "reports" / "screenshots"


def test_accuracy_page_draws_every_heatmap_without_errors(tmp_path):
    require_browser()
    truth = generate(tmp_path / "set", 4401, "channel", 8, 16)
    args = [str(tmp_path / "set" / "dump" / "native"), str(tmp_path / "set" / "reference" / "npy")]
    assert main(["accuracy", *args, "--profile", str(tmp_path / "set" / "profile"), "--out", str(tmp_path / "o")]) == 0
    page = tmp_path / "o" / "native" / "accuracy.html"
    with chromium() as driver:
        open_and_wait(driver, page)
        assert driver.execute_script("return window.__errors") == []
        assert [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"] == []
        maps = driver.execute_script(
            "return Array.from(document.querySelectorAll('.plotly-graph-div')).map(d => [d.id, !!d._fullLayout])"
        )
        assert maps and all(drawn for _, drawn in maps) and maps[0][0] == "error-map-0"
        text = driver.execute_script("return document.body.innerText")
        assert f"first-divergent-operator: {truth['op_name']}".upper() in text.upper() and "device us" in text
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        driver.set_window_size(1400, min(int(driver.execute_script("return document.body.scrollHeight")), 6000))
        time.sleep(0.3)
        driver.save_screenshot(str(SCREENSHOTS / "accuracy_channel_fault.png"))
