/// What a `chatts_changed` notification says changed (its payload, written by migration 0004's trigger or by
/// `ChattsChangedNotice.announce`).
public enum ChattChange: Sendable, Equatable {
    /// Rows were only added; `origin` names the chatterd process that added them, nil for any other writer.
    case added(origin: String?)
    /// Anything else: an update, a removal, a truncation, a bare `NOTIFY`, or an older trigger's notification.
    case changed

    /// The change a payload names; one it does not know is `.changed`, which makes a listener re-read everything.
    init(payload: String) {
        let words = payload.split(separator: " ", omittingEmptySubsequences: false)
        guard words.first == Substring(ChattsChangedNotice.insertWord), words.count <= 2 else {
            self = .changed
            return
        }
        self = .added(origin: words.count == 2 ? String(words[1]) : nil)
    }
}

/// How chatterd announces its own inserts. They do not notify inside their transaction (migration 0004's trigger
/// skips them), because a notifying transaction holds PostgreSQL's server-wide notify lock from before its commit
/// until after its WAL flush (migrations/0003): no two notifying inserts could share a flush, whichever process
/// made them. The announcement is a transaction of its own, after the insert has committed.
enum ChattsChangedNotice {
    /// The payload's first word for rows added.
    static let insertWord = "insert"

    /// Makes the trigger of migration 0004 leave this transaction's inserts to `announce`. A transaction-local
    /// setting, so that it cannot outlive the statement's transaction on a pooled (or PgBouncer) session.
    static let announcesInsertCondition = "set_config('chatterd.announces_insert', 'on', true) = 'on'"

    /// The announcement does not wait for its own commit to reach the disk: the rows it announces already did,
    /// and so the notify lock is held for moments, not for a WAL flush. A crash may lose it; listeners reconnect
    /// after a crash anyway, and the feeds' audit covers an announcement that never came.
    static let announceSQL = "SELECT set_config('synchronous_commit', 'off', true), pg_notify('chatts_changed', $1)"

    /// The payload announcing rows added by the process called `origin`.
    static func payload(origin: String) -> String {
        insertWord + " " + origin
    }

    /// The announcement of rows added by `origin`, to follow their commit in its round trip.
    static func announcement(origin: String) -> CommittingQuery.Follower {
        CommittingQuery.Follower(sql: announceSQL, parameters: [payload(origin: origin)])
    }

    /// Announces rows added by `origin`; best effort, since the rows are stored whether or not it works.
    static func announce(origin: String, in session: PGSession) async {
        _ = try? await session.query(announceSQL, [payload(origin: origin)])
    }
}
