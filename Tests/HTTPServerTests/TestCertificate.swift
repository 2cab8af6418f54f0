import Foundation

/// A throwaway self-signed certificate and key for loopback TLS tests, made with the openssl CLI.
struct TestCertificate {
    let directory: URL
    var certificatePath: String { directory.appendingPathComponent("test.crt").path }
    var keyPath: String { directory.appendingPathComponent("test.key").path }

    static func make() throws -> TestCertificate {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chatterd-test-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificate = TestCertificate(directory: directory)
        try run("/usr/bin/openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-days", "2", "-nodes",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-keyout", certificate.keyPath, "-out", certificate.certificatePath,
        ])
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: certificate.keyPath)
        return certificate
    }

    /// A second, unrelated key (for mismatch tests).
    func makeOtherKey() throws -> String {
        let path = directory.appendingPathComponent("other.key").path
        try Self.run("/usr/bin/openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path])
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        return path
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
