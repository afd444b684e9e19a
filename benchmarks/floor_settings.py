"""The example project's settings, with the load benchmark's floor API added to its URLs."""

from example_project.settings import *  # noqa: F403

ROOT_URLCONF = "benchmarks.floor"
