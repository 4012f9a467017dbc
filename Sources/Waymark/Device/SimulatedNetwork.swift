/// The simulated device's network: what each URL answers, as the test or the scenario sets it.
///
/// The device has no real network. A request for a URL nobody serves fails as one for a host that
/// does not exist (``NetworkAnswer/Failure/cannotFindHost``); with the network switched off
/// (``Scenario/Action/setNetwork(_:)``), every request fails with
/// ``NetworkAnswer/Failure/notConnectedToInternet`` and a background download waits for it.
public final class SimulatedNetwork {
    private var answers: [String: NetworkAnswer] = [:]

    init() {}

    /// Serves `body` with HTTP status `status` at `url` (its absolute string), from now on.
    public func serve(_ url: String, status: Int = 200, body: [UInt8]) {
        answers[url] = .response(status: status, body: body)
    }

    /// Serves `text`, UTF-8, at `url`.
    public func serve(_ url: String, status: Int = 200, text: String) {
        serve(url, status: status, body: Array(text.utf8))
    }

    /// Makes requests for `url` fail with `failure`.
    public func fail(_ url: String, with failure: NetworkAnswer.Failure) { answers[url] = .failure(failure) }

    /// What a request for `url` gets.
    public func answer(for url: String) -> NetworkAnswer { answers[url] ?? .failure(.cannotFindHost) }
}

/// What the simulated network answered a request.
public enum NetworkAnswer: Sendable, Hashable {
    /// A server answered: an HTTP status and a body.
    case response(status: Int, body: [UInt8])
    /// No server answered.
    case failure(Failure)

    /// Why no server answered: `URLError`'s codes of the same names. `cancelled`: the app
    /// cancelled the request before it was answered.
    public enum Failure: String, Sendable, Hashable, CaseIterable {
        case cannotFindHost, notConnectedToInternet, timedOut, cannotConnectToHost, cancelled
    }

    /// In words, for the audit log's `detail`: `HTTP 200, 1234 bytes`, `cannotFindHost`.
    public var summary: String {
        switch self {
        case .response(let status, let body): "HTTP \(status), \(body.count) bytes"
        case .failure(let failure): failure.rawValue
        }
    }
}

/// A background download the network answered, held by the system for the app's session.
public struct FinishedDownload: Sendable, Hashable {
    /// The transfer's id (its `transfer` events' `task`).
    public var task: Int
    /// The background session's identifier.
    public var session: String
    /// The URL asked for.
    public var url: String
    public var answer: NetworkAnswer
}
