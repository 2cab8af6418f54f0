import ChattAPI
import ChattStore
import Dispatch
import HTTPCore
import HTTPServer
#if canImport(Glibc)
import Glibc
#endif

/// Entry point: parses the command line and runs the command.
@main
enum Chatterd {
    static func main() {
        let command: Command
        do {
            command = try Command.parse(Array(CommandLine.arguments.dropFirst()))
        } catch {
            fail("\(error)\n\(usage)", status: 64)
        }
        switch command {
        case .help: print(usage)
        case .version: print("chatterd \(chatterdVersion)")
        case .migrate(let url, let directory): migrate(conninfo: resolvedConninfo(url), directory: directory)
        case .serve(let options): serve(options)
        }
    }

    /// `--database-url`, else `DATABASE_URL`, else "" (libpq defaults and `PG*` variables).
    static func resolvedConninfo(_ url: String?) -> String {
        url ?? getenv("DATABASE_URL").map { String(cString: $0) } ?? ""
    }

    static func migrate(conninfo: String, directory: String) {
        let pool = PGConnectionPool(conninfo: conninfo, size: 1)
        defer { pool.close() }
        do {
            let applied = try Migrator.migrate(pool: pool, directory: directory)
            Log.write("event=migrated applied=\(applied.count) versions=\(applied.joined(separator: ","))")
        } catch {
            fail("migration failed: \(String(reflecting: error))", status: 1)
        }
    }

    static func serve(_ options: ServeOptions) {
        // OpenSSL writes with write(): a client resetting mid-response must not kill the process.
        signal(SIGPIPE, SIG_IGN)
        let pool = PGConnectionPool(conninfo: resolvedConninfo(options.databaseURL), size: options.poolSize)
        // The certificate and key are checked first: a configuration error should not wait on the database.
        let server = makeServer(options, pool: pool)
        do {
            let applied = try Migrator.migrate(pool: pool, directory: options.migrationsDirectory)
            if !applied.isEmpty { Log.write("event=migrated versions=\(applied.joined(separator: ","))") }
        } catch {
            fail("migration failed: \(String(reflecting: error))", status: 1)
        }
        let port: UInt16
        do {
            port = try server.start()
        } catch {
            fail("cannot listen on \(options.server.host):\(options.server.port): \(error)", status: 1)
        }
        Log.write("event=listening host=\(options.server.host) port=\(port) tls=\(!options.plainHTTP)")
        let signals = SignalWatcher {
            server.shutdown(deadlineSeconds: options.drainSeconds) {
                pool.close()
                Log.write("event=stopped")
                exit(0)
            }
        }
        withExtendedLifetime(signals) { dispatchMain() }
    }

    static func makeServer(_ options: ServeOptions, pool: PGConnectionPool) -> Server {
        let repository = PostgresChattRepository(pool: pool)
        let metrics = RequestMetrics()
        let serverBox = ServerReference()
        let router = ChattRouter(repository: repository) {
            let stats = pool.stats
            return metrics.render(
                openConnections: serverBox.server?.openConnectionCount ?? 0, poolSize: stats.size,
                poolInUse: stats.inUse)
        }
        let handler = HTTPHandler(
            respond: { router.respond(to: $0) },
            respondImmediately: { router.respondImmediately(to: $0) },
            observe: { request, response, seconds in
                metrics.record(request, response, seconds: seconds)
                if response.status.code >= 500 {
                    Log.write("event=error status=\(response.status.code) path=\(request?.path ?? "-")")
                }
            })
        do {
            let server = try Server(
                configuration: options.serverConfiguration, handler: handler, log: { Log.write($0) })
            serverBox.server = server
            return server
        } catch {
            fail("\(error)", status: 1)
        }
    }

    static func fail(_ message: String, status: Int32) -> Never {
        Log.write(message)
        exit(status)
    }
}

/// Lets the metrics closure reach the server created after it.
private final class ServerReference: @unchecked Sendable {  // set once before the server starts
    var server: Server?
}
