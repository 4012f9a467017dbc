// Swift Testing declares a cross-import overlay for UIKit: a file that imports both Testing and
// UIKit imports `_Testing_UIKit` as well, which on Apple's platforms adds UIKit attachments to
// tests. On Linux, Waymark's UIKit stands in for Apple's, and this empty module stands in for the
// overlay, so that an app's test files import both as they do on iOS.
