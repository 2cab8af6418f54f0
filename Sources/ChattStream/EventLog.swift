import ChattFeed
import HTTPCore

/// The newest events of a feed stream, in commit order, shared by every subscriber: each event is encoded once,
/// for both feeds, and a subscriber is only a serial number into the log. The log keeps at most `capacity` bytes;
/// older events fall off, and a subscriber still behind them is cut (its client was not reading), so a slow
/// client costs the server nothing but its place.
struct EventLog {
    struct Entry {
        /// The commit-order count of the chatt; nil for a heartbeat.
        let count: Int64?
        let maps: [UInt8]
        let chatts: [UInt8]

        func bytes(_ kind: ChattFeed.Kind) -> [UInt8] { kind == .maps ? maps : chatts }
        var size: Int { max(maps.count, chatts.count) }
    }

    let capacity: Int
    private var entries: [Entry] = []
    /// Entries before this index have fallen off; they are dropped in batches, not one by one.
    private var head = 0
    /// The serial number of `entries[head]`.
    private(set) var firstSerial: UInt64 = 0
    /// The bytes of the entries kept.
    private(set) var size = 0
    /// The count the log begins after: it holds every chatt committed after it, up to the stream's count.
    private(set) var coveredFrom: Int64

    /// An empty log of a stream that stands at `count`.
    init(capacity: Int, from count: Int64) {
        self.capacity = capacity
        coveredFrom = count
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
            if let count = dropped.count { coveredFrom = count }
            head += 1
            firstSerial += 1
        }
        if head > 1024, head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }

    /// Forgets everything: the stream now stands at `count` (of a new epoch).
    mutating func restart(from count: Int64) {
        firstSerial = endSerial
        entries.removeAll()
        head = 0
        size = 0
        coveredFrom = count
    }

    /// Where a subscriber that has every chatt up to `count` starts reading: the first entry of a later chatt
    /// (or the end); nil when the log no longer reaches back to `count`.
    func serial(after count: Int64) -> UInt64? {
        guard count >= coveredFrom else { return nil }
        // From the newest back (a resuming client is usually only a little behind) to the first later chatt:
        // heartbeats before it are not sent again.
        var first = entries.count
        var index = entries.count
        while index > head {
            index -= 1
            guard let entryCount = entries[index].count else { continue }
            if entryCount <= count { break }
            first = index
        }
        return firstSerial + UInt64(first - head)
    }

    /// The `kind` bytes of the entries from `serial` on, about `limit` bytes of them (one at least, when `limit` is
    /// positive), and the serial after them; nil when `serial` has fallen off.
    func read(from serial: UInt64, _ kind: ChattFeed.Kind, limit: Int) -> (body: HTTPBody, next: UInt64)? {
        guard serial >= firstSerial else { return nil }
        var body = HTTPBody()
        var index = head + Int(serial - firstSerial)
        while index < entries.count, limit > 0, body.isEmpty || body.count + entries[index].size <= limit {
            body.append(entries[index].bytes(kind)[...])
            index += 1
        }
        return (body, firstSerial + UInt64(index - head))
    }
}
