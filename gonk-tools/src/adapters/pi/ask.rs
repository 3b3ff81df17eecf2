//! Questions through the Pi bridge: refused at once. The bridge does not
//! carry a tool's question to Pi (see `docs/asking.md`, "Pi"), so a call
//! that asks learns it immediately, with a message that says where it can
//! be answered, and an approval that asks the caller stays
//! `APPROVAL_REQUIRED`.

use futures::future::BoxFuture;
use serde_json::Value;

use crate::ask::{AskError, Asker, InputKind, InputRequest};

/// The asker of every bridged call: it can ask nothing.
pub(crate) struct NoQuestions;

impl Asker for NoQuestions {
    fn can_ask(&self, _kind: InputKind) -> bool {
        false
    }

    fn ask<'a>(
        &'a self,
        questions: &'a [(String, InputRequest)],
    ) -> BoxFuture<'a, Result<Vec<Value>, AskError>> {
        let kinds: Vec<InputKind> = questions.iter().map(|(_, q)| q.kind).collect();
        let names: Vec<&str> = kinds.iter().map(|kind| kind.capability()).collect();
        let message = format!(
            "This call needs the caller to answer ({}), and the Pi bridge does not carry \
             questions to Pi; run it where it can be answered (the command line on a \
             terminal, an MCP client, the WebSocket page)",
            names.join(", ")
        );
        Box::pin(async move { Err(AskError::Unavailable { message, kinds }) })
    }
}
