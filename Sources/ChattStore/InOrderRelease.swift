/// Items numbered 0, 1, 2, … that finish in any order and are released in number order: one that finishes early
/// waits until every item before it has finished. Pure, so tests can finish items in any order they like.
struct InOrderRelease<Item> {
    /// The number the next item gets.
    private(set) var nextNumber = 0
    /// The number of the next item to release.
    private var nextToRelease = 0
    private var finished: [Int: Item] = [:]

    /// Items numbered but not yet released.
    var pendingCount: Int { nextNumber - nextToRelease }

    /// Numbers a new item.
    mutating func number() -> Int {
        defer { nextNumber += 1 }
        return nextNumber
    }

    /// Records that item `number` finished as `item`, and returns the items that can be released now, in order:
    /// none while an earlier one is still unfinished.
    mutating func finish(_ number: Int, _ item: Item) -> [Item] {
        precondition(number >= nextToRelease && number < nextNumber && finished[number] == nil, "finished twice")
        finished[number] = item
        var released: [Item] = []
        while let next = finished.removeValue(forKey: nextToRelease) {
            released.append(next)
            nextToRelease += 1
        }
        return released
    }
}

extension InOrderRelease: Sendable where Item: Sendable {}
