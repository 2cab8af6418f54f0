@testable import ChattStore
import Testing

@Suite struct ConnectionParametersTests {
    static let safetyKeywords = ["connect_timeout", "keepalives", "keepalives_idle", "keepalives_interval",
                                 "keepalives_count", "tcp_user_timeout", "application_name",
                                 "target_session_attrs"]

    @Test(arguments: [
        "",
        "postgresql:///chatterd?host=/tmp/pg&port=5441&user=postgres",
        "postgres://u@db.example:6543/chatterd",
        "host=/tmp/pg port=5441 dbname=chatterd user=postgres",
    ])
    func everyConninfoFormGetsTheSafetySettings(conninfo: String) throws {
        let parameters = try ConnectionParameters(conninfo: conninfo, statementTimeout: .seconds(5))
        #expect(parameters.value(for: "connect_timeout") == "3")
        #expect(parameters.value(for: "keepalives") == "1")
        #expect(parameters.value(for: "keepalives_idle") == "10")
        #expect(parameters.value(for: "keepalives_interval") == "5")
        #expect(parameters.value(for: "keepalives_count") == "3")
        #expect(parameters.value(for: "tcp_user_timeout") == "10000")
        #expect(parameters.value(for: "application_name") == "chatterd")
        #expect(parameters.value(for: "target_session_attrs") == "read-write")
        #expect(parameters.value(for: "options")
            == "-c statement_timeout=5000 -c idle_in_transaction_session_timeout=10000")
        #expect(Set(parameters.keywords).count == parameters.keywords.count, "no keyword twice")
    }

    @Test func uriPartsAreKept() throws {
        let parameters = try ConnectionParameters(
            conninfo: "postgresql://alice@db.example:6543/chatterd?sslmode=require", statementTimeout: .seconds(5))
        #expect(parameters.value(for: "host") == "db.example")
        #expect(parameters.value(for: "port") == "6543")
        #expect(parameters.value(for: "user") == "alice")
        #expect(parameters.value(for: "dbname") == "chatterd")
        #expect(parameters.value(for: "sslmode") == "require")
    }

    @Test func explicitSettingsWin() throws {
        let parameters = try ConnectionParameters(
            conninfo: "dbname=x connect_timeout=7 application_name=chatterd-blue target_session_attrs=any",
            statementTimeout: .seconds(5))
        #expect(parameters.value(for: "connect_timeout") == "7")
        #expect(parameters.value(for: "target_session_attrs") == "any")
        #expect(parameters.value(for: "application_name") == "chatterd-blue")
    }

    @Test func operatorOptionsComeAfterOursSoTheyWin() throws {
        let parameters = try ConnectionParameters(
            conninfo: "dbname=x options='-c statement_timeout=0'", statementTimeout: .milliseconds(1500))
        #expect(parameters.value(for: "options")
            == "-c statement_timeout=1500 -c idle_in_transaction_session_timeout=10000 -c statement_timeout=0")
    }

    @Test func invalidConninfoIsReportedWithoutQuotingIt() {
        let error = caught { () throws(StoreError) in
            _ = try ConnectionParameters(conninfo: "host=x password=s3cret bogus", statementTimeout: .seconds(5))
        }
        #expect(error?.code == .invalidConninfo)
        #expect(error.map { !$0.debugDescription.contains("s3cret") } == true)
    }

    @Test func cArraysAreNullTerminatedAndPaired() throws {
        let parameters = try ConnectionParameters(conninfo: "dbname=x", statementTimeout: .seconds(5))
        let pairs = parameters.withCArrays { keywords, values in
            var pairs: [(String, String)] = []
            var index = 0
            while let keyword = keywords[index] {
                pairs.append((String(cString: keyword), values[index].map { String(cString: $0) } ?? "<nil>"))
                index += 1
            }
            #expect(values[index] == nil)
            return pairs
        }
        #expect(pairs.map(\.0) == parameters.keywords)
        #expect(pairs.map(\.1) == parameters.values)
    }

    @Test func theListenerGivesUpASilentConnectionWithinSeconds() throws {
        let parameters = try ConnectionParameters(
            conninfo: "dbname=x", statementTimeout: .seconds(5), liveness: .listening)
        #expect(parameters.value(for: "tcp_user_timeout") == "3000")
        #expect(parameters.value(for: "keepalives_idle") == "2")
        #expect(parameters.value(for: "keepalives_interval") == "1")
        #expect(parameters.value(for: "keepalives_count") == "2")
        #expect(parameters.value(for: "connect_timeout") == "3")
        #expect(Set(parameters.keywords).count == parameters.keywords.count, "no keyword twice")
        let explicit = try ConnectionParameters(
            conninfo: "dbname=x tcp_user_timeout=9000", statementTimeout: .seconds(5), liveness: .listening)
        #expect(explicit.value(for: "tcp_user_timeout") == "9000")
    }

    @Test func withoutServerOptionsLeavesOutOnlyOptions() throws {
        let parameters = try ConnectionParameters(conninfo: "dbname=x", statementTimeout: .seconds(5))
        let fallback = try #require(parameters.withoutServerOptions)
        #expect(fallback.value(for: "options") == nil)
        #expect(fallback.keywords == parameters.keywords.filter { $0 != "options" })
        #expect(fallback.value(for: "dbname") == "x")
        #expect(fallback.withoutServerOptions == nil)
    }

    @Test func onlyPgBouncersRefusalOfOptionsIsRetried() {
        #expect(ConnectionParameters.refusesOptions(
            "connection to server at \"10.0.0.20\", port 6432 failed: FATAL:  unsupported startup parameter: options"))
        #expect(!ConnectionParameters.refusesOptions("FATAL:  unsupported startup parameter: extra_float_digits"))
        #expect(!ConnectionParameters.refusesOptions("FATAL:  password authentication failed for user \"x\""))
    }
}
