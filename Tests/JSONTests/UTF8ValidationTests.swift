@testable import JSON
import Testing

@Suite struct UTF8ValidationTests {
    /// Every two-byte prefix, completed three ways, must be judged exactly as the standard library judges it.
    @Test(arguments: [[], [0x80], [0x80, 0x80], [0xBF, 0xBF], [0x41]] as [[UInt8]])
    func agreesWithStandardLibrary(suffix: [UInt8]) {
        var disagreements: [[UInt8]] = []
        for first in 0...255 {
            for second in 0...255 {
                let bytes = [UInt8(first), UInt8(second)] + suffix
                let expected = String(validating: bytes, as: UTF8.self) != nil
                if UTF8Validation.isValid(bytes) != expected { disagreements.append(bytes) }
            }
        }
        #expect(disagreements.isEmpty, "first few: \(disagreements.prefix(5))")
    }

    @Test func acceptsEmptyInputAndBoundaryScalars() {
        #expect(UTF8Validation.isValid([]))
        for scalar in [
            "\u{7F}", "\u{80}", "\u{7FF}", "\u{800}", "\u{D7FF}", "\u{E000}", "\u{FFFF}", "\u{10000}", "\u{10FFFF}",
        ] {
            #expect(UTF8Validation.isValid(Array(scalar.utf8)), "\(scalar.unicodeScalars.first?.value ?? 0)")
        }
    }
}
