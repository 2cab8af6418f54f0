/// One row of a command's option table: the flag, what `--help` says about it, and how its value is applied.
///
/// The table is the only place a flag is spelled: the parser, the `CHATTERD_*` variable (derived from the flag by
/// `CommandOptions.variable(for:)`), `--help` and the README check all read it.
struct CommandOption<Options>: Sendable {
    /// The flag, e.g. `--pool-size`.
    let flag: String
    /// What the value looks like in `--help` (`N`, `FILE`, `logfmt|json`); nil for a switch.
    let placeholder: String?
    /// What the option does, for `--help`.
    let help: String
    /// What `--help` says after the help text about the value it has when not given (`default 443`), read from a
    /// fresh `Options()`; nil when there is nothing to say.
    let shownDefault: @Sendable (Options) -> String?
    /// Reads the flag's value from `cursor` (if it takes one) and stores it.
    let apply: @Sendable (inout Options, inout ArgumentCursor) throws(UsageError) -> Void

    /// Whether the option is a switch (no value, or `--flag=VALUE` with 1/true/yes or 0/false/no).
    var isSwitch: Bool { placeholder == nil }
}

extension CommandOption {
    /// Free text (an address, a path); the default shown is the current value.
    static func text(
        _ flag: String, _ placeholder: String, _ help: String, _ path: WritableKeyPath<Options, String> & Sendable
    ) -> Self {
        Self(flag: flag, placeholder: placeholder, help: help, shownDefault: { "default " + $0[keyPath: path] }) {
            options, cursor throws(UsageError) in options[keyPath: path] = try cursor.value(for: flag)
        }
    }

    /// Free text with no default of its own; `fallback` says what happens without it.
    static func text(
        _ flag: String, _ placeholder: String, _ help: String, _ path: WritableKeyPath<Options, String?> & Sendable,
        fallback: String
    ) -> Self {
        Self(flag: flag, placeholder: placeholder, help: help, shownDefault: { _ in "without it, " + fallback }) {
            options, cursor throws(UsageError) in options[keyPath: path] = try cursor.value(for: flag)
        }
    }

    /// A whole number from `minimum` to `maximum`.
    static func number<N: FixedWidthInteger & Sendable>(
        _ flag: String, _ help: String, _ path: WritableKeyPath<Options, N> & Sendable, atLeast minimum: N = 0,
        atMost maximum: N = .max
    ) -> Self {
        Self(flag: flag, placeholder: "N", help: help, shownDefault: { "default \($0[keyPath: path])" }) {
            options, cursor throws(UsageError) in
            options[keyPath: path] = try cursor.number(for: flag, atLeast: minimum, atMost: maximum)
        }
    }

    /// A positive number of seconds.
    static func seconds(_ flag: String, _ help: String, _ path: WritableKeyPath<Options, Double> & Sendable) -> Self {
        let shown: @Sendable (Options) -> String? = { "default " + secondsText($0[keyPath: path]) }
        return Self(flag: flag, placeholder: "S", help: help, shownDefault: shown) {
            options, cursor throws(UsageError) in options[keyPath: path] = try cursor.seconds(for: flag)
        }
    }

    /// A switch, off unless given (or on unless turned off with `--flag=no`, when its default is on); `whenOff`
    /// says what happens without it, if that needs saying.
    static func `switch`(
        _ flag: String, _ help: String, _ path: WritableKeyPath<Options, Bool> & Sendable, whenOff: String? = nil
    ) -> Self {
        let shown: @Sendable (Options) -> String? = { options in
            options[keyPath: path] ? "default on; \(flag)=no turns it off" : whenOff.map { "without it, " + $0 }
        }
        return Self(flag: flag, placeholder: nil, help: help, shownDefault: shown) {
            options, cursor throws(UsageError) in options[keyPath: path] = try cursor.switchValue(for: flag)
        }
    }

    /// A whole number of at least `minimum`, with no limit unless given.
    static func limit(
        _ flag: String, _ help: String, _ path: WritableKeyPath<Options, Int?> & Sendable, atLeast minimum: Int = 1
    ) -> Self {
        Self(flag: flag, placeholder: "N", help: help, shownDefault: { _ in "default: no limit" }) {
            options, cursor throws(UsageError) in
            options[keyPath: path] = try cursor.number(for: flag, atLeast: minimum)
        }
    }

    /// One of `choices`, by name; the placeholder lists them.
    static func choice<T: Equatable & Sendable>(
        _ flag: String, _ help: String, _ path: WritableKeyPath<Options, T> & Sendable, _ choices: [(String, T)]
    ) -> Self {
        let shown: @Sendable (Options) -> String? = { options in
            choices.first { $0.1 == options[keyPath: path] }.map { "default " + $0.0 }
        }
        return Self(flag: flag, placeholder: choices.map(\.0).joined(separator: "|"), help: help, shownDefault: shown) {
            options, cursor throws(UsageError) in options[keyPath: path] = try cursor.choice(for: flag, choices)
        }
    }

    /// "10 s" rather than "10.0".
    static func secondsText(_ value: Double) -> String {
        (value == value.rounded() && abs(value) < 1e15 ? "\(Int(value))" : "\(value)") + " s"
    }
}
