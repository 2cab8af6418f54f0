import ChangeLog
import ChattAPI
import ChattFeed
import ChattModel
import ChattStore
import ChattStream
import CMalloc
import Dispatch
import Foundation
import HTTPServer
import Locking
import Syscalls
import Logging

/// Entry point: parses the command line and runs the command.

public enum Chatterd {
    public static func main() {
        let command: Command
        do {
            command = try Command.parse(
                Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
        } catch {
            // No logger yet, and this is for whoever typed the command: plain text.
            FileHandle.standardError.write(Data("chatterd: \(error)\n\n\(usage)\n".utf8))
            exit(64)
        }
        switch command {
        case .help: print(usage)
        case .version: print("chatterd \(chatterdVersion)")
        case .migrate(let options): migrate(options)
        case .serve(let options): serve(options)
        }
    }

    /// The change log's flights start at least this far apart: at most a hundred ticks a second, for at most this
    /// much more wait for a read after a post under load (`FlightSpacing`).
    static let logFlightSpacing = Duration.milliseconds(10)

    static func makeLogger(_ options: LogOptions) -> Logger {
        Logger(level: options.level, format: options.format, writer: LogWriter())
    }

    static func migrate(_ options: MigrateOptions) {
        let logger = makeLogger(options.log)
        do {
            let applied = try Migrator.migrate(conninfo: options.directConninfo, directory: options.migrationsDirectory)
            let versions = applied.joined(separator: ",")
            logger.log(.info, "migrated", ["applied": .integer(applied.count), "versions": "\(versions)"])
        } catch {
            fail(logger, "migration failed: \(String(reflecting: error))", status: 1)
        }
        logger.writer.flush()
    }

    static func serve(_ options: ServeOptions) {
        // glibc gives threads malloc arenas of their own (up to 8 per core), and freed feed buffers linger in them.
        // Feeds are made and sent on Dispatch's worker threads, the connections' queues and the store's loop; two
        // arenas (one per core) keep those threads from each holding freed feeds of their own, for the cost of
        // some lock contention in malloc (measured when a pool of handler threads, since gone, read the feeds:
        // peak memory nearly halved; bench/RESULTS.md, "malloc arenas").
        mallopt(M_ARENA_MAX, 2)
        // A full read of the store makes a feed's bytes anew (its first segment, then its gzip output), and
        // merging segments makes buffers of up to 4 MiB. Left to itself glibc raises its mmap threshold past the
        // size of the first big buffer freed, and then serves the next ones from an arena that keeps the freed ones
        // resident, several feeds' worth. Fixed at 4 MiB (above any other buffer chatterd makes), big buffers are
        // mapped and unmapped, and RSS holds the feed about once (measured before segments: bench/RESULTS.md,
        // "mmap threshold").
        mallopt(M_MMAP_THRESHOLD, 4 << 20)
        let logger = makeLogger(options.log)
        let pool = PGConnectionPool(
            conninfo: options.pooledConninfo, size: options.poolSize, preparesStatements: !options.poolMayBeAPooler)
        // The certificate and key are checked first: a configuration error should not wait on the database.
        let repository = PostgresChattRepository(pool: pool)
        let log = ChangeLog(repository: repository, spacing: logFlightSpacing, bigReadEnded: returnFreedMemory)
        // The streams follow the log first: their work is moments, while the feeds may read the store in full.
        let streams = makeStreamHub(options, log: log, repository: repository)
        let feed = ChattFeed(
            repository: repository, log: log, strict: options.strictFeeds,
            staleIfError: .seconds(options.staleIfErrorSeconds), fullReadEnded: returnFreedMemory)
        let adminTokens = loadAdminTokens(options, logger: logger)
        var moderators: (@Sendable () -> AdminTokens)?
        if let adminTokens { moderators = { adminTokens.current } }
        let server = makeServer(
            options, feed: feed, streams: streams, moderators: moderators, poolStats: { pool.stats }, logger: logger)
        do {
            // Not through the pool: its URL may be a transaction-mode pooler, which cannot hold the migration lock.
            let applied = try Migrator.migrate(conninfo: options.directConninfo, directory: options.migrationsDirectory)
            if !applied.isEmpty { logger.log(.info, "migrated", ["versions": "\(applied.joined(separator: ","))"]) }
        } catch {
            fail(logger, "migration failed: \(String(reflecting: error))", status: 1)
        }
        warnIfPoolerRefusesOptions(options.pooledConninfo, logger: logger)
        // Started after the migrations, which create the trigger it listens to.
        let stopping = Locked(false)
        let listener = makeChangeListener(
            options, pool: pool, origin: repository.origin, log: log, feed: feed, logger: logger, stopping: stopping)
        listener.start()
        // Reads where the store stands now, so that the streams hold its last chatts before the first client comes.
        log.check()
        let streamTicks = startTicking(streams)
        let retention = options.retentionDays.map { days in
            Retention(repository: repository, days: days, logger: logger).start()
        }
        let port: UInt16
        do {
            port = try server.start()
        } catch {
            fail(logger, listenFailure(options, error), status: 1)
        }
        logger.log(.info, "listening", [
            "host": "\(options.server.host)", "port": .integer(Int(port)), "tls": .boolean(!options.plainHTTP),
            "reuse_port": .boolean(options.server.reusePort),
            "database": "\(ConninfoRedaction.redacted(options.pooledConninfo))",
            "direct_database": "\(ConninfoRedaction.redacted(options.directConninfo))",
        ])
        let certificates = CertificateWatch(server: server, logger: logger)
        certificates.start()
        let signals = SignalWatcher(logger: logger, onReload: {
            certificates.reload()
            adminTokens?.reload(logger: logger)
        }) {
            server.shutdown(deadlineSeconds: options.drainSeconds) {
                stopping.withLock { $0 = true }
                listener.stop()
                pool.close()
                logger.log(.info, "stopped")
                logger.writer.flush()
                exit(0)
            }
        }
        withExtendedLifetime((signals, certificates, streamTicks, retention)) { dispatchMain() }
    }

    /// The moderators' token file, when one is configured; exits if it cannot be used.
    static func loadAdminTokens(_ options: ServeOptions, logger: Logger) -> AdminTokenFile? {
        guard let path = options.adminTokenFile else { return nil }
        do {
            return try AdminTokenFile(path: path)
        } catch {
            fail(logger, "admin token file: \(error)", status: 1)
        }
    }

    /// Says once, at start-up, when the pool's server is a pooler that refuses chatterd's `options` (PgBouncer's stock
    /// configuration): chatterd then connects without them, so its server-side timeouts must come from the role.
    static func warnIfPoolerRefusesOptions(_ conninfo: String, logger: Logger) {
        guard ServerOptionsCheck.probe(conninfo: conninfo) == .refusedByPooler else { return }
        logger.log(.warn, "pooler_refuses_options", [
            "effect": "--database-url connections go without statement_timeout and idle_in_transaction_session_timeout",
            "advice": .text("ALTER ROLE <chatterd's role> SET statement_timeout = '5s'; "
                + "ALTER ROLE <chatterd's role> SET idle_in_transaction_session_timeout = '10s'"),
        ])
    }

    /// After a full read the version it replaces is freed, once its last reader is done, in blocks too small to
    /// be unmapped: malloc keeps them in its heaps, and RSS would hold two feeds after another writer's bulk
    /// insert. A moment later (by when readers of the old version have usually finished), they go back to the
    /// system (bench/RESULTS.md, "One way through the store"). The same after the change log took in a big
    /// stretch (48 000 rows of pgbench: 8 MB kept until trimmed; bench/RESULTS.md, "Change log by snapshot ticks").
    @Sendable static func returnFreedMemory() {
        DispatchQueue.global().asyncAfter(deadline: .now() + 1) { _ = malloc_trim(0) }
    }

    /// Tells the change log of changes made by anyone else: ticks other chatterd processes made (read them), and any
    /// other writer's commits, an operator's psql's (tick and read them); this process's own commits reach it from
    /// the repository, and its own ticks (`origin`) are left out. Each health check of the listener is the log's
    /// fallback check too. While the listener is not listening, or always with `--strict-feeds`, every feed read
    /// has the log catch up with the store instead. A lost connection is a warning; the listener stopping because
    /// the server is (`stopping`) is not.
    static func makeChangeListener(
        _ options: ServeOptions, pool: PGConnectionPool, origin: String, log: ChangeLog, feed: ChattFeed,
        logger: Logger, stopping: Locked<Bool>
    ) -> ChattChangeListener {
        ChattChangeListener(
            // LISTEN needs a session of its own: through a transaction-mode pooler it would listen on whichever
            // server connection ran it, and notifications would go to someone else.
            conninfo: options.directConninfo, origin: origin, sharingLoopOf: pool,
            onChange: { change in
                if case .ticked = change { log.ticked() } else { log.noticed() }
            },
            onCheck: { log.check() },
            onListening: { listening in
                feed.listening(listening)
                // Notices may have been missed while it was not listening.
                log.noticed()
                if listening {
                    logger.log(.info, "change_listener_up")
                } else if !stopping.withLock({ $0 }) {
                    logger.log(.warn, "change_listener_down")
                }
            })
    }

    /// Why the listener could not start, with the way out when the port is taken.
    static func listenFailure(_ options: ServeOptions, _ error: any Error) -> String {
        var message = "cannot listen on \(options.server.host):\(options.server.port): \(error)"
        if let socketError = error as? SyscallError, socketError.errno == EADDRINUSE {
            message += options.server.reusePort
                ? " (the process holding it does not use --reuse-port, or runs as another user)"
                : " (another process holds it; to share one port, start every chatterd with --reuse-port)"
        }
        return message
    }

    /// Logs `message` as the reason the process stops, writes out the log, and exits with `status`.
    static func fail(_ logger: Logger, _ message: String, status: Int32) -> Never {
        logger.log(.error, "fatal", ["cause": "\(message)"])
        logger.writer.flush()
        exit(status)
    }
}
