#!/usr/bin/env python3
"""A front for a distribution registry (v2.8, which lists every tag at once) that pages tag lists as the
distribution API specifies and newer registries do: tags in lexical order, `n` tags per page (`?n=` or, without
it, the front's own CAP when given), `last` to go on after a tag, and a `Link: <...>; rel="next"` header while
tags remain. Every other request is passed to the registry unchanged. For tests of tag pagination: listens on
a loopback port it chooses and prints as `port N` once it listens.

usage: oci-tag-pager.py UPSTREAM_URL [CAP]
Stops when its standard input closes (the test that started it ended)."""

import http.server
import json
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

from loopback_server import serve_until_stdin_closes

PASSED_HEADERS = ("Content-Type", "Docker-Content-Digest", "WWW-Authenticate",
                  "Docker-Distribution-Api-Version")


def main():
    upstream = sys.argv[1].rstrip("/")
    cap = int(sys.argv[2]) if len(sys.argv) > 2 else None

    class Handler(http.server.BaseHTTPRequestHandler):
        def upstream_get(self, path):
            request = urllib.request.Request(upstream + path, method=self.command)
            for name in ("Authorization", "Accept"):
                if self.headers.get(name):
                    request.add_header(name, self.headers[name])
            try:
                with urllib.request.urlopen(request) as answer:
                    return answer.status, answer.headers, answer.read()
            except urllib.error.HTTPError as error:
                return error.code, error.headers, error.read()

        def answer(self, status, headers, body, extra=()):
            self.send_response(status)
            for name in PASSED_HEADERS:
                if headers.get(name):
                    self.send_header(name, headers[name])
            for name, value in extra:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            match = re.fullmatch(r"/v2/(.+)/tags/list", url.path)
            if not match:
                self.answer(*self.upstream_get(self.path))
                return
            status, headers, body = self.upstream_get(url.path)
            if status != 200:
                self.answer(status, headers, body)
                return
            query = urllib.parse.parse_qs(url.query)
            size = int(query["n"][0]) if "n" in query else cap
            last = query.get("last", [None])[0]
            listed = json.loads(body)
            tags = sorted(listed.get("tags") or [])
            if last is not None:
                tags = [tag for tag in tags if tag > last]
            extra = []
            if size is not None and len(tags) > size:
                tags = tags[:size]
                next_query = urllib.parse.urlencode({"last": tags[-1], "n": size})
                extra.append(("Link", f'<{url.path}?{next_query}>; rel="next"'))
            listed["tags"] = tags
            self.answer(200, headers, json.dumps(listed).encode(), extra)

        do_HEAD = do_GET

        def log_message(self, *args):
            pass

    serve_until_stdin_closes(Handler)


if __name__ == "__main__":
    main()
