#!/usr/bin/env python3
"""Boxes of the map that hold about K chatts each, for each K of the selectivity classes: each box is centred
on a chatt picked at random and is the smallest square (in degrees) around it that holds its K nearest chatts
(Chebyshev distance), so a box's hits are K give or take ties and the box's clipping at the poles. Reads the
chatts' locations from psql's unaligned output of `SELECT lon, lat` on stdin; writes, for each K, a file
class-K.txt of request targets (`/getmaps?bbox=W,S,E,N` and SUFFIX); writes boxes.sql, which puts every box in
bench_boxes (bench/sql/postgis.sql) for pgbench; prints each class's mean hits. Also writes clusters.txt: the
whole world at zooms 0 to 3, where a screen of at most 2 048 pixels shows it whole (`/getmaps/clusters?zoom=Z`), and
BOXES screens of 1024 x 768 pixels at random zooms (2 to 18) centred on chatts picked at random, as a map asks for
its clusters.

Usage: viewport_boxes.py OUTDIR --boxes N [--classes 10,100,...] [--suffix '&newest=500'] [--seed S]
"""

import argparse
import math
import random
import sys


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("outdir")
    parser.add_argument("--boxes", type=int, default=20)
    parser.add_argument("--classes", default="10,100,1000,10000,100000")
    parser.add_argument("--suffix", default="&newest=500")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    points = [tuple(map(float, line.split("|"))) for line in sys.stdin if line.strip()]
    classes = [int(k) for k in args.classes.split(",")]
    rng = random.Random(args.seed)
    boxes = {k: [] for k in classes}
    for _ in range(args.boxes):
        lon, lat = rng.choice(points)
        distances = sorted(max(abs(p[0] - lon), abs(p[1] - lat)) for p in points)
        for k in classes:
            half = distances[min(k, len(distances)) - 1]
            box = (max(-180.0, lon - half), max(-90.0, lat - half), min(180.0, lon + half), min(90.0, lat + half))
            hits = sum(1 for d in distances if d <= half)
            boxes[k].append((box, hits))
    with open(f"{args.outdir}/boxes.sql", "w") as out:
        out.write("TRUNCATE bench_boxes;\nINSERT INTO bench_boxes VALUES\n")
        out.write(",\n".join(f"({k},{n},ST_MakeEnvelope({w!r},{s!r},{e!r},{t!r},4326))"
                             for k in classes for n, ((w, s, e, t), _) in enumerate(boxes[k])) + ";\n")
    for k in classes:
        with open(f"{args.outdir}/class-{k}.txt", "w") as out:
            for (west, south, east, north), _ in boxes[k]:
                out.write(f"/getmaps?bbox={west!r},{south!r},{east!r},{north!r}{args.suffix}\n")
        mean = sum(hits for _, hits in boxes[k]) / len(boxes[k])
        print(f"class {k}: {len(boxes[k])} boxes, {mean:.0f} hits on average")
    with open(f"{args.outdir}/clusters.txt", "w") as out:
        for zoom in range(4):
            out.write(f"/getmaps/clusters?zoom={zoom}\n")
        for _ in range(args.boxes):
            zoom = rng.randint(2, 18)
            west, south, east, north = screen(rng.choice(points), zoom)
            out.write(f"/getmaps/clusters?bbox={west!r},{south!r},{east!r},{north!r}&zoom={zoom}\n")


def screen(center: tuple[float, float], zoom: int, width: int = 1024, height: int = 768):
    """The box a screen of width x height pixels shows around `center` (lon, lat) at `zoom`, in Web Mercator's
    256-pixel tiles: west > east across the antimeridian, every longitude when the screen is wider than the world."""
    world = 256 * 2 ** zoom
    lon, lat = center
    y = 0.5 - math.log(math.tan(math.pi / 4 + max(-85.0, min(85.0, lat)) * math.pi / 360)) / (2 * math.pi)

    def latitude(y):
        return math.degrees(math.atan(math.sinh(math.pi * (1 - 2 * max(0.0, min(1.0, y))))))

    def wrapped(x):
        return x - 360 if x > 180 else x + 360 if x < -180 else x

    half = width / 2 / world * 360
    west, east = (-180.0, 180.0) if half >= 180 else (wrapped(lon - half), wrapped(lon + half))
    return west, latitude(y + height / 2 / world), east, latitude(y - height / 2 / world)


if __name__ == "__main__":
    main()
