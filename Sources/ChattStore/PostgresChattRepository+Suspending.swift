import ChattModel

/// The reads the server makes, run as `PGSession`s: a request waiting on the store suspends and holds no
/// thread, and gives up at its deadline.
extension PostgresChattRepository {
    /// `SELECT chatts_tick()` in a transaction of its own, and the newest tick.
    public func tick(before deadline: ContinuousClock.Instant) async throws(RepositoryError) -> LogTick {
        do {
            return try await pool.withSession(before: deadline) { session throws(StoreError) in
                try await session.query(Self.tickStatement, [origin]).logTick()
            }
        } catch {
            throw error.repositoryError(during: "tick")
        }
    }

    /// The tick and the log after `position` in one statement, so one round trip and one plan the server keeps
    /// (it is PL/pgSQL's): `chatts_events_after`.
    public func tickAndRead(
        after position: LogPosition?, limit: Int, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> (newest: LogTick, read: LogRead) {
        do {
            return try await pool.withSession(before: deadline) { session throws(StoreError) in
                // Past every tick: only the newest comes.
                let after = position ?? LogPosition(tick: .max, token: 0)
                let result = try await session.query(
                    Self.tickAndReadStatement, [String(after.tick), String(after.seq), String(limit), origin])
                let newest = try result.newestTick()
                guard position != nil else { return (newest, LogRead(ticks: [], isCut: false)) }
                return (newest, LogRead(ticks: try result.tickChatts(), isCut: result.rowCount >= limit))
            }
        } catch {
            throw error.repositoryError(during: "tick and read")
        }
    }

    /// The log after `position`, in one statement.
    public func log(
        after position: LogPosition, limit: Int, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> LogRead {
        do {
            return try await pool.withSession(before: deadline) { session throws(StoreError) in
                let result = try await session.query(
                    Self.logStatement, [String(position.tick), String(position.seq), String(limit)])
                return LogRead(ticks: try result.tickChatts(), isCut: result.rowCount >= limit)
            }
        } catch {
            throw error.repositoryError(during: "log")
        }
    }

    /// Every chatt `position` holds, oldest first, read through a cursor `fetchSize` rows at a time, so that
    /// neither libpq's result nor the caller ever holds the whole table: a feed is built next to one small result,
    /// not next to a copy of the table.
    public func readChatts(
        at position: LogPosition, before deadline: ContinuousClock.Instant, _ row: (SequencedChatt) -> Void
    ) async throws(RepositoryError) -> Bool {
        do {
            return try await pool.withSession(before: deadline) { session throws(StoreError) in
                _ = try await session.query(Self.beginReadSQL)
                do throws(StoreError) {
                    let tick = [String(position.tick), String(position.token)]
                    guard try await session.query(Self.positionTickSQL, tick).rowCount == 1 else {
                        _ = try await session.query(Self.rollbackSQL)
                        return false
                    }
                    _ = try await session.query(Self.declareFeedSQL, [String(position.tick), String(position.seq)])
                    var fetched = Self.fetchSize
                    while fetched == Self.fetchSize {
                        let rows = try await session.query(Self.fetchFeedSQL).sequencedChatts()
                        rows.forEach(row)
                        fetched = rows.count
                    }
                    _ = try await session.query(Self.commitSQL)
                    return true
                } catch {
                    // Leaves the connection fit for the pool when only the statement failed; one given up on
                    // at the deadline is dropped anyway.
                    if error.code != .timedOut { _ = try? await session.query(Self.rollbackSQL) }
                    throw error
                }
            }
        } catch {
            throw error.repositoryError(during: "snapshot")
        }
    }

    /// `chatts_remove` (migrations/0007); its commit is told to the commit observers like a batch's.
    public func remove(
        id: String, by moderator: String, reason: String, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> Bool {
        do {
            let removed = try await pool.withSession(before: deadline) { session throws(StoreError) in
                try await session.query(Self.removeSQL, [id, moderator, reason]).string(row: 0, column: 0) == "t"
            }
            if removed {
                for observer in commitObservers.withLock({ $0 }) { observer() }
            }
            return removed
        } catch {
            throw error.repositoryError(during: "remove")
        }
    }

    /// `chatts_retain` (migrations/0007); its commit is told to the commit observers like a batch's.
    public func removeExpired(
        olderThanDays days: Int, batch: Int, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> Int {
        do {
            let removed = try await pool.withSession(before: deadline) { session throws(StoreError) in
                let result = try await session.query(Self.retainSQL, [String(days), String(batch)])
                guard let count = result.string(row: 0, column: 0).flatMap({ Int($0) }) else {
                    throw StoreError(.decodingFailed(column: "chatts_retain"))
                }
                return count
            }
            if removed > 0 {
                for observer in commitObservers.withLock({ $0 }) { observer() }
            }
            return removed
        } catch {
            throw error.repositoryError(during: "retention")
        }
    }

    /// The removed chatt's place, from its record in `chatts_removals` (migrations/0007).
    public func removedPlace(
        of id: String, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> FeedPosition? {
        do {
            return try await pool.withSession(before: deadline) { session throws(StoreError) in
                let result = try await session.query(Self.removedPlaceSQL, [id])
                guard result.rowCount == 1 else { return nil }
                guard let timestamp = result.string(row: 0, column: 0),
                    let sequence = result.string(row: 0, column: 1).flatMap({ Int64($0) })
                else { throw StoreError(.decodingFailed(column: "chatt_seq")) }
                return FeedPosition(timestamp: timestamp, sequence: sequence)
            }
        } catch {
            throw error.repositoryError(during: "removed place")
        }
    }

    /// Succeeds when the database answers a trivial query by `deadline`.
    public func ping(before deadline: ContinuousClock.Instant) async throws(RepositoryError) {
        do {
            try await pool.withSession(before: deadline) { session throws(StoreError) in
                _ = try await session.query(Self.pingSQL)
            }
        } catch {
            throw error.repositoryError(during: "ping")
        }
    }
}
