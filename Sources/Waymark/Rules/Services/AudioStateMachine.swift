/// Audio playback: with the `audio` background mode it keeps a backgrounded app running
/// (``KeepRunning``); it stops when the app is suspended or ends.
public struct AudioStateMachine: Sendable, Hashable {
    public enum State: Sendable, Hashable { case silent, playing }
    public private(set) var state: State = .silent

    public var isPlaying: Bool { state == .playing }

    /// The app starts playing.
    mutating func play(audioMode: Bool) -> [DeviceAction] {
        guard state == .silent else { return [] }
        state = .playing
        return [.record(.audio(action: .started, reason: audioMode ? nil : .noAudioMode))]
    }

    /// Playback stops, with why.
    mutating func stop(_ reason: AuditReason) -> [DeviceAction] {
        guard state == .playing else { return [] }
        state = .silent
        return [.record(.audio(action: .stopped, reason: reason))]
    }
}
