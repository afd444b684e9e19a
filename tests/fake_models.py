"""A local fake model server for tests: OpenAI-compatible chat completions and the Anthropic
Messages API, answering whatever the test's ``respond(body)`` returns. No network."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Handler = Callable[[dict[str, Any]], tuple[int, Any]]

OPENAI_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"


class FakeModelServer:
    """Answers ``POST {path}`` (chat completions by default) with ``respond(body)``.

    ``url`` is the OpenAI-style base (``…/v1``), ``root`` the Anthropic-style one (no ``/v1``).
    Every request body and its headers are kept in ``requests`` and ``headers``.
    """

    def __init__(self, respond: Handler, path: str = OPENAI_PATH) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        server = self

        class RequestHandler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length))
                server.requests.append(body)
                server.headers.append(dict(self.headers))
                if self.path.split("?")[0] != path:
                    status, answer = 404, {"error": {"message": f"no route {self.path}"}}
                else:
                    status, answer = respond(body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (the timeout test)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), RequestHandler)
        self.root = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.url = f"{self.root}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def completion(content: str | None = None, tool_calls: list | None = None) -> dict[str, Any]:
    """A chat-completions answer."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-model",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }


def anthropic_message(*blocks: dict[str, Any]) -> dict[str, Any]:
    """A Messages API answer made of content ``blocks``."""
    stop = "tool_use" if any(block["type"] == "tool_use" for block in blocks) else "end_turn"
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": "fake-model",
        "content": list(blocks),
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
