import HTTPCore

/// How a connection ends, once a machine decides it does.
enum ConnectionEnding: Equatable {
    /// Half-close our side and read and drop input until the client closes or the linger deadline (RFC 9112
    /// §9.6), then close for this reason: closing with the client's bytes unread would reset the connection, and
    /// the client could lose the last response.
    case linger(CloseReason)
    case close(CloseReason)
}

/// What an input calls for, from a connection's machine to its driver or from the driver to the connection: work
/// of the machine's own kind, an earlier deadline, an ending. At most one of each, so it needs no allocation.
struct ConnectionStep<Work: Equatable>: Equatable {
    var work: Work?
    /// Fire the timer at this instant (earlier than whatever it was armed for).
    var armTimer: Instant?
    var ending: ConnectionEnding?

    /// This step as its connection takes it, once the driver has done the work.
    var withoutWork: DriverStep { DriverStep(armTimer: armTimer, ending: ending) }
}

extension ConnectionStep: Sendable where Work: Sendable {}

/// What a connection does once its driver has taken in an event. Whatever is to be written is already in the
/// output buffer the driver was handed, and requests to answer are taken with `nextRequest()`; so this is all.
typealias DriverStep = ConnectionStep<Never>

extension ConnectionStep where Work == Never {
    /// Adds what a later input called for: the earlier deadline, and the first ending.
    mutating func merge(_ later: DriverStep) {
        if let deadline = later.armTimer { armTimer = min(armTimer ?? deadline, deadline) }
        if ending == nil { ending = later.ending }
    }
}

/// What writing a connection's output came to.
enum WriteOutcome: Equatable {
    /// Everything queued is written; `written` bytes went out in this flush.
    case drained(written: Int)
    /// The socket is full after `written` bytes; the connection writes again once it is writable.
    case blocked(written: Int)
    /// The connection must close.
    case failed
}

/// A request a driver hands to its connection to answer, and how its answer finds its way back.
struct RequestTicket: Hashable {
    /// The HTTP/2 stream; 0 for HTTP/1.1, which has one request in flight at a time.
    let stream: Int32
}

/// One application protocol (HTTP/1.1 or HTTP/2) on a connection whose transport is ready. Its connection is
/// its only caller: it hands the driver bytes, events and write outcomes, each with the instant it happened and
/// the output buffer to write into, and does what the returned step says. A driver never calls its connection.
protocol ProtocolDriver: AnyObject {
    /// Whether the connection should read now.
    var wantsInput: Bool { get }
    /// Whether input is to be read and dropped (the connection is lingering).
    var isLingering: Bool { get }
    func start(at now: Instant, output: inout OutputBuffer) -> DriverStep
    func received(_ bytes: UnsafeRawBufferPointer, at now: Instant, output: inout OutputBuffer) -> DriverStep
    func peerClosed(at now: Instant) -> DriverStep
    func wrote(_ outcome: WriteOutcome, at now: Instant, output: inout OutputBuffer) -> DriverStep
    func timerFired(at now: Instant, output: inout OutputBuffer) -> DriverStep
    /// The server is shutting down.
    func drain(at now: Instant, output: inout OutputBuffer) -> DriverStep
    /// The response to a request `nextRequest` handed out.
    func answered(
        _ response: HTTPResponse, for ticket: RequestTicket, at now: Instant, output: inout OutputBuffer
    ) -> DriverStep
    /// A response's body stream has something new (see `ResponseBodyStream.open`).
    func streamWoke(at now: Instant, output: inout OutputBuffer) -> DriverStep
    /// The connection closed: body streams are let go of.
    func closed()
    /// The next request to answer, if any; the connection takes them until none is left.
    func nextRequest(at now: Instant) -> (HTTPRequest, RequestTicket)?
    /// Whether the connection may be shed at the connection cap, and how it stands.
    func standing(at now: Instant) -> ConnectionStanding?
}
