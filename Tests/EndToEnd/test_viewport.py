"""Viewports (docs/API.md, `?bbox=` on `GET /getmaps`, `GET /getmaps/clusters`): the rows located in a box, in
feed order, combined with `since`, `limit` and `newest`, over HTTP/1.1 and HTTP/2, held to a brute-force filter of
the whole feed and, on 10 000 random boxes (across the antimeridian, at the poles, with edges on points), to what
PostGIS finds; the box's clusters at a zoom, every chatt counted once."""

from __future__ import annotations

import gzip
import json
import math
import random
import re
import subprocess
import uuid

import pytest

from conftest import launch
from h2wire import over_h2
from pgsupport import psql, with_database
from sse import subscribe
from processes import wait_until
from wire import build_request

# A chatt is located when its geodata starts with two JSON numbers in range (docs/API.md).
NUMBER = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"
LOCATED = re.compile(rf"^\s*\[\s*({NUMBER})\s*,\s*({NUMBER})\s*,")

SEEDED = 4000


def location(geodata: str | None) -> tuple[float, float] | None:
    """(lon, lat) of a located geodata, the rule docs/API.md gives."""
    found = LOCATED.match(geodata or "")
    if not found:
        return None
    lat, lon = float(found.group(1)), float(found.group(2))
    return (lon, lat) if -90 <= lat <= 90 and -180 <= lon <= 180 else None


def inside(box: tuple[float, float, float, float], point: tuple[float, float] | None) -> bool:
    if point is None:
        return False
    west, south, east, north = box
    lon, lat = point
    if not south <= lat <= north:
        return False
    return lon >= west or lon <= east if west > east else west <= lon <= east


def seed_sql(rng: random.Random) -> str:
    """Rows a box's edges fall on (whole degrees, the poles, ±180), random doubles written with up to 17
    significant digits, rows with no or a hand-written unlocated geodata, and a crowd near one campus."""
    values = []
    for serial in range(SEEDED):
        kind = serial % 8
        if kind == 0:
            geodata = None
        elif kind == 1:
            geodata = rng.choice(["not json", "[]", "[1]", '["42","-83"]', "[91,0,\"N\",\"w\"]", "[0,180.5,1,2]"])
        elif kind in (2, 3):
            lat, lon = rng.randint(-90, 90), rng.randint(-180, 180)
            geodata = f'[{lat},{lon},"N","w"]'
        elif kind == 4:
            lat, lon = rng.choice([-90, 90, 0]), rng.choice([-180, 180, 0])
            geodata = f'[{lat}.0, {lon} ,"N","w"]'
        elif kind == 5:
            geodata = f'[{42.28 + rng.uniform(-0.05, 0.05)!r},{-83.74 + rng.uniform(-0.05, 0.05)!r},"N","w"]'
        else:
            geodata = f'[{rng.uniform(-90, 90)!r},{rng.uniform(-180, 180)!r},"N","w"]'
        literal = "NULL" if geodata is None else "'" + geodata.replace("'", "''") + "'"
        values.append(f"('n{serial % 13}', 'm{serial}', {literal})")
    return "INSERT INTO chatts (name, message, geodata) VALUES " + ",".join(values) + ";"


def random_box(rng: random.Random, points: list[tuple[float, float]]) -> tuple[float, float, float, float]:
    kind = rng.randrange(6)
    if kind == 0:  # edges on points
        (a, b), (c, d) = rng.choice(points), rng.choice(points)
        return a, min(b, d), c, max(b, d)
    if kind == 1:  # whole degrees, often across the antimeridian
        south = rng.randint(-90, 90)
        return rng.randint(-180, 180), south, rng.randint(-180, 180), min(90, south + rng.randint(0, 40))
    if kind == 2:  # a pole
        south = rng.choice([-90, 60])
        return rng.uniform(-180, 180), south, rng.uniform(-180, 180), south + 30
    if kind == 3:  # around campus
        west, south = -83.74 + rng.uniform(-0.06, 0.04), 42.28 + rng.uniform(-0.06, 0.04)
        return west, south, west + rng.uniform(0, 0.05), south + rng.uniform(0, 0.05)
    if kind == 4:
        return rng.choice([(-180, -90, 180, 90), (180, -90, -180, 90), (0, 0, 0, 0), (-180, -90, -180, 90)])
    lats = sorted(rng.uniform(-90, 90) for _ in range(2))
    return rng.uniform(-180, 180), lats[0], rng.uniform(-180, 180), lats[1]


