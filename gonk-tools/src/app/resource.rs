//! The resource side of an app: [`AppResource`] (what `_meta.ui` says of
//! the page: [`AppCsp`], [`AppPermissions`], its domain and border) and
//! [`AppResourceBuilder`], which makes the
//! [`ResourceDefinition`] that serves the page.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::MIME_TYPE;
use crate::error::ToolError;
use crate::resource::{Icon, ResourceBuilder, ResourceContents, ResourceDefinition};
use crate::tool::NoInput;

/// The origins an app's page may reach (MCP Apps' `csp`): the host builds
/// the frame's Content Security Policy from them, and allows nothing that
/// is not declared. Each list empty (the default) means none at all.
///
/// An entry is an origin: `https://api.example.com`,
/// `wss://live.example.com`, `https://*.example.com`,
/// `http://localhost:3000`. Registration refuses anything else (a path, a
/// space, a `;` that would end the directive).
///
/// ```
/// use gonk_tools::app::AppCsp;
///
/// let csp = AppCsp::default()
///     .connect_domain("https://api.example.com")
///     .resource_domain("https://cdn.example.com");
/// assert_eq!(
///     serde_json::to_value(&csp).unwrap(),
///     serde_json::json!({
///         "connectDomains": ["https://api.example.com"],
///         "resourceDomains": ["https://cdn.example.com"],
///     }),
/// );
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppCsp {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    connect_domains: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    resource_domains: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    frame_domains: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    base_uri_domains: Vec<String>,
}

fn push_once(list: &mut Vec<String>, origin: String) {
    if !list.contains(&origin) {
        list.push(origin);
    }
}

impl AppCsp {
    /// Allows network requests (fetch, XHR, WebSocket) to `origin`: CSP
    /// `connect-src` (`connectDomains`).
    pub fn connect_domain(mut self, origin: impl Into<String>) -> Self {
        push_once(&mut self.connect_domains, origin.into());
        self
    }

    /// Allows scripts, styles, images, fonts and media from `origin`: CSP
    /// `script-src`, `style-src`, `img-src`, `font-src`, `media-src`
    /// (`resourceDomains`).
    pub fn resource_domain(mut self, origin: impl Into<String>) -> Self {
        push_once(&mut self.resource_domains, origin.into());
        self
    }

    /// Allows nested frames from `origin`: CSP `frame-src`
    /// (`frameDomains`).
    pub fn frame_domain(mut self, origin: impl Into<String>) -> Self {
        push_once(&mut self.frame_domains, origin.into());
        self
    }

    /// Allows `origin` as the document's base URI: CSP `base-uri`
    /// (`baseUriDomains`).
    pub fn base_uri_domain(mut self, origin: impl Into<String>) -> Self {
        push_once(&mut self.base_uri_domains, origin.into());
        self
    }

    /// The origins of `connectDomains`.
    pub fn connect_domains(&self) -> &[String] {
        &self.connect_domains
    }

    /// The origins of `resourceDomains`.
    pub fn resource_domains(&self) -> &[String] {
        &self.resource_domains
    }

    /// The origins of `frameDomains`.
    pub fn frame_domains(&self) -> &[String] {
        &self.frame_domains
    }

    /// The origins of `baseUriDomains`.
    pub fn base_uri_domains(&self) -> &[String] {
        &self.base_uri_domains
    }

