"""A local HTTP server on 127.0.0.1 that plays the publishers, and archive builders (download tests)."""
import http.server
import io
import tarfile
import threading
import time
import zipfile

import pytest


def zip_bytes(members):
    """A deflated zip archive of {name: bytes}."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, content in members.items():
            z.writestr(name, content)
    return buf.getvalue()


def tar_gz_bytes(members, mode="w:gz"):
    """A tar archive of {name: bytes}, gzip-compressed unless mode="w"."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as t:
        for name, content in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            t.addfile(info, io.BytesIO(content))
    return buf.getvalue()


class Site:
    """Routes: path -> bytes (served whole), ("half", bytes) (Content-Length of all, half sent, then
    closed), ("stall", bytes) (some bytes, then a long wait), ("trickle", bytes) (a byte every 0.25 s),
    ("html", None), or absent (404)."""

    def __init__(self):
        self.routes = {}
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                route = site.routes.get(self.path)
                if route is None:
                    self.send_error(404)
                    return
                kind, body = route if isinstance(route, tuple) else ("whole", route)
                if kind == "html":
                    body = b"<!DOCTYPE html><html><body>Moved. Please log in.</body></html>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html" if kind == "html" else "application/octet-stream")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if kind == "half":
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.connection.shutdown(2)
                    return
                if kind == "trickle":   # one byte every 0.25 s, the whole body announced
                    for i in range(len(body)):
                        self.wfile.write(body[i:i + 1])
                        self.wfile.flush()
                        time.sleep(0.25)
                    return
                if kind == "stall":
                    self.wfile.write(body[:1000])
                    self.wfile.flush()
                    time.sleep(30)
                    return
                self.wfile.write(body)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"

    def url(self, path):
        return self.base + path


@pytest.fixture
def site():
    s = Site()
    yield s
    s.server.shutdown()
