import Foundation
import Testing

@testable import Waymark

/// Bad input to the activity readers: an error at the place (`file:line:column`, or a FIT file's
/// byte), strictly; leniently, what can be read is kept and the rest is said in warnings. And the
/// formats told by content, whatever the name.
struct ActivityReaderErrorTests {
    /// Reads `text` through `TraceFormat` as `name`: the events' points and warnings, or the error.
    static func read(_ bytes: [UInt8], name: String = "f.dat", lenient: Bool = false) -> (
        points: [GPXPoint], warnings: [String], error: GPXError?, format: TraceFormat
    ) {
        var points: [GPXPoint] = []
        var warnings: [String] = []
        let format = TraceFormat.detect(bytes.prefix(4096))
        do {
            let reader = try TraceFormat.reader(
                for: MemoryByteSource(bytes), name: name, options: GPXReadOptions(lenient: lenient))
            try reader.readEvents { event in
                switch event {
                case .waypoint(let p), .trackPoint(let p), .routePoint(let p): points.append(p)
                case .warning(let w): warnings.append(w.description)
                default: break
                }
            }
            return (points, warnings, nil, format)
        } catch let error as GPXError {
            return (points, warnings, error, format)
        } catch {
            Issue.record("not a GPXError: \(error)")
            return (points, warnings, nil, format)
        }
    }

    static func read(_ text: String, name: String = "f.dat", lenient: Bool = false) -> (
        points: [GPXPoint], warnings: [String], error: GPXError?, format: TraceFormat
    ) { read(Array(text.utf8), name: name, lenient: lenient) }

    // MARK: - CSV

