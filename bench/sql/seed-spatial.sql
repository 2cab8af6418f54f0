-- Seeds :rows chatts in one statement, as bench/sql/seed.sql does (50 users, one chatt in 20 without geodata,
-- timestamps one second apart ending now), placed by one of three spatial mixes (:'mix'):
--   uniform  uniform on the sphere (latitude = asin of a uniform sine), as a global app's would be;
--   campus   80 % within a few km of one campus (Ann Arbor's), 15 % around 50 cities, 5 % uniform on the sphere;
--   tracks   walks of 100 points, a few metres apart, each starting near one of the 50 cities or the campus.
-- The same seed gives the same rows. Usage: psql -v rows=N -v mix=campus -f bench/sql/seed-spatial.sql
SELECT setseed(0.42);
WITH cities AS (
    -- 50 cities spread over the inhabited latitudes, the same in every run.
    SELECT c, degrees(asin(0.85 * (2 * ((c * 0.6180339887) - floor(c * 0.6180339887)) - 1))) AS lat,
           360 * ((c * 0.7548776662) - floor(c * 0.7548776662)) - 180 AS lon
    FROM generate_series(0, 49) AS c
), points AS (
    SELECT i, u1, u2, u3, u4, u5,
        CASE :'mix'
            WHEN 'uniform' THEN degrees(asin(2 * u1 - 1))
            WHEN 'campus' THEN CASE
                WHEN u5 < 0.80 THEN 42.2780 + (u1 + u2 - 1) * 0.04
                WHEN u5 < 0.95 THEN (SELECT lat FROM cities WHERE c = floor(u3 * 50)::int) + (u1 + u2 - 1) * 0.1
                ELSE degrees(asin(2 * u1 - 1)) END
            ELSE -- tracks: the walk of i / 100 starts near a city (or the campus) and steps about 5 m a point
                (SELECT lat FROM cities WHERE c = (i / 100) % 50) * 0.5 + 42.2780 * 0.5 * ((i / 100) % 2)
                + ((i / 100) % 97 - 48) * 0.002 + (i % 100) * 0.00005 * cos((i / 100) * 1.3) + (u1 - 0.5) * 0.00002
        END AS lat,
        CASE :'mix'
            WHEN 'uniform' THEN 360 * u2 - 180
            WHEN 'campus' THEN CASE
                WHEN u5 < 0.80 THEN -83.7382 + (u3 + u4 - 1) * 0.05
                WHEN u5 < 0.95 THEN (SELECT lon FROM cities WHERE c = floor(u3 * 50)::int) + (u1 - u2) * 0.12
                ELSE 360 * u2 - 180 END
            ELSE
                (SELECT lon FROM cities WHERE c = (i / 100) % 50) * 0.5 - 83.7382 * 0.5 * ((i / 100) % 2)
                + ((i / 100) % 89 - 44) * 0.002 + (i % 100) * 0.00005 * sin((i / 100) * 1.3) + (u2 - 0.5) * 0.00002
        END AS lon
    FROM (SELECT i, random() AS u1, random() AS u2, random() AS u3, random() AS u4, random() AS u5
          FROM generate_series(1, :rows) AS i) AS draws
)
INSERT INTO chatts (name, message, time, geodata)
SELECT 'user' || (i % 50),
       (ARRAY['Hello from the Diag', 'Anyone at the Big House?', 'Café on State St ☕', 'Say "hi" at the fountain',
              'Bus is late again', 'Great sunset tonight', 'Studying at the UGLi', 'Free pizza in BBB!'])[1 + i % 8]
           || ' #' || i,
       now() - (:rows - i) * interval '1 second',
       CASE WHEN i % 20 <> 0 THEN
           format('[%s,%s,"%s","%s"]', greatest(-90, least(90, lat)), greatest(-180, least(180, lon)),
                  (ARRAY['North', 'NE', 'East', 'SE', 'South', 'SW', 'West', 'NW'])[1 + i % 8],
                  (ARRAY['stopped', 'walking', 'running', 'cycling', 'driving'])[1 + i % 5])
       END
FROM points;
