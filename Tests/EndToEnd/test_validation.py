"""docs/API.md's error table, one named case per row, and its boundaries: every rejected request gets the
right status with a JSON `{"error": ...}` body, and stores nothing."""

from __future__ import annotations

import json

import pytest

from pgsupport import count_chatts, psql
from contract import error_reason
from wire import build_request, pipeline

FAMILY = "\U0001F468\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466"  # 7 scalars, 1 grapheme, 25 bytes
E_ACUTE = "e\u0301"  # 2 scalars, 1 grapheme
GEO_PREFIX, GEO_SUFFIX = '[42.2936,-83.7166,"North","', '"]'
LEAKS = ("select ", "insert ", "sqlstate", "/tmp/", "/work/", ".swift", "postgres", "libpq", "fatal error")


def body(**fields) -> bytes:
    return json.dumps(fields, ensure_ascii=False).encode()


def geodata_of_length(length: int, filler: str = "w") -> str:
    text = GEO_PREFIX + filler * (length - len(GEO_PREFIX) - len(GEO_SUFFIX)) + GEO_SUFFIX
    assert len(text) == length
    return text


def geo(text: str) -> bytes:
    return body(name="g", message="bad geodata", geodata=text)


# Cases valid for both /postmaps and /postchatt: id -> (body, expected status or set of statuses).
COMMON_CASES = {
    # 422: not JSON, not an object, duplicate keys, name/message missing or not a string.
    "empty-body": (b"", 422),
    "truncated-json": (b'{"name":"a","message":"b"', 422),
    "not-json-text": (b"hello", 422),
    "single-quotes": (b"{'name':'a','message':'b'}", 422),
    "trailing-garbage": (b'{"name":"a","message":"b"} x', 422),
    "two-objects": (b'{"name":"a","message":"b"}{}', 422),
    "trailing-comma": (b'{"name":"a","message":"b",}', 422),
    "missing-comma": (b'{"name":"a" "message":"b"}', 422),
    "comment": (b'/*c*/{"name":"a","message":"b"}', 422),
    "raw-tab-in-string": (b'{"name":"a","message":"b\tc"}', 422),
    "nan-literal-body": (b"NaN", 422),
    "deep-nesting": (b'{"name":"a","message":"b","x":' + b"[" * 30000 + b"]" * 30000 + b"}", 422),
    "array-not-object": (b'[{"name":"a","message":"b"}]', 422),
    "string-not-object": (b'"name"', 422),
    "number-not-object": (b"42", 422),
    "null-not-object": (b"null", 422),
    "duplicate-name": (b'{"name":"a","name":"b","message":"m"}', 422),
    "duplicate-message": (b'{"name":"a","message":"m","message":"n"}', 422),
    "duplicate-name-via-escape": (b'{"name":"a","n\\u0061me":"b","message":"m"}', 422),
    "duplicate-username": (b'{"username":"a","username":"b","message":"m"}', 422),
    "duplicate-unknown-key": (b'{"name":"a","message":"m","x":1,"x":2}', 422),
    "name-missing": (b'{"message":"m"}', 422),
    "message-missing": (b'{"name":"a"}', 422),
    "empty-object": (b"{}", 422),
    "name-number": (b'{"name":1,"message":"m"}', 422),
    "name-null": (b'{"name":null,"message":"m"}', 422),
    "name-bool": (b'{"name":true,"message":"m"}', 422),
    "name-array": (b'{"name":["a"],"message":"m"}', 422),
    "name-object": (b'{"name":{},"message":"m"}', 422),
    "username-number": (b'{"username":1,"message":"m"}', 422),
    "message-number": (b'{"name":"a","message":5}', 422),
    "message-null": (b'{"name":"a","message":null}', 422),
    "message-array": (b'{"name":"a","message":[]}', 422),
    # 400: lengths in Unicode scalars, NUL anywhere, invalid UTF-8.
    "name-empty": (body(name="", message="m"), 400),
    "username-empty": (body(username="", message="m"), 400),
    "name-33-ascii": (body(name="a" * 33, message="m"), 400),
    "name-33-scalars-zwj-family": (body(name=FAMILY * 4 + "a" * 5, message="m"), 400),
    "name-33-scalars-e-combining-acute": (body(name=E_ACUTE * 16 + "x", message="m"), 400),
    "message-256-ascii": (body(name="a", message="m" * 256), 400),
    "message-256-e-acute-precomposed": (body(name="a", message="\u00e9" * 256), 400),
    "message-256-scalars-zwj": (body(name="a", message=FAMILY * 36 + "x" * 4), 400),
    "nul-escape-in-name": (b'{"name":"a\\u0000b","message":"m"}', 400),
    "nul-escape-in-message": (b'{"name":"a","message":"\\u0000"}', 400),
    "nul-escape-in-username": (b'{"username":"a\\u0000","message":"m"}', 400),
    "nul-escape-in-unknown-key": (b'{"name":"a","message":"m","x":"\\u0000"}', 400),
    # A raw NUL is both invalid JSON (422) and a NUL (400): either row of docs/API.md applies.
    "raw-nul-byte-in-message": (b'{"name":"a","message":"a\x00b"}', (400, 422)),
    # A lone surrogate escape is not a Unicode scalar: invalid JSON text or invalid text either way.
    "lone-surrogate-escape": (b'{"name":"a","message":"\\ud800"}', (400, 422)),
    "invalid-utf8-c3-28-in-name": (b'{"name":"\xc3\x28","message":"m"}', 400),
    "invalid-utf8-ff-in-message": (b'{"name":"a","message":"\xff"}', 400),
    "invalid-utf8-overlong-slash": (b'{"name":"a","message":"\xc0\xaf"}', 400),
    "invalid-utf8-encoded-surrogate": (b'{"name":"a","message":"\xed\xa0\x80"}', 400),
    "invalid-utf8-truncated-sequence": (b'{"name":"a","message":"ab\xe2\x82"}', 400),
    "invalid-utf8-in-unknown-key": (b'{"name":"a","message":"m","x":"\xfe"}', 400),
    # 422: a number no Double holds as written, even where the server ignores it.
    "number-overflowing-in-unknown-key": (b'{"name":"a","message":"m","x":1e400}', 422),
    "number-underflowing-in-unknown-key": (b'{"name":"a","message":"m","x":[1e-99999999999]}', 422),
}

