"""A recording reverse proxy for one real server: every request is passed on unchanged (its
answer streamed back as it comes, event streams included) and the credential-bearing headers it
carried are kept, so a test can say which server received which token or `-H` header.

    with RecordingProxy(server.url) as proxy:
        run_cli("call", ..., "--url", proxy.url)
        proxy.received("Authorization")  # every value it was sent, in order
"""

from __future__ import annotations

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

#: headers whose values are kept (lower case); any header starting with `x-` is kept too
KEPT = ("authorization", "cookie")
#: hop-by-hop headers not passed on
HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "host"}


class RecordingProxy:
    def __init__(self, upstream: str) -> None:
        u = urlsplit(upstream)
        self.host = u.hostname or "127.0.0.1"
        self.port_up = u.port or 80
        self.path = u.path or "/"
        self.seen: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.proxy = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{self.path}"

    def start(self) -> RecordingProxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> RecordingProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def record(self, headers: dict[str, str]) -> None:
        with self._lock:
            self.seen.append(headers)

    def received(self, name: str) -> list[str]:
        """Every value of header `name` the server was sent (any case)."""
        with self._lock:
            return [h[name.lower()] for h in self.seen if name.lower() in h]

    def clear(self) -> None:
        with self._lock:
            self.seen.clear()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    proxy: RecordingProxy


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _relay(self) -> None:
        proxy = self.server.proxy
        kept = {
            k.lower(): v
            for k, v in self.headers.items()
            if k.lower() in KEPT or k.lower()[:2] == "x-"
        }
        kept["_request"] = f"{self.command} {self.path}"
        proxy.record(kept)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        up = http.client.HTTPConnection(proxy.host, proxy.port_up, timeout=120)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
        headers["Host"] = f"{proxy.host}:{proxy.port_up}"
        try:
            up.request(self.command, self.path, body=body, headers=headers)
            answer = up.getresponse()
            self.send_response(answer.status, answer.reason)
            for k, v in answer.getheaders():
                if k.lower() not in HOP and k.lower() != "content-length":
                    self.send_header(k, v)
            self.send_header("Connection", "close")
            self.end_headers()
            while True:
                chunk = answer.read1(65536)
                if not chunk:
                    break
                self.wfile.write(chunk)
                self.wfile.flush()
        except (OSError, http.client.HTTPException):
            pass  # either side went away: the exchange is over
        finally:
            up.close()
            self.close_connection = True

    do_GET = _relay
    do_POST = _relay
    do_DELETE = _relay
