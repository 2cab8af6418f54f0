/// The request methods chatterd recognises: RFC 9110 §9's and the rest of IANA's HTTP Method Registry (WebDAV's,
/// `QUERY`, ...), so that a route answers any registered method it does not serve with 405 and `Allow`
/// (RFC 9110 §15.5.6). Any other token is answered 501. `PRI` is left out: it only opens HTTP/2's preface.
public enum HTTPMethod: String, Sendable, CaseIterable {
    case GET, HEAD, POST, PUT, DELETE, CONNECT, OPTIONS, TRACE, PATCH
    case QUERY
    case ACL, BIND, CHECKIN, CHECKOUT, COPY, LABEL, LINK, LOCK, MERGE, MKACTIVITY, MKCALENDAR, MKCOL
    case MKREDIRECTREF, MKWORKSPACE, MOVE, ORDERPATCH, PROPFIND, PROPPATCH, REBIND, REPORT, SEARCH, UNBIND
    case UNCHECKOUT, UNLINK, UNLOCK, UPDATE, UPDATEREDIRECTREF
    case BASELINE_CONTROL = "BASELINE-CONTROL"
    case VERSION_CONTROL = "VERSION-CONTROL"
}
