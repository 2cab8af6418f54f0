/// A response body made while the response lasts (server-sent events): the connection pulls it as its output
/// drains, and waits to be woken when nothing is ready. The stream gives whole events only, so whatever the
/// connection has pulled can end cleanly at any moment (the server draining).
public protocol ResponseBodyStream: AnyObject, Sendable {
    /// Starts the stream. `wake` is called, from any thread, when `next` has something after it answered `.idle`,
    /// or when the stream has been cut; more calls than needed are harmless. Called once, before any `next`, on
    /// the connection's queue.
    func open(wake: @escaping @Sendable () -> Void)
    /// What is ready now: whole events of about `limit` bytes at most (one at least, when `limit` is positive),
    /// `.idle` when there is nothing (then `wake` comes), `.ended` once the stream is over, `.cut` when the client
    /// fell too far behind. Called on the connection's queue.
    func next(limit: Int) -> StreamPull
    /// The connection is done with it (closed, the stream reset, the server draining): nothing more is pulled.
    func close()
}

/// What a pull from a `ResponseBodyStream` gave.
public enum StreamPull: Sendable, Equatable {
    case bytes(HTTPBody)
    /// Nothing now: wait for the stream's wake.
    case idle
    /// The stream is over: end the response cleanly.
    case ended
    /// The client fell too far behind: end the response abruptly.
    case cut
}
