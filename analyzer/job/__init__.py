"""Multi-rank jobs: several rank exports of one distributed run, read together and judged as one."""
