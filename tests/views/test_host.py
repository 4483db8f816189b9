"""host.sql: the host API calls of the timeline per run."""

from __future__ import annotations

from tests.views.view_case import module_database, rows

# Only host_api events with a start and an end count; framework ops and device tasks do not.
TIMELINE = """
run_id,kind,name,start_ns,end_ns
r,host_api,aclnnMatMul,0,3000
r,host_api,aclrtLaunchKernel,5000,5500
r,host_api,aclrtSynchronizeStream,6000,
r,framework_op,aten::mm,0,9000
r,device_task,MatMul,1000,2000
s,device_task,Add,0,1000
"""

con = module_database(timeline=TIMELINE)


def test_host_api_calls_count_the_host_api_events_with_a_duration(con):
    assert rows(con, "SELECT * FROM _host_api_calls ORDER BY run_id") == [("r", 2, 3.5)]