    /// Each list with its wire name.
    fn lists(&self) -> [(&'static str, &[String]); 4] {
        [
            ("connectDomains", &self.connect_domains),
            ("resourceDomains", &self.resource_domains),
            ("frameDomains", &self.frame_domains),
            ("baseUriDomains", &self.base_uri_domains),
        ]
    }

    /// What is wrong with an entry, if anything.
    fn check(&self) -> Result<(), String> {
        for (list, origins) in self.lists() {
            for origin in origins {
                check_origin(origin).map_err(|why| {
                    format!("its CSP `{list}` entry `{origin}` is not an origin ({why}): write `https://api.example.com`, `wss://live.example.com` or `https://*.example.com`")
                })?;
            }
        }
        Ok(())
    }
}

/// `scheme://host[:port]`, the host possibly `*.`-prefixed or an IPv6
/// literal in brackets; nothing after it but an optional `/`.
fn check_origin(origin: &str) -> Result<(), &'static str> {
    let (scheme, rest) = origin.split_once("://").ok_or("no `scheme://`")?;
    let mut chars = scheme.chars();
    let scheme_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !scheme_ok {
        return Err("a bad scheme");
    }
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
        let (address, after) = v6.split_once(']').ok_or("an unclosed `[`")?;
        if address.is_empty() || !address.chars().all(|c| c.is_ascii_hexdigit() || c == ':') {
            return Err("a bad IPv6 address");
        }
        match after {
            "" => (None, None),
            _ => (
                None,
                Some(after.strip_prefix(':').ok_or("a path after the host")?),
            ),
        }
    } else {
        match rest.split_once(':') {
            Some((host, port)) => (Some(host), Some(port)),
            None => (Some(rest), None),
        }
    };
    if let Some(host) = host {
        let labels = host.strip_prefix("*.").unwrap_or(host);
        let host_ok = !labels.is_empty()
            && labels.split('.').all(|label| {
                !label.is_empty() && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            });
        if !host_ok {
            return Err("a bad host");
        }
    }
    if let Some(port) = port {
        let port_ok = port == "*" || (!port.is_empty() && port.chars().all(|c| c.is_ascii_digit()));
        if !port_ok {
            return Err("a bad port, or a path after the host");
        }
    }
    Ok(())
}

/// A permission a page asks for: `{}` on the wire.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Requested {}

/// The browser features an app's page asks for (MCP Apps'
/// `permissions`): a host may grant them through the frame's `allow`
/// attribute (Permission Policy), or not; the page must detect what it
/// got. None is asked for by default.
///
/// ```
/// use gonk_tools::app::AppPermissions;
///
/// let asked = AppPermissions::default().clipboard_write();
/// assert_eq!(asked.requested(), ["clipboard-write"]);
/// assert_eq!(serde_json::to_value(asked).unwrap(), serde_json::json!({"clipboardWrite": {}}));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppPermissions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    camera: Option<Requested>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    microphone: Option<Requested>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    geolocation: Option<Requested>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    clipboard_write: Option<Requested>,
}

impl AppPermissions {
    /// Asks for the camera (Permission Policy `camera`).
    pub fn camera(mut self) -> Self {
        self.camera = Some(Requested {});
        self
    }

    /// Asks for the microphone (Permission Policy `microphone`).
    pub fn microphone(mut self) -> Self {
        self.microphone = Some(Requested {});
        self
    }

    /// Asks for the location (Permission Policy `geolocation`).
    pub fn geolocation(mut self) -> Self {
        self.geolocation = Some(Requested {});
        self
    }

    /// Asks to write the clipboard (Permission Policy `clipboard-write`).
    pub fn clipboard_write(mut self) -> Self {
        self.clipboard_write = Some(Requested {});
        self
    }

    /// The Permission Policy features asked for, in a fixed order.
    pub fn requested(&self) -> Vec<&'static str> {
        [
            (self.camera, "camera"),
            (self.microphone, "microphone"),
            (self.geolocation, "geolocation"),
            (self.clipboard_write, "clipboard-write"),
        ]
        .into_iter()
        .filter_map(|(asked, feature)| asked.map(|_| feature))
        .collect()
    }

    /// Whether nothing is asked for.
    pub fn is_empty(&self) -> bool {
        self.requested().is_empty()
    }
}

/// An MCP App's page as its `_meta.ui` describes it: what it may reach
/// ([`AppCsp`]), the features it asks for ([`AppPermissions`]), the
/// dedicated origin it wants (`domain`, in the host's format) and
/// whether the host should draw a border around it.
///
/// [`AppResource::html`] starts the resource that serves a page; the
/// value itself reads back what a resource or a read item declares
/// ([`AppResource::of`], [`AppResource::from_meta`]).
///
/// ```
/// use gonk_tools::app::{AppCsp, AppResource, MIME_TYPE};
///
/// let board = AppResource::html("ui://notes/board", "<!doctype html><title>Board</title>")
///     .name("board")
///     .csp(AppCsp::default().connect_domain("https://api.example.com"))
///     .prefers_border(false)
///     .build();
/// assert_eq!(board.mime_type(), Some(MIME_TYPE));
/// let ui = AppResource::of(&board).unwrap();
/// assert_eq!(ui.csp().unwrap().connect_domains(), ["https://api.example.com"]);
/// assert_eq!(ui.prefers_border(), Some(false));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppResource {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    csp: Option<AppCsp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    permissions: Option<AppPermissions>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    domain: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    prefers_border: Option<bool>,
}

