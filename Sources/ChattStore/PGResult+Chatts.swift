import ChattModel

/// The columns of every query that returns chatts, in their wire forms, which the server makes: `id::text` is the
/// lower-case canonical UUID, and to_char renders UTC with exactly six fractional digits.
enum ChattColumns {
    static let list = """
        seq, position, name, message, id::text AS id,
        to_char(time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS timestamp, geodata
        """
}

/// The commit clock (migrations/0005) as the queries that return it name its columns.
enum ClockColumns {
    static let list = "chatts_clock.epoch AS epoch, chatts_clock.last AS clock"
}

extension PGResult {
    /// The rows as chatts with their sequence numbers and commit counters, in the result's order; rows whose `seq`
    /// is NULL (an outer join's empty side) are left out. A NULL position (a row of the reading transaction's own,
    /// numbered only at its commit) reads as 0.
    func sequencedChatts() throws(StoreError) -> [SequencedChatt] {
        let seq = try columnIndex(named: "seq")
        let position = try columnIndex(named: "position")
        let name = try columnIndex(named: "name")
        let message = try columnIndex(named: "message")
        let id = try columnIndex(named: "id")
        let timestamp = try columnIndex(named: "timestamp")
        let geodata = try columnIndex(named: "geodata")
        var chatts: [SequencedChatt] = []
        chatts.reserveCapacity(rowCount)
        for row in 0..<rowCount {
            guard let text = string(row: row, column: seq) else { continue }
            guard let sequence = Int64(text) else { throw StoreError(.decodingFailed(column: "seq")) }
            guard let commit = Int64(string(row: row, column: position) ?? "0") else {
                throw StoreError(.decodingFailed(column: "position"))
            }
            chatts.append(SequencedChatt(sequence: sequence, chatt: StoredChatt(
                name: try requiredString(row: row, column: name, name: "name"),
                message: try requiredString(row: row, column: message, name: "message"),
                id: try requiredString(row: row, column: id, name: "id"),
                timestamp: try requiredString(row: row, column: timestamp, name: "timestamp"),
                geodata: string(row: row, column: geodata)
            ), commit: commit))
        }
        return chatts
    }

    /// The version in the first row's `count`, `last`, `epoch` and `clock` columns.
    func chattsVersion() throws(StoreError) -> ChattsVersion {
        let count = try columnIndex(named: "count")
        let last = try columnIndex(named: "last")
        guard rowCount >= 1,
            let countValue = Int(try requiredString(row: 0, column: count, name: "count")),
            let lastValue = Int64(try requiredString(row: 0, column: last, name: "last"))
        else { throw StoreError(.decodingFailed(column: "count")) }
        return ChattsVersion(count: countValue, lastSequence: lastValue, position: try commitPosition())
    }

    /// The first row's `epoch`.
    func epoch() throws(StoreError) -> Int64 {
        let epoch = try columnIndex(named: "epoch")
        guard rowCount >= 1, let value = Int64(try requiredString(row: 0, column: epoch, name: "epoch")) else {
            throw StoreError(.decodingFailed(column: "epoch"))
        }
        return value
    }

    /// The clock in the first row's `epoch` and `clock` columns (`ClockColumns`).
    func commitPosition() throws(StoreError) -> CommitPosition {
        let epochValue = try epoch()
        let clock = try columnIndex(named: "clock")
        guard rowCount >= 1,
            let clockValue = Int64(try requiredString(row: 0, column: clock, name: "clock"))
        else { throw StoreError(.decodingFailed(column: "clock")) }
        return CommitPosition(epoch: epochValue, count: clockValue)
    }
}
