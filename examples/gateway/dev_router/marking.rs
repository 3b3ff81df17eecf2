//! What an environment's tools look like through the dev router: a write
//! tool's description starts with `DEV TARGET: <env> (database <db>, …)`,
//! and its results carry `routedTo` (and a line saying where the call
//! ran). The source imports into a registry of its own; the router serves
//! a marked copy of each tool that calls the imported one, kept in step
//! with the source's catalog.

use std::sync::Arc;

use futures::StreamExt;
use gonk_tools::prelude::*;
use gonk_tools::ToolRegistry;
use serde::Serialize;
use serde_json::Value;

use super::EnvironmentConfig;

/// Where a call through the router goes: the environment and what it
/// points at. Serialized as a result's `routedTo`.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Target {
    /// The environment's name.
    pub environment: String,
    /// Its database, if configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
    /// Its repository, if configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// Its branch, if configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
}

impl Target {
    /// The target of environment `name`.
    pub fn of(name: &str, config: &EnvironmentConfig) -> Target {
        Target {
            environment: name.to_owned(),
            database: config.database.clone(),
            repo: config.repo.clone(),
            branch: config.branch.clone(),
        }
    }

    /// `alpha (database app_alpha, repo …, branch main)`.
    fn described(&self) -> String {
        let details: Vec<String> = [
            ("database", &self.database),
            ("repo", &self.repo),
            ("branch", &self.branch),
        ]
        .into_iter()
        .filter_map(|(what, value)| value.as_ref().map(|v| format!("{what} {v}")))
        .collect();
        if details.is_empty() {
            self.environment.clone()
        } else {
            format!("{} ({})", self.environment, details.join(", "))
        }
    }

    /// What a write tool's description starts with.
    pub fn marker(&self) -> String {
        format!("DEV TARGET: {}", self.described())
    }

    /// The line a write result ends with.
    pub fn routed_line(&self) -> String {
        format!("Routed to dev environment {}", self.described())
    }

    /// The MCP server instructions of the environment's endpoint.
    pub fn instructions(&self) -> String {
        format!(
            "A development router: this session is pinned to environment {}; tools marked DEV TARGET write there.",
            self.described()
        )
    }
}

/// Whether the router treats `def` as a write: unless its upstream
/// declared `readOnlyHint` (which reaches the definition only from a
/// trusted environment; MCP's default for a tool without it is a write).
pub fn is_write(def: &ToolDefinition) -> bool {
    def.hints.mcp.annotations.read_only != Some(true)
}

/// The served copy of imported tool `def`: marked when it writes, calling
/// the imported tool in `imported`.
fn served(def: &ToolDefinition, imported: &ToolRegistry, target: &Arc<Target>) -> ToolDefinition {
    let write = is_write(def);
    let description = if write {
        format!("{}. {}", target.marker(), def.description)
    } else {
        def.description.clone()
    };
    let mut builder = ToolDefinition::builder(def.name.clone())
        .description(description)
        .visibility(def.visibility)
        .capabilities(def.capabilities)
        .hints(def.hints.clone())
        .input_json_schema(def.effective_input_schema().clone());
    if let Some(approval) = &def.approval {
        builder = builder.approval(approval.clone());
    }
    if let Some(spec) = &def.authorization {
        builder = builder.authorization(spec.clone());
    }
    if let Some(provenance) = &def.provenance {
        builder = builder.provenance(provenance.clone());
    }
    if let Some(limit) = def.timeout {
        builder = builder.timeout(limit);
    }
    let (imported, target, name) = (imported.clone(), Arc::clone(target), def.name.clone());
    builder
        .raw_stream_handler(move |input, ctx: ToolContext| {
            // The served registry ran the gates with the caller's
            // credentials; the imported one only calls the upstream, over
            // the gateway's own connection (no credential of the caller).
            let call = ToolContext::from_cancellation(ctx.cancellation().clone());
            let target = Arc::clone(&target);
            imported.invoke(&name, input, call).map(move |event| {
                if write {
                    routed(event, &target)
                } else {
                    event
                }
            })
        })
        .build()
}

/// A result event that says where the call ran: `routedTo` in its data
/// (an object) and a last text line.
fn routed(event: ToolEvent, target: &Target) -> ToolEvent {
    match event {
        ToolEvent::Result { mut data, display } => {
            if let Value::Object(map) = &mut data {
                map.insert(
                    "routedTo".to_owned(),
                    serde_json::to_value(target).unwrap_or(Value::Null),
                );
            }
            let mut blocks = match display {
                Some(ToolDisplay::Text(text)) => vec![DisplayBlock::Text { text }],
                Some(ToolDisplay::Blocks(blocks)) => blocks,
                None => Vec::new(),
            };
            blocks.push(DisplayBlock::Text {
                text: target.routed_line(),
            });
            ToolEvent::Result {
                data,
                display: Some(blocks.into()),
            }
        }
        other => other,
    }
}

/// Replaces `served`'s source `prefix` with the marked copies of
/// `imported`'s tools.
fn sync(imported: &ToolRegistry, served: &ToolRegistry, prefix: &str, target: &Arc<Target>) {
    let copies: Vec<ToolDefinition> = imported
        .list()
        .iter()
        .map(|def| self::served(def, imported, target))
        .collect();
    if let Err(error) = served.replace_source(prefix, copies) {
        eprintln!(
            "gonk-gateway: dev environment {}: the catalog could not be served, the previous one stays: {error}",
            target.environment
        );
    }
}

/// Serves `imported`'s tools in `served` now and after every change of
/// `imported`'s catalog (a remote `list_changed`), until aborted.
pub fn keep_in_step(
    imported: ToolRegistry,
    served: ToolRegistry,
    prefix: &str,
    target: Arc<Target>,
) -> tokio::task::JoinHandle<()> {
    // Watching before the first copy: a change meanwhile is not missed.
    let mut changes = imported.catalog_changes();
    sync(&imported, &served, prefix, &target);
    let prefix = prefix.to_owned();
    tokio::spawn(async move {
        while changes.changed().await.is_some() {
            sync(&imported, &served, &prefix, &target);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(database: Option<&str>) -> Target {
        Target {
            environment: "alpha".into(),
            database: database.map(str::to_owned),
            repo: None,
            branch: Some("main".into()),
        }
    }

    #[test]
    fn the_marker_names_the_environment_and_the_database() {
        assert_eq!(
            target(Some("app_alpha")).marker(),
            "DEV TARGET: alpha (database app_alpha, branch main)"
        );
        assert_eq!(
            target(None).routed_line(),
            "Routed to dev environment alpha (branch main)"
        );
    }

    #[test]
    fn a_result_says_where_it_was_routed() {
        let event = ToolEvent::Result {
            data: serde_json::json!({"content": []}),
            display: Some("done".into()),
        };
        let ToolEvent::Result { data, display } = routed(event, &target(Some("db"))) else {
            panic!("a result stays a result");
        };
        assert_eq!(data["routedTo"]["environment"], "alpha");
        assert_eq!(data["routedTo"]["database"], "db");
        let Some(ToolDisplay::Blocks(blocks)) = display else {
            panic!("blocks")
        };
        assert_eq!(blocks.len(), 2);
    }
}