# /postmaps only: the geodata rules.
GEODATA_CASES = {
    "geodata-number": (b'{"name":"a","message":"m","geodata":5}', 422),
    "geodata-true": (b'{"name":"a","message":"m","geodata":true}', 422),
    "geodata-real-array-not-string": (b'{"name":"a","message":"m","geodata":[42.1,-83.1,"N","w"]}', 422),
    "geodata-object": (b'{"name":"a","message":"m","geodata":{"lat":1}}', 422),
    "duplicate-geodata": (b'{"name":"a","message":"m","geodata":null,"geodata":null}', 422),
    "geodata-empty-string": (geo(""), 422),
    "geodata-text": (geo("hello"), 422),
    "geodata-empty-array": (geo("[]"), 422),
    "geodata-3-elements": (geo('[42.1,-83.1,"N"]'), 422),
    "geodata-5-elements": (geo('[42.1,-83.1,"N","w","x"]'), 422),
    "geodata-lat-string": (geo('["42.1",-83.1,"N","w"]'), 422),
    "geodata-lon-string": (geo('[42.1,"-83.1","N","w"]'), 422),
    "geodata-facing-number": (geo('[42.1,-83.1,1,"w"]'), 422),
    "geodata-speed-null": (geo('[42.1,-83.1,"N",null]'), 422),
    "geodata-lat-bool": (geo('[true,-83.1,"N","w"]'), 422),
    "geodata-nested-array": (geo('[[42.1],-83.1,"N","w"]'), 422),
    "geodata-json-object": (geo('{"lat":42.1,"lon":-83.1}'), 422),
    "geodata-double-encoded": (geo(json.dumps('[42.1,-83.1,"N","w"]')), 422),
    "geodata-trailing-garbage": (geo('[42.1,-83.1,"N","w"] x'), 422),
    "geodata-extra-bracket": (geo('[42.1,-83.1,"N","w"]]'), 422),
    "geodata-missing-element": (geo('[42.1,,"N","w"]'), 422),
    "geodata-trailing-comma": (geo('[42.1,-83.1,"N","w",]'), 422),
    "geodata-single-quotes": (geo("[42.1,-83.1,'N','w']"), 422),
    "geodata-NaN-literal": (geo('[NaN,-83.1,"N","w"]'), 422),
    "geodata-nan-lowercase": (geo('[nan,-83.1,"N","w"]'), 422),
    "geodata-Infinity": (geo('[Infinity,-83.1,"N","w"]'), 422),
    "geodata-minus-Infinity-lon": (geo('[42.1,-Infinity,"N","w"]'), 422),
    "geodata-inf": (geo('[inf,-83.1,"N","w"]'), 422),
    "geodata-1e400-overflows": (geo('[1e400,-83.1,"N","w"]'), 422),
    "geodata-hex-float": (geo('[0x1p3,-83.1,"N","w"]'), 422),
    "geodata-NaN-string": (geo('["NaN",-83.1,"N","w"]'), 422),
    "geodata-inf-string-lon": (geo('[42.1,"inf","N","w"]'), 422),
    "geodata-plus-sign": (geo('[+42.1,-83.1,"N","w"]'), 422),
    "geodata-leading-dot": (geo('[.5,-83.1,"N","w"]'), 422),
    "geodata-leading-zero": (geo('[042,-83.1,"N","w"]'), 422),
    "geodata-lat-above-90": (geo('[90.0001,-83.1,"N","w"]'), 422),
    "geodata-lat-below-minus-90": (geo('[-90.5,-83.1,"N","w"]'), 422),
    "geodata-lat-91": (geo('[91,0,"N","w"]'), 422),
    "geodata-lon-above-180": (geo('[0,180.0001,"N","w"]'), 422),
    "geodata-lon-minus-181": (geo('[0,-181,"N","w"]'), 422),
    "geodata-lat-1e3": (geo('[1e3,0,"N","w"]'), 422),
    "geodata-lon-minus-1e300": (geo('[0,-1e300,"N","w"]'), 422),
    # Numbers no Double holds as written: nonzero yet underflowing to 0, or overflowing to infinity.
    "geodata-lat-1e-99999999999-underflows": (geo('[1e-99999999999,-83.1,"N","w"]'), 422),
    "geodata-lon-minus-1e-400-underflows": (geo('[42.1,-1e-400,"N","w"]'), 422),
    "geodata-lat-2e-324-underflows": (geo('[2e-324,-83.1,"N","w"]'), 422),
    "geodata-lat-underflows-through-padded-exponent": (geo('[1e-0000000000000000000400,-83.1,"N","w"]'), 422),
    "geodata-lat-long-fraction-underflows": (geo("[0." + "0" * 230 + '1e-100,0,"",""]'), 422),
    "geodata-lon-1e99999999999-overflows": (geo('[42.1,1e99999999999,"N","w"]'), 422),
    "geodata-256-chars": (geo(geodata_of_length(256)), 400),
    "geodata-256-scalars-unicode": (geo(geodata_of_length(256, "\u00e9")), 400),
    "geodata-nul-escape": (b'{"name":"a","message":"m","geodata":"[1,2,\\"N\\u0000\\",\\"w\\"]"}', (400, 422)),
    "geodata-invalid-utf8": (b'{"name":"a","message":"m","geodata":"[1,2,\\"N\xff\\",\\"w\\"]"}', 400),
}

