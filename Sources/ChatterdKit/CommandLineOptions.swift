import ChattAPI
import Foundation
import HTTPCore
import HTTPServer
import Logging

/// What the command line asked for.
enum Command {
    case serve(ServeOptions)
    case migrate(MigrateOptions)
    case help
    case version
}

extension Command {
    /// The commands that take options, in the order `--help` lists them.
    static var optionTypes: [any CommandOptions.Type] { [ServeOptions.self, MigrateOptions.self] }

    /// Parses `arguments` (without the program name); options not given fall back to `environment`
    /// (see `CommandOptions`).
    static func parse(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Command {
        guard let first = arguments.first else { return .help }
        let rest = Array(arguments.dropFirst())
        switch first {
        case "-h", "--help", "help": return .help
        case "-V", "--version", "version": return .version
        case "serve": return .serve(try ServeOptions(arguments: rest, environment: environment))
        case "migrate": return .migrate(try MigrateOptions(arguments: rest, environment: environment))
        default: throw UsageError(description: "unknown command: \(first)")
        }
    }
}

/// Logging options, shared by every command.
struct LogOptions {
    var level = LogLevel.info
    var format = LogFormat.logfmt
}

/// Options of `chatterd serve`. Server limits live in `server`, whose defaults are docs/API.md's.
struct ServeOptions: CommandOptions {
    var server = ServerConfiguration()
    var certificatePath = "./chatterd-server.crt"
    var keyPath = "./chatterd.key"
    var plainHTTP = false
    var databaseURL: String?
    var directDatabaseURL: String?
    var migrationsDirectory = "./migrations"
    var poolSize = 8
    var drainSeconds = 10.0
    /// Check the store's version on every feed read instead of trusting change notifications, so that a
    /// post through any process is in the very next read from any other (at a query per read).
    var strictFeeds = false
    /// Seconds after it was last known current that a feed may still be served while the database cannot be
    /// reached, with `Age`; 0 answers 503 at once, as docs/API.md does. Never with `strictFeeds`.
    var staleIfErrorSeconds = 0
    /// Posts per second allowed from one client (see `ClientGroup`); nil for no limit.
    var postsPerSecondPerClient: Int?
    /// The rate floor for requests and responses, in bytes per second (see `ConnectionTimeouts`).
    var minimumTransferRate = Int(ConnectionTimeouts().minimumBytesPerSecond)
    /// The longest a feed stream goes without a byte: a comment line goes out when nothing else has.
    var streamHeartbeatSeconds = 15.0
    /// How far behind (in event bytes) a stream subscriber may fall before it is cut; also what the shared
    /// event log keeps.
    var streamMaxUnsentBytes = 1 << 20
    /// Where Leaflet's files for `/map` are read from at start-up.
    var leafletDirectory = MapPage.defaultLeafletDirectory
    /// The moderators' `name:token` lines for `DELETE /chatts/<id>`; nil answers every removal 403.
    var adminTokenFile: String?
    /// Chatts posted longer ago than this many days are removed (`Retention`); nil keeps every chatt.
    var retentionDays: Int?
    /// `?bbox=` asks PostGIS instead of the viewport index: bench/viewport.sh's comparator (`StoreBoxSearch`).
    var bboxInDatabase = false
    var log = LogOptions()

