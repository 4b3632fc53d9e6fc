"""The browser client's files, served over plain HTTP on the websocket port.

`partida serve` must be all a player's friend needs: the page, its scripts and the websocket live
on one origin, so the server answers ordinary GET requests itself (websockets' `process_request`
hook) instead of needing a second web stack. Only files shipped inside `partida/web/` are served,
looked up by exact name in a table built once at import, so no request path can reach anything
else. A request that asks to upgrade to a websocket passes through untouched.
"""

from __future__ import annotations

import email.utils
import functools
import hashlib
import http
import math
from importlib import resources

from websockets.datastructures import Headers
from websockets.http11 import Request, Response

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".txt": "text/plain; charset=utf-8",
    ".json": "application/json",
}
# The client needs nothing from elsewhere: scripts, styles and the websocket are all same-origin
# ('self' covers ws: and wss: to the page's own host and port, CSP level 3), so a script that got
# in anyway cannot send what it read to another host.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; connect-src 'self'; img-src 'self' data:; "
        "style-src 'self'; script-src 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
PAGE = "index.html"


def _shipped_files() -> dict[str, str]:
    """URL path -> file name inside the package, for every servable file of `partida/web`."""
    root = resources.files("partida.web")
    files: dict[str, str] = {}

    def walk(node, prefix: str) -> None:  # type: ignore[no-untyped-def]
        for child in node.iterdir():
            name = f"{prefix}{child.name}"
            if child.is_dir():
                if not child.name.startswith((".", "__")):
                    walk(child, name + "/")
            elif any(child.name.endswith(ext) for ext in CONTENT_TYPES):
                files["/" + name] = name

    walk(root, "")
    return files


FILES = _shipped_files()


def route(path: str) -> str | None:
    """The shipped file that answers `path`: the page for `/` and invite links `/r/CODE`."""
    path = path.split("?", 1)[0].split("#", 1)[0]
    if path in ("/", "/index.html") or (path.startswith("/r/") and path[3:].isalnum() and len(path) <= 40):
        return PAGE
    return FILES.get(path)


def _response(status: http.HTTPStatus, body: bytes, content_type: str, extra: dict[str, str] | None = None) -> Response:
    headers = Headers(
        {
            "Date": email.utils.formatdate(usegmt=True),
            "Content-Type": content_type,
            "Content-Length": str(len(body)),
            "Connection": "close",
            **SECURITY_HEADERS,
            **(extra or {}),
        }
    )
    return Response(status.value, status.phrase, headers, body)


@functools.cache
def _file(name: str) -> tuple[bytes, str]:
    """A shipped file's bytes and its ETag, read once: the files change only with the package."""
    body = resources.files("partida.web").joinpath(name).read_bytes()
    return body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def respond(request: Request) -> Response:
    """A plain HTTP GET answered with a shipped file, `304 Not Modified` when the browser has it
    already (its ETag), or 404."""
    name = route(request.path)
    if name is None:
        return _response(http.HTTPStatus.NOT_FOUND, b"not found\n", CONTENT_TYPES[".txt"])
    body, etag = _file(name)
    content_type = CONTENT_TYPES[name[name.rfind(".") :]]
    if etag in request.headers.get("If-None-Match", ""):
        return _response(http.HTTPStatus.NOT_MODIFIED, b"", content_type, {"ETag": etag})
    return _response(http.HTTPStatus.OK, body, content_type, {"ETag": etag})


# What one whole page load costs the HTTP limit: every shipped file once (the page is its
# module graph, and a browser fetches it all).
PAGE_FILES = len(FILES)
PAGE_BYTES = sum(len(_file(name)[0]) for name in FILES.values())


def cost(response: Response) -> float:
    """What answering with `response` costs, in page loads: half a file's share of the page
    (it is a request), and half its body's share of the page's bytes. Loading the whole page
    costs 1, a reload answered with 304s half of that, and the biggest script about a seventh, so the
    limit counts people loading the page rather than the files it is split into."""
    return (1 / PAGE_FILES + len(response.body) / PAGE_BYTES) / 2


def too_many_requests(retry_after: float) -> Response:
    """A 429 saying when a retry would be answered: whole seconds (as HTTP writes them), rounded up."""
    seconds = math.ceil(retry_after) if math.isfinite(retry_after) else 3600
    return _response(
        http.HTTPStatus.TOO_MANY_REQUESTS,
        b"too many requests; slow down\n",
        CONTENT_TYPES[".txt"],
        {"Retry-After": str(max(seconds, 1))},
    )
