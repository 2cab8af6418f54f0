"""Assertions and shortcuts that state docs/API.md's contract: JSON error bodies, `{}` acknowledgements, rows."""

from __future__ import annotations

from wire import Endpoint, Response

JSON_UTF8 = [("Content-Type", "application/json; charset=utf-8")]


def error_reason(response: Response) -> str:
    """The `error` string of a JSON error body, asserting the body's shape and content type."""
    content_type = (response.header("Content-Type") or "").split(";")[0].strip().lower()
    assert content_type == "application/json", f"error without JSON content type: {response!r}"
    payload = response.json()
    assert isinstance(payload, dict) and set(payload) == {"error"}, f"error body shape: {response!r}"
    assert isinstance(payload["error"], str) and payload["error"].strip(), f"empty error reason: {response!r}"
    return payload["error"]


def assert_error_then_closed(conn, response, allowed) -> None:
    allowed = allowed if isinstance(allowed, tuple) else (allowed,)
    assert response.status in allowed, response
    error_reason(response)
    assert response.says_close, f"framing error without Connection: close: {response!r}"
    assert conn.closed_by_server(timeout=5), "connection left open after a framing error"


def post_raw(endpoint: Endpoint, path: str, body: bytes, headers=JSON_UTF8) -> Response:
    return endpoint.request("POST", path, body=body, headers=headers)


def rows_of(endpoint: Endpoint, path: str) -> tuple[Response, list]:
    response = endpoint.get(path)
    assert response.status == 200, response
    return response, response.json()


def rows_with(rows: list, message: str) -> list:
    return [row for row in rows if row[1] == message]


def assert_ok_empty_object(response: Response) -> None:
    assert response.status == 200, response
    assert response.json() == {}, response
