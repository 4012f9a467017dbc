/// What namespace an extension element is in, as far as picking out known values needs to know.
enum ExtensionNamespace: Equatable {
    /// No namespace (an unprefixed element in a file without a default namespace).
    case none
    /// Garmin's TrackPointExtension, v1 or v2.
    case trackPointExtension
    /// Garmin's PowerExtension.
    case powerExtension
    /// Any other, GPX's own included.
    case other

    init(uri: ByteSpan) {
        if uri.count == 0 {
            self = .none
        } else if uri.equals("http://www.garmin.com/xmlschemas/TrackPointExtension/v1")
            || uri.equals("http://www.garmin.com/xmlschemas/TrackPointExtension/v2")
        {
            self = .trackPointExtension
        } else if uri.equals("http://www.garmin.com/xmlschemas/PowerExtension/v1") {
            self = .powerExtension
        } else {
            self = .other
        }
    }
}

/// Where the value of an extension element goes, if Waymark knows it: one of ``GPXExtensions``'s
/// values, or an accuracy that goes to the point's details. The general reader and the track
/// point scanner both ask this, so that they pick out the same values.
enum ExtensionTarget: Equatable {
    case value(GPXExtensions.Field)
    case horizontalAccuracy, verticalAccuracy

    init?(local: ByteSpan, namespace: ExtensionNamespace) {
        if namespace == .trackPointExtension, let field = GPXExtensions.Field(trackPointExtensionName: local) {
            self = .value(field)
            return
        }
        if namespace != .trackPointExtension {
            if namespace == .powerExtension && local.equals("PowerInWatts") {
                self = .value(.power)
                return
            }
            if local.equals("power") && namespace != .none {
                self = .value(.power)
                return
            }
            // What common apps write without Garmin's schema, in their own namespace or in
            // none: Apple Health's <speed> and <course>, OsmAnd's speed and heading, OpenTracks'
            // speed (metres per second, degrees). The elements themselves are kept where they
            // were.
            if local.equals("speed") {
                self = .value(.speed)
                return
            }
            if local.equals("course") || local.equals("heading") {
                self = .value(.course)
                return
            }
        }
        // Apple Health's <hAcc> and <vAcc> (metres), in any namespace or none.
        if local.equals("hAcc") {
            self = .horizontalAccuracy
        } else if local.equals("vAcc") {
            self = .verticalAccuracy
        } else {
            return nil
        }
    }
}
