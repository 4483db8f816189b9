"""A report sent on its own: without its plotly.js each chart box says so and how to fix it; with
--self-contained the page alone draws its charts; the default page changes only by that fallback."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from plotly.offline import get_plotlyjs

from analyzer.cli import main
from analyzer.report.plotly_asset import missing_plotly_note, plotly_file_name
from tests.headless_chromium import open_and_wait

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "fixtures" / "examples" / "resnet_host_sync"
SHARED_TAG = re.compile(r'<script type="text/javascript" src="([^"]+)" onerror="[^"]*"></script>')

# True once the page has loaded and every chart box holds the note that plotly.js is missing.
ALL_NOTES_JS = (
    "const divs = document.querySelectorAll('.plotly-graph-div');"
    "return document.readyState === 'complete' && divs.length > 0 && "
    "Array.from(divs).every(e => e.querySelector('p.chart-missing') !== null);"
)


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    """report.html of the bundled example written by diagnose, shared (default) and --self-contained."""
    root = tmp_path_factory.mktemp("shared")
    written = {}
    for kind, extra in (("shared", []), ("inline", ["--self-contained"])):
        out = root / kind
        assert main(["diagnose", str(EXAMPLE), "--out", str(out), "--format", "html", "--quiet", *extra]) == 0
        (written[kind],) = out.rglob("report.html")
    return written


@pytest.mark.slow
def test_self_contained_writes_no_shared_file_and_differs_only_by_the_script(pages):
    shared, inline = (pages[k].read_text(encoding="utf-8") for k in ("shared", "inline"))
    assert (pages["shared"].parents[1] / plotly_file_name()).is_file()
    assert list(pages["inline"].parents[1].glob("plotly-*.min.js")) == []
    (src,) = SHARED_TAG.findall(shared)
    assert src == f"../{plotly_file_name()}"
    inline_tag = f'<script type="text/javascript">{get_plotlyjs()}</script>'
    assert inline.count(inline_tag) == 1 and " src=" not in inline.split("</head>")[0]
    # everything but the one script tag is the same bytes: the charts' markup is untouched
    assert SHARED_TAG.sub("PLOTLY", shared) == inline.replace(inline_tag, "PLOTLY")
    # the fallback lives only in the script's onerror: without it the tag is the plain one of before
    plain = f'<script type="text/javascript" src="{src}"></script>'
    assert SHARED_TAG.sub(plain, shared).count("chart-missing") == 0
    assert "--self-contained" in SHARED_TAG.search(shared).group(0)


def _alone(page: Path, folder: Path) -> Path:
    """The page copied alone into an empty folder, as a report sent by mail."""
    folder.mkdir()
    return Path(shutil.copy(page, folder / "report.html"))


@pytest.mark.browser
def test_report_alone_says_in_every_chart_box_how_to_fix_it(browser, pages, tmp_path):
    from selenium.webdriver.support.ui import WebDriverWait

    page = _alone(pages["shared"], tmp_path / "mail")
    browser.get_log("browser")
    browser.get(page.resolve().as_uri())
    WebDriverWait(browser, 30, poll_frequency=0.05).until(lambda d: d.execute_script(ALL_NOTES_JS))
    assert browser.execute_script("return window.__errors") == []
    severe = [e["message"] for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    assert all(plotly_file_name() in m for m in severe), severe  # only the missing file's failed load
    boxes = browser.execute_script(
        "return Array.from(document.querySelectorAll('.plotly-graph-div'))"
        ".map(e => [e.innerText, e.getBoundingClientRect().height])"
    )
    assert len(boxes) >= 8
    note = missing_plotly_note(plotly_file_name())
    assert all(text.strip() == note and height > 30 for text, height in boxes), boxes
    assert "--self-contained" in note and plotly_file_name() in note
    assert browser.execute_script("return document.querySelectorAll('svg.main-svg').length") == 0


@pytest.mark.browser
def test_self_contained_report_alone_draws_its_charts(browser, pages, tmp_path):
    page = _alone(pages["inline"], tmp_path / "mail")
    open_and_wait(browser, page)
    assert browser.execute_script("return window.__errors") == []
    assert [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"] == []
    assert browser.execute_script("return document.querySelectorAll('p.chart-missing').length") == 0
    drawn = browser.execute_script(
        "return Array.from(document.querySelectorAll('.plotly-graph-div'))"
        ".map(e => e.querySelectorAll('svg.main-svg').length > 0)"
    )
    assert len(drawn) >= 8 and all(drawn)


@pytest.mark.slow
def test_diff_and_sweep_self_contained_pages_carry_plotly_and_nothing_beside(tmp_path):
    sweep = ROOT / "fixtures" / "examples" / "batch_sweep"
    bs1, bs2 = sweep / "resnet50_bs1_20250109074803000_ascend_pt", sweep / "resnet50_bs2_20250109074903000_ascend_pt"
    diff_page, sweep_page = tmp_path / "diff.html", tmp_path / "sweep.html"
    assert main(["diff", str(bs1), str(bs2), "--html", str(diff_page), "--self-contained", "--force"]) in (0, 1)
    assert main(["sweep", f"{bs1}:bs=1", f"{bs2}:bs=2", "--html", str(sweep_page), "--self-contained"]) == 0
    inline_tag = f'<script type="text/javascript">{get_plotlyjs()}</script>'
    for page in (diff_page, sweep_page):
        text = page.read_text(encoding="utf-8")
        assert text.count(inline_tag) == 1 and SHARED_TAG.search(text) is None, page
    assert sorted(p.name for p in tmp_path.iterdir()) == ["diff.html", "sweep.html"]
