from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async
from django.db import connections


@pytest.fixture(autouse=True)
def close_the_sync_threads_connections():
    """Under ``run_sync`` the memory runs in asgiref's thread for thread-sensitive calls, which
    keeps its database connection (as Django's async ORM does); close it after each test so the
    test database can be dropped."""
    yield

    async def close() -> None:
        await sync_to_async(connections.close_all, thread_sensitive=True)()

    asyncio.run(close())
