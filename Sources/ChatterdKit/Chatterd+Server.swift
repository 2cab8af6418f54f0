import ChattAPI
import ChattFeed
import ChattModel
import ChattStore
import HTTPServer
import Logging

extension Chatterd {
    /// The server with chatterd's routes, metrics and logging over `repository` (tests use one in memory); exits if
    /// the certificate or key is unusable. `poolStats` feeds the pool gauges of `/metrics`.
    static func makeServer(
        _ options: ServeOptions, repository: any ChattRepository,
        poolStats: @escaping @Sendable () -> PGConnectionPool.Stats, feedCache: ChattFeedCache = ChattFeedCache(),
        logger: Logger
    ) -> Server {
        let metrics = RequestMetrics()
        let statistics = ServerStatistics()
        let router = ChattRouter(repository: repository, metrics: {
            metrics.render(MetricsGauges(
                openConnections: statistics.openConnections, http2: HTTP2Gauges(statistics),
                certificateNotAfter: statistics.certificateNotAfter,
                connectionsRefused: statistics.connectionsRefused, connectionsShed: statistics.connectionsShed,
                connectionsClosed: statistics.connectionsClosed, pool: poolStats(),
                logLinesDropped: logger.writer.droppedLines, cache: feedCache.counts))
        }, feedCache: feedCache, postLimit: options.postsPerSecondPerClient.map { rate in
            PostRateLimiter(postsPerSecond: Double(rate), burst: 2 * rate)
        }, staleIfError: options.strictFeeds ? 0 : Double(options.staleIfErrorSeconds))
        let observer = RequestObserver(metrics: metrics, logger: logger)
        let handler = HTTPHandler(plan: { router.plan(for: $0) }, observe: { observer.observe($0) })
        do {
            return try Server(
                configuration: options.serverConfiguration, handler: handler, logger: logger, statistics: statistics)
        } catch {
            fail(logger, "\(error)", status: 1)
        }
    }
}
