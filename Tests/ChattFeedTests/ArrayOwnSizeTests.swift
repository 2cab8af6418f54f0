@testable import ChattFeed
import Testing

@Suite struct ArrayOwnSizeTests {
    @Test func aCopyHoldsTheSameBytesInStorageOfTheirSize() {
        let grown = [UInt8](unsafeUninitializedCapacity: 100_000) { bytes, count in
            for index in 0..<1_000 { bytes[index] = UInt8(index % 251) }
            count = 1_000
        }
        #expect(grown.capacity >= 100_000)
        let copy = grown.inStorageOfItsOwnSize
        #expect(copy == grown)
        #expect(copy.capacity < 2_000, "malloc may round up a little, never to the grown capacity")
    }
}
