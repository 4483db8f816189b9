"""The one front door (issue 50): `import analyzer` gives what `npu-triage diagnose` writes, jobs included; the
commands do their work through it; None and [] rule sets differ; the trace stays usable after a diagnosis."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import polars as pl
import pytest

import analyzer
from analyzer.cli import main
from analyzer.rule_engine.loader import default_rules_dir

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "fixtures" / "examples"
# Cheap enough for every run of the fast suite; the others (several runs each) are marked slow.
FAST = ("job_slow_rank", "resnet_host_sync")


def _api_json(path: Path, out: Path) -> dict[str, bytes]:
    """What the API writes as JSON for everything under ``path``: run folder -> diagnosis.json bytes."""
    with analyzer.load(path) as trace:
        written = [p for d in analyzer.diagnose_all(trace) for p in analyzer.report(d, out, ["json"])]
    return {p.parent.relative_to(out).as_posix(): p.read_bytes() for p in written}


def _cli_json(path: Path, out: Path) -> dict[str, bytes]:
    assert main(["diagnose", str(path), "--format", "json", "--out", str(out), "--quiet"]) in (0, 3)
    return {p.parent.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("diagnosis.json"))}


def _same(path: Path, tmp: Path) -> None:
    api, cli = _api_json(path, tmp / "api"), _cli_json(path, tmp / "cli")
    assert cli and sorted(api) == sorted(cli)
    for folder, text in cli.items():
        assert api[folder] == text, f"{path.name}/{folder}: the API's diagnosis.json differs from the command's"


def _params():
    folders = sorted(p for p in EXAMPLES.iterdir() if p.is_dir() and p.name != "accuracy_tile_fault")
    return [pytest.param(p, marks=() if p.name in FAST else pytest.mark.slow, id=p.name) for p in folders]


@pytest.mark.slow
@pytest.mark.parametrize("path", _params())
def test_api_writes_the_command_lines_json_on_every_example(path: Path, tmp_path: Path) -> None:
    _same(path, tmp_path)


@pytest.mark.slow
def test_api_writes_the_command_lines_json_on_every_real_export(real_dir: Path, tmp_path: Path) -> None:
    # the whole tree at once, as `diagnose` reads it: every export (each alone is the examples' case) and the job
    # they form, in one pass
    assert len([p for p in real_dir.iterdir() if p.is_dir()]) >= 10
    _same(real_dir, tmp_path)
    assert len(list((tmp_path / "cli").rglob("diagnosis.json"))) >= 18


@pytest.mark.slow
def test_a_job_comes_through_the_api() -> None:
    with analyzer.load(EXAMPLES / "job_slow_rank") as trace:
        assert [j.job.job_id for j in trace.jobs] == ["job_slow_rank"] and not trace.usable_run_ids()
        (job,) = analyzer.diagnose_all(trace)
    assert job.is_job and job.findings[0].code == "JOB001" and job.summary["rank_count"] == 8
    one = analyzer.job(EXAMPLES / "job_slow_rank")
    ranks = one.ranks()
    assert ranks.height == 8 and ranks["stage_us"].min() > 100_000  # us per step, each rank
    assert one.links().height > 0 and one.table("job_steps").height > 0
    assert one.diagnose().findings == job.findings
    with pytest.raises(KeyError, match="no job table 'ops'"):
        one.table("ops")
    one.trace.close()


@pytest.mark.slow  # logs and a profile read twice: the full suite, not the fast loop
def test_logs_given_to_the_api_reach_the_run_as_the_commands_do(tmp_path: Path) -> None:
    stall = EXAMPLES / "cann_logs" / "stall"
    argv = ["diagnose", str(stall / "profile"), "--logs", str(stall / "logs"), "--format", "json", "--quiet"]
    assert main([*argv, "--out", str(tmp_path / "cli")]) == 0
    with analyzer.load(stall / "profile", logs=stall / "logs") as trace:
        assert [one.run_id for one in trace.logs] == ["logs"]
        (d,) = analyzer.diagnose_all(trace)
        (written,) = analyzer.report(d, tmp_path / "api", ["json"])
        allocation = trace.breakdown().filter(pl.col("part") == "gap_memory_alloc")["part_us"][0]
        (logs,) = analyzer.diagnose_logs(trace)
    assert written.read_bytes() == (tmp_path / "cli" / written.relative_to(tmp_path / "api")).read_bytes()
    assert allocation > 100  # us of device gaps the logs' memory allocations explain
    assert logs.run_id == "logs" and logs.summary["timeline_marks"] == 2


@pytest.fixture(scope="module")
def resnet():
    """The example run loaded and diagnosed with the built-in rules, once for the tests that only read them."""
    with analyzer.load(EXAMPLES / "resnet_host_sync") as trace:
        yield trace, analyzer.diagnose(trace)


@pytest.mark.slow
def test_none_means_every_rule_and_an_empty_list_none(resnet) -> None:
    trace, _ = resnet
    nothing = analyzer.diagnose(trace, rule_set=[])
    assert nothing.findings == () and nothing.outcomes == ()
    every = analyzer.diagnose(trace, rule_set=None)
    assert {o.rule for o in every.outcomes} == {r.name for r in analyzer.rules() if r.scope in ("run", "runs")}


@pytest.mark.slow
def test_the_trace_reads_files_after_a_diagnosis_with_the_built_in_rules(tmp_path: Path, resnet) -> None:
    (tmp_path / "a.csv").write_text("x\n1\n2\n", encoding="utf-8")
    read = f"SELECT sum(x) AS s FROM read_csv('{tmp_path / 'a.csv'}')"
    trace, _ = resnet  # diagnosed with the built-in rules
    assert trace.query(read).to_pylist() == [{"s": 3}]
    # a rules folder of the user's own is SQL the user wrote: that diagnosis closes the trace to files
    mine = tmp_path / "rules" / "scheduling"
    mine.mkdir(parents=True)
    shutil.copy(default_rules_dir() / "scheduling" / "inter-op-gap.toml", mine)
    with analyzer.load(EXAMPLES / "resnet_host_sync") as trace:
        analyzer.diagnose(trace, rule_set=analyzer.rules(tmp_path / "rules"))
        with pytest.raises(Exception, match="disabled"):
            trace.query(read)


def test_breakdown_steps_and_op_types_are_the_diagnosis_numbers(resnet) -> None:
    trace, d = resnet
    parts = trace.breakdown()
    steps = trace.steps()
    ops = trace.op_types()
    families = trace.op_families()
    total = trace.query("SELECT sum(dur_us) FROM _compute_tasks").to_pylist()[0]
    printed = d.summary.breakdown.parts
    assert parts.rows() == [(p.part, p.label, p.us, p.pct) for p in printed]
    assert round(parts["share_pct"].sum(), 1) == 100.0
    assert steps.height == d.summary.step_count == 3
    assert steps["computing_us"].sum() == pytest.approx(d.summary.computing_us, abs=0.01)
    assert ops["op_type"][0] == "Conv2D" and ops["busy_us"].is_sorted(descending=True)
    assert families["op_family"][0].startswith("Conv2D [") and families["total_us"].is_sorted(descending=True)
    assert families["total_us"].sum() == pytest.approx(next(iter(total.values())))


def test_findings_print_as_a_table_and_diagnoses_in_a_line(resnet) -> None:
    _, d = resnet
    table = analyzer.findings_table(d)
    assert isinstance(table, pl.DataFrame) and table.columns[:4] == ["code", "severity", "subject", "impact_us"]
    assert table["code"].to_list() == [f.code for f in d.findings]
    assert "SCH001" in str(table) and "pyarrow" not in str(table)
    line = repr(d)
    assert len(line) < 200 and line.startswith("Diagnosis('resnet50_run") and "SCH001" in line
    assert repr(d.findings[0]).startswith("Finding(SCH001 inter-op-gap, warning, subject='3 steps', impact 23,171.1")
    page = d._repr_html_()
    assert "<table" in page and "SCH001" in page and "where the time went" in page
    assert "what to do" in d.findings[0]._repr_html_()


@pytest.mark.slow  # two exports diagnosed twice (the command, then the API)
def test_api_diff_gives_the_numbers_of_the_command(tmp_path: Path) -> None:
    import json

    base, new = (str(p) for p in sorted((EXAMPLES / "cann_upgrade").glob("bert_base_[ab]*"))[::-1])
    assert main(["diff", base, new, "--json", str(tmp_path / "d.json")]) == 0
    found = analyzer.diff(base, new)
    assert json.dumps(found.to_dict(), indent=2) + "\n" == (tmp_path / "d.json").read_text(encoding="utf-8")
    types = found.types()
    assert set(types["status"]) <= {
        "slower",
        "faster",
        "unchanged",
        "within noise",
        "no noise estimate",
        "added",
        "removed",
        "renamed",
    }
    assert types.height == len(found.run_diff.types) and "rel_change" in types.columns
    assert repr(found).startswith("Diff(") and "<p>" in found._repr_html_()


# The work each command does, which it must ask `import analyzer` for, never the engine's modules.
_ENGINE = {
    "analyzer.ingest.loader", "analyzer.ingest.database", "analyzer.job.job_ingest", "analyzer.job.diagnosis",
    "analyzer.diagnosis", "analyzer.diff.compare", "analyzer.job.job_diff", "analyzer.runs.sources",
    "analyzer.runs.scratch", "analyzer.report.json_export", "analyzer.report.markdown", "analyzer.report.html",
    "analyzer.report.job_markdown", "analyzer.report.job_page", "analyzer.report.index_page",
    "analyzer.logs.profile_join",
}  # fmt: skip


@pytest.mark.parametrize("command", ["diagnose_cmd", "ingest_cmd", "diff_cmd", "batch_cmd"])
def test_the_commands_do_their_work_through_the_api(command: str) -> None:
    tree = ast.parse((ROOT / "analyzer" / "cli" / f"{command}.py").read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert "analyzer" in imported and not imported & _ENGINE, sorted(imported & _ENGINE)
