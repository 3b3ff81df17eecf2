//! [`HttpGuard`]: one `Host` rule, one `Origin` rule and one API-key check
//! for every HTTP surface, and [`GuardRejection`], why a request failed
//! them.

use std::fmt;
use std::net::{IpAddr, SocketAddr};

use http::{header, HeaderMap, StatusCode, Uri};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The names every guard accepts in `Host`, as compared: lower case, an
/// IPv6 address without its brackets (`Host: [::1]:8808` is `::1`). Only
/// names that cannot leave the machine: a DNS-rebinding page carries its
/// own (attacker's) name in `Host`, never one of these.
pub const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// The browser origins every guard accepts, on any port: pages served from
/// this machine over plain HTTP (a local dev server, the server's own page).
pub const LOOPBACK_ORIGINS: [&str; 3] =
    ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

const LOG_TARGET: &str = "gonk_tools::adapters::http";

/// Which rule a request failed; [`status`](Self::status) is its HTTP
/// answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GuardFailure {
    /// No `Host` (and no URI authority), several, or one that is not
    /// `host[:port]` with a port in 1–65535: `400`.
    MalformedHost,
    /// A well-formed `Host` whose name or port is not allowed (a possible
    /// DNS rebinding): `403`.
    HostNotAllowed,
    /// Several `Origin` headers: `400`.
    MalformedOrigin,
    /// An `Origin` that is neither allowed nor the page's own (a
    /// cross-site request; an unparsable or `null` origin too, unless
    /// `null` is listed): `403`.
    OriginNotAllowed,
    /// Several `Authorization` headers: `400`.
    MalformedAuthorization,
    /// The guard has an API key and the request sent none: `401`.
    MissingKey,
    /// The request sent a key that is not the guard's: `401`.
    WrongKey,
}

impl GuardFailure {
    /// The HTTP status of the answer.
    pub fn status(self) -> StatusCode {
        match self {
            GuardFailure::MalformedHost
            | GuardFailure::MalformedOrigin
            | GuardFailure::MalformedAuthorization => StatusCode::BAD_REQUEST,
            GuardFailure::HostNotAllowed | GuardFailure::OriginNotAllowed => StatusCode::FORBIDDEN,
            GuardFailure::MissingKey | GuardFailure::WrongKey => StatusCode::UNAUTHORIZED,
        }
    }
}

/// Why a request may not pass: the failed rule and a message for the
/// client. An adapter turns it into its own HTTP answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuardRejection {
    failure: GuardFailure,
    message: String,
}

impl GuardRejection {
    fn new(failure: GuardFailure, message: impl Into<String>) -> Self {
        GuardRejection {
            failure,
            message: message.into(),
        }
    }

    /// The rule the request failed.
    pub fn failure(&self) -> GuardFailure {
        self.failure
    }

    /// The HTTP status of the answer (`400`, `401` or `403`).
    pub fn status(&self) -> StatusCode {
        self.failure.status()
    }

    /// What to tell the client (without the status).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The `WWW-Authenticate` value a `401` carries (RFC 6750 §3):
    /// `Bearer realm="<realm>"` when no key was sent, with
    /// `error="invalid_token"` when a wrong one was. `None` for the other
    /// failures.
    pub fn www_authenticate(&self, realm: &str) -> Option<String> {
        match self.failure {
            GuardFailure::MissingKey => Some(format!("Bearer realm=\"{realm}\"")),
            GuardFailure::WrongKey => {
                Some(format!("Bearer realm=\"{realm}\", error=\"invalid_token\""))
            }
            _ => None,
        }
    }
}

impl fmt::Display for GuardRejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status(), self.message)
    }
}

impl std::error::Error for GuardRejection {}

/// A `Host` allow-list entry.
#[derive(Clone, Debug, PartialEq, Eq)]
struct AllowedHost {
    host: String,
    /// `None`: the server's port (any port when it is not known).
    port: Option<u16>,
}

