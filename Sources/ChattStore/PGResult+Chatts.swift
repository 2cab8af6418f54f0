import ChattModel

/// The columns of every query that returns chatts, in their wire forms, which the server makes: `id::text` is the
/// lower-case canonical UUID, and to_char renders UTC with exactly six fractional digits.
enum ChattColumns {
    static let list = """
        seq, name, message, id::text AS id,
        to_char(time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS timestamp, geodata
        """
}

extension PGResult {
    /// The rows as chatts with their sequence numbers, in the result's order; rows whose `seq` is NULL (an outer
    /// join's empty side) are left out.
    func sequencedChatts() throws(StoreError) -> [SequencedChatt] {
        let seq = try columnIndex(named: "seq")
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
            chatts.append(SequencedChatt(sequence: sequence, chatt: StoredChatt(
                name: try requiredString(row: row, column: name, name: "name"),
                message: try requiredString(row: row, column: message, name: "message"),
                id: try requiredString(row: row, column: id, name: "id"),
                timestamp: try requiredString(row: row, column: timestamp, name: "timestamp"),
                geodata: string(row: row, column: geodata)
            )))
        }
        return chatts
    }

    /// The version in the first row's `count` and `last` columns.
    func chattsVersion() throws(StoreError) -> ChattsVersion {
        let count = try columnIndex(named: "count")
        let last = try columnIndex(named: "last")
        guard rowCount >= 1,
            let countValue = Int(try requiredString(row: 0, column: count, name: "count")),
            let lastValue = Int64(try requiredString(row: 0, column: last, name: "last"))
        else { throw StoreError(.decodingFailed(column: "count")) }
        return ChattsVersion(count: countValue, lastSequence: lastValue)
    }
}
