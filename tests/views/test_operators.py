"""accuracy/operators.sql: one row per operator run of a comparison, as the accuracy report reads it (judge.py)."""

from __future__ import annotations

from analyzer.accuracy.judge import _OPERATORS, _rows
from tests.views.view_case import module_database

# Comparison c: Conv_1's inputs (worst cosine 0.98) and two outputs (output 1 is the worst: its error
# location is joined, output 0's is not); Add_1 ran twice, first in execution order; with a profile, Conv_1's
# device time. A row of another comparison is left out.
TENSOR_COMPARE = """
run_id,op_name,occurrence,slot,slot_index,exec_order,op_type,dtype,cosine,max_abs_err,mean_abs_err,max_rel_err,rmse,rel_euclidean,dump_nan_count,dump_inf_count,ref_nan_count,ref_inf_count
c,Conv_1,0,input,0,2,Conv2D,float16,0.999,,,,,,0,0,0,0
c,Conv_1,0,input,1,2,Conv2D,float16,0.98,,,,,,0,0,0,0
c,Conv_1,0,output,0,2,Conv2D,float16,0.9,2.0,0.5,0.1,0.7,0.2,1,0,0,0
c,Conv_1,0,output,1,2,Conv2D,float16,0.5,1.0,0.75,0.3,0.6,0.4,0,2,1,0
c,Add_1,0,output,0,1,Add,float16,1.0,0.0,0.0,0.0,0.0,0.0,0,0,0,0
c,Add_1,1,output,0,3,Add,float16,0.99,0.25,0.125,0.5,0.25,0.0625,0,0,0,0
other,Add_1,0,output,0,1,Add,float16,0.1,9.0,9.0,9.0,9.0,9.0,9,9,9,9
"""
ERROR_LOCATIONS = """
run_id,op_name,occurrence,slot,slot_index,verdict,detail
c,Conv_1,0,output,1,edges,tile edges of 16
c,Conv_1,0,output,0,spread,everywhere
"""
PROFILE_OPS = """
run_id,op_name,launches,device_time_us,cube_ratio,vector_ratio,mte_ratio
c,Conv_1,2,30.0,0.5,0.25,0.125
"""
COLUMNS = [
    "op_name", "occurrence", "exec_order", "op_type", "input_cosine", "output_cosine", "max_abs_err", "mean_abs_err",
    "max_rel_err", "rmse", "rel_euclidean", "dump_nonfinite", "ref_nonfinite", "worst_output", "dtype", "verdict",
    "where_detail", "device_time_us", "launches", "cube_ratio", "vector_ratio", "mte_ratio",
]  # fmt: skip

con = module_database(tensor_compare=TENSOR_COMPARE, error_locations=ERROR_LOCATIONS, profile_ops=PROFILE_OPS)


def test_operators_one_row_per_operator_run_in_execution_order(con):
    found = _rows(con, _OPERATORS, "c")
    assert [list(r) for r in found] == [COLUMNS] * 3
    assert [tuple(r.values()) for r in found] == [
        ("Add_1", 0, 1, "Add", None, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0, 0, "float16", None, None,
         None, None, None, None, None),
        ("Conv_1", 0, 2, "Conv2D", 0.98, 0.5, 2.0, 0.75, 0.3, 0.7, 0.4, 3, 1, 1, "float16", "edges", "tile edges of 16",
         30.0, 2, 0.5, 0.25, 0.125),
        ("Add_1", 1, 3, "Add", None, 0.99, 0.25, 0.125, 0.5, 0.25, 0.0625, 0, 0, 0, "float16", None, None,
         None, None, None, None, None),
    ]  # fmt: skip
