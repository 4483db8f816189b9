"""The job page's link-bandwidth heatmaps: one panel and one colour scale per transport."""

from __future__ import annotations

from analyzer.report.job_charts import link_bandwidth_figure
from tests.plotly_view import validated


def _links(transport: str, gb_per_s: float) -> list[dict]:
    return [
        {"transport": transport, "src_rank": a, "dst_rank": b, "gb_per_s": gb_per_s}
        for a in range(4)
        for b in range(4)
        if a != b
    ]


def test_each_transport_draws_its_colour_bar_beside_its_own_panel():
    """Two transports: each bar starts right of its panel and left of the next one (plotly's default
    puts both at the figure's right edge, one over the other)."""
    fig = validated(link_bandwidth_figure(_links("HCCS", 20.0) + _links("RDMA", 12.0)))
    hccs, rdma = fig.data
    assert fig.layout.xaxis.domain[1] < hccs.colorbar.x < fig.layout.xaxis2.domain[0]
    assert rdma.colorbar.x > fig.layout.xaxis2.domain[1]