    @Test func aCSVHeaderWithoutAPositionNamesWhatItHasAndWhatIsMissing() {
        let r = Self.read("# a logger's file\ntime,latitude,height\n2024-01-01T00:00:00Z,1,2\n", name: "log.csv")
        // Its content alone does not say CSV (no position is named); its name does.
        let e = r.error
        #expect(
            e?.description.hasPrefix("log.csv:2:1: the header line names no longitude column") == true,
            "\(String(describing: e))")
        #expect(e?.message.contains("'time', 'latitude', 'height'") == true)
        #expect(e?.message.contains("'lon' or 'lng'") == true)
    }

    @Test func aBadCSVValueIsAnErrorAtItsColumnOrLeftOutLeniently() {
        let text =
            "lat;lon;ele;time\n1.5;2.5;10;2024-01-01T00:00:00Z\n91;2.5;10;2024-01-01T00:00:01Z\n1.6;2.6;x;2024-01-01T00:00:02Z\n1.7;2.7;12;not a time\n"
        let strict = Self.read(text, name: "t.csv")
        #expect(
            strict.error?.description == "t.csv:3:1: latitude '91' is not a number in -90...90",
            "\(String(describing: strict.error))")
        #expect(strict.points.count == 1, "the rows before the error were delivered")
        let lenient = Self.read(text, name: "t.csv", lenient: true)
        #expect(lenient.error == nil)
        #expect(
            lenient.points.map(\.coordinate.latitude) == [1.5, 1.6, 1.7], "the bad row is dropped, the others kept")
        #expect(lenient.points[1].elevation == nil && lenient.points[1].time != nil, "a bad value only is left out")
        #expect(lenient.points[2].time == nil && lenient.points[2].elevation == 12)
        #expect(lenient.warnings.contains { $0.hasPrefix("t.csv:3:1: warning: latitude '91'") }, "\(lenient.warnings)")
        #expect(
            lenient.warnings.contains { $0.hasPrefix("t.csv:4:9: warning: elevation 'x' is not a number") },
            "\(lenient.warnings)")
        #expect(
            lenient.warnings.contains { $0.hasPrefix("t.csv:5:12: warning: time 'not a time'") }, "\(lenient.warnings)")
    }

    @Test func quotedCSVFieldsHoldDelimitersQuotesAndLineBreaks() {
        let text = "name,lat,lon\n\"a, \"\"quoted\"\"\nname\",1,2\nplain,3,4\n"
        let r = Self.read(text)
        #expect(r.error == nil, "\(String(describing: r.error))")
        #expect(r.points.map(\.name) == ["a, \"quoted\"\nname", "plain"])
        #expect(r.points.map(\.coordinate.latitude) == [1, 3])
        let huge = Self.read("lat,lon,name\n1,2,\"" + String(repeating: "x", count: 1 << 21), name: "h.csv")
        #expect(huge.error?.code == .limitExceeded, "a row of 2 MiB: \(String(describing: huge.error))")
        #expect(huge.error?.description.hasPrefix("h.csv:2:1: a row longer than 1 MiB (a quoted field") == true)
        let open = Self.read("lat,lon,name\n1,2,\"never closed\n3,4,x\n", name: "q.csv")
        #expect(
            open.error?.code == .truncated && open.error?.description.hasPrefix("q.csv:2:5: a quoted field") == true,
            "\(String(describing: open.error))")
    }

    // MARK: - TCX, KML, GeoJSON, FIT

    @Test func aBadTCXPositionIsAnErrorAtItsElement() {
        let tcx = """
            <TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2"><Activities><Activity Sport="Running"><Id>x</Id><Lap><Track>
            <Trackpoint><Time>2024-01-01T00:00:00Z</Time><Position><LatitudeDegrees>1</LatitudeDegrees><LongitudeDegrees>2</LongitudeDegrees></Position></Trackpoint>
            <Trackpoint><Time>2024-01-01T00:00:01Z</Time><Position><LatitudeDegrees>north</LatitudeDegrees><LongitudeDegrees>2</LongitudeDegrees></Position></Trackpoint>
            <Trackpoint><Time>2024-01-01T00:00:02Z</Time><Position><LatitudeDegrees>3</LatitudeDegrees><LongitudeDegrees>4</LongitudeDegrees></Position></Trackpoint>
            </Track></Lap></Activity></Activities></TrainingCenterDatabase>
            """
        let strict = Self.read(tcx, name: "a.gpx")
        #expect(strict.format == .tcx, "told by content, not by the name")
        #expect(
            strict.error?.description == "a.gpx:3:56: <LatitudeDegrees> is not a number: 'north'",
            "\(String(describing: strict.error))")
        let lenient = Self.read(tcx, name: "a.gpx", lenient: true)
        #expect(lenient.points.map(\.coordinate.latitude) == [1, 3])
        #expect(
            lenient.warnings.contains {
                $0.contains("<Trackpoint>'s <Position>: it has no latitude; the point is dropped")
            }, "\(lenient.warnings)")
    }

    @Test func aGxTrackWithMoreTimesThanPositionsIsAnError() {
        let kml = """
            <kml xmlns="http://www.opengis.net/kml/2.2" xmlns:gx="http://www.google.com/kml/ext/2.2"><Placemark><gx:Track>
            <when>2024-01-01T00:00:00Z</when><when>2024-01-01T00:00:01Z</when><when>2024-01-01T00:00:02Z</when>
            <gx:coord>2 1 0</gx:coord><gx:coord>4 3 0</gx:coord>
            </gx:Track></Placemark></kml>
            """
        let strict = Self.read(kml, name: "t.kml")
        #expect(
            strict.error?.description.hasPrefix("t.kml:1:101: <gx:Track> has 3 <when> and 2 <gx:coord>") == true,
            "\(String(describing: strict.error))")
        let lenient = Self.read(kml, name: "t.kml", lenient: true)
        #expect(lenient.points.map(\.coordinate.latitude) == [1, 3])
        #expect(lenient.points.map { $0.time?.timeIntervalSince1970 } == [1_704_067_200, 1_704_067_201])
    }

    /// Twenty lines of elements: enough, read through 64-byte chunks, for an element's start tag
    /// to leave the tokenizer's window before its end.
    static let windowPadding = String(
        repeating: "<name>padding so that the start leaves the window</name>\n", count: 20)

    /// Reads KML (or TCX) `text` in `piece`-byte reads through 64-byte chunks: its warnings, and
    /// the error that ended the read, if any.
    static func readInPieces(_ text: String, _ piece: Int, lenient: Bool, tcx: Bool = false) -> (
        warnings: [String], error: String?
    ) {
        var warnings: [String] = []
        let source = MemoryByteSource(Array(text.utf8), pieceSize: piece)
        let options = GPXReadOptions(
            lenient: lenient, limits: XMLLimits(maxDepth: 64, maxTokenBytes: 4096, chunkBytes: 64))
        let reader: any TraceEventReader =
            tcx
            ? TCXReader(source: source, name: "t.tcx", options: options)
            : KMLReader(source: source, name: "t.kml", options: options)
        do {
            try reader.readEvents { event in
                if case .warning(let w) = event { warnings.append(w.description) }
            }
            return (warnings, nil)
        } catch {
            return (warnings, "\(error)")
        }
    }

    /// A `<gx:Track>` reports its bad positions and its count mismatch at its end, after its
    /// text may have left the tokenizer: each still names the line and column where it was
    /// read, whole and in pieces of every size (the fuzzer found 12:4 for 11:5 at 7 bytes).
    @Test func aGxTrackNamesItsBadPositionsWhereverTheReadsEnd() {
        let padding = Self.windowPadding
        func kml(_ coords: [String]) -> String {
            """
            <kml xmlns="http://www.opengis.net/kml/2.2" xmlns:gx="http://www.google.com/kml/ext/2.2"><Placemark>
            \t<gx:Track>
            \t\t<when>2024-01-01T00:00:00Z</when><when>2024-01-01T00:00:01Z</when><when>2024-01-01T00:00:02Z</when>

            """ + coords.map { "\t\t<gx:coord>\($0)</gx:coord>\n" }.joined()
                + "\t\t<ExtendedData>\(padding)</ExtendedData>\n\t</gx:Track></Placemark></kml>\n"
        }
        func read(_ text: String, _ piece: Int, lenient: Bool) -> (warnings: [String], error: String?) {
            Self.readInPieces(text, piece, lenient: lenient)
        }
        // Lenient: a latitude out of range, a number that is not one, and a fourth position
        // for three times.
        let four = kml(["2 1 0", "2 95 0", "4 x 0", "4 3 0"])
        let lenient = read(four, .max, lenient: true)
        #expect(lenient.warnings.count == 4, "\(lenient.warnings)")
        #expect(
            lenient.warnings.contains { $0.hasPrefix("t.kml:5:3: warning: <gx:coord>'s coordinates: latitude 95.0") })
        #expect(
            lenient.warnings.contains { $0.hasPrefix("t.kml:6:3: warning: <gx:coord>'s coordinates: latitude nan") })
        #expect(lenient.warnings.contains { $0.hasPrefix("t.kml:2:2: warning: <gx:Track> has 3 <when> and 4") })
        // Strict: the latitude out of range is the error, found at the track's end.
        let three = kml(["2 1 0", "2 95 0", "4 3 0"])
        let strict = read(three, .max, lenient: false)
        #expect(strict.error?.hasPrefix("t.kml:5:3: ") == true, "\(String(describing: strict.error))")
        for piece in [1, 7, 64, 65, 4093] {
            #expect(read(four, piece, lenient: true) == lenient, "\(piece)-byte reads")
            #expect(read(three, piece, lenient: false) == strict, "\(piece)-byte reads")
        }
    }

    /// The other elements whose problems show at their end, a KML `<Point>`, a `<LineString>`'s
    /// `<coordinates>` and a TCX `<Trackpoint>`, are reported at their start, read whole or in
    /// pieces of any size (the start tag has long left the tokenizer by then).
    @Test func elementsJudgedAtTheirEndNameTheirStartWhereverTheReadsEnd() {
        let padding = Self.windowPadding
        func read(_ text: String, _ piece: Int, lenient: Bool, tcx: Bool) -> (warnings: [String], error: String?) {
            Self.readInPieces(text, piece, lenient: lenient, tcx: tcx)
        }
        let kml = """
            <kml xmlns="http://www.opengis.net/kml/2.2"><Document>
            <Placemark><Point>
            \t<coordinates>200,10</coordinates><ExtendedData>\(padding)</ExtendedData>
            </Point></Placemark>
            <Placemark><LineString>
            \t<coordinates>1,2 x,3 4,5
            1,95 \(String(repeating: "6,7 ", count: 40))
            </coordinates>
            </LineString></Placemark>
            </Document></kml>

            """
        let tcx = """
            <TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2">
            <Activities><Activity Sport="Running"><Lap StartTime="2024-01-01T00:00:00Z"><Track>
              <Trackpoint><Time>2024-01-01T00:00:00Z</Time>
                <HeartRateBpm><Value>120</Value></HeartRateBpm><Extensions>\(padding)</Extensions>
              </Trackpoint>
              <Trackpoint><Time>2024-01-01T00:00:01Z</Time>
                <Position><LatitudeDegrees>95</LatitudeDegrees><LongitudeDegrees>1</LongitudeDegrees></Position>
                <Extensions>\(padding)</Extensions>
              </Trackpoint>
            </Track></Lap></Activity></Activities></TrainingCenterDatabase>

            """
        // A <LineString> alone, so that the strict read stops at its <coordinates>.
        let line = """
            <kml xmlns="http://www.opengis.net/kml/2.2"><Placemark><ExtendedData>\(padding)</ExtendedData>
            <LineString><coordinates>
            1,2 \(String(repeating: "6,7 ", count: 40))
            3,4 5,-91
            </coordinates></LineString></Placemark></kml>

            """
        // A course's point, after padding in its notes.
        let course = """
            <TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2">
            <Courses><Course><Name>c</Name>
              <CoursePoint><Name>turn</Name><Notes>\(String(repeating: "notes that push the start out\n", count: 20))</Notes>
                <Position><LatitudeDegrees>1</LatitudeDegrees><LongitudeDegrees>181</LongitudeDegrees></Position>
              </CoursePoint>
            </Course></Courses></TrainingCenterDatabase>

            """
        let cases: [(text: String, tcx: Bool, lenient: [String], strict: String)] = [
            (line, false, ["t.kml:22:13: warning: <LineString>'s coordinates: latitude -91.0"], "t.kml:22:13: "),
            (course, true, ["t.tcx:3:3: warning: <CoursePoint>'s <Position>: longitude 181.0"], "t.tcx:3:3: "),
            (
                kml, false,
                [
                    "t.kml:2:12: warning: <Point>'s coordinates: longitude 200.0",
                    "t.kml:26:2: warning: <LineString>'s coordinates: latitude 95.0",
                    "t.kml:26:2: warning: <coordinates> holds 'x'",
                ], "t.kml:2:12: "
            ),
            (
                tcx, true,
                [
                    "t.tcx:26:3: warning: <Trackpoint>'s <Position>: latitude 95.0",
                    "t.tcx:3:3: warning: 1 trackpoint(s) have no <Position>",
                ], "t.tcx:26:3: "
            ),
        ]
        for c in cases {
            let lenient = read(c.text, .max, lenient: true, tcx: c.tcx)
            #expect(lenient.error == nil, "\(lenient)")
            #expect(lenient.warnings.count == c.lenient.count, "\(lenient)")
            for (got, want) in zip(lenient.warnings, c.lenient) {
                #expect(got.hasPrefix(want), "\(got) (wanted \(want)...)")
            }
            let strict = read(c.text, .max, lenient: false, tcx: c.tcx)
            #expect(strict.error?.hasPrefix(c.strict) == true, "\(strict)")
            for piece in [1, 7, 64, 65, 4093] {
                #expect(read(c.text, piece, lenient: true, tcx: c.tcx) == lenient, "\(piece)-byte reads")
                #expect(read(c.text, piece, lenient: false, tcx: c.tcx) == strict, "\(piece)-byte reads")
            }
        }
    }

    @Test func aGeoJSONSyntaxErrorNamesItsLineAndColumn() {
        let json =
            "{\"type\": \"FeatureCollection\", \"features\": [\n  {\"type\": \"Feature\", \"geometry\": {\"type\": \"Point\", \"coordinates\": [1, 2]} \"properties\": {}}\n]}\n"
        let r = Self.read(json, name: "m.json")
        #expect(r.format == .geoJSON)
        #expect(r.error?.description.hasPrefix("m.json:2:76:") == true, "\(String(describing: r.error))")
        let swapped = Self.read(#"{"type":"Point","coordinates":[2,100]}"#, name: "p.geojson")
        #expect(swapped.error?.code == .invalidCoordinate, "latitude 100: \(String(describing: swapped.error))")
        #expect(swapped.error?.message.contains("longitude first") == true)
    }

    @Test func aFITFileCutShortOrCorruptedIsAnErrorAtItsByte() throws {
        let fit = ActivityReaderTests.fit(
            ActivityReaderTests.Activity(
                tracks: [
                    ActivityReaderTests.Track(
                        name: "",
                        segments: [
                            (0..<20).map {
                                ActivityReaderTests.Point(
                                    lat7: 515_000_000 + $0 * 100, lon7: -1_000_000, eleDm: 100,
                                    ms: 1_700_000_000_000 + Int64($0) * 1000)
                            }
                        ])
                ], waypoints: []))
        let whole = Self.read(fit)
        #expect(
            whole.error == nil && whole.points.count == 20 && whole.format == .fit, "\(String(describing: whole.error))"
        )
        let cut = Self.read(Array(fit.prefix(fit.count - 40)), name: "c.fit")
        #expect(cut.error?.code == .truncated, "\(String(describing: cut.error))")
        #expect(cut.error?.description.hasPrefix("c.fit: ") == true)
        var flipped = fit
        flipped[fit.count / 2] ^= 0x40
        let bad = Self.read(flipped, name: "b.fit")
        #expect(bad.error != nil, "a flipped bit is caught (by the CRC at the latest)")
        #expect(bad.error?.message.contains("byte") == true, "\(String(describing: bad.error))")
        let lenient = Self.read(Array(fit.prefix(fit.count / 2)), name: "c.fit", lenient: true)
        #expect(lenient.error == nil && !lenient.points.isEmpty && lenient.points.count < 20)
        #expect(lenient.warnings.contains { $0.contains("kept the") }, "\(lenient.warnings)")
    }

    /// A KML line's coordinates are one text of many megabytes (a day in Google Earth): the
    /// tokenizer gives it in pieces rather than refusing it at its 1 MiB token limit, and every
    /// tuple is read, whatever the reads, with a CR LF split across pieces counted once.
    @Test func aKMLLineOfMegabytesIsReadAsItComes() throws {
        let count = 150_000
        var text = "<kml xmlns=\"http://www.opengis.net/kml/2.2\"><Placemark><LineString><coordinates>"
        for i in 0..<count {
            text += "\(11 + Double(i) * 1e-5),\(48 + Double(i) * 1e-6),\(i % 100)" + (i % 3 == 0 ? "\r\n" : " ")
        }
        text += "</coordinates></LineString></Placemark></kml>"
        #expect(text.utf8.count > 3 << 20)
        for piece in [Int.max, 7777] {
            var points: [GPXPoint] = []
            let reader = KMLReader(source: MemoryByteSource(Array(text.utf8), pieceSize: piece), name: "long.kml")
            try reader.readEvents { event in
                if case .trackPoint(let p) = event { points.append(p) }
            }
            #expect(points.count == count, "\(piece)-byte reads")
            let wrong = points.enumerated().first { i, p in
                p.coordinate.longitude != 11 + Double(i) * 1e-5 || p.coordinate.latitude != 48 + Double(i) * 1e-6
                    || p.elevation != Double(i % 100)
            }
            #expect(wrong == nil, "\(piece)-byte reads: \(String(describing: wrong))")
        }
    }

    /// Every fixture gives events in GPX's shape: no waypoint inside a track (a FIT course's
    /// course points come among its records, a TCX course's after its track), no empty segment.
    @Test(arguments: try! FileManager.default.contentsOfDirectory(atPath: Paths.fixture("activity")).sorted())
    func eachFixtureGivesEventsInGPXsShape(_ name: String) throws {
        let reader = try TraceFormat.reader(
            for: FileByteSource(path: Paths.fixture("activity/" + name)), name: name)
        var events: [GPXEvent] = []
        try reader.readEvents { events.append($0) }
        #expect(ActivityReaderTests.shapeProblems(events).isEmpty, "\(ActivityReaderTests.shapeProblems(events))")
    }

    /// A TCX course's points, a KML MultiGeometry's points after its lines, and a CSV's waypoint
    /// rows among its track's come after the track, not inside it.
    @Test func waypointsAmongATracksPointsComeAfterIt() throws {
        let tcx = """
            <TrainingCenterDatabase><Courses><Course><Name>c</Name><Track>
            <Trackpoint><Position><LatitudeDegrees>1</LatitudeDegrees><LongitudeDegrees>2</LongitudeDegrees></Position></Trackpoint>
            </Track><CoursePoint><Name>top</Name><Position><LatitudeDegrees>1</LatitudeDegrees><LongitudeDegrees>2</LongitudeDegrees></Position><PointType>Summit</PointType></CoursePoint></Course></Courses></TrainingCenterDatabase>
            """
        let kml = """
            <kml xmlns="http://www.opengis.net/kml/2.2"><Placemark><name>m</name><MultiGeometry>
            <LineString><coordinates>2,1 3,1</coordinates></LineString><Point><coordinates>4,1</coordinates></Point>
            </MultiGeometry></Placemark></kml>
            """
        let csv = "type,lat,lon\nT,1,2\nW,1.5,2\nT,1,3\n"
        for (text, name) in [(tcx, "c.tcx"), (kml, "m.kml"), (csv, "w.csv")] {
            let reader = try TraceFormat.reader(for: MemoryByteSource(Array(text.utf8)), name: name)
            var events: [GPXEvent] = []
            try reader.readEvents { events.append($0) }
            #expect(
                ActivityReaderTests.shapeProblems(events).isEmpty,
                "\(name): \(ActivityReaderTests.shapeProblems(events))")
            #expect(events.contains { if case .waypoint = $0 { true } else { false } }, "\(name): the waypoint is kept")
        }
    }

    // MARK: - Told by content

    @Test func eachFormatIsToldByItsContentWhateverItsName() throws {
        let csvWithBOM: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("Latitude;Longitude\n1;2\n".utf8)
        // Sorted keys (GPSBabel, jq -S): "type" comes after a first feature longer than the 4 KiB
        // the detection sees.
        let longLine = (0..<400).map { "[11.\($0),48.\($0)]" }.joined(separator: ",")
        let sorted =
            "{\"features\":[{\"geometry\":{\"coordinates\":[\(longLine)],\"type\":\"LineString\"},\"type\":\"Feature\"}],\"type\":\"FeatureCollection\"}"
        let cases: [([UInt8], TraceFormat)] = [
            (Array(sorted.utf8), .geoJSON),
            (Array("{\"name\":\"no geography\"}".utf8), .gpx),
            (Array("<?xml version=\"1.0\"?>\n<!-- c -->\n<TrainingCenterDatabase/>".utf8), .tcx),
            (Array("<kml:kml xmlns:kml=\"http://www.opengis.net/kml/2.2\"/>".utf8), .kml),
            (Array("<?xml version=\"1.0\"?><gpx version=\"1.1\"/>".utf8), .gpx),
            (Array("{\n  \"type\": \"FeatureCollection\",\n  \"features\": []\n}".utf8), .geoJSON),
            ([0x1E] + Array("{\"type\":\"Feature\"}\n".utf8), .geoJSON),
            (Array("{\"class\":\"TPV\",\"mode\":3}\n".utf8), .gpsdJSON),
            (
                Array(
                    "5.1,N,00833.9,E,1,08*47\n$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47\n".utf8),
                .nmea
            ),
            (csvWithBOM, .csv),
            (Array("# comment\nlat,lon\n1,2\n".utf8), .csv),
            (Array("x,y,z\n1,2,3\n".utf8), .gpx),
            (ActivityReaderTests.fit(ActivityReaderReadsTests.oneTrack), .fit),
        ]
        for (bytes, format) in cases {
            #expect(TraceFormat.detect(bytes) == format, "\(String(decoding: bytes.prefix(60), as: UTF8.self))")
        }
        // Delimited text that names no position is CSV by its name only: the CSV reader then
        // says what is missing; by any other name, the GPX reader says it is not XML.
        let named = Self.read("x,y,z\n1,2,3\n", name: "points.csv")
        #expect(named.error?.message.hasPrefix("the header line names no latitude column") == true)
        let unnamed = Self.read("hello, this is not XML\n", name: "notes.gpx")
        #expect(unnamed.error?.code == .malformedXML, "\(String(describing: unnamed.error))")
        let r = Self.read(csvWithBOM)
        #expect(r.error == nil && r.points.count == 1, "\(String(describing: r.error))")
    }
}

enum ActivityReaderReadsTests {
    static let oneTrack = ActivityReaderTests.Activity(
        tracks: [
            ActivityReaderTests.Track(
                name: "", segments: [[ActivityReaderTests.Point(lat7: 10, lon7: 20, eleDm: 0, ms: 1_000_000_000_000)]])
        ], waypoints: [])
}
