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
        // sslpassword (the client key's passphrase) and the other keywords libpq hides, in every form.
        ("postgresql://h/db?sslmode=verify-full&sslpassword=s3cret&sslkey=/k",
         "postgresql://h/db?sslmode=verify-full&sslpassword=***&sslkey=/k"),
        ("postgresql://u:s3cret@h/db?sslpassword=s3cret", "postgresql://u:***@h/db?sslpassword=***"),
        ("postgres://h/db?oauth_client_secret=s3cret&oauth_client_id=app",
         "postgres://h/db?oauth_client_secret=***&oauth_client_id=app"),
        ("postgresql://h/db?ssl%70assword=s3cret", "postgresql://h/db?ssl%70assword=***"),
        ("postgresql://h/db?%70%61%73%73%77%6F%72%64=s3cret", "postgresql://h/db?%70%61%73%73%77%6F%72%64=***"),
        ("postgresql://h/db?SSLPASSWORD=s3cret", "postgresql://h/db?SSLPASSWORD=***"),
        ("postgresql://h/db?pass%zzword=s3cret", "postgresql://***"),
        ("postgresql://h/db?sslpassword=s3cret%20with%26more", "postgresql://h/db?sslpassword=***"),
        ("host=db sslpassword=s3cret sslkey=/k", "host=db sslpassword=*** sslkey=/k"),
        ("sslpassword = 's3cret with spaces' host=db", "sslpassword=*** host=db"),
        ("host=db sslpassword='s3cret \\' also' user=u", "host=db sslpassword=*** user=u"),
        ("host=db password=s3cret\\ cr\\'et user=u", "host=db password=*** user=u"),
        ("host=db password=s3cret\u{A0}cr=et user=u", "host=db password=*** user=u"),
        ("host=db\tsslpassword=s3cret\nuser=u", "host=db sslpassword=*** user=u"),
        ("host=db oauth_client_secret='s3cret'", "host=db oauth_client_secret=***"),
        ("host=db sslpassword='unterminated", "***"),
    ])
    func secretsNeverSurvive(conninfo: String, expected: String) {
        let redacted = ConninfoRedaction.redacted(conninfo)
        #expect(redacted == expected)
        for secret in ["s3cret", "p%40ss", "pa/ss", "cr\\'et", "unterminated", "cr=et", "more"] {
            #expect(!redacted.contains(secret))
        }
    }
}
