"""The name the model calls the memory tool by.

Plain Python with no Django import: a chat front end, a worker or a script can read it without
settings, and every module of the app that names the tool takes it from here.
"""

from __future__ import annotations

#: The memory tool's name in every provider format (``LongTermMemory.tool_name``).
TOOL_NAME = "manage_memory"

__all__ = ["TOOL_NAME"]
