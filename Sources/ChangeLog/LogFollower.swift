import ChattModel

/// What the change log tells its followers (`ChangeLog.follow(with:)`), in order, each change once.
public enum LogChange: Sendable {
    /// The log starts, or starts over, at `start.position`: whatever a follower held before is void.
    case restarted(LogStart)
    /// The chatts after the follower's position, up to a new one.
    case advanced(LogSlice)
    /// A read of the store has ended with the log at this position, everything up to it told.
    case settled(LogPosition)
}

/// Where the log starts (again).
public struct LogStart: Sendable, Equatable {
    public let position: LogPosition
    /// The store's epoch there.
    public let epoch: Int64
    /// The chatts just before `position`, when the log could read them; their slice ends at `position`.
    public let recent: LogSlice?

    public init(position: LogPosition, epoch: Int64, recent: LogSlice? = nil) {
        self.position = position
        self.epoch = epoch
        self.recent = recent
    }
}

/// A stretch of the log: the chatts after `start`, tick by tick, up to `end`.
public struct LogSlice: Sendable, Equatable {
    public let start: LogPosition
    /// In order; the first may be `start`'s own tick, with its chatts after `start`. A tick may have none.
    public let ticks: [TickChatts]
    public let end: LogPosition

    public init(start: LogPosition, ticks: [TickChatts], end: LogPosition) {
        self.start = start
        self.ticks = ticks
        self.end = end
    }
}

/// A view of the store that follows its change log: a feed, the streams.
public protocol LogFollower: AnyObject, Sendable {
    /// Takes in `change`. The log waits for it before telling the next follower, or the next change; a follower
    /// may read the store meanwhile (at the log's position, which does not move until it returns).
    func follow(_ change: LogChange) async
    /// Whether someone waits on this follower for every change as it commits (a stream subscriber): the log then
    /// reads other processes' ticks as they are announced, even while no reader asks.
    var followsLive: Bool { get }
}

extension LogFollower {
    public var followsLive: Bool { false }
}
