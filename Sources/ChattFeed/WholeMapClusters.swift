import Locking
import TaskExecution

/// The clusters of the whole map, one answer for each zoom at which a box may span it (0-6), kept for the newest
/// version of a lineage that was asked. Every client that asks without a box, or with a map zoomed all the way out,
/// asks the same; at zoom 6 the answer is up to 65 536 features, 170 ms of a core at a million chatts
/// (bench/RESULTS.md, "counts at every zoom"). Each is made once, by a flight the callers of the moment share, so a
/// crowd asking costs one answer a version, not one each. Asking for a newer version drops the older's answers.
final class WholeMapClusters: Sendable {
    /// An answer in both its forms.
    struct Answer: Sendable {
        let identity: FeedRepresentation
        let gzip: FeedRepresentation
    }

    private struct Kept {
        /// The tip whose answers these are (`FeedTip.serial`).
        var serial: UInt64 = 0
        /// By zoom.
        var flights: [Int: SingleFlight<Answer>] = [:]
    }

    private let kept = Locked(Kept())

    /// The answer at `zoom` for the tip `serial`, made by `make` unless it was made or is being made. A caller
    /// holding an older tip than the newest asked makes its own, kept by nobody.
    func answer(zoom: Int, serial: UInt64, make: @escaping @Sendable () -> Answer) async -> Answer {
        let flight = kept.withLock { kept -> SingleFlight<Answer>? in
            if serial > kept.serial { kept = Kept(serial: serial) }
            guard serial == kept.serial else { return nil }
            if let flight = kept.flights[zoom] { return flight }
            let flight = SingleFlight<Answer> { make() }
            kept.flights[zoom] = flight
            return flight
        }
        guard let flight else { return make() }
        // Invariant: with no deadline, a flight's value always comes.
        return await flight.value(of: .first)!
    }
}
