"""GET /map: the page's files and headers over the wire, and the page itself in headless Chromium (devtools.py).

Chromium loads https://127.0.0.1:PORT/map from a chatterd over TLS (HTTP/2 by ALPN; the test certificate is
accepted with --ignore-certificate-errors, in this test only) with every other host name unresolvable, so no map
tile ever loads: the markers must show without them, and nothing the page fetched came from anywhere but chatterd.
The live part (a chatt posted after the page loaded appears on it) needs GET /getmaps/stream, and skips while the
server answers that with 404. At a million chatts the page shows clusters, reads each view it is panned or zoomed
to, and stays under 2 000 markers.
"""

from __future__ import annotations

import io
import json
import socket
import struct
import time
import uuid

import pytest

from conftest import launch
from devtools import Browser, Page
from pgsupport import migrated_database, psql, with_database
from wire import build_request

POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: https://tile.openstreetmap.org;"
          " connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
FILES = {
    "/map/map.js": "text/javascript; charset=utf-8",
    "/map/map.css": "text/css; charset=utf-8",
    "/map/leaflet/leaflet.js": "text/javascript; charset=utf-8",
    "/map/leaflet/leaflet.css": "text/css; charset=utf-8",
    "/map/leaflet/images/marker-icon.png": "image/png",
    "/map/leaflet/images/marker-shadow.png": "image/png",
}
# Sent as raw request targets: nothing on the way normalizes them.
NOT_FILES = ["/map/x", "/map/map.js/", "/map//map.js", "/map/leaflet/", "/map/leaflet/leaflet-src.js",
             "/map/leaflet/leaflet.min.js", "/map/leaflet/../map.js", "/map/leaflet/%2e%2e/map.js",
             "/map/leaflet/../../../../etc/passwd", "/map/leaflet/images/../leaflet.js", "/map/..%2f..%2fetc/passwd",
             "/map/leaflet/leaflet.css.map"]


@pytest.fixture(scope="module")
def map_server(env, certs, tls_context):
    """A TLS chatterd on a database of its own, so the map shows exactly this module's chatts."""
    name = "e2e_map_" + uuid.uuid4().hex[:10]
    psql(env.admin_url, f"CREATE DATABASE {name};")
    endpoint = launch(env, with_database(env.admin_url, name), certs, tls_context)
    endpoint.database_url = with_database(env.admin_url, name)
    yield endpoint
    endpoint.process.stop(timeout=15)
    psql(env.admin_url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE);")


def post_map_chatt(server, name: str, message: str, lat: float, lon: float, facing: str, speed: str) -> None:
    geodata = f'[{lat},{lon},"{facing}","{speed}"]'
    response = server.post_json("/postmaps", {"name": name, "message": message, "geodata": geodata})
    assert response.status == 200, response


def stream_status(server) -> int:
    """The status of GET /getmaps/stream, from its head alone (a live stream's body never ends)."""
    with server.connect() as conn:
        conn.send(build_request("GET", "/getmaps/stream"))
        head = conn._read_until(b"\r\n\r\n", time.monotonic() + 10)
    return int(head.split(b" ", 2)[1])


# --- over the wire --------------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/map", "/map/"])
def test_the_page_is_html_under_a_strict_policy(map_server, path):
    response = map_server.get(path)
    assert response.status == 200, response
    assert response.header("Content-Type") == "text/html; charset=utf-8"
    assert response.header("Content-Security-Policy") == POLICY
    assert response.header("X-Content-Type-Options") == "nosniff"
    assert response.header("ETag") and response.header("Cache-Control")
    assert response.body.startswith(b"<!doctype html>")
    revalidated = map_server.request("GET", path, headers=[("If-None-Match", response.header("ETag"))])
    assert revalidated.status == 304 and revalidated.body == b"", revalidated


@pytest.mark.parametrize("path", FILES)
def test_the_page_files_are_served_from_memory_with_type_tag_and_caching(map_server, path):
    response = map_server.get(path)
    assert response.status == 200, response
    assert response.header("Content-Type") == FILES[path]
    assert response.header("X-Content-Type-Options") == "nosniff"
    assert response.header("ETag") and response.header("Cache-Control")
    assert len(response.body) > 0
    assert map_server.request("DELETE", path).status == 405