def query(box) -> str:
    return "bbox=" + ",".join(repr(float(edge)) for edge in box)


@pytest.fixture(scope="module")
def viewport(env, certs, tls_context):
    """A database of its own seeded with SEEDED varied rows, and a TLS chatterd on it."""
    name = "e2e_viewport_" + uuid.uuid4().hex[:10]
    psql(env.admin_url, f"CREATE DATABASE {name};")
    url = with_database(env.admin_url, name)
    endpoint = launch(env, url, certs, tls_context)
    psql(url, seed_sql(random.Random(31)))
    assert wait_until(lambda: len(endpoint.get("/getmaps").json()) == SEEDED, timeout=30), "the seeded rows"
    yield url, endpoint, over_h2(endpoint, certs.cert)
    assert endpoint.process.stop(timeout=15) == 0, endpoint.process.log()
    psql(env.admin_url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE);")


def rows_of(response) -> list[list]:
    assert response.status == 200, response
    return response.json()


@pytest.mark.parametrize("protocol", ["http/1.1", "h2"])
def test_a_box_answers_the_feeds_rows_inside_it_in_feed_order(viewport, protocol):
    _, tls, h2 = viewport
    endpoint = h2 if protocol == "h2" else tls
    whole = rows_of(tls.get("/getmaps"))
    rng = random.Random(5)
    points = [p for p in (location(row[4]) for row in whole) if p]
    for _ in range(60):
        box = random_box(rng, points)
        expected = [row for row in whole if inside(box, location(row[4]))]
        assert rows_of(endpoint.get("/getmaps?" + query(box))) == expected, box
        since = rng.randrange(len(whole))
        after = [row for row in whole[since + 1:] if inside(box, location(row[4]))]
        target = f"/getmaps?{query(box)}&since={whole[since][2]}"
        assert rows_of(endpoint.get(target + "&limit=7")) == after[:7], box
        assert rows_of(endpoint.get(target + "&newest=7")) == after[-7:], box


def test_a_box_answer_is_tagged_compressed_and_revalidated(viewport):
    _, tls, _ = viewport
    target = "/getmaps?bbox=-84,42,-83,43"
    plain = tls.get(target)
    assert plain.status == 200 and plain.header("Content-Type") == "application/json"
    etag = plain.header("ETag")
    assert etag and plain.header("Feed-Position")
    zipped = tls.get(target, headers=[("Accept-Encoding", "gzip")])
    assert zipped.header("Content-Encoding") == "gzip" and zipped.header("ETag") != etag
    assert gzip.decompress(zipped.body) == plain.body
    assert tls.get(target, headers=[("If-None-Match", etag)]).status == 304


@pytest.mark.parametrize("target", [
    "/getmaps?bbox=1,2,3", "/getmaps?bbox=0,10,1,5", "/getmaps?bbox=nan,0,1,1", "/getmaps?bbox=0,0,181,1",
    "/getmaps?bbox=0,0,1,1&bbox=0,0,1,1", "/getmaps?bbox=0,0,1,1&limit=1&newest=1",
])
def test_a_malformed_box_is_400_and_the_connection_stays(viewport, target):
    _, tls, _ = viewport
    with tls.connect() as conn:
        conn.send(build_request("GET", target))
        response = conn.read_response()
        assert response.status == 400 and response.json()["error"]
        conn.send(build_request("GET", "/getmaps?bbox=-84,42,-83,43&limit=1"))
        assert conn.read_response().status == 200


def test_a_post_and_a_removal_show_in_the_box_at_once(viewport, token):
    _, tls, _ = viewport
    box = "/getmaps?bbox=10.5,10.5,10.6,10.6"
    assert rows_of(tls.get(box)) == []
    payload = {"name": "v", "message": token, "geodata": '[10.55,10.55,"N","w"]'}
    assert tls.post_json("/postmaps", payload).status == 200
    rows = rows_of(tls.get(box))
    assert [row[1] for row in rows] == [token]
    url = viewport[0]
    psql(url, "DELETE FROM chatts WHERE id = :'id';", {"id": rows[0][2]})
    assert wait_until(lambda: rows_of(tls.get(box)) == [], timeout=10), "the removed chatt is still in the box"


