import ChattAPI
import ChattStore
import HTTPServer

extension Chatterd {
    /// The server with chatterd's routes, metrics and logging; exits if the certificate or key is unusable.
    static func makeServer(
        _ options: ServeOptions, pool: PGConnectionPool, feedCache: ChattFeedCache, logger: Logger
    ) -> Server {
        makeServer(
            options, repository: PostgresChattRepository(pool: pool), poolStats: { pool.stats },
            feedCache: feedCache, logger: logger)
    }

    /// The same over any repository (tests use one in memory); `poolStats` feeds the pool gauges of `/metrics`.
    static func makeServer(
        _ options: ServeOptions, repository base: any ChattRepository,
        poolStats: @escaping @Sendable () -> PGConnectionPool.Stats, feedCache: ChattFeedCache = ChattFeedCache(),
        logger: Logger
    ) -> Server {
        let faults = FaultLedger()
        let repository = FaultRecordingRepository(base: base, ledger: faults)
        let metrics = RequestMetrics()
        let serverBox = ServerReference()
        let router = ChattRouter(repository: repository, metrics: {
            metrics.render(MetricsGauges(
                openConnections: serverBox.server?.openConnectionCount ?? 0, pool: poolStats(),
                logLinesDropped: logger.writer.droppedLines,
                cache: feedCache.counts))
        }, feedCache: feedCache)
        let observer = RequestObserver(metrics: metrics, logger: logger, faults: faults)
        let handler = HTTPHandler(
            respond: { request in
                let response = router.respond(to: request)
                if response.status.code >= 400 {
                    faults.claim(for: request.headers["X-Request-Id"] ?? "", status: response.status.code)
                }
                return response
            },
            respondImmediately: { router.respondImmediately(to: $0) },
            observe: { observer.observe($0) })
        do {
            let server = try Server(configuration: options.serverConfiguration, handler: handler) { event, fields in
                guard var line = logger.line(.warn, event) else { return }
                for (key, value) in fields { line.string(key, value) }
                logger.emit(&line)
            }
            serverBox.server = server
            return server
        } catch {
            fail(logger, "\(error)", status: 1)
        }
    }
}

/// Lets the metrics closure reach the server created after it.
private final class ServerReference: @unchecked Sendable {  // set once before the server starts
    var server: Server?
}
