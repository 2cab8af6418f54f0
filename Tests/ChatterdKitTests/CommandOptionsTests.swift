@testable import ChatterdKit
import HTTPServer
import Testing
import TestSupport

@Suite struct CommandOptionsTests {
    private func serve(_ arguments: [String] = [], _ environment: [String: String] = [:]) throws -> ServeOptions {
        try ServeOptions(arguments: arguments, environment: environment)
    }

    private func usageError(_ arguments: [String] = [], _ environment: [String: String] = [:]) -> String? {
        do {
            _ = try ServeOptions(arguments: arguments, environment: environment)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func variableNamesFollowTheFlag() {
        #expect(ServeOptions.variable(for: "--port") == "CHATTERD_PORT")
        #expect(ServeOptions.variable(for: "--max-requests-per-connection") == "CHATTERD_MAX_REQUESTS_PER_CONNECTION")
    }

    @Test func everyServeFlagHasAVariableThatSetsIt() throws {
        let environment = [
            "CHATTERD_HOST": "127.0.0.2", "CHATTERD_PORT": "8444", "CHATTERD_CERT": "/c.crt", "CHATTERD_KEY": "/c.key",
            "CHATTERD_PLAIN_HTTP": "yes", "CHATTERD_REUSE_PORT": "1", "CHATTERD_DATABASE_URL": "dbname=x",
            "CHATTERD_DIRECT_DATABASE_URL": "dbname=x port=5433",
            "CHATTERD_MIGRATIONS": "/m", "CHATTERD_POOL_SIZE": "3", "CHATTERD_DRAIN_TIMEOUT": "2.5",
            "CHATTERD_LOG_FORMAT": "json", "CHATTERD_LOG_LEVEL": "warn", "CHATTERD_MAX_CONNECTIONS": "7",
            "CHATTERD_MAX_REQUESTS_PER_CONNECTION": "9", "CHATTERD_MAX_REQUEST_LINE_BYTES": "100",
            "CHATTERD_MAX_HEADER_BYTES": "200", "CHATTERD_MAX_HEADER_COUNT": "11", "CHATTERD_MAX_BODY_BYTES": "12",
            "CHATTERD_HANDSHAKE_TIMEOUT": "1", "CHATTERD_HEADER_TIMEOUT": "2", "CHATTERD_BODY_TIMEOUT": "3",
            "CHATTERD_SEND_TIMEOUT": "4", "CHATTERD_KEEPALIVE_TIMEOUT": "5", "CHATTERD_STRICT_FEEDS": "yes",
            "CHATTERD_MIN_TRANSFER_RATE": "64", "CHATTERD_HTTP2": "no", "CHATTERD_MAX_CONCURRENT_STREAMS": "13",
            "CHATTERD_MAX_CONNECTIONS_PER_IP": "14", "CHATTERD_POST_RATE_PER_IP": "15",
            "CHATTERD_TRUSTED_PROXY": "10.0.0.0/8, ::1", "CHATTERD_STALE_IF_ERROR": "16",
            "CHATTERD_IPV6_CLIENT_PREFIX": "56", "CHATTERD_TRUSTED_PROXY_TERMINATES_TLS": "yes",
            "CHATTERD_LEAFLET_DIR": "/l", "CHATTERD_STREAM_HEARTBEAT": "2.5", "CHATTERD_STREAM_MAX_UNSENT_BYTES": "8192",
            "CHATTERD_ADMIN_TOKEN_FILE": "/tokens", "CHATTERD_RETENTION_DAYS": "30", "CHATTERD_BBOX_IN_DATABASE": "yes",
        ]
        #expect(Set(environment.keys) == Set(ServeOptions.flagNames.map(ServeOptions.variable(for:))))
        let options = try serve([], environment)
        #expect(options.server.host == "127.0.0.2" && options.server.port == 8444)
        #expect(options.certificatePath == "/c.crt" && options.keyPath == "/c.key")
        #expect(options.plainHTTP && options.server.reusePort)
        #expect(options.databaseURL == "dbname=x" && options.migrationsDirectory == "/m")
        #expect(options.directDatabaseURL == "dbname=x port=5433")
        #expect(options.poolSize == 3 && options.drainSeconds == 2.5 && options.strictFeeds)
        #expect(options.staleIfErrorSeconds == 16 && options.adminTokenFile == "/tokens")
        #expect(options.retentionDays == 30 && options.bboxInDatabase)
        #expect(options.log.format == .json && options.log.level == .warn)
        #expect(options.server.maxConnections == 7 && options.server.maxRequestsPerConnection == 9)
        #expect(options.server.limits.maxRequestLineBytes == 100 && options.server.limits.maxHeaderBytes == 200)
        #expect(options.server.limits.maxHeaderCount == 11 && options.server.limits.maxBodyBytes == 12)
        let timeouts = options.server.timeouts
        #expect(timeouts.handshakeSeconds == 1 && timeouts.headerSeconds == 2 && timeouts.bodyIdleSeconds == 3)
        #expect(timeouts.sendIdleSeconds == 4 && timeouts.keepAliveIdleSeconds == 5)
        #expect(options.serverConfiguration.timeouts.minimumBytesPerSecond == 64)
        #expect(!options.server.http2.enabled && options.server.http2.maxConcurrentStreams == 13)
        #expect(options.server.maxConnectionsPerClient == 14 && options.postsPerSecondPerClient == 15)
        #expect(options.server.trustedProxies.map(\.description) == ["10.0.0.0/8", "::1"])
        #expect(options.server.ipv6ClientPrefixLength == 56 && options.server.trustedProxyTerminatesTLS)
        #expect(options.leafletDirectory == "/l")
        #expect(options.streamHeartbeatSeconds == 2.5 && options.streamMaxUnsentBytes == 8192)
    }

    @Test func limitsAreOffAndHTTP2IsOnUnlessAsked() throws {
        let options = try serve()
        #expect(options.server.http2.enabled && options.server.trustedProxies.isEmpty)
        #expect(options.server.maxConnectionsPerClient == nil && options.postsPerSecondPerClient == nil)
        #expect(!options.bboxInDatabase)
        #expect(try serve(["--bbox-in-database"]).bboxInDatabase)
        #expect(try serve(["--http2=no"]).server.http2.enabled == false)
        #expect(usageError(["--trusted-proxy", "10.0.0.0/8,nonsense"])?.contains("nonsense") == true)
        #expect(usageError(["--max-connections-per-ip", "0"]) != nil)
    }

    @Test func ipv6ClientsAreCountedPerSlash64UnlessAsked() throws {
        let options = try serve()
        #expect(options.server.ipv6ClientPrefixLength == 64)
        #expect(try serve(["--ipv6-client-prefix", "128"]).server.ipv6ClientPrefixLength == 128)
        #expect(try serve(["--ipv6-client-prefix=1"]).server.ipv6ClientPrefixLength == 1)
        for bad in ["0", "129", "-1", "64.5", "/64"] {
            #expect(usageError(["--ipv6-client-prefix", bad])
                == "--ipv6-client-prefix needs a whole number from 1 to 128, not \(bad)")
        }
    }

    @Test func forwardedForOnTLSIsBelievedOnlyWhenTheProxyIsSaidToTerminateTLS() throws {
        #expect(try !serve().server.trustedProxyTerminatesTLS)
        #expect(try serve(["--trusted-proxy-terminates-tls"]).server.trustedProxyTerminatesTLS)
        #expect(try serve(["--trusted-proxy-terminates-tls=no"]).server.trustedProxyTerminatesTLS == false)
    }

    @Test func aFlagWinsOverItsVariable() throws {
        let environment = ["CHATTERD_PORT": "1111", "CHATTERD_LOG_LEVEL": "error", "CHATTERD_HOST": "::"]
        let options = try serve(["--port", "2222", "--log-level=debug"], environment)
        #expect(options.server.port == 2222)
        #expect(options.log.level == .debug)
        #expect(options.server.host == "::")
    }

    @Test func anInvalidVariableFailsEvenWhenItsFlagIsGiven() throws {
        // The variable is read first, so an invalid one still fails: a typo in an environment file is not hidden.
        #expect(usageError(["--port", "2222"], ["CHATTERD_PORT": "http"])?.contains("CHATTERD_PORT") == true)
    }

    @Test(arguments: [
        ("1", true), ("true", true), ("yes", true), ("TRUE", true), ("Yes", true),
        ("0", false), ("false", false), ("no", false), ("NO", false),
    ])
    func switchVariablesTakeTheUsualWords(text: String, expected: Bool) throws {
        let options = try serve([], ["CHATTERD_PLAIN_HTTP": text, "CHATTERD_REUSE_PORT": text])
        #expect(options.plainHTTP == expected && options.server.reusePort == expected)
    }

    @Test(arguments: ["2", "on", "y", "enabled", " true"])
    func otherSwitchValuesAreAStartupErrorNamingTheVariable(text: String) {
        let message = usageError([], ["CHATTERD_REUSE_PORT": text])
        #expect(message?.contains("CHATTERD_REUSE_PORT") == true, "\(message ?? "accepted")")
        #expect(message?.contains("1, true, yes, 0, false or no") == true)
    }

    @Test func switchFlagsAcceptAnExplicitValue() throws {
        #expect(try serve(["--plain-http=no"], ["CHATTERD_PLAIN_HTTP": "yes"]).plainHTTP == false)
        #expect(try serve(["--reuse-port"]).server.reusePort)
        #expect(try serve(["--strict-feeds"]).strictFeeds && !(try serve([]).strictFeeds))
        #expect(usageError(["--reuse-port=maybe"])?.contains("--reuse-port") == true)
    }

    // Regression: `--plain-http=1 --port 80` used to hand "1" to --port and then reject "80" as an option.
    @Test func aSwitchWithAnEqualsValueDoesNotLeakIntoTheNextFlag() throws {
        let options = try serve(["--plain-http=1", "--port", "80"])
        #expect(options.plainHTTP && options.server.port == 80)
    }

    @Test func invalidValuesNameTheVariable() {
        #expect(usageError([], ["CHATTERD_POOL_SIZE": "0"])
            == "CHATTERD_POOL_SIZE: --pool-size needs a whole number of at least 1, not 0")
        #expect(usageError([], ["CHATTERD_LOG_FORMAT": "xml"])
            == "CHATTERD_LOG_FORMAT: --log-format takes one of logfmt, json, not xml")
        #expect(usageError([], ["CHATTERD_DRAIN_TIMEOUT": "-1"])?.hasPrefix("CHATTERD_DRAIN_TIMEOUT:") == true)
    }

    @Test func emptyVariablesAreUnset() throws {
        let options = try serve([], ["CHATTERD_PORT": "", "CHATTERD_PLAIN_HTTP": "", "CHATTERD_DATABASE_URL": ""])
        #expect(options.server.port == 443 && !options.plainHTTP && options.databaseURL == nil)
    }

    @Test func unrelatedVariablesAreIgnored() throws {
        let options = try serve([], ["CHATTERD_TEST_DATABASE_URL": "x", "CHATTERD_BUILD_DIR": "y", "PORT": "1"])
        #expect(options.server.port == 443 && options.databaseURL == nil)
    }

    @Test func theDatabaseURLFallsBackFromFlagToVariableToDATABASE_URL() throws {
        let both = ["CHATTERD_DATABASE_URL": "dbname=ours", "DATABASE_URL": "dbname=generic"]
        #expect(try serve(["--database-url", "dbname=flag"], both).databaseURL == "dbname=flag")
        #expect(try serve([], both).databaseURL == "dbname=ours")
        #expect(try serve([], ["DATABASE_URL": "dbname=generic"]).databaseURL == "dbname=generic")
        #expect(try serve([], [:]).databaseURL == nil)
    }

    @Test func migrateTakesTheDatabaseMigrationsAndLogVariables() throws {
        let environment = ["CHATTERD_DATABASE_URL": "dbname=m", "CHATTERD_MIGRATIONS": "/mig",
                           "CHATTERD_LOG_FORMAT": "json", "CHATTERD_PORT": "not-a-port"]
        guard case .migrate(let options) = try Command.parse(["migrate"], environment: environment) else {
            Issue.record("not a migrate command")
            return
        }
        #expect(options.databaseURL == "dbname=m" && options.migrationsDirectory == "/mig")
        #expect(options.log.format == .json)
    }

    @Test func theDirectDatabaseURLDefaultsToTheDatabaseURL() throws {
        let pooled = try serve(["--database-url", "host=pgbouncer port=6432"])
        #expect(pooled.pooledConninfo == "host=pgbouncer port=6432")
        #expect(pooled.directConninfo == "host=pgbouncer port=6432")
        #expect(!pooled.poolMayBeAPooler, "one URL is a direct session: named prepared statements stay")
        let split = try serve(["--direct-database-url", "host=db"], ["DATABASE_URL": "host=pgbouncer"])
        #expect(split.pooledConninfo == "host=pgbouncer" && split.directConninfo == "host=db")
        #expect(split.poolMayBeAPooler)
        let neither = try serve()
        #expect(neither.pooledConninfo == "" && neither.directConninfo == "")
    }

    @Test func migrateUsesTheDirectDatabaseURLWhenGiven() throws {
        let environment = ["CHATTERD_DATABASE_URL": "host=pgbouncer", "CHATTERD_DIRECT_DATABASE_URL": "host=db"]
        guard case .migrate(let options) = try Command.parse(["migrate"], environment: environment) else {
            Issue.record("not a migrate command")
            return
        }
        #expect(options.directConninfo == "host=db")
        guard case .migrate(let plain) = try Command.parse(["migrate", "--database-url", "host=db2"], environment: [:])
        else {
            Issue.record("not a migrate command")
            return
        }
        #expect(plain.directConninfo == "host=db2")
    }

    @Test func unknownFlagsAreRefused() {
        #expect(usageError(["--colour"]) == "unknown option for serve: --colour")
        #expect(throws: UsageError.self) { try Command.parse(["migrate", "--port", "1"], environment: [:]) }
    }

    @Test func helpListsEveryFlagWithItsVariable() {
        for flag in ServeOptions.flagNames {
            #expect(usage.contains(flag + " ") || usage.contains(flag + "\n"), "\(flag) missing from --help")
            #expect(usage.contains(ServeOptions.variable(for: flag)), "\(flag)'s variable missing from --help")
        }
    }
}
