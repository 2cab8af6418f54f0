import HTTPCore
import Testing

/// Table-driven decoder cases; each is also fed at every split point and one byte at a time.
@Suite struct HTTPRequestDecoderTests {
    @Test(arguments: DecoderCase.requestLine) func requestLine(_ testCase: DecoderCase) {
        DecoderHarness.verify(testCase)
    }

    @Test(arguments: DecoderCase.targets) func target(_ testCase: DecoderCase) {
        DecoderHarness.verify(testCase)
    }

    @Test(arguments: DecoderCase.requestLineLimit) func requestLineLimit(_ testCase: DecoderCase) {
        DecoderHarness.verify(testCase)
    }

    @Test(arguments: DecoderCase.headers) func headerSection(_ testCase: DecoderCase) {
        DecoderHarness.verify(testCase)
    }

    @Test(arguments: DecoderCase.host) func host(_ testCase: DecoderCase) {
        DecoderHarness.verify(testCase)
    }

    @Test(arguments: DecoderCase.contentLength) func contentLength(_ testCase: DecoderCase) {
        DecoderHarness.verify(testCase)
    }

    @Test(arguments: DecoderCase.transferEncoding) func transferEncoding(_ testCase: DecoderCase) {
        DecoderHarness.verify(testCase)
    }

    @Test(arguments: DecoderCase.expect) func expect(_ testCase: DecoderCase) {
        DecoderHarness.verify(testCase)
    }

    @Test(arguments: DecoderCase.chunkedBodies) func chunkedBody(_ testCase: DecoderCase) {
        DecoderHarness.verify(testCase)
    }

    @Test(arguments: DecoderCase.pipelines) func pipeline(_ testCase: DecoderCase) {
        DecoderHarness.verify(testCase)
    }
}
