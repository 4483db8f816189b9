"""A run diff as one self-contained HTML page: the headline and the op types that changed first, then the
waterfall chart and the other Markdown tables rendered as HTML."""

from __future__ import annotations

import html

from analyzer.diff.model import RunDiff
from analyzer.report.diff_markdown import render_diff_markdown
from analyzer.report.html_sections import short_text
from analyzer.report.html_style import report_page

CELL_CHARS = 48  # a longer cell (an input shape list) is cut, the whole of it on hover


def _text_html(line: str) -> str:
    """A heading or a paragraph."""
    if line.startswith("#"):
        level = len(line) - len(line.lstrip("#"))
        return f"<h{level}>{html.escape(line.lstrip('# '))}</h{level}>"
    return f"<p>{html.escape(line)}</p>"


def _markdown_to_html(md: str) -> str:
    """Just enough Markdown (headings, bullets, pipe tables) for the diff page."""
    out: list[str] = []
    opened = {"table": False, "ul": False}

    def add(block: str, item: str) -> None:
        out.append(("" if opened[block] else f"<{block}>") + item)
        opened[block] = True

    def close(block: str) -> None:
        if opened[block]:
            out.append(f"</{block}>")
            opened[block] = False

    for line in md.splitlines():
        if line.startswith("<!--"):
            continue
        if line.startswith("|"):
            raw = [c.strip().strip("`") for c in line.strip("|").split("|")]
            if set("".join(raw)) <= set("-"):
                continue
            tag = "td" if opened["table"] else "th"
            cells = "".join(f"<{tag}>{short_text(c, CELL_CHARS, 'span')}</{tag}>" for c in raw)
            add("table", f"<tr>{cells}</tr>")
            continue
        close("table")
        if line.startswith("- "):
            add("ul", f"<li>{html.escape(line[2:]).replace('`', '')}</li>")
            continue
        close("ul")
        if line.strip():
            out.append(_text_html(line))
    close("table")
    close("ul")
    return "\n".join(out)


def render_diff_html(diff: RunDiff, fail_pct: float | None = None, plotly_src: str | None = None) -> str:
    """The page: the headline, then the first section with rows (the diff's top finding, the op types that
    changed when some did) in a card, then the waterfall, then the other sections; plotly.js inlined once,
    the waterfall with a fixed div id."""
    # the charts' modules (polars) load only when a page is drawn, not with the diff command
    from analyzer.report.diff_charts import diff_waterfall_chart
    from analyzer.report.html import figure_html

    body = _markdown_to_html(render_diff_markdown(diff, fail_pct))
    chart = figure_html(diff_waterfall_chart(diff), "diff-waterfall")
    head, *sections = body.split("<h2>")
    # the diff's top finding: the first section with a row or an item (an empty table is not a verdict)
    top = next((i for i, sec in enumerate(sections) if "<td>" in sec or "<li>" in sec), None)
    first = f'<section class="finding top" id="finding-1"><h2>{sections.pop(top)}</section>' if top is not None else ""
    rest = "".join(f"<h2>{sec}" for sec in sections)
    page = f'{head}{first}<div class="card">{chart}</div>{rest}'
    return report_page("npu-triage diff", page, plotly_src)
