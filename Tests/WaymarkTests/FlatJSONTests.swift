import Foundation
import Testing

@testable import Waymark

/// The run page's one-pass reader of audit lines gives what `JSONDecoder` gives, or nil (and
/// the page then uses `JSONDecoder`).
@Suite struct FlatJSONTests {
    static func decoded(_ line: String) -> [String: SessionReportWriter.Value]? {
        try? JSONDecoder().decode([String: SessionReportWriter.Value].self, from: Data(line.utf8))
    }

    @Test func everyGoldenAuditLineReadsAsJSONDecoderReadsIt() throws {
        let directory = Paths.fixture("scenarios")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter {
            $0.hasSuffix(".audit.ndjson")
        }
        #expect(files.count >= 5)
        var lines = 0
        for file in files {
            for line in try String(contentsOfFile: directory + "/" + file, encoding: .utf8).split(separator: "\n") {
                let text = String(line)
                let flat = FlatJSON.object(text)
                #expect(flat != nil, "\(file): \(text)")
                #expect(flat == Self.decoded(text), "\(file): \(text)")
                lines += 1
            }
        }
        #expect(lines > 1000)
    }

    @Test(arguments: [
        #"{}"#, #" { "a" : 1 , "b":"x" } "#, #"{"a":-0.5e-3,"b":true,"c":false,"d":null}"#,
        #"{"a":1E+2,"b":0,"c":-0,"d":123456789012345678901234567890}"#, #"{"é":"ü ☃"}"#,
    ])
    func flatObjectsReadTheSame(_ line: String) {
        let flat = FlatJSON.object(line)
        #expect(flat != nil)
        #expect(flat == Self.decoded(line))
    }

    /// What it does not read, it leaves to JSONDecoder: nesting, escapes, and text that is not
    /// JSON (which JSONDecoder then names).
    @Test(arguments: [
        #"{"a":{"b":1}}"#, #"{"a":[1]}"#, #"{"a":"x\"y"}"#, #"{"a":"\u00e9"}"#, #"{"a":01}"#, #"{"a":1.}"#,
        #"{"a":.5}"#, #"{"a":1e}"#, #"{"a":tru}"#, #"{"a":1}x"#, #"{"a":1,}"#, #"{"a" 1}"#, #"[1]"#, "",
        #"{"a":"#, #"{"a":NaN}"#, #"{"a":1e999}"#,
    ])
    func anythingElseIsLeftToJSONDecoder(_ line: String) {
        #expect(FlatJSON.object(line) == nil, "\(line)")
    }
}
