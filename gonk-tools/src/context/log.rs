//! The logger a handler writes through ([`Logger`], from
//! [`ToolContext::log`]) and where its lines go ([`LogSink`]).

use std::sync::Arc;

use serde_json::Value;

use super::ToolContext;
use crate::event::LogLevel;

/// One log line, as a [`LogSink`] receives it.
#[derive(Debug)]
pub struct LogRecord<'a> {
    /// Severity.
    pub level: LogLevel,
    /// The message.
    pub message: &'a str,
    /// Structured fields.
    pub meta: Option<&'a Value>,
    /// The tool that logged (the top of the call stack).
    pub tool: Option<&'a str>,
    /// The whole call stack, root first.
    pub call_stack: &'a [Arc<str>],
}

/// Where a context's logger writes. Tools never write stdout themselves.
pub trait LogSink: Send + Sync {
    /// Receives one line.
    fn log(&self, record: &LogRecord<'_>);
}

/// Drops every line (what the base context does when no logger is set).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoopLog;

impl LogSink for NoopLog {
    fn log(&self, _record: &LogRecord<'_>) {}
}

/// Emits each line as a `tracing` event with `tool` and `call_stack`
/// fields (target `gonk_tools::tool`).
#[derive(Clone, Copy, Debug, Default)]
pub struct TracingLog;

impl LogSink for TracingLog {
    fn log(&self, record: &LogRecord<'_>) {
        let tool = record.tool.unwrap_or("");
        let stack = record.call_stack.join(" -> ");
        let meta = record.meta.map(|m| m.to_string()).unwrap_or_default();
        let message = record.message;
        match record.level {
            LogLevel::Debug => {
                tracing::debug!(target: "gonk_tools::tool", tool, call_stack = %stack, meta = %meta, "{message}")
            }
            LogLevel::Info => {
                tracing::info!(target: "gonk_tools::tool", tool, call_stack = %stack, meta = %meta, "{message}")
            }
            LogLevel::Warn => {
                tracing::warn!(target: "gonk_tools::tool", tool, call_stack = %stack, meta = %meta, "{message}")
            }
            LogLevel::Error => {
                tracing::error!(target: "gonk_tools::tool", tool, call_stack = %stack, meta = %meta, "{message}")
            }
        }
    }
}

/// A handle for logging from a handler: `ctx.log().info("indexing")`.
pub struct Logger<'a> {
    pub(super) ctx: &'a ToolContext,
}

impl Logger<'_> {
    /// Logs at `level` with optional structured `meta`.
    pub fn log(&self, level: LogLevel, message: &str, meta: Option<&Value>) {
        let Some(sink) = &self.ctx.log_sink else {
            return;
        };
        let stack = self.ctx.call_stack();
        sink.log(&LogRecord {
            level,
            message,
            meta,
            tool: stack.last().map(|s| &**s),
            call_stack: stack,
        });
    }

    /// Logs at debug level.
    pub fn debug(&self, message: &str) {
        self.log(LogLevel::Debug, message, None);
    }

    /// Logs at info level.
    pub fn info(&self, message: &str) {
        self.log(LogLevel::Info, message, None);
    }

    /// Logs at warn level.
    pub fn warn(&self, message: &str) {
        self.log(LogLevel::Warn, message, None);
    }

    /// Logs at error level.
    pub fn error(&self, message: &str) {
        self.log(LogLevel::Error, message, None);
    }
}
