import ChattModel

extension ChattFeed {
    /// Stores `chatt` through the repository, and takes in the outcome before `completion` hears of it: the rows of
    /// its commit are in the feeds, or the next read catches up, so a client always reads its own writes. Never
    /// blocks; `completion` runs where the repository completes.
    public func add(_ chatt: NewChatt, completion: @escaping @Sendable (Result<Void, RepositoryError>) -> Void) {
        repository.add(chatt) { [self] outcome in
            take(outcome)
            completion(outcome.map { _ in })
        }
    }

    /// Takes in a post's outcome: a commit's rows are appended. A failure may have stored the chatt even so (a
    /// lost connection leaves the outcome unknown): if so, it was added, and the next read catches up.
    func take(_ outcome: Result<ChattBatch, RepositoryError>) {
        switch outcome {
        case .success(let batch): append(batch)
        case .failure:
            chattsAdded()
            committed(nil)
        }
    }

    /// Takes in the chatts of a commit of this process: the current feeds get them appended (or put in their place
    /// among the newest rows) when the batch follows their commit position directly, so that a feed's position
    /// always names exactly the chatts it holds. A feed that another commit came before (or that cannot place the
    /// rows, or stopped being current while they were placed) is left for the next read to catch up. Either way a
    /// read that begins after this call returns sees them. The other posts of a batch find it taken in already.
    func append(_ batch: ChattBatch) {
        appends.withLock { recent in
            guard recent.remember(batch) else { return }
            publish(build(batch))
            committed(batch)
        }
    }

    /// The current versions with `batch` taken in, built outside the readers' lock: they hold it only to see what
    /// is current.
    func build(_ batch: ChattBatch) -> AppendedVersions {
        let (generation, current) = state.withLock { state in
            (state.generation, state.feeds.filter { $0.value.generation == state.generation })
        }
        let built = current.compactMapValues { $0.adding(batch, generation: generation + 1) }
        return AppendedVersions(generation: generation, base: current, built: built)
    }

    /// Publishes `versions` as current if nothing moved since they were begun; returns whether it did.
    @discardableResult
    func publish(_ versions: AppendedVersions) -> Bool {
        state.withLock { $0.publish(versions) }
    }
}

/// The versions one append built, and what it built them on.
struct AppendedVersions {
    /// The generation when the append began.
    let generation: UInt64
    /// The feeds current then.
    let base: [ChattFeed.Kind: EncodedFeed]
    /// Their successors with the batch's rows, tagged `generation + 1`: for each kind whose rows could be placed.
    let built: [ChattFeed.Kind: EncodedFeed]
}

extension ChattFeed.State {
    /// Compare and publish: when the generation is still the one `versions` began at, they become current at the
    /// next one. Either way the generation moves on, so a read after this sees the batch, and a version never
    /// replaces any but the feed it was built on: a newer one published meanwhile stays.
    mutating func publish(_ versions: AppendedVersions) -> Bool {
        let unmoved = generation == versions.generation
        for (kind, version) in versions.built where feeds[kind] === versions.base[kind] {
            // Moved: a change came that the version lacks, so it is not current; still, it is the newest version
            // of its lineage, which the next read catches up from.
            feeds[kind] = unmoved ? version : version.retagged(versions.generation)
        }
        generation += 1
        guard unmoved else { return false }
        // Untrusted, the next read's version check would otherwise take our own commit for a stranger's.
        if !trusted, let version = versions.built.values.first?.version,
            versions.built.values.allSatisfy({ $0.version == version })
        {
            lastSeenVersion = version
        }
        return true
    }
}

/// The batches taken in lately: the other posts of a batch ask within moments of each other.
struct RecentBatches {
    /// How many are remembered.
    static let limit = 16
    private var batches: [ChattBatch] = []

    /// Remembers `batch`; false when it was remembered already.
    mutating func remember(_ batch: ChattBatch) -> Bool {
        guard !batches.contains(where: { $0 === batch }) else { return false }
        batches.append(batch)
        if batches.count > Self.limit { batches.removeFirst() }
        return true
    }
}
