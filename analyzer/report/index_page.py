"""index.html of an output folder holding many reports: a row per job, run and all-runs page with its export path
and top finding, worst first, and a text box that filters the rows (plain JS inside the page, works offline)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from analyzer.diagnosis_model import Diagnosis
from analyzer.report.html_sections import esc, finding_cell, page_order, severity_counts
from analyzer.report.html_style import report_page
from analyzer.report.html_verdict import RANKING_NOTE
from analyzer.rule_engine.model import Finding

_COUNTED = ("critical", "warning", "info")
_ORDER_NOTE = (
    "Worst first: by the recoverable share of the top finding (the report's finding 1) of its run (of the job "
    "step for a job; a rank's finding that a job finding explains counts there, not here), then by the number "
    "of critical and warning findings, then by name."
)
_JOB_NOTE = " A job's row comes above its ranks' rows."
# Hides the rows whose text does not hold every word typed; no network, no library.
_FILTER_JS = """<script>
(function () {
  var box = document.getElementById('filter'), rows = document.querySelectorAll('#reports tbody tr');
  var shown = document.getElementById('shown');
  box.addEventListener('input', function () {
    var words = box.value.toLowerCase().split(/\\s+/).filter(Boolean), n = 0;
    rows.forEach(function (r) {
      var text = r.textContent.toLowerCase() + ' ' + (r.getAttribute('data-search') || '');
      var hit = words.every(function (w) { return text.indexOf(w) >= 0; });
      r.hidden = !hit; n += hit ? 1 : 0;
    });
    shown.textContent = n + ' of ' + rows.length + ' shown';
  });
})();
</script>"""


def _is_job(page: Path) -> bool:
    return Path(page).name == "job.html"


def _path(d: Diagnosis) -> str:
    """Where the report's input was: the export folder, the ranks' common folder, or the runs compared."""
    if d.compares_runs:
        return f"{len(d.run.get('runs') or [])} runs"
    ranks = [r["source_path"] for r in d.run.get("ranks") or [] if r.get("source_path")]
    if ranks:
        return os.path.commonpath(ranks) if len(ranks) > 1 else ranks[0]
    return str(d.run.get("source_path") or d.run_id)


def top_finding(d: Diagnosis) -> Finding | None:
    """The report's finding 1 as its page numbers it (page_order: an info finding never comes first)."""
    return page_order(d)[0][1] if d.findings else None


def worst_first_key(d: Diagnosis, top_f: Finding | None) -> tuple[float, int, int, str]:
    """Sort key of a report, worst first: its top finding's (``top_finding``) recoverable share, criticals,
    warnings, run id."""
    # A finding a job finding explains is that job finding's time (one cause, one finding): counted again
    # here, the thousand ranks waiting for one slow rank would list above the job and the slow rank. One it
    # explains in part counts with what is left (its own part).
    share = 0.0
    explained = top_f is not None and top_f.explained_by is not None and not top_f.explained_by.partial
    if top_f is not None and top_f.span_share is not None and not explained:
        share = top_f.span_share
    top = round(share, 3)  # as printed (0.1%): rows that read alike fall to the tie-breakers
    count = {s: sum(f.severity == s for f in d.findings) for s in _COUNTED}
    return (-top, -count["critical"], -count["warning"], d.run_id)


def _recoverable(f: Finding | None) -> str:
    """The top finding's recoverable time and share, as a cell's HTML; '' when it has none."""
    if f is None or f.impact_us <= 0:
        return ""
    share = f" ({f.span_share * 100:.1f}%)" if f.span_share is not None else ""
    return f"{f.impact_us / 1000:,.3f} ms{share}"


def _row(d: Diagnosis, top: Finding | None, href: str, job: bool = False) -> str:
    kind = "job (all ranks)" if job else "runs compared (sweep)" if d.compares_runs else "run"
    subject = top.subject if top is not None else ""  # the whole subject, filterable when cut short
    return (
        f'<tr data-search="{esc(str(subject).lower())}"><td><a href="{esc(href)}">{esc(d.run_id)}</a></td>'
        f'<td class="path">{esc(_path(d))}</td><td>{kind}</td><td class="num">{len(d.findings)}</td>'
        f'<td class="num">{esc(severity_counts(d.findings) or "none")}</td><td>{finding_cell(top)}</td>'
        f'<td class="num">{_recoverable(top)}</td></tr>'
    )


def _job_rows_first(tops: list[tuple[Diagnosis, Path, Finding | None]]) -> list:
    """The reports worst first (``worst_first_key``), a job's row above its ranks' rows: in the place of its worst
    rank when that rank's row would come before the job's."""
    keys = {d.run_id: worst_first_key(d, top) for d, _, top in tops}

    def place(report: tuple[Diagnosis, Path, Finding | None]) -> tuple:
        d, page, _ = report
        if not _is_job(page):
            return (keys[d.run_id], 1)
        ranks = [keys[r["rank_run_id"]] for r in d.run.get("ranks") or [] if r.get("rank_run_id") in keys]
        return (min([keys[d.run_id], *ranks]), 0)

    return sorted(tops, key=place)


def render_index(pages: Sequence[tuple[Diagnosis, Path]], index_path: Path) -> str:
    """The index page: every report (Diagnosis and its report.html or job.html, linked relative to
    ``index_path``), worst first (``_job_rows_first``), with a filter box."""
    tops = [(d, page, top_finding(d)) for d, page in pages]  # each report's page order, worked out once
    ordered = _job_rows_first(tops)
    folder = Path(index_path).resolve().parent
    rows = "".join(
        _row(d, top, Path(os.path.relpath(Path(page).resolve(), folder)).as_posix(), _is_job(page))
        for d, page, top in ordered
    )
    jobs = sum(_is_job(page) for _, page in pages)
    runs = sum(not d.compares_runs and not _is_job(page) for d, page in pages)
    counted = f"{jobs} job(s), {runs} run(s)" if jobs else f"{runs} run(s)"
    body = (
        f'<header><h1>npu-triage reports</h1><p class="subtitle">{counted}; each row links to the report. '
        f"{esc(_ORDER_NOTE + (_JOB_NOTE if jobs else ''))} {esc(RANKING_NOTE)}</p></header>"
        '<p class="filter"><input id="filter" type="search" placeholder="filter: run, path, finding, severity" '
        f'aria-label="filter the rows" size="40"> <span id="shown">{len(pages)} of {len(pages)} shown</span></p>'
        '<section id="reports"><table><thead><tr><th>report</th><th>path</th><th>kind</th>'
        '<th class="num">findings</th><th>by severity</th><th>top finding</th><th class="num">recoverable</th>'
        f"</tr></thead><tbody>{rows}</tbody></table></section>{_FILTER_JS}"
    )
    return report_page("npu-triage reports", body, charts=False)
