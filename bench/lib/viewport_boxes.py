#!/usr/bin/env python3
"""Boxes of the map that hold about K chatts each, for each K of the selectivity classes: each box is centred
on a chatt picked at random and is the smallest square (in degrees) around it that holds its K nearest chatts
(Chebyshev distance), so a box's hits are K give or take ties and the box's clipping at the poles. Reads the
chatts' locations from psql's unaligned output of `SELECT lon, lat` on stdin; writes, for each K, a file
class-K.txt of request targets (`/getmaps?bbox=W,S,E,N` and SUFFIX); writes boxes.sql, which puts every box in
bench_boxes (bench/sql/postgis.sql) for pgbench; prints each class's mean hits.

Usage: viewport_boxes.py OUTDIR --boxes N [--classes 10,100,...] [--suffix '&newest=500'] [--seed S]
"""

import argparse
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


if __name__ == "__main__":
    main()
