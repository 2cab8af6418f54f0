import ChattModel
@testable import ChattStore
import Foundation
import Locking
import Testing

extension DatabaseTests {
    /// The insert batcher writes the next batch while the last one commits; these hold one batch's commit with a
    /// lock from another session. The next batch takes no lock of the first's (migrations/0006), so it commits at
    /// once; it is still answered after the first, as batches are answered in batch order.
    @Suite struct OverlappingCommitTests {
        /// The advisory lock a held commit waits for.
        static let gateKey = 4242
        /// A deferred constraint trigger runs at commit, after the batch's rows have come back: a row with the
        /// message `held` makes its transaction's commit wait for the gate.
        static let holdCommitSQL = [
            """
            CREATE FUNCTION hold_commit() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN PERFORM pg_advisory_xact_lock_shared(\(gateKey)); RETURN NULL; END $$
            """,
            """
            CREATE CONSTRAINT TRIGGER hold_commit AFTER INSERT ON chatts DEFERRABLE INITIALLY DEFERRED
            FOR EACH ROW WHEN (NEW.message = 'held') EXECUTE FUNCTION hold_commit()
            """,
        ]
        static let terminateHeldCommitSQL = """
            SELECT count(pg_terminate_backend(pid))::text FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event = 'advisory'
            """

        @Test func aBatchBehindAHeldCommitCommitsAtOnceAndIsAnsweredAfterIt() async throws {
            try await withHeldFirstBatch { run throws in
                #expect(try run.database.column("SELECT message FROM chatts") == ["second"], "no commit waited")
                #expect(run.answered.isEmpty, "the second is answered after the first")
                await run.gate.release()
                let answers = await run.answers()
                #expect(answers.map(\.message) == ["held", "second"])
                #expect(answers.map(\.outcome.isSuccess) == [true, true])
                #expect(try run.database.column("SELECT message FROM chatts ORDER BY seq") == ["held", "second"])
            }
        }

        @Test func aBatchAheadThatLosesItsConnectionIsUnavailableAndTheNextIsStillAnswered() async throws {
            try await withHeldFirstBatch { run throws in
                #expect(try run.database.column(Self.terminateHeldCommitSQL) == ["1"])
                let answers = await run.answers()
                #expect(answers.map(\.message) == ["held", "second"])
                #expect(answers[0].error?.repositoryError.kind == .unavailable)
                #expect(answers[1].outcome.isSuccess)
                #expect(try run.database.column("SELECT message FROM chatts") == ["second"])
            }
        }

        /// The server's statement timeout stops at the commit (PostgreSQL disables it before committing), so only
        /// the batch's own deadline ends a commit that never comes back, as behind a silent network partition.
        @Test func aCommitThatOutlivesTheBatchDeadlineIsUnavailableAndItsConnectionDropped() async throws {
            try await TestDatabase.with { database throws in
                for statement in Self.holdCommitSQL { _ = try database.column(statement) }
                let pool = database.pool(size: 2, acquireTimeout: .milliseconds(200), statementTimeout: .milliseconds(300))
                defer { pool.close() }
                let batcher = InsertBatcher(pool: pool)
                let gate = try await Self.gate(in: database)
                defer { gate.letGo() }
                let held = await caughtAsync { () async throws(StoreError) in
                    _ = try await batcher.store(NewChatt(name: "n", message: "held"))
                }
                #expect(held?.code == .timedOut)
                #expect(held?.repositoryError.kind == .unavailable)
                #expect(pool.stats.idle + pool.stats.inUse == 0, "the connection was given up")
                // Its backend still waits to commit, and holds up no later batch.
                _ = try await batcher.store(NewChatt(name: "n", message: "next"))
                #expect(try database.column("SELECT message FROM chatts") == ["next"])
                #expect(try database.column(Self.terminateHeldCommitSQL) == ["1"])
            }
        }

        /// Holds the gate, from another session, until released.
        static func gate(in database: TestDatabase) async throws -> ConnectionHolder {
            let gate = ConnectionHolder(
                database.pool(size: 1),
                setUp: { session throws(StoreError) in
                    _ = try await session.query("SELECT pg_advisory_lock(\(Self.gateKey))")
                },
                tearDown: { session in _ = try? await session.query("SELECT pg_advisory_unlock_all()") })
            try #require(await gate.waitUntilHeld())
            return gate
        }

        /// One post per batch: `held` (whose commit waits for the gate) and then `second`, which `body` gets
        /// once `second` has committed, before either is answered.
        private func withHeldFirstBatch(_ body: (HeldRun) async throws -> Void) async throws {
            try await TestDatabase.with { database throws in
                for statement in Self.holdCommitSQL { _ = try database.column(statement) }
                let pool = database.pool(size: 4)
                defer { pool.close() }
                let firstInserted = Promise<Void>()
                let batcher = InsertBatcher(pool: pool) { event in
                    if event == .inserted(0) { firstInserted.fulfil(()) }
                }
                let gate = try await Self.gate(in: database)
                defer { gate.letGo() }
                let run = HeldRun(database: database, gate: gate)
                run.store("held", in: batcher)
                try #require(await firstInserted.value(within: .seconds(5)) != nil)
                run.store("second", in: batcher)
                try #require(await waitUntil { (try? database.column("SELECT message FROM chatts")) == ["second"] })
                try await body(run)
            }
        }
    }
}

/// Two posts in flight and their answers, in the order given.
private struct HeldRun {
    struct Answer {
        let message: String
        let outcome: Result<Void, StoreError>
        var error: StoreError? { outcome.failure }
    }

    let database: TestDatabase
    let gate: ConnectionHolder
    private let answeredSoFar = Locked<[Answer]>([])
    private let pending = Locked<[Promise<Void>]>([])

    init(database: TestDatabase, gate: ConnectionHolder) {
        self.database = database
        self.gate = gate
    }

    func store(_ message: String, in batcher: InsertBatcher) {
        let done = Promise<Void>()
        pending.withLock { $0.append(done) }
        batcher.store(NewChatt(name: "n", message: message)) { [answeredSoFar] outcome in
            answeredSoFar.withLock { $0.append(Answer(message: message, outcome: outcome)) }
            done.fulfil(())
        }
    }

    /// The answers so far, in the order they came.
    var answered: [Answer] {
        answeredSoFar.withLock { $0 }
    }

    /// Every answer, in the order they came, once both posts have one (each waited for 10 s at most).
    func answers() async -> [Answer] {
        for done in pending.withLock({ $0 }) { _ = await done.value() }
        return answered
    }
}
