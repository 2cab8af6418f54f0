-- pgbench: the newest 500 chatts in a random box of class :class (:boxes of them), whole rows, as a back end on
-- PostGIS would answer /getmaps?bbox=...&newest=500: the GiST index finds the candidates (float4 boxes), the
-- doubles decide, edges included.
\set n random(0, :boxes - 1)
SELECT name, message, id, time, geodata FROM chatts, bench_boxes b
WHERE b.class = :class AND b.n = :n AND geom && b.box
  AND ST_X(geom) BETWEEN ST_XMin(b.box) AND ST_XMax(b.box) AND ST_Y(geom) BETWEEN ST_YMin(b.box) AND ST_YMax(b.box)
ORDER BY time DESC, seq DESC LIMIT 500;