impl AppResource {
    /// Starts the app resource at `uri` (a `ui://` URI) serving the
    /// HTML document `html` (an `include_str!` of a single-file page, as
    /// a rule: the page runs in a sandbox that reaches no origin it does
    /// not declare, this server included).
    pub fn html(uri: impl Into<String>, html: impl Into<String>) -> AppResourceBuilder {
        let html: Arc<str> = Arc::from(html.into());
        AppResourceBuilder {
            resource: ResourceDefinition::builder(uri)
                .mime_type(MIME_TYPE)
                .size(html.len() as u64),
            html,
            ui: AppResource::default(),
        }
    }

    /// What `def` declares as an app (its listed `_meta.ui`), when it is
    /// one: its MIME type is `text/html;profile=mcp-app`.
    pub fn of(def: &ResourceDefinition) -> Option<AppResource> {
        if def.mime_type() != Some(MIME_TYPE) {
            return None;
        }
        Some(match def.meta() {
            Some(meta) => Self::from_meta(meta)?,
            None => AppResource::default(),
        })
    }

    /// The `ui` entry of a `_meta` (a listed resource's, or a read item's);
    /// `None` when it has none, or one that is not MCP Apps' shape.
    pub fn from_meta(meta: &Map<String, Value>) -> Option<AppResource> {
        serde_json::from_value(meta.get("ui")?.clone()).ok()
    }

    /// As a `_meta` object: `{"ui": {..}}`.
    pub fn to_meta(&self) -> Map<String, Value> {
        let mut meta = Map::with_capacity(1);
        meta.insert(
            "ui".into(),
            serde_json::to_value(self).unwrap_or_else(|_| Value::Object(Map::new())),
        );
        meta
    }

    /// The origins the page may reach.
    pub fn csp(&self) -> Option<&AppCsp> {
        self.csp.as_ref()
    }

    /// The browser features the page asks for.
    pub fn permissions(&self) -> Option<&AppPermissions> {
        self.permissions.as_ref()
    }

    /// The dedicated origin the page asks for (host-dependent format).
    pub fn domain(&self) -> Option<&str> {
        self.domain.as_deref()
    }

    /// Whether the page wants a visible border and background (`None`:
    /// the host decides).
    pub fn prefers_border(&self) -> Option<bool> {
        self.prefers_border
    }

    /// Whether it declares nothing.
    fn is_empty(&self) -> bool {
        *self == AppResource::default()
    }
}

/// What is wrong with the app resource `def`, if anything: registration
/// asks it of every resource served as `text/html;profile=mcp-app`. Its
/// URI must be a fixed `ui://` URI and its `_meta.ui` well-formed, each
/// CSP entry an origin.
pub(crate) fn check_resource(def: &ResourceDefinition) -> Result<(), String> {
    if def.mime_type() != Some(MIME_TYPE) {
        return Ok(());
    }
    crate::definition::name::check_ui_uri(def.uri())?;
    if def.is_template() {
        return Err(
            "an MCP App resource has a fixed URI (a tool links exactly one page): remove the template variables"
                .to_owned(),
        );
    }
    let Some(meta) = def.meta() else {
        return Ok(());
    };
    let Some(ui) = meta.get("ui") else {
        return Ok(());
    };
    let ui: AppResource = serde_json::from_value(ui.clone()).map_err(|e| {
        format!("its `_meta.ui` is not MCP Apps' resource metadata ({e}): build it with AppResource::html")
    })?;
    if let Some(csp) = &ui.csp {
        csp.check()?;
    }
    Ok(())
}

/// Builds the [`ResourceDefinition`] of an app; from
/// [`AppResource::html`].
#[must_use = "call .build() to get the resource definition"]
pub struct AppResourceBuilder {
    html: Arc<str>,
    // Name, title, description and icons go straight to the resource's own
    // builder; only `_meta.ui` and the handler wait for `build`.
    resource: ResourceBuilder,
    ui: AppResource,
}