def test_ten_thousand_boxes_find_exactly_what_postgis_finds(viewport):
    url, tls, _ = viewport
    try:
        psql(url, "CREATE EXTENSION IF NOT EXISTS postgis;")
    except Exception as error:  # noqa: BLE001 (any failure means PostGIS is not installed here)
        pytest.skip(f"PostGIS is not installed: {error}")
    # PostGIS's own reading of the same rule: two JSON numbers at the start, float8 as PostgreSQL reads them.
    psql(url, f"""
        CREATE TABLE located AS
          SELECT id, ST_SetSRID(ST_MakePoint(m[2]::float8, m[1]::float8), 4326) AS geom
          FROM chatts, regexp_match(geodata, '^\\s*\\[\\s*({NUMBER})\\s*,\\s*({NUMBER})\\s*,') AS m
          WHERE m IS NOT NULL AND m[1]::float8 BETWEEN -90 AND 90 AND m[2]::float8 BETWEEN -180 AND 180;
        CREATE INDEX ON located USING gist (geom);
        ANALYZE located;""")
    whole = rows_of(tls.get("/getmaps"))
    points = [p for p in (location(row[4]) for row in whole) if p]
    rng = random.Random(11)
    boxes = [random_box(rng, points) for _ in range(10_000)]
    # A box across the antimeridian is two envelopes. The GiST index finds the points whose float4 boxes meet
    # the envelope's (`&&`, rounded outward: a few too many), the doubles themselves decide, edges inside
    # (ST_Intersects would miss points on a box of no width, an invalid polygon).
    envelopes = [(n, w, s, e, t) for n, (w, s, e, t) in enumerate(boxes) if w <= e]
    envelopes += [half for n, (w, s, e, t) in enumerate(boxes) if w > e
                  for half in ((n, w, s, 180.0, t), (n, -180.0, s, e, t))]
    values = ",".join(f"({n},{w!r},{s!r},{e!r},{t!r})" for n, w, s, e, t in envelopes)
    found = psql(url, f"""
        SELECT n, string_agg(DISTINCT id::text, ' ') FROM (VALUES {values}) AS b(n, w, s, e, t)
        JOIN located ON geom && ST_MakeEnvelope(w, s, e, t, 4326)
          AND ST_X(geom) BETWEEN w AND e AND ST_Y(geom) BETWEEN s AND t
        GROUP BY n;""", timeout=300)
    postgis = {int(n): sorted(ids.split()) for n, ids in (line.split("|") for line in found.splitlines() if line)}
    mismatches = []
    # A connection serves 1000 requests (docs/API.md): 500 on each.
    for first in range(0, len(boxes), 500):
        with tls.connect() as conn:
            for n in range(first, first + 500):
                conn.send(build_request("GET", "/getmaps?" + query(boxes[n])))
                ids = sorted(row[2] for row in rows_of(conn.read_response()))
                if ids != postgis.get(n, []):
                    mismatches.append((boxes[n], len(ids), len(postgis.get(n, []))))
    assert not mismatches, f"{len(mismatches)} of 10000 boxes differ, e.g. {mismatches[:5]}"
    assert sum(len(ids) for ids in postgis.values()) > 10_000, "the boxes found too little to compare"


