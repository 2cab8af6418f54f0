@testable import ChatterClient
import Testing

/// Feeds `wire` to a fresh parser in the given pieces; returns every item, in order.
func parseEvents(_ pieces: [ArraySlice<UInt8>], lastEventID: String = "") throws(ClientError)
    -> [ServerSentEventParser.Item]
{
    var parser = ServerSentEventParser(lastEventID: lastEventID)
    var items: [ServerSentEventParser.Item] = []
    for piece in pieces { items += try parser.receive(piece) }
    return items
}

func message(_ data: String?, id: String, type: String = "message") -> ServerSentEventParser.Item {
    .event(ServerSentEvent(type: type, data: data, lastEventID: id))
}

/// The cases follow WHATWG HTML §9.2.6 "Interpreting an event stream"; each is also fed at every split
/// point and one byte at a time (`splits`), which must not change the result.
@Suite struct ServerSentEventParserTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var note: String
        var wire: String
        var items: [ServerSentEventParser.Item]
        var testDescription: String { note }
    }

    @Test(arguments: [
        Case(note: "the contract's chatt", wire: "id: 3-7\ndata: [\"a\"]\n\n", items: [message("[\"a\"]", id: "3-7")]),
        Case(
            note: "CRLF, LF and CR line ends", wire: "id: 1\r\ndata: a\r\n\r\nid: 2\rdata: b\r\rid: 3\ndata: c\n\n",
            items: [message("a", id: "1"), message("b", id: "2"), message("c", id: "3")]),
        Case(note: "heartbeat comment", wire: ":\n", items: [.comment]),
        Case(
            note: "comment with text, between fields", wire: "data: a\n: keep\ndata: b\n\n",
            items: [.comment, message("a\nb", id: "")]),
        Case(note: "no space after the colon", wire: "data:x\n\n", items: [message("x", id: "")]),
        Case(note: "only one space is removed", wire: "data:  x \n\n", items: [message(" x ", id: "")]),
        Case(note: "field without a colon has an empty value", wire: "data\ndata\n\n", items: [message("\n", id: "")]),
        Case(note: "event type", wire: "event: reset\ndata: {}\n\n", items: [message("{}", id: "", type: "reset")]),
        Case(
            note: "type and data start over; the id carries on", wire: "event: x\nid: 5\ndata: 1\n\ndata: 2\n\n",
            items: [message("1", id: "5", type: "x"), message("2", id: "5")]),
        Case(note: "an event without data still moves the id", wire: "id: 9\n\n", items: [message(nil, id: "9")]),
        Case(note: "a blank line that changes nothing is no event", wire: "\n\n:\n\n\n", items: [.comment]),
        Case(
            note: "an empty id forgets it", wire: "id: 4\ndata: a\n\nid\ndata: b\n\n",
            items: [message("a", id: "4"), message("b", id: "")]),
        Case(
            note: "an id with NUL is ignored", wire: "id: 4\ndata: a\n\nid: 5\u{0}\ndata: b\n\n",
            items: [message("a", id: "4"), message("b", id: "4")]),
        Case(
            note: "unknown fields and retry are ignored", wire: "retry: 10\nfoo: bar\nData: no\ndata: a\n\n",
            items: [message("a", id: "")]),
        Case(note: "leading byte-order mark", wire: "\u{FEFF}data: a\n\n", items: [message("a", id: "")]),
        Case(
            note: "an event cut off by the end is not dispatched", wire: "id: 1\ndata: a\n\nid: 2\ndata: b\n",
            items: [message("a", id: "1")]),
        Case(note: "colon in the value is kept", wire: "data: a: b\n\n", items: [message("a: b", id: "")]),
    ])
    func parses(_ c: Case) throws {
        for pieces in splits(Array(c.wire.utf8)) {
            #expect(try parseEvents(pieces) == c.items, "\(c.note), split \(pieces.map(\.count))")
        }
    }

    @Test func aByteOrderMarkLaterOnIsPartOfTheLine() throws {
        #expect(try parseEvents([Array("data: a\n\n\u{FEFF}data: b\n\n".utf8)[...]]) == [message("a", id: "")])
    }

    @Test func aReconnectionStartsFromTheIdItResumesFrom() throws {
        let wire = Array("data: a\n\n".utf8)[...]
        #expect(try parseEvents([wire], lastEventID: "2-40") == [message("a", id: "2-40")])
        #expect(try parseEvents([Array("id: 2-40\n\n".utf8)[...]], lastEventID: "2-40") == [])
    }

    @Test func invalidUTF8IsReplaced() throws {
        #expect(try parseEvents([[0x64, 0x61, 0x74, 0x61, 0x3A, 0xFF, 0x0A, 0x0A]]) == [message("\u{FFFD}", id: "")])
    }

    @Test func endlessLinesAndEventsAreRefused() {
        let long = [UInt8](repeating: UInt8(ascii: "a"), count: ServerSentEventParser.maxLineBytes + 1)
        #expect(throws: ClientError.malformedResponse("event stream line too long")) {
            _ = try parseEvents([long[...]])
        }
        let line = Array(("data: " + String(repeating: "b", count: 1000) + "\n").utf8)
        let many = Array(repeating: line, count: ServerSentEventParser.maxDataBytes / 1000 + 1).joined()
        #expect(throws: ClientError.malformedResponse("event stream event larger than \(1 << 20) bytes")) {
            _ = try parseEvents([Array(many)[...]])
        }
    }
}
