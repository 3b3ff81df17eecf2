//! Which scopes to ask for, and how many times one request may go back to
//! the authorization server before it gives up.
//!
//! The authorization-code flow's first choice is rmcp's
//! (`AuthorizationManager::select_initial_scopes`): the scopes of the
//! server's `401` challenge, else its metadata's `scopes_supported`, else
//! none, and `offline_access` added when the authorization server offers
//! it. The client-credentials flow makes the same choice here
//! ([`initial`]); a step-up ([`step_up`]) asks for what was granted plus
//! what the `403` challenge names.

/// The scopes of a space-separated `scope` value.
pub(super) fn split(scope: Option<&str>) -> Vec<String> {
    scope
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// The first scopes to ask for: those the application configured, else the
/// challenge's, else what the server's metadata supports, else none (the
/// `scope` parameter is then left out).
pub(super) fn initial(
    configured: &[String],
    challenged: &[String],
    supported: &[String],
) -> Vec<String> {
    [configured, challenged, supported]
        .into_iter()
        .find(|scopes| !scopes.is_empty())
        .map(|scopes| dedup(scopes.iter().cloned()))
        .unwrap_or_default()
}

/// The scopes of a step-up: what the token had plus what the `403`
/// challenge names, in that order. `None` when the challenge names nothing
/// the token lacks: authorizing again would get the same token, so the
/// request fails instead of looping.
pub(super) fn step_up(granted: &[String], challenged: &[String]) -> Option<Vec<String>> {
    if challenged.iter().all(|scope| granted.contains(scope)) {
        return None;
    }
    Some(dedup(granted.iter().chain(challenged).cloned()))
}

fn dedup(scopes: impl Iterator<Item = String>) -> Vec<String> {
    let mut kept: Vec<String> = Vec::new();
    for scope in scopes {
        if !kept.contains(&scope) {
            kept.push(scope);
        }
    }
    kept
}

/// What one HTTP request has already tried to get a usable token.
#[derive(Debug)]
pub(super) struct Attempts {
    /// A rejected token was refreshed (once per request).
    pub(super) refreshed: bool,
    /// A new authorization ran after a `401` (once per request).
    pub(super) authorized: bool,
    /// Step-ups after a `403 insufficient_scope`.
    pub(super) step_ups: u32,
    /// The most step-ups one request may make.
    pub(super) max_step_ups: u32,
}

impl Attempts {
    pub(super) fn new(max_step_ups: u32) -> Attempts {
        Attempts {
            refreshed: false,
            authorized: false,
            step_ups: 0,
            max_step_ups,
        }
    }

    /// Counts a step-up; `false` once the limit is reached (the request
    /// then fails with the server's `403`).
    pub(super) fn may_step_up(&mut self) -> bool {
        if self.step_ups >= self.max_step_ups {
            return false;
        }
        self.step_ups += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scopes(text: &str) -> Vec<String> {
        split(Some(text))
    }

    #[test]
    fn the_first_choice_is_configured_then_challenge_then_supported_then_none() {
        let all = |c: &str, ch: &str, s: &str| initial(&scopes(c), &scopes(ch), &scopes(s));
        assert_eq!(all("a b", "c", "d"), scopes("a b"));
        assert_eq!(all("", "c c", "d"), scopes("c"));
        assert_eq!(all("", "", "d e"), scopes("d e"));
        assert!(all("", "", "").is_empty(), "no scope parameter at all");
    }

    #[test]
    fn a_step_up_asks_for_the_union_and_never_for_what_it_has() {
        assert_eq!(
            step_up(&scopes("notes:read"), &scopes("notes:write")),
            Some(scopes("notes:read notes:write"))
        );
        assert_eq!(
            step_up(&scopes("a b"), &scopes("b c a")),
            Some(scopes("a b c"))
        );
        // The token already has it: asking again cannot help.
        assert_eq!(step_up(&scopes("a b"), &scopes("b")), None);
        assert_eq!(step_up(&scopes("a"), &[]), None);
    }

    #[test]
    fn step_ups_stop_at_the_limit() {
        let mut attempts = Attempts::new(2);
        assert!(attempts.may_step_up());
        assert!(attempts.may_step_up());
        assert!(!attempts.may_step_up(), "a third step-up is refused");
        assert!(!attempts.may_step_up());
        assert_eq!(attempts.step_ups, 2);
        let mut none = Attempts::new(0);
        assert!(!none.may_step_up());
    }
}
