import ChattFeed
import ChattModel
import HTTPCore
import Locking

/// The feed streams (`GET /getmaps/stream`, `GET /getchatts/stream`): every chatt committed, once, in commit
/// order (migrations/0005), to every subscriber, from the position it names on.
///
/// The hub follows the store's commit counter: its own process's commits arrive with the count they follow
/// (`take`), and are appended at once when that is where the hub stands; anything else (another writer's
/// commits, a gap, a change notice, the periodic poll) makes it read the commits after its count from the store
/// (`catchUp`, one at a time). Positions are dense within an epoch, so a batch that follows the hub's count
/// leaves no gap. A new epoch (an edit or removal of chatts) resets every subscriber: each gets the reset event
/// and its stream ends; its client refetches the feed.
///
/// Events go into one shared `EventLog`; a subscriber that stopped reading falls off its end and is cut, so no
/// client holds more than the log's capacity. A heartbeat is one more entry of the log, appended when the log has
/// been quiet for a while: one timer for every subscriber.
public final class ChattStreamHub: Sendable {
    /// Reads at most `limit` chatts committed after `count`, with the store's position, by `deadline`
    /// (`ChattRepository.committed(after:limit:before:)`).
    public typealias Read = @Sendable (_ count: Int64, _ limit: Int, _ deadline: ContinuousClock.Instant)
        async throws(RepositoryError) -> CommittedChatts

    struct State {
        /// Where the stream stands; nil until the store was first read.
        var position: CommitPosition?
        var log: EventLog
        var subscribers: [ObjectIdentifier: StreamSubscription] = [:]
        var reading = false
        var readAgain = false
        var readers: [CheckedContinuation<Void, Never>] = []
        var lastAppend: ContinuousClock.Instant
    }

    let state: Locked<State>
    let read: Read
    /// The most chatts one read of the store takes, and the most a resuming client is sent from the store.
    let readLimit: Int
    /// The chatts before the current end the log starts with.
    let backfill: Int
    /// The longest a stream goes without a byte.
    public let heartbeat: Duration
    /// How long a read of the store may take.
    let patience: Duration
    let now: @Sendable () -> ContinuousClock.Instant

    /// - Parameters:
    ///   - read: reads committed chatts from the store (see `Read`).
    ///   - capacity: the bytes of events kept for every subscriber; one that falls further behind is cut.
    ///   - heartbeat: the longest a stream is quiet.
    public init(
        read: @escaping Read, capacity: Int = 1 << 20, readLimit: Int = 5_000, heartbeat: Duration = .seconds(15),
        patience: Duration = .seconds(7), now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.read = read
        self.readLimit = readLimit
        // As many as fit in the log, at about 400 bytes an event of both feeds.
        backfill = max(1, min(1_000, readLimit, capacity / 400 / 2))
        self.heartbeat = heartbeat
        self.patience = patience
        self.now = now
        state = Locked(State(log: EventLog(capacity: capacity, from: 0), lastAppend: now()))
    }

    /// Subscribers now, for /metrics.
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    // MARK: - What the store did

    /// A commit of this process, as the feeds took it in (nil: a post whose outcome is unknown): appended at once
    /// when it follows the hub's count and nobody else's commit falls among its rows, else read from the store.
    public func committed(_ batch: ChattBatch?) {
        guard let batch, batch.isContiguous else { return changed() }
        let (previous, position) = (batch.previous, batch.position)
        let chatts = batch.chatts.sorted { $0.commit < $1.commit }
        let follows = state.withLock { state -> [@Sendable () -> Void]? in
            guard let current = state.position, current.epoch == position.epoch else { return nil }
            // The other posts of a batch bring it again; so may a read of the store that got there first.
            if position.count <= current.count { return [] }
            guard current.count == previous else { return nil }
            return state.append(chatts, upTo: position, at: now())
        }
        guard let wakes = follows else { return changed() }
        for wake in wakes { wake() }
    }

    /// Chatts may have changed in the store (a notice, a failure whose outcome is unknown): read what is new.
    public func changed() {
        let deadline = now() + patience
        Task { try? await catchUp(before: deadline) }
    }

    /// The periodic step (about once a second): a heartbeat when the log has been quiet for almost `heartbeat`,
    /// and a poll of the store, which catches what no notice announced.
    public func tick() {
        let at = now()
        let wakes = state.withLock { state -> [@Sendable () -> Void] in
            guard at - state.lastAppend >= heartbeat - Self.tickInterval(heartbeat) else { return [] }
            let heartbeat = EventLog.Entry(count: nil, maps: StreamEvent.heartbeat, chatts: StreamEvent.heartbeat)
            return state.appendEntries([heartbeat], at: at)
        }
        for wake in wakes { wake() }
        changed()
    }

    /// How often `tick` is due: often enough that no stream is quiet for longer than `heartbeat`.
    public static func tickInterval(_ heartbeat: Duration) -> Duration {
        min(.seconds(1), heartbeat / 2)
    }

    /// Reads the chatts committed after the hub's count, until it has them all; one read at a time, and a caller
    /// that comes while one runs waits for the next to finish.
    func catchUp(before deadline: ContinuousClock.Instant) async throws(RepositoryError) {
        let leads = state.withLock { state -> Bool in
            if state.reading {
                state.readAgain = true
                return false
            }
            state.reading = true
            return true
        }
        guard leads else {
            await withCheckedContinuation { continuation in
                let waits = state.withLock { state -> Bool in
                    guard state.reading else { return false }
                    state.readers.append(continuation)
                    return true
                }
                if !waits { continuation.resume() }
            }
            return
        }
        var failure: RepositoryError?
        while true {
            let from = state.withLock { state -> Int64 in
                state.readAgain = false
                return state.position?.count ?? .max
            }
            do throws(RepositoryError) {
                let more: Bool
                if from == .max {
                    more = try await start(before: deadline)
                } else {
                    let rows = try await read(from, readLimit, deadline)
                    let (left, wakes) = state.withLock { $0.apply(rows, limit: readLimit, at: now()) }
                    for wake in wakes { wake() }
                    more = left
                }
                if more || state.withLock({ $0.readAgain }) { continue }
            } catch {
                failure = error
            }
            break
        }
        let readers = state.withLock { state in
            state.reading = false
            defer { state.readers = [] }
            return state.readers
        }
        for reader in readers { reader.resume() }
        if let failure { throw failure }
    }

    /// The first reads: where the store stands, then the log filled with the last `backfill` chatts before it,
    /// so that clients resuming after a restart are served from the log rather than each from the store.
    /// Whether more may be waiting.
    private func start(before deadline: ContinuousClock.Instant) async throws(RepositoryError) -> Bool {
        let end = try await read(.max, 0, deadline).position
        let from = max(0, end.count - Int64(backfill))
        let rows = try await read(from, readLimit, deadline)
        return state.withLock { state in
            guard state.position == nil else { return false }
            guard rows.position.epoch == end.epoch else {
                // Edited in between: start at the end, with nothing to resume from.
                state.position = rows.position
                state.log.restart(from: rows.position.count)
                return false
            }
            // The log holds every chatt after `from`: all of them up to where the store stands when the read
            // is whole, else up to the last one read, and the next read goes on from there.
            let upTo = rows.chatts.count < readLimit ? rows.position.count : rows.chatts.last?.commit ?? from
            state.position = CommitPosition(epoch: end.epoch, count: from)
            state.log.restart(from: from)
            _ = state.append(rows.chatts, upTo: CommitPosition(epoch: end.epoch, count: upTo), at: now())
            return rows.chatts.count >= readLimit
        }
    }
}
