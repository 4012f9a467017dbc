import Foundation
import Testing

@testable import Waymark

/// A provenance holds its source as an ``Provenance/Origin``: its file's or device's name as a
/// number, so that a fix is copied without counting a reference to the name. The source reads
/// back byte for byte, coding and reflection are what the compiler wrote for the stored fields,
/// and a location boxed from its fields is the location. One change is meant: names are told
/// apart by their bytes, so the two spellings of an accented file name (equal as strings) are
/// two sources, and their provenances are unequal (before, they were equal).
@Suite struct ProvenanceOriginTests {
    /// The provenance as it was before the source became a number: the same fields, stored,
    /// with the conformances the compiler writes.
    struct StoredProvenance: Codable, Hashable {
        var source: Provenance.Source
        var isSimulatedBySoftware: Bool
        var fixMode: Provenance.FixMode
        var satellitesUsed: Int?
        var hdop: Double?
        var vdop: Double?
        var pdop: Double?
        var differential: Provenance.Differential
        var speedIsDerived: Bool
        var courseIsDerived: Bool
        var degradation: Provenance.Degradation?

        var provenance: Provenance {
            Provenance(
                source: source, isSimulatedBySoftware: isSimulatedBySoftware, fixMode: fixMode,
                satellitesUsed: satellitesUsed, hdop: hdop, vdop: vdop, pdop: pdop, differential: differential,
                speedIsDerived: speedIsDerived, courseIsDerived: courseIsDerived, degradation: degradation)
        }
    }

    /// Names that differ in their bytes only (é composed and decomposed), a name that is a prefix
    /// of another, an empty one, and long ones.
    static let names = [
        "walk.gpx", "/tmp/caf\u{E9}.gpx", "/tmp/cafe\u{301}.gpx", "walk.gpx.bak", "", "/dev/ttyUSB0",
        "/dev/ttyACM0", String(repeating: "long/", count: 40) + "x.gpx",
    ]

    static func stored(_ r: inout PropertyRandom) -> StoredProvenance {
        let name = r.pick(names)
        return StoredProvenance(
            source: r.bool() ? .file(path: name, index: r.int(0...1_000_000)) : .gpsd(device: name),
            isSimulatedBySoftware: r.bool(), fixMode: r.pick(Provenance.FixMode.allCases),
            satellitesUsed: r.bool() ? r.int(0...40) : nil, hdop: r.bool() ? Double(r.int(0...99)) / 10 : nil,
            vdop: r.bool() ? Double(r.int(0...99)) / 10 : nil, pdop: r.bool() ? 1.5 : nil,
            differential: r.pick(Provenance.Differential.allCases), speedIsDerived: r.bool(),
            courseIsDerived: r.bool(),
            degradation: r.bool(0.2) ? Provenance.Degradation(error: 3.5, faults: r.bool() ? ["jump"] : []) : nil)
    }

    @Test func theSourceReadsBackByteForByte() {
        var r = PropertyRandom(seed: 41)
        for _ in 0..<2_000 {
            let s = Self.stored(&r)
            let p = s.provenance
            #expect(p.source == s.source)
            // Equal as strings is not enough: the two spellings of "café" are equal strings.
            switch (p.source, s.source) {
            case (.file(let a, let i), .file(let b, let j)):
                #expect(Array(a.utf8) == Array(b.utf8) && i == j)
                #expect(p.fileIndex == j)
            case (.gpsd(let a), .gpsd(let b)):
                #expect(Array(a.utf8) == Array(b.utf8))
                #expect(p.fileIndex == 0)
            default:
                Issue.record("the kind of source changed: \(s.source) became \(p.source)")
            }
            var changed = p
            let other = Self.stored(&r).source
            changed.source = other
            #expect(changed.source == other)
        }
    }

