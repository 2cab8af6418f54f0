-- Seeds :rows chatts in one statement, shaped like what the iOS app posts: 50 users, short messages
-- (some with quotes or non-ASCII text, which JSON must escape or carry), geodata as the app formats it
-- ([lat, lon, facing, speed], Double precision), one chatt in 20 without geodata (posted with /postchatt),
-- and timestamps one second apart ending now, so the feed's order is the posting order.
-- Usage: psql -v rows=N -f bench/sql/seed.sql
INSERT INTO chatts (name, message, time, geodata)
SELECT 'user' || (i % 50),
       (ARRAY['Hello from the Diag', 'Anyone at the Big House?', 'Café on State St ☕', 'Say "hi" at the fountain',
              'Bus is late again', 'Great sunset tonight', 'Studying at the UGLi', 'Free pizza in BBB!'])[1 + i % 8]
           || ' #' || i,
       now() - (:rows - i) * interval '1 second',
       CASE WHEN i % 20 <> 0 THEN
           format('[%s,%s,"%s","%s"]', 42.2 + random() * 0.1, -83.8 + random() * 0.1,
                  (ARRAY['North', 'NE', 'East', 'SE', 'South', 'SW', 'West', 'NW'])[1 + i % 8],
                  (ARRAY['stopped', 'walking', 'running', 'cycling', 'driving'])[1 + i % 5])
       END
FROM generate_series(1, :rows) AS i;
