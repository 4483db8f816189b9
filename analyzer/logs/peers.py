"""log_events.peer_rank: the rank an HCCL error names as its peer (by rank, or by device on the same node)."""

from __future__ import annotations

import duckdb

from analyzer.logs.processes import HCCL_INIT

# The words HCCL errors name their peer with: remote rank[r], remote rank:[r], dst_rank[r], remoteRank:r,
# remoteUserrank[r].
_PEER_RANK = r"(?i)(?:remote ?(?:user)?rank|dst_rank)(?:: *)?\[? *([0-9]{1,6})(?:[^0-9]|$)"
# A LINK_ERROR_INFO row: | dest_ip(rank) | src_ip(rank) | ...: the first column is the peer.
_LINK_ROW = r"[|] *[0-9][0-9.]*\(([0-9]{1,6})\) *[|]"
# A P2P link names the peer device of the same machine: remote physic id:d, dst devicePhyId[d].
_PEER_DEVICE = r"(?i)(?:remote physic id:|dst devicePhyId\[) *([0-9]{1,4})(?:[^0-9]|$)"

_PEERS = """
UPDATE log_events e SET peer_rank = p.peer
FROM (
    WITH devices AS (  -- each node's device -> rank, from the HCCL init records (phydevId[d])
        SELECT f.node_id, TRY_CAST(regexp_extract(e.message, 'phydevId\\[([0-9]+)\\]', 1) AS INTEGER) AS device,
               min(e.rank_id) AS rank_id
        FROM log_events e JOIN log_files f ON f.run_id = e.run_id AND f.file_id = e.file_id
        WHERE e.run_id = $run_id AND e.module = 'HCCL' AND e.rank_id IS NOT NULL
          AND regexp_matches(e.message, $hccl_init) AND regexp_matches(e.message, 'phydevId\\[[0-9]+\\]')
        GROUP BY ALL),
    named AS (
        SELECT e.file_id, e.line_no, f.node_id,
               TRY_CAST(coalesce(nullif(regexp_extract(e.message, $peer_rank, 1), ''),
                                 nullif(regexp_extract(e.message, $link_row, 1), '')) AS INTEGER) AS by_rank,
               TRY_CAST(nullif(regexp_extract(e.message, $peer_device, 1), '') AS INTEGER) AS by_device
        FROM log_events e JOIN log_files f ON f.run_id = e.run_id AND f.file_id = e.file_id
        WHERE e.run_id = $run_id AND e.module = 'HCCL' AND e.level IN ('ERROR', 'CRITICAL'))
    SELECT n.file_id, n.line_no, coalesce(n.by_rank, d.rank_id) AS peer
    FROM named n LEFT JOIN devices d ON d.node_id IS NOT DISTINCT FROM n.node_id AND d.device = n.by_device
    WHERE coalesce(n.by_rank, d.rank_id) IS NOT NULL) p
WHERE e.run_id = $run_id AND e.file_id = p.file_id AND e.line_no = p.line_no
"""


def name_peers(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Fill log_events.peer_rank of the run's HCCL errors that name the peer they failed with."""
    params = {"run_id": run_id, "hccl_init": HCCL_INIT, "peer_rank": _PEER_RANK, "link_row": _LINK_ROW}
    con.execute(_PEERS, {**params, "peer_device": _PEER_DEVICE})
