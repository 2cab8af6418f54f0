import HTTPCore

/// What every connection of one server shares.
struct ConnectionEnvironment: Sendable {
    let configuration: ServerConfiguration
    let handler: HTTPHandler
    let statistics: ServerStatistics
    /// Connections open per client address, for the per-client limit.
    let clients: ClientConnections
    /// Starts every request id this server makes (see `RequestID`).
    let requestIDPrefix: String
    /// Called once, on the connection's queue, after its socket is closed.
    let onClose: @Sendable (Connection) -> Void
}
