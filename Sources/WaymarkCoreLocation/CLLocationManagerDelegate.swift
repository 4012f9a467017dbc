import Foundation

/// `CLLocationManagerDelegate`, with every method in Apple's signature.
///
/// Every method is optional on iOS; here each has a default. The defaults fall back as iOS does:
/// - `locationManagerDidChangeAuthorization(_:)` not implemented: the deprecated
///   `locationManager(_:didChangeAuthorization:)` is called with the status;
/// - `locationManager(_:didUpdateLocations:)` not implemented: the deprecated
///   `locationManager(_:didUpdateTo:from:)` is called for each location ("If
///   locationManager:didUpdateLocations: is implemented, this method will not be called").
public protocol CLLocationManagerDelegate: NSObjectProtocol {
    func locationManager(_ manager: CLLocationManager, didUpdateLocations locations: [CLLocation])
    func locationManager(
        _ manager: CLLocationManager, didUpdateTo newLocation: CLLocation, from oldLocation: CLLocation)
    func locationManager(_ manager: CLLocationManager, didUpdateHeading newHeading: CLHeading)
    func locationManagerShouldDisplayHeadingCalibration(_ manager: CLLocationManager) -> Bool
    func locationManager(_ manager: CLLocationManager, didDetermineState state: CLRegionState, for region: CLRegion)
    func locationManager(_ manager: CLLocationManager, didEnterRegion region: CLRegion)
    func locationManager(_ manager: CLLocationManager, didExitRegion region: CLRegion)
    func locationManager(_ manager: CLLocationManager, didFailWithError error: any Error)
    func locationManager(
        _ manager: CLLocationManager, monitoringDidFailFor region: CLRegion?, withError error: any Error)
    func locationManager(_ manager: CLLocationManager, didChangeAuthorization status: CLAuthorizationStatus)
    func locationManagerDidChangeAuthorization(_ manager: CLLocationManager)
    func locationManager(_ manager: CLLocationManager, didStartMonitoringFor region: CLRegion)
    func locationManagerDidPauseLocationUpdates(_ manager: CLLocationManager)
    func locationManagerDidResumeLocationUpdates(_ manager: CLLocationManager)
    func locationManager(_ manager: CLLocationManager, didFinishDeferredUpdatesWithError error: (any Error)?)
    func locationManager(_ manager: CLLocationManager, didVisit visit: CLVisit)
}

extension CLLocationManagerDelegate {
    public func locationManager(_ manager: CLLocationManager, didUpdateLocations locations: [CLLocation]) {
        var previous = manager.lastDelivered
        for location in locations {
            locationManager(manager, didUpdateTo: location, from: previous ?? location)
            previous = location
        }
    }
    @available(iOS, introduced: 2.0, deprecated: 6.0, message: "Implement -locationManager:didUpdateLocations: instead")
    public func locationManager(
        _ manager: CLLocationManager, didUpdateTo newLocation: CLLocation, from oldLocation: CLLocation
    ) {}
    public func locationManager(_ manager: CLLocationManager, didUpdateHeading newHeading: CLHeading) {}
    public func locationManagerShouldDisplayHeadingCalibration(_ manager: CLLocationManager) -> Bool { false }
    public func locationManager(
        _ manager: CLLocationManager, didDetermineState state: CLRegionState, for region: CLRegion
    ) {}
    public func locationManager(_ manager: CLLocationManager, didEnterRegion region: CLRegion) {}
    public func locationManager(_ manager: CLLocationManager, didExitRegion region: CLRegion) {}
    public func locationManager(_ manager: CLLocationManager, didFailWithError error: any Error) {}
    public func locationManager(
        _ manager: CLLocationManager, monitoringDidFailFor region: CLRegion?, withError error: any Error
    ) {}
    @available(iOS, introduced: 4.2, deprecated: 14.0, message: "Use -locationManagerDidChangeAuthorization:")
    public func locationManager(_ manager: CLLocationManager, didChangeAuthorization status: CLAuthorizationStatus) {}
    /// Not implemented: iOS calls the deprecated `locationManager(_:didChangeAuthorization:)`.
    public func locationManagerDidChangeAuthorization(_ manager: CLLocationManager) {
        locationManager(manager, didChangeAuthorization: manager.authorizationStatus)
    }
    public func locationManager(_ manager: CLLocationManager, didStartMonitoringFor region: CLRegion) {}
    public func locationManagerDidPauseLocationUpdates(_ manager: CLLocationManager) {}
    public func locationManagerDidResumeLocationUpdates(_ manager: CLLocationManager) {}
    public func locationManager(_ manager: CLLocationManager, didFinishDeferredUpdatesWithError error: (any Error)?) {}
    public func locationManager(_ manager: CLLocationManager, didVisit visit: CLVisit) {}
}
