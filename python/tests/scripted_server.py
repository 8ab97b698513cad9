# A local HTTP server (http.server in a thread) that answers `GET /v1/auth/principal` for tenant `acme` and every
# other request from a script, recording each request byte for byte: the double for the retry and error tests.
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

PRINCIPAL = {"tenant_id": "acme", "tenant_uuid": "5b0e7c1e-8d43-4a8a-9f0e-0b7a3e3c2d11", "environment": "sandbox", "service_account_role": "admin"}


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Answer:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    # Seconds to wait before answering (a slow server, for timeouts).
    delay_seconds: float = 0.0


DESTROY = "destroy"  # drop the connection without an answer
Script = Callable[[Recorded, int], "Answer | str"]


class ScriptedServer:
    def __init__(self, script: Script, principal: dict[str, Any] | Answer | None = None):
        self.script = script
        self.principal = principal or PRINCIPAL
        self.requests: list[Recorded] = []
        self._index = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: Any) -> None:  # the test output stays readable
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                recorded = Recorded(self.command, self.path.split("?")[0], {k.lower(): v for k, v in self.headers.items()}, self.rfile.read(length))
                server.requests.append(recorded)
                if recorded.path == "/v1/auth/principal":
                    answer: Answer | str = server.principal if isinstance(server.principal, Answer) else Answer(200, server.principal)
                else:
                    answer = server.script(recorded, server._index)
                    server._index += 1
                if answer == DESTROY:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                assert isinstance(answer, Answer)
                if answer.delay_seconds:
                    time.sleep(answer.delay_seconds)
                text = answer.body if isinstance(answer.body, str) else "" if answer.body is None else json.dumps(answer.body)
                data = text.encode("utf-8")
                try:
                    self.send_response(answer.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for name, value in answer.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_POST = do_DELETE = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    def to(self, path: str) -> list[Recorded]:
        return [request for request in self.requests if request.path == path]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
