@testable import ChatterClient
import Testing

/// `chatter delete ID --reason TEXT`: where the token comes from, what is refused, and the request sent.
@Suite struct DeleteCommandTests {
    static let id = "3f2b0c9e-8a4d-4f7e-9a51-2c6d1e0b7a11"

    func parse(_ words: [String], env: [String: String] = [:], files: [String: String] = [:]) throws(ClientError)
        -> ChatterCommand
    {
        try ChatterCommand.parse(words, environment: env, fileExists: { _ in false }, readFile: { files[$0] })
    }

    func usage(_ words: [String], env: [String: String] = [:], files: [String: String] = [:]) -> String? {
        do {
            _ = try parse(words, env: env, files: files)
            return nil
        } catch {
            guard case .usage(let text) = error else { return "not a usage error: \(error)" }
            return text
        }
    }

    @Test func theTokenComesFromTheFilesFirstLineElseTheEnvironment() throws {
        let file = "# moderators\nalice:token-of-alice-0123\nbob:token-of-bob-0123456\n"
        let fromFile = try parse(
            ["delete", Self.id.uppercased(), "--reason", "spam", "--admin-token-file", "/t"], files: ["/t": file])
        guard case .delete(let delete, _) = fromFile else { Issue.record("not a delete"); return }
        #expect(delete == DeleteCommand(id: Self.id, reason: "spam", token: "token-of-alice-0123"))
        let fromEnvironment = try parse(["delete", Self.id, "--reason", "spam"], env: ["CHATTER_ADMIN_TOKEN": "env"])
        guard case .delete(let viaEnvironment, _) = fromEnvironment else { Issue.record("not a delete"); return }
        #expect(viaEnvironment.token == "env")
    }

    @Test func whatIsMissingOrMalformedIsAUsageError() {
        let env = ["CHATTER_ADMIN_TOKEN": "t"]
        #expect(usage(["delete", "--reason", "x"], env: env) == "delete needs the id of the chatt to remove")
        #expect(usage(["delete", "nope", "--reason", "x"], env: env) == "nope is not a chatt id (a UUID)")
        #expect(usage(["delete", Self.id], env: env) == "delete needs --reason")
        #expect(usage(["delete", Self.id, "--reason", "x"])?.contains("CHATTER_ADMIN_TOKEN") == true)
        let missing = usage(["delete", Self.id, "--reason", "x", "--admin-token-file", "/missing"])
        #expect(missing?.contains("cannot read") == true)
        #expect(usage(["delete", Self.id, Self.id, "--reason", "x"], env: env)?.contains("unexpected argument") == true)
        #expect(usage(["get", "extra"])?.contains("unexpected argument extra") == true)
        #expect(usage(["post", "--name", "n", "--message", "m", "--reason", "x"])?.contains("not an option") == true)
    }

    @Test func theRequestIsADeleteWithTheReasonAndTheBearerToken() throws {
        let command = try parse(
            ["delete", Self.id, "--reason", #"spam "and" more"#, "--server", "https://example.org/base"],
            env: ["CHATTER_ADMIN_TOKEN": "tok"])
        var seen: HTTPClientRequest?
        let output = try ChatterRunner.run(command) { (request, _) throws(ClientError) in
            seen = request
            return response(200, "{}")
        }
        #expect(output == ChatterRunner.Output(text: "", warnings: []))
        let text = seen.map { String(decoding: $0.bytes, as: UTF8.self) } ?? ""
        #expect(text.hasPrefix("DELETE /base/chatts/\(Self.id) HTTP/1.1\r\n"))
        #expect(text.contains("\r\nAuthorization: Bearer tok\r\n"))
        #expect(text.hasSuffix(#"{"reason":"spam \"and\" more"}"#))
        #expect(throws: ClientError.httpStatus(code: 404, reason: "no such chatt")) {
            try ChatterRunner.run(command) { (_, _) throws(ClientError) in
                response(404, #"{"error":"no such chatt"}"#)
            }
        }
    }
}
