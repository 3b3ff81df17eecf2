//! Tool search (`gonk_tools::search`): `tools.search` over a generated
//! catalog of 1,000 tools, `tools.call` through the dispatch contract,
//! hidden tools, and provider tool lists with `defer_loading`.

mod catalog;
mod hidden;
mod providers;
mod ranking;
