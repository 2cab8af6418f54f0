import ChattFeed
import ChattModel
import JSON

/// The bytes of a feed stream (the WHATWG HTML standard's server-sent events): one event per chatt, a comment as
/// the heartbeat, and the reset event. Each event has one `data:` line, because a client reading the stream line by
/// line may drop blank lines (iOS's `AsyncBytes.lines`) and would then join two data lines of one event.
enum StreamEvent {
    /// `id:` and the position that holds the chatt, then `data:` and its row exactly as the feed has it, then the
    /// blank line.
    static func chatt(_ chatt: StoredChatt, at position: LogPosition, kind: ChattFeed.Kind) -> [UInt8] {
        event(chatt, head: head(position), kind: kind)
    }

    /// The chatt's event in both feeds.
    static func chatt(_ chatt: StoredChatt, at position: LogPosition) -> (maps: [UInt8], chatts: [UInt8]) {
        let head = head(position)
        return (event(chatt, head: head, kind: .maps), event(chatt, head: head, kind: .chatts))
    }

    /// `event: delete`, `id:` and the position that holds the removal, then `data:` and the chatt's id as a JSON
    /// string (docs/API.md), then the blank line: the same in both feeds.
    static func removal(_ id: String, at position: LogPosition) -> [UInt8] {
        var bytes = Array("event: delete\nid: \(position)\ndata: ".utf8)
        JSONString.append(id, to: &bytes)
        bytes.append(contentsOf: [UInt8(ascii: "\n"), UInt8(ascii: "\n")])
        return bytes
    }

    /// A log event of `kind`'s stream at `position`.
    static func event(_ event: LogEvent, at position: LogPosition, kind: ChattFeed.Kind) -> [UInt8] {
        switch event {
        case .posted(let posted): chatt(posted.chatt, at: position, kind: kind)
        case .removed(let removed): removal(removed.id, at: position)
        }
    }

    /// About the bytes of the chatt's event in either feed (exact unless its strings need escaping).
    static func estimatedSize(of chatt: StoredChatt) -> Int {
        // "id: ", a position of up to 19 + 16 + 19 digits and its dots, "\ndata: ", the row's quotes, commas and
        // brackets, and the blank line.
        let framing = 4 + 56 + 7 + 15 + 2
        return framing + chatt.name.utf8.count + chatt.message.utf8.count + chatt.id.utf8.count
            + chatt.timestamp.utf8.count + (chatt.geodata?.utf8.count ?? 4)
    }

    private static func head(_ position: LogPosition) -> [UInt8] {
        Array("id: \(position)\ndata: ".utf8)
    }

    private static func event(_ chatt: StoredChatt, head: [UInt8], kind: ChattFeed.Kind) -> [UInt8] {
        var bytes = head
        bytes.reserveCapacity(200)
        ChattRowEncoder.appendRow(chatt, includingGeodata: kind == .maps, to: &bytes)
        bytes.append(contentsOf: [UInt8(ascii: "\n"), UInt8(ascii: "\n")])
        return bytes
    }

    /// An event with an `id:` and no data (docs/API.md): a client sets its last event id to `position` and
    /// dispatches nothing. It tells a client filtered by a box where the stream stands after events it was not sent,
    /// and keeps its connection alive as a heartbeat does.
    static func position(_ position: LogPosition) -> [UInt8] {
        Array("id: \(position)\n\n".utf8)
    }

    /// A comment line: clients ignore it, and it keeps an idle stream's connection alive through idle timeouts.
    static let heartbeat: [UInt8] = Array(":\n".utf8)

    /// The stream cannot go on from where the client stands (the store was edited, or the client is too far
    /// behind): it refetches the feed. A `data:` line, since an event without data is never dispatched.
    static let reset: [UInt8] = Array("event: reset\ndata: {}\n\n".utf8)
}
