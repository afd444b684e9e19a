"""Settings of the web servers and django-q2 clusters started by ``test_several_servers.py``
beside it.

The test settings (and so the parent's test database, ``AGENT_MEMORY_TEST_DB``) with django-q2's
Redis broker under a queue name of the test's own (``AGENT_MEMORY_TEST_QUEUE``), so it cannot
collide with another run on the same Redis, and a scripted model (``cluster_model.py`` beside it).
"""

from __future__ import annotations

import os

from example_project.tests.settings import *  # noqa: F403

DATABASES["default"]["CONN_HEALTH_CHECKS"] = True  # noqa: F405

Q_CLUSTER = {
    "name": os.environ.get("AGENT_MEMORY_TEST_QUEUE", "agent_memory_test"),
    "workers": 2,
    "timeout": 60,
    "retry": 120,
    "catch_up": False,
    "save_limit": 0,  # keep every result: the test reads them
    "redis": {
        "host": os.environ.get("AGENT_MEMORY_TEST_REDIS_HOST", "127.0.0.1"),
        "port": int(os.environ.get("AGENT_MEMORY_TEST_REDIS_PORT", "6379")),
        "db": 0,
    },
}

AGENT_MEMORY = {
    "EMBEDDINGS": AGENT_MEMORY["EMBEDDINGS"],  # noqa: F405
    "MAX_NOTES": 4,
    "MODELS": {
        "default": {
            "BACKEND": "example_project.tests.cluster_model.ClusterModel",
            "OPTIONS": {"calls": os.environ.get("AGENT_MEMORY_TEST_CALLS", os.devnull)},
        }
    },
}
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"agent_memory": {"handlers": ["console"], "level": "INFO"}},
}
