import ChattFeed
import ChattModel
import HTTPCore

/// The newest events of a feed stream, in log order, shared by every subscriber: each event is encoded once, for
/// both feeds, and a subscriber is only a serial number into the log. The log keeps at most `capacity` bytes;
/// older events fall off, and a subscriber still behind them is cut (its client was not reading), so a slow
/// client costs the server nothing but its place.
struct EventLog {
    struct Entry {
        /// The position that holds the event and everything before it; nil for a heartbeat.
        let position: LogPosition?
        let maps: [UInt8]
        let chatts: [UInt8]

        func bytes(_ kind: ChattFeed.Kind) -> [UInt8] { kind == .maps ? maps : chatts }
        /// What it counts against the capacity: a marker, empty, still counts, so that markers fall off too.
        var size: Int { max(maps.count, chatts.count, EventLog.markerSize) }

        /// A tick with no chatt: nothing to send, but it names the tick, so that a client holding a position in it
        /// is placed (and its token checked) without a read of the store.
        static func marker(_ position: LogPosition) -> Entry {
            Entry(position: position, maps: [], chatts: [])
        }
    }

    /// What a marker counts against the capacity.
    static let markerSize = 16

    let capacity: Int
    private var entries: [Entry] = []
    /// Entries before this index have fallen off; they are dropped in batches, not one by one.
    private var head = 0
    /// The serial number of `entries[head]`.
    private(set) var firstSerial: UInt64 = 0
    /// The bytes of the entries kept.
    private(set) var size = 0
    /// The position the log begins after: it holds every event after it, up to the stream's position.
    private(set) var coveredFrom: LogPosition

    /// An empty log of a stream that stands at `position`.
    init(capacity: Int, from position: LogPosition) {
        self.capacity = capacity
        coveredFrom = position
    }

    /// The serial number the next entry gets: a subscriber standing here has read everything.
    var endSerial: UInt64 { firstSerial + UInt64(entries.count - head) }

    /// Appends `entry`, letting the oldest entries fall off while more than `capacity` bytes are kept (the newest
    /// entry always stays).
    mutating func append(_ entry: Entry) {
        entries.append(entry)
        size += entry.size
        while size > capacity, entries.count - head > 1 {
            let dropped = entries[head]
            size -= dropped.size
            if let position = dropped.position { coveredFrom = position }
            head += 1
            firstSerial += 1
        }
        if head > 1024, head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }

    /// Forgets everything: the stream now stands at `position` (of a new start of the log).
    mutating func restart(from position: LogPosition) {
        firstSerial = endSerial
        entries.removeAll()
        head = 0
        size = 0
        coveredFrom = position
    }

    /// Where a subscriber that holds every event up to `position` (at or after where the log begins) starts
    /// reading: the first entry of a later event (or the end). Nil when `position` names a tick the log holds under
    /// another token, or none the log holds at all: the client's tick is not this log's.
    func serial(after position: LogPosition) -> UInt64? {
        var first = entries.count
        var index = entries.count
        var tickSeen = coveredFrom.tick == position.tick && coveredFrom.token == position.token
        // From the newest back (a resuming client is usually only a little behind) to the first later event:
        // heartbeats before it are not sent again.
        while index > head {
            index -= 1
            guard let entryPosition = entries[index].position else { continue }
            if entryPosition.tick == position.tick {
                guard entryPosition.token == position.token else { return nil }
                tickSeen = true
            }
            guard position.precedes(entryPosition) else { break }
            first = index
        }
        return tickSeen ? firstSerial + UInt64(first - head) : nil
    }

    /// The `kind` bytes of the entries from `serial` on, about `limit` bytes of them (one at least, when `limit` is
    /// positive), and the serial after them; nil when `serial` has fallen off.
    func read(from serial: UInt64, _ kind: ChattFeed.Kind, limit: Int) -> (body: HTTPBody, next: UInt64)? {
        guard serial >= firstSerial else { return nil }
        var body = HTTPBody()
        var index = head + Int(serial - firstSerial)
        while index < entries.count, limit > 0, body.isEmpty || body.count + entries[index].size <= limit {
            let bytes = entries[index].bytes(kind)
            if !bytes.isEmpty { body.append(bytes[...]) }
            index += 1
        }
        return (body, firstSerial + UInt64(index - head))
    }
}