@pytest.mark.parametrize("path", NOT_FILES)
def test_unknown_files_and_traversal_are_not_found(map_server, path):
    with map_server.connect() as conn:
        conn.send(build_request("GET", path))
        response = conn.read_response()
    assert response.status == 404, f"{path}: {response!r}"
    assert response.json() == {"error": "not found"}


def test_without_leaflet_the_page_is_503_naming_the_package_and_the_rest_serves(start_server, tmp_path):
    server = start_server("--leaflet-dir", str(tmp_path / "no-leaflet-here"))
    response = server.get("/map")
    assert response.status == 503, response
    assert response.header("Content-Type") == "application/json"
    assert "libjs-leaflet" in response.json()["error"]
    assert server.get("/getmaps").status == 200 and server.get("/healthz").status == 200
    assert server.get("/map/leaflet/leaflet.js").status == 404
    assert any("event=map_unavailable" in line and "libjs-leaflet" in line for line in server.process.lines)


# --- in the browser -------------------------------------------------------------------------------

class MapPage:
    """The page loaded in Chromium, and the chatts it should show."""

    def __init__(self, server, page: Page, base: str):
        self.server, self.page, self.base = server, page, base

    def markers(self) -> int:
        return int(self.page.evaluate("document.body ? document.body.dataset.markers || '0' : '0'"))

    def wait_markers(self, count: int, timeout: float = 20.0) -> None:
        shown = self.page.wait_for(lambda: self.markers() == count, timeout)
        assert shown, (f"the map shows {self.markers()} markers, not {count}, after {timeout} s;"
                       f" state {self.page.evaluate('JSON.stringify(document.body.dataset)')},"
                       f" problems {self.page.problems()}")

    def popup_of(self, name: str) -> str:
        """Clicks the marker titled `name` (a real mouse click at its icon) and returns its popup's text."""
        self.page.evaluate("(() => { const b = document.querySelector('.leaflet-popup-close-button');"
                           " if (b) b.click(); })()")
        spot = self.page.evaluate(
            "(() => { const icon = Array.from(document.querySelectorAll('.leaflet-marker-icon'))"
            f".find(e => e.title === {name!r}); if (!icon) return null;"
            " const r = icon.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        assert spot, f"no marker titled {name!r}"
        self.page.click(*spot)
        text = self.page.wait_for(lambda: self.page.evaluate(
            "(() => { const c = document.querySelector('.leaflet-popup-content');"
            f" return c && c.textContent.includes({name!r}) ? c.textContent : ''; }})()"), 10)
        assert text, f"clicking the marker of {name!r} opened no popup with its name"
        return text


@pytest.fixture(scope="module")
def loaded_map(map_server):
    """Two chatts with geodata and one without, then the page loaded in Chromium."""
    token = uuid.uuid4().hex[:8]
    chatts = [
        (f"ann-{token}", "<b>bold?</b> & <img src=x onerror=alert(1)>", 42.2800, -83.7400, "North", "walking"),
        (f"bob-{token}", "second", 42.3000, -83.7000, "South-West", "cycling"),
    ]
    for chatt in chatts:
        post_map_chatt(map_server, *chatt)
    assert map_server.post_json("/postchatt", {"name": f"nog-{token}", "message": "no place"}).status == 200
    with Browser(ignore_certificate_errors=True) as browser:
        page = browser.open_page()
        base = f"https://127.0.0.1:{map_server.port}"
        page.navigate(base + "/map")
        loaded = MapPage(map_server, page, base)
        loaded.wait_markers(2)
        loaded.chatts = chatts
        loaded.token = token
        yield loaded


def test_the_map_shows_the_chatts_with_geodata_and_their_popups_as_text(loaded_map):
    assert loaded_map.markers() == 2
    for name, message, _, _, facing, speed in loaded_map.chatts:
        text = loaded_map.popup_of(name)
        assert message in text and facing in text and speed in text, text
    # The message's markup is shown, not obeyed.
    assert loaded_map.page.evaluate("document.querySelectorAll('.leaflet-popup-content b, "
                                    ".leaflet-popup-content img').length") == 0
    assert loaded_map.page.problems() == []


def test_the_map_works_without_the_internet_and_fetches_only_from_chatterd(loaded_map):
    page = loaded_map.page
    assert page.evaluate("document.querySelectorAll('img.leaflet-tile-loaded').length") == 0
    assert page.evaluate("document.body.dataset.tiles") != "loaded"
    elsewhere = [url for url in page.responses() if not url.startswith(loaded_map.base + "/")
                 and not url.startswith("data:")]
    assert elsewhere == [], f"the page got responses from outside chatterd: {elsewhere}"
    failed = page.failed_requests()
    tiles = [url for url, _ in failed if url.startswith("https://tile.openstreetmap.org/")]
    assert tiles, "the page asked for no tiles: is the tile layer there?"
    unexpected = [(url, error) for url, error in failed
                  if not (url.startswith("https://tile.openstreetmap.org/") and "NAME_NOT_RESOLVED" in error)]
    assert unexpected == [], unexpected
    # Every file the page needs came from chatterd.
    for path in ("/map/leaflet/leaflet.js", "/map/leaflet/leaflet.css", "/map/map.js", "/map/map.css",
                 "/map/leaflet/images/marker-icon.png"):
        assert loaded_map.base + path in page.responses(), path
    # The view is read by its box: its clusters, then (as they are few) its chatts.
    for path in ("/getmaps/clusters?bbox=", "/getmaps?bbox="):
        assert any(url.startswith(loaded_map.base + path) for url in page.responses()), path
    assert loaded_map.base + "/getmaps" not in page.responses(), "the page read the whole feed"
    assert page.problems() == []


def test_a_chatt_posted_while_the_map_is_open_appears_on_it(loaded_map):
    status = stream_status(loaded_map.server)
    if status == 404:
        pytest.skip("this server has no GET /getmaps/stream (404): the live part cannot run")
    assert status == 200, f"GET /getmaps/stream answered {status}"
    name = f"cat-{loaded_map.token}"
    before = loaded_map.markers()
    post_map_chatt(loaded_map.server, name, "posted live", 42.2900, -83.7200, "East", "running")
    loaded_map.wait_markers(before + 1, timeout=20)
    text = loaded_map.popup_of(name)
    assert "posted live" in text and "East" in text and "running" in text, text
    assert loaded_map.page.problems() == []


def test_a_chatt_posted_outside_the_view_does_not_appear(loaded_map):
    if stream_status(loaded_map.server) == 404:
        pytest.skip("this server has no GET /getmaps/stream (404): the live part cannot run")
    far, near = f"far-{loaded_map.token}", f"near-{loaded_map.token}"
    before = loaded_map.markers()
    # In this order: by the time `near` shows, `far` would have too if the page's stream were not of its box.
    post_map_chatt(loaded_map.server, far, "in Sydney", -33.87, 151.21, "North", "still")
    post_map_chatt(loaded_map.server, near, "in view", 42.2910, -83.7210, "North", "still")
    loaded_map.wait_markers(before + 1, timeout=20)
    titles = loaded_map.page.evaluate("Array.from(document.querySelectorAll('.leaflet-marker-icon')).map(e => e.title)")
    assert near in titles and far not in titles, titles


def test_a_chatt_removed_while_the_map_is_open_loses_its_marker(loaded_map):
    if stream_status(loaded_map.server) == 404:
        pytest.skip("this server has no GET /getmaps/stream (404): the live part cannot run")
    name = f"gone-{loaded_map.token}"
    before = loaded_map.markers()
    post_map_chatt(loaded_map.server, name, "to be removed", 42.2950, -83.7250, "West", "standing")
    loaded_map.wait_markers(before + 1, timeout=20)
    removed = psql(loaded_map.server.database_url, "DELETE FROM chatts WHERE name = :'name' RETURNING 1;",
                   {"name": name})
    assert removed.split() == ["1"]
    loaded_map.wait_markers(before, timeout=20)
    assert loaded_map.page.problems() == []


# --- the page's script against the stream contract, with a stand-in server --------------------------

class ContractServer:
    """Plain HTTP on 127.0.0.1 serving chatterd's /map files as they are, a /getmaps the test sets (rows and
    Feed-Position; `?bbox=` is ignored, and /getmaps/clusters counts each row alone), and a /getmaps/stream the
    test writes by hand, per connection: the stream contract of docs/API.md, played without chatterd. Records each
    stream request's Last-Event-ID and how many times /getmaps was read."""

    def __init__(self, chatterd):
        import http.server
        import queue
        import threading

        files = {}
        for path in ("/map", *FILES):
            response = chatterd.get(path)
            assert response.status == 200, response
            files[path] = response
        files["/map/"] = files["/map"]
        self.rows: list = []
        self.position = "1-0"
        self.feed_reads = 0
        self.streams: list[tuple[str | None, "queue.Queue"]] = []
        self.lock = threading.Condition()
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                path = self.path.partition("?")[0]
                if self.path in files:
                    answer = files[self.path]
                    self.send_response(200)
                    for name in ("Content-Type", "Content-Security-Policy", "X-Content-Type-Options"):
                        if answer.header(name):
                            self.send_header(name, answer.header(name))
                    self.send_header("Content-Length", str(len(answer.body)))
                    self.end_headers()
                    self.wfile.write(answer.body)
                elif path in ("/getmaps", "/getmaps/clusters"):
                    with owner.lock:
                        body = json.dumps(owner.rows if path == "/getmaps" else _features(owner.rows)).encode()
                        position = owner.position
                        owner.feed_reads += path == "/getmaps"
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Feed-Position", position)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                elif path == "/getmaps/stream":
                    commands = queue.Queue()
                    with owner.lock:
                        owner.streams.append((self.headers.get("Last-Event-ID"), commands))
                        owner.lock.notify_all()
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Cache-Control", "no-store")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.flush()
                    while (chunk := commands.get(timeout=60)) is not None:
                        if chunk is RESET_CONNECTION:
                            # An abortive close (RST): the page's read fails rather than ending.
                            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                            self.connection.close()
                            self.wfile = io.BytesIO()  # for the handler's own flush, now that the socket is gone
                            return
                        self.wfile.write(chunk)
                        self.wfile.flush()
                else:
                    self.send_error(404)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def wait_stream(self, count: int, timeout: float = 15.0):
        """The `count`th stream request (1-based): (its Last-Event-ID, the queue that writes its body)."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while len(self.streams) < count:
                left = deadline - time.monotonic()
                assert left > 0, f"the page opened {len(self.streams)} streams, not {count}, in {timeout} s"
                self.lock.wait(left)
            return self.streams[count - 1]

    def close(self):
        with self.lock:
            for _, commands in self.streams:
                commands.put(None)
        self.httpd.shutdown()
        self.httpd.server_close()


RESET_CONNECTION = object()


def row(name: str, ident: str, lat: float, lon: float) -> list:
    return [name, f"message of {name}", ident, "2026-03-25T08:11:59.123456Z", f'[{lat},{lon},"North","walking"]']


def test_the_script_follows_the_stream_contract(map_server):
    """The first stream request carries /getmaps's Feed-Position; heartbeats are ignored and events split anywhere
    (even inside a CRLF) are read whole; after a connection reset in the middle of an event the page comes back
    with the id of the last whole event; after `event: reset` it reads /getmaps again, drops markers the feed no
    longer has, and resumes from the new position."""
    server = ContractServer(map_server)
    try:
        server.rows = [row("first", "00000000-0000-4000-8000-000000000001", 42.28, -83.74)]
        server.position = "7-1"
        with Browser() as browser:
            page = browser.open_page()
            page.navigate(server.base + "/map")
            shown = MapPage(server, page, server.base)
            shown.wait_markers(1)

            last_id, stream = server.wait_stream(1)
            assert last_id == "7-1", "the first stream request must resume from /getmaps's Feed-Position"
            second = _json_row(row("second", "00000000-0000-4000-8000-000000000002", 42.30, -83.70))
            for piece in (b":\n", b"id: 7-2\r", b"\ndata: " + second[:9], second[9:] + b"\r\n", b"\r\n"):
                stream.put(piece)
            shown.wait_markers(2)
            assert page.wait_for(lambda: page.evaluate("document.body.dataset.feed") == "live", 5)
            stream.put(b"id: 7-3\ndata: [")  # half an event, then the connection breaks
            stream.put(RESET_CONNECTION)

            last_id, stream = server.wait_stream(2)
            assert last_id == "7-2", "after a drop the page must resume from the last whole event's id"
            reads = server.feed_reads
            with server.lock:  # the store was edited: "first" is gone, "third" is new, in a new epoch
                server.rows = [row("second", "00000000-0000-4000-8000-000000000002", 42.30, -83.70),
                               row("third", "00000000-0000-4000-8000-000000000003", 42.29, -83.72)]
                server.position = "8-3"
            stream.put(b"event: reset\ndata: {}\n\n")
            last_id, stream = server.wait_stream(3)
            assert last_id == "8-3", "after a reset the page must resume from the new Feed-Position"
            assert server.feed_reads == reads + 1
            shown.wait_markers(2)
            titles = page.evaluate("Array.from(document.querySelectorAll('.leaflet-marker-icon'))"
                                   ".map(e => e.title).sort()")
            assert titles == ["second", "third"]
            assert "message of third" in shown.popup_of("third")
            assert page.problems() == []
    finally:
        server.close()


def _json_row(value) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _features(rows: list) -> dict:
    """/getmaps/clusters of `rows`, each alone in its cell."""
    features = []
    for name, message, ident, timestamp, geodata in rows:
        lat, lon, facing, speed = json.loads(geodata)
        features.append({"type": "Feature", "geometry": {"type": "Point", "coordinates": [lon, lat]},
                         "properties": {"name": name, "message": message, "id": ident, "timestamp": timestamp,
                                        "facing": facing, "speed": speed}})
    return {"type": "FeatureCollection", "features": features}


# --- a million chatts -----------------------------------------------------------------------------

CAMPUS = (42.278, -83.738)  # where bench/sql/seed-spatial.sql's campus mix puts 80 % of its chatts
MOST_MARKERS = 2000
# Records the main thread's long tasks (over 50 ms) from the page's own timeline: a stall is one that is long.
RECORD_LONG_TASKS = ("window.longTasks = []; new PerformanceObserver(function (list) {"
                     " list.getEntries().forEach(function (e) { window.longTasks.push(e.duration); });"
                     " }).observe({type: 'longtask'});")
# A frozen second is a stall whoever looks; an idle run here shows no long task at all.
STALL_MS = 1000


@pytest.fixture(scope="module")
def million_map(env, certs, tls_context):
    """A TLS chatterd on a million chatts of the campus mix, and the page in Chromium."""
    seed = "\\set rows 1000000\n\\set mix campus\n" + (env.repo / "bench/sql/seed-spatial.sql").read_text()
    with migrated_database(env.admin_url, env.binary, env.migrations, "e2e_mmap_", seed, seed_timeout=300) as url:
        endpoint = launch(env, url, certs, tls_context)
        endpoint.database_url = url
        try:
            with Browser(ignore_certificate_errors=True) as browser:
                page = browser.open_page()
                base = f"https://127.0.0.1:{endpoint.port}"
                yield MapPage(endpoint, page, base)
        finally:
            endpoint.process.stop(timeout=15)


def shown_view(shown: MapPage) -> dict:
    return json.loads(shown.page.evaluate("JSON.stringify(document.body.dataset)"))


def wait_view(shown: MapPage, after: str | None, timeout: float = 60.0) -> dict:
    """The page's state once it shows, live, a view other than `after`."""
    def ready():
        state = shown_view(shown)
        return state if state.get("feed") == "live" and state.get("view") not in (None, after) else None
    state = shown.page.wait_for(ready, timeout)
    assert state, f"the page showed no new view in {timeout} s: {shown_view(shown)}; {shown.page.problems()}"
    return state


def open_view(shown: MapPage, address: str = "") -> dict:
    """Loads the page afresh at `address` (#zoom/lat/lon, or none) and returns its state once it is live."""
    shown.page.navigate("about:blank")
    shown.page.navigate(shown.base + "/map" + address)
    return wait_view(shown, None, timeout=120)


def located_in(url: str, view: str) -> int:
    """The chatts of the database at `url` located in the box of `view` ("w,s,e,n/zoom"), counted by PostgreSQL."""
    west, south, east, north = view.split("/")[0].split(",")
    longitude = "lon BETWEEN :w AND :e" if float(west) <= float(east) else "(lon >= :w OR lon <= :e)"
    sql = ("SELECT count(*) FROM (SELECT (geodata::json->>0)::float8 AS lat, (geodata::json->>1)::float8 AS lon"
           " FROM chatts WHERE geodata IS NOT NULL) AS located"
           f" WHERE lat BETWEEN :s AND :n AND {longitude};")
    return int(psql(url, sql, {"w": west, "s": south, "e": east, "n": north}, timeout=120))


def test_a_million_chatts_show_as_clusters_that_count_every_chatt_in_view(million_map):
    state = open_view(million_map)
    assert state["mode"] == "clusters", state
    assert 0 < int(state["markers"]) <= MOST_MARKERS, state
    assert int(state["chatts"]) == located_in(million_map.server.database_url, state["view"]), state
    assert million_map.page.problems() == []


def test_the_closest_zoom_on_the_campus_shows_its_newest_chatts_one_by_one(million_map):
    state = open_view(million_map, f"#19/{CAMPUS[0]}/{CAMPUS[1]}")
    assert state["mode"] == "chatts", state
    assert state["view"].endswith("/19"), state
    in_view = located_in(million_map.server.database_url, state["view"])
    assert in_view > 1000, f"the campus view holds only {in_view} chatts: the seed has changed"
    assert int(state["markers"]) == int(state["chatts"]) == 1000, state
    assert "newest 1000 of" in million_map.page.evaluate("document.getElementById('status').textContent")
    # A chatt posted there takes the place of the oldest.
    name = "newest-" + uuid.uuid4().hex[:8]
    post_map_chatt(million_map.server, name, "the newest", CAMPUS[0], CAMPUS[1], "North", "still")
    assert million_map.page.wait_for(lambda: million_map.page.evaluate(
        f"Array.from(document.querySelectorAll('.leaflet-marker-icon')).some(e => e.title === {name!r})"), 20)
    assert shown_view(million_map)["markers"] == "1000"


def test_panning_and_zooming_reads_each_view_under_2000_markers_without_stalls(million_map):
    page = million_map.page
    state = open_view(million_map, f"#12/{CAMPUS[0]}/{CAMPUS[1]}")
    page.evaluate(RECORD_LONG_TASKS)
    width, height = page.evaluate("[innerWidth, innerHeight]")
    center = (width / 2, height / 2)
    modes = set()
    moves = [("drag", (250, 0)), ("drag", (0, -200)), ("in", None), ("in", None), ("drag", (-300, 150)),
             ("in", None), ("in", None), ("in", None), ("drag", (200, 200)), ("out", None), ("out", None),
             ("drag", (-100, -250)), ("out", None), ("out", None), ("out", None), ("out", None)]
    for move, offset in moves:
        if move == "drag":
            page.drag(center, (center[0] + offset[0], center[1] + offset[1]))
        else:
            spot = page.evaluate(f"(() => {{ const r = document.querySelector('.leaflet-control-zoom-{move}')"
                                 ".getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()")
            page.click(*spot)
        state = wait_view(million_map, state["view"])
        modes.add(state["mode"])
        assert int(state["markers"]) <= MOST_MARKERS, (move, state)
        if state["mode"] == "clusters":
            assert int(state["chatts"]) == located_in(million_map.server.database_url, state["view"]), state
    assert modes == {"chatts", "clusters"}, modes
    longest = max(page.evaluate("window.longTasks"), default=0)
    assert longest < STALL_MS, f"the page stalled for {longest:.0f} ms while panning and zooming"
    assert page.problems() == []


def test_clicking_a_cluster_zooms_in_on_it(million_map):
    page = million_map.page
    state = open_view(million_map, f"#10/{CAMPUS[0]}/{CAMPUS[1]}")
    assert state["mode"] == "clusters", state
    spot = page.evaluate("(() => { const icon = document.querySelector('.leaflet-marker-icon.cluster');"
                         " const r = icon.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2];"
                         " })()")
    page.click(*spot)
    state = wait_view(million_map, state["view"])
    assert state["view"].endswith("/12"), state
    assert page.evaluate("location.hash").startswith("#12/")


def test_a_clustered_view_counts_a_chatt_posted_into_it_and_not_one_posted_elsewhere(million_map):
    page = million_map.page
    state = open_view(million_map, f"#14/{CAMPUS[0]}/{CAMPUS[1]}")
    assert state["mode"] == "clusters", state
    counted = int(state["chatts"])
    post_map_chatt(million_map.server, "far", "in Sydney", -33.87, 151.21, "North", "still")
    post_map_chatt(million_map.server, "near", "on campus", CAMPUS[0], CAMPUS[1], "North", "still")
    assert page.wait_for(lambda: int(shown_view(million_map)["chatts"]) != counted, 20), shown_view(million_map)
    assert page.wait_for(lambda: shown_view(million_map)["chatts"] == str(counted + 1), 10), shown_view(million_map)
    assert shown_view(million_map)["view"] == state["view"]
