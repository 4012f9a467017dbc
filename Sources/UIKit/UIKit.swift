// `import UIKit` on Linux: WaymarkUIKit under Apple's name (docs/porting.md). Linux only: on
// Apple's platforms the name is Apple's framework. Like Apple's, it re-exports Foundation.
@_exported import Foundation
@_exported import WaymarkUIKit
