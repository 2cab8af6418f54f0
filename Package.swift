// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "chatterd",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "chatterd", targets: ["chatterd"])
    ],
    targets: [
        // System C libraries (apt: libpq-dev, libssl-dev).
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),

        // Pure HTTP/1.1: request decoding, response serialization, limits. No I/O.
        .target(name: "HTTPCore"),
        // Sockets, TLS and connections driven by Dispatch.
        .target(name: "HTTPServer", dependencies: ["HTTPCore", "COpenSSL"]),
        // Pure chatt API: routing, validation, JSON, the repository protocol.
        .target(name: "ChattAPI", dependencies: ["HTTPCore"]),
        // PostgreSQL storage over libpq: pool, repository, migrations.
        .target(name: "ChattStore", dependencies: ["ChattAPI", "CLibPQ"]),
        .executableTarget(name: "chatterd", dependencies: ["HTTPServer", "ChattAPI", "ChattStore", "HTTPCore"]),

        .testTarget(name: "HTTPCoreTests", dependencies: ["HTTPCore"]),
        .testTarget(name: "ChattAPITests", dependencies: ["ChattAPI", "HTTPCore"]),
        .testTarget(name: "ChattStoreTests", dependencies: ["ChattStore", "ChattAPI"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "HTTPCore", "COpenSSL"]),
    ],
    swiftLanguageModes: [.v6]
)
