import ChattModel
import Locking
import TaskExecution

/// The one follower of the store: reads its change log (migrations/0006) and tells every view of it
/// (`LogFollower`s: the feeds, the streams) what changed, in order, once.
///
/// It reads when told something may have changed: a batch of this process committed, another writer's notice came
/// (`noticed`), another reader of the log made a tick (`ticked`), or the periodic check (`check`), which catches a
/// commit nobody ticked for (its process died first). Each is one more flight asked for (`SingleFlight`): a flight
/// ticks the store (`ChattRepository.tickAndRead`) unless all it was asked for is a tick someone else made, reads the
/// log after its position page by page, and tells the followers, one after another; flights asked for while one is
/// in the air share the next. A reader that must see its own process's posts (read your writes) waits for the
/// flight that reads the last of them (`caughtUp`), not for those that notices and checks ask for; one that must see
/// everything committed anywhere before it asks for a flight of its own (`synced`).
///
/// A flight that has read `bigRead` events and has more to read starts the log over at the newest tick instead, when
/// no follower waits for every change: the followers read the store in full, which costs less.
///
/// A process nobody uses reads other processes' ticks only when someone asks: while no follower waits for every
/// change (`LogFollower.followsLive`) and no reader has asked for `idleAfter`, an announced tick is only noted, and
/// the next reader's flight reads it (`isCaughtUp` is false meanwhile). With several processes on one store, an
/// idle one then costs the store nothing per tick.
///
/// The log starts over (`LogChange.restarted`) where it cannot follow: at its first flight, when the store's epoch
/// moved (an edit), and when the store no longer has the tick the log stands at (a store restored from a backup, a
/// standby promoted without the last ticks, or ticks pruned while the log could not read): never by skipping.
public final class ChangeLog: Sendable {
    public typealias Outcome = Result<LogPosition, RepositoryError>

    private let reader: LogReader
    private let flights: SingleFlight<Outcome>
    /// The flight that reads this process's last commit.
    private let lastCommit = Locked<SingleFlight<Outcome>.Ticket?>(nil)
    /// Another process's tick was announced while idle, and no flight has begun since.
    private let unreadTicks: Locked<Bool>
    private let idleAfter: Duration
    private let now: @Sendable () -> ContinuousClock.Instant
    /// When a reader last asked the log (`isCaughtUp`, `caughtUp`, `synced`).
    private let lastAsked: Locked<ContinuousClock.Instant>

    /// The answer to a reader whose deadline passed before the log had read what it waits for.
    public static let outOfTime = RepositoryError.unavailable("change log: no answer from the store in time")

    /// The log of `repository`, not yet read. Each flight reads at most `pageSize` rows a query, each query given
    /// `patience`; a start also reads the last `backfillTicks` ticks before the newest, for followers that keep
    /// recent chatts. Flights start at least `spacing` apart (`FlightSpacing`). `bigReadEnded` is told after a
    /// flight that brought `bigRead` events or more (another writer's bulk load, or a bulk removal), once the
    /// followers have taken them in: what they allocated on the way has been freed then. Announced ticks wait for a
    /// reader after `idleAfter` without one (see above), on the clock `now`.
    public init(
        repository: any ChattRepository, pageSize: Int = 1_000, backfillTicks: Int64 = 64,
        patience: Duration = .seconds(7), spacing: Duration = .zero, bigRead: Int = 5_000,
        idleAfter: Duration = .seconds(1), now: @escaping @Sendable () -> ContinuousClock.Instant = { .now },
        bigReadEnded: @escaping @Sendable () -> Void = {}
    ) {
        let reader = LogReader(
            repository: repository, pageSize: pageSize, backfillTicks: backfillTicks, patience: patience,
            bigRead: bigRead, bigReadEnded: bigReadEnded)
        self.reader = reader
        self.idleAfter = idleAfter
        self.now = now
        lastAsked = Locked(now())
        let unreadTicks = Locked(false)
        self.unreadTicks = unreadTicks
        let spacing = FlightSpacing(spacing)
        flights = SingleFlight {
            await spacing.waitForTurn()
            // This flight reads every tick announced so far.
            unreadTicks.withLock { $0 = false }
            return await reader.read()
        }
        repository.observeCommits { [reader, flights, lastCommit] in
            reader.wantTick()
            let ticket = flights.ask()
            lastCommit.withLock { $0 = max($0 ?? ticket, ticket) }
        }
    }

    /// Adds `follower`: it is told every change from the next flight on, after those added before it; added once the
    /// log has started, its first change is a start at where the log stands.
    public func follow(with follower: any LogFollower) {
        reader.add(follower)
    }

    /// Another writer changed the store (its notice came), or may have: tick, and read the log.
    public func noticed() {
        reader.wantTick()
        flights.ask()
    }

    /// Another reader of the log made a tick (its announcement came): read the log, or, while idle, note it for the
    /// next reader.
    public func ticked() {
        if !reader.followedLive, now() - lastAsked.withLock({ $0 }) >= idleAfter {
            unreadTicks.withLock { $0 = true }
            // A flight that began before the note may have missed the tick: the note stands for the next one.
            return
        }
        flights.ask()
    }

    /// The periodic check: tick and read the log, in case a commit was never ticked for.
    public func check() {
        noticed()
    }

    /// Whether the followers have been told of every commit of this process, and of every tick announced while idle,
    /// by a read that succeeded.
    public var isCaughtUp: Bool {
        asked()
        guard case .success? = flights.landed(), !unreadTicks.withLock({ $0 }) else { return false }
        return lastCommit.withLock { $0 }.map(flights.hasLanded) ?? true
    }

    private func asked() {
        let time = now()
        lastAsked.withLock { $0 = time }
    }

    /// Where the log stands; nil before its first read.
    public var position: LogPosition? {
        reader.position
    }

    /// How many times the log has started (over) since the process did: its first read, then every edit, and every
    /// store that went back.
    public var starts: Int {
        reader.restarts
    }

    /// Waits until the followers have been told of every commit of this process before this call (read your
    /// writes); returns where the log stands then. A log never read, or whose last read failed, reads now.
    /// `.unavailable` when the store cannot be read, or not by `deadline`.
    public func caughtUp(before deadline: ContinuousClock.Instant) async throws(RepositoryError) -> LogPosition {
        asked()
        if unreadTicks.withLock({ $0 }) { return try await outcome(of: flights.ask(), before: deadline) }
        if let ticket = lastCommit.withLock({ $0 }), !flights.hasLanded(ticket) {
            return try await outcome(of: ticket, before: deadline)
        }
        if case .success(let position)? = flights.landed() { return position }
        reader.wantTick()
        return try await outcome(of: flights.ask(), before: deadline)
    }

    /// Ticks the store now and waits until the followers have been told what it holds: everything committed
    /// anywhere before this call.
    public func synced(before deadline: ContinuousClock.Instant) async throws(RepositoryError) -> LogPosition {
        asked()
        reader.wantTick()
        return try await outcome(of: flights.ask(), before: deadline)
    }

    private func outcome(
        of ticket: SingleFlight<Outcome>.Ticket, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> LogPosition {
        guard let outcome = await flights.value(of: ticket, before: deadline) else { throw Self.outOfTime }
        return try outcome.get()
    }
}
