//! [`TraceContext`]: the W3C trace context a request carries
//! (`traceparent`, `tracestate`, `baggage`), read from MCP `_meta` or HTTP
//! headers and written into outgoing requests.

use serde_json::{Map, Value};

/// The W3C trace context of a request: a validated `traceparent` and the
/// `tracestate` and `baggage` that travel with it.
///
/// MCP reserves these three keys in a request's `_meta` (SEP-414); over
/// HTTP they are also headers of the same names.
///
/// ```
/// use gonk_tools::telemetry::TraceContext;
///
/// let cx = TraceContext::parse(
///     "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
///     None,
///     None,
/// )
/// .unwrap();
/// assert_eq!(cx.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
/// assert_eq!(cx.parent_id(), "00f067aa0ba902b7");
/// assert!(TraceContext::parse("00-not-a-trace", None, None).is_none());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceContext {
    traceparent: String,
    tracestate: Option<String>,
    baggage: Option<String>,
}

/// The `_meta` / header key of the trace parent.
pub const TRACEPARENT: &str = "traceparent";
/// The `_meta` / header key of the vendor trace state.
pub const TRACESTATE: &str = "tracestate";
/// The `_meta` / header key of the baggage.
pub const BAGGAGE: &str = "baggage";

impl TraceContext {
    /// A trace context from its three parts; `None` when `traceparent` is
    /// not a valid version-00 W3C trace parent (a malformed one is ignored,
    /// as the W3C recommendation says: the request starts a new trace).
    pub fn parse(
        traceparent: &str,
        tracestate: Option<&str>,
        baggage: Option<&str>,
    ) -> Option<Self> {
        let traceparent = traceparent.trim();
        if !is_valid_traceparent(traceparent) {
            return None;
        }
        Some(TraceContext {
            traceparent: traceparent.to_owned(),
            tracestate: tracestate.map(str::to_owned).filter(|s| !s.is_empty()),
            baggage: baggage.map(str::to_owned).filter(|s| !s.is_empty()),
        })
    }

    /// The trace context in an MCP request's `_meta`, if it has a valid one.
    pub fn from_meta(meta: &Map<String, Value>) -> Option<Self> {
        Self::from_lookup(|key| meta.get(key).and_then(Value::as_str))
    }

    /// The trace context `get` finds under the three keys (a header map,
    /// a `_meta` object, …), if it has a valid `traceparent`.
    pub fn from_lookup<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Option<Self> {
        Self::parse(get(TRACEPARENT)?, get(TRACESTATE), get(BAGGAGE))
    }

    /// Writes the three keys into an MCP request's `_meta`.
    pub fn write_meta(&self, meta: &mut Map<String, Value>) {
        meta.insert(
            TRACEPARENT.to_owned(),
            Value::String(self.traceparent.clone()),
        );
        if let Some(state) = &self.tracestate {
            meta.insert(TRACESTATE.to_owned(), Value::String(state.clone()));
        }
        if let Some(baggage) = &self.baggage {
            meta.insert(BAGGAGE.to_owned(), Value::String(baggage.clone()));
        }
    }

    /// The `traceparent` value (`00-{trace id}-{parent id}-{flags}`).
    pub fn traceparent(&self) -> &str {
        &self.traceparent
    }

    /// The `tracestate` value, when there is one.
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// The `baggage` value, when there is one.
    pub fn baggage(&self) -> Option<&str> {
        self.baggage.as_deref()
    }

    /// The trace id: 32 lowercase hex digits.
    pub fn trace_id(&self) -> &str {
        &self.traceparent[3..35]
    }

    /// The parent span's id: 16 lowercase hex digits.
    pub fn parent_id(&self) -> &str {
        &self.traceparent[36..52]
    }

    /// Whether the caller sampled the trace (flag `01`).
    pub fn sampled(&self) -> bool {
        u8::from_str_radix(&self.traceparent[53..55], 16).is_ok_and(|flags| flags & 1 == 1)
    }

    /// The trace context of the current span — what an outgoing request
    /// carries so the server's spans join this trace. `None` without the
    /// `otel` feature or when no OpenTelemetry layer records the span.
    pub fn current() -> Option<Self> {
        #[cfg(feature = "otel")]
        return super::otel::current_context();
        #[cfg(not(feature = "otel"))]
        None
    }
}

/// `00-` + 32 hex + `-` + 16 hex + `-` + 2 hex, lowercase, ids not all
/// zero. Only version 00 is understood: a later version's first 55
/// characters have the same shape, and it may carry more after them.
fn is_valid_traceparent(value: &str) -> bool {
    let bytes = value.as_bytes();
    if bytes.len() < 55 || (bytes.len() > 55 && bytes[55] != b'-') {
        return false;
    }
    let version = &value[0..2];
    if !is_hex(version) || version == "ff" || (version == "00" && bytes.len() != 55) {
        return false;
    }
    bytes[2] == b'-'
        && bytes[35] == b'-'
        && bytes[52] == b'-'
        && is_hex(&value[3..35])
        && is_hex(&value[36..52])
        && is_hex(&value[53..55])
        && value[3..35].bytes().any(|b| b != b'0')
        && value[36..52].bytes().any(|b| b != b'0')
}

fn is_hex(s: &str) -> bool {
    s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_valid_traceparent_parses_and_malformed_ones_do_not() {
        let cx = TraceContext::parse(VALID, Some("k=v"), Some("user=1")).unwrap();
        assert_eq!(cx.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(cx.parent_id(), "00f067aa0ba902b7");
        assert!(cx.sampled());
        for bad in [
            "",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",
        ] {
            assert!(TraceContext::parse(bad, None, None).is_none(), "{bad}");
        }
    }

    #[test]
    fn meta_round_trips() {
        let cx = TraceContext::parse(VALID, Some("k=v"), None).unwrap();
        let mut meta = Map::new();
        cx.write_meta(&mut meta);
        assert_eq!(TraceContext::from_meta(&meta), Some(cx));
        assert!(!meta.contains_key(BAGGAGE));
    }
}
