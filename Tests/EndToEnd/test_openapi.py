"""openapi.yaml holds the running server to it, and the server holds openapi.yaml to the truth.

Every example request in the spec (request-body examples, every GET/HEAD operation as it stands, parameter
examples, and the raw `x-chatterd-wire-examples`) is sent to a real chatterd, and the status, headers and
body are checked against the response the spec documents for it. All but the raw ones are sent again over
HTTP/2 (h2c with prior knowledge), which carries the same API. Examples of optional features
(`x-chatterd-optional: true`) run too, since chatterd has those features; CHATTERD_OPENAPI_OPTIONAL=0 skips
them, to hold a server without them to the spec. Then every path the server answers must be in the spec, with
exactly the methods the spec lists (anything else: 405 naming them in `Allow`). And the spec is held to
docs/API.md: both name the same endpoints, and every status of docs/API.md's Errors table is in the spec and
every status in the spec is in docs/API.md.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest
import yaml

from conftest import launch
from h2wire import over_h2
from openapi_schema import resolve, validate
from pgsupport import psql, with_database
from processes import wait_until
from sse import EventParser, subscribe
from wire import Response, build_request

REPO = Path(__file__).resolve().parents[2]
SPEC = yaml.safe_load((REPO / "openapi.yaml").read_text(encoding="utf-8"))
METHODS = ("get", "head", "post", "put", "delete", "patch", "options", "trace")
JSON_UTF8 = [("Content-Type", "application/json; charset=utf-8")]
RUN_OPTIONAL = os.environ.get("CHATTERD_OPENAPI_OPTIONAL", "1") == "1"


@dataclass
class Example:
    """One request from the spec and the response the spec promises for it."""

    id: str
    raw: bytes
    status: int
    response: dict
    method: str
    get_media: str | None = None  # for HEAD: the media type of the GET response
    optional: bool = False
    condition: str | None = None
    # (method, target, body, headers), for the examples that are requests rather than raw bytes.
    parts: tuple | None = None


def spec_operations():
    for path, item in SPEC["paths"].items():
        item = resolve(item, SPEC)
        for method in METHODS:
            if method in item:
                yield path, method, item


def response_for(operation: dict, status: int) -> dict:
    responses = operation["responses"]
    assert str(status) in responses, f"status {status} is not documented for {operation.get('operationId')}"
    return resolve(responses[str(status)], SPEC)


def success_status(operation: dict) -> int:
    return min(int(code) for code in operation["responses"] if code.startswith("2"))


def get_media(item: dict) -> str:
    return next(iter(response_for(item["get"], success_status(item["get"]))["content"]))


def all_examples(holder: dict) -> dict:
    """A media type's or parameter's examples: the valid ones (`examples`, which other tools take as valid
    requests) and the ones the spec documents as refused (`x-invalid-examples`)."""
    return {**holder.get("examples", {}), **holder.get("x-invalid-examples", {})}


def body_examples():
    for path, method, item in spec_operations():
        operation = item[method]
        content = operation.get("requestBody", {}).get("content", {})
        for media in content.values():
            for name, example in all_examples(media).items():
                if "x-raw-body" in example:
                    body = (example["x-raw-body"] * example.get("x-raw-body-repeat", 1)).encode("latin-1")
                else:
                    body = json.dumps(example["value"], ensure_ascii=False).encode("utf-8")
                status = example["x-expect-status"]
                parts = (method.upper(), path, body, JSON_UTF8)
                yield Example(f"{method.upper()} {path} {name}", build_request(*parts), status,
                              response_for(operation, status), method,
                              optional=example.get("x-chatterd-optional", False),
                              condition=example.get("x-chatterd-condition"), parts=parts)


def operation_examples():
    """Each GET and HEAD operation as it stands, and with each of its parameter examples."""
    for path, method, item in spec_operations():
        if method not in ("get", "head"):
            continue
        operation = item[method]
        media = get_media(item) if method == "head" else None
        status = success_status(operation)
        yield Example(f"{method.upper()} {path}", build_request(method.upper(), path), status,
                      response_for(operation, status), method, media, parts=(method.upper(), path, None, []))
        for parameter in map(lambda p: resolve(p, SPEC), operation.get("parameters", [])):
            for name, example in all_examples(parameter).items():
                target, headers = path, []
                if parameter["in"] == "query":
                    target = f"{path}?{parameter['name']}={quote(example['value'], safe='')}"
                else:
                    headers = [(parameter["name"], example["value"])]
                status = example["x-expect-status"]
                optional = example.get("x-chatterd-optional", False) or parameter.get("x-chatterd-optional", False)
                parts = (method.upper(), target, None, headers)
                yield Example(f"{method.upper()} {target} {name}", build_request(*parts), status,
                              response_for(operation, status), method, media, optional, parts=parts)


def wire_examples():
    for index, example in enumerate(SPEC["x-chatterd-wire-examples"]):
        raw = example["request"]
        if "repeat" in example:
            piece, count = example["repeat"]
            raw += piece * count
        raw += example.get("tail", "")
        method = raw.split(" ", 1)[0].lower()
        yield Example(f"wire {index} {example['summary']}", raw.encode("latin-1"), example["status"],
                      resolve(example["response"], SPEC), method, condition=example.get("x-chatterd-condition"))


EXAMPLES = [*body_examples(), *operation_examples(), *wire_examples()]
CASES = [pytest.param(example, "HTTP/1.1", id=example.id) for example in EXAMPLES]
CASES += [pytest.param(example, "HTTP/2", id=f"h2 {example.id}") for example in EXAMPLES if example.parts]


# --- servers ----------------------------------------------------------------------------------------

def fresh_server(env):
    name = "e2e_openapi_" + uuid.uuid4().hex[:10]
    psql(env.admin_url, f"CREATE DATABASE {name};")
    return name, launch(env, with_database(env.admin_url, name), None, None)


@pytest.fixture(scope="module")
def spec_server(env):
    """A plain-HTTP chatterd on its own database, with one chatt with geodata and one without."""
    name, endpoint = fresh_server(env)
    endpoint.post_json("/postmaps", {"name": "seed", "message": "with", "geodata": "[1.5,-2,\"N\",\"s\"]"})
    endpoint.post_json("/postchatt", {"name": "seed", "message": "without"})
    yield endpoint
    endpoint.process.stop(timeout=15)
    psql(env.admin_url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE);")


@pytest.fixture(scope="module")
def unavailable_server(env):
    """A chatterd whose database refuses every connection (ALLOW_CONNECTIONS false, sessions ended)."""
    name, endpoint = fresh_server(env)
    psql(env.admin_url, f"ALTER DATABASE {name} ALLOW_CONNECTIONS false;"
                        f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}';")
    assert wait_until(lambda: endpoint.get("/readyz").status == 503, 15), "readyz never noticed the database"
    yield endpoint
    endpoint.process.stop(timeout=15)
    psql(env.admin_url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE);")


# --- checks -----------------------------------------------------------------------------------------

def media_type(response: Response) -> str:
    value = response.header("Content-Type")
    assert value, f"no Content-Type: {response!r}"
    return value.split(";")[0].strip().lower()


def check_response(response: Response, spec_response: dict, head: bool, head_media: str | None) -> None:
    """Headers the spec requires are there, every documented header present matches, the body matches."""
    for name, header in spec_response.get("headers", {}).items():
        header = resolve(header, SPEC)
        value = response.header(name)
        assert value is not None or not header.get("required"), f"missing header {name}: {response!r}"
        if value is not None:
            validate(value, header["schema"], SPEC, f"header {name}")
    content = spec_response.get("content")
    # An event stream lasts: no Content-Length (chunked over HTTP/1.1), for HEAD too.
    streams = (head_media if head else media_type(response)) == EVENT_STREAM
    assert len(response.headers_named("Content-Length")) == (0 if streams else 1), response
    if head:
        assert media_type(response) == head_media, response
        return
    if response.status == 304:
        assert response.body == b"", response
        return
    if not streams:
        assert int(response.header("Content-Length")) == len(response.body), response
    assert content, f"the spec documents no body for {response.status}, the server sent {response!r}"
    media = media_type(response)
    assert media in content, f"Content-Type {media} is not documented ({list(content)})"
    body = response.body
    if response.header("Content-Encoding") == "gzip":
        body = gzip.decompress(body)
    text = body.decode("utf-8")
    if "itemSchema" in content[media]:
        for number, event in enumerate(dispatched_events(text)):
            validate(event, content[media]["itemSchema"], SPEC, f"event {number}")
        return
    instance = json.loads(text) if media == "application/json" or media.endswith("+json") else text
    validate(instance, content[media]["schema"], SPEC, "body")


EVENT_STREAM = "text/event-stream"


def is_stream(example: Example) -> bool:
    """A GET whose documented answer is an event stream, which lasts until the server ends it."""
    return example.method == "get" and EVENT_STREAM in example.response.get("content", {})


def read_stream(server, parts, protocol: str) -> Response:
    """A stream's head and body: to its end, or what came in its first half second (a live stream goes on)."""
    method, target, _, headers = parts
    with subscribe(over_h2(server) if protocol == "HTTP/2" else server, target, headers=headers,
                   method=method) as sub:
        response = sub.response
        if response.status == 200:
            sub.wait_end(0.5)
            assert not sub.parser.partial or not sub.done, "a stream ended inside an event"
            response.body = bytes(sub.parser.received)
        return response


