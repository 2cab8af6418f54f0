/// One event of a `text/event-stream` body, as it is dispatched at the blank line that ends it.
public struct ServerSentEvent: Equatable, Sendable {
    /// The `event:` field, `"message"` when there was none.
    public var type: String
    /// The `data:` lines joined by LF; nil when the block had no `data:` line, which browsers do not fire
    /// but whose `id:` still moves the last event ID.
    public var data: String?
    /// The last event ID at dispatch: this block's `id:`, else the one before it (the WHATWG rule).
    public var lastEventID: String
}

/// Parses a `text/event-stream` body as it arrives (WHATWG HTML §9.2.6 "Interpreting an event stream").
///
/// Lines end in CRLF, LF or CR, also split across reads; a line starting with `:` is a comment; `field:value`
/// loses one space after the colon; a blank line dispatches. No socket here: feed it with `receive(_:)`.
public struct ServerSentEventParser {
    /// Longest line accepted, in bytes; a chatt row is a few KiB at most.
    public static let maxLineBytes = 1 << 20
    /// Most bytes of `data:` one event may gather.
    public static let maxDataBytes = 1 << 20

    /// What the body held: an event, or a comment (the contract's heartbeat is the empty comment `:`).
    public enum Item: Equatable, Sendable {
        case event(ServerSentEvent)
        case comment
    }

    private var line: [UInt8] = []
    /// The previous line ended in CR, so an LF that comes next belongs to it.
    private var afterCR = false
    /// Whether a byte-order mark could still come: only as the stream's first bytes.
    private var atStart = true
    private var type = ""
    private var data: [UInt8] = []
    private var hasData = false
    private var lastEventID: String
    /// The last event ID when the previous block was dispatched.
    private var dispatchedID: String

    /// A parser whose last event ID starts as `lastEventID`: on a reconnection, the one the stream resumes from.
    public init(lastEventID: String = "") {
        self.lastEventID = lastEventID
        dispatchedID = lastEventID
    }

    /// Takes the next bytes of the body; returns the events and comments they complete, in order.
    public mutating func receive(_ bytes: some Collection<UInt8>) throws(ClientError) -> [Item] {
        var items: [Item] = []
        for byte in bytes {
            if afterCR {
                afterCR = false
                if byte == UInt8(ascii: "\n") { continue }
            }
            switch byte {
            case UInt8(ascii: "\r"), UInt8(ascii: "\n"):
                afterCR = byte == UInt8(ascii: "\r")
                if let item = try endOfLine() { items.append(item) }
            default:
                guard line.count < Self.maxLineBytes else { throw .malformedResponse("event stream line too long") }
                line.append(byte)
            }
        }
        return items
    }

    /// Handles the line just ended; returns what it completes.
    private mutating func endOfLine() throws(ClientError) -> Item? {
        defer { line.removeAll(keepingCapacity: true) }
        if atStart {
            atStart = false
            if line.starts(with: [0xEF, 0xBB, 0xBF]) { line.removeFirst(3) }
        }
        guard !line.isEmpty else { return dispatch() }
        guard line[0] != UInt8(ascii: ":") else { return .comment }
        let colon = line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex
        var value = line[min(colon + 1, line.endIndex)...]
        if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        try field(String(decoding: line[..<colon], as: UTF8.self), value)
        return nil
    }

    /// Applies one field; unknown names are ignored, as the standard says.
    private mutating func field(_ name: String, _ value: ArraySlice<UInt8>) throws(ClientError) {
        switch name {
        case "event":
            type = String(decoding: value, as: UTF8.self)
        case "data":
            guard data.count + value.count < Self.maxDataBytes else {
                throw .malformedResponse("event stream event larger than \(Self.maxDataBytes) bytes")
            }
            data.append(contentsOf: value)
            data.append(UInt8(ascii: "\n"))
            hasData = true
        case "id":
            // An id holding NUL is ignored (WHATWG), so it can never reach a request header.
            if !value.contains(0) { lastEventID = String(decoding: value, as: UTF8.self) }
        default:
            // `retry:` included: chatter's own back-off decides when to reconnect.
            break
        }
    }

    /// The blank line: the gathered fields become an event, and the type and data start over. A block that
    /// neither carries data nor moves the last event ID is left out: it would tell nobody anything.
    private mutating func dispatch() -> Item? {
        defer {
            type = ""
            data.removeAll(keepingCapacity: true)
            hasData = false
            dispatchedID = lastEventID
        }
        guard hasData || lastEventID != dispatchedID else { return nil }
        let text = hasData ? String(decoding: data.dropLast(), as: UTF8.self) : nil
        return .event(ServerSentEvent(type: type.isEmpty ? "message" : type, data: text, lastEventID: lastEventID))
    }
}
