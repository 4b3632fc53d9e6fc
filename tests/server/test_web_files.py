"""The browser client's files over plain HTTP (`server/web.py`), without a server: which paths
reach which shipped file (and nothing else), the answers' headers, a browser's cached copy, and
what a page load costs the HTTP limit."""

from __future__ import annotations

import pytest
from websockets.datastructures import Headers
from websockets.http11 import Request

from partida.server import web


def get(path: str, **headers: str) -> Request:
    return Request(path, Headers(headers))


@pytest.mark.parametrize("path", ["/", "/index.html", "/r/AbC123", "/?x=1", "/r/abc#top"])
def test_the_page_answers_its_own_paths_and_invite_links(path: str) -> None:
    assert web.route(path) == web.PAGE


@pytest.mark.parametrize(
    "path", ["/../pyproject.toml", "/r/ab-c", "/r/" + "a" * 40, "/partida/web/index.html", "/__init__.py", "/nope.js"]
)
def test_nothing_but_a_shipped_file_is_reached(path: str) -> None:
    assert web.route(path) is None
    assert web.respond(get(path)).status_code == 404


def test_a_file_is_sent_with_its_type_its_etag_and_the_security_headers_and_not_again_to_who_has_it() -> None:
    script = next(path for path in web.FILES if path.endswith(".js"))
    first = web.respond(get(script))
    assert first.status_code == 200 and first.body
    assert first.headers["Content-Type"] == "text/javascript; charset=utf-8"
    assert first.headers["Content-Length"] == str(len(first.body))
    for name, value in web.SECURITY_HEADERS.items():
        assert first.headers[name] == value
    again = web.respond(get(script, **{"If-None-Match": first.headers["ETag"]}))
    assert again.status_code == 304 and again.body == b""
    other = web.respond(get(script, **{"If-None-Match": '"stale"'}))
    assert other.status_code == 200


def test_a_whole_page_load_costs_one_and_a_reload_answered_by_304s_half() -> None:
    loads = [web.respond(get(path)) for path in web.FILES]
    assert sum(web.cost(r) for r in loads) == pytest.approx(1.0)
    etags = {path: r.headers["ETag"] for path, r in zip(web.FILES, loads, strict=True)}
    reloads = [web.respond(get(path, **{"If-None-Match": etags[path]})) for path in web.FILES]
    assert sum(web.cost(r) for r in reloads) == pytest.approx(0.5)


@pytest.mark.parametrize(("wait", "header"), [(0.2, "1"), (1.0, "1"), (2.01, "3"), (float("inf"), "3600")])
def test_a_refusal_says_in_whole_seconds_when_to_retry(wait: float, header: str) -> None:
    refused = web.too_many_requests(wait)
    assert refused.status_code == 429 and refused.headers["Retry-After"] == header
