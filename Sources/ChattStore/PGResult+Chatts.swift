import ChattModel

/// The columns of every query that returns chatts, in their wire forms, which the server makes: `id::text` is the
/// lower-case canonical UUID, and to_char renders UTC with exactly six fractional digits.
enum ChattColumns {
    static let list = """
        seq, name, message, id::text AS id,
        to_char(time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS timestamp, geodata
        """
}

/// A tick of the change log (migrations/0006) as the queries that return one name its columns.
enum TickColumns {
    static let list = "chatts_ticks.tick AS tick, chatts_ticks.token AS token, chatts_ticks.epoch AS epoch"
}

extension PGResult {
    /// The rows as chatts with their sequence numbers, in the result's order; rows whose `seq` is NULL (an outer
    /// join's empty side) are left out.
    func sequencedChatts() throws(StoreError) -> [SequencedChatt] {
        let columns = try ChattColumnIndexes(self)
        var chatts: [SequencedChatt] = []
        chatts.reserveCapacity(rowCount)
        for row in 0..<rowCount {
            if let chatt = try columns.chatt(in: self, row: row) { chatts.append(chatt) }
        }
        return chatts
    }

    /// The ticks of `TickColumns`, each with the events beside it, in the result's order (migrations/0007's
    /// `chatts_events`): a row whose `removed` is true is a removal, and one whose `seq` is NULL a tick with no event.
    func tickChatts() throws(StoreError) -> [TickChatts] {
        let columns = try ChattColumnIndexes(self)
        let ticks = try TickColumnIndexes(self)
        let removed = try columnIndex(named: "removed")
        let chattSeq = try columnIndex(named: "chatt_seq")
        var read: [TickChatts] = []
        for row in 0..<rowCount {
            let tick = try ticks.tick(in: self, row: row)
            if read.last?.tick != tick { read.append(TickChatts(tick: tick, chatts: [])) }
            if string(row: row, column: removed) == "t" {
                read[read.count - 1].removals.append(try columns.removal(in: self, row: row, chattSeq: chattSeq))
            } else if let chatt = try columns.chatt(in: self, row: row) {
                read[read.count - 1].chatts.append(chatt)
            }
        }
        return read
    }

    /// The tick in the first row's `TickColumns`.
    func logTick() throws(StoreError) -> LogTick {
        guard rowCount >= 1 else { throw StoreError(.decodingFailed(column: "tick")) }
        return try TickColumnIndexes(self).tick(in: self, row: 0)
    }

    /// The newest tick, which every row of `chatts_events_after` names (its `newest_` columns).
    func newestTick() throws(StoreError) -> LogTick {
        guard rowCount >= 1 else { throw StoreError(.decodingFailed(column: "newest_tick")) }
        return try TickColumnIndexes(self, prefix: "newest_").tick(in: self, row: 0)
    }

    /// How many rows the statement wrote (`INSERT 0 n`); nil for a statement that writes none.
    var rowsAffected: Int? {
        Int(commandTuples)
    }
}

/// Where a result's chatt columns are, found once for all its rows.
private struct ChattColumnIndexes {
    let seq, name, message, id, timestamp, geodata: Int

    init(_ result: PGResult) throws(StoreError) {
        seq = try result.columnIndex(named: "seq")
        name = try result.columnIndex(named: "name")
        message = try result.columnIndex(named: "message")
        id = try result.columnIndex(named: "id")
        timestamp = try result.columnIndex(named: "timestamp")
        geodata = try result.columnIndex(named: "geodata")
    }

    /// The chatt in `row`; nil when its `seq` is NULL.
    func chatt(in result: PGResult, row: Int) throws(StoreError) -> SequencedChatt? {
        guard let text = result.string(row: row, column: seq) else { return nil }
        let sequence = try Self.integer(text, "seq")
        return SequencedChatt(sequence: sequence, chatt: StoredChatt(
            name: try result.requiredString(row: row, column: name, name: "name"),
            message: try result.requiredString(row: row, column: message, name: "message"),
            id: try result.requiredString(row: row, column: id, name: "id"),
            timestamp: try result.requiredString(row: row, column: timestamp, name: "timestamp"),
            geodata: result.string(row: row, column: geodata)))
    }

    /// The removal in `row`: its own `seq`, and the chatt's id, `timestamp`, sequence number (`chattSeq`) and
    /// `geodata` (migrations/0009).
    func removal(in result: PGResult, row: Int, chattSeq: Int) throws(StoreError) -> RemovedChatt {
        let sequence = try Self.integer(try result.requiredString(row: row, column: seq, name: "seq"), "seq")
        let chattSequence = try Self.integer(
            try result.requiredString(row: row, column: chattSeq, name: "chatt_seq"), "chatt_seq")
        return RemovedChatt(
            sequence: sequence, id: try result.requiredString(row: row, column: id, name: "id"),
            position: FeedPosition(
                timestamp: try result.requiredString(row: row, column: timestamp, name: "timestamp"),
                sequence: chattSequence),
            geodata: result.string(row: row, column: geodata))
    }

    private static func integer(_ text: String, _ column: String) throws(StoreError) -> Int64 {
        guard let value = Int64(text) else { throw StoreError(.decodingFailed(column: column)) }
        return value
    }
}

/// Where a result's tick columns are.
private struct TickColumnIndexes {
    let tick, token, epoch: Int

    init(_ result: PGResult, prefix: String = "") throws(StoreError) {
        tick = try result.columnIndex(named: prefix + "tick")
        token = try result.columnIndex(named: prefix + "token")
        epoch = try result.columnIndex(named: prefix + "epoch")
    }

    func tick(in result: PGResult, row: Int) throws(StoreError) -> LogTick {
        guard let tickValue = Int64(try result.requiredString(row: row, column: tick, name: "tick")) else {
            throw StoreError(.decodingFailed(column: "tick"))
        }
        // The store's tokens are 48 random bits, never negative.
        guard let tokenValue = UInt64(try result.requiredString(row: row, column: token, name: "token")) else {
            throw StoreError(.decodingFailed(column: "token"))
        }
        guard let epochValue = Int64(try result.requiredString(row: row, column: epoch, name: "epoch")) else {
            throw StoreError(.decodingFailed(column: "epoch"))
        }
        return LogTick(tick: tickValue, token: tokenValue, epoch: epochValue)
    }
}
