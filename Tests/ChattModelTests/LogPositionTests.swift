import ChattModel
import Testing

/// The text of a change-log position (docs/API.md: `Feed-Position`, a stream's event ids): `T.K` for a whole tick,
/// `T.K.S` for part of one.
@Suite struct LogPositionTests {
    @Test(arguments: [
        ("1.0", LogPosition(tick: 1, token: 0)),
        ("12.ab34.345", LogPosition(tick: 12, token: 0xab34, seq: 345)),
        ("007.00f.010", LogPosition(tick: 7, token: 0xf, seq: 10)),
        ("999999999999999999.ffffffffffffffff.999999999999999999",
         LogPosition(tick: 999_999_999_999_999_999, token: .max, seq: 999_999_999_999_999_999)),
    ])
    func wellFormedTextParses(text: String, position: LogPosition) {
        #expect(LogPosition(text: text) == position)
        #expect(LogPosition(text: Substring(text)) == position)
    }

    @Test(arguments: [
        "", ".", "1", "1.", ".1", "1..2", "1.2.3.4", "+1.2", "1.+2", "1.2.-3", "1. 2", " 1.2", "1.2 ", "1.2\n",
        "a.1", "1.g", "1.AB", "1.2.a", "1.0x2", "1_0.2", "１.2", "1.2.3e4",
        // 19 digits: more than an Int64 always holds; 17 hex digits: more than a UInt64.
        "1000000000000000000.1", "1.1.1000000000000000000", "1.10000000000000000",
        // The log before ticks had positions of another shape.
        "1-2", "3-45",
    ])
    func anythingElseIsRefused(text: String) {
        #expect(LogPosition(text: text) == nil, "\(text.debugDescription)")
    }

    @Test func textRoundTripsAndAWholeTickLeavesOutItsSeq() {
        for position in [
            LogPosition(tick: 1, token: 0x1f), LogPosition(tick: 3, token: 0xabcdef012345, seq: 1_000_000),
            LogPosition(tick: 999_999_999_999_999_999, token: 42, seq: 7),
        ] {
            #expect(LogPosition(text: position.description) == position)
        }
        #expect(LogPosition(tick: 2, token: 0xbeef).description == "2.beef")
        #expect(LogPosition(tick: 2, token: 0xbeef, seq: 17).description == "2.beef.17")
    }

    @Test func positionsOrderByTickThenSeqAndAWholeTickHoldsEveryEventOfIt() {
        let partial = LogPosition(tick: 5, token: 1, seq: 30)
        #expect(partial.precedes(LogPosition(tick: 5, token: 1, seq: 31)))
        #expect(partial.precedes(LogPosition(tick: 5, token: 1)))
        #expect(LogPosition(tick: 5, token: 1).precedes(LogPosition(tick: 6, token: 9, seq: 1)))
        #expect(!partial.precedes(partial))
        #expect(partial.holds(tick: 5, seq: 30) && !partial.holds(tick: 5, seq: 31) && partial.holds(tick: 4, seq: 99))
        #expect(LogPosition(tick: 5, token: 1).holds(tick: 5, seq: .max - 1))
    }

    @Test(arguments: ["1-0", "12-345", "999999999999999999-1"])
    func positionsOfTheLogBeforeTicksAreToldApart(text: String) {
        #expect(LogPosition(text: text) == nil)
        #expect(LogPosition.isFromBeforeTicks(text))
    }

    @Test(arguments: ["1-", "-1", "1-2-3", "a-1", "1.2", "garbage", "1000000000000000000-1"])
    func nothingElseIsTakenForOne(text: String) {
        #expect(!LogPosition.isFromBeforeTicks(text))
    }

    @Test func aReadEndsAtItsLastTickWholeUnlessCutAfterAChatt() {
        let chatt = SequencedChatt(
            sequence: 9,
            chatt: StoredChatt(
                name: "n", message: "m", id: "i", timestamp: "2026-01-01T00:00:00.000000Z", geodata: nil))
        let tick = LogTick(tick: 4, token: 0xa, epoch: 1)
        #expect(LogRead(ticks: [TickChatts(tick: tick, chatts: [chatt])], isCut: false).end == tick.position())
        #expect(LogRead(ticks: [TickChatts(tick: tick, chatts: [chatt])], isCut: true).end
            == tick.position(through: 9))
        #expect(LogRead(ticks: [TickChatts(tick: tick, chatts: [])], isCut: true).end == tick.position())
        #expect(LogRead(ticks: [], isCut: false).end == nil)
    }

    @Test func aTicksPostsAndRemovalsGoTogetherBySequenceAndACutReadEndsAtTheLastOfEither() {
        func chatt(_ sequence: Int64) -> SequencedChatt {
            SequencedChatt(sequence: sequence, chatt: StoredChatt(
                name: "n", message: "m", id: "c\(sequence)", timestamp: "2026-01-01T00:00:00.000000Z", geodata: nil))
        }
        func removal(_ sequence: Int64) -> RemovedChatt {
            RemovedChatt(sequence: sequence, id: "r\(sequence)", position: FeedPosition(timestamp: "t", sequence: 1))
        }
        let tick = LogTick(tick: 4, token: 0xa, epoch: 1)
        let held = TickChatts(tick: tick, chatts: [chatt(2), chatt(5)], removals: [removal(3), removal(7)])
        #expect(held.events.map(\.sequence) == [2, 3, 5, 7])
        #expect(held.events[1] == .removed(removal(3)))
        let throughFour = TickChatts(tick: tick, chatts: [chatt(2)], removals: [removal(3)])
        #expect(held.through(tick.position(through: 4)) == throughFour)
        #expect([held].events.map(\.position) == [2, 3, 5, 7].map { tick.position(through: $0) })
        #expect(LogRead(ticks: [held], isCut: true).end == tick.position(through: 7))
        let cutAtAChatt = TickChatts(tick: tick, chatts: [chatt(8)], removals: [removal(3)])
        #expect(LogRead(ticks: [cutAtAChatt], isCut: true).end == tick.position(through: 8))
        #expect(TickChatts(tick: tick, chatts: [], removals: [removal(3)]).isEmpty == false)
    }
}
