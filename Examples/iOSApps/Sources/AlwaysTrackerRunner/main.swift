import AlwaysTracker
import WaymarkRunner

await WaymarkRunner.main(app: TrackerAppDelegate.self)