impl AppResourceBuilder {
    /// The name clients list it under (default: the URI).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.resource = self.resource.name(name);
        self
    }

    /// A human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.resource = self.resource.title(title);
        self
    }

    /// What the page shows and does.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.resource = self.resource.description(description);
        self
    }

    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> Self {
        self.resource = self.resource.icon(icon);
        self
    }

    /// The origins the page may reach (`_meta.ui.csp`); without it the
    /// host allows none.
    pub fn csp(mut self, csp: AppCsp) -> Self {
        self.ui.csp = Some(csp);
        self
    }

    /// The browser features the page asks for (`_meta.ui.permissions`).
    pub fn permissions(mut self, permissions: AppPermissions) -> Self {
        self.ui.permissions = Some(permissions);
        self
    }

    /// The dedicated origin the page asks for (`_meta.ui.domain`), in the
    /// format the host documents; hosts that do not know it ignore it.
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.ui.domain = Some(domain.into());
        self
    }

    /// Whether the host should draw a visible border and background
    /// (`_meta.ui.prefersBorder`); unset, the host decides.
    pub fn prefers_border(mut self, prefers_border: bool) -> Self {
        self.ui.prefers_border = Some(prefers_border);
        self
    }

    /// The resource: `text/html;profile=mcp-app`, its `_meta.ui` listed on
    /// `resources/list` and carried by the read item too (hosts prefer the
    /// read's). Register it with
    /// [`ToolRegistry::register_resource`](crate::ToolRegistry::register_resource)
    /// before the tools that link it; registration checks the URI and the
    /// CSP origins.
    pub fn build(self) -> ResourceDefinition {
        let meta = (!self.ui.is_empty()).then(|| self.ui.to_meta());
        let mut builder = self.resource;
        if let Some(meta) = &meta {
            builder = builder.meta(meta.clone());
        }
        let html = self.html;
        builder
            .handler(move |_: NoInput, _ctx| {
                let mut contents = ResourceContents::text(html.as_ref()).with_mime_type(MIME_TYPE);
                if let Some(meta) = &meta {
                    contents = contents.with_meta(meta.clone());
                }
                async move { Ok::<_, ToolError>(contents) }
            })
            .build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_checked() {
        for good in [
            "https://api.example.com",
            "wss://live.example.com",
            "https://*.example.com",
            "http://localhost:3000",
            "https://example.com/",
            "http://[::1]:8080",
            "https://cdn.example.com:*",
        ] {
            assert_eq!(check_origin(good), Ok(()), "{good}");
        }
        for bad in [
            "api.example.com",
            "https://",
            "https://example.com/path",
            "https://example.com; script-src *",
            "https://exa mple.com",
            "https://example.com:80x",
            "1https://example.com",
            "https://[::1",
            "https://*.",
        ] {
            assert!(check_origin(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_bad_csp_entry_is_named() {
        let def = AppResource::html("ui://a/b", "<p>")
            .csp(AppCsp::default().frame_domain("https://x.example/embed"))
            .build();
        let error = check_resource(&def).unwrap_err();
        assert!(error.contains("frameDomains"), "{error}");
        assert!(error.contains("https://x.example/embed"), "{error}");
    }

    #[test]
    fn an_app_resource_lives_at_a_fixed_ui_uri() {
        let http = AppResource::html("https://a/b", "<p>").build();
        assert!(check_resource(&http).unwrap_err().contains("`ui://` URI"));
        let template = AppResource::html("ui://a/{id}", "<p>").build();
        assert!(check_resource(&template).unwrap_err().contains("fixed URI"));
        let fine = AppResource::html("ui://a/b", "<p>").build();
        assert_eq!(check_resource(&fine), Ok(()));
        assert!(fine.meta().is_none(), "nothing declared, nothing listed");
    }

    #[test]
    fn permissions_and_the_rest_serialize_as_the_spec_names_them() {
        let ui = AppResource {
            csp: Some(AppCsp::default().base_uri_domain("https://cdn.example.com")),
            permissions: Some(
                AppPermissions::default()
                    .camera()
                    .microphone()
                    .geolocation(),
            ),
            domain: Some("abc.example-content.com".into()),
            prefers_border: Some(true),
        };
        assert_eq!(
            Value::Object(ui.to_meta()),
            serde_json::json!({"ui": {
                "csp": {"baseUriDomains": ["https://cdn.example.com"]},
                "permissions": {"camera": {}, "microphone": {}, "geolocation": {}},
                "domain": "abc.example-content.com",
                "prefersBorder": true,
            }}),
        );
        assert_eq!(AppResource::from_meta(&ui.to_meta()), Some(ui));
    }
}
