import NIOSSL
import PostgresNIO

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where a PostGIS store is: a libpq connection URI, as `psql` takes it.
///
///     postgresql://[user[:password]@][host][:port][/database][?parameter=value&…]
///
/// - `host` empty, or `?host=/directory`: a Unix socket, `directory/.s.PGSQL.port`
///   (default directory `/var/run/postgresql`, as Debian's libpq).
/// - `user`: else `$PGUSER`, else the login name; `database`: else the user's name.
/// - `password`: else `$PGPASSWORD`.
/// - `sslmode=disable|prefer|require|verify-ca|verify-full` (default: `disable` on a Unix
///   socket, `prefer` over TCP); see ``TLSMode``.
/// - `postgres://` is the same scheme.
public struct PostGISAddress: Sendable, Hashable, CustomStringConvertible {
    /// libpq's `sslmode`: `prefer` and `require` encrypt without checking the server's
    /// certificate (as libpq does); `verify` (`verify-ca`, `verify-full`) checks it against the
    /// system's trusted certificates and the host name.
    public enum TLSMode: String, Sendable, Hashable {
        case disable, prefer, require, verify
    }

    public var user: String
    public var password: String?
    /// A TCP host, or nil for a Unix socket.
    public var host: String?
    public var port: Int
    /// The directory of the Unix socket, when ``host`` is nil.
    public var socketDirectory: String
    public var database: String
    public var tls: TLSMode

    /// Whether `text` is a PostgreSQL URI rather than a file path.
    public static func isAddress(_ text: String) -> Bool {
        text.hasPrefix("postgresql://") || text.hasPrefix("postgres://")
    }

