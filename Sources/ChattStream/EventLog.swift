import ChattFeed
import ChattModel
import HTTPCore
import Viewport

/// The newest events of a feed stream, in log order, shared by every subscriber: each event is encoded once, for
/// both feeds, and a subscriber is only a serial number into the log. The log keeps at most `capacity` bytes;
/// older events fall off, and a subscriber still behind them is cut (its client was not reading), so a slow
/// client costs the server nothing but its place. While nobody is subscribed it keeps only `idleCapacity` bytes:
/// the events then serve only a client resuming, and one from further back is read from the store.
struct EventLog {
    struct Entry {
        /// The position that holds the event and everything before it; nil for a heartbeat.
        let position: LogPosition?
        private(set) var maps: [UInt8]
        private(set) var chatts: [UInt8]
        /// Where on the map the event happened, for subscribers filtered by a box.
        let place: StreamPlace
        /// The chatt of an event appended while nobody was subscribed, encoded only once someone is (`encode`).
        private var unencoded: StoredChatt?

        init(position: LogPosition?, maps: [UInt8], chatts: [UInt8], place: StreamPlace = .anywhere) {
            self.position = position
            self.maps = maps
            self.chatts = chatts
            self.place = place
        }

        /// The event of `chatt` at `position`: encoded now, or, when `deferred`, once it is wanted.
        static func event(_ chatt: StoredChatt, at position: LogPosition, deferred: Bool) -> Entry {
            var entry = Entry(position: position, maps: [], chatts: [], place: StreamPlace(of: chatt))
            entry.unencoded = chatt
            if !deferred { entry.encode() }
            return entry
        }

        /// The event of `removal` at `position`: the same bytes in both feeds.
        static func removal(_ removal: RemovedChatt, at position: LogPosition) -> Entry {
            let bytes = StreamEvent.removal(removal.id, at: position)
            return Entry(position: position, maps: bytes, chatts: bytes, place: StreamPlace(of: removal))
        }

        var isEncoded: Bool { unencoded == nil }

        mutating func encode() {
            guard let chatt = unencoded, let position else { return }
            (maps, chatts) = StreamEvent.chatt(chatt, at: position)
            unencoded = nil
        }

        func bytes(_ kind: ChattFeed.Kind) -> [UInt8] {
            if let chatt = unencoded, let position { return StreamEvent.chatt(chatt, at: position, kind: kind) }
            return kind == .maps ? maps : chatts
        }

        /// What it counts against the capacity: a marker, empty, still counts, so that markers fall off too; an
        /// event not yet encoded counts about what its encoding will.
        var size: Int {
            if let chatt = unencoded { return StreamEvent.estimatedSize(of: chatt) }
            return max(maps.count, chatts.count, EventLog.markerSize)
        }

        /// A tick with no chatt: nothing to send, but it names the tick, so that a client holding a position in it
        /// is placed (and its token checked) without a read of the store.
        static func marker(_ position: LogPosition) -> Entry {
            Entry(position: position, maps: [], chatts: [])
        }
    }

    /// What a marker counts against the capacity.
    static let markerSize = 16

    let capacity: Int
    /// The bytes kept while nobody is subscribed (`append(_:idle:)`).
    static let idleCapacity = 64 << 10
    private var entries: [Entry] = []
    /// Entries before this index have fallen off; they are dropped in batches, not one by one.
    private var head = 0
    /// The serial number of `entries[head]`.
    private(set) var firstSerial: UInt64 = 0
    /// The bytes of the entries kept.
    private(set) var size = 0
    /// Whether some entry kept is not encoded yet.
    private var holdsUnencoded = false
    /// The position the log begins after: it holds every event after it, up to the stream's position.
    private(set) var coveredFrom: LogPosition

    /// An empty log of a stream that stands at `position`.
    init(capacity: Int, from position: LogPosition) {
        self.capacity = capacity
        coveredFrom = position
    }

    /// The serial number the next entry gets: a subscriber standing here has read everything.
    var endSerial: UInt64 { firstSerial + UInt64(entries.count - head) }

