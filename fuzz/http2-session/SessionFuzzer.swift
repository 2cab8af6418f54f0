// libFuzzer harness for the server side of HTTP/2: the SwiftPM product FuzzHTTP2Session (built by fuzz/run.sh).
//
// The input is what a client sends after the 24-byte connection preface, fed to HTTP2ConnectionMachine (the
// nghttp2 session and our stream handling) wired to a stub handler, on a made-up clock. The machine is internal
// to HTTPServer, so the harness imports it @testable; fuzz/run.sh builds with -enable-testing and defines
// CHATTERD_FUZZ_TESTABLE, and every other build compiles this file to nothing.
//
// Byte 0 chooses the run: bit 7 small limits (so short inputs reach 413, 414, 431), bits 0-2 the size of the
// pieces the rest is fed in (1 to 1024 bytes, or whole), bits 3-4 how much output is pulled at a time, bit 5
// drain half way, bit 6 a client that reads nothing until the end. Every invariant below traps through
// `precondition`, which libFuzzer reports as a crash.
#if CHATTERD_FUZZ_TESTABLE
import CNGHTTP2
import HTTPCore
@testable import HTTPServer

private let smallLimits = HTTPLimits(maxRequestLineBytes: 64, maxHeaderBytes: 256, maxHeaderCount: 8, maxBodyBytes: 100)
private let date = "Tue, 01 Dec 2026 00:00:00 GMT"
private let connectionSpecific: Set<String> = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP2Session(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let control = data[0]
    let input = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let run = SessionRun(small: control & 0x80 != 0, room: 256 << (Int(control >> 3 & 3) * 4))
    let pieceSize = [1, 3, 7, 16, 64, 256, 1024, Int.max][Int(control & 7)]
    var pieces = [HTTP2ConnectionMachine.preface[...]]
    var start = 0
    while start < input.count {
        let end = input.count - start > pieceSize ? start + pieceSize : input.count
        pieces.append(input[start..<end])
        start = end
    }
    for (index, piece) in pieces.enumerated() {
        run.feed(piece)
        if control & 0x40 == 0 { run.pull() }
        if control & 0x20 != 0, index == pieces.count / 2 { run.perform(run.machine.drain()) }
        run.tick()
    }
    run.pull()
    run.finish()
    return 0
}

/// One connection: the machine, the stub handler's bookkeeping, and a reader of everything the server sent.
private final class SessionRun {
    let machine: HTTP2ConnectionMachine
    let limits: HTTPLimits
    let room: Int
    private var now = Instant(nanoseconds: 1_000_000_000_000)
    private var armed = Instant.distantFuture
    private var lingering = false
    private var closed = false
    /// Streams answered, with the bytes their DATA must come to (0 for HEAD: no DATA).
    private var answered: [Int32: Int] = [:]
    /// Whether the last `pull` took everything the machine had.
    private var drained = true
    /// Requests held by the handler until the next tick (their path starts with /slow).
    private var held: [(stream: Int32, request: HTTPRequest)] = []
    private var handled: Set<Int32> = []
    private var output = FrameReader()

    init(small: Bool, room: Int) {
        limits = small ? smallLimits : HTTPLimits()
        var timeouts = ConnectionTimeouts()
        timeouts.headerSeconds = 5
        timeouts.bodyIdleSeconds = 3
        timeouts.keepAliveIdleSeconds = 8
        timeouts.lingerSeconds = 2
        self.room = room
        machine = HTTP2ConnectionMachine(
            limits: limits, timeouts: timeouts, configuration: HTTP2Configuration(), maxStreams: small ? 5 : 1000,
            at: now)
        perform(machine.start())
    }

    /// Bytes sent while the machine wanted no input: as a socket would, they wait until it does.
    private var unread: [UInt8] = []

    func feed(_ bytes: ArraySlice<UInt8>) {
        unread += bytes
        guard machine.wantsInput, !unread.isEmpty else { return }
        let actions = unread.withUnsafeBytes { machine.received($0, at: now) }
        unread.removeAll()
        perform(actions)
        precondition(machine.openStreamCount <= Int(HTTP2Configuration().maxConcurrentStreams), "too many streams")
    }

    /// Takes the frames the machine has ready, as a client reading its socket would.
    func pull() {
        drained = false
        var written = 0
        for _ in 0..<1000 where !closed {
            var frames = OutputBuffer()
            perform(machine.produce(into: &frames, room: room, at: now))
            if lingering || closed { precondition(frames.isEmpty, "output after closing") }
            guard !frames.isEmpty else {
                drained = true
                break
            }
            while !frames.isEmpty {
                _ = frames.writeGathered { bytes in
                    output.read(bytes[...], answered: answered)
                    written += bytes.count
                    return .done(bytes.count)
                }
            }
        }
        if !closed { perform(machine.outputDrained(written: written, more: !drained, at: now)) }
        feed([])
    }

