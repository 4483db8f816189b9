"""A run page with memory data in a real headless Chromium: the timeline's compute, bandwidth, memory and
core panels are drawn over the same pixels for the same times (one x axis), every panel draws data or
says why; screenshots go to reports/screenshots/ (git-ignored)."""

from __future__ import annotations

from pathlib import Path

import pytest

import analyzer
from tests.headless_chromium import open_and_wait

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / "reports" / "screenshots"
# per panel of the timeline: the plot area's left pixel, its width, its x range, and its note if any
PANELS_JS = """
const g = document.getElementById('chart-timeline');
const notes = (g.layout.annotations || []).map(a => a.text);
return [1, 2, 3, 4].map(i => {
  const a = g._fullLayout['xaxis' + (i === 1 ? '' : i)];
  return [a._offset, a._length, a.range[0], a.range[1]];
}).concat([notes]);
"""


@pytest.fixture(scope="module")
def browser(browser):
    """The shared browser at the window size the panels' positions are measured in."""
    browser.set_window_size(1400, 1000)
    return browser


def _timeline_panels(driver, export: Path, out: Path, name: str) -> tuple[list, list[str]]:
    with analyzer.load(export) as trace:
        diagnosis = analyzer.diagnose(trace)
        (page,) = analyzer.report(diagnosis, out, ["html"], trace=trace)
    open_and_wait(driver, page)
    assert not [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    *panels, notes = driver.execute_script(PANELS_JS)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    element = driver.find_element("id", "chart-timeline")
    driver.execute_script("arguments[0].scrollIntoView();", element)
    element.screenshot(str(SCREENSHOTS / f"memory_timeline_{name}.png"))
    return panels, notes


def test_memory_page_real_level1_panels_aligned(browser, real_dir: Path, tmp_path: Path) -> None:
    panels, notes = _timeline_panels(browser, real_dir / "torch_npu_level1_rank0_text", tmp_path, "level1")
    assert len({tuple(p) for p in panels}) == 1, panels  # same pixels, same time range, in all four panels
    assert notes[:4] == ["Compute busy (%)", "HBM (GB/s)", "Memory (MB)", "AI Core clock (MHz) / utilisation (%)"]
    assert len(notes) == 4  # every panel drew data: no note saying why not


def test_memory_page_real_sqlite_without_series_says_why(browser, real_dir: Path, tmp_path: Path) -> None:
    panels, notes = _timeline_panels(browser, real_dir / "msprof_db_2023", tmp_path, "msprof_db_2023")
    assert len({tuple(p) for p in panels}) == 1, panels
    assert any("at one instant" in n for n in notes) and any("memory records" in n for n in notes)