    static let command = "serve"
    static let summary = "apply pending migrations, then serve HTTPS"
    static let options: [CommandOption<Self>] =
        [
            .text("--host", "H", "address to listen on", \.server.host),
            .number("--port", "port to listen on", \.server.port),
            .text("--cert", "FILE", "certificate chain, PEM: the server's certificate first", \.certificatePath),
            .text("--key", "FILE", "private key, PEM, readable by its owner only", \.keyPath),
            .switch("--plain-http", "plain HTTP instead of HTTPS (only behind a TLS-terminating proxy)", \.plainHTTP),
            .switch("--reuse-port", "SO_REUSEPORT: share the port with other chatterd processes", \.server.reusePort),
        ] + databaseOptions
        + [
            .number("--pool-size", "database connections", \.poolSize, atLeast: 1),
            .seconds("--drain-timeout", "graceful shutdown deadline", \.drainSeconds),
            .switch(
                "--strict-feeds", "check the database on every feed read, so a post through any process shows in the "
                    + "next read from any other", \.strictFeeds,
                whenOff: "trust change notifications, which reach other processes within milliseconds"),
            .number(
                "--stale-if-error", "seconds a feed last known current may still be served, with Age, while the "
                    + "database cannot be reached (0: 503 at once; never with --strict-feeds)", \.staleIfErrorSeconds),
            .seconds(
                "--stream-heartbeat", "longest a feed stream goes quiet: a comment line is sent when nothing else was",
                \.streamHeartbeatSeconds),
            .number(
                "--stream-max-unsent-bytes", "how far behind a feed stream subscriber may fall, in event bytes, "
                    + "before it is cut", \.streamMaxUnsentBytes, atLeast: 4096),
            .text(
                "--leaflet-dir", "DIR", "Leaflet's files for the /map page, read at start-up (Debian's "
                    + "\(MapPage.leafletPackage)); without them /map answers 503", \.leafletDirectory),
            .text(
                "--admin-token-file", "FILE", "moderators' name:token lines for DELETE /chatts/<id>, readable by "
                    + "its owner only, reloaded on SIGHUP", \.adminTokenFile, fallback: "removals are refused (403)"),
            .limit(
                "--retention-days", "remove chatts posted longer ago than this many days, in batches of 1000, "
                    + "as removals recorded as retention", \.retentionDays),
            .switch(
                "--bbox-in-database", "benchmarks only: find ?bbox= chatts with PostGIS (bench/sql/postgis.sql) "
                    + "instead of the in-memory index", \.bboxInDatabase),
        ] + logOptions
        + [
            .number("--max-connections", "open connections; more wait in the listen backlog", \.server.maxConnections,
                    atLeast: 1),
            .number(
                "--max-requests-per-connection", "requests served on one connection before it is closed",
                \.server.maxRequestsPerConnection, atLeast: 1),
            .number(
                "--max-request-line-bytes", "longest request line, else 414", \.server.limits.maxRequestLineBytes,
                atLeast: 16),
            .number(
                "--max-header-bytes", "largest header section, else 431", \.server.limits.maxHeaderBytes, atLeast: 16),
            .number("--max-header-count", "most header fields, else 431", \.server.limits.maxHeaderCount, atLeast: 1),
            .number("--max-body-bytes", "largest request body, else 413", \.server.limits.maxBodyBytes),
            .seconds(
                "--handshake-timeout", "from accept to a completed TLS handshake", \.server.timeouts.handshakeSeconds),
            .seconds(
                "--header-timeout", "for a whole request head, from its first byte", \.server.timeouts.headerSeconds),
            .seconds("--body-timeout", "longest gap between body bytes", \.server.timeouts.bodyIdleSeconds),
            .seconds(
                "--send-timeout", "longest time a response write makes no progress", \.server.timeouts.sendIdleSeconds),
            .seconds(
                "--keepalive-timeout", "longest wait for the next request on a kept-alive connection",
                \.server.timeouts.keepAliveIdleSeconds),
            .number(
                "--min-transfer-rate", "slowest a request may arrive, and a response leave once the socket is full, "
                    + "in bytes per second over 5 s windows (0: no floor)", \.minimumTransferRate),
            .switch(
                "--http2", "offer HTTP/2: ALPN h2 over TLS, prior knowledge on plain HTTP", \.server.http2.enabled),
            .number(
                "--max-concurrent-streams", "HTTP/2 streams one connection may have open at once",
                \.server.http2.maxConcurrentStreams, atLeast: 1),
            .limit(
                "--max-connections-per-ip", "connections one client (an IPv4 address, an IPv6 prefix) may hold open",
                \.server.maxConnectionsPerClient),
            .limit(
                "--post-rate-per-ip", "posts per second from one client (an IPv4 address, an IPv6 prefix; bursts of "
                    + "twice that); past it, 429", \.postsPerSecondPerClient),
            .number(
                "--ipv6-client-prefix", "bits of an IPv6 address that name one client for the two limits above "
                    + "(128: each address)", \.server.ipv6ClientPrefixLength,
                atLeast: ClientGroup.ipv6PrefixLengths.lowerBound, atMost: ClientGroup.ipv6PrefixLengths.upperBound),
            trustedProxies,
            .switch(
                "--trusted-proxy-terminates-tls", "on the TLS listener, believe a trusted proxy's X-Forwarded-For: "
                    + "it ends TLS and connects anew", \.server.trustedProxyTerminatesTLS,
                whenOff: "on TLS only a PROXY header names the client (a passthrough proxy cannot vouch for "
                    + "X-Forwarded-For)"),
        ]

    /// `--trusted-proxy`: addresses and CIDR ranges, comma-separated.
    static let trustedProxies = CommandOption<Self>(
        flag: "--trusted-proxy", placeholder: "LIST",
        help: "proxies (addresses or CIDR ranges, comma-separated) whose PROXY protocol header or X-Forwarded-For "
            + "(plain HTTP; TLS with --trusted-proxy-terminates-tls) names the client",
        shownDefault: { _ in "default: none; every peer is the client" }
    ) { options, cursor throws(UsageError) in
        let text = try cursor.value(for: "--trusted-proxy")
        var ranges: [AddressRange] = []
        for item in text.split(separator: ",").map({ String($0).trimmingCharacters(in: .whitespaces) }) {
            guard let range = AddressRange(item) else {
                throw UsageError(description: "--trusted-proxy takes addresses or CIDR ranges, not \(item)")
            }
            ranges.append(range)
        }
        options.server.trustedProxies = ranges
    }
}

/// Options of `chatterd migrate`.
struct MigrateOptions: CommandOptions {
    var databaseURL: String?
    var directDatabaseURL: String?
    var migrationsDirectory = "./migrations"
    var log = LogOptions()

    static let command = "migrate"
    static let summary = "apply pending migrations and exit"
    static let options: [CommandOption<Self>] = databaseOptions + logOptions
}
