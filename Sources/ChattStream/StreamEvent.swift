import ChattFeed
import ChattModel

/// The bytes of a feed stream (the WHATWG HTML standard's server-sent events): one event per chatt, a comment as
/// the heartbeat, and the reset event. Each event has one `data:` line, because a client reading the stream line by
/// line may drop blank lines (iOS's `AsyncBytes.lines`) and would then join two data lines of one event.
enum StreamEvent {
    /// `id:` and the position that holds the chatt, then `data:` and its row exactly as the feed has it, then the
    /// blank line.
    static func chatt(_ chatt: StoredChatt, at position: LogPosition, kind: ChattFeed.Kind) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(200)
        bytes.append(contentsOf: "id: \(position)\ndata: ".utf8)
        ChattRowEncoder.appendRow(chatt, includingGeodata: kind == .maps, to: &bytes)
        bytes.append(contentsOf: [UInt8(ascii: "\n"), UInt8(ascii: "\n")])
        return bytes
    }

    /// A comment line: clients ignore it, and it keeps an idle stream's connection alive through idle timeouts.
    static let heartbeat: [UInt8] = Array(":\n".utf8)

    /// The stream cannot go on from where the client stands (the store was edited, or the client is too far
    /// behind): it refetches the feed. A `data:` line, since an event without data is never dispatched.
    static let reset: [UInt8] = Array("event: reset\ndata: {}\n\n".utf8)
}