    /// A second passes: held requests are answered, and the timer fires if it is due.
    func tick() {
        now = now + 1
        for (stream, request) in held { answer(request, on: stream) }
        held.removeAll()
        if now >= armed {
            armed = .distantFuture
            perform(machine.timerFired(at: now))
        }
    }

    func finish() {
        perform(machine.peerClosed())
        precondition(closed, "the client closed, the machine did not")
        output.finish(drained: drained)
    }

    /// Records what `actions` call for, then answers every refused stream and takes every request.
    func perform(_ actions: HTTP2ConnectionMachine.Actions) {
        if let deadline = actions.armTimer { armed = deadline }
        switch actions.ending {
        case .linger:
            precondition(!lingering && !closed)
            lingering = true
        case .close:
            precondition(!closed, "closed twice")
            closed = true
        case nil:
            break
        }
        while let (response, stream, isHead) = machine.nextRejection() {
            precondition(!handled.contains(stream), "a stream both handled and rejected")
            precondition(response.status.code >= 400, "a rejection that is not an error")
            answered[stream] = isHead ? 0 : response.body.count
            machine.respond(toRejected: response, on: stream, isHead: isHead, requestID: "r", date: date)
        }
        while let (request, stream) = machine.nextRequest() {
            check(request, on: stream)
            if request.path.hasPrefix("/slow") { held.append((stream, request)) } else { answer(request, on: stream) }
        }
    }

    /// What any request handed to the handler must satisfy, whatever the input.
    private func check(_ request: HTTPRequest, on stream: Int32) {
        precondition(stream > 0 && stream % 2 == 1, "a request on a stream the client may not open")
        precondition(handled.insert(stream).inserted, "stream \(stream) handed out twice")
        precondition(output.lastStreamAllowed.map { stream <= $0 } ?? true, "a request past our GOAWAY")
        precondition(request.version == .http2)
        precondition(request.body.count <= limits.maxBodyBytes, "body over the limit")
        precondition(request.headers.count <= limits.maxHeaderCount + 1, "too many fields")  // + host from :authority
        precondition(request.path.hasPrefix("/") || (request.path == "*" && request.method == .OPTIONS), "path")
        precondition(request.target.utf8.count <= limits.maxRequestLineBytes, "target over the limit")
        for field in request.headers {
            precondition(!field.name.hasPrefix(":"), "a pseudo-header among the fields")
            precondition(!connectionSpecific.contains(field.name.lowercased()), "a connection-specific field")
        }
    }

    /// The stub handler: a body whose length depends on the path, so DATA and flow control get exercised.
    private func answer(_ request: HTTPRequest, on stream: Int32) {
        // Up to just past the initial flow-control window (64 KiB).
        let length = min(request.path.utf8.count * 1021, 70_000)
        let response = HTTPResponse.json(.ok, Array(repeating: UInt8(ascii: "x"), count: length))
        answered[stream] = response.sendsBody(inAnswerTo: request.method) ? length : 0
        machine.respond(response, on: stream, requestID: "r", date: date)
    }
}

/// Parses the server's output as frames (RFC 9113 §4), decodes its header blocks with nghttp2's HPACK
/// inflater, and checks each frame.
private struct FrameReader {
    private var buffer: [UInt8] = []
    private var frames = 0
    private var inflater: OpaquePointer?
    /// The header block being received (HEADERS then CONTINUATION), and its stream.
    private var block: (stream: UInt32, bytes: [UInt8], endStream: Bool)?
    private var dataBytes: [UInt32: Int] = [:]
    /// The last stream id of the first GOAWAY sent: no later request may be handed out above it.
    private(set) var lastStreamAllowed: Int32?

    init() {
        nghttp2_hd_inflate_new(&inflater)
    }

    mutating func read(_ chunk: UnsafeRawBufferPointer.SubSequence, answered: [Int32: Int]) {
        buffer += chunk
        while buffer.count >= 9 {
            let length = Int(buffer[0]) << 16 | Int(buffer[1]) << 8 | Int(buffer[2])
            guard buffer.count >= 9 + length else { break }
            let type = buffer[3], flags = buffer[4]
            let stream = UInt32(buffer[5] & 0x7F) << 24 | UInt32(buffer[6]) << 16 | UInt32(buffer[7]) << 8
                | UInt32(buffer[8])
            let payload = Array(buffer[9..<(9 + length)])
            buffer.removeFirst(9 + length)
            check(type: type, flags: flags, stream: stream, payload: payload, answered: answered)
            frames += 1
        }
    }

