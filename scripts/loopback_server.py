"""What the test servers in this folder share: they listen on a loopback port of their own choosing, print it
as `port N` once they listen, and stop when their standard input closes (the test that started them ended)."""

import http.server
import sys
import threading


def serve_until_stdin_closes(handler, wrap_socket=None):
    """Serves `handler` on 127.0.0.1; `wrap_socket` (e.g. a TLS context's) wraps the listening socket."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if wrap_socket is not None:
        server.socket = wrap_socket(server.socket)
    print(f"port {server.server_address[1]}", flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()
    server.shutdown()
