// The app-facing names of the first rounds, kept for a release (docs/layout.md, "One app-facing
// API"). App code uses Apple's spelling: `CLLocationManager` and `CLLocationManagerDelegate` from
// `WaymarkCoreLocation` (`import CoreLocation` on Linux, docs/porting.md). The device's own handle,
// which the Apple-spelled types speak through and which the tools use, is `DeviceLocationManager`.

/// The device's location manager under its old name.
@available(
    *, deprecated,
    message:
        "app code: use CLLocationManager (WaymarkCoreLocation; `import CoreLocation` on Linux, docs/porting.md); tools: DeviceLocationManager"
)
public typealias LocationManager = DeviceLocationManager

/// The device manager's delegate under its old name.
@available(
    *, deprecated,
    message:
        "app code: use CLLocationManagerDelegate (WaymarkCoreLocation; `import CoreLocation` on Linux, docs/porting.md); tools: DeviceLocationManagerDelegate"
)
public typealias LocationManagerDelegate = DeviceLocationManagerDelegate
