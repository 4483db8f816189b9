"""The stylesheet and the error-collector script inlined into every HTML report (no external fonts or files)."""

from __future__ import annotations

from html import escape

from analyzer.report.plotly_asset import plotly_script_tag

# Set before anything else runs, so a browser test can read window.__errors after load.
ERROR_COLLECTOR = (
    "window.__errors = [];"
    "window.addEventListener('error', function (e) { window.__errors.push(String(e.message || e)); });"
    "window.addEventListener('unhandledrejection', function (e) { window.__errors.push(String(e.reason)); });"
)

CSS = """
:root { --fg: #1f2933; --muted: #616e7c; --line: #e4e7eb; --bg: #f5f7fa; --card: #ffffff;
        --critical: #c0392b; --warning: #d68910; --info: #2f6db5; --ok: #3a7d44; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); line-height: 1.45;
       font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif; }
main { max-width: 1280px; margin: 0 auto; padding: 20px 24px 48px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 32px 0 12px; padding-bottom: 6px; border-bottom: 2px solid var(--line); }
h3 { font-size: 16px; margin: 0 0 6px; }
.subtitle { color: var(--muted); margin: 0 0 16px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr)); gap: 12px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; }
.card h3 { font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid var(--line); vertical-align: top;
         overflow-wrap: anywhere; }
th { color: var(--muted); font-weight: 600; white-space: nowrap; }
td.num { white-space: nowrap; overflow-wrap: normal; }
table.kv th { width: 42%; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
details { margin-top: 12px; background: var(--card); border: 1px solid var(--line); border-radius: 8px;
          padding: 8px 14px; }
summary { cursor: pointer; font-weight: 600; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600;
         color: #fff; background: var(--muted); text-transform: uppercase; letter-spacing: .03em; }
.badge.critical, .badge.failed, .badge.error { background: var(--critical); }
.badge.warning, .badge.skipped { background: var(--warning); }
.badge.info { background: var(--info); }
.badge.ran { background: var(--ok); }
.finding { background: var(--card); border: 1px solid var(--line); border-left: 5px solid var(--muted);
           border-radius: 8px; padding: 14px 16px; margin-bottom: 16px; }
.finding.critical { border-left-color: var(--critical); }
.finding.warning { border-left-color: var(--warning); }
.finding.info { border-left-color: var(--info); }
.finding-body { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1.25fr); gap: 16px; }
@media (max-width: 900px) { .finding-body { grid-template-columns: minmax(0, 1fr); } }
.finding .meta { color: var(--muted); font-size: 13px; margin: 0 0 8px; }
.finding .message { font-size: 15px; margin: 0 0 10px; }
.finding .message, .finding .meta { overflow-wrap: anywhere; }  /* long op names and shapes */
.finding .numbers { display: flex; flex-wrap: wrap; gap: 6px 18px; margin: 0 0 10px; font-size: 13px; }
.finding .numbers b { font-variant-numeric: tabular-nums; }
.advice { background: #f0f6ff; border-radius: 6px; padding: 8px 12px; margin: 0 0 10px; }
.advice ol { margin: 6px 0 0; padding-left: 20px; }
.evidence { max-height: 360px; overflow: auto; margin-top: 12px; }
.chart { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 6px;
         margin-bottom: 12px; min-width: 0; }
/* auto-fill, not auto-fit: columns must not change while charts are drawn one by one during parsing */
.chart-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 12px; }
.chart.wide { grid-column: 1 / -1; }
.none { color: var(--muted); font-style: italic; }
.chart-ref { color: var(--muted); font-size: 13px; margin: 6px 0; }
.finding.compact { padding: 10px 14px; margin: 10px 0; }
.finding.compact .message { font-size: 14px; margin: 0 0 6px; }
details.evidence { margin-top: 6px; padding: 4px 10px; }
details#info-findings > summary { margin-bottom: 4px; }
#verdict { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; }
.breakdown h3 { font-size: 14px; margin: 0 0 6px; }
.bar { display: flex; height: 26px; border-radius: 6px; overflow: hidden; border: 1px solid var(--line); }
.bar span { display: block; height: 100%; color: #fff; font-size: 12px; line-height: 26px; padding: 0 4px;
            overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
.bar-legend { list-style: none; display: flex; flex-wrap: wrap; gap: 2px 18px; padding: 0; margin: 6px 0 10px;
              font-size: 12px; color: var(--muted); }
.bar-legend i { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 5px; }
.bar-legend b { color: var(--fg); font-weight: 600; font-variant-numeric: tabular-nums; }
ol.top-findings { list-style: none; margin: 0; padding: 0; }
ol.top-findings li { padding: 3px 0; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
ol.top-findings .rec { color: var(--muted); white-space: nowrap; margin-left: 6px; }
ol.top-findings .rec b { color: var(--fg); }
.more, .ranking-note { color: var(--muted); font-size: 13px; margin: 6px 0 0; }
#findings > h2 { margin-top: 20px; }
.finding.top > h2:first-child { margin-top: 0; }
td.path { font-size: 12px; color: var(--muted); }
/* evidence: headers wrap, numbers stay whole, a name column keeps room for a readable word per line */
.evidence th { white-space: normal; overflow-wrap: normal; }
.evidence td { font-size: 12px; padding: 3px 6px; }
.evidence td:not(.num) { min-width: 14ch; }
"""


def report_page(title: str, body: str, plotly_src: str | None = None, charts: bool = True) -> str:
    """Every report page (run, job, diff, sweep, index): ``body`` (already escaped HTML) with the
    report's stylesheet and error collector; plotly.js inlined once, or loaded from ``plotly_src`` (a
    shared file, plotly_asset.py), or left out when the page has no ``charts``."""
    script = f"{plotly_script_tag(plotly_src)}\n" if charts else ""
    return (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n"
        f"<script>{ERROR_COLLECTOR}</script>\n<style>{CSS}</style>\n"
        f"{script}</head>\n<body>\n<main>\n"
        f"{body}\n</main>\n</body>\n</html>\n"
    )
