/// A place in the store's change log (migrations/0006): every event of the ticks before `tick`, and those of `tick`
/// itself up to `seq` (all of them for `wholeTick`). Ticks follow one another in the order their snapshots were
/// taken, which is the order commits became visible; within a tick, events go by the chatts' sequence numbers.
///
/// `token` is the tick's own random check: a store restored from a backup, or a standby promoted without the last
/// ticks, makes ticks again under numbers it gave before, and the token tells a reused number from the tick a
/// client saw. On the wire it is opaque text: `T.K` for a whole tick, `T.K.S` for part of one (decimal tick and
/// seq, lower-case hex token).
public struct LogPosition: Sendable, Hashable, CustomStringConvertible {
    public let tick: Int64
    public let token: UInt64
    public let seq: Int64

    /// The `seq` of a position that holds its tick's every event.
    public static let wholeTick = Int64.max

    public init(tick: Int64, token: UInt64, seq: Int64 = wholeTick) {
        self.tick = tick
        self.token = token
        self.seq = seq
    }

    /// Whether it holds every event of its tick.
    public var isWholeTick: Bool { seq == Self.wholeTick }

    /// Whether this position comes before `other` in the log: by tick, then by seq. Tokens are not compared: only
    /// positions of one log may be ordered, which the caller checks by the tick's token.
    public func precedes(_ other: LogPosition) -> Bool {
        (tick, seq) < (other.tick, other.seq)
    }

    /// Whether the event with sequence number `eventSeq` of tick `eventTick` is among those this position holds.
    public func holds(tick eventTick: Int64, seq eventSeq: Int64) -> Bool {
        (eventTick, eventSeq) <= (tick, seq)
    }

    public var description: String {
        let head = "\(tick).\(String(token, radix: 16))"
        return isWholeTick ? head : "\(head).\(seq)"
    }

    /// The longest run of digits a tick or seq may have: 18 always fits in an Int64.
    static let maximumDigits = 18
    /// The longest token: 16 hex digits fill a UInt64 (the store's are 48 bits, 12 digits).
    static let maximumTokenDigits = 16

    /// Parses `T.K` or `T.K.S`: 1 to 18 decimal digits, 1 to 16 lower-case hex digits, and 1 to 18 decimal digits,
    /// joined by single dots and nothing else; nil for anything else.
    public init?(text: some StringProtocol) {
        let parts = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3,
            let tick = Self.decimal(parts[0]),
            let token = Self.hex(parts[1]),
            let seq = parts.count == 3 ? Self.decimal(parts[2]) : Self.wholeTick
        else { return nil }
        self.init(tick: tick, token: token, seq: seq)
    }

    /// Whether `text` is a position of the log before this one (migrations/0005's `E-N`): a client that still holds
    /// one can no longer resume, but did nothing wrong.
    public static func isFromBeforeTicks(_ text: some StringProtocol) -> Bool {
        let parts = text.utf8.split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
        return parts.count == 2 && parts.allSatisfy { decimal($0) != nil }
    }

    /// The value of 1 to 18 ASCII digits; nil for anything else.
    private static func decimal(_ digits: some Collection<UInt8>) -> Int64? {
        guard (1...maximumDigits).contains(digits.count) else { return nil }
        var value: Int64 = 0
        for digit in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
            value = value * 10 + Int64(digit - UInt8(ascii: "0"))
        }
        return value
    }

    /// The value of 1 to 16 lower-case ASCII hex digits; nil for anything else.
    private static func hex(_ digits: some Collection<UInt8>) -> UInt64? {
        guard (1...maximumTokenDigits).contains(digits.count) else { return nil }
        var value: UInt64 = 0
        for digit in digits {
            let nibble: UInt8
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = digit - UInt8(ascii: "a") + 10
            default: return nil
            }
            value = value << 4 | UInt64(nibble)
        }
        return value
    }
}

/// A tick of the change log as the store made it: its number, its token, and the store's epoch in its snapshot
/// (the epoch moves with every edit of stored chatts, which the log cannot follow).
public struct LogTick: Sendable, Hashable {
    public let tick: Int64
    public let token: UInt64
    public let epoch: Int64

    public init(tick: Int64, token: UInt64, epoch: Int64) {
        self.tick = tick
        self.token = token
        self.epoch = epoch
    }

    /// The position that holds this tick's events up to `seq` (all of them by default).
    public func position(through seq: Int64 = LogPosition.wholeTick) -> LogPosition {
        LogPosition(tick: tick, token: token, seq: seq)
    }

    /// Whether `position` names this tick (its number and token).
    public func isTick(of position: LogPosition) -> Bool {
        tick == position.tick && token == position.token
    }
}

/// A tick and its events: the chatts it took in and the chatts it saw removed, each in sequence order.
public struct TickChatts: Sendable, Equatable {
    public var tick: LogTick
    public var chatts: [SequencedChatt]
    public var removals: [RemovedChatt]

    public init(tick: LogTick, chatts: [SequencedChatt], removals: [RemovedChatt] = []) {
        self.tick = tick
        self.chatts = chatts
        self.removals = removals
    }

    /// Whether it holds no event.
    public var isEmpty: Bool { chatts.isEmpty && removals.isEmpty }

    /// How many events it holds.
    public var eventCount: Int { chatts.count + removals.count }

    /// Its events in log order: chatts and removals by sequence number.
    public var events: [LogEvent] {
        guard !removals.isEmpty else { return chatts.map { .posted($0) } }
        return (chatts.map { LogEvent.posted($0) } + removals.map { .removed($0) }).sorted { $0.sequence < $1.sequence }
    }

    /// Its events up to `position` (which names this tick).
    public func through(_ position: LogPosition) -> TickChatts {
        TickChatts(
            tick: tick, chatts: chatts.filter { position.holds(tick: tick.tick, seq: $0.sequence) },
            removals: removals.filter { position.holds(tick: tick.tick, seq: $0.sequence) })
    }
}

extension Sequence<TickChatts> {
    /// Every event, in log order, with the position that holds it and everything before it.
    public var events: [(position: LogPosition, event: LogEvent)] {
        flatMap { tick in tick.events.map { (tick.tick.position(through: $0.sequence), $0) } }
    }

    /// The chatts posted, in log order.
    public var chatts: [SequencedChatt] {
        flatMap(\.chatts)
    }

    /// The chatts removed, in log order.
    public var removals: [RemovedChatt] {
        flatMap(\.removals)
    }

    /// How many events they hold.
    public var eventCount: Int {
        reduce(0) { $0 + $1.eventCount }
    }
}

/// The change log after a position, as one read of the store found it: the position's own tick when the store still
/// has it (with its chatts after the position), then the ticks after it, in order. `isCut` when the read stopped at
/// its limit, after the last chatt it holds; else it reaches the newest tick the store had.
public struct LogRead: Sendable, Equatable {
    public var ticks: [TickChatts]
    public var isCut: Bool

    public init(ticks: [TickChatts], isCut: Bool) {
        self.ticks = ticks
        self.isCut = isCut
    }

    /// The position after everything read: the last event read when cut, else the last tick whole; nil when the
    /// read found no tick at all.
    public var end: LogPosition? {
        guard let last = ticks.last else { return nil }
        let sequences = [last.chatts.last?.sequence, last.removals.last?.sequence].compactMap { $0 }
        guard isCut, let sequence = sequences.max() else { return last.tick.position() }
        return last.tick.position(through: sequence)
    }
}
