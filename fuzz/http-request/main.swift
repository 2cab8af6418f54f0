// SwiftPM entry point (`swift build --product FuzzHTTPRequest -Xswiftc -sanitize=fuzzer,address`);
// fuzz/run.sh compiles the harness without this file.
import LibFuzzerDriver

runLibFuzzer { data, size in fuzzRequestDecoder(data, size) }
