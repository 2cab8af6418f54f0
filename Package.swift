// swift-tools-version:6.0
import PackageDescription

/// Lets LibFuzzerDriver find libFuzzer's entry point with dlsym when the fuzzer runtime is linked in.
let exportFuzzerDriver: [LinkerSetting] = [.unsafeFlags(["-Xlinker", "--export-dynamic-symbol=LLVMFuzzerRunDriver"])]

let package = Package(
    name: "chatterd",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "chatterd", targets: ["chatterd"]),
        .executable(name: "chatter", targets: ["chatter"]),
    ],
    targets: [
        // System C libraries (apt: libpq-dev, libssl-dev, zlib1g-dev).
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // glibc headers Swift's Glibc module leaves out (mallopt); nothing to link.
        .systemLibrary(name: "CMalloc"),

        // A pthread-mutex-guarded value that ThreadSanitizer understands.
        .target(name: "Locking"),
        // Pure HTTP/1.1: request decoding, response serialization, limits. No I/O.
        .target(name: "HTTPCore"),
        // Sockets, TLS and connections driven by Dispatch.
        .target(name: "HTTPServer", dependencies: ["HTTPCore", "COpenSSL", "Locking"]),
        // Pure chatt API: routing, validation, JSON, the repository protocol, the feed cache (gzip by zlib).
        .target(name: "ChattAPI", dependencies: ["HTTPCore", "Locking", "CZlib"]),
        // PostgreSQL storage over libpq: pool, repository, migrations.
        .target(name: "ChattStore", dependencies: ["ChattAPI", "CLibPQ", "Locking"]),
        .executableTarget(
            name: "chatterd", dependencies: ["HTTPServer", "ChattAPI", "ChattStore", "HTTPCore", "Locking", "CMalloc"]),
        // The `chatter` command-line client: options, HTTP/1.1 over OpenSSL, output formats.
        .target(name: "ChatterClient", dependencies: ["ChattAPI", "HTTPCore", "COpenSSL"]),
        .executableTarget(name: "chatter", dependencies: ["ChatterClient"]),

        // libFuzzer targets; they fuzz only when built with `-Xswiftc -sanitize=fuzzer,address` (fuzz/run.sh).
        .target(name: "LibFuzzerDriver", path: "fuzz/driver"),
        .executableTarget(
            name: "FuzzHTTPRequest", dependencies: ["HTTPCore", "LibFuzzerDriver"], path: "fuzz/http-request",
            exclude: ["corpus", "dict", "product"], linkerSettings: exportFuzzerDriver),
        .executableTarget(
            name: "FuzzChattBody", dependencies: ["HTTPCore", "ChattAPI", "LibFuzzerDriver"], path: "fuzz/chatt-body",
            exclude: ["corpus", "dict", "product"], linkerSettings: exportFuzzerDriver),

        .testTarget(name: "HTTPCoreTests", dependencies: ["HTTPCore"]),
        .testTarget(name: "ChattAPITests", dependencies: ["ChattAPI", "HTTPCore", "Locking", "CZlib"]),
        .testTarget(name: "ChattStoreTests", dependencies: ["ChattStore", "ChattAPI", "Locking"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "HTTPCore", "COpenSSL"]),
        .testTarget(name: "ChatterClientTests", dependencies: ["ChatterClient", "ChattAPI"]),
        .testTarget(name: "ChatterdTests", dependencies: ["chatterd", "HTTPServer", "HTTPCore", "ChattAPI", "ChattStore"]),
    ],
    swiftLanguageModes: [.v6]
)