def test_the_benchmarks_postgis_comparator_answers_what_the_index_answers(viewport, env, certs, tls_context):
    """`serve --bbox-in-database`, bench/viewport.sh's "PostGIS through chatterd", must answer each box with the
    rows the index does, or it is no baseline: on bench/sql/postgis.sql's column and index, with `newest` and
    `limit`, across the antimeridian and at the poles."""
    url, tls, _ = viewport
    try:
        psql(url, "CREATE EXTENSION IF NOT EXISTS postgis;")
    except Exception as error:  # noqa: BLE001 (any failure means PostGIS is not installed here)
        pytest.skip(f"PostGIS is not installed: {error}")
    psql(url, (env.repo / "bench/sql/postgis.sql").read_text(), timeout=120)
    comparator = launch(env, url, certs, tls_context, flags=["--bbox-in-database"])
    try:
        whole = rows_of(tls.get("/getmaps"))
        points = [p for p in (location(row[4]) for row in whole) if p]
        rng = random.Random(23)
        differ, found = [], 0
        with tls.connect() as memory, comparator.connect() as database:
            for _ in range(300):
                target = "/getmaps?" + query(random_box(rng, points)) + rng.choice(["", "&newest=7", "&limit=7"])
                answers = []
                for conn in (memory, database):
                    conn.send(build_request("GET", target))
                    answers.append(rows_of(conn.read_response()))
                found += len(answers[0])
                if answers[0] != answers[1]:
                    differ.append((target, len(answers[0]), len(answers[1])))
        assert not differ, f"{len(differ)} of 300 boxes differ, e.g. {differ[:3]}"
        assert found > 1000, "the boxes found too little to compare"
        # It did ask the database: without the column, it cannot answer.
        psql(url, "ALTER TABLE chatts RENAME COLUMN geom TO geom_away;")
        assert comparator.get("/getmaps?bbox=-84,42,-83,43").status == 500
        assert tls.get("/getmaps?bbox=-84,42,-83,43").status == 200
        psql(url, "ALTER TABLE chatts RENAME COLUMN geom_away TO geom;")
    finally:
        assert comparator.process.stop(timeout=15) == 0, comparator.process.log()


