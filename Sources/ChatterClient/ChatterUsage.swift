/// The `chatter` version, also sent in `User-Agent`.
public let chatterVersion = "0.1.0"

/// `chatter --help` text.
public let chatterUsage = """
    chatter \(chatterVersion): command-line client for chatterd (the Chatter/Maps back end)

    Usage:
      chatter post --name N --message M [--lat X --lon Y [--facing F] [--speed S]] [options]
      chatter get [--maps] [--format table|json|geojson] [--bbox W,S,E,N] [--newest N] [options]
      chatter watch [--maps] [--format table|json|geojson] [--bbox W,S,E,N] [options]
      chatter delete ID --reason TEXT [--admin-token-file FILE] [options]
      chatter --help | --version

    post sends one chatt to /postmaps and prints nothing when the server has stored it.
      --lat, --lon         degrees (-90..90, -180..180); give both or neither. Without them geodata is null.
      --facing, --speed    free text (default "unknown"); need --lat and --lon.

    get fetches /getchatts (with --maps, /getmaps: chatts with their location) and prints it:
      --format table       aligned columns; long names and messages end in "…" (default)
      --format json        the server's rows as JSON, one row per line
      --format geojson     an RFC 7946 FeatureCollection of the chatts that have a location
                           (always read from /getmaps; coordinates are [longitude, latitude])
      --bbox W,S,E,N       only the chatts located in that box (degrees; W > E crosses the antimeridian),
                           from /getmaps
      --newest N           only the newest N (still oldest first)
      Control, bidi and invisible characters from the server show as \\u{1B} in tables and error
      lines (a literal backslash as \\\\), and as \\u001b escapes in JSON and GeoJSON.

    watch follows the live feed (/getchatts/stream; /getmaps/stream with --maps or --format geojson)
      and prints each new chatt as it arrives, until interrupted, in the same formats, one line each
      (table rows under one header; a JSON row; a GeoJSON Feature). It starts at the end of the feed.
      With --bbox W,S,E,N it follows /getmaps/stream?bbox=: only the chatts posted (and removed) in the box.
      After a drop (closed, cut, or silent for 37.5 s) it reconnects with Last-Event-ID set to the last
      chatt shown, so none is missed or repeated; refused connections and 429/502/503/504 are tried
      again. Waits are random, up to 0.5 s doubling to 30 s, and each is noted on stderr. When the
      server cannot resume (event: reset) it says so on stderr and goes on from the current feed.
      A removed chatt (event: delete) is a line too: "-- removed ID" among the table's rows,
      {"removed":"ID"} among the JSON rows, and a Feature with "geometry":null and
      "properties":{"removed":true} among the GeoJSON ones. Other HTTP errors end it (exit 67).

    delete removes the chatt ID (DELETE /chatts/ID), as a moderator, and prints nothing once it is gone.
      --reason TEXT        why (1 to 200 characters), recorded with the removal
      --admin-token-file F the server's token file (name:token lines): the first line's token is sent;
                           without it, the token in env CHATTER_ADMIN_TOKEN

    Options:
      --server URL         https://host[:port][/path] or http://... (default https://localhost:8443,
                           the scripts/run server; env CHATTER_SERVER)
      --cacert FILE        PEM certificate(s) to trust for https, the only ones, for any host
                           (env CHATTER_CACERT). Without it, ./chatterd.crt (the scripts/run
                           certificate) is trusted if it exists, but only for localhost, 127.0.0.1,
                           ::1 and its own names (subjectAltName, and the names a CA's nameConstraints
                           permit); any other host is checked against the system's trusted CAs.
                           The server's certificate must name the URL's host or IP.
      --timeout S          seconds to connect, and to wait for each read or write (default 10;
                           watch waits 37.5 s for each read of its stream)
    Options may also be written --option=value. Flags win over environment variables.

    Exit status:
      0   success
      64  usage error (bad option or value)
      65  TLS failure: CA file unreadable, certificate not trusted or not for this host, handshake failed
      66  connection failure: unknown host, refused, unreachable, timed out, reset
      67  the server answered with an HTTP error status (its {"error": ...} reason is printed)
      68  malformed response: not HTTP/1.1, or not the JSON that docs/API.md describes

    """
