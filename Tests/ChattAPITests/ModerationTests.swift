import ChattAPI
import ChattFeed
import ChattModel
import HTTPCore
import JSON
import Testing
import TestSupport

/// `DELETE /chatts/<id>`: who may remove, what is refused and in which order, and what the store is told.
@Suite struct ModerationTests {
    static let token = "moderator-token-0123456789"
    static let tokens = try! AdminTokens(parsing: "# moderators\nalice:\(token)\n\nbob:other-token-abcdefghijk\n")

    let repository = InMemoryChattRepository()

    func router(tokens: AdminTokens? = Self.tokens) -> ChattRouter {
        var moderators: (@Sendable () -> AdminTokens)?
        if let tokens { moderators = { tokens } }
        return ChattRouter(feed: ChattFeed(repository: repository), moderators: moderators)
    }

    func remove(
        _ id: String, authorization: [String] = ["Bearer \(token)"], body: String = #"{"reason":"spam"}"#,
        method: HTTPMethod = .DELETE, path: String? = nil, by router: ChattRouter? = nil
    ) -> HTTPResponse {
        let path = path ?? "/chatts/\(id)"
        let headers = HTTPHeaders(authorization.map { ("Authorization", $0) })
        let request = HTTPRequest(method: method, target: path, path: path, headers: headers, body: Array(body.utf8))
        return (router ?? self.router()).respond(to: request)
    }

    func error(_ response: HTTPResponse) -> String? {
        guard let value = try? JSONParser.parse(response.body.bytes), case .string(let reason)? = value["error"]
        else { return nil }
        return reason
    }

    func posted() async throws -> String {
        try await repository.add(NewChatt(name: "n", message: "m"))
        return try #require(repository.chatts.last?.id)
    }

    @Test func aListedTokenRemovesTheChattAndTheStoreRecordsWhoAndWhy() async throws {
        let id = try await posted()
        let response = remove(id)
        #expect(response.status == .ok && response.body.bytes == Array("{}".utf8))
        #expect(response.route == "/chatts/{id}")
        #expect(repository.chatts.isEmpty)
        #expect(repository.removers.map(\.moderator) == ["alice"] && repository.removers.map(\.reason) == ["spam"])
        // Again, in upper case and with a trailing slash: the same chatt, gone.
        #expect(remove(id.uppercased(), path: "/chatts/\(id.uppercased())/").status == .notFound)
    }

