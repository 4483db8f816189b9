"""How much `batch` may unpack from one archive: --max-unpacked / NPU_TRIAGE_MAX_UNPACKED (a size) and
--max-unpack-ratio / NPU_TRIAGE_MAX_UNPACK_RATIO (times the archive's size); the option wins."""

from __future__ import annotations

import argparse
import math
import os
import re

from analyzer.cli.usage import UsageError
from analyzer.runs.archives import DEFAULT_LIMITS, Limits

SIZE_ENV = "NPU_TRIAGE_MAX_UNPACKED"
RATIO_ENV = "NPU_TRIAGE_MAX_UNPACK_RATIO"
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}
_UNITS |= {"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}


def add_limit_options(p: argparse.ArgumentParser) -> None:
    default = DEFAULT_LIMITS
    p.add_argument(
        "--max-unpacked",
        metavar="SIZE",
        help=f"at most this much unpacked from one archive, e.g. 100GB (default {default.total_bytes >> 30}GiB, "
        f"or {SIZE_ENV}); only the files readers use are unpacked",
    )
    p.add_argument(
        "--max-unpack-ratio",
        metavar="N",
        help=f"at most N times an archive's own size unpacked from it (default {default.ratio:g}, or {RATIO_ENV}); "
        "an archive past either limit is refused (a zip bomb)",
    )


def parse_size(text: str) -> int | None:
    """Bytes of a size such as '64GiB', '500 MB' or '1048576'; None when it is not one.

    >>> parse_size("64GiB"), parse_size("1.5 kb"), parse_size("lots")
    (68719476736, 1500, None)
    """
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    if not m or m.group(2).lower() not in _UNITS:
        return None
    value = float(m.group(1)) * _UNITS[m.group(2).lower()]
    return int(value) if 0 < value < 2**63 else None


def limits_from(args: argparse.Namespace) -> Limits:
    """The limits of the options, else of the environment, else the defaults; UsageError naming a bad one."""
    default = DEFAULT_LIMITS
    size_text, size_name = _given(args.max_unpacked, "--max-unpacked", SIZE_ENV)
    ratio_text, ratio_name = _given(args.max_unpack_ratio, "--max-unpack-ratio", RATIO_ENV)
    total = default.total_bytes if size_text is None else parse_size(size_text)
    if total is None:
        raise UsageError(f"{size_name}={size_text!r}: not a size such as 100GB or 500MiB")
    ratio = default.ratio
    if ratio_text is not None:
        try:
            ratio = float(ratio_text)
        except ValueError:
            ratio = math.nan
        if not (math.isfinite(ratio) and ratio >= 1):
            raise UsageError(f"{ratio_name}={ratio_text!r}: not a number of 1 or more")
    return Limits(total, ratio)


def _given(option: str | None, option_name: str, env: str) -> tuple[str | None, str]:
    if option is not None:
        return option, option_name
    value = os.environ.get(env, "").strip()
    return (value, env) if value else (None, env)
