/// How a request is to be answered, decided once per request by whoever routes it.
public enum ResponsePlan: Sendable {
    /// The response, made without blocking: the server sends it from the connection's I/O queue.
    case ready(HTTPResponse)
    /// Work started from the I/O queue that blocks nobody (a post the store writes on its own thread, a read that
    /// suspends while it waits for the database): it is given a function to call, once and from any thread, with
    /// the response.
    case deferred(@Sendable (_ respond: @escaping @Sendable (HTTPResponse) -> Void) -> Void)
}
