/// `chatterd --help` text.
let usage = """
    chatterd \(chatterdVersion): the Chatter/Maps back end (HTTPS + PostgreSQL)

    Usage:
      chatterd serve [options]     apply pending migrations, then serve HTTPS
      chatterd migrate [options]   apply pending migrations and exit
      chatterd --help | --version

    Options (serve):
      --host H                     address to listen on (default 0.0.0.0)
      --port P                     port (default 443)
      --cert FILE                  certificate chain, PEM (default ./chatterd.crt)
      --key FILE                   private key, PEM, mode 0600 (default ./chatterd.key)
      --plain-http                 serve plain HTTP instead (only behind a TLS-terminating proxy)
      --database-url URL           libpq connection string (default: $DATABASE_URL, else PG* variables)
      --migrations DIR             migration files (default ./migrations)
      --pool-size N                database connections (default 8)
      --drain-timeout S            graceful shutdown deadline (default 10)
      --max-connections N          open connections (default 512)
      --max-requests-per-connection N  (default 1000)
      --max-request-line-bytes N   (default 8192)      --max-header-bytes N (default 16384)
      --max-header-count N         (default 100)       --max-body-bytes N   (default 65536)
      --handshake-timeout S        (default 10)        --header-timeout S   (default 10)
      --body-timeout S             (default 10)        --send-timeout S     (default 30)
      --keepalive-timeout S        (default 60)

    Options (migrate): --database-url URL, --migrations DIR
    """

let chatterdVersion = "0.1.0"