/// An `Origin` allow-list entry, or a parsed `Origin` header.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Site {
    /// `null`: a sandboxed frame, a `file:` page, a redirect across sites.
    Null,
    Tuple {
        scheme: String,
        host: String,
        /// The effective port (the scheme's default when none is written);
        /// `None` for a scheme without one (a browser extension's origin).
        port: Option<u16>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct AllowedOrigin {
    site: Site,
    /// `scheme://host:*`.
    any_port: bool,
}

/// The API key, kept as its SHA-256 digest: comparing digests takes the
/// same time whatever the presented token's content and length.
#[derive(Clone)]
struct ApiKey {
    digest: [u8; 32],
    /// Why no client can send this key; such a key matches no request.
    problem: Option<&'static str>,
}

/// The checks an HTTP request passes before it reaches a surface, in this
/// order:
///
/// 1. **`Host`** (DNS rebinding): exactly one well-formed `Host` (or, over
///    HTTP/2, the URI's authority) whose name is allowed — a loopback name
///    ([`LOOPBACK_HOSTS`]), an [`allowed_hosts`](Self::allowed_hosts) entry,
///    or the [`bound`](Self::bound) address. A port in `Host` must be the
///    entry's own (`host:port` entries) or else the server's, when the guard
///    knows it; without a port the name alone decides (a proxy forwards
///    `Host: name`).
/// 2. **`Origin`** (cross-site requests from browser pages): a request
///    without `Origin` is not from a page and passes; otherwise the origin
///    must be a loopback origin ([`LOOPBACK_ORIGINS`]), an
///    [`allowed_origins`](Self::allowed_origins) entry, or the page's own —
///    `http` or `https` on the very host and port of the (allowed) `Host`.
/// 3. **API key**, when one is set: `Authorization: Bearer <key>` (the
///    scheme in any case), compared in constant time.
///
/// [`disable_host_check`](Self::disable_host_check) turns 1 and 2 off (a
/// proxy in front checks them); the key is always checked.
#[derive(Clone)]
pub struct HttpGuard {
    hosts: Vec<AllowedHost>,
    origins: Vec<AllowedOrigin>,
    /// The port the server listens on, when known.
    port: Option<u16>,
    /// A wildcard bind: the machine's own addresses are allowed too.
    any_local_address: bool,
    host_check: bool,
    api_key: Option<ApiKey>,
}

impl fmt::Debug for HttpGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpGuard")
            .field("hosts", &self.hosts)
            .field("origins", &self.origins)
            .field("port", &self.port)
            .field("any_local_address", &self.any_local_address)
            .field("host_check", &self.host_check)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .finish()
    }
}

impl Default for HttpGuard {
    fn default() -> Self {
        Self::new()
    }
}

/// A host as compared: lower case, an IPv6 address without brackets and in
/// its one canonical spelling (`[FD00:0::1]` is `fd00::1`).
fn normalize(host: &str) -> String {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host.parse::<std::net::Ipv6Addr>() {
        Ok(v6) if host.contains(':') => v6.to_string(),
        _ => host.to_ascii_lowercase(),
    }
}

/// `host[:port]` as (normalized host, port): `None` when it is not an
/// authority without user info, or its port is not a number in 1–65535.
fn parse_authority(text: &str) -> Option<(String, Option<u16>)> {
    let authority = http::uri::Authority::try_from(text).ok()?;
    let host = authority.host();
    if host.is_empty() || authority.as_str().contains('@') {
        return None;
    }
    // What follows the host (`[::1]` keeps its brackets in the text).
    let end = authority
        .as_str()
        .rfind(']')
        .map_or(host.len(), |at| at + 1);
    let port = match &authority.as_str()[end..] {
        "" => None,
        rest => {
            let digits = rest.strip_prefix(':')?;
            // `u16::from_str` takes a leading `+`; a port does not.
            if !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            Some(digits.parse::<u16>().ok().filter(|p| *p != 0)?)
        }
    };
    Some((normalize(host), port))
}

/// An allow-list entry: `host`, `host:port`, `[v6]`, `[v6]:port`, or a bare
/// IPv6 address as `IpAddr` prints it.
fn parse_host_entry(entry: &str) -> Option<AllowedHost> {
    let entry = entry.trim();
    if let Ok(ip) = entry.parse::<IpAddr>() {
        return Some(AllowedHost {
            host: normalize(&ip.to_string()),
            port: None,
        });
    }
    let (host, port) = parse_authority(entry)?;
    Some(AllowedHost { host, port })
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" | "ws" => Some(80),
        "https" | "wss" => Some(443),
        _ => None,
    }
}

