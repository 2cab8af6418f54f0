import ChattModel

/// The reads the server makes, run as `PGSession`s: a request waiting on the store suspends and holds no
/// thread, and gives up at its deadline.
extension PostgresChattRepository {
    /// Every chatt, oldest first, read through a cursor `fetchSize` rows at a time, so that neither libpq's result
    /// nor the caller ever holds the whole table: a feed is built next to one small result, not next to a copy of
    /// the table. The version is computed from the rows read, so the two always agree, and its position is the
    /// clock read in the same transaction snapshot.
    public func readChatts(
        before deadline: ContinuousClock.Instant, _ row: (SequencedChatt) -> Void
    ) async throws(RepositoryError) -> ChattsVersion {
        do {
            return try await pool.withSession(before: deadline) { session throws(StoreError) in
                _ = try await session.query(Self.beginReadSQL)
                do throws(StoreError) {
                    let position = try await session.query(Self.clockSQL).commitPosition()
                    _ = try await session.query(Self.declareFeedSQL)
                    var version = ChattsVersion(count: 0, lastSequence: 0, position: position)
                    var fetched = Self.fetchSize
                    while fetched == Self.fetchSize {
                        let rows = try await session.query(Self.fetchFeedSQL).sequencedChatts()
                        for chatt in rows {
                            row(chatt)
                            version.countIn(chatt)
                        }
                        fetched = rows.count
                    }
                    _ = try await session.query(Self.commitSQL)
                    return version
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

    /// The first `limit` chatts after `position` in feed order, with the store's version, in one statement; the
    /// (time, seq) comparison walks the feed-order index from `position` on.
    public func chatts(
        after position: FeedPosition?, limit: Int, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> ChattDelta {
        do {
            return try await pool.withSession(before: deadline) { session throws(StoreError) in
                let result: PGResult
                if let position {
                    result = try await session.query(
                        Self.chattsAfterSQL, [position.timestamp, String(position.sequence), String(limit)])
                } else {
                    result = try await session.query(Self.everyChattSQL, [String(limit)])
                }
                return ChattDelta(chatts: try result.sequencedChatts(), version: try result.chattsVersion())
            }
        } catch {
            throw error.repositoryError(during: "chatts after")
        }
    }

    /// The chatts committed after counter `count`, in commit order, with the clock, in one statement.
    public func committed(
        after count: Int64, limit: Int, before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> CommittedChatts {
        do {
            return try await pool.withSession(before: deadline) { session throws(StoreError) in
                let result = try await session.query(Self.committedAfterSQL, [String(count), String(limit)])
                return CommittedChatts(chatts: try result.sequencedChatts(), position: try result.commitPosition())
            }
        } catch {
            throw error.repositoryError(during: "committed after")
        }
    }

    /// The number of chatts and the highest sequence number (one index-only aggregate), and the clock.
    public func version(before deadline: ContinuousClock.Instant) async throws(RepositoryError) -> ChattsVersion {
        do {
            return try await pool.withSession(before: deadline) { session throws(StoreError) in
                try await session.query(Self.versionSQL).chattsVersion()
            }
        } catch {
            throw error.repositoryError(during: "version")
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
