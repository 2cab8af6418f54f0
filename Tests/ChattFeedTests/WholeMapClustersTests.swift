@testable import ChattFeed
import HTTPCore
import Locking
import Testing

/// The whole map's cluster answers, kept for the newest version asked.
@Suite struct WholeMapClustersTests {
    let kept = WholeMapClusters()
    let made = Locked<[String]>([])

    /// Asks for the answer at `zoom` of tip `serial`, noting each time one is made; what the answer says.
    func ask(zoom: Int, serial: UInt64) async -> String {
        let answer = await kept.answer(zoom: zoom, serial: serial) { [made] in
            let text = "zoom \(zoom) of tip \(serial)"
            made.withLock { $0.append(text) }
            let identity = FeedRepresentation(identity: HTTPBody(Array(text.utf8)))
            return WholeMapClusters.Answer(identity: identity, gzip: identity)
        }
        return String(decoding: answer.identity.body, as: UTF8.self)
    }

    @Test func anAnswerIsMadeOnceForAVersionAndAZoom() async {
        #expect(await ask(zoom: 3, serial: 7) == "zoom 3 of tip 7")
        #expect(await ask(zoom: 3, serial: 7) == "zoom 3 of tip 7")
        #expect(await ask(zoom: 6, serial: 7) == "zoom 6 of tip 7")
        #expect(await ask(zoom: 6, serial: 7) == "zoom 6 of tip 7")
        #expect(made.withLock { $0 } == ["zoom 3 of tip 7", "zoom 6 of tip 7"])
    }

    @Test func aNewerVersionDropsTheOlderAndAnOlderOneIsMadeForItsCallerAlone() async {
        _ = await ask(zoom: 3, serial: 7)
        #expect(await ask(zoom: 3, serial: 8) == "zoom 3 of tip 8")
        #expect(await ask(zoom: 3, serial: 7) == "zoom 3 of tip 7")
        #expect(await ask(zoom: 3, serial: 7) == "zoom 3 of tip 7")
        #expect(await ask(zoom: 3, serial: 8) == "zoom 3 of tip 8")
        #expect(made.withLock { $0 } == ["zoom 3 of tip 7", "zoom 3 of tip 8", "zoom 3 of tip 7", "zoom 3 of tip 7"])
    }
}