/// A serialized origin (`scheme://host[:port]`, or `null`).
fn parse_site(text: &str) -> Option<Site> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("null") {
        return Some(Site::Null);
    }
    let uri = Uri::try_from(text).ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    if uri.query().is_some() || !matches!(uri.path(), "" | "/") {
        return None;
    }
    let (host, port) = parse_authority(uri.authority()?.as_str())?;
    let port = port.or_else(|| default_port(&scheme));
    Some(Site::Tuple { scheme, host, port })
}

/// An allow-list entry: `scheme://host`, `scheme://host:port`,
/// `scheme://host:*` or `null`. Without a port, the scheme's default one.
fn parse_origin_entry(entry: &str) -> Option<AllowedOrigin> {
    let entry = entry.trim();
    if let Some(base) = entry.strip_suffix(":*") {
        let site = parse_site(base)?;
        // `https://host:443:*` or `null:*`: a mistake, not a pattern.
        let written_port = base
            .rsplit_once(':')
            .is_some_and(|(_, tail)| !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()));
        if site == Site::Null || written_port {
            return None;
        }
        return Some(AllowedOrigin {
            site,
            any_port: true,
        });
    }
    Some(AllowedOrigin {
        site: parse_site(entry)?,
        any_port: false,
    })
}

impl AllowedOrigin {
    fn matches(&self, origin: &Site) -> bool {
        match (&self.site, origin) {
            (Site::Null, Site::Null) => true,
            (
                Site::Tuple { scheme, host, port },
                Site::Tuple {
                    scheme: o_scheme,
                    host: o_host,
                    port: o_port,
                },
            ) => scheme == o_scheme && host == o_host && (self.any_port || port == o_port),
            _ => false,
        }
    }
}

/// Whether `ip` is an address of this machine (binding it succeeds only
/// then).
fn is_local_address(ip: IpAddr) -> bool {
    ip.is_loopback() || std::net::UdpSocket::bind(SocketAddr::new(ip, 0)).is_ok()
}

/// This machine's host name, lower-cased (Linux: the kernel's; Windows:
/// `COMPUTERNAME`; elsewhere `HOSTNAME` when the shell exports it).
fn machine_name() -> Option<String> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .or_else(|| std::env::var("HOSTNAME").ok())?;
    let name = name.trim();
    (!name.is_empty()).then(|| name.to_ascii_lowercase())
}

/// Why no client can send `key`, if none can.
fn key_problem(key: &str) -> Option<&'static str> {
    if key.is_empty() {
        Some("the API key is empty")
    } else if key.trim() != key {
        Some("the API key starts or ends with white space, which no client can send")
    } else if key.chars().any(char::is_control) {
        Some("the API key contains control characters, which no client can send")
    } else {
        None
    }
}

fn digest(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

/// The token of an `Authorization: Bearer <token>` header (the scheme in
/// any case, the token trimmed): `Ok(None)` without one — no header, or
/// another scheme —, a [`MalformedAuthorization`](GuardFailure::MalformedAuthorization)
/// rejection for several `Authorization` headers (which one would count is
/// up to each proxy on the way).
pub fn bearer_token(headers: &HeaderMap) -> Result<Option<&str>, GuardRejection> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(GuardRejection::new(
            GuardFailure::MalformedAuthorization,
            "send at most one Authorization header",
        ));
    }
    Ok(value
        .to_str()
        .ok()
        .and_then(|value| value.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim()))
}

impl HttpGuard {
    /// A guard that allows the loopback names and origins, with no API key,
    /// not knowing the server's port (any port of an allowed name passes).
    pub fn new() -> Self {
        HttpGuard {
            hosts: LOOPBACK_HOSTS
                .iter()
                .map(|host| AllowedHost {
                    host: (*host).to_owned(),
                    port: None,
                })
                .collect(),
            origins: LOOPBACK_ORIGINS
                .iter()
                .filter_map(|origin| parse_origin_entry(origin))
                .collect(),
            port: None,
            any_local_address: false,
            host_check: true,
            api_key: None,
        }
    }

