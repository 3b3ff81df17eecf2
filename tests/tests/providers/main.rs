//! Model providers (OpenAI, Anthropic, Gemini): the projection of tools to
//! each provider's format, the way back from a provider's tool call to its
//! tool-result message, a rig agent calling the notes tools, and tool
//! search (`search`) for catalogs too large to send a model: the
//! `tools.search` / `tools.call` meta-tools and the deferred provider tool
//! lists.

mod projection;
mod rig_agent;
mod round_trip;
mod search;
