import ChattModel

/// bench/viewport.sh's comparator, "PostGIS through chatterd" (`serve --bbox-in-database`): a box is evaluated in
/// PostgreSQL, by the GiST index on the `geom` column that bench/sql/postgis.sql adds, and chatterd slices the rows
/// it names from its feed. Not for production: a store without that column answers every box with an error.
extension PostgresChattRepository {
    /// The ids of the chatts located in the box `west`…`east` (across the antimeridian when `west > east`),
    /// `south`…`north`, edges included: the first `limit` in feed order, or the last when `newest`, in no order.
    public func idsInBox(
        west: Double, south: Double, east: Double, north: Double, limit: Int, newest: Bool,
        before deadline: ContinuousClock.Instant
    ) async throws(RepositoryError) -> [String] {
        let statement = Self.boxStatements[(west > east ? 2 : 0) + (newest ? 1 : 0)]
        let parameters = [west, south, east, north].map { String($0) } + [String(limit)]
        do {
            return try await pool.withSession(before: deadline) { session throws(StoreError) in
                let result = try await session.query(statement, parameters)
                return (0..<result.rowCount).compactMap { result.string(row: $0, column: 0) }
            }
        } catch {
            throw error.repositoryError(during: "box in database")
        }
    }

    /// By index: within the longitudes or across the antimeridian (2), oldest or newest first (+1). The envelope
    /// finds candidates by the index's float4 boxes; the doubles decide, as `BoundingBox.contains` does.
    static let boxStatements = [false, true].flatMap { across in
        [false, true].map { newest in
            let longitudes = across
                ? "(geom && ST_MakeEnvelope($1, $2, 180, $4, 4326) OR geom && ST_MakeEnvelope(-180, $2, $3, $4, 4326))"
                    + " AND (ST_X(geom) >= $1 OR ST_X(geom) <= $3)"
                : "geom && ST_MakeEnvelope($1, $2, $3, $4, 4326) AND ST_X(geom) BETWEEN $1 AND $3"
            let order = newest ? "time DESC, seq DESC" : "time, seq"
            return PreparedStatement(
                name: "chatts_box_\(across ? "across" : "within")_\(newest ? "newest" : "first")",
                sql: "SELECT id FROM chatts WHERE \(longitudes) AND ST_Y(geom) BETWEEN $2 AND $4"
                    + " ORDER BY \(order) LIMIT $5")
        }
    }
}