    /// Also allows these names in `Host`: `host` (on the server's port, or
    /// any port when the guard does not know it) or `host:port` (on that
    /// port only); an IPv6 address bracketed or bare. Names are compared
    /// case-insensitively. An entry that is not a host is ignored, with a
    /// warning.
    pub fn allowed_hosts<S: AsRef<str>>(mut self, hosts: impl IntoIterator<Item = S>) -> Self {
        for entry in hosts {
            match parse_host_entry(entry.as_ref()) {
                Some(allowed) => self.hosts.push(allowed),
                None => tracing::warn!(
                    target: LOG_TARGET,
                    entry = entry.as_ref(),
                    "ignoring an allowed host that is not `host` or `host:port`"
                ),
            }
        }
        self
    }

    /// Also allows these browser origins in `Origin`: `scheme://host`
    /// (the scheme's default port: `https://app.example` is
    /// `https://app.example:443`), `scheme://host:port`, `scheme://host:*`
    /// (any port), or `null` (any page the browser will not name: a
    /// sandboxed frame, a `file:` page — rarely what you want). An entry
    /// that is none of these is ignored, with a warning.
    pub fn allowed_origins<S: AsRef<str>>(mut self, origins: impl IntoIterator<Item = S>) -> Self {
        for entry in origins {
            match parse_origin_entry(entry.as_ref()) {
                Some(allowed) => self.origins.push(allowed),
                None => tracing::warn!(
                    target: LOG_TARGET,
                    entry = entry.as_ref(),
                    "ignoring an allowed origin that is not `scheme://host[:port|:*]` or `null`"
                ),
            }
        }
        self
    }

    /// The server listens on `addr`: a port in `Host` must be this one
    /// (unless its entry names another), and the address itself is allowed
    /// — for a wildcard bind (`0.0.0.0`, `[::]`), every address of this
    /// machine and its host name. None of these is a rebinding name: an
    /// address is not looked up, and a page carries the machine's name only
    /// when the network's own DNS gave it that name, not an attacker's.
    pub fn bound(mut self, addr: SocketAddr) -> Self {
        self.port = Some(addr.port());
        let ip = addr.ip();
        if ip.is_unspecified() {
            self.any_local_address = true;
            if let Some(name) = machine_name() {
                self.hosts.push(AllowedHost {
                    host: name,
                    port: None,
                });
            }
        }
        self.hosts.push(AllowedHost {
            host: normalize(&ip.to_string()),
            port: None,
        });
        self
    }

    /// Requires `key` on every request (see [`check_key`](Self::check_key)).
    /// A key no client can send (empty, surrounded by white space, or with
    /// control characters — see [`api_key_problem`](Self::api_key_problem))
    /// matches no request: every one gets `401`.
    pub fn api_key(mut self, key: impl AsRef<str>) -> Self {
        let key = key.as_ref();
        self.api_key = Some(ApiKey {
            digest: digest(key),
            problem: key_problem(key),
        });
        self
    }