@pytest.mark.parametrize("example, protocol", CASES)
def test_example_request_gets_the_documented_response(request, example: Example, protocol):
    if example.optional and not RUN_OPTIONAL:
        pytest.skip("x-chatterd-optional: skipped by CHATTERD_OPENAPI_OPTIONAL=0")
    fixture = {"database-unavailable": "unavailable_server", None: "spec_server"}[example.condition]
    server = request.getfixturevalue(fixture)
    if is_stream(example):
        response = read_stream(server, example.parts, protocol)
    elif protocol == "HTTP/2":
        method, target, body, headers = example.parts
        response = over_h2(server).request(method, target, body=body, headers=headers)
    else:
        with server.connect() as conn:
            conn.send(example.raw)
            response = conn.read_response(head_request=example.method == "head", skip_interim=True)
    assert response.status == example.status, response
    check_response(response, example.response, example.method == "head", example.get_media)


@pytest.mark.parametrize("path", ["/getmaps", "/getchatts"])
def test_current_etag_gets_the_documented_304(spec_server, path):
    """The 304 needs a tag only the server knows, so it cannot be a static example."""
    if not RUN_OPTIONAL:
        pytest.skip("x-chatterd-optional: ETag, skipped by CHATTERD_OPENAPI_OPTIONAL=0")
    etag = spec_server.get(path).header("ETag")
    assert etag, "no ETag on the feed"
    response = spec_server.request("GET", path, headers=[("If-None-Match", etag)])
    assert response.status == 304, response
    item = resolve(SPEC["paths"][path], SPEC)
    check_response(response, response_for(item["get"], 304), False, None)
    assert response.header("ETag") == etag


