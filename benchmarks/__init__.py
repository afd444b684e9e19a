"""Benchmarks of django-agent-memory, run as ``python -m benchmarks [name …]``.

Every figure is a ratio measured in one run against a floor or an alternative, so a slow or
noisy machine changes both sides alike. Each benchmark lives in its own module and returns
:class:`~benchmarks.report.Row` objects; ``__main__`` prints them as one table and writes
``benchmarks/results/latest.json``.
"""
