//! Model providers (OpenAI, Anthropic, Gemini): the projection of tools to
//! each provider's format, the way back from a provider's tool call to its
//! tool-result message, and a rig agent calling the notes tools.

mod projection;
mod rig_agent;
mod round_trip;
