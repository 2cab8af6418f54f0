// SwiftPM entry point (`fuzz/run.sh http2-session SECONDS`). The harness exists only in fuzz/run.sh's build,
// which makes HTTPServer testable (see SessionFuzzer.swift); any other build gets this message instead.
#if CHATTERD_FUZZ_TESTABLE
import LibFuzzerDriver

runLibFuzzer { data, size in fuzzHTTP2Session(data, size) }
#else
#if canImport(Glibc)
import Glibc
#endif

let message = "FuzzHTTP2Session is built by fuzz/run.sh (with -enable-testing -DCHATTERD_FUZZ_TESTABLE)\n"
_ = message.withCString { write(STDERR_FILENO, $0, strlen($0)) }
exit(2)
#endif
