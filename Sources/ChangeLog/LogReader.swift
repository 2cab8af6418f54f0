import ChattModel
import Locking

/// A flight of the change log (`ChangeLog`): ticks the store, reads the log after where it stands, and tells the
/// followers. Flights never overlap, so `position` only moves inside one.
final class LogReader: Sendable {
    private struct State {
        var followers: [any LogFollower] = []
        /// Followers added since the log started, to be told where it stands before anything else.
        var newcomers: [any LogFollower] = []
        var position: LogPosition?
        var epoch: Int64 = 0
        var restarts = 0
        /// Whether the next flight ticks: something may have been committed that no tick took in yet.
        var tickWanted = true
    }

    private let repository: any ChattRepository
    private let pageSize: Int
    private let backfillTicks: Int64
    private let patience: Duration
    private let bigRead: Int
    private let bigReadEnded: @Sendable () -> Void
    private let state = Locked(State())

    init(
        repository: any ChattRepository, pageSize: Int, backfillTicks: Int64, patience: Duration, bigRead: Int,
        bigReadEnded: @escaping @Sendable () -> Void
    ) {
        self.repository = repository
        self.pageSize = pageSize
        self.backfillTicks = backfillTicks
        self.patience = patience
        self.bigRead = bigRead
        self.bigReadEnded = bigReadEnded
    }

    func add(_ follower: any LogFollower) {
        state.withLock { state in
            if state.position == nil {
                state.followers.append(follower)
            } else {
                state.newcomers.append(follower)
            }
        }
    }

    var position: LogPosition? {
        state.withLock { $0.position }
    }

    /// The next flight is to tick before it reads; call before asking for it.
    func wantTick() {
        state.withLock { $0.tickWanted = true }
    }

    var restarts: Int {
        state.withLock { $0.restarts }
    }

    /// Whether some follower waits for every change as it commits.
    var followedLive: Bool {
        state.withLock { $0.followers + $0.newcomers }.contains { $0.followsLive }
    }

    /// One flight: where the log stands afterwards, or why the store could not be read. It ticks when asked to, and
    /// always at the start; else it only reads the log.
    func read() async -> ChangeLog.Outcome {
        let (standing, epoch, ticks) = state.withLock { state in
            defer { state.tickWanted = false }
            return (state.position, state.epoch, state.tickWanted || state.position == nil)
        }
        do throws(RepositoryError) {
            var newest: LogTick?
            var read: LogRead
            if ticks {
                (newest, read) = try await repository.tickAndRead(after: standing, limit: pageSize, before: deadline())
            } else {
                // Invariant: a flight that does not tick follows one that read.
                read = try await repository.log(after: standing!, limit: pageSize, before: deadline())
            }
            guard var position = standing, newest.map({ $0.epoch == epoch }) ?? true else {
                // Invariant: the flight ticked, as it does at the start.
                return .success(try await restart(at: newest!))
            }
            try await welcomeNewcomers(at: LogTick(tick: position.tick, token: position.token, epoch: epoch), position)
            var events = 0
            defer { if events >= bigRead { bigReadEnded() } }
            while true {
                // Invariant: a read that found any tick has an end.
                guard let first = read.ticks.first, first.tick.isTick(of: position), let end = read.end else {
                    // The store no longer has the tick the log stands at.
                    var tick = newest
                    if tick == nil { tick = try await repository.tick(before: deadline()) }
                    // Invariant: one of the two is a tick.
                    return .success(try await restart(at: tick!))
                }
                if let moved = read.ticks.last(where: { $0.tick.epoch != epoch }) {
                    return .success(try await restart(at: moved.tick))
                }
                events += read.ticks.eventCount
                if end != position { await tell(.advanced(LogSlice(start: position, ticks: read.ticks, end: end))) }
                position = end
                state.withLock { $0.position = end }
                guard read.isCut else { break }
                if events >= bigRead, !followedLive {
                    // Nobody waits for each change and much is left (a process nobody used, after another's bulk
                    // load): starting over at the newest tick, a full read of the feeds, costs less than the rest.
                    return .success(try await restart(at: try await repository.tick(before: deadline())))
                }
                read = try await repository.log(after: position, limit: pageSize, before: deadline())
            }
            await tell(.settled(position))
            return .success(position)
        } catch {
            return .failure(error)
        }
    }

    /// Starts the log over at `tick` (or at a newer tick of its epoch, when the read of the recent ticks before it
    /// finds one), with those recent ticks when they could be read whole.
    private func restart(at tick: LogTick) async throws(RepositoryError) -> LogPosition {
        let recent = try await recentSlice(before: tick)
        let position = recent?.end ?? tick.position()
        let followers = state.withLock { state in
            state.position = position
            state.epoch = tick.epoch
            state.restarts += 1
            state.followers += state.newcomers
            state.newcomers = []
            return state.followers
        }
        let start = LogStart(position: position, epoch: tick.epoch, recent: recent)
        await tell(.restarted(start), to: followers)
        await tell(.settled(position), to: followers)
        return position
    }

    /// Tells the followers added since the log started where it stands (`position`, in `tick`), with the recent
    /// ticks before it, so that they begin where the others are.
    private func welcomeNewcomers(at tick: LogTick, _ position: LogPosition) async throws(RepositoryError) {
        guard state.withLock({ !$0.newcomers.isEmpty }) else { return }
        let recent = try await recentSlice(before: tick, upTo: position)
        let newcomers = state.withLock { state in
            defer {
                state.followers += state.newcomers
                state.newcomers = []
            }
            return state.newcomers
        }
        await tell(.restarted(LogStart(position: position, epoch: tick.epoch, recent: recent)), to: newcomers)
    }

    /// The last `backfillTicks` ticks up to `tick`, when one read holds them whole, all of `tick`'s epoch, from a
    /// tick the store still has; else nil. The slice goes on past `tick` to the newest tick read, or stops at
    /// `limit` (a position in `tick`).
    private func recentSlice(
        before tick: LogTick, upTo limit: LogPosition? = nil
    ) async throws(RepositoryError) -> LogSlice? {
        guard backfillTicks > 0, tick.tick > 1 else { return nil }
        let from = max(1, tick.tick - backfillTicks)
        // The token is not known, and not checked: the first tick read is taken only if it is `from` itself.
        let read = try await repository.log(
            after: LogPosition(tick: from, token: 0), limit: pageSize, before: deadline())
        guard !read.isCut, let first = read.ticks.first, first.tick.tick == from, let end = read.end,
            read.ticks.allSatisfy({ $0.tick.epoch == tick.epoch }), read.ticks.contains(where: { $0.tick == tick })
        else { return nil }
        var ticks = Array(read.ticks.dropFirst())
        if let limit {
            ticks = ticks.filter { $0.tick.tick <= limit.tick }.map { $0.through(limit) }
        }
        return LogSlice(start: first.tick.position(), ticks: ticks, end: limit ?? end)
    }

    private func tell(_ change: LogChange) async {
        await tell(change, to: state.withLock { $0.followers })
    }

    private func tell(_ change: LogChange, to followers: [any LogFollower]) async {
        for follower in followers { await follower.follow(change) }
    }

    private func deadline() -> ContinuousClock.Instant {
        .now + patience
    }
}