def test_chatter_get_asks_for_a_box_and_the_newest(viewport, chatter_bin, certs):
    _, tls, _ = viewport
    box = (-84.0, 42.0, -83.0, 43.0)
    whole = rows_of(tls.get("/getmaps"))
    expected = [row for row in whole if inside(box, location(row[4]))][-3:]
    done = subprocess.run([chatter_bin, "get", "--bbox", ",".join(map(str, box)), "--newest", "3", "--format", "json",
                           "--server", f"https://localhost:{tls.port}", "--cacert", str(certs.cert)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == expected


def fitting_zoom(box) -> int:
    """The highest zoom at which `box` spans at most 16 384 pixels each way (docs/API.md, clusters)."""
    west, south, east, north = box
    width = (east + 360 - west if west > east else east - west) / 360

    def y(lat):
        sine = math.sin(math.radians(max(-85.0511287798, min(85.0511287798, lat))))
        return 0.5 - math.log((1 + sine) / (1 - sine)) / (4 * math.pi)

    height = y(south) - y(north)
    return max([z for z in range(21) if width * 256 * 2 ** z <= 16384 and height * 256 * 2 ** z <= 16384], default=-1)


@pytest.mark.parametrize("protocol", ["http/1.1", "h2"])
def test_clusters_count_every_chatt_in_the_box_once(viewport, protocol):
    _, tls, h2 = viewport
    endpoint = h2 if protocol == "h2" else tls
    whole = rows_of(tls.get("/getmaps"))
    points = [p for p in (location(row[4]) for row in whole) if p]
    rng = random.Random(17)
    checked = 0
    while checked < 40:
        box = random_box(rng, points)
        top = fitting_zoom(box)
        if top < 0:
            continue
        zoom = rng.randint(max(0, top - 4), top)
        response = endpoint.get(f"/getmaps/clusters?{query(box)}&zoom={zoom}")
        assert response.status == 200 and response.header("Content-Type") == "application/geo+json", response
        collection = response.json()
        assert collection["type"] == "FeatureCollection"
        inside_rows = {row[2]: row for row in whole if inside(box, location(row[4]))}
        singles = [f for f in collection["features"] if not f["properties"].get("cluster")]
        clusters = [f for f in collection["features"] if f["properties"].get("cluster")]
        assert all(f["properties"]["point_count"] >= 2 for f in clusters)
        assert len(singles) + sum(f["properties"]["point_count"] for f in clusters) == len(inside_rows), box
        for single in singles:
            row = inside_rows[single["properties"]["id"]]
            assert [single["properties"][key] for key in ("name", "message", "id", "timestamp")] == row[:4]
            assert tuple(single["geometry"]["coordinates"]) == location(row[4])
        checked += 1


def test_clusters_without_parameters_show_the_whole_map_at_a_screens_zoom(viewport):
    _, tls, _ = viewport
    whole = rows_of(tls.get("/getmaps"))
    features = tls.get("/getmaps/clusters").json()["features"]
    assert sum(f["properties"].get("point_count", 1) for f in features) == sum(1 for r in whole if location(r[4]))
    assert tls.get("/getmaps/clusters?zoom=2").json() == tls.get("/getmaps/clusters").json()


def test_clusters_refuse_a_box_no_screen_shows(viewport):
    _, tls, _ = viewport
    assert tls.get("/getmaps/clusters?bbox=-180,-85,180,85&zoom=6").status == 200
    assert tls.get("/getmaps/clusters?zoom=6").status == 200, "the whole map is exactly 16 384 pixels at zoom 6"
    for target in ("/getmaps/clusters?bbox=-180,-85,180,85&zoom=7", "/getmaps/clusters?zoom=7",
                   "/getmaps/clusters?bbox=0,0,1&zoom=3", "/getmaps/clusters?bbox=0,0,1,1&zoom=21"):
        response = tls.get(target)
        assert response.status == 400 and response.json()["error"], target


@pytest.mark.parametrize("protocol", ["http/1.1", "h2"])
def test_a_stream_of_a_box_sends_its_chatts_and_the_removals_of_those_alone(viewport, protocol, token):
    url, tls, h2 = viewport
    endpoint = h2 if protocol == "h2" else tls
    box = "bbox=20.5,20.5,20.6,20.6"

    def post_at(message, lat, lon):
        assert tls.post_json("/postmaps", {"name": "s", "message": message,
                                           "geodata": f'[{lat},{lon},"N","w"]'}).status == 200

    with subscribe(endpoint, f"/getmaps/stream?{box}") as inside, subscribe(endpoint, "/getmaps/stream") as every:
        assert inside.response.status == 200 and every.response.status == 200
        post_at(f"{token}-in", 20.55, 20.55)
        post_at(f"{token}-out", 60, 60)
        post_at(f"{token}-edge", 20.6, 20.5)
        every.wait_events(3)
        events = inside.wait_events(2)
        assert [event.row[1] for event in events] == [f"{token}-in", f"{token}-edge"]
        ids = {row[1]: row[2] for row in rows_of(tls.get("/getmaps")) if row[1].startswith(token)}
        psql(url, "DELETE FROM chatts WHERE id IN (:'a', :'b');", {"a": ids[f"{token}-out"], "b": ids[f"{token}-in"]})
        assert len(every.wait_events(5)) == 5
        removal = inside.wait_events(3)[2]
        assert removal.event == "delete" and json.loads(removal.data) == ids[f"{token}-in"]
        inside.quiet(0.3)
        assert len([e for e in inside.events if e.data is not None]) == 3, "the removal outside the box is not sent"


def test_a_quiet_box_learns_where_the_stream_stands_and_resumes_from_there_exactly(viewport, start_server, token):
    url, _, _ = viewport
    server = start_server("--stream-heartbeat", "1", tls=True, url=url)
    box = "bbox=30.5,30.5,30.6,30.6"

    def post_at(message, lat, lon):
        assert server.post_json("/postmaps", {"name": "q", "message": message,
                                              "geodata": f'[{lat},{lon},"N","w"]'}).status == 200

    with subscribe(server, f"/getmaps/stream?{box}") as sub:
        assert sub.response.status == 200
        post_at(f"{token}-out", 70, 70)
        assert sub.wait_for(lambda: any(e.data is None and e.id for e in sub.events), timeout=10), sub.parser.received
        moved = [e for e in sub.events if e.data is None][-1]
        assert moved.raw == f"id: {moved.id}\n\n".encode(), "an id and no data"
    post_at(f"{token}-in", 30.55, 30.55)
    with subscribe(server, f"/getmaps/stream?{box}", last_event_id=moved.id) as resumed:
        events = resumed.wait_events(1)
        assert events[0].row[1] == f"{token}-in"
        resumed.quiet(0.5)
        assert [e.row[1] for e in resumed.events if e.data] == [f"{token}-in"]


def test_a_malformed_box_on_a_stream_is_400(viewport):
    _, tls, _ = viewport
    response = tls.get("/getmaps/stream?bbox=1,2,3")
    assert response.status == 400 and response.json()["error"]
