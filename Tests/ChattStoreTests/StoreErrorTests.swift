import ChattModel
@testable import ChattStore
import Testing

@Suite struct StoreErrorTests {
    @Test(arguments: [
        // (SQLSTATE, expected kind, note)
        ("22001", RepositoryError.Kind.rejected, "string too long"),
        ("22021", .rejected, "invalid byte sequence"),
        ("22P05", .rejected, "untranslatable character"),
        ("23514", .rejected, "check constraint"),
        ("08006", .unavailable, "connection failure"),
        ("08001", .unavailable, "unable to connect"),
        ("53300", .unavailable, "too many connections"),
        ("53100", .unavailable, "disk full"),
        ("57014", .unavailable, "statement timeout"),
        ("57P01", .unavailable, "admin shutdown"),
        ("57P02", .unavailable, "crash shutdown"),
        ("57P03", .unavailable, "cannot connect now"),
        ("25006", .unavailable, "read-only session, as on a hot standby"),
        ("23505", .failed, "unique violation"),
        ("42P01", .failed, "undefined table"),
        ("57P04", .failed, "database dropped"),
        ("22P02", .failed, "invalid text representation"),
    ])
    func queryFailuresMapBySQLState(sqlState: String, kind: RepositoryError.Kind, note: String) {
        let error = StoreError(.queryFailed, sqlState: sqlState, detail: "server text")
        #expect(error.repositoryError.kind == kind, "\(note)")
    }

    @Test(arguments: [
        (StoreError.Code.connectFailed, RepositoryError.Kind.unavailable),
        (.connectionLost, .unavailable),
        (.backingOff, .unavailable),
        (.poolTimeout, .unavailable),
        (.poolClosed, .unavailable),
        (.queueFull, .unavailable),
        (.invalidParameter, .rejected),
        (.invalidConninfo, .failed),
        (.decodingFailed(column: "id"), .failed),
        (.queryFailed, .failed),
    ])
    func codesWithoutSQLStateMapByCode(code: StoreError.Code, kind: RepositoryError.Kind) {
        #expect(StoreError(code).repositoryError.kind == kind)
    }

    @Test func lostConnectionIsUnavailableWhateverTheServerSaid() {
        // The outcome of the statement is unknown, even if the server's last words carried a SQLSTATE.
        #expect(StoreError(.connectionLost, sqlState: "23514").repositoryError.kind == .unavailable)
    }

    @Test func descriptionIsGenericAndDebugDescriptionIsDetailed() {
        let error = StoreError(.queryFailed, sqlState: "42P01", detail: "relation \"chatts\" does not exist")
        #expect(error.description == "database query failed")
        #expect(error.debugDescription.contains("42P01"))
        #expect(error.debugDescription.contains("relation \"chatts\" does not exist"))
    }

    @Test func migrationErrorsNameTheFile() {
        let error = StoreError(.queryFailed, sqlState: "42601").relabelled(.migrationFailed(file: "0002_add_x.sql"))
        #expect(error.description.contains("0002_add_x.sql"))
        #expect(error.sqlState == "42601")
    }
}
