"""CI: sqlfluff over the SQL the engine runs: the .sql modules under analyzer/ and each rule file's SQL.

A rule's [query] and [evidence] SQL (as rule_engine/loader.py reads them) is written to a temporary
<category>/<rule>.<part>.sql, starting on the line it starts on in the TOML file, so a problem's line
number is the rule file's. Extra arguments go to `sqlfluff lint` (e.g. --processes 2).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from analyzer.rule_engine.loader import load_rule, rule_files

ROOT = Path(__file__).resolve().parents[1]


def write_rule_sql(rules_dir: Path, out_dir: Path) -> int:
    """One .sql file per rule SQL part under ``out_dir``; returns how many."""
    count = 0
    for path in rule_files(rules_dir):
        rule, text = load_rule(path), path.read_text(encoding="utf-8")
        for part, sql in (("query", rule.sql), ("evidence", rule.evidence_sql)):
            if not sql.strip():
                continue
            at = text.find(sql.strip())
            padding = "\n" * text.count("\n", 0, at) if at >= 0 else ""
            target = out_dir / path.parent.name / f"{path.stem}.{part}.sql"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(padding + sql.strip() + "\n", encoding="utf-8")
            count += 1
    return count


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="npu-triage-rule-sql-") as tmp:
        write_rule_sql(ROOT / "rules", Path(tmp) / "rules")
        command = ["sqlfluff", "lint", "--config", str(ROOT / ".sqlfluff"), *argv, str(ROOT / "analyzer"), tmp]
        return subprocess.run(command, cwd=ROOT, check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
