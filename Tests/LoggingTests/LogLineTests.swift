import Foundation
@testable import Logging
import Testing
import TestSupport

extension LogLevel {
    /// The level called `name`, if any: how a flag or variable picks a level, so each name must pick one.
    init?(name: String) {
        guard let level = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = level
    }
}

@Suite struct LogLineTests {
    private func logfmt(_ fill: (inout LogLine) -> Void) -> String {
        var line = LogLine(format: .logfmt, level: .info, event: "test")
        fill(&line)
        return String(decoding: line.finish(), as: UTF8.self)
    }

    private func json(_ fill: (inout LogLine) -> Void) throws -> [String: Any] {
        var line = LogLine(format: .json, level: .warn, event: "test")
        fill(&line)
        let bytes = line.finish()
        #expect(bytes.last == UInt8(ascii: "\n") && bytes.filter { $0 == UInt8(ascii: "\n") }.count == 1)
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    @Test func logfmtStartsWithTimeLevelAndEvent() {
        let text = logfmt { $0.string("path", "/getmaps") }
        let pattern = #/^time=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z level=info event=test path=/getmaps\n$/#
        #expect(text.wholeMatch(of: pattern) != nil, "\(text)")
    }

    @Test func logfmtQuotesOnlyWhatNeedsIt() {
        let text = logfmt { line in
            line.string("bare", "a-b_c.d:e/f")
            line.string("empty", "")
            line.string("space", "a b")
            line.string("equals", "a=b")
            line.string("quote", "say \"hi\"")
            line.string("backslash", #"a\b"#)
        }
        #expect(text.hasSuffix(#" bare=a-b_c.d:e/f empty="" space="a b" equals="a=b" quote="say \"hi\"" backslash="a\\b""# + "\n"))
    }

    @Test func controlCharactersCannotSplitALineOrForgeAField() {
        let text = logfmt { $0.string("path", "/x\n time=forged level=error\r\t\u{1}\u{7F}") }
        #expect(text.filter { $0 == "\n" }.count == 1)
        #expect(text.hasSuffix(#"path="/x\n time=forged level=error\r\t\u0001\u007f""# + "\n"))
    }

    @Test func numbersAndBooleans() {
        let text = logfmt { line in
            line.integer("status", 200)
            line.integer("negative", -42)
            line.thousandths("duration_ms", 1.23456)
            line.thousandths("tiny", 0.0004)
            line.thousandths("round", 2)
            line.boolean("tls", true)
        }
        #expect(text.hasSuffix(" status=200 negative=-42 duration_ms=1.235 tiny=0.000 round=2.000 tls=true\n"), "\(text)")
    }

    @Test func jsonLinesParseWithTheirTypes() throws {
        let object = try json { line in
            line.string("path", "/a \"b\" \\ \n\u{0}")
            line.integer("status", 503)
            line.thousandths("duration_ms", 12.5)
            line.boolean("tls", false)
            line.string("name", "José 🗺")
        }
        #expect(object["level"] as? String == "warn" && object["event"] as? String == "test")
        #expect(object["path"] as? String == "/a \"b\" \\ \n\u{0}")
        #expect(object["status"] as? Int == 503)
        #expect(object["duration_ms"] as? Double == 12.5)
        #expect(object["tls"] as? Bool == false)
        #expect(object["name"] as? String == "José 🗺")
        let time = try #require(object["time"] as? String)
        #expect(time.wholeMatch(of: #/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/#) != nil)
    }

    @Test func timestampsAreRFC3339UTCWithMilliseconds() {
        func text(_ seconds: Int, _ milliseconds: Int) -> String {
            var bytes: [UInt8] = []
            LogTimestamp.append(seconds: seconds, milliseconds: milliseconds, to: &bytes)
            return String(decoding: bytes, as: UTF8.self)
        }
        #expect(text(0, 0) == "1970-01-01T00:00:00.000Z")
        #expect(text(1_709_251_199, 7) == "2024-02-29T23:59:59.007Z")
        #expect(text(951_782_400, 999) == "2000-02-29T00:00:00.999Z")
    }

    @Test func theCurrentTimeIsNow() throws {
        var bytes: [UInt8] = []
        LogTimestamp.appendNow(to: &bytes)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let date = try #require(formatter.date(from: String(decoding: bytes, as: UTF8.self)))
        #expect(abs(date.timeIntervalSinceNow) < 60)
    }

    @Test func levelsFilterBeforeFormatting() {
        let pipe = LogPipe()
        let logger = pipe.logger(level: .warn)
        #expect(logger.line(.info, "request") == nil)
        #expect(logger.line(.warn, "slow") != nil)
        logger.log(.debug, "hidden")
        logger.log(.error, "shown", ["cause": "disk", "code": .integer(5)])
        logger.writer.flush()
        let lines = pipe.lines(1)
        #expect(lines.count == 1 && lines[0].hasSuffix(" level=error event=shown cause=disk code=5"), "\(lines)")
    }

    @Test func levelNamesRoundTrip() {
        for level in LogLevel.allCases { #expect(LogLevel(name: level.name) == level) }
        #expect(LogLevel(name: "warning") == nil)
        #expect(LogLevel.debug < .info && LogLevel.info < .warn && LogLevel.warn < .error)
    }
}