BODY_CASES = [pytest.param(path, raw, expected, id=f"{path[1:]}-{case}")
              for path in ("/postmaps", "/postchatt") for case, (raw, expected) in COMMON_CASES.items()]
BODY_CASES += [pytest.param("/postmaps", raw, expected, id=f"postmaps-{case}")
               for case, (raw, expected) in GEODATA_CASES.items()]


@pytest.fixture(scope="module")
def ledger(plain_server, database_url):
    """Rows in the table when this module started, and how many this module stored on purpose."""
    return {"start": count_chatts(database_url), "accepted": 0}


def assert_clean_error(response, expected) -> None:
    allowed = expected if isinstance(expected, tuple) else (expected,)
    assert response.status in allowed, response
    reason = error_reason(response)
    assert not any(leak in reason.lower() for leak in LEAKS), f"error leaks internals: {reason!r}"


@pytest.mark.parametrize("path, raw, expected", BODY_CASES)
def test_invalid_body_is_rejected_and_stores_nothing(protocol_server, database_url, ledger, path, raw, expected):
    before = count_chatts(database_url)
    response = protocol_server.request("POST", path, body=raw, headers=[("Content-Type", "application/json")])
    assert_clean_error(response, expected)
    assert count_chatts(database_url) == before, "a rejected request stored a row"


