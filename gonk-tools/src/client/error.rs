//! [`ClientError`]: why a typed client call failed.

use crate::error::{ErrorCode, ToolError};

/// Why a typed client call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The call ran and failed: the tool's own error, or one of the
    /// dispatch contract's (`INVALID_INPUT` with its issues,
    /// `TOOL_NOT_FOUND`, `ABORTED`, …), or a transport failure the
    /// transport reported as an error event.
    #[error(transparent)]
    Tool(ToolError),
    /// The input could not be serialized to JSON (e.g. a map with
    /// non-string keys); nothing was sent.
    #[error("the input of {tool} could not be serialized to JSON: {source}")]
    Encode {
        /// The tool.
        tool: &'static str,
        /// What serde reported.
        source: serde_json::Error,
    },
    /// The tool answered, but its output does not deserialize into the
    /// tool's `Output` type: the server runs a different version of the
    /// tool than this client was compiled against.
    #[error("the output of {tool} does not match its Rust output type (is the server running another version of the tool?): {source}")]
    Decode {
        /// The tool.
        tool: &'static str,
        /// What serde reported.
        source: serde_json::Error,
    },
}

impl ClientError {
    /// The tool error, when the call ran and failed.
    pub fn tool_error(&self) -> Option<&ToolError> {
        match self {
            ClientError::Tool(error) => Some(error),
            _ => None,
        }
    }

    /// The error code of a failed call (`None` for encode/decode failures,
    /// which happen on the client side).
    pub fn code(&self) -> Option<&ErrorCode> {
        self.tool_error().map(|e| &e.code)
    }

    /// Converts into a [`ToolError`]: encode and decode failures become
    /// `INTERNAL`. Useful to forward a client failure from inside a tool.
    pub fn into_tool_error(self) -> ToolError {
        match self {
            ClientError::Tool(error) => error,
            other => ToolError::internal(other.to_string()),
        }
    }
}

impl From<ToolError> for ClientError {
    fn from(error: ToolError) -> Self {
        ClientError::Tool(error)
    }
}

impl From<ClientError> for ToolError {
    fn from(error: ClientError) -> Self {
        error.into_tool_error()
    }
}
