@testable import ChatterdKit
import Testing

@Suite struct ConninfoRedactionTests {
    @Test(arguments: [
        ("postgresql://chatterd:s3cret@db.example:5432/chatterd", "postgresql://chatterd:***@db.example:5432/chatterd"),
        ("postgres://u:p%40ss@h/db?sslmode=require", "postgres://u:***@h/db?sslmode=require"),
        ("postgresql://u@h/db", "postgresql://u@h/db"),
        ("postgresql:///chatterd?host=/var/run/postgresql", "postgresql:///chatterd?host=/var/run/postgresql"),
        ("postgresql://h/db?user=u&password=s3cret&sslmode=verify-full",
         "postgresql://h/db?user=u&password=***&sslmode=verify-full"),
        ("postgresql://u:p@ss@h1,h2/db", "postgresql://u:***@h1,h2/db"),
        ("postgresql://u:pa/ss@h/db", "postgresql://***"),
        ("host=db user=u password=s3cret dbname=x", "host=db user=u password=*** dbname=x"),
        ("host=db password = 's3 cr\\'et' dbname=x", "host=db password=*** dbname=x"),
        ("password='unterminated", "***"),
        ("just some words", "***"),
        ("", "(libpq defaults)"),
    ])
    func passwordsNeverSurvive(conninfo: String, expected: String) {
        let redacted = ConninfoRedaction.redacted(conninfo)
        #expect(redacted == expected)
        for secret in ["s3cret", "p%40ss", "pa/ss", "cr\\'et", "unterminated"] {
            #expect(!redacted.contains(secret))
        }
    }
}
