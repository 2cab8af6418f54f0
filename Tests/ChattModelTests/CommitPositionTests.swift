import ChattModel
import Testing

/// The `E-N` text of a commit position (docs/API.md, `Feed-Position`): two runs of 1 to 18 digits and a hyphen.
@Suite struct CommitPositionTests {
    @Test(arguments: [
        ("1-0", CommitPosition(epoch: 1, count: 0)),
        ("0-0", CommitPosition(epoch: 0, count: 0)),
        ("12-345", CommitPosition(epoch: 12, count: 345)),
        ("007-010", CommitPosition(epoch: 7, count: 10)),
        ("999999999999999999-999999999999999999",
         CommitPosition(epoch: 999_999_999_999_999_999, count: 999_999_999_999_999_999)),
    ])
    func wellFormedTextParses(text: String, position: CommitPosition) {
        #expect(CommitPosition(text: text) == position)
        #expect(CommitPosition(text: Substring(text)) == position)
    }

    @Test(arguments: [
        "", "-", "1", "1-", "-1", "1--2", "1-2-3", "+1-2", "1-+2", "-1-2", "1- 2", " 1-2", "1-2 ", "1-2\n",
        "a-1", "1-a", "1.0-2", "1_000-2", "0x1-2", "１-2", "1−2",
        // 19 digits: more than an Int64 always holds.
        "1000000000000000000-1", "1-1000000000000000000", "0000000000000000001-1",
    ])
    func anythingElseIsRefused(text: String) {
        #expect(CommitPosition(text: text) == nil, "\(text.debugDescription)")
    }

    @Test func textRoundTrips() {
        for position in [
            CommitPosition(epoch: 1, count: 0), CommitPosition(epoch: 3, count: 1_000_000),
            CommitPosition(epoch: 999_999_999_999_999_999, count: 42),
        ] {
            #expect(position.description == "\(position.epoch)-\(position.count)")
            #expect(CommitPosition(text: position.description) == position)
        }
        #expect(String(describing: CommitPosition(epoch: 2, count: 17)) == "2-17")
    }

    @Test func positionsOrderByEpochThenCount() {
        let positions = [
            CommitPosition(epoch: 2, count: 1), CommitPosition(epoch: 1, count: 9), CommitPosition(epoch: 1, count: 10),
        ]
        #expect(positions.sorted().map(\.description) == ["1-9", "1-10", "2-1"])
    }

    @Test func aBatchTakesItsPositionFromItsRowsCounters() {
        let rows = (4...6).map { commit in
            SequencedChatt(
                sequence: commit + 100,
                chatt: StoredChatt(
                    name: "n", message: "m", id: "id\(commit)", timestamp: "2026-01-01T00:00:00.00000\(commit)Z",
                    geodata: nil),
                commit: commit)
        }
        let batch = ChattBatch(rows, epoch: 3)
        #expect(batch.previous == 3 && batch.position == CommitPosition(epoch: 3, count: 6) && batch.isContiguous)
        let gapped = ChattBatch([rows[0], rows[2]], epoch: 3)
        #expect(gapped.previous == 3 && gapped.position.count == 6 && !gapped.isContiguous)
    }
}
