import Dispatch
import Foundation
import HTTPServer
import Logging

/// Reloads the server's certificate and key on request (SIGHUP), and warns in the log while the serving
/// certificate is within `warningDays` of expiring: at start, after each reload and once a day.
final class CertificateWatch: Sendable {
    /// How close to expiry the warning starts.
    static let warningDays = 30.0
    private static let checkIntervalSeconds = 24 * 3600.0

    private let server: Server
    private let logger: Logger
    private let queue = DispatchQueue(label: "chatterd.certificates")

    init(server: Server, logger: Logger) {
        self.server = server
        self.logger = logger
    }

    /// Checks the expiry now, and again every day.
    func start() {
        queue.async { self.checkDaily() }
    }

    /// Loads the pair again; a pair that cannot be loaded is refused with an error line, and the old one stays.
    func reload() {
        queue.async {
            do {
                guard let notAfter = try self.server.reloadCertificate() else {
                    self.logger.log(.info, "reload_skipped", ["reason": "plain HTTP: no certificate to reload"])
                    return
                }
                self.logger.log(.info, "certificate_reloaded", ["not_after": "\(Self.timestamp(notAfter))"])
                self.warnIfExpiring(notAfter)
            } catch {
                self.logger.log(.error, "certificate_reload_failed", ["cause": "\(error)", "action": "kept the old pair"])
            }
        }
    }

    private func checkDaily() {
        if let notAfter = server.certificateNotAfter { warnIfExpiring(notAfter) }
        queue.asyncAfter(deadline: .now() + Self.checkIntervalSeconds) { self.checkDaily() }
    }

    private func warnIfExpiring(_ notAfter: Double) {
        let daysLeft = (notAfter - Date().timeIntervalSince1970) / 86_400
        guard daysLeft < Self.warningDays else { return }
        logger.log(.warn, "certificate_expiring", [
            "not_after": "\(Self.timestamp(notAfter))", "days_left": .integer(Int(daysLeft.rounded(.down))),
        ])
    }

    private static func timestamp(_ seconds: Double) -> String {
        ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: seconds))
    }
}