    @Test func refusalsComeInOrderNoTokenFileThenTokenThenIdThenBody() async throws {
        let id = try await posted()
        let unconfigured = remove("not-a-uuid", authorization: [], by: router(tokens: nil))
        #expect(unconfigured.status == .forbidden && error(unconfigured) != nil)
        for authorization in [[], ["Bearer wrong-token-0123456789"], ["Basic \(Self.token)"], ["Bearer"],
            ["Bearer \(Self.token)", "Bearer \(Self.token)"], ["Bearer \(Self.token)x"],
            ["Bearer \(Self.token.dropLast())"]]
        {
            let response = remove("not-a-uuid", authorization: authorization, body: "")
            #expect(response.status == .unauthorized, "\(authorization)")
            #expect(response.headers["WWW-Authenticate"] == "Bearer" && error(response) != nil)
        }
        #expect(remove(id, authorization: ["bearer  \(Self.token)"]).status == .ok, "the scheme in any case")
        let badID = remove("not-a-uuid", body: "")
        #expect(badID.status == .badRequest && error(badID) == "the chatt id must be a UUID")
        let other = "00000000-0000-4000-8000-000000000999"
        let longReason = String(repeating: "é", count: 201)
        for body in ["", "{}", #"{"reason":""}"#, #"{"reason":7}"#, "[]", "{", #"{"reason":"\#(longReason)"}"#,
            #"{"reason":"a\u0000b"}"#]
        {
            #expect(remove(other, body: body).status == .badRequest, "\(body)")
        }
        #expect(remove(other, body: #"{"reason":"\#(String(repeating: "é", count: 200))"}"#).status == .notFound)
        #expect(repository.removers.count == 1)
    }

    @Test func otherMethodsAre405AndPathsBesideItAre404() {
        for method in [HTTPMethod.GET, .POST, .PUT, .HEAD] {
            let response = remove("00000000-0000-4000-8000-000000000001", method: method)
            #expect(response.status == .methodNotAllowed && response.headers["Allow"] == "DELETE", "\(method)")
        }
        for path in ["/chatts", "/chatts/", "/chatts//", "/chatts/a/b"] {
            #expect(remove("", path: path).status == .notFound, "\(path)")
        }
    }

    @Test func sinceARemovedChattAnswersTheChattsAfterItsPlaceWhereverItStood() async throws {
        for serial in 0..<30 { try await repository.add(NewChatt(name: "n", message: "m\(serial)")) }
        // Two of one microsecond, which only their sequence numbers order.
        for message in ["tie-a", "tie-b"] {
            repository.storeCommitted(NewChatt(name: "n", message: message), timestamp: "2026-03-25T08:11:59.200000Z")
        }
        let ids = Dictionary(uniqueKeysWithValues: repository.chatts.map { ($0.message, $0.id) })
        let router = router()
        func messages(since id: String) throws -> [String] {
            let request = HTTPRequest(
                method: .GET, target: "/getchatts?since=\(id)", path: "/getchatts", query: "since=\(id)")
            let response = router.respond(to: request)
            #expect(response.status == .ok, "\(error(response) ?? "")")
            guard case .array(let rows) = try JSONParser.parse(response.body.bytes) else { return [] }
            return rows.compactMap { row in
                guard case .array(let fields) = row, case .string(let message) = fields[1] else { return nil }
                return message
            }
        }
        _ = try messages(since: ids["m0"]!)
        // The first, a settled row, a tail row, and the first of the tie.
        for message in ["m0", "m10", "m27", "tie-a"] {
            #expect(remove(ids[message]!, by: router).status == .ok)
        }
        let remaining = (1..<30).map { "m\($0)" }.filter { $0 != "m10" && $0 != "m27" } + ["tie-b"]
        #expect(try messages(since: ids["m0"]!) == remaining)
        #expect(try messages(since: ids["m10"]!) == Array(remaining.drop { $0 != "m11" }))
        #expect(try messages(since: ids["m27"]!) == ["m28", "m29", "tie-b"])
        #expect(try messages(since: ids["tie-a"]!) == ["tie-b"], "the tie ordered by sequence number")
        let unknown = "00000000-0000-4000-8000-000000000999"
        let request = HTTPRequest(
            method: .GET, target: "/getchatts?since=\(unknown)", path: "/getchatts", query: "since=\(unknown)")
        #expect(router.respond(to: request).status == .notFound)
    }

    @Test func aStoreThatCannotAnswerIs503WithRetryAfter() async throws {
        let id = try await posted()
        repository.fail(with: .unavailable("down"))
        let response = remove(id)
        #expect(response.status == .serviceUnavailable && response.headers["Retry-After"] != nil)
    }
}

/// The token file's lines, and the comparison of a presented token.
@Suite struct AdminTokensTests {
    @Test func linesAreNameColonTokenAndTheRestIsRefusedByLineNumber() throws {
        let tokens = try AdminTokens(
            parsing: "alice:aaaaaaaaaaaaaaaa\r\n# comment\n  \nbob@example.org:b/+_-.~bbbbbbbbbbb==\n")
        #expect(tokens.moderator(presenting: Array("aaaaaaaaaaaaaaaa".utf8)) == "alice")
        #expect(tokens.moderator(presenting: Array("b/+_-.~bbbbbbbbbbb==".utf8)) == "bob@example.org")
        #expect(tokens.moderator(presenting: Array("aaaaaaaaaaaaaaa".utf8)) == nil)
        #expect(tokens.moderator(presenting: Array("aaaaaaaaaaaaaaaaa".utf8)) == nil)
        #expect(tokens.moderator(presenting: []) == nil)
        let cases: [(String, AdminTokens.ParseError)] = [
            ("", .noTokens), ("# only\n", .noTokens), ("alice\n", .malformedLine(1)),
            ("ok:aaaaaaaaaaaaaaaa\n:bbbbbbbbbbbbbbbb", .badName(2)), ("al ice:aaaaaaaaaaaaaaaa", .badName(1)),
            ("alice:short", .badToken(1)), ("alice:aaaaaaaa aaaaaaaa", .badToken(1)),
            ("alice:aaaaaaaaaaaaaaaa\nbob:aaaaaaaaaaaaaaaa", .repeatedToken(2)),
        ]
        for (text, expected) in cases {
            #expect(throws: expected, "\(text)") { try AdminTokens(parsing: text) }
        }
        #expect(!"\(AdminTokens.ParseError.badToken(3))".contains("short"), "no token in a message")
    }

    @Test func aBearerHeaderIsTheSchemeInAnyCaseSpacesAndOneToken() {
        #expect(AdminTokens.bearerToken("Bearer abc").map { Array($0) } == Array("abc".utf8))
        #expect(AdminTokens.bearerToken("BEARER   abc==").map { Array($0) } == Array("abc==".utf8))
        for value in ["Bearer", "Bearer ", "Bearerabc", "Basic abc", "Bearer a b", "Bearer ==", "Bearer abc\t"] {
            #expect(AdminTokens.bearerToken(value) == nil, "\(value)")
        }
    }
}
