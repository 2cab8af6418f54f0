import ChangeLog
import ChattFeed
import ChattModel
import HTTPCore
import Locking

/// The feed streams (`GET /getmaps/stream`, `GET /getchatts/stream`): every chatt, once, in the order of the store's
/// change log (migrations/0006), to every subscriber, from the position it names on.
///
/// The hub follows the change log (`ChangeLog`, of which it is a follower): each stretch of the log it is told of
/// becomes events in one shared `EventLog`, and a start of the log (its first read, an edit of stored chatts, a
/// store that went backwards) resets every subscriber: each gets the reset event and its stream ends; its client
/// refetches the feed. The hub reads the store itself only for a client resuming from before what its log holds.
///
/// A subscriber that stopped reading falls off the log's end and is cut, so no client holds more than the log's
/// capacity. A heartbeat is one more entry of the log, appended when the log has been quiet for a while: one timer
/// for every subscriber.
public final class ChattStreamHub: LogFollower {
    /// Reads at most `limit` rows of the store's log after a position, by `deadline`
    /// (`ChattRepository.log(after:limit:before:)`).
    public typealias Read = @Sendable (_ after: LogPosition, _ limit: Int, _ deadline: ContinuousClock.Instant)
        async throws(RepositoryError) -> LogRead

    struct State {
        /// Where the stream stands: the log's position; nil until the log's first read.
        var position: LogPosition?
        /// The store's epoch at `position`.
        var epoch: Int64 = 0
        var log: EventLog
        var subscribers: [ObjectIdentifier: StreamSubscription] = [:]
        var lastAppend: ContinuousClock.Instant
    }

    let state: Locked<State>
    let changes: ChangeLog
    let read: Read
    /// The most chatts a resuming client is sent from the store; one further behind is reset.
    let readLimit: Int
    /// The longest a stream goes without a byte.
    public let heartbeat: Duration
    let now: @Sendable () -> ContinuousClock.Instant

    /// A hub following `changes` (added as its follower here).
    /// - Parameters:
    ///   - read: reads the store's log (see `Read`), for clients resuming from before what the hub's log holds.
    ///   - capacity: the bytes of events kept for every subscriber; one that falls further behind is cut.
    ///   - heartbeat: the longest a stream is quiet.
    public init(
        following changes: ChangeLog, read: @escaping Read, capacity: Int = 1 << 20, readLimit: Int = 5_000,
        heartbeat: Duration = .seconds(15), now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.changes = changes
        self.read = read
        self.readLimit = readLimit
        self.heartbeat = heartbeat
        self.now = now
        let nowhere = LogPosition(tick: 0, token: 0)
        state = Locked(State(log: EventLog(capacity: capacity, from: nowhere), lastAppend: now()))
        changes.follow(with: self)
    }

    /// Subscribers now, for /metrics.
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Someone subscribed waits for every change as it commits.
    public var followsLive: Bool { state.withLock { !$0.subscribers.isEmpty } }

    // MARK: - Following the log

    public func follow(_ change: LogChange) async {
        let at = now()
        let wakes = state.withLock { state -> [@Sendable () -> Void] in
            switch change {
            case .restarted(let start): state.restart(start, at: at)
            case .advanced(let slice): state.append(slice, at: at)
            case .settled: []
            }
        }
        for wake in wakes { wake() }
    }

    /// The periodic step (about once a second): a heartbeat when the log has been quiet for almost `heartbeat`, and
    /// a keep-alive for each subscriber filtered by a box that was sent nothing for that long (the log may be busy
    /// with events outside its box).
    public func tick() {
        let at = now()
        let due = heartbeat - Self.tickInterval(heartbeat)
        let wakes = state.withLock { state -> [@Sendable () -> Void] in
            var wakes: [@Sendable () -> Void] = []
            if at - state.lastAppend >= due {
                let heartbeat = EventLog.Entry(
                    position: nil, maps: StreamEvent.heartbeat, chatts: StreamEvent.heartbeat)
                wakes = state.appendEntries([heartbeat], at: at)
            }
            for subscription in state.subscribers.values
            where subscription.box != nil && !subscription.keepAliveDue && at - subscription.lastSent >= due {
                subscription.keepAliveDue = true
                guard subscription.waiting, let wake = subscription.wake else { continue }
                subscription.waiting = false
                wakes.append(wake)
            }
            return wakes
        }
        for wake in wakes { wake() }
    }

    /// How often `tick` is due: often enough that no stream is quiet for longer than `heartbeat`.
    public static func tickInterval(_ heartbeat: Duration) -> Duration {
        min(.seconds(1), heartbeat / 2)
    }
}
