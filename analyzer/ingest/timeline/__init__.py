"""Chrome-trace JSON timelines (trace_view.json, msprof_*.json) -> the timeline and counters tables."""
