#!/usr/bin/env python3
"""A Helm chart repository for tests: serves a directory over HTTPS (certificate and key files given) with
HTTP basic auth, on a loopback port it chooses and prints as `port N` once it listens. Files are served with a
strong entity tag (the sha256 of their content) and `If-None-Match` is answered with `304 Not Modified`, as
web servers and object stores do.

usage: chart-repo-server.py DIR CERT KEY USER PASSWORD
With USER `-`, no authentication is asked for (a public repository).
Stops when its standard input closes (the test that started it ended)."""

import base64
import functools
import hashlib
import os
import http.server
import ssl
import sys

from loopback_server import serve_until_stdin_closes


def main():
    directory, cert, key, user, password = sys.argv[1:6]
    expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):
            if user != "-" and self.headers.get("Authorization") != expected:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="charts"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            path = self.translate_path(self.path)
            if not os.path.isfile(path):
                super().do_GET()
                return
            with open(path, "rb") as served:
                body = served.read()
            etag = '"' + hashlib.sha256(body).hexdigest() + '"'
            wanted = [tag.strip() for tag in self.headers.get("If-None-Match", "").split(",")]
            if etag in wanted:
                self.send_response(304)
                self.send_header("ETag", etag)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", self.guess_type(path))
            self.send_header("Content-Length", str(len(body)))
            self.send_header("ETag", etag)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    handler = functools.partial(Handler, directory=directory)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    serve_until_stdin_closes(handler, lambda socket: context.wrap_socket(socket, server_side=True))


if __name__ == "__main__":
    main()