# Spellings of a chatt id a client might send as `since`: the spec's `since` schema and the server must agree on
# each (schema valid: the rows after that chatt, as for the id as sent; invalid: 400).
SINCE_SPELLINGS = {
    "as-sent": lambda id: id,
    "upper-case": str.upper,
    "mixed-case": lambda id: "".join(c.upper() if i % 2 else c for i, c in enumerate(id)),
    "braces": lambda id: "{" + id + "}",
    "urn": lambda id: "urn:uuid:" + id,
    "no-hyphens": lambda id: id.replace("-", ""),
    "hyphen-moved": lambda id: id[:7] + "-" + id[7] + id[9:],
}


def since_schema() -> dict:
    return resolve(SPEC["components"]["parameters"]["since"], SPEC)["schema"]


def schema_accepts(value, schema) -> bool:
    try:
        validate(value, schema, SPEC)
    except AssertionError:
        return False
    return True


@pytest.mark.parametrize("spelling", SINCE_SPELLINGS)
@pytest.mark.parametrize("path", ["/getmaps", "/getchatts"])
def test_the_since_schema_and_the_server_agree_on_each_spelling_of_an_id(spec_server, path, spelling):
    if not RUN_OPTIONAL:
        pytest.skip("x-chatterd-optional: since, skipped by CHATTERD_OPENAPI_OPTIONAL=0")
    first = spec_server.get("/getchatts").json()[0][2]
    value = SINCE_SPELLINGS[spelling](first)
    response = spec_server.get(f"{path}?since={quote(value, safe='')}")
    if schema_accepts(value, since_schema()):
        assert response.status == 200, f"the spec takes since={value!r}, the server answers {response!r}"
        assert response.body == spec_server.get(f"{path}?since={first}").body
    else:
        assert response.status == 400, f"the spec refuses since={value!r}, the server answers {response!r}"
        check_response(response, resolve({"$ref": "#/components/responses/BadFeedQuery"}, SPEC), False, None)


