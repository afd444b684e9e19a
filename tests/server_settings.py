"""Settings of a real server process a test starts (gunicorn on 127.0.0.1).

The test settings, on the test database named by ``AGENT_MEMORY_TEST_DB``, configured the way
the example project runs in production: connections kept for a minute and health-checked before
reuse, ``DEBUG`` off. The server's database connections carry the application name
``AGENT_MEMORY_SERVER_NAME`` so a test can find (and terminate) exactly them in
``pg_stat_activity``. ``AGENT_MEMORY_SERVER_SETTINGS`` (JSON) becomes ``AGENT_MEMORY``.
"""

from __future__ import annotations

import json
import os

from tests.settings import *  # noqa: F403

DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1"]
DATABASES["default"].update(CONN_MAX_AGE=60, CONN_HEALTH_CHECKS=True)  # noqa: F405
if DATABASES["default"]["ENGINE"].endswith("postgresql"):  # noqa: F405
    DATABASES["default"].setdefault("OPTIONS", {})["application_name"] = os.environ.get(  # noqa: F405
        "AGENT_MEMORY_SERVER_NAME", "agent_memory_server"
    )
AGENT_MEMORY = {
    **AGENT_MEMORY,  # noqa: F405
    **json.loads(os.environ.get("AGENT_MEMORY_SERVER_SETTINGS", "{}")),
}
