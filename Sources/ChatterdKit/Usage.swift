/// `chatterd --help` text, made from the commands' option tables.
let usage = Usage.text()

let chatterdVersion = "0.1.0"

/// Builds the `--help` text.
enum Usage {
    /// Help lines are wrapped to this many columns.
    static let width = 100

    static func text() -> String {
        let commands = Command.optionTypes
        let column = commands.map { "chatterd \($0.command) [options]".count }.max() ?? 0
        var lines = [
            "chatterd \(chatterdVersion): the Chatter/Maps back end (HTTPS + PostgreSQL)", "", "Usage:",
        ]
        for command in commands {
            lines.append("  " + padded("chatterd \(command.command) [options]", to: column + 3) + command.summary)
        }
        lines.append("  chatterd --help | --version")
        for command in commands {
            lines += [""] + section(command)
        }
        lines += [""] + wrapped(
            "Each option can also be set by the environment variable shown beside it; an option on the command line "
                + "wins over its variable, and an empty variable counts as unset. Switches take 1/true/yes or "
                + "0/false/no in their variable (or as --switch=VALUE). The database URL falls back to DATABASE_URL "
                + "last.", indent: "")
        return lines.joined(separator: "\n")
    }

    /// The option list of one command: each flag with its variable, then what it does and its default.
    static func section<Options: CommandOptions>(_ command: Options.Type) -> [String] {
        let defaults = Options()
        let synopses = command.options.map { $0.flag + ($0.placeholder.map { " " + $0 } ?? "") }
        let column = (synopses.map(\.count).max() ?? 0) + 2
        var lines = ["Options of \(command.command):"]
        for (option, synopsis) in zip(command.options, synopses) {
            lines.append("  " + padded(synopsis, to: column) + command.variable(for: option.flag))
            var help = option.help
            if let shown = option.shownDefault(defaults) { help += " (\(shown))" }
            lines += wrapped(help, indent: "        ")
        }
        return lines
    }

    /// `text` padded with spaces to `width`, or followed by one space when it is longer.
    static func padded(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(1, width - text.count))
    }

    /// `text` in lines of at most `width` columns, each starting with `indent`; breaks only at spaces.
    static func wrapped(_ text: String, indent: String) -> [String] {
        var lines: [String] = []
        var line = indent
        for word in text.split(separator: " ") {
            if line.count > indent.count && line.count + 1 + word.count > width {
                lines.append(line)
                line = indent
            }
            line += (line.count > indent.count ? " " : "") + word
        }
        lines.append(line)
        return lines
    }
}