# --- the spec against itself ------------------------------------------------------------------------

def request_example_holders():
    """(where, holder, schema) for each request body media type and each parameter of every operation."""
    for path, method, item in spec_operations():
        operation = item[method]
        for media in operation.get("requestBody", {}).get("content", {}).values():
            yield f"{method} {path} body", media, media["schema"]
        for parameter in map(lambda p: resolve(p, SPEC), operation.get("parameters", [])):
            yield f"{method} {path} {parameter['name']}", parameter, parameter["schema"]


def documented_examples():
    """(where, value, schema) for every example the spec shows as valid."""
    for where, holder, schema in request_example_holders():
        for name, example in holder.get("examples", {}).items():
            if "value" in example:
                yield f"{where} {name}", example["value"], schema
    for path, method, item in spec_operations():
        operation = item[method]
        for code, response in operation["responses"].items():
            for media in resolve(response, SPEC).get("content", {}).values():
                if "example" in media and "itemSchema" in media:
                    for number, event in enumerate(dispatched_events(media["example"])):
                        yield f"{method} {path} {code} example event {number}", event, media["itemSchema"]
                elif "example" in media:
                    yield f"{method} {path} {code} example", media["example"], media["schema"]


def dispatched_events(text: str) -> list[dict]:
    """An event stream's events as a client dispatches them (WHATWG HTML, "interpreting an event stream") and as
    OpenAPI 3.2 gives them to an `itemSchema`: `event` ("message" unless named), `data`, and `id` (the last one
    seen); comments, and events without data, dispatch nothing."""
    parser = EventParser()
    parser.feed(text.encode("utf-8"), 0.0)
    assert not parser.partial, f"an event stream ends inside an event: {text!r}"
    events, last_id = [], None
    for event in parser.events:
        last_id = event.id if event.id is not None else last_id
        if event.data is not None:
            events.append({"event": event.event or "message", "data": event.data}
                          | ({"id": last_id} if last_id is not None else {}))
    return events


def test_spec_is_openapi_3_2_with_the_documented_examples_valid():
    assert SPEC["openapi"].startswith("3.2.")
    checked = 0
    for where, value, schema in documented_examples():
        validate(value, schema, SPEC, where)
        checked += 1
    assert checked > 20, "too few examples found: is the walk broken?"


def test_request_examples_listed_as_valid_are_valid_and_the_refused_ones_are_not():
    """Tools take `examples` as valid requests: they hold only requests the schema allows and the server takes
    (a 200, a 404 for an id it does not have, or another status only under a named condition such as the
    database being down); the requests the spec documents as refused are in `x-invalid-examples`, and the
    schema refuses each that has a value."""
    refused = 0
    for where, holder, schema in request_example_holders():
        for name, example in holder.get("examples", {}).items():
            # 404: a well-formed `since` naming a chatt the feed does not have.
            assert example["x-expect-status"] in (200, 404) or "x-chatterd-condition" in example, \
                f"{where} {name}: a refused request among the valid examples"
        for name, example in holder.get("x-invalid-examples", {}).items():
            assert 400 <= example["x-expect-status"] < 500, f"{where} {name}: not a refused request"
            if "value" in example:
                with pytest.raises(AssertionError):
                    validate(example["value"], schema, SPEC, f"{where} {name}")
                refused += 1
    assert refused >= 10, "too few refused examples found: is the walk broken?"


