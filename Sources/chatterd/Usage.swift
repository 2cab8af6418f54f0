/// `chatterd --help` text.
let usage = """
    chatterd \(chatterdVersion): the Chatter/Maps back end (HTTPS + PostgreSQL)

    Usage:
      chatterd serve [options]     apply pending migrations, then serve HTTPS
      chatterd migrate [options]   apply pending migrations and exit
      chatterd --help | --version

    Options (serve), each with the environment variable that sets it when the option is not given:
      --host H                       CHATTERD_HOST           address to listen on (default 0.0.0.0)
      --port P                       CHATTERD_PORT           port (default 443)
      --cert FILE                    CHATTERD_CERT           certificate chain, PEM (default ./chatterd.crt)
      --key FILE                     CHATTERD_KEY            private key, PEM, mode 0600 (default ./chatterd.key)
      --plain-http                   CHATTERD_PLAIN_HTTP     plain HTTP instead (only behind a TLS-terminating proxy)
      --reuse-port                   CHATTERD_REUSE_PORT     SO_REUSEPORT: share the port with other chatterd processes
      --database-url URL             CHATTERD_DATABASE_URL   libpq URI or key=value string (then DATABASE_URL,
                                                             then libpq's PG* variables); may be a
                                                             transaction-mode pooler such as PgBouncer
      --direct-database-url URL      CHATTERD_DIRECT_DATABASE_URL  a session straight to PostgreSQL, for
                                                             LISTEN and migrations (default: --database-url)
      --migrations DIR               CHATTERD_MIGRATIONS     migration files (default ./migrations)
      --pool-size N                  CHATTERD_POOL_SIZE      database connections (default 8)
      --drain-timeout S              CHATTERD_DRAIN_TIMEOUT  graceful shutdown deadline (default 10)
      --strict-feeds                 CHATTERD_STRICT_FEEDS   check the database on every feed read, so a post
                                                             through any process shows in the next read from
                                                             any other (default: trust change notifications,
                                                             which reach other processes within milliseconds)
      --log-format logfmt|json       CHATTERD_LOG_FORMAT     log lines on stderr (default logfmt)
      --log-level debug|info|warn|error  CHATTERD_LOG_LEVEL  (default info: one line per request)
      --max-connections N            CHATTERD_MAX_CONNECTIONS               (default 512)
      --max-requests-per-connection N  CHATTERD_MAX_REQUESTS_PER_CONNECTION  (default 1000)
      --max-request-line-bytes N     CHATTERD_MAX_REQUEST_LINE_BYTES        (default 8192)
      --max-header-bytes N           CHATTERD_MAX_HEADER_BYTES              (default 16384)
      --max-header-count N           CHATTERD_MAX_HEADER_COUNT              (default 100)
      --max-body-bytes N             CHATTERD_MAX_BODY_BYTES                (default 65536)
      --handshake-timeout S          CHATTERD_HANDSHAKE_TIMEOUT             (default 10)
      --header-timeout S             CHATTERD_HEADER_TIMEOUT                (default 10)
      --body-timeout S               CHATTERD_BODY_TIMEOUT                  (default 10)
      --send-timeout S               CHATTERD_SEND_TIMEOUT                  (default 30)
      --keepalive-timeout S          CHATTERD_KEEPALIVE_TIMEOUT             (default 60)
    Switches take 1/true/yes or 0/false/no in their variable (or as --switch=VALUE). Empty variables are
    ignored. An option on the command line wins over its variable.

    Options (migrate): --database-url URL, --direct-database-url URL (used when given), --migrations DIR,
    --log-format, --log-level (same variables)
    """

let chatterdVersion = "0.1.0"
