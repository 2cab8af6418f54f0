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
                fileExists: { access($0, F_OK) == 0 })
            let output = try ChatterRunner.run(command) { (request, options) throws(ClientError) in
                try HTTPExchange.perform(request, options: options)
            }
            for warning in output.warnings { printError("chatter: warning: \(TerminalText.escaped(warning))") }
            print(output.text, terminator: "")
        } catch {
            printError("chatter: \(error)")
            exit(error.exitCode)
        }
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