def accepted_cases(token: str) -> dict[str, tuple[str, dict]]:
    short = token[-12:]
    return {
        "name-1-char": ("/postchatt", {"name": "z", "message": token}),
        "name-32-ascii": ("/postchatt", {"name": "n" * 32, "message": token}),
        "name-32-scalars-zwj-family": ("/postmaps", {"name": FAMILY * 4 + "a" * 4, "message": token}),
        "name-32-scalars-e-combining-acute": ("/postmaps", {"name": E_ACUTE * 16, "message": token}),
        "username-32": ("/postmaps", {"username": "u" * 32, "message": token}),
        "message-empty": ("/postchatt", {"name": short, "message": ""}),
        "message-255-ascii": ("/postchatt", {"name": "m", "message": token + "m" * (255 - len(token))}),
        "message-255-e-acute": ("/postmaps", {"name": "m", "message": token + "\u00e9" * (255 - len(token))}),
        "geodata-255-chars": ("/postmaps", {"name": "g", "message": token, "geodata": geodata_of_length(255)}),
        "geodata-255-scalars-unicode": ("/postmaps", {"name": "g", "message": token,
                                                      "geodata": geodata_of_length(255, "\u00e9")}),
        "geodata-north-west-corner": ("/postmaps", {"name": "g", "message": token, "geodata": '[90,-180,"N","w"]'}),
        "geodata-south-east-corner": ("/postmaps", {"name": "g", "message": token,
                                                    "geodata": '[-90.0,180.0,"S","e"]'}),
        "geodata-exponent": ("/postmaps", {"name": "g", "message": token, "geodata": '[4.2e1,-8.3E1,"N","w"]'}),
        "geodata-zeros-with-huge-exponents": ("/postmaps", {"name": "g", "message": token,
                                                            "geodata": '[0e99999999999,-0.0e-99999,"N","w"]'}),
        "geodata-subnormals": ("/postmaps", {"name": "g", "message": token,
                                             "geodata": '[5e-324,-2.2250738585072009e-308,"N","w"]'}),
        "geodata-zero-padded-exponents": ("/postmaps", {"name": "g", "message": token,
                                                        "geodata": '[1e+0000000000000000001,-1E-00001,"N","w"]'}),
        "control-chars-in-message": ("/postchatt", {"name": "c", "message": token + "\x01\x1f\x7f"}),
    }


ACCEPTED_IDS = list(accepted_cases("x" * 36))


@pytest.mark.parametrize("case", ACCEPTED_IDS)
def test_boundary_value_is_accepted_and_stored_once(protocol_server, database_url, ledger, token, case):
    path, payload = accepted_cases(token)[case]
    response = protocol_server.request("POST", path, body=json.dumps(payload, ensure_ascii=False).encode())
    assert response.status == 200, response
    assert response.json() == {}
    ledger["accepted"] += 1
    name = payload.get("name", payload.get("username"))
    stored = psql(database_url, "SELECT count(*) FROM chatts WHERE name = :'n' AND message = :'m';",
                  {"n": name, "m": payload["message"]})
    assert int(stored) == 1


@pytest.mark.parametrize("geodata", ['[1e-99999999999,0,"N","w"]', '[0,-2e-324,"N","w"]', '[1e400,0,"N","w"]'])
def test_a_geodata_number_no_double_holds_is_named_and_not_stored(protocol_server, database_url, ledger, token,
                                                                  geodata):
    before = count_chatts(database_url)
    response = protocol_server.request("POST", "/postmaps", body=body(name="g", message=token, geodata=geodata))
    assert response.status == 422, response
    assert error_reason(response) == "geodata number out of range for a double"
    assert count_chatts(database_url) == before, "a refused geodata was stored"
    assert token.encode() not in protocol_server.get("/getmaps").body


