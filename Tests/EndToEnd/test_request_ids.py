"""X-Request-Id over HTTP/1.1 and HTTP/2: a client's id is echoed and logged only when it is a short, plain token
(1 to 64 of A-Z a-z 0-9 - _ . :) and the request's only such field; anything else gets an id chatterd makes, and
never reaches the log. A made id is `<8 hex digits>-<connection, hex>-<request>`."""

from __future__ import annotations

import re

import pytest

from h2wire import H2Endpoint, StreamReset
from telemetry import wait_for_record
from wire import Response

MADE = re.compile(r"[0-9a-f]{8}-[0-9a-f]+-[0-9]+")
# Not field-value characters (RFC 9110 §5.5): HTTP/1.1 answers 400 as to a request it cannot read, and nghttp2
# resets the HTTP/2 stream before chatterd sees it (PROTOCOL_ERROR).
CONTROL_CHARACTERS = {"vertical tab", "form feed"}


def ask(server, headers, method: str = "GET") -> Response:
    """One request to /healthz with `headers`, sent as given (HTTP/2 fields unchecked by the client library)."""
    if isinstance(server, H2Endpoint):
        with server.connect(validate=False) as conn:
            return conn.request(method, "/healthz", headers=headers)
    return server.request(method, "/healthz", headers=headers)


def access_record(server, request_id: str) -> dict:
    return wait_for_record(server.process, "logfmt",
                           lambda r: r.get("event") == "request" and r.get("request_id") == request_id)


def unacceptable(marker: str) -> dict[str, str]:
    """Ids chatterd must not take, each starting with `marker` so the log can be searched for it."""
    return {
        "too long": marker + "x" * (65 - len(marker)),
        "space": f"{marker} with space",
        "quotes": f'{marker}"quoted"',
        "equals": f"{marker}=forged",
        "a forged field": f'{marker} status=200 remote="192.0.2.1"',
        "tab": f"{marker}\tafter",
        "vertical tab": f"{marker}\x0bafter",
        "form feed": f"{marker}\x0cafter",
        "next line (U+0085)": f"{marker}\u0085after",
        "line separator (U+2028)": f"{marker}\u2028after",
        "non-ASCII": f"{marker}-\u00e9t\u00e9",
        "slash": f"{marker}/a",
    }


@pytest.mark.parametrize("case", list(unacceptable("m")))
def test_an_unacceptable_id_is_replaced_in_the_answer_and_the_log(protocol_server, token, case):
    marker = f"{token}-bad"
    given = unacceptable(marker)[case]
    try:
        response = ask(protocol_server, [("X-Request-Id", given)])
    except StreamReset:
        assert isinstance(protocol_server, H2Endpoint) and case in CONTROL_CHARACTERS, case
        # Lines are flushed in order: once a later request's line is out, any line of the reset one would be too.
        later = ask(protocol_server, [("X-Request-Id", f"{token}-after")])
        access_record(protocol_server, later.header("x-request-id"))
    else:
        assert response.status == (400 if case in CONTROL_CHARACTERS else 200), case
        echoed = response.header("x-request-id")
        assert echoed and MADE.fullmatch(echoed), f"{case}: echoed {echoed!r}"
        assert access_record(protocol_server, echoed)["status"] == str(response.status)
    assert marker not in "\n".join(protocol_server.process.lines), f"{case}: the client's id reached the log"


def test_two_id_fields_are_replaced_even_when_each_is_acceptable(protocol_server, token):
    response = ask(protocol_server, [("X-Request-Id", f"{token}-one"), ("X-Request-Id", f"{token}-two")])
    assert response.status == 200
    echoed = response.header("x-request-id")
    assert echoed and MADE.fullmatch(echoed), f"echoed {echoed!r}"
    assert response.headers_named("x-request-id") == [echoed], "one id in the answer"
    access_record(protocol_server, echoed)
    assert token not in "\n".join(protocol_server.process.lines)


def test_an_acceptable_id_is_kept(protocol_server, token):
    given = f"{token}.A_z:9"
    response = ask(protocol_server, [("X-Request-Id", given)])
    assert response.status == 200 and response.header("x-request-id") == given
    assert access_record(protocol_server, given)["path"] == "/healthz"


def test_a_request_refused_before_it_is_read_gets_a_made_id(protocol_server, token):
    # An unknown method is answered 501 as a request that could not be read (HTTP/1.1's decoder, HTTP/2's stream
    # head), so its fields, the id among them, are not taken.
    response = ask(protocol_server, [("X-Request-Id", f"{token}-refused")], method="BREW")
    assert response.status == 501
    echoed = response.header("x-request-id")
    assert echoed and MADE.fullmatch(echoed), f"echoed {echoed!r}"
    assert access_record(protocol_server, echoed)["status"] == "501"
    assert token not in "\n".join(protocol_server.process.lines)
