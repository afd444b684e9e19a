"""Memory for agent frameworks: :mod:`.openai_agents` (the OpenAI Agents SDK) and
:mod:`.pydantic_ai` (PydanticAI). Each needs its framework installed (the ``openai-agents`` or
``pydantic-ai`` extra)."""
