//! A duplex tool's input stream: the chunks a caller sends while the call
//! runs (audio, typed text, control messages).

use std::pin::Pin;

use futures::Stream;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One chunk of a duplex tool's input stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
pub enum InputChunk {
    /// Audio samples, base64-encoded.
    Audio {
        /// MIME type (`"audio/pcm"`).
        mime_type: String,
        /// Base64 data.
        data: String,
    },
    /// Text typed by the user.
    Text {
        /// The text.
        text: String,
    },
    /// A control message (`"interrupt"`, `"end"`).
    Control {
        /// The action.
        action: String,
        /// Parameters.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value: Option<Value>,
    },
    /// Anything else.
    Raw {
        /// The payload.
        value: Value,
    },
}

/// A duplex input stream.
pub type InputStream = Pin<Box<dyn Stream<Item = InputChunk> + Send>>;