def test_every_path_has_its_trailing_slash_twin_except_root():
    paths = set(SPEC["paths"])
    for path in paths - {"/"}:
        twin = path[:-1] if path.endswith("/") else path + "/"
        assert twin in paths and SPEC["paths"][twin] == SPEC["paths"][path], path
    assert "//" not in paths


# --- the spec against docs/API.md: the same endpoints and the same statuses -----------------------

def api_md_sections() -> dict[str, str]:
    """docs/API.md's `## ` sections, by title."""
    sections, title = {}, None
    for line in (REPO / "docs" / "API.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            title = line[3:].strip()
            sections[title] = ""
        elif title is not None:
            sections[title] += line + "\n"
    return sections


API_MD = api_md_sections()


def api_md_endpoints() -> set[tuple[str, str]]:
    """(METHOD, path) for every `METHOD /path` the "Endpoints" section names, `<id>` written as OpenAPI's `{id}`."""
    named = re.findall(r"`(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) (/[^`\s]*)`", API_MD["Endpoints"])
    return {(method, re.sub(r"<(\w+)>", r"{\1}", path)) for method, path in named}


def api_md_error_rows() -> list[tuple[str, int]]:
    """(case, status) for each row of the "Errors" table; the status cell starts with the code."""
    rows = []
    for line in API_MD["Errors"].splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 2 and (code := re.match(r"([1-5][0-9]{2})\b", cells[1])):
            rows.append((cells[0], int(code.group(1))))
    return rows


def spec_endpoints() -> set[tuple[str, str]]:
    """(METHOD, path) for every operation but HEAD (docs/API.md: it goes with GET), less the trailing-slash twins."""
    return {(method.upper(), path) for path, method, _ in spec_operations()
            if method != "head" and (path == "/" or not path.endswith("/"))}


def spec_statuses() -> dict[int, list[str]]:
    """Every status the spec documents, with where: operation responses and the raw wire examples."""
    where: dict[int, list[str]] = {}
    for path, method, item in spec_operations():
        for code in item[method]["responses"]:
            where.setdefault(int(code), []).append(f"{method.upper()} {path}")
    for example in SPEC["x-chatterd-wire-examples"]:
        where.setdefault(example["status"], []).append(f"wire example {example['summary']!r}")
    return where


def test_docs_api_md_and_the_spec_name_the_same_endpoints():
    documented, specified = api_md_endpoints(), spec_endpoints()
    assert len(documented) >= 8, f"found only {sorted(documented)} in docs/API.md's Endpoints: is the parse broken?"
    assert not documented - specified, f"in docs/API.md but not in openapi.yaml: {sorted(documented - specified)}"
    assert not specified - documented, f"in openapi.yaml but not in docs/API.md: {sorted(specified - documented)}"


def test_the_spec_has_head_exactly_where_it_has_get():
    for path in SPEC["paths"]:
        methods = spec_methods(path)
        assert ("GET" in methods) == ("HEAD" in methods), f"{path}: docs/API.md has HEAD wherever GET is: {methods}"


def test_every_error_row_of_docs_api_md_has_its_status_in_the_spec():
    rows, specified = api_md_error_rows(), spec_statuses()
    assert len(rows) >= 15, f"found only {len(rows)} rows in docs/API.md's Errors table: is the parse broken?"
    missing = [f"{status} ({case})" for case, status in rows if status not in specified]
    assert not missing, f"docs/API.md's Errors table has statuses openapi.yaml documents nowhere: {missing}"


def test_docs_api_md_says_which_case_a_since_id_may_have_as_the_spec_does():
    sentence = re.search(r"`since` is [^.]*\.", API_MD["Endpoints"])
    assert sentence, "docs/API.md's Endpoints do not say what a `since` id looks like"
    either_case = "either case" in sentence.group(0)
    sample = "3f2b0c9e-8a4d-4f7e-9a51-2c6d1e0b7a11"
    assert schema_accepts(sample.upper(), since_schema()) == either_case, sentence.group(0)
    assert schema_accepts(sample, since_schema())


def test_every_status_in_the_spec_is_in_docs_api_md():
    documented = {status for _, status in api_md_error_rows()}
    documented |= {int(code) for code in re.findall(r"`([1-5][0-9]{2})\b", API_MD["Endpoints"])}
    extra = {status: where for status, where in spec_statuses().items() if status not in documented}
    assert not extra, f"openapi.yaml documents statuses docs/API.md does not give: {extra}"


# --- the server against the spec: nothing answered that the spec does not list --------------------

def spec_methods(path: str) -> set[str]:
    item = resolve(SPEC["paths"][path], SPEC)
    return {method.upper() for method in METHODS if method in item}


def near_misses(path: str) -> set[str]:
    """Paths a sloppy router might also answer for `path`."""
    trimmed = path.rstrip("/") or "/"
    return {path.upper(), trimmed + "x", trimmed + "/x", "/" + path, path + "//", trimmed[:-1] or "/x",
            trimmed + ".json", "/api" + trimmed, "/v1" + trimmed, trimmed + "/."}


# docs/API.md's routes, written out here rather than taken from the spec, so a route missing from the spec shows.
API_MD_ROUTES = ["/", "/postmaps", "/getmaps", "/postchatt", "/getchatts", "/healthz", "/readyz", "/metrics"]
OTHER_PATHS = API_MD_ROUTES + [r + "/" for r in API_MD_ROUTES[1:]] + ["/index.html", "/favicon.ico", "/robots.txt", "/api", "/admin", "/status", "/health", "/ready",
               "/debug", "/login", "/chatts", "/maps", "/getmap", "/postmap", "/getchatt", "/postchatts", "/.env",
               "/server-status", "/metrics.json", "/swagger.json", "/openapi.yaml", "/%2Fgetmaps", "/getmaps%2F"]
# A templated path's near misses are mostly other values of its parameter: only fixed paths have them.
UNLISTED = sorted(({p for path in SPEC["paths"] if "{" not in path for p in near_misses(path)} | set(OTHER_PATHS))
                  - set(SPEC["paths"]))


@pytest.mark.parametrize("path", UNLISTED)
def test_paths_not_in_the_spec_are_not_found(spec_server, path):
    for method in ("GET", "POST"):
        response = spec_server.request(method, path, body=b"{}" if method == "POST" else None)
        assert response.status == 404, f"{method} {path} is answered but not in openapi.yaml: {response!r}"
        check_response(response, resolve({"$ref": "#/components/responses/NotFound"}, SPEC), False, None)


def concrete(path: str) -> str:
    """A path of the spec with an id for its `{id}`: braces are not allowed in a request target."""
    return path.replace("{id}", "3f2b0c9e-8a4d-4f7e-9a51-2c6d1e0b7a11")


@pytest.mark.parametrize("method", ["QUERY", "PROPFIND", "VERSION-CONTROL"])
def test_registered_methods_a_path_does_not_serve_get_405_with_allow(spec_server, method):
    """RFC 9110 §15.5.6: 405 for a method the server knows but the resource does not support; 501 is for
    tokens it does not recognise."""
    for path in sorted(SPEC["paths"]):
        response = spec_server.request(method, concrete(path))
        assert response.status == 405, f"{method} {path}: {response!r}"
        listed = {token.strip().upper() for token in (response.header("Allow") or "").split(",")}
        assert listed == spec_methods(path), f"Allow of {method} {path} is {listed}"
    assert spec_server.request("BREW", "/getmaps").status == 501


@pytest.mark.parametrize("path", sorted(SPEC["paths"]))
def test_paths_in_the_spec_answer_exactly_the_documented_methods(spec_server, path):
    allowed = spec_methods(path)
    for method in (m.upper() for m in METHODS):
        if method == "GET" and path.rstrip("/").endswith("/stream"):
            response = read_stream(spec_server, (method, path, None, []), "HTTP/1.1")
        else:
            response = spec_server.request(method, concrete(path))
        if method in allowed:
            assert response.status not in (404, 405, 501), f"{method} {path}: {response!r}"
        else:
            assert response.status == 405, f"{method} {path} is answered but not in openapi.yaml: {response!r}"
            listed = {token.strip().upper() for token in (response.header("Allow") or "").split(",")}
            assert listed == allowed, f"Allow of {method} {path} is {listed}, the spec says {allowed}"