def test_accepted_numbers_come_back_byte_for_byte(protocol_server, ledger, token):
    geodata = '[-0e99999999999,5e-324,"N","w"]'
    response = protocol_server.request("POST", "/postmaps", body=body(name="g", message=token, geodata=geodata))
    assert response.status == 200, response
    ledger["accepted"] += 1
    rows = [row for row in protocol_server.get("/getmaps").json() if row[1] == token]
    assert [row[4] for row in rows] == [geodata]


PAD = "x" * 1024
# One representative request per row of docs/API.md's error table that both protocols have: (method, target,
# body, headers). A declared Content-Length without a body is a body that never comes: the head decides.
REQUEST_ROWS = {
    "404-unknown-path": (("GET", "/nope", None, None), 404),
    "404-unknown-path-post": (("POST", "/postchat", b'{"name":"a","message":"b"}', None), 404),
    "404-path-below-route": (("GET", "/getmaps/extra", None, None), 404),
    "404-paths-are-case-sensitive": (("GET", "/GETMAPS", None, None), 404),
    "501-unknown-method": (("FOO", "/getmaps", None, None), 501),
    "417-expect-other-than-100-continue": (("POST", "/postchatt", b"{}", [("Expect", "foo")]), 417),
    "405-wrong-method": (("GET", "/postmaps", None, None), 405),
    "413-body-too-large": (("POST", "/postchatt", None, [("Content-Length", "65537")]), 413),
    "414-target-too-long": (("GET", "/getmaps?" + "a" * 9216, None, None), 414),
    "431-header-section-too-large": (("GET", "/getmaps", None, [(f"X-Pad-{i}", PAD) for i in range(17)]), 431),
    "431-too-many-header-fields": (("GET", "/getmaps", None, [(f"X-F-{i}", "1") for i in range(101)]), 431),
}
# The rows only HTTP/1.1 has: its Host rules and its framing. (HTTP/2's malformed requests are stream
# errors: test_http2.py.)
HTTP11_ROWS = {
    "400-http11-without-host": (build_request("GET", "/getmaps", host=None), 400),
    "400-http11-two-hosts": (build_request("GET", "/getmaps", headers=[("Host", "a"), ("Host", "b")]), 400),
    "400-malformed-request-line": (b"GET /getmaps\r\n\r\n", 400),
    "400-bad-header-syntax": (b"GET /getmaps HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n", 400),
    "400-conflicting-content-length": (b"POST /postchatt HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
                                       b"Content-Length: 3\r\n\r\n{}", 400),
    "400-invalid-content-length": (b"POST /postchatt HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400),
    "400-content-length-and-transfer-encoding": (b"POST /postchatt HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                                                 b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
    "501-transfer-encoding-not-chunked": (b"POST /postchatt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
                                          501),
    "505-http-version": (b"GET /getmaps HTTP/2.0\r\nHost: x\r\n\r\n", 505),
}
# 503 (database unavailable) is covered by test_database_faults.py; 500 (any other fault) has no
# trigger from outside, by design.


@pytest.mark.parametrize("spec, expected", REQUEST_ROWS.values(), ids=REQUEST_ROWS.keys())
def test_error_table_row_answers_its_status_with_json_error(protocol_server, database_url, ledger, spec, expected):
    before = count_chatts(database_url)
    method, target, body, headers = spec
    response = protocol_server.request(method, target, body=body, headers=headers)
    assert_clean_error(response, expected)
    if expected == 405:
        assert response.header("Allow"), "405 without Allow"
    assert count_chatts(database_url) == before


@pytest.mark.parametrize("raw, expected", HTTP11_ROWS.values(), ids=HTTP11_ROWS.keys())
def test_http11_error_table_row_answers_its_status_with_json_error(plain_server, database_url, ledger, raw, expected):
    before = count_chatts(database_url)
    [response], conn = pipeline(plain_server, raw, 1)
    conn.close()
    assert_clean_error(response, expected)
    assert count_chatts(database_url) == before


def test_server_still_serves_after_all_rejections(plain_server, tls_server, h2_server):
    assert plain_server.get("/healthz").status == 200
    assert tls_server.get("/getmaps").status == 200
    assert h2_server.get("/getmaps").status == 200


def test_rejected_requests_left_the_table_unchanged(database_url, ledger):
    assert count_chatts(database_url) == ledger["start"] + ledger["accepted"]