    /// Why the API key cannot work, if it is set and cannot: a server
    /// should refuse to start rather than answer every request `401`.
    pub fn api_key_problem(&self) -> Option<&'static str> {
        self.api_key.as_ref()?.problem
    }

    /// Turns the `Host` and `Origin` checks off, for a server behind a
    /// proxy that does them. Not recommended. The API key is still checked.
    pub fn disable_host_check(mut self) -> Self {
        self.host_check = false;
        self
    }

    /// Runs every check on a request's URI and headers: `Host`, `Origin`,
    /// then the API key from `Authorization: Bearer`.
    pub fn check(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), GuardRejection> {
        self.check_host_and_origin(uri, headers)?;
        self.check_key(bearer_token(headers)?)
    }

    /// The `Host` and `Origin` checks alone (nothing when the host check is
    /// disabled), for a surface that takes its credentials from elsewhere
    /// and then calls [`check_key`](Self::check_key).
    pub fn check_host_and_origin(
        &self,
        uri: &Uri,
        headers: &HeaderMap,
    ) -> Result<(), GuardRejection> {
        if !self.host_check {
            return Ok(());
        }
        let (host, port) = self.check_host(uri, headers)?;
        self.check_origin(headers, &host, port)
    }

    /// The API-key check on the token a request presented (`None`: it
    /// presented none). Passes when the guard has no key; otherwise the
    /// token must equal the key, compared in constant time.
    pub fn check_key(&self, presented: Option<&str>) -> Result<(), GuardRejection> {
        let Some(key) = &self.api_key else {
            return Ok(());
        };
        let Some(token) = presented else {
            return Err(GuardRejection::new(
                GuardFailure::MissingKey,
                "send the server's API key as `Authorization: Bearer <key>`",
            ));
        };
        let equal = bool::from(digest(token).ct_eq(&key.digest));
        if equal && key.problem.is_none() {
            Ok(())
        } else {
            Err(GuardRejection::new(
                GuardFailure::WrongKey,
                "the API key is wrong",
            ))
        }
    }

    /// The allowed `Host` as (normalized host, port).
    fn check_host(
        &self,
        uri: &Uri,
        headers: &HeaderMap,
    ) -> Result<(String, Option<u16>), GuardRejection> {
        let malformed = |message: &str| GuardRejection::new(GuardFailure::MalformedHost, message);
        let mut values = headers.get_all(header::HOST).iter();
        let text = match (values.next(), values.next()) {
            (Some(value), None) => value
                .to_str()
                .map_err(|_| malformed("the Host header is not text"))?,
            (Some(_), Some(_)) => return Err(malformed("send exactly one Host header")),
            // HTTP/2 carries the host as `:authority`, which a router may
            // not copy into a Host header.
            (None, _) => uri
                .authority()
                .map(|authority| authority.as_str())
                .ok_or_else(|| malformed("send a Host header"))?,
        };
        let (host, port) = parse_authority(text).ok_or_else(|| {
            malformed("the Host header is not `host[:port]` with a port in 1-65535")
        })?;
        if !self.allows_host(&host, port) {
            tracing::warn!(target: LOG_TARGET, host = text, "refused a request whose Host is not allowed (possible DNS rebinding)");
            return Err(GuardRejection::new(
                GuardFailure::HostNotAllowed,
                format!("Host {text} is not allowed; add it to the server's allowed hosts"),
            ));
        }
        Ok((host, port))
    }

    fn allows_host(&self, host: &str, port: Option<u16>) -> bool {
        let listed = self.hosts.iter().any(|allowed| {
            allowed.host == host
                && match (allowed.port, port) {
                    (Some(expected), Some(port)) => expected == port,
                    // `host:port` entries name the port a proxy forwards:
                    // a Host without one is not it.
                    (Some(_), None) => false,
                    (None, Some(port)) => self.port.is_none_or(|own| own == port),
                    (None, None) => true,
                }
        });
        listed
            || (self.any_local_address
                && port.is_none_or(|port| Some(port) == self.port)
                && host.parse::<IpAddr>().is_ok_and(is_local_address))
    }

    fn check_origin(
        &self,
        headers: &HeaderMap,
        host: &str,
        port: Option<u16>,
    ) -> Result<(), GuardRejection> {
        let mut values = headers.get_all(header::ORIGIN).iter();
        let value = match (values.next(), values.next()) {
            // Not a browser page: nothing to forge.
            (None, _) => return Ok(()),
            (Some(value), None) => value,
            (Some(_), Some(_)) => {
                return Err(GuardRejection::new(
                    GuardFailure::MalformedOrigin,
                    "send at most one Origin header",
                ))
            }
        };
        let text = value.to_str().unwrap_or_default();
        let origin = parse_site(text);
        let allowed = origin.as_ref().is_some_and(|origin| {
            is_same_origin(origin, host, port) || self.origins.iter().any(|o| o.matches(origin))
        });
        if allowed {
            return Ok(());
        }
        tracing::warn!(target: LOG_TARGET, origin = text, "refused a request from a page whose Origin is not allowed (possible cross-site request)");
        Err(GuardRejection::new(
            GuardFailure::OriginNotAllowed,
            format!("Origin {text:?} is not allowed; add it to the server's allowed origins"),
        ))
    }
}

