import ChattAPI
import Foundation
import Locking
import Logging

/// The moderators' token file (`--admin-token-file`): read at start, where a file that others may read or that
/// does not parse stops the server, and again on SIGHUP, where either keeps the tokens in force. Its tokens are
/// never logged.
final class AdminTokenFile: Sendable {
    let path: String
    private let tokens: Locked<AdminTokens>

    /// Why the file cannot be used.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init(path: String) throws(Failure) {
        self.path = path
        tokens = Locked(try Self.load(path))
    }

    /// The tokens in force.
    var current: AdminTokens {
        tokens.withLock { $0 }
    }

    /// Reads the file again; one that cannot be used is refused with an error line, and the tokens in force stay.
    func reload(logger: Logger) {
        do throws(Failure) {
            let loaded = try Self.load(path)
            tokens.withLock { $0 = loaded }
            logger.log(.info, "admin_tokens_reloaded", ["file": "\(path)"])
        } catch {
            logger.log(.error, "admin_tokens_reload_failed", [
                "file": "\(path)", "cause": "\(error)", "action": "kept the tokens in force",
            ])
        }
    }

    /// The tokens of the file at `path`, a regular file that neither its group nor others may read or write.
    static func load(_ path: String) throws(Failure) -> AdminTokens {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw Failure(description: "\(path): \(String(cString: strerror(errno)))")
        }
        guard status.st_mode & S_IFMT == S_IFREG else { throw Failure(description: "\(path): not a regular file") }
        let mode = status.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw Failure(description: "\(path): mode \(String(mode, radix: 8)), must be readable by its owner only "
                + "(chmod 600)")
        }
        guard let data = FileManager.default.contents(atPath: path), let text = String(validating: data, as: UTF8.self)
        else { throw Failure(description: "\(path): unreadable, or not UTF-8") }
        do {
            return try AdminTokens(parsing: text)
        } catch {
            throw Failure(description: "\(path): \(error)")
        }
    }
}
