import Dispatch
import HTTPCore
@testable import HTTPServer
import Locking

/// A connection's I/O without a socket: what the client "sent" is read from `input`, writes land in `written`
/// until `writeRoom` runs out (then the socket is full), and the timer only records what it was armed for.
final class FakeConnectionIO: ConnectionIO {
    /// Chunks the client has sent and the connection has not read yet.
    var input: [[UInt8]] = []
    /// Once `input` is read, whether reads find the client gone instead of nothing more yet.
    var peerClosed = false
    /// Bytes the socket still takes before it is full.
    var writeRoom = Int.max
    var proxyHeader = ProxyHeaderReader.Outcome.absent
    var handshakeResult = IOResult.done(0)
    var http2 = false
    private(set) var written: [UInt8] = []
    private(set) var armed: Instant?
    private(set) var outputShut = false
    private(set) var closed = false
    /// Whether it was closed with a reset.
    private(set) var aborted = false

    func readProxyHeader() -> ProxyHeaderReader.Outcome { proxyHeader }
    func handshake() -> IOResult { handshakeResult }
    var negotiatedHTTP2: Bool { http2 }
    var hasBufferedInput: Bool { false }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        guard !input.isEmpty else { return peerClosed ? .closed : .wantRead }
        let chunk = input.removeFirst()
        let count = min(chunk.count, buffer.count)
        buffer.copyBytes(from: chunk.prefix(count))
        if count < chunk.count { input.insert(Array(chunk[count...]), at: 0) }
        return .done(count)
    }

    func write(_ output: inout OutputBuffer) -> WriteOutcome {
        var total = 0
        while !output.isEmpty {
            guard writeRoom > 0 else { return .blocked(written: total) }
            _ = output.writeGathered { bytes in
                let count = min(bytes.count, writeRoom)
                written += bytes.prefix(count)
                writeRoom -= count
                total += count
                return .done(count)
            }
        }
        return .drained(written: total)
    }

    func discardInput() -> IOResult {
        input.removeAll()
        return peerClosed ? .closed : .wantRead
    }

    func arm(_ deadline: Instant) { armed = deadline }

    func shutdownOutput() -> Bool {
        outputShut = true
        return true
    }

    func close() { closed = true }

    func abort() {
        aborted = true
        closed = true
    }

    /// Takes what was written so far.
    func takeWritten() -> [UInt8] {
        defer { written.removeAll() }
        return written
    }
}

/// A `Connection` on a `FakeConnectionIO`, with a made-up clock and a handler the test controls: requests to
/// paths starting `/held` wait until the test answers them, everything else is answered at once with
/// `"<path>"`. Every call goes through the connection's queue, as the server's do.
final class FakePipeline: @unchecked Sendable {  // the connection and io are touched only on `queue`
    let io = FakeConnectionIO()
    let queue = DispatchQueue(label: "test.connection")
    let statistics = ServerStatistics()
    let now = Locked(Instant(nanoseconds: 1_000_000_000_000))
    let exchanges = Locked([HTTPExchange]())
    /// Held requests' answer functions, in the order they came.
    let held = Locked([(path: String, respond: @Sendable (HTTPResponse) -> Void)]())
    private(set) var connection: Connection!

    init(configure: (inout ServerConfiguration) -> Void = { _ in }) {
        var configuration = ServerConfiguration()
        configure(&configuration)
        let (held, exchanges, now) = (self.held, self.exchanges, self.now)
        let handler = HTTPHandler(
            plan: { request in
                guard request.path.hasPrefix("/held") else {
                    return .ready(.json(.ok, Array("\"\(request.path)\"".utf8)))
                }
                return .deferred { respond in held.withLock { $0.append((request.path, respond)) } }
            },
            observe: { exchange in exchanges.withLock { $0.append(exchange) } })
        let environment = ConnectionEnvironment(
            configuration: configuration, handler: handler, statistics: statistics,
            clients: ClientConnections(limit: nil), requestIDPrefix: "test", onClose: { _ in })
        connection = Connection(
            id: 1, io: io, queue: queue,
            peer: ClientAddress(ip: IPAddress("198.18.0.9")!, port: 4000), admitted: nil, environment: environment,
            locals: QueueLocals(), clock: { now.withLock { $0 } })
        queue.sync { connection.start() }
    }

    /// Seconds since the pipeline's origin, as the made-up clock reads them.
    static func at(_ seconds: Double) -> Instant { Instant(nanoseconds: 1_000_000_000_000) + seconds }

    /// The client sends `bytes` and the socket reports it.
    func send(_ bytes: [UInt8]) {
        queue.sync {
            io.input.append(bytes)
            connection.socketReadable()
        }
    }

    func send(_ text: String) { send(Array(text.utf8)) }

    /// The socket takes `room` more bytes and reports itself writable.
    func makeRoom(_ room: Int = .max) {
        queue.sync {
            io.writeRoom = room
            connection.socketWritable()
        }
    }

    /// The client closes its side.
    func closeClient() {
        queue.sync {
            io.peerClosed = true
            connection.socketReadable()
        }
    }

    /// The clock moves to `seconds` and the timer fires.
    func fireTimer(at seconds: Double) {
        now.withLock { $0 = Self.at(seconds) }
        queue.sync { connection.timerFired() }
    }

    func drain() { queue.sync { connection.beginDrain() } }

    /// Answers the oldest held request; the answer reaches the connection through its queue.
    func answerHeld(_ response: HTTPResponse = .json(.ok, Array("\"held\"".utf8))) {
        let respond = held.withLock { $0.removeFirst().respond }
        respond(response)
        queue.sync {}
    }

    func written() -> [UInt8] { queue.sync { io.takeWritten() } }

    var isClosed: Bool { queue.sync { io.closed } }
    var isAborted: Bool { queue.sync { io.aborted } }
    var isOutputShut: Bool { queue.sync { io.outputShut } }
    var armed: Instant? { queue.sync { io.armed } }
}