/// Whether `origin` is the page the allowed `Host` names: the same host and
/// port, over `http` or `https` (a proxy may end TLS in front). Such a page
/// was served by this server, so its requests are not cross-site.
fn is_same_origin(origin: &Site, host: &str, port: Option<u16>) -> bool {
    let Site::Tuple {
        scheme,
        host: o_host,
        port: o_port,
    } = origin
    else {
        return false;
    };
    matches!(scheme.as_str(), "http" | "https")
        && o_host == host
        && *o_port == port.or_else(|| default_port(scheme))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        headers
    }

    fn outcome(guard: &HttpGuard, uri: &str, pairs: &[(&str, &str)]) -> u16 {
        match guard.check(&Uri::try_from(uri).unwrap(), &headers(pairs)) {
            Ok(()) => 200,
            Err(rejection) => rejection.status().as_u16(),
        }
    }

    fn hosts(guard: &HttpGuard, values: &[&str]) -> u16 {
        let pairs: Vec<_> = values.iter().map(|value| ("host", *value)).collect();
        outcome(guard, "/mcp", &pairs)
    }

    fn origin(guard: &HttpGuard, host: &str, origin: &str) -> u16 {
        outcome(guard, "/ws", &[("host", host), ("origin", origin)])
    }

    fn bound() -> HttpGuard {
        HttpGuard::new()
            .allowed_hosts([
                "Notes.Example",
                "fixed.example:9000",
                "fe80::7",
                "[fd00::1]",
            ])
            .bound("127.0.0.1:8808".parse().unwrap())
    }

    #[test]
    fn loopback_and_listed_names_pass_on_the_servers_port() {
        let guard = bound();
        for ok in [
            "127.0.0.1:8808",
            "LOCALHOST:8808",
            "localhost",
            "[::1]:8808",
            "[::1]",
            "notes.example:8808",
            "notes.example",
            "fixed.example:9000",
            "[fe80::7]:8808",
            "[FD00::1]:8808",
            "[fd00:0:0::1]:8808",
        ] {
            assert_eq!(hosts(&guard, &[ok]), 200, "{ok}");
        }
        for refused in [
            "localhost:8809",
            "[::1]:8809",
            "fixed.example:8808",
            "fixed.example",
            "notes.example:9000",
        ] {
            assert_eq!(hosts(&guard, &[refused]), 403, "{refused}");
        }
    }

    #[test]
    fn rebinding_names_are_refused() {
        let guard = bound();
        for name in [
            "evil.example:8808",
            "evil.example",
            "localhost.evil.example:8808",
            "127.0.0.1.nip.io:8808",
            "localhost.:8808",
            "127.0.0.2:8808",
            "[::2]:8808",
        ] {
            assert_eq!(hosts(&guard, &[name]), 403, "{name}");
        }
    }

    #[test]
    fn a_host_is_one_well_formed_authority() {
        let guard = bound();
        assert_eq!(hosts(&guard, &[]), 400, "none");
        assert_eq!(hosts(&guard, &["localhost:8808", "localhost:8808"]), 400);
        assert_eq!(hosts(&guard, &["localhost:8808", "evil.example:8808"]), 400);
        for malformed in [
            "localhost:99999",
            "localhost:0",
            "localhost:80a",
            "localhost:+80",
            "localhost:",
            "local host",
            ":8808",
            "user@localhost:8808",
            "::1",
            "[::1",
        ] {
            assert_eq!(hosts(&guard, &[malformed]), 400, "{malformed}");
        }
        // HTTP/2: the URI's authority stands in for Host.
        let h2 = |uri: &str| outcome(&guard, uri, &[]);
        assert_eq!(h2("http://localhost:8808/mcp"), 200);
        assert_eq!(h2("http://evil.example:8808/mcp"), 403);
    }

    #[test]
    fn without_a_known_port_any_port_of_an_allowed_name_passes() {
        let guard = HttpGuard::new().allowed_hosts(["notes.example"]);
        assert_eq!(hosts(&guard, &["localhost:1234"]), 200);
        assert_eq!(hosts(&guard, &["notes.example:4321"]), 200);
        assert_eq!(hosts(&guard, &["evil.example:1234"]), 403);
    }

    #[test]
    fn a_wildcard_bind_allows_the_machines_own_addresses_and_name() {
        let guard = HttpGuard::new().bound("0.0.0.0:8808".parse().unwrap());
        assert_eq!(hosts(&guard, &["0.0.0.0:8808"]), 200);
        assert_eq!(hosts(&guard, &["127.0.0.2:8808"]), 200, "all of 127/8");
        assert_eq!(hosts(&guard, &["127.0.0.2:8809"]), 403);
        assert_eq!(hosts(&guard, &["192.0.2.1:8808"]), 403, "TEST-NET-1");
        if let Some(name) = machine_name() {
            assert_eq!(hosts(&guard, &[&format!("{name}:8808")]), 200);
        }
        let specific = HttpGuard::new().bound("192.0.2.7:8808".parse().unwrap());
        assert_eq!(hosts(&specific, &["192.0.2.7:8808"]), 200);
        assert_eq!(hosts(&specific, &["127.0.0.2:8808"]), 403);
        let v6 = HttpGuard::new().bound("[2001:db8::7]:8808".parse().unwrap());
        assert_eq!(hosts(&v6, &["[2001:DB8::7]:8808"]), 200);
    }

    #[test]
    fn a_request_without_origin_is_not_a_page_and_passes() {
        assert_eq!(hosts(&bound(), &["localhost:8808"]), 200);
    }

    #[test]
    fn loopback_pages_pass_on_any_port() {
        let guard = bound();
        for ok in [
            "http://localhost:3000",
            "http://LOCALHOST:3000",
            "http://127.0.0.1:5173",
            "http://[::1]:8080",
            "http://localhost",
        ] {
            assert_eq!(origin(&guard, "localhost:8808", ok), 200, "{ok}");
        }
        // Loopback origins are plain HTTP; a TLS page on loopback is the
        // server's own only on its port.
        assert_eq!(
            origin(&guard, "localhost:8808", "https://localhost:3000"),
            403
        );
        assert_eq!(
            origin(&guard, "localhost:8808", "https://localhost:8808"),
            200
        );
    }

    #[test]
    fn the_servers_own_page_passes() {
        let guard = bound();
        let host = "notes.example:8808";
        assert_eq!(origin(&guard, host, "http://notes.example:8808"), 200);
        assert_eq!(origin(&guard, host, "https://Notes.Example:8808"), 200);
        assert_eq!(origin(&guard, host, "http://notes.example:8809"), 403);
        assert_eq!(origin(&guard, host, "http://notes.example"), 403);
        assert_eq!(origin(&guard, host, "ftp://notes.example:8808"), 403);
        // Behind a proxy: Host without a port, the page on the default one.
        assert_eq!(
            origin(&guard, "notes.example", "https://notes.example"),
            200
        );
        assert_eq!(origin(&guard, "notes.example", "http://notes.example"), 200);
        assert_eq!(
            origin(&guard, "notes.example", "https://notes.example:8443"),
            403
        );
        assert_eq!(
            origin(&guard, "[fd00::1]:8808", "http://[fd00::1]:8808"),
            200
        );
    }

    #[test]
    fn listed_origins_pass_with_their_port_rule() {
        let guard = bound().allowed_origins([
            "https://app.example.com",
            "http://dev.example:*",
            "https://admin.example:8443",
            "chrome-extension://abcdefgh",
            "not an origin",
        ]);
        let check = |o: &str| origin(&guard, "localhost:8808", o);
        for ok in [
            "https://app.example.com",
            "https://app.example.com:443",
            "https://APP.example.com",
            "http://dev.example:1234",
            "http://dev.example",
            "https://admin.example:8443",
            "chrome-extension://abcdefgh",
        ] {
            assert_eq!(check(ok), 200, "{ok}");
        }
        for refused in [
            "https://app.example.com:8443",
            "http://app.example.com",
            "https://dev.example:1234",
            "https://admin.example",
            "chrome-extension://other",
        ] {
            assert_eq!(check(refused), 403, "{refused}");
        }
    }

    #[test]
    fn hostile_origins_are_refused() {
        let guard = bound();
        let check = |o: &str| origin(&guard, "localhost:8808", o);
        for hostile in [
            "https://evil.example",
            "http://evil.example:8808",
            "http://localhost.evil.example:3000",
            "http://127.0.0.1.nip.io:3000",
            "null",
            "",
            "localhost:3000",
            "http://localhost:3000/path",
            "http://user@localhost:3000",
            "http://localhost:99999",
        ] {
            assert_eq!(check(hostile), 403, "{hostile:?}");
        }
        let several = outcome(
            &guard,
            "/ws",
            &[
                ("host", "localhost:8808"),
                ("origin", "http://localhost:3000"),
                ("origin", "https://evil.example"),
            ],
        );
        assert_eq!(several, 400);
        // `null` passes only when listed.
        let with_null = bound().allowed_origins(["null"]);
        assert_eq!(origin(&with_null, "localhost:8808", "null"), 200);
    }

    #[test]
    fn origin_entries_that_are_mistakes_are_ignored() {
        for entry in ["https://app.example.com:443:*", "null:*", "app.example.com"] {
            let guard = HttpGuard::new().allowed_origins([entry]);
            assert_eq!(guard.origins.len(), LOOPBACK_ORIGINS.len(), "{entry}");
        }
    }

    #[test]
    fn without_the_host_check_only_the_key_counts() {
        let guard = HttpGuard::new().api_key("k3y").disable_host_check();
        let hostile = [("host", "evil.example"), ("origin", "https://evil.example")];
        assert_eq!(outcome(&guard, "/", &hostile), 401);
        let with_key = [
            ("host", "evil.example"),
            ("origin", "https://evil.example"),
            ("authorization", "Bearer k3y"),
        ];
        assert_eq!(outcome(&guard, "/", &with_key), 200);
    }

    fn key(pairs: &[(&str, &str)]) -> Result<(), GuardRejection> {
        let guard = HttpGuard::new().api_key("k3y");
        let mut pairs = pairs.to_vec();
        pairs.push(("host", "localhost"));
        guard.check(&Uri::from_static("/mcp?access_token=k3y"), &headers(&pairs))
    }

    #[test]
    fn the_key_is_a_bearer_token() {
        let missing = key(&[]).unwrap_err();
        assert_eq!(missing.failure(), GuardFailure::MissingKey);
        assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            missing.www_authenticate("mcp").unwrap(),
            "Bearer realm=\"mcp\""
        );
        let wrong = key(&[("authorization", "Bearer nope")]).unwrap_err();
        assert_eq!(wrong.failure(), GuardFailure::WrongKey);
        assert_eq!(
            wrong.www_authenticate("mcp").unwrap(),
            "Bearer realm=\"mcp\", error=\"invalid_token\""
        );
        for wrong in ["Bearer k3", "Bearer k3yk3y", "Bearer K3Y", "Bearer "] {
            assert_eq!(
                key(&[("authorization", wrong)]).unwrap_err().failure(),
                GuardFailure::WrongKey,
                "{wrong:?}"
            );
        }
        for right in ["Bearer k3y", "bearer k3y", "BEARER k3y", "Bearer  k3y "] {
            assert_eq!(key(&[("authorization", right)]), Ok(()), "{right:?}");
        }
        // Another scheme is no bearer token.
        assert_eq!(
            key(&[("authorization", "Basic k3y")])
                .unwrap_err()
                .failure(),
            GuardFailure::MissingKey
        );
        assert_eq!(
            key(&[
                ("authorization", "Bearer k3y"),
                ("authorization", "Bearer k3y")
            ])
            .unwrap_err()
            .failure(),
            GuardFailure::MalformedAuthorization
        );
    }

    #[test]
    fn a_query_token_is_not_a_credential_here() {
        // `key` sends `?access_token=k3y`: only the WebSocket upgrade reads
        // it (browsers cannot set headers there), not the shared check.
        assert_eq!(key(&[]).unwrap_err().failure(), GuardFailure::MissingKey);
    }

    #[test]
    fn without_a_key_any_request_passes_the_key_check() {
        let guard = HttpGuard::new();
        assert_eq!(guard.check_key(None), Ok(()));
        assert_eq!(guard.check_key(Some("anything")), Ok(()));
        assert_eq!(guard.api_key_problem(), None);
    }

    #[test]
    fn a_key_no_client_can_send_matches_nothing() {
        for bad in ["", " k3y", "k3y\n", "k\u{7}y"] {
            let guard = HttpGuard::new().api_key(bad);
            assert!(guard.api_key_problem().is_some(), "{bad:?}");
            assert_eq!(
                guard.check_key(Some(bad)).unwrap_err().failure(),
                GuardFailure::WrongKey,
                "{bad:?}"
            );
            assert_eq!(
                guard.check_key(None).unwrap_err().failure(),
                GuardFailure::MissingKey
            );
        }
        assert_eq!(HttpGuard::new().api_key("k3y").api_key_problem(), None);
    }

    #[test]
    fn the_key_stays_out_of_debug_output() {
        let guard = HttpGuard::new().api_key("s3cret-key");
        assert!(!format!("{guard:?}").contains("s3cret"));
    }
}
