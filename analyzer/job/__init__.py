"""Multi-rank jobs: several rank exports of one distributed run, read together and judged as one.

Called, the package opens a job for a notebook: ``analyzer.job(path)`` is ``analyzer.api.jobs.job(path)``."""

import sys
from types import ModuleType


class _CallablePackage(ModuleType):
    """This package, callable: ``analyzer.job(path, job_id=None)`` reads the job under ``path``."""

    def __call__(self, path, job_id=None, **options):
        from analyzer.api.jobs import job  # the API loads the readers; importing this package does not

        return job(path, job_id, **options)


sys.modules[__name__].__class__ = _CallablePackage
