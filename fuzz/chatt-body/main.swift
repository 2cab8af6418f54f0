// SwiftPM entry point (`swift build --product FuzzChattBody -Xswiftc -sanitize=fuzzer,address`);
// fuzz/run.sh compiles the harness without this file.
import LibFuzzerDriver

runLibFuzzer { data, size in chattBodyFuzzOne(data, size) }
