import ChatterClient

#if canImport(Glibc)
    import Glibc
#endif

/// Entry point of `chatter`: parses the command line, runs the command, prints, and exits with its status.
@main
enum Chatter {
    /// Runs the command line's command; exits with its failure's status (see `chatter --help`).
    static func main() {
        // OpenSSL writes with write(): a server closing early must end in an error message, not SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        do {
            let command = try ChatterCommand.parse(
                Array(CommandLine.arguments.dropFirst()), environment: environment(),
                fileExists: { access($0, F_OK) == 0 }, readFile: readTextFile)
            let send: ChatterRunner.Send = { (request, options) throws(ClientError) in
                try HTTPExchange.perform(request, options: options)
            }
            if case .watch(let watch, let options) = command { try Self.watch(watch, options, send: send) }
            let output = try ChatterRunner.run(command, send: send)
            for warning in output.warnings { printError("chatter: warning: \(TerminalText.escaped(warning))") }
            print(output.text, terminator: "")
        } catch {
            printError("chatter: \(error)")
            exit(error.exitCode)
        }
    }

    /// Runs `chatter watch` until it fails: each chatt goes to stdout at once, notices to stderr.
    static func watch(_ command: GetCommand, _ options: ConnectionOptions, send: @escaping ChatterRunner.Send)
        throws(ClientError) -> Never
    {
        let effects = Watcher<SystemRandomNumberGenerator>.Effects(
            open: { (request, options) throws(ClientError) in
                try StreamingExchange(
                    request, options: options,
                    bodyTimeoutSeconds: WatchMachine<SystemRandomNumberGenerator>.silenceLimitSeconds)
            },
            send: send, sleep: sleep(seconds:), output: printOutput, notice: { printError("chatter: \($0)") })
        var watcher = Watcher(command, options: options, generator: SystemRandomNumberGenerator(), effects: effects)
        try watcher.run()
    }

    /// Writes `text` to stdout with write(2), so it is shown at once; exits quietly once stdout is closed
    /// (`chatter watch | head`).
    static func printOutput(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let count = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { exit(0) }
            bytes = bytes.dropFirst(count)
        }
    }

    /// The UTF-8 text of the file at `path` (up to 64 KiB), or nil when it cannot be read.
    static func readTextFile(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes = [UInt8](repeating: 0, count: 64 << 10)
        let count = fread(&bytes, 1, bytes.count, file)
        guard ferror(file) == 0 else { return nil }
        return String(validating: bytes[..<count], as: UTF8.self)
    }

    /// Sleeps for `seconds`, resuming after a signal until the whole time has passed.
    static func sleep(seconds: Double) {
        let whole = seconds.rounded(.down)
        var wait = timespec(tv_sec: Int(whole), tv_nsec: Int((seconds - whole) * 1e9))
        var left = timespec()
        while nanosleep(&wait, &left) != 0 && errno == EINTR { wait = left }
    }

    /// The process environment as a dictionary.
    static func environment() -> [String: String] {
        var result: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return result
    }

    /// Writes one line to stderr with a single write(2).
    static func printError(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
