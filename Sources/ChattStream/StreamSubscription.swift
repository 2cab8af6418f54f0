import ChattModel
import ChattFeed
import HTTPCore
import Viewport

/// One client's place in a feed stream: a serial number into the hub's shared log, and, for a client resuming
/// from further back than the log reaches, the events read for it from the store first. Its state is the hub's,
/// guarded by the hub's lock; the connection pulls its bytes through it (`ResponseBodyStream`).
public final class StreamSubscription: ResponseBodyStream, @unchecked Sendable {
    let kind: ChattFeed.Kind
    /// Only events located in this box (`?bbox=`); nil: every event.
    let box: BoundingBox?
    private let hub: ChattStreamHub
    /// Guarded by the hub's lock from here on.
    var cursor: UInt64
    var backlog: HTTPBody
    var wake: (@Sendable () -> Void)?
    /// It answered `.idle`, so the next event wakes it.
    var waiting = false
    var resetDue = false
    var isCut = false
    var isEnded = false
    /// A filtered subscriber's: the position of events read past and not sent, when none was sent after them.
    var passed: LogPosition?
    /// A filtered subscriber's: when it was last sent a byte, and whether a keep-alive is due (`tick`).
    var lastSent: ContinuousClock.Instant
    var keepAliveDue = false

    init(
        hub: ChattStreamHub, kind: ChattFeed.Kind, box: BoundingBox? = nil, cursor: UInt64,
        backlog: HTTPBody = HTTPBody(), resetDue: Bool
    ) {
        self.hub = hub
        self.kind = kind
        self.box = box
        lastSent = hub.now()
        self.cursor = cursor
        self.backlog = backlog
        self.resetDue = resetDue
    }

    public func open(wake: @escaping @Sendable () -> Void) {
        hub.register(self, wake: wake)
    }

    public func next(limit: Int) -> StreamPull {
        hub.pull(self, limit: limit)
    }

    public func close() {
        hub.unregister(self)
    }
}

/// Where a client asks its stream to resume from (`Last-Event-ID`).
public enum StreamResume: Sendable, Equatable {
    /// After this position.
    case position(LogPosition)
    /// After a position of the log before ticks (migrations/0005's `E-N`), which no longer can be resumed from.
    case fromBeforeTicks
}
