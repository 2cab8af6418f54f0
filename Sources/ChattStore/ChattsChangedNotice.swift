/// What a `chatts_changed` notification says changed: its payload, written by migration 0004's trigger (every writer
/// but chatterd's inserts) or by a tick of the change log (migrations/0006's `chatts_tick`).
public enum ChattChange: Sendable, Equatable {
    /// Rows were added by a writer that is not chatterd (`insert`), or by a chatterd older than the change log
    /// (`insert <origin>`): the store must be ticked for the log to have them.
    case added(origin: String?)
    /// A tick was made, by the chatterd process `origin` names (nil: by another caller of `chatts_tick`): the log has
    /// it already, to be read.
    case ticked(origin: String?)
    /// Anything else: an update, a removal, a truncation, a bare `NOTIFY`, or an older trigger's notification.
    case changed

    /// The change a payload names; one it does not know is `.changed`, which makes a listener tick and read.
    init(payload: String) {
        let words = payload.split(separator: " ", omittingEmptySubsequences: false)
        guard let first = words.first, words.count <= 2 else {
            self = .changed
            return
        }
        let origin = words.count == 2 ? String(words[1]) : nil
        switch first {
        case Substring(ChattsChangedNotice.insertWord): self = .added(origin: origin)
        case Substring(ChattsChangedNotice.tickWord): self = .ticked(origin: origin)
        default: self = .changed
        }
    }
}

/// How chatterd keeps its own inserts from notifying inside their transaction: a notifying transaction holds
/// PostgreSQL's server-wide notify lock from before its commit until after its WAL flush (migrations/0003), so no two
/// notifying inserts could share a flush, whichever process made them. The tick of the change log that takes them
/// in is announced instead (migrations/0006), after their commit.
enum ChattsChangedNotice {
    /// The payload's first word for rows added by another writer.
    static let insertWord = "insert"
    /// The payload's first word for a tick made.
    static let tickWord = "tick"

    /// Makes the trigger of migration 0004 leave this transaction's inserts alone. A transaction-local setting, so
    /// that it cannot outlive the statement's transaction on a pooled (or PgBouncer) session.
    static let announcesInsertCondition = "set_config('chatterd.announces_insert', 'on', true) = 'on'"
}