    /// Parses `text`; `environment` gives `PGUSER`, `PGPASSWORD` and `USER`.
    public init(_ text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard Self.isAddress(text) else {
            throw PostGISError(
                address: text, message: "is not a PostgreSQL address; it starts postgresql://user@host:5432/database")
        }
        var rest = Substring(text.drop { $0 != ":" }.dropFirst(3))
        var query = Substring("")
        if let q = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: q)...]
            rest = rest[..<q]
        }
        var path = Substring("")
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        var userInfo: Substring?
        if let at = rest.lastIndex(of: "@") {
            userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
        }
        var user = environment["PGUSER"] ?? environment["USER"] ?? "postgres"
        var password = environment["PGPASSWORD"]
        if let userInfo {
            if let colon = userInfo.firstIndex(of: ":") {
                user = try Self.decoded(userInfo[..<colon], text)
                password = try Self.decoded(userInfo[userInfo.index(after: colon)...], text)
            } else if !userInfo.isEmpty {
                user = try Self.decoded(userInfo, text)
            }
        }
        var host: String?
        var port = 5432
        var hostPart = rest
        if hostPart.hasPrefix("[") {
            // [IPv6]:port
            guard let close = hostPart.firstIndex(of: "]") else {
                throw PostGISError(address: text, message: "has an IPv6 host without its closing ]")
            }
            host = String(hostPart[hostPart.index(after: hostPart.startIndex)..<close])
            hostPart = hostPart[hostPart.index(after: close)...]
            if hostPart.hasPrefix(":") { hostPart = "h" + hostPart } else { hostPart = "" }
        }
        if let colon = hostPart.lastIndex(of: ":") {
            let digits = hostPart[hostPart.index(after: colon)...]
            guard let p = Int(digits), (1...65535).contains(p) else {
                throw PostGISError(address: text, message: "has port \"\(digits)\"; a port is a number 1 to 65535")
            }
            port = p
            if host == nil { host = String(hostPart[..<colon]) }
        } else if host == nil {
            host = String(hostPart)
        }
        if host?.isEmpty == true { host = nil }
        var socketDirectory = "/var/run/postgresql"
        var tls: TLSMode?
        for pair in query.split(separator: "&") where !pair.isEmpty {
            let key = pair.prefix { $0 != "=" }
            let value = try Self.decoded(pair.dropFirst(key.count + 1), text)
            switch key {
            case "host":
                if value.hasPrefix("/") {
                    socketDirectory = value
                    host = nil
                } else {
                    host = value
                }
            case "port":
                guard let p = Int(value), (1...65535).contains(p) else {
                    throw PostGISError(address: text, message: "has port \"\(value)\"; a port is a number 1 to 65535")
                }
                port = p
            case "user": user = value
            case "password": password = value
            case "dbname": path = Substring(value)
            case "sslmode":
                switch value {
                case "disable", "allow": tls = .disable
                case "prefer": tls = .prefer
                case "require": tls = .require
                case "verify-ca", "verify-full": tls = .verify
                default:
                    throw PostGISError(
                        address: text, message: "has sslmode=\(value); use disable, prefer or require")
                }
            case "application_name", "connect_timeout": break
            default:
                throw PostGISError(
                    address: text,
                    message: "has parameter \"\(key)\", which Waymark does not know (it knows host, port, user, "
                        + "password, dbname and sslmode)")
            }
        }
        self.user = user
        self.password = password
        self.host = host
        self.port = port
        self.socketDirectory = socketDirectory
        self.database = path.isEmpty ? user : try Self.decoded(path, text)
        self.tls = tls ?? (host == nil ? .disable : .prefer)
    }

    private static func decoded(_ part: Substring, _ text: String) throws -> String {
        guard let value = String(part).removingPercentEncoding else {
            throw PostGISError(address: text, message: "has a bad %-escape in \"\(part)\"")
        }
        return value
    }

    /// The address without its password: how Waymark names the store in messages and in the
    /// local store's record of what was forwarded where.
    public var description: String {
        let location: String
        if let host {
            location = (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
        } else {
            location = ":\(port)"
        }
        let socket = host == nil ? "?host=\(socketDirectory)" : ""
        return "postgresql://\(user)@\(location)/\(database)\(socket)"
    }

    /// The Unix socket's path, when the address names one.
    public var socketPath: String? { host == nil ? "\(socketDirectory)/.s.PGSQL.\(port)" : nil }

    func configuration() throws -> PostgresConnection.Configuration {
        var configuration: PostgresConnection.Configuration
        if let host {
            let tlsConfiguration: PostgresConnection.Configuration.TLS
            switch tls {
            case .disable: tlsConfiguration = .disable
            case .prefer, .require:
                var unverified = TLSConfiguration.makeClientConfiguration()
                unverified.certificateVerification = .none
                let context = try NIOSSLContext(configuration: unverified)
                tlsConfiguration = tls == .prefer ? .prefer(context) : .require(context)
            case .verify:
                tlsConfiguration = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
            configuration = .init(
                host: host, port: port, username: user, password: password, database: database, tls: tlsConfiguration)
        } else {
            configuration = .init(
                unixSocketPath: socketPath ?? "", username: user, password: password, database: database)
        }
        configuration.options.connectTimeout = .seconds(10)
        return configuration
    }
}

/// A PostGIS store's error: what went wrong, with the store's address (never its password).
public struct PostGISError: Error, Sendable, CustomStringConvertible {
    public var address: String
    public var message: String
    /// Whether trying again later may work: the server or the link went away, as opposed to a
    /// refusal (a wrong password, a missing database, a schema from a newer Waymark).
    public var isTransient: Bool

    public init(address: String, message: String, isTransient: Bool = false) {
        self.address = address
        self.message = message
        self.isTransient = isTransient
    }

    public var description: String { "\(address): \(message)" }

    /// `error` from postgres-nio or NIO, in words: the server's own message when it sent one
    /// (PSQLError's description hides it), else the failure of the link.
    init(_ error: any Error, address: PostGISAddress) {
        if let e = error as? PostGISError {
            self = e
            return
        }
        self.address = address.description
        if error is CloseWatch.Closed {
            isTransient = true
            message = "the connection was cut (the server or the link went away)"
            return
        }
        if let psql = error as? PSQLError {
            if let info = psql.serverInfo, let message = info[.message] {
                let state = info[.sqlState] ?? ""
                var text = message
                if let detail = info[.detail] { text += " (\(detail))" }
                if let hint = info[.hint] { text += "; hint: \(hint)" }
                // Class 08 (connection), 57P0x (shutdown, crash), 57014 (cancelled, a statement
                // timeout), 53 (resources), 40 (a deadlock or a serialization failure): try again.
                isTransient =
                    state.hasPrefix("08") || state.hasPrefix("57P") || state == "57014" || state.hasPrefix("53")
                    || state.hasPrefix("40")
                self.message = "the server said: \(text) [\(state)]"
                return
            }
            let underlying = psql.underlying.map { ": \(String(describing: $0))" } ?? ""
            switch psql.code {
            case .connectionError, .serverClosedConnection, .uncleanShutdown, .clientClosedConnection:
                isTransient = true
                message = "the connection failed or was cut (\(psql.code))\(underlying)"
            default:
                isTransient = false
                message = "\(psql.code)\(underlying)"
            }
            return
        }
        if error is NIOSSLError {
            // A certificate or a handshake refused: trying again will not mend it.
            isTransient = false
            message = "TLS failed: \(String(describing: error))"
            return
        }
        isTransient = true
        message = "cannot reach the server: \(String(describing: error))"
    }
}
