//! Exit codes of the command line, one per outcome class.
//!
//! | code | when |
//! |---|---|
//! | [`OK`] (0) | the tool returned a result |
//! | [`USAGE`] (2) | `INVALID_INPUT`, an argv error, an unknown subcommand |
//! | [`TOOL_NOT_FOUND`] (127) | dispatch itself reported `TOOL_NOT_FOUND`; a resource or prompt read is `RESOURCE_NOT_FOUND` / `PROMPT_NOT_FOUND` |
//! | [`ABORTED`] (130) | the call was cancelled (Ctrl-C) |
//! | [`TIMEOUT`] (124) | the call ran past its timeout (`TIMEOUT`) |
//! | [`RATE_LIMITED`] (75) | a rate limit refused the call (`RATE_LIMITED`); retry later |
//! | [`DUPLEX`] (3) | the named tool is duplex and cannot run from argv |
//! | [`FAILURE`] (1) | any other error |

use std::process::ExitCode;

use crate::error::ErrorCode;

/// The tool returned a result.
pub const OK: u8 = 0;
/// Any error without a code of its own.
pub const FAILURE: u8 = 1;
/// `INVALID_INPUT`, an argv error, or an unknown subcommand.
pub const USAGE: u8 = 2;
/// The named tool is duplex (it needs a bidirectional input stream).
pub const DUPLEX: u8 = 3;
/// Dispatch reported `TOOL_NOT_FOUND`, or a read or prompt named a
/// resource or prompt that does not exist (`RESOURCE_NOT_FOUND`,
/// `PROMPT_NOT_FOUND`).
pub const TOOL_NOT_FOUND: u8 = 127;
/// The call was cancelled (`ABORTED`), as after Ctrl-C (128 + SIGINT).
pub const ABORTED: u8 = 130;
/// The call ran past its timeout (`TIMEOUT`); 124, as coreutils'
/// `timeout` exits.
pub const TIMEOUT: u8 = 124;

/// A rate limit refused the call (`RATE_LIMITED`): 75, sysexits'
/// `EX_TEMPFAIL` ("try again later"); stderr says when.
pub const RATE_LIMITED: u8 = 75;

/// The exit code of a call that ended with `code`.
pub fn for_error(code: &ErrorCode) -> u8 {
    match code {
        ErrorCode::InvalidInput => USAGE,
        ErrorCode::ToolNotFound | ErrorCode::ResourceNotFound | ErrorCode::PromptNotFound => {
            TOOL_NOT_FOUND
        }
        ErrorCode::Aborted => ABORTED,
        ErrorCode::Timeout => TIMEOUT,
        ErrorCode::RateLimited => RATE_LIMITED,
        _ => FAILURE,
    }
}

pub(crate) fn code(value: u8) -> ExitCode {
    ExitCode::from(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_codes_map_to_exit_codes() {
        assert_eq!(for_error(&ErrorCode::InvalidInput), 2);
        assert_eq!(for_error(&ErrorCode::ToolNotFound), 127);
        assert_eq!(for_error(&ErrorCode::ResourceNotFound), 127);
        assert_eq!(for_error(&ErrorCode::PromptNotFound), 127);
        assert_eq!(for_error(&ErrorCode::Aborted), 130);
        assert_eq!(for_error(&ErrorCode::Timeout), 124);
        assert_eq!(for_error(&ErrorCode::RateLimited), 75);
        assert_eq!(for_error(&ErrorCode::Internal), 1);
        assert_eq!(for_error(&ErrorCode::NoResult), 1);
        assert_eq!(for_error(&ErrorCode::custom("NOT_FOUND")), 1);
    }
}
