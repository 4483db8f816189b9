"""A run diff as one self-contained HTML page: the waterfall chart and the Markdown tables rendered as HTML."""

from __future__ import annotations

import html

from analyzer.diff.model import RunDiff
from analyzer.report.diff_charts import diff_waterfall_chart
from analyzer.report.diff_markdown import render_diff_markdown
from analyzer.report.html import figure_html
from analyzer.report.html_style import report_page


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
            cells = [html.escape(c.strip().strip("`")) for c in line.strip("|").split("|")]
            if set("".join(cells)) <= set("-"):
                continue
            tag = "td" if opened["table"] else "th"
            add("table", "<tr>" + "".join(f"<{tag}>{c}</{tag}>" for c in cells) + "</tr>")
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
    """The page: plotly.js from the plotly package inlined once, the waterfall with a fixed div id."""
    body = _markdown_to_html(render_diff_markdown(diff, fail_pct))
    chart = figure_html(diff_waterfall_chart(diff), "diff-waterfall")
    head, sep, rest = body.partition("<h2>")
    return report_page("npu-triage diff", f'{head}<div class="card">{chart}</div>{sep}{rest}', plotly_src)
