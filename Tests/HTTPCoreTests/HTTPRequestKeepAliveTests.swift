import HTTPCore
import Testing

/// Whether a connection persists after a request (RFC 9112 §9.3).
@Suite struct HTTPRequestKeepAliveTests {
    struct Row: Sendable, CustomTestStringConvertible {
        let version: HTTPVersion
        let connection: [String]
        let keepAlive: Bool
        var testDescription: String { "\(version) Connection: \(connection)" }
    }

    static let rows: [Row] = [
        Row(version: .http1_1, connection: [], keepAlive: true),
        Row(version: .http1_1, connection: ["close"], keepAlive: false),
        Row(version: .http1_1, connection: ["Close"], keepAlive: false),
        Row(version: .http1_1, connection: ["keep-alive"], keepAlive: true),
        Row(version: .http1_1, connection: ["keep-alive, close"], keepAlive: false),
        Row(version: .http1_1, connection: ["upgrade", " close "], keepAlive: false),
        Row(version: .http1_1, connection: ["closed"], keepAlive: true),
        Row(version: .http1_0, connection: [], keepAlive: false),
        Row(version: .http1_0, connection: ["keep-alive"], keepAlive: true),
        Row(version: .http1_0, connection: ["Keep-Alive"], keepAlive: true),
        Row(version: .http1_0, connection: ["foo,\tkeep-alive"], keepAlive: true),
        Row(version: .http1_0, connection: ["keep-alive", "close"], keepAlive: false),
        Row(version: .http1_0, connection: ["close"], keepAlive: false),
    ]

    @Test(arguments: rows) func keepAlive(_ row: Row) {
        let headers = HTTPHeaders(row.connection.map { ("Connection", $0) })
        let request = HTTPRequest(method: .GET, target: "/", path: "/", version: row.version, headers: headers)
        #expect(request.keepAlive == row.keepAlive)
    }
}
