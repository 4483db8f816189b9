"""plotly.js as one shared file beside the reports of a folder, instead of 3.6 MB inlined into every page."""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from html import escape
from pathlib import Path

from analyzer.atomic_files import write_text_atomically


def plotly_file_name() -> str:
    """The shared file's name, versioned so that reports of another plotly.js never pick up this one."""
    # plotly is imported where it is used, here and below: it is heavy and only HTML needs it
    from plotly.offline import get_plotlyjs_version

    return f"plotly-{get_plotlyjs_version()}.min.js"


def write_plotly_js(folder: Path) -> Path:
    """Write plotly.js into ``folder`` (atomically) unless an identical copy is there; returns its path."""
    path = Path(folder) / plotly_file_name()
    text, size = _plotly_js()
    if path.is_file() and path.stat().st_size == size:
        return path
    return write_text_atomically(path, text)


@functools.cache
def _plotly_js() -> tuple[str, int]:
    """plotly.js and its size in bytes, read once: every page of a folder checks the copy beside it."""
    from plotly.offline import get_plotlyjs

    text = get_plotlyjs()
    return text, len(text.encode("utf-8"))


def write_page(path: Path, render: Callable[[str | None], str], shared_js: Path | None) -> Path:
    """A page written atomically from ``render(src)``: plotly.js loaded from ``src``, the copy written once into
    the folder ``shared_js``, or inlined (``src`` None) without one. Returns its path."""
    src = None if shared_js is None else plotly_src(path, write_plotly_js(shared_js))
    return write_text_atomically(path, render(src))


def plotly_src(page: Path, script: Path) -> str:
    """The script's address relative to the page's folder, as a URL path.

    >>> plotly_src(Path("out/run/dev0/report.html"), Path("out/plotly-3.0.1.min.js"))
    '../../plotly-3.0.1.min.js'
    """
    return Path(os.path.relpath(Path(script).resolve(), Path(page).resolve().parent)).as_posix()


def missing_plotly_note(name: str) -> str:
    """What a chart box says when plotly.js was not found beside the page, with the two ways to fix it."""
    return (
        f"Chart not drawn: {name} was not found beside this page. Keep that file next to the page "
        "(it is written with it), or re-run with --self-contained to write a page with plotly.js inside."
    )


# Run by the script tag's onerror, before the page's body is parsed: a stand-in Plotly whose newPlot writes
# the note into the chart's box, so that every chart box says why it is empty and no chart script throws.
_MISSING_JS = (
    "var note = %s;"
    " window.Plotly = { newPlot: function (div) {"
    " var box = typeof div === 'string' ? document.getElementById(div) : div;"
    " if (box) { var p = document.createElement('p'); p.className = 'chart-missing';"
    " p.style.cssText = 'margin:0;padding:24px 12px;color:#c0392b;font-weight:600';"
    " p.textContent = note; box.style.height = 'auto'; box.appendChild(p); }"
    " return Promise.resolve(box); } };"
    " document.addEventListener('DOMContentLoaded', function () { var p = document.createElement('p');"
    " p.className = 'none'; p.style.color = '#c0392b'; p.textContent = note.replace('Chart not', 'Charts not');"
    " document.querySelector('main').prepend(p); });"
)


@functools.lru_cache(maxsize=8)  # the same for every page of a folder's depth
def plotly_script_tag(src: str | None) -> str:
    """The page's plotly.js: inline when ``src`` is None, else a script loading the shared file, which,
    when the file is missing (a report copied without it), puts a note in place of each chart."""
    if src is None:
        return f'<script type="text/javascript">{_plotly_js()[0]}</script>'
    missing = _MISSING_JS % json.dumps(missing_plotly_note(Path(src).name))
    attributes = f'src="{escape(src, quote=True)}" onerror="{escape(missing, quote=True)}"'
    return f'<script type="text/javascript" {attributes}></script>'
