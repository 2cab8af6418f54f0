/// Public test certificates, made once with `openssl req -x509` / `openssl x509 -req` (EC P-256; the keys were
/// thrown away). Only their names matter here: the tests never verify a chain or look at dates.
enum TestCertificates {
    /// Self-signed, as `deploy/gen-cert.sh` made them before name constraints: subjectAltName
    /// `DNS:localhost, DNS:Chatter.Example.org, DNS:*.wild.example, IP:127.0.0.1, IP:192.0.2.10, IP:2001:db8::5`.
    static let legacy = """
    -----BEGIN CERTIFICATE-----
    MIIB2zCCAYGgAwIBAgIUEnw+spCb6kCULnmWNPqau0VMZIswCgYIKoZIzj0EAwIw
    FDESMBAGA1UEAwwJbG9jYWxob3N0MB4XDTI2MTIwMjIyMjMzM1oXDTM2MTEyOTIy
    MjMzM1owFDESMBAGA1UEAwwJbG9jYWxob3N0MFkwEwYHKoZIzj0CAQYIKoZIzj0D
    AQcDQgAEcRc119VANZAv7xs7CYo1YqqEaRe4sq0D/sy3eqTjxYY+0YrmZaC9PkXt
    wj1xRk94y/q9qZMntmx8jruVieiF7qOBsDCBrTAdBgNVHQ4EFgQUOqv+46mRBl/9
    W4k7AaqnkoekJFQwHwYDVR0jBBgwFoAUOqv+46mRBl/9W4k7AaqnkoekJFQwVwYD
    VR0RBFAwToIJbG9jYWxob3N0ghNDaGF0dGVyLkV4YW1wbGUub3Jngg4qLndpbGQu
    ZXhhbXBsZYcEfwAAAYcEwAACCocQIAENuAAAAAAAAAAAAAAABTASBgNVHRMBAf8E
    CDAGAQH/AgEAMAoGCCqGSM49BAMCA0gAMEUCIDEwA7swwSblrZj3nmz2CdGvvvXa
    JljU+J2oQY1tTJ3aAiEAuZ6ix/xmVYROmZaOeahXPRiHzjnwzD/TI3f+bUBH+hY=
    -----END CERTIFICATE-----
    """

    /// A CA with critical nameConstraints: permitted `DNS:Example.NET`, `DNS:.sub.example`,
    /// `IP:198.51.100.0/255.255.255.0`, `IP:2001:db8:1::/48`; excluded `DNS:bad.example.net`,
    /// `IP:198.51.100.128/255.255.255.128`. No subjectAltName.
    static let constrainedCA = """
    -----BEGIN CERTIFICATE-----
    MIICHzCCAcagAwIBAgIUd3ggpvyHwuD3mMSHCuE3hWgEWWgwCgYIKoZIzj0EAwIw
    GzEZMBcGA1UEAwwQY2hhdHRlcmQgdGVzdCBDQTAeFw0yNjEyMDIyMjIzMzNaFw0z
    NjExMjkyMjIzMzNaMBsxGTAXBgNVBAMMEGNoYXR0ZXJkIHRlc3QgQ0EwWTATBgcq
    hkjOPQIBBggqhkjOPQMBBwNCAAQJYBVevSux1f4TxXp6e79z6rDRVpALr3UjnVW/
    F2MpP1isyyNvblvI7nP6TA0yDIYDUlljlxvPmiTj4Zftr+Eeo4HnMIHkMB0GA1Ud
    DgQWBBSAvKozSCHYh/aeT1i0XAbpW7ub1TAfBgNVHSMEGDAWgBSAvKozSCHYh/ae
    T1i0XAbpW7ub1TASBgNVHRMBAf8ECDAGAQH/AgEAMA4GA1UdDwEB/wQEAwICBDB+
    BgNVHR4BAf8EdDByoE8wDYILRXhhbXBsZS5ORVQwDoIMLnN1Yi5leGFtcGxlMAqH
    CMYzZAD///8AMCKHICABDbgAAQAAAAAAAAAAAAD///////8AAAAAAAAAAAAAoR8w
    EYIPYmFkLmV4YW1wbGUubmV0MAqHCMYzZID///+AMAoGCCqGSM49BAMCA0cAMEQC
    ICbKSikfFPPGFXCfYITqI1OueBd2iMYheCqhxlV3wICgAiB6rl5WeIlx8MQ1wwjW
    dDjq5qADTxvOKrTXd/mowiJbTg==
    -----END CERTIFICATE-----
    """

    /// A leaf signed by `constrainedCA`: subjectAltName `DNS:leaf.example.net, IP:198.51.100.7`.
    static let leaf = """
    -----BEGIN CERTIFICATE-----
    MIIBkjCCATegAwIBAgIUXv2KuPvzeLlTVSCoSTrhGdMXNSswCgYIKoZIzj0EAwIw
    GzEZMBcGA1UEAwwQY2hhdHRlcmQgdGVzdCBDQTAeFw0yNjEyMDIyMjIzMzNaFw0z
    NjExMjkyMjIzMzNaMA8xDTALBgNVBAMMBGxlYWYwWTATBgcqhkjOPQIBBggqhkjO
    PQMBBwNCAARljkBn2cxdwzMj1PsQNKGk3LlnjJ/gV3YU9R+QDspYaJkpsenggaGx
    ijg+gWiMKpjCAkvE53bZvTqiD6GXM/VHo2UwYzAhBgNVHREEGjAYghBsZWFmLmV4
    YW1wbGUubmV0hwTGM2QHMB0GA1UdDgQWBBSGjIN8pnJ6LL0o3WlhVjjsMFQgijAf
    BgNVHSMEGDAWgBSAvKozSCHYh/aeT1i0XAbpW7ub1TAKBggqhkjOPQQDAgNJADBG
    AiEA29XtlpzpBsAIeSkfQF8hMa+vJZacyqYblEzP7d5FgCcCIQDvuHLVVwnd+OoH
    jVf6yoVQX2mqnM+ikhih1UlhxpYrGg==
    -----END CERTIFICATE-----
    """

    /// Self-signed with `CN=cn-only.example` and no subjectAltName.
    static let commonNameOnly = """
    -----BEGIN CERTIFICATE-----
    MIIBijCCAS+gAwIBAgIUOhZXV4bcDXlcqQERSqRzV7gaLfYwCgYIKoZIzj0EAwIw
    GjEYMBYGA1UEAwwPY24tb25seS5leGFtcGxlMB4XDTI2MTIwMjIyMjMzM1oXDTM2
    MTEyOTIyMjMzM1owGjEYMBYGA1UEAwwPY24tb25seS5leGFtcGxlMFkwEwYHKoZI
    zj0CAQYIKoZIzj0DAQcDQgAEk/gNE1MRbBlUF8tKZoI8eMH7qOIeBat6JB4ZAlHY
    G/wb/nFXt4SSybfZf+b717ub+kPLejnlVVb3r55o0xdTqKNTMFEwHQYDVR0OBBYE
    FK/C41OR1WEYzVsgrqtER49AZT1SMB8GA1UdIwQYMBaAFK/C41OR1WEYzVsgrqtE
    R49AZT1SMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSQAwRgIhAJ7TkTVm
    lnHRjflNVm2Tt8ntpqLGuH+IToFyEcI11+pwAiEAj42hAiyzGayPvcTaAu4IIIMS
    XfSlOgVTeztdp5MGY9A=
    -----END CERTIFICATE-----
    """
}
