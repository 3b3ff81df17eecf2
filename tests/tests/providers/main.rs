//! Model providers (OpenAI, Anthropic, Gemini): the projection of tools to
//! each provider's format, and the way back from a provider's tool call to
//! its tool-result message.

mod projection;
mod round_trip;
