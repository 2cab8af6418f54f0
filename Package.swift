// swift-tools-version:6.0
import PackageDescription

/// Lets LibFuzzerDriver find libFuzzer's entry point with dlsym when the fuzzer runtime is linked in.
let exportFuzzerDriver: [LinkerSetting] = [.unsafeFlags(["-Xlinker", "--export-dynamic-symbol=LLVMFuzzerRunDriver"])]

let package = Package(
    name: "chatterd",
    products: [
        .executable(name: "chatterd", targets: ["chatterd"]),
        .executable(name: "chatter", targets: ["chatter"]),
    ],
    targets: [
        // System C libraries (apt: libpq-dev, libssl-dev, zlib1g-dev, libnghttp2-dev, libdeflate-dev).
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // HTTP/2 framing, HPACK and flow control (apt: libnghttp2-dev); it does no I/O of its own.
        .systemLibrary(name: "CNGHTTP2", pkgConfig: "libnghttp2", providers: [.apt(["libnghttp2-dev"])]),
        // One-shot gzip for answers made per request (a viewport's rows), twice as fast as zlib (apt: libdeflate-dev).
        .systemLibrary(name: "CLibDeflate", pkgConfig: "libdeflate", providers: [.apt(["libdeflate-dev"])]),
        // glibc headers Swift's Glibc module leaves out (mallopt, epoll); nothing to link.
        .systemLibrary(name: "CMalloc"),
        .systemLibrary(name: "CEpoll"),

        // A pthread-mutex-guarded value that ThreadSanitizer understands.
        .target(name: "Locking"),
        // Swift tasks run on Dispatch queues rather than the cooperative pool; Swift deadlines as Dispatch times;
        // single flights (work many callers wait for, done once).
        .target(name: "TaskExecution", dependencies: ["Locking"]),
        // System calls with EINTR retried and every failure surfaced as an error; an epoll set reported on a queue.
        .target(name: "Syscalls", dependencies: ["CEpoll"]),
        // The byte classes HTTP and JSON share (digits, hex digits), and numbers written as digits.
        .target(name: "ASCII"),
        // JSON text: a strict parser and a string encoder, shared by the server and the client.
        .target(name: "JSON", dependencies: ["ASCII"]),
        // Pure HTTP/1.1: request decoding, response serialization, limits. No I/O.
        .target(name: "HTTPCore", dependencies: ["ASCII", "JSON"]),
        // Structured log lines (logfmt or JSON) and the background writer that puts them on stderr.
        .target(name: "Logging", dependencies: ["Syscalls"]),
        // Sockets, TLS and connections driven by Dispatch.
        .target(
            name: "HTTPServer",
            dependencies: ["ASCII", "HTTPCore", "COpenSSL", "CNGHTTP2", "CEpoll", "Locking", "Logging", "Syscalls"]),
        // Which rows of a feed lie in a box of the map: locations read from geodata, packed into trees. Pure.
        .target(name: "Viewport", dependencies: ["ASCII"]),
        // The chatt model and its validation, and the repository protocol. Pure: no I/O, no threads.
        .target(name: "ChattModel", dependencies: ["ASCII", "JSON", "HTTPCore"]),
        // The store's change log followed once for every view of the store (the feeds, the streams).
        .target(name: "ChangeLog", dependencies: ["ChattModel", "Locking", "TaskExecution"]),
        // The encoded /getmaps and /getchatts bodies, shared between requests, and their gzip forms.
        .target(
            name: "ChattFeed",
            dependencies: [
                "ChangeLog", "ChattModel", "HTTPCore", "JSON", "Locking", "TaskExecution", "Viewport", "CZlib",
                "CLibDeflate",
            ]),
        // The chatt API: routes, endpoints, feed queries; plans each request's response.
        .target(
            name: "ChattAPI",
            dependencies: [
                "ASCII", "ChattModel", "ChattFeed", "ChattStream", "HTTPCore", "JSON", "Locking", "TaskExecution",
            ],
            // The map page's own files, compiled in as bytes: served from memory, nothing to install beside chatterd.
            resources: ["map.html", "map.css", "map.js"].map { .embedInCode("MapFiles/" + $0) }),
        // The feed streams: commits in commit order, fanned out to every subscriber from one shared log.
        .target(
            name: "ChattStream",
            dependencies: ["ChangeLog", "ChattModel", "ChattFeed", "HTTPCore", "JSON", "Locking", "Viewport"]),
        // PostgreSQL storage over libpq: pool, readiness loop, repository, migrations.
        .target(name: "ChattStore", dependencies: ["ChattModel", "CLibPQ", "CEpoll", "Locking", "Syscalls", "TaskExecution"]),
        // The daemon: options, metrics, access log, signals, and the assembly of server, API and store.
        .target(
            name: "ChatterdKit",
            dependencies: [
                "ASCII", "HTTPServer", "HTTPCore", "ChangeLog", "ChattAPI", "ChattFeed", "ChattModel", "ChattStore",
                "ChattStream", "Locking",
                "Logging",
                "Syscalls", "CMalloc",
            ]),
        .executableTarget(name: "chatterd", dependencies: ["ChatterdKit"]),
        // The `chatter` command-line client: options, HTTP/1.1 over OpenSSL, output formats.
        .target(
            name: "ChatterClient",
            dependencies: ["ChattModel", "JSON", "HTTPCore", "ASCII", "COpenSSL", "Syscalls", "Viewport"]),
        .executableTarget(name: "chatter", dependencies: ["ChatterClient"]),

        // The viewport index against a scan of every row, in one process (bench/viewport.sh runs it).
        .executableTarget(name: "viewport-index-bench", dependencies: ["Viewport"], path: "bench/viewport-index"),

        // libFuzzer targets; they fuzz only when built with `-Xswiftc -sanitize=fuzzer,address` (fuzz/run.sh).
        .target(name: "LibFuzzerDriver", path: "fuzz/driver"),
        .executableTarget(
            name: "FuzzHTTPRequest", dependencies: ["HTTPCore", "LibFuzzerDriver"], path: "fuzz/http-request",
            exclude: ["corpus", "dict", "product"], linkerSettings: exportFuzzerDriver),
        .executableTarget(
            name: "FuzzChattBody", dependencies: ["ChattModel", "ChattFeed", "JSON", "LibFuzzerDriver"],
            path: "fuzz/chatt-body",
            exclude: ["corpus", "dict", "product"], linkerSettings: exportFuzzerDriver),
        // The HTTP/2 connection machine is internal to HTTPServer: this harness exists only in fuzz/run.sh's
        // build, which enables testing (see fuzz/http2-session/SessionFuzzer.swift).
        .executableTarget(
            name: "FuzzHTTP2Session", dependencies: ["HTTPServer", "HTTPCore", "CNGHTTP2", "LibFuzzerDriver"],
            path: "fuzz/http2-session",
            exclude: ["corpus", "dict", "product", "make-corpus.py"], linkerSettings: exportFuzzerDriver),

        // Test doubles and helpers shared by several test targets: a repository in memory, a feed read with a test's
        // deadline, gunzip, a log pipe.
        .target(
            name: "TestSupport",
            dependencies: [
                "ChangeLog", "ChattModel", "ChattFeed", "TaskExecution", "Locking", "Logging", "Syscalls", "CZlib",
            ],
            path: "Tests/TestSupport"),
        .testTarget(name: "SyscallsTests", dependencies: ["Syscalls", "CEpoll", "Locking"]),
        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        .testTarget(name: "TaskExecutionTests", dependencies: ["TaskExecution", "Locking", "TestSupport"]),
        .testTarget(name: "ChangeLogTests", dependencies: ["ChangeLog", "ChattModel", "Locking", "TestSupport"]),
        .testTarget(name: "HTTPCoreTests", dependencies: ["HTTPCore"]),
        .testTarget(name: "ChattModelTests", dependencies: ["ChattModel"]),
        .testTarget(name: "ViewportTests", dependencies: ["Viewport"]),
        .testTarget(
            name: "ChattStreamTests",
            dependencies: ["ChangeLog", "ChattStream", "ChattFeed", "ChattModel", "HTTPCore", "Locking", "TestSupport"]),
        .testTarget(
            name: "ChattFeedTests",
            dependencies: [
                "ChangeLog", "ChattFeed", "ChattModel", "TestSupport", "Locking", "CZlib", "HTTPCore", "Viewport",
            ]),
        .testTarget(
            name: "ChattAPITests",
            dependencies: ["ChattAPI", "ChattFeed", "ChattModel", "TestSupport", "HTTPCore", "Locking", "TaskExecution"]),
        .testTarget(
            name: "ChattStoreTests", dependencies: ["ChattStore", "ChattModel", "Locking", "TaskExecution", "TestSupport"]),
        .testTarget(name: "LoggingTests", dependencies: ["Logging", "TestSupport"]),
        .testTarget(
            name: "HTTPServerTests",
            dependencies: ["HTTPServer", "HTTPCore", "COpenSSL", "CNGHTTP2", "Locking", "Logging", "Syscalls"]),
        .testTarget(name: "ChatterClientTests", dependencies: ["ChatterClient", "ChattModel", "JSON", "Viewport"]),
        .testTarget(
            name: "ChatterdKitTests",
            dependencies: [
                "ChatterdKit", "TestSupport", "HTTPServer", "HTTPCore", "ChattAPI", "ChattFeed", "ChattModel",
                "ChattStore", "Logging", "Syscalls",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
