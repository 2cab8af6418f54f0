import Foundation

/// A throwaway self-signed certificate and key for loopback TLS tests, made with the openssl CLI.
/// Its directory goes when the last test holding it does (a class, so there is one owner to clean up).
final class TestCertificate: Sendable {
    let directory: URL
    var certificatePath: String { directory.appendingPathComponent("test.crt").path }
    var keyPath: String { directory.appendingPathComponent("test.key").path }

    private init(directory: URL) {
        self.directory = directory
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    static func make(commonName: String = "localhost") throws -> TestCertificate {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chatterd-test-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificate = TestCertificate(directory: directory)
        try run("/usr/bin/openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-days", "2", "-nodes",
            "-subj", "/CN=\(commonName)", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-keyout", certificate.keyPath, "-out", certificate.certificatePath,
        ])
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: certificate.keyPath)
        return certificate
    }

    /// Overwrites this certificate's files with `other`'s pair (what an operator does before a reload).
    func replace(with other: TestCertificate) throws {
        for (from, to) in [(other.certificatePath, certificatePath), (other.keyPath, keyPath)] {
            try Data(contentsOf: URL(fileURLWithPath: from)).write(to: URL(fileURLWithPath: to))
        }
    }

    /// Overwrites this certificate's key file with `path`'s contents.
    func replaceKey(with path: String) throws {
        try Data(contentsOf: URL(fileURLWithPath: path)).write(to: URL(fileURLWithPath: keyPath))
    }

    /// A second, unrelated key (for mismatch tests).
    func makeOtherKey() throws -> String {
        let path = directory.appendingPathComponent("other.key").path
        try Self.run("/usr/bin/openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path])
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        return path
    }

    /// A self-signed certificate for this key that was valid only in January 2020
    /// (`openssl req` cannot back-date; `openssl ca -selfsign` can).
    func makeExpiredCertificate() throws -> String {
        let work = directory.appendingPathComponent("expired-ca")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let request = work.appendingPathComponent("request.csr").path
        let certificate = directory.appendingPathComponent("expired.crt").path
        try Data().write(to: work.appendingPathComponent("index.txt"))
        try Data("01\n".utf8).write(to: work.appendingPathComponent("serial"))
        let config = """
            [ca]
            default_ca = d
            [d]
            database = \(work.path)/index.txt
            serial = \(work.path)/serial
            new_certs_dir = \(work.path)
            default_md = sha256
            policy = p
            [p]
            commonName = supplied
            """
        try Data(config.utf8).write(to: work.appendingPathComponent("ca.cnf"))
        try Self.run("/usr/bin/openssl", ["req", "-new", "-key", keyPath, "-subj", "/CN=localhost", "-out", request])
        try Self.run("/usr/bin/openssl", [
            "ca", "-batch", "-config", work.appendingPathComponent("ca.cnf").path, "-selfsign", "-keyfile", keyPath,
            "-in", request, "-startdate", "20200101000000Z", "-enddate", "20200201000000Z", "-out", certificate,
        ])
        return certificate
    }

    static func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "\(executable) failed"])
        }
    }
}
