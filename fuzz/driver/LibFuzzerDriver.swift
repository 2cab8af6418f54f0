#if canImport(Glibc)
import Glibc
#endif

/// libFuzzer's per-input callback.
public typealias FuzzTarget = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

private typealias RunDriver = @convention(c) (
    UnsafeMutablePointer<CInt>, UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>, FuzzTarget
) -> CInt

/// Runs libFuzzer on `target` with this process's arguments, then exits with its status.
///
/// The driver is looked up at run time rather than linked by name, so that a plain `swift build` still
/// links the fuzz executables; only `-Xswiftc -sanitize=fuzzer,address` builds can actually fuzz.
public func runLibFuzzer(_ target: FuzzTarget) -> Never {
    guard let symbol = dlsym(nil, "LLVMFuzzerRunDriver") else {
        let message = "not built with libFuzzer: swift build --product <Fuzz…> -Xswiftc -sanitize=fuzzer,address\n"
        _ = message.withCString { write(STDERR_FILENO, $0, strlen($0)) }
        exit(2)
    }
    let driver = unsafeBitCast(symbol, to: RunDriver.self)
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(driver(&argc, &argv, target))
}
