"""A run diff as one self-contained HTML page: the waterfall chart and the Markdown tables rendered as HTML."""

from __future__ import annotations

import html

from analyzer.diff.model import RunDiff
from analyzer.report.diff_charts import diff_waterfall_chart
from analyzer.report.diff_markdown import render_diff_markdown
from analyzer.report.html import figure_html
from analyzer.report.html_style import standalone_page


def _markdown_to_html(md: str) -> str:
    """Just enough Markdown (headings, bullets, pipe tables) for the diff page."""
    out, in_table, in_list = [], False, False
    for line in md.splitlines():
        if line.startswith("<!--"):
            continue
        if line.startswith("|"):
            cells = [html.escape(c.strip().strip("`")) for c in line.strip("|").split("|")]
            if set("".join(cells)) <= set("-"):
                continue
            tag = "th" if not in_table else "td"
            row = "".join(f"<{tag}>{c}</{tag}>" for c in cells)
            out.append(("<table>" if not in_table else "") + f"<tr>{row}</tr>")
            in_table = True
            continue
        if in_table:
            out.append("</table>")
            in_table = False
        if line.startswith("- "):
            out.append(("<ul>" if not in_list else "") + f"<li>{html.escape(line[2:]).replace('`', '')}</li>")
            in_list = True
            continue
        if in_list:
            out.append("</ul>")
            in_list = False
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            out.append(f"<h{level}>{html.escape(line.lstrip('# '))}</h{level}>")
        elif line.strip():
            out.append(f"<p>{html.escape(line)}</p>")
    return "\n".join(out + (["</table>"] if in_table else []) + (["</ul>"] if in_list else []))


def render_diff_html(diff: RunDiff, fail_pct: float | None = None, plotly_src: str | None = None) -> str:
    """The page: plotly.js from the plotly package inlined once, the waterfall with a fixed div id."""
    body = _markdown_to_html(render_diff_markdown(diff, fail_pct))
    chart = figure_html(diff_waterfall_chart(diff), "diff-waterfall")
    head, sep, rest = body.partition("<h2>")
    return standalone_page("npu-triage diff", f'{head}<div class="card">{chart}</div>{sep}{rest}', plotly_src)
