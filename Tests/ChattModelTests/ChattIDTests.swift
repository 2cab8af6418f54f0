@testable import ChattModel
import Testing

@Suite struct ChattIDTests {
    @Test func chattIDsParseOnlyCanonicalUUIDs() throws {
        let lower = try #require(ChattID("3f2b0c9e-8a4d-4f7e-9a51-2c6d1e0b7a11"))
        #expect(ChattID("3F2B0C9E-8A4D-4F7E-9A51-2C6D1E0B7A11") == lower)
        #expect(ChattID("3f2B0c9E-8A4d-4f7E-9a51-2C6D1e0b7A11") == lower)
        #expect(lower.high == 0x3f2b_0c9e_8a4d_4f7e && lower.low == 0x9a51_2c6d_1e0b_7a11)
        for text in ["3f2b0c9e8a4d4f7e9a512c6d1e0b7a11", "{3f2b0c9e-8a4d-4f7e-9a51-2c6d1e0b7a11}",
                     "3f2b0c9e-8a4d-4f7e-9a51-2c6d1e0b7a1", "3f2b0c9e-8a4d-4f7e-9a51-2c6d1e0b7a1g",
                     "3f2b0c9e-8a4d-4f7e-9a5-12c6d1e0b7a11", ""] {
            #expect(ChattID(Substring(text)) == nil, "\(text)")
        }
    }
}
