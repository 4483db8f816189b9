"""Which timeline kinds a diagnosis never reads, so that the ingest feeding it need not store them.

The helper views read the timeline only for the causes of device gaps (host APIs, framework ops and
device tasks, ``views._gap_causes``); ingest itself reads device tasks and step markers; no chart
reads it. Flow arrows ('s'/'f' events: their ends already carry ``connection_id``) and the
exporter's overlap-analysis segments are then never read, yet they are most of a msprof timeline's
rows.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from analyzer.rule_engine.model import Rule

UNREAD_KINDS = frozenset({"flow", "overlap"})
_NAMES_TIMELINE = re.compile(r"\btimeline\b", re.IGNORECASE)


def reads_timeline(rule: Rule) -> bool:
    """Whether the rule's SQL, its evidence SQL or its requirements name the timeline table."""
    return "timeline" in rule.requires or any(_NAMES_TIMELINE.search(sql) for sql in (rule.sql, rule.evidence_sql))


def unread_timeline_kinds(rules: Iterable[Rule]) -> frozenset[str]:
    """The timeline kinds no step of a diagnosis with these rules reads: UNREAD_KINDS, or none at all
    when some rule reads the timeline itself (a user's rule may read any kind)."""
    return frozenset() if any(reads_timeline(rule) for rule in rules) else UNREAD_KINDS
