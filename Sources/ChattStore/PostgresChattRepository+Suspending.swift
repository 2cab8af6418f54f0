import ChattModel
import Dispatch

/// The reads the server makes, run as `PGSession`s: a request waiting on the store suspends and holds no
/// thread, and gives up at its deadline. The statements and their reading are the blocking forms'.
extension PostgresChattRepository {
    /// Every chatt, oldest first, through the cursor `readChatts(_:)` uses.
    public func readChatts(
        before deadline: DispatchTime, _ row: (SequencedChatt) -> Void
    ) async throws(RepositoryError) -> ChattsVersion {
        do {
            return try await pool.withSession(before: deadline.instant) { session throws(StoreError) in
                _ = try await session.query(Self.beginReadSQL)
                do throws(StoreError) {
                    _ = try await session.query(Self.declareFeedSQL)
                    var version = ChattsVersion(count: 0, lastSequence: 0)
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

    /// The chatts after `position` in feed order, with the store's version, in one statement.
    public func chatts(
        after position: FeedPosition?, before deadline: DispatchTime
    ) async throws(RepositoryError) -> ChattDelta {
        do {
            return try await pool.withSession(before: deadline.instant) { session throws(StoreError) in
                let result: PGResult
                if let position {
                    result = try await session.query(
                        Self.chattsAfterSQL, [position.timestamp, String(position.sequence)])
                } else {
                    result = try await session.query(Self.everyChattSQL)
                }
                return ChattDelta(chatts: try result.sequencedChatts(), version: try result.chattsVersion())
            }
        } catch {
            throw error.repositoryError(during: "chatts after")
        }
    }

    /// The number of chatts and the highest sequence number.
    public func version(before deadline: DispatchTime) async throws(RepositoryError) -> ChattsVersion {
        do {
            return try await pool.withSession(before: deadline.instant) { session throws(StoreError) in
                try await session.query(Self.versionSQL).chattsVersion()
            }
        } catch {
            throw error.repositoryError(during: "version")
        }
    }

    /// Succeeds when the database answers a trivial query by `deadline`.
    public func ping(before deadline: DispatchTime) async throws(RepositoryError) {
        do {
            try await pool.withSession(before: deadline.instant) { session throws(StoreError) in
                _ = try await session.query(Self.pingSQL)
            }
        } catch {
            throw error.repositoryError(during: "ping")
        }
    }
}