    /// Two files whose names are equal strings but different bytes are different files.
    @Test func namesAreToldApartByTheirBytes() {
        let composed = Provenance.Source.file(path: "/tmp/caf\u{E9}.gpx", index: 3)
        let decomposed = Provenance.Source.file(path: "/tmp/cafe\u{301}.gpx", index: 3)
        let a = Provenance(source: composed, isSimulatedBySoftware: true, fixMode: .threeD)
        let b = Provenance(source: decomposed, isSimulatedBySoftware: true, fixMode: .threeD)
        #expect(a != b)
        #expect(a.source == b.source, "as strings, the two names are equal")
        guard case .file(let path, _) = b.source else {
            Issue.record("the source is no longer a file: \(b.source)")
            return
        }
        #expect(Array(path.utf8) == Array("/tmp/cafe\u{301}.gpx".utf8))
    }

    /// Equal when the stored fields are, the source's name compared by its bytes, and then
    /// hashed alike (pairs drawn from few names are often equal); JSON with sorted keys is byte
    /// for byte what the compiler's coding of the fields writes (without `.sortedKeys`,
    /// Foundation's encoder orders keys by their hashes, seeded per process, for any type), and
    /// decodes to an equal provenance; reflection (`dump`, test failures) shows the same fields.
    @Test func equalityHashingAndCodingAreTheFields() throws {
        var r = PropertyRandom(seed: 42)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var equalPairs = 0
        for _ in 0..<3_000 {
            let s = Self.stored(&r)
            var t = r.bool() ? s : Self.stored(&r)
            if r.bool(0.3) { t.source = s.source }
            let (p, q) = (s.provenance, t.provenance)
            let bytesEqual: Bool
            switch (s.source, t.source) {
            case (.file(let a, let i), .file(let b, let j)): bytesEqual = Array(a.utf8) == Array(b.utf8) && i == j
            case (.gpsd(let a), .gpsd(let b)): bytesEqual = Array(a.utf8) == Array(b.utf8)
            default: bytesEqual = false
            }
            var u = s
            u.source = t.source
            let expected = bytesEqual && u == t
            #expect((p == q) == expected)
            if p == q {
                equalPairs += 1
                #expect(p.hashValue == q.hashValue)
            }
            let json = try encoder.encode(p)
            #expect(String(decoding: json, as: UTF8.self) == String(decoding: try encoder.encode(s), as: UTF8.self))
            #expect(try JSONDecoder().decode(Provenance.self, from: json) == p)
            func shown(_ value: Any) -> [String] {
                Mirror(reflecting: value).children.map { "\($0.label ?? "?")=\(String(reflecting: $0.value))" }
            }
            #expect(shown(p) == shown(s))
        }
        #expect(equalPairs > 500)
    }

    /// A location made from its fields (as a replay boxes what its timeline laid out) is the
    /// location made field by field, and changing a copy's fields leaves the original alone.
    @Test func aLocationOfFieldsIsTheLocation() {
        var r = PropertyRandom(seed: 43)
        for _ in 0..<500 {
            let provenance = Self.stored(&r).provenance
            let made = Location(
                coordinate: Coordinate(latitude: Double(r.int(-90...90)), longitude: Double(r.int(-180...180))),
                altitude: Double(r.int(-400...9000)), ellipsoidalAltitude: r.bool() ? 51 : nil,
                horizontalAccuracy: Double(r.int(-1...100)), verticalAccuracy: Double(r.int(-1...100)),
                speed: Double(r.int(-1...40)), speedAccuracy: Double(r.int(-1...3)), course: Double(r.int(-1...359)),
                courseAccuracy: Double(r.int(-1...20)),
                timestamp: Date(timeIntervalSince1970: Double(r.int(0...2_000_000_000))), provenance: provenance)
            let boxed = Location(fields: made.fields)
            #expect(boxed == made)
            #expect(boxed.hashValue == made.hashValue)
            var changed = boxed
            changed.fields.speed = 99
            changed.fields.provenance.speedIsDerived.toggle()
            #expect(changed.speed == 99 && boxed.speed == made.speed)
            #expect(changed.provenance.speedIsDerived != boxed.provenance.speedIsDerived)
            #expect(boxed == made)
        }
    }
}
