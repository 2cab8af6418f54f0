import COpenSSL

extension CertificateNames {
    /// The names of every certificate in the PEM file at `path` (a CA and a leaf alike, so a chain file works);
    /// nil when the file cannot be read or holds no certificate.
    public init?(pemFile path: String) {
        guard let bio = BIO_new_file(path, "r") else {
            ERR_clear_error()
            return nil
        }
        defer { BIO_free(bio) }
        self.init(reading: bio)
    }

    /// The names of every certificate in `pem`, PEM text.
    public init?(pem: [UInt8]) {
        let names = pem.withUnsafeBytes { bytes -> CertificateNames? in
            guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)) else { return nil }
            defer { BIO_free(bio) }
            return CertificateNames(reading: bio)
        }
        guard let names else { return nil }
        self = names
    }

    private init?(reading bio: OpaquePointer) {
        self.init()
        var found = false
        while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
            defer { X509_free(certificate) }
            addSubjectAltNames(of: certificate)
            addSubtrees(of: certificate)
            found = true
        }
        // Reading past the last certificate leaves "no start line" on the queue; it is not an error here.
        ERR_clear_error()
        guard found else { return nil }
    }

    private mutating func addSubjectAltNames(of certificate: OpaquePointer) {
        guard let extensionData = X509_get_ext_d2i(certificate, NID_subject_alt_name, nil, nil) else { return }
        let names = OpaquePointer(extensionData)  // GENERAL_NAMES, a stack of GENERAL_NAME
        defer { GENERAL_NAMES_free(names) }
        for index in 0..<OPENSSL_sk_num(names) {
            let name = OPENSSL_sk_value(names, index).assumingMemoryBound(to: GENERAL_NAME.self)
            switch name.pointee.type {
            case GEN_DNS: dnsNames.append(Self.text(name.pointee.d.dNSName).lowercased())
            case GEN_IPADD:
                let address = Self.bytes(name.pointee.d.iPAddress)
                if address.count == 4 || address.count == 16 { addresses.append(address) }
            default: break
            }
        }
    }

    private mutating func addSubtrees(of certificate: OpaquePointer) {
        guard let extensionData = X509_get_ext_d2i(certificate, NID_name_constraints, nil, nil) else { return }
        let constraints = extensionData.assumingMemoryBound(to: NAME_CONSTRAINTS.self)
        defer { NAME_CONSTRAINTS_free(constraints) }
        Self.read(constraints.pointee.permittedSubtrees, into: &permittedDomains, &permittedRanges)
        Self.read(constraints.pointee.excludedSubtrees, into: &excludedDomains, &excludedRanges)
    }

    /// The dNSName and iPAddress bases of a stack of GENERAL_SUBTREE; other kinds of name are no host.
    private static func read(
        _ subtrees: OpaquePointer?, into domains: inout [String], _ ranges: inout [AddressRange]
    ) {
        guard let subtrees else { return }
        for index in 0..<OPENSSL_sk_num(subtrees) {
            let subtree = OPENSSL_sk_value(subtrees, index).assumingMemoryBound(to: GENERAL_SUBTREE.self)
            guard let base = subtree.pointee.base else { continue }
            switch base.pointee.type {
            case GEN_DNS: domains.append(text(base.pointee.d.dNSName).lowercased())
            case GEN_IPADD:
                // RFC 5280 §4.2.1.10: the address, then its mask: 8 bytes for IPv4, 32 for IPv6.
                let pair = bytes(base.pointee.d.iPAddress)
                guard pair.count == 8 || pair.count == 32 else { continue }
                let half = pair.count / 2
                ranges.append(AddressRange(address: Array(pair[..<half]), mask: Array(pair[half...])))
            default: break
            }
        }
    }

    private static func bytes(_ string: UnsafeMutablePointer<ASN1_STRING>?) -> [UInt8] {
        guard let string, let data = ASN1_STRING_get0_data(string) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(string))))
    }

    /// An IA5String's text; any byte outside ASCII becomes U+FFFD and so matches no host.
    private static func text(_ string: UnsafeMutablePointer<ASN1_STRING>?) -> String {
        String(decoding: bytes(string), as: UTF8.self)
    }
}
