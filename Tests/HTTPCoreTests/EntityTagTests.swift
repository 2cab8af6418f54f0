import HTTPCore
import Testing

extension EntityTag {
    /// The strong comparison of RFC 9110 §8.8.3.2: both tags strong and their opaque parts equal. chatterd only
    /// compares weakly (`If-None-Match`); the tests use this to show the difference.
    func stronglyMatches(_ other: EntityTag) -> Bool {
        !isWeak && !other.isWeak && opaque == other.opaque
    }
}

/// Entity tags and `If-None-Match` lists (RFC 9110 §8.8.3, §13.1.2).
@Suite struct EntityTagTests {
    private func condition(_ values: String...) -> EntityTagCondition? {
        EntityTagCondition(fieldValues: values)
    }

    private func tag(_ opaque: String, weak: Bool = false) throws -> EntityTag {
        try #require(EntityTag(opaque, weak: weak))
    }

    @Test func rendersStrongAndWeakTags() throws {
        #expect(try tag("abc").fieldValue == #""abc""#)
        #expect(try tag("abc", weak: true).fieldValue == #"W/"abc""#)
        #expect(try tag("").fieldValue == #""""#)
    }

    @Test(arguments: ["a\"b", "a b", "tab\t", "nul\u{0}", "del\u{7F}"])
    func refusesOpaquePartsAHeaderCannotCarry(_ opaque: String) {
        #expect(EntityTag(opaque) == nil)
    }

    @Test func weakComparisonIgnoresWeaknessStrongDoesNot() throws {
        let strong = try tag("v1")
        let weak = try tag("v1", weak: true)
        #expect(strong.weaklyMatches(weak) && weak.weaklyMatches(strong) && weak.weaklyMatches(weak))
        #expect(strong.stronglyMatches(strong))
        #expect(!strong.stronglyMatches(weak) && !weak.stronglyMatches(weak))
        #expect(!strong.weaklyMatches(try tag("v2")))
    }

    @Test func starMatchesAnyRepresentation() throws {
        #expect(condition("*") == .any)
        #expect(condition("  *\t") == .any)
        #expect(condition("*")?.matches(try tag("anything")) == true)
    }

    @Test func listsAcrossCommasWhitespaceAndFieldLines() throws {
        let parsed = condition(#" "a" ,W/"b",, "c""#, #""d""#)
        #expect(parsed == .tags([try tag("a"), try tag("b", weak: true), try tag("c"), try tag("d")]))
        for opaque in ["a", "b", "c", "d"] { #expect(parsed?.matches(try tag(opaque)) == true, "\(opaque)") }
        #expect(parsed?.matches(try tag("e")) == false)
    }

    @Test func aWeakTagInTheListMatchesAStrongRepresentationTag() throws {
        #expect(condition(#"W/"v1""#)?.matches(try tag("v1")) == true)
    }

    @Test func commasAndObsTextMayBeInsideATag() throws {
        #expect(condition(#""a,b""#) == .tags([try tag("a,b")]))
        #expect(condition(#""a,b""#)?.matches(try tag("a")) == false)
        #expect(condition("\"caf\u{E9}\"") == .tags([try tag("caf\u{E9}")]))
    }

    @Test func emptyListMatchesNothing() throws {
        #expect(condition("") == .tags([]))
        #expect(condition(" , ,") == .tags([]))
        #expect(condition("")?.matches(try tag("x")) == false)
    }

    @Test func noFieldIsNoCondition() {
        #expect(EntityTagCondition(fieldValues: []) == nil)
    }

    @Test(arguments: [
        "abc", #""abc"#, #"abc""#, #"w/"abc""#, #"W/ "abc""#, #"W"abc""#, #""a" "b""#, #""a"x"#, "*, \"a\"",
        #""a", *"#, "**", #""a b""#, #""a"b""#,
    ])
    func malformedValuesAreIgnored(_ value: String) {
        #expect(condition(value) == nil)
    }

    @Test func aMalformedLineSpoilsTheWholeField() {
        #expect(condition(#""a""#, "b") == nil)
    }
}