    /// The end of the connection; `drained` if everything the server had was read.
    func finish(drained: Bool) {
        precondition(buffer.isEmpty, "output ended inside a frame")  // `produce` yields whole frames
        precondition(!drained || block == nil, "output ended inside a header block")
        nghttp2_hd_inflate_del(inflater)
    }

    private mutating func check(
        type: UInt8, flags: UInt8, stream: UInt32, payload: [UInt8], answered: [Int32: Int]
    ) {
        let endStream = flags & 0x1 != 0
        precondition(frames > 0 || (type == 0x4 && flags & 0x1 == 0), "the server preface is not SETTINGS")
        precondition(block == nil || type == 0x9, "a frame inside a header block")
        switch type {
        case 0x0:  // DATA
            precondition(stream % 2 == 1, "DATA on stream \(stream)")
            guard let expected = answered[Int32(stream)] else { preconditionFailure("DATA on an unanswered stream") }
            let total = dataBytes[stream, default: 0] + payload.count
            dataBytes[stream] = total
            precondition(total <= expected, "more DATA than the body on stream \(stream)")
            if endStream { precondition(total == expected, "DATA ended short of the body on stream \(stream)") }
        case 0x1:  // HEADERS
            precondition(stream % 2 == 1 && answered[Int32(stream)] != nil, "HEADERS on stream \(stream)")
            precondition(flags & 0x28 == 0, "padding or priority in our HEADERS")
            block = (stream, payload, endStream)
        case 0x9:  // CONTINUATION
            precondition(block?.stream == stream, "CONTINUATION outside its header block")
            block?.bytes += payload
        case 0x3:  // RST_STREAM
            precondition(stream % 2 == 1 && payload.count == 4, "RST_STREAM")
        case 0x4, 0x6:  // SETTINGS, PING
            precondition(stream == 0, "SETTINGS or PING on a stream")
        case 0x7:  // GOAWAY
            precondition(stream == 0 && payload.count >= 8, "GOAWAY")
            let last = Int32(payload[0] & 0x7F) << 24 | Int32(payload[1]) << 16 | Int32(payload[2]) << 8 | Int32(payload[3])
            precondition(lastStreamAllowed.map { last <= $0 } ?? true, "a GOAWAY raised the last stream id")
            lastStreamAllowed = last
        case 0x8:  // WINDOW_UPDATE
            precondition(payload.count == 4, "WINDOW_UPDATE")
        default:
            preconditionFailure("the server sent frame type \(type)")  // never PRIORITY or PUSH_PROMISE
        }
        guard let complete = block, type == 0x1 || type == 0x9, flags & 0x4 != 0 else { return }
        block = nil
        let fields = inflate(complete.bytes)
        precondition(fields.first?.name == ":status", "a response without :status first")
        let status = fields[0].value
        precondition(status.utf8.count == 3 && status.utf8.allSatisfy { (0x30...0x39).contains($0) }, ":status")
        for field in fields.dropFirst() {
            precondition(!field.name.hasPrefix(":"), "a second pseudo-header")
            precondition(field.name == field.name.lowercased(), "an upper-case field name")
            precondition(!connectionSpecific.contains(field.name), "a connection-specific field")
        }
        if complete.endStream { precondition(dataBytes[complete.stream] == nil, "HEADERS after DATA") }
        if complete.endStream {
            precondition(answered[Int32(complete.stream)] == 0, "END_STREAM on HEADERS with a body to send")
        }
    }

    /// The fields of one header block; traps if the block does not decode.
    private func inflate(_ bytes: [UInt8]) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = []
        var offset = 0
        while true {
            var field = nghttp2_nv()
            var inflateFlags: Int32 = 0
            let used = bytes.withUnsafeBufferPointer { buffer in
                nghttp2_hd_inflate_hd2(
                    inflater, &field, &inflateFlags, buffer.baseAddress.map { $0 + offset }, buffer.count - offset, 1)
            }
            precondition(used >= 0, "a header block that does not decode: \(used)")
            offset += used
            if inflateFlags & Int32(NGHTTP2_HD_INFLATE_EMIT.rawValue) != 0 {
                fields.append((
                    String(decoding: UnsafeBufferPointer(start: field.name, count: field.namelen), as: UTF8.self),
                    String(decoding: UnsafeBufferPointer(start: field.value, count: field.valuelen), as: UTF8.self)))
            }
            if inflateFlags & Int32(NGHTTP2_HD_INFLATE_FINAL.rawValue) != 0 {
                nghttp2_hd_inflate_end_headers(inflater)
                return fields
            }
            precondition(used > 0 || offset < bytes.count, "the inflater made no progress")
        }
    }
}
#endif
