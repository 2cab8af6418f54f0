-- The viewport comparator (bench/viewport.sh): PostGIS on the bench store, as well set up as it gets. A generated
-- geometry(Point, 4326) column read from geodata by the rule docs/API.md gives a located chatt (two JSON numbers
-- first, in range), a GiST index on it, the table clustered on that index, analysed.
-- Usage: psql -f bench/sql/postgis.sql (once per seeded store; shared_buffers is the script's to raise)
CREATE EXTENSION IF NOT EXISTS postgis;
CREATE OR REPLACE FUNCTION bench_point(geodata text) RETURNS geometry
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN m IS NOT NULL AND m[1]::float8 BETWEEN -90 AND 90 AND m[2]::float8 BETWEEN -180 AND 180
                THEN ST_SetSRID(ST_MakePoint(m[2]::float8, m[1]::float8), 4326) END
    FROM regexp_match(geodata,
        '^\s*\[\s*(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)\s*,\s*(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)\s*,') AS m
$$;
ALTER TABLE chatts ADD COLUMN IF NOT EXISTS geom geometry(Point, 4326) GENERATED ALWAYS AS (bench_point(geodata)) STORED;
CREATE INDEX IF NOT EXISTS chatts_geom ON chatts USING gist (geom);
CLUSTER chatts USING chatts_geom;
ANALYZE chatts;
-- The boxes of each selectivity class, as bench/lib/viewport_boxes.py wrote them, for pgbench to pick from.
CREATE TABLE IF NOT EXISTS bench_boxes (class integer, n integer, box geometry, PRIMARY KEY (class, n));
