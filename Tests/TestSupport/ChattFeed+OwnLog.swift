import ChangeLog
import ChattFeed
import ChattModel

extension ChattFeed {
    /// Feeds of `repository` that follow a change log of their own (which nothing else follows).
    public convenience init(
        repository: any ChattRepository, strict: Bool = false, staleIfError: Duration = .zero,
        deferredChattsLimit: Int = 5_000, fullReadEnded: @escaping @Sendable () -> Void = {},
        now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.init(
            repository: repository, log: ChangeLog(repository: repository), strict: strict,
            staleIfError: staleIfError, deferredChattsLimit: deferredChattsLimit, fullReadEnded: fullReadEnded,
            now: now)
    }
}