    /// Appends `entry`, letting the oldest entries fall off while more than `capacity` bytes are kept, or
    /// `idleCapacity` when nobody is subscribed (`idle`); the newest entry always stays.
    mutating func append(_ entry: Entry, idle: Bool = false) {
        entries.append(entry)
        size += entry.size
        if !entry.isEncoded { holdsUnencoded = true }
        dropOldest(beyond: idle ? min(capacity, Self.idleCapacity) : capacity)
    }

    /// Encodes the entries appended unencoded, now that someone reads them; the oldest fall off if they turn out
    /// larger than counted.
    mutating func encodeAll() {
        guard holdsUnencoded else { return }
        holdsUnencoded = false
        for index in head..<entries.count where !entries[index].isEncoded {
            size -= entries[index].size
            entries[index].encode()
            size += entries[index].size
        }
        dropOldest()
    }

    private mutating func dropOldest(beyond limit: Int? = nil) {
        while size > limit ?? capacity, entries.count - head > 1 {
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

    /// The entry with serial number `serial`, which the log still holds.
    func entry(at serial: UInt64) -> Entry {
        entries[head + Int(serial - firstSerial)]
    }

    /// Forgets everything: the stream now stands at `position` (of a new start of the log).
    mutating func restart(from position: LogPosition) {
        firstSerial = endSerial
        entries.removeAll()
        head = 0
        size = 0
        holdsUnencoded = false
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

    /// What a read of the log gives a subscriber.
    struct Read {
        /// The events' bytes.
        var body = HTTPBody()
        /// The serial after the entries read.
        var next: UInt64
        /// The position of the last entry read past without a byte sent for it (an event outside the box, a marker),
        /// when no event was sent after it: where the subscriber's client now stands, unknown to it.
        var passed: LogPosition?
        /// Whether an event (not only heartbeats) was sent.
        var sentEvent = false
    }

    /// The `kind` bytes of the entries from `serial` on that `box` shows (all, without one), about `limit` bytes of
    /// them (one at least, when `limit` is positive), and the serial after them; nil when `serial` has fallen off.
    func read(from serial: UInt64, _ kind: ChattFeed.Kind, limit: Int, in box: BoundingBox? = nil) -> Read? {
        guard serial >= firstSerial else { return nil }
        var read = Read(next: serial)
        var index = head + Int(serial - firstSerial)
        while index < entries.count, limit > 0, read.body.isEmpty || read.body.count + entries[index].size <= limit {
            let entry = entries[index]
            let bytes = entry.place.isShown(in: box) ? entry.bytes(kind) : []
            if !bytes.isEmpty {
                read.body.append(bytes[...])
                if entry.position != nil {
                    read.passed = nil
                    read.sentEvent = true
                }
            } else if let position = entry.position {
                read.passed = position
            }
            index += 1
        }
        read.next = firstSerial + UInt64(index - head)
        return read
    }
}

/// Where on the map a stream's event happened: what a subscriber filtered by a box (`?bbox=`) is sent.
enum StreamPlace: Sendable, Equatable {
    /// Every subscriber gets it: a heartbeat, a marker, the removal of a chatt whose place is unknown.
    case anywhere
    /// A chatt located here, posted or removed.
    case at(MapPoint)
    /// A chatt with no location: in no box.
    case nowhere

    init(of chatt: StoredChatt) {
        self = chatt.location.map(StreamPlace.at) ?? .nowhere
    }

    init(of event: LogEvent) {
        switch event {
        case .posted(let posted): self.init(of: posted.chatt)
        case .removed(let removal): self.init(of: removal)
        }
    }

    /// A removal's place: its geodata's (migrations/0009), unknown when it has none recorded.
    init(of removal: RemovedChatt) {
        guard let geodata = removal.geodata else {
            self = .anywhere
            return
        }
        self = MapPoint(geodata: geodata).map(StreamPlace.at) ?? .nowhere
    }

    /// Whether a subscriber filtered by `box` (nil: not filtered) is sent it.
    func isShown(in box: BoundingBox?) -> Bool {
        guard let box else { return true }
        switch self {
        case .anywhere: return true
        case .at(let point): return box.contains(point)
        case .nowhere: return false
        }
    }
}
