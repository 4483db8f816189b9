"""Export text escaped for each output (HTML, plotly's labels, Markdown), its control characters shown as \\xNN
(visible_text.py), remembered in one memo: the reports of many runs repeat the same rule, operator and column
names thousands of times."""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Callable

from analyzer.visible_text import visible

# What a string from an export could use to become Markdown markup: the start of a tag, comment or declaration
# ("<" before a letter, /, ! or ?; "<10 us" stays as it is), a code span (`), a table cell's end (|), the
# escape character itself, and a link or image target ("](", escaped as "]\(": shapes such as [32,4] keep
# their brackets).
_MARKUP = str.maketrans({"\\": "\\\\", "`": "\\`", "|": "\\|"})
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")


def _markdown(raw: str) -> str:
    text = _TAG_START.sub("&lt;", raw.translate(_MARKUP)).replace("](", "]\\(")
    return " ".join(text.splitlines())


_ESCAPES: dict[str, Callable[[str], str]] = {
    "html": lambda text: html.escape(text, quote=True),  # text or an attribute's value
    "plotly": lambda text: html.escape(text, quote=False),  # plotly reads a few tags in its strings
    "markdown": _markdown,  # shown as itself by any renderer, on one line
}


@functools.lru_cache(maxsize=1 << 16)
def escaped(kind: str, text: str) -> str:
    """``text`` escaped for ``kind``: 'html', 'plotly' or 'markdown'; control characters but tab and newline as \\xNN.

    >>> escaped("html", "<a href='x'>"), escaped("plotly", "<b>'</b>"), escaped("markdown", "a|b\\n<i>")
    ('&lt;a href=&#x27;x&#x27;&gt;', "&lt;b&gt;'&lt;/b&gt;", 'a\\\\|b &lt;i>')
    """
    return _ESCAPES[kind](visible(text))
