"""Issue 14, family 2: a local HTTP server that answers slowly, for `curl`
waiting on a socket. Not a session program: the test runs it beside the
session, as the far end. Prints its port, then answers `GET /<n>` with
`ANSWER-<n>` after DELAY seconds, until killed.

    python3 slow_http.py [DELAY]   (default 0.8 s)
"""

import http.server
import sys
import time

delay = float(sys.argv[1]) if len(sys.argv) > 1 else 0.8


class Slow(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        time.sleep(delay)
        body = b"ANSWER-" + self.path.lstrip("/").encode() + b"\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Slow)
print(server.server_address[1], flush=True)
server.serve_forever()
