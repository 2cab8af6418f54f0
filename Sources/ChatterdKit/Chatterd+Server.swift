import ChattAPI
import ChattFeed
import ChattModel
import ChattStore
import ChattStream
import HTTPServer
import Logging

extension Chatterd {
    /// The server with chatterd's routes, metrics and logging over `feed` and its `streams` (tests give it a
    /// repository in memory, and may leave the streams out); exits if the certificate or key is unusable.
    /// `poolStats` feeds the pool gauges of `/metrics`; `moderators` gives the tokens in force for removals.
    static func makeServer(
        _ options: ServeOptions, feed: ChattFeed, streams: ChattStreamHub? = nil,
        moderators: (@Sendable () -> AdminTokens)? = nil,
        poolStats: @escaping @Sendable () -> PGConnectionPool.Stats, logger: Logger
    ) -> Server {
        let metrics = RequestMetrics()
        let statistics = ServerStatistics()
        let observer = RequestObserver(metrics: metrics, logger: logger)
        let router = ChattRouter(feed: feed, metrics: {
            metrics.render(MetricsGauges(
                openConnections: statistics.openConnections, http2: HTTP2Gauges(statistics),
                certificateNotAfter: statistics.certificateNotAfter,
                connectionsRefused: statistics.connectionsRefused, connectionsShed: statistics.connectionsShed,
                connectionsClosed: statistics.connectionsClosed, pool: poolStats(),
                logLinesDropped: logger.writer.droppedLines, cache: feed.counts,
                changeLog: (feed.fullReads, feed.log.starts), streamSubscribers: streams?.subscriberCount))
        }, postLimit: options.postsPerSecondPerClient.map { rate in
            PostRateLimiter(postsPerSecond: Double(rate), burst: 2 * rate)
        }, mapPage: makeMapPage(options, logger: logger), staleFeedServed: { observer.staleFeedServed($1, for: $0) },
            streams: streams, moderators: moderators, boxSearch: options.bboxInDatabase ? boxSearch(feed) : nil)
        let handler = HTTPHandler(plan: { router.plan(for: $0) }, observe: { observer.observe($0) })
        do {
            return try Server(
                configuration: options.serverConfiguration, handler: handler, logger: logger, statistics: statistics)
        } catch {
            fail(logger, "\(error)", status: 1)
        }
    }

    /// `--bbox-in-database`: boxes asked of PostGIS through the PostgreSQL store (none in memory, for tests).
    static func boxSearch(_ feed: ChattFeed) -> StoreBoxSearch? {
        guard let store = feed.repository as? PostgresChattRepository else { return nil }
        return { box, limit, newest, deadline in
            do throws(RepositoryError) {
                return .success(try await store.idsInBox(
                    west: box.west, south: box.south, east: box.east, north: box.north, limit: limit, newest: newest,
                    before: deadline))
            } catch {
                return .failure(error)
            }
        }
    }

    /// `/map` with Leaflet from `--leaflet-dir`; without it, a warning and a page that answers 503, and the rest of
    /// the server as usual.
    static func makeMapPage(_ options: ServeOptions, logger: Logger) -> MapPage {
        let leaflet = LeafletFiles(directory: options.leafletDirectory)
        if !leaflet.missingRequired.isEmpty {
            logger.log(.warn, "map_unavailable", [
                "leaflet_dir": "\(options.leafletDirectory)",
                "missing": "\(leaflet.missingRequired.joined(separator: ","))",
                "advice": "install the Debian package \(MapPage.leafletPackage) or set --leaflet-dir; /map answers 503",
            ])
        }
        return MapPage(leaflet: leaflet.files)
    }
}
