@testable import ChatterdKit
import Foundation
import Testing
import TestSupport

/// `--admin-token-file`: only its owner may read it, and a reload that fails keeps the tokens in force.
@Suite struct AdminTokenFileTests {
    private func file(_ text: String, mode: Int) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tokens-\(UUID())").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    private func rewrite(_ path: String, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
    }

    @Test func aFileOthersMayReadIsRefusedAndSaysWhy() throws {
        for mode in [0o644, 0o640, 0o604, 0o620] {
            let path = try file("alice:aaaaaaaaaaaaaaaa\n", mode: mode)
            defer { try? FileManager.default.removeItem(atPath: path) }
            #expect(throws: AdminTokenFile.Failure.self) { try AdminTokenFile(path: path) }
            do {
                _ = try AdminTokenFile.load(path)
            } catch {
                #expect(error.description.contains("chmod 600") && !error.description.contains("aaaa"))
            }
        }
        #expect(throws: AdminTokenFile.Failure.self) { try AdminTokenFile(path: "/nonexistent/tokens") }
    }

    @Test func aReloadTakesTheNewTokensAndABrokenFileKeepsTheOld() throws {
        let path = try file("alice:aaaaaaaaaaaaaaaa\n", mode: 0o600)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let tokens = try AdminTokenFile(path: path)
        let pipe = LogPipe()
        let logger = pipe.logger()
        #expect(tokens.current.moderator(presenting: Array("aaaaaaaaaaaaaaaa".utf8)) == "alice")
        try rewrite(path, "bob:bbbbbbbbbbbbbbbb\n")
        tokens.reload(logger: logger)
        #expect(pipe.lines(1).first?.contains("event=admin_tokens_reloaded") == true)
        #expect(tokens.current.moderator(presenting: Array("bbbbbbbbbbbbbbbb".utf8)) == "bob")
        #expect(tokens.current.moderator(presenting: Array("aaaaaaaaaaaaaaaa".utf8)) == nil)
        try rewrite(path, "carol:short\n")
        tokens.reload(logger: logger)
        let line = try #require(pipe.lines(1).first)
        #expect(line.contains("event=admin_tokens_reload_failed") && !line.contains("short"))
        #expect(tokens.current.moderator(presenting: Array("bbbbbbbbbbbbbbbb".utf8)) == "bob")
    }
}
