"""The communication group id that communication.json writes after '@', from a parallel_group_info key."""

from __future__ import annotations

_MASK = 0xFFFFFFFF


def comm_group_id(key: str) -> str:
    """Two 32-bit polynomial hashes of the key (factors 29 and 131), high and low word of one number:
    the id HCCL gives the group, as the real LLM rank's files show (its parallel_group_info key
    'group_name_5', the dp_cp group, names the collectives '...@5862276114690318097').

    >>> comm_group_id("group_name_5"), comm_group_id("group_name_19")
    ('5862276114690318097', '3985310405473756128')
    """
    high = low = 0
    for byte in key.encode():
        high = (high * 29 + byte) & _MASK
        low = (low * 131 + byte) & _MASK
    return str((high << 32) | low)
