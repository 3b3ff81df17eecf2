//! Parsing `#[tool(...)]` arguments into [`ToolAttrs`]: every key, its
//! value checked for shape (string, list, flag, one of a set), every
//! misuse an error spanned on the offending token, all errors of one call
//! collected (the shared value shapes are in [`attr`](super)).

use proc_macro2::TokenStream;
use syn::meta::ParseNestedMeta;
use syn::parse::ParseStream;
use syn::spanned::Spanned;
use syn::{Expr, Ident, LitBool, LitStr, Token};

use super::{
    choice, choice_of, duration, entries, expr, field_entries, flag, key_value, known, lit_str,
    nested, push_flag, serde_key, set, skip_entry, str_list, unknown, Choice, FieldKey, FieldName,
    Flag, ItemAttrs,
};
use crate::internals::errors::Errors;
use crate::internals::keys;

/// The `approval` attribute.
pub enum Approval {
    /// `approval = "read"`
    Tier(Choice),
    /// `approval(tier = "write", override, reason = "...")`
    Spec {
        tier: Choice,
        overridable: bool,
        reason: Option<LitStr>,
    },
    /// `approval = path::to_fn` (a fn of `&Input`).
    Fn(Expr),
}

/// `cli(command = "..", positional = [..], aliases = [..], examples = [..])`.
#[derive(Default)]
pub struct Cli {
    pub command: Option<LitStr>,
    pub positional: Option<Vec<LitStr>>,
    pub aliases: Option<Vec<LitStr>>,
    pub examples: Option<Vec<LitStr>>,
}

/// `mcp(name = "..", visibility = "..", header(..), read_only, ..)`.
#[derive(Default)]
pub struct Mcp {
    pub name: Option<LitStr>,
    pub visibility: Option<Choice>,
    pub annotations: Vec<Flag>,
    pub headers: Option<Vec<McpHeader>>,
}

/// One entry of `mcp(header(region = "Region"))`: an input field whose
/// argument a client also sends as the header `Mcp-Param-Region`. The
/// name is checked here; a field named by its Rust name (it exists, it is
/// a scalar) by the compiler, through the code [`expand`](crate::expand)
/// writes; a property named as a string, at registration.
pub struct McpHeader {
    pub field: FieldName,
    pub name: LitStr,
}

/// `pi(name = "..", visibility = "..", requires_approval, status_glyph = "..")`.
#[derive(Default)]
pub struct Pi {
    pub name: Option<LitStr>,
    pub visibility: Option<Choice>,
    pub requires_approval: Option<bool>,
    pub status_glyph: Option<LitStr>,
}

/// `authorization(auth_level = "..", required_role = "..", allowed_callers = [..])`.
#[derive(Default)]
pub struct Authorization {
    pub auth_level: Option<LitStr>,
    pub required_role: Option<LitStr>,
    pub allowed_callers: Option<Vec<LitStr>>,
}

/// `authorization_resource = "note"` or `authorization_resource(kind = "note", required_fields = [..])`.
pub struct AuthorizationResource {
    pub kind: LitStr,
    pub required_fields: Option<Vec<LitStr>>,
}

/// `ui = "ui://…"` or `ui(uri = "ui://…", visibility = "app")`: the MCP
/// App the tool links, and who may call the tool.
pub struct Ui {
    /// The app resource's `ui://` URI (checked against the rule here).
    pub uri: LitStr,
    /// `"model"`, `"app"`, or both; `None` is MCP Apps' default (both).
    pub visibility: Option<Vec<Choice>>,
}

/// Everything `#[tool(...)]` can say.
#[derive(Default)]
pub struct ToolAttrs {
    /// `crate`, `name`, `type_name`, `description`, `timeout`.
    pub item: ItemAttrs,
    pub category: Option<LitStr>,
    pub visibility: Option<Choice>,
    pub approval: Option<Approval>,
    pub capabilities: Option<Vec<Flag>>,
    pub tags: Option<Vec<LitStr>>,
    pub keywords: Option<Vec<LitStr>>,
    pub related_to: Option<Vec<LitStr>>,
    pub cost: Option<Choice>,
    pub latency: Option<Choice>,
    pub cli: Option<Cli>,
    pub mcp: Option<Mcp>,
    pub pi: Option<Pi>,
    pub authorization: Option<Authorization>,
    pub authorization_resource: Option<AuthorizationResource>,
    pub validate_output: Option<Choice>,
    pub requires: Option<Expr>,
    pub capability_for: Option<Expr>,
    pub degraded_description: Option<LitStr>,
    pub input_json_schema: Option<Expr>,
    pub output_schema: Option<LitBool>,
    pub cache_ttl: Option<std::time::Duration>,
    pub detached: Option<bool>,
    /// `scopes("notes:write", ..)`: the OAuth scopes a call needs.
    pub scopes: Option<Vec<LitStr>>,
    /// `ui = "ui://…"` / `ui(uri = .., visibility = ..)`: the linked app.
    pub ui: Option<Ui>,
}

impl ToolAttrs {
    /// Parses the arguments of `#[tool(...)]`.
    pub fn parse(args: TokenStream) -> syn::Result<ToolAttrs> {
        let mut attrs = ToolAttrs::default();
        let mut errors = Errors::default();
        entries(args, &mut errors, |key, meta, errors| {
            attrs.parse_key(key, meta, errors)
        });
        errors.finish()?;
        Ok(attrs)
    }

    fn parse_key(
        &mut self,
        key: &str,
        meta: &ParseNestedMeta<'_>,
        errors: &mut Errors,
    ) -> syn::Result<()> {
        if self.item.parse_key(key, meta, "MyTool")? {
            return Ok(());
        }
        match key {
            keys::CATEGORY => set(&mut self.category, lit_str(meta)?, meta),
            keys::VISIBILITY => set(&mut self.visibility, listing_visibility(meta)?, meta),
            keys::UI => match parse_ui(meta, errors)? {
                Some(ui) => set(&mut self.ui, ui, meta),
                None => Ok(()),
            },
            keys::APPROVAL => {
                let approval = parse_approval(meta, errors)?;
                set(&mut self.approval, approval, meta)
            }
            keys::CAPABILITIES => {
                let capabilities = parse_capabilities(meta, errors)?;
                set(&mut self.capabilities, capabilities, meta)
            }
            keys::TAGS => set(&mut self.tags, str_list(meta)?, meta),
            keys::KEYWORDS => set(&mut self.keywords, str_list(meta)?, meta),
            keys::RELATED_TO => set(&mut self.related_to, str_list(meta)?, meta),
            keys::COST => set(&mut self.cost, choice(meta, "cost", keys::COSTS)?, meta),
            keys::LATENCY => set(
                &mut self.latency,
                choice(meta, "latency", keys::LATENCIES)?,
                meta,
            ),
            keys::VALIDATE_OUTPUT => set(
                &mut self.validate_output,
                choice(meta, "validate_output mode", keys::VALIDATE_OUTPUT_MODES)?,
                meta,
            ),
            keys::CLI => {
                let cli = parse_cli(meta, errors)?;
                set(&mut self.cli, cli, meta)
            }
            keys::MCP => {
                let mcp = parse_mcp(meta, errors)?;
                set(&mut self.mcp, mcp, meta)
            }
            keys::PI => {
                let pi = parse_pi(meta, errors)?;
                set(&mut self.pi, pi, meta)
            }
            keys::AUTHORIZATION => {
                let auth = parse_authorization(meta, errors)?;
                set(&mut self.authorization, auth, meta)
            }
            keys::AUTHORIZATION_RESOURCE => {
                let resource = parse_authorization_resource(meta, errors)?;
                set(&mut self.authorization_resource, resource, meta)
            }
            keys::REQUIRES => set(&mut self.requires, expr(meta, "path::to_fn")?, meta),
            keys::CAPABILITY_FOR => set(&mut self.capability_for, expr(meta, "path::to_fn")?, meta),
            keys::DEGRADED_DESCRIPTION => set(&mut self.degraded_description, lit_str(meta)?, meta),
            keys::INPUT_JSON_SCHEMA => set(
                &mut self.input_json_schema,
                expr(meta, "json!({..})")?,
                meta,
            ),
            keys::OUTPUT_SCHEMA => {
                let value: LitBool = meta.value()?.parse().map_err(|e| {
                    syn::Error::new(
                        e.span(),
                        "`output_schema` takes `false` (the default derives it from the output type)",
                    )
                })?;
                set(&mut self.output_schema, value, meta)
            }
            // Zero is allowed: it asks clients not to keep a listing with
            // this tool, below a registry default.
            keys::CACHE_TTL => set(&mut self.cache_ttl, duration(meta)?.0, meta),
            keys::DETACHED => set(&mut self.detached, flag(meta)?, meta),
            keys::SCOPES => {
                let scopes = parse_scopes(meta)?;
                set(&mut self.scopes, scopes, meta)
            }
            other => Err(unknown(meta, "`#[tool]` key", other, keys::TOOL_KEYS)),
        }
    }
}

/// The example of the `ui(..)` form every `ui` message shows.
const UI_EXAMPLE: &str = "`ui(uri = \"ui://notes/board\", visibility = \"app\")`";

/// `visibility = "always"` or `"on-demand"`: how the tool is listed. An
/// MCP Apps visibility (`"app"`, `"model"`) is refused with the place it
/// goes, `ui(..)`.
fn listing_visibility(meta: &ParseNestedMeta<'_>) -> syn::Result<Choice> {
    if meta.input.peek(Token![=]) {
        let fork = meta.input.fork();
        fork.parse::<Token![=]>()?;
        if let Ok(value) = fork.parse::<LitStr>() {
            if keys::UI_VISIBILITIES.contains(&value.value().as_str()) {
                return Err(syn::Error::new(
                    value.span(),
                    format!(
                        "`visibility = \"{}\"` says who may call a tool linked to an MCP App: write it inside `ui`, {UI_EXAMPLE} (the top-level `visibility` is how the tool is listed: \"always\" or \"on-demand\")",
                        value.value()
                    ),
                ));
            }
        }
    }
    choice(meta, "visibility", keys::VISIBILITIES)
}

/// `ui = "ui://…"` or `ui(uri = "ui://…", visibility = "app" | ["model", "app"])`.
/// `None` when an entry of `ui(..)` was refused (and reported): the URI
/// it lacks then is no second error.
fn parse_ui(meta: &ParseNestedMeta<'_>, errors: &mut Errors) -> syn::Result<Option<Ui>> {
    if meta.input.peek(Token![=]) {
        return Ok(Some(Ui {
            uri: ui_uri(meta)?,
            visibility: None,
        }));
    }
    if !meta.input.peek(syn::token::Paren) {
        return Err(meta.error(format!(
            "`ui` needs the app's URI: `ui = \"ui://notes/board\"` or {UI_EXAMPLE}"
        )));
    }
    let mut uri = None;
    let mut visibility = None;
    let mut refused = false;
    nested(meta, keys::UI_KEYS, errors, |key, inner| {
        let parsed = match key {
            keys::URI => ui_uri(inner).and_then(|lit| set(&mut uri, lit, inner)),
            keys::VISIBILITY => ui_visibility(inner).and_then(|v| set(&mut visibility, v, inner)),
            other => Err(unknown(inner, "`ui(..)` key", other, keys::UI_KEYS)),
        };
        refused |= parsed.is_err();
        parsed
    })?;
    match uri {
        Some(uri) => Ok(Some(Ui { uri, visibility })),
        None if refused => Ok(None),
        None => Err(meta.error(format!(
            "`ui(..)` needs the URI of the app the tool links: {UI_EXAMPLE}; a visibility means nothing without an app"
        ))),
    }
}

/// The app's URI: a string the `ui://` rule allows.
fn ui_uri(meta: &ParseNestedMeta<'_>) -> syn::Result<LitStr> {
    let uri = lit_str(meta)?;
    crate::rules::check_ui_uri(&uri.value()).map_err(|why| syn::Error::new(uri.span(), why))?;
    Ok(uri)
}

/// `visibility = "app"` or `visibility = ["model", "app"]` inside `ui(..)`:
/// MCP Apps' callers, each once, at least one.
fn ui_visibility(meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<Choice>> {
    let values = str_list(meta)?;
    if values.is_empty() {
        return Err(meta.error(
            "`visibility = []` lets no one call the tool: write \"model\", \"app\" or both, or leave it out for both",
        ));
    }
    let mut choices: Vec<Choice> = Vec::new();
    for value in &values {
        let choice = choice_of(value, "UI visibility", keys::UI_VISIBILITIES)?;
        if choices.iter().any(|c| c.value == choice.value) {
            return Err(syn::Error::new(
                value.span(),
                format!("duplicate `{}`: list each caller once", choice.value),
            ));
        }
        choices.push(choice);
    }
    Ok(choices)
}

/// `approval = "read"`, `approval(tier = "write", override, reason = "..")`
/// or `approval = path::to_fn`.
fn parse_approval(meta: &ParseNestedMeta<'_>, errors: &mut Errors) -> syn::Result<Approval> {
    if meta.input.peek(syn::token::Paren) {
        let mut tier = None;
        let mut overridable = None;
        let mut reason = None;
        nested(meta, keys::APPROVAL_KEYS, errors, |key, inner| match key {
            keys::TIER => set(
                &mut tier,
                choice(inner, "approval tier", keys::TIERS)?,
                inner,
            ),
            keys::OVERRIDE => set(&mut overridable, flag(inner)?, inner),
            keys::REASON => set(&mut reason, lit_str(inner)?, inner),
            other => Err(unknown(
                inner,
                "`approval(..)` key",
                other,
                keys::APPROVAL_KEYS,
            )),
        })?;
        let Some(tier) = tier else {
            return Err(meta.error(
                "`approval(..)` needs a tier: `approval(tier = \"write\", override, reason = \"...\")`",
            ));
        };
        return Ok(Approval::Spec {
            tier,
            overridable: overridable.unwrap_or(false),
            reason,
        });
    }
    let value = meta.value().map_err(|_| {
        meta.error("`approval` needs a value: `approval = \"read\"`, `approval(tier = \"write\", override)` or `approval = path::to_fn`")
    })?;
    let expr: Expr = value.parse()?;
    match &expr {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Ok(Approval::Tier(choice_of(s, "approval tier", keys::TIERS)?)),
        Expr::Lit(other) => Err(syn::Error::new(
            other.span(),
            "`approval` needs a tier string (`\"read\"`, `\"write\"`, `\"exec\"`) or a path to a fn of the input",
        )),
        _ => Ok(Approval::Fn(expr)),
    }
}

/// `scopes("notes:read", "notes:write")`: one or more distinct OAuth
/// scopes, each checked against the scope rule (`rules::check_scope`).
/// Every bad entry is reported, each on its own literal.
fn parse_scopes(meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<LitStr>> {
    const EXAMPLE: &str = "`scopes(\"notes:write\")`";
    if !meta.input.peek(syn::token::Paren) {
        return Err(meta.error(format!(
            "`scopes` takes a list of OAuth scope strings: {EXAMPLE}"
        )));
    }
    let content;
    let parens = syn::parenthesized!(content in meta.input);
    let items = syn::punctuated::Punctuated::<Expr, Token![,]>::parse_terminated(&content)?;
    if items.is_empty() {
        return Err(syn::Error::new(
            parens.span.join(),
            format!("`scopes()` names no scope: write the scopes a call needs, e.g. {EXAMPLE}, or leave `scopes` out"),
        ));
    }
    let mut scopes: Vec<LitStr> = Vec::new();
    let mut errors = Errors::default();
    for item in items {
        let scope = match &item {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(scope),
                ..
            }) => scope.clone(),
            _ => {
                errors.push_spanned(&item, format!("`scopes` needs string literals: {EXAMPLE}"));
                continue;
            }
        };
        let value = scope.value();
        if let Err(error) = crate::rules::check_scope(&value) {
            errors.push_at(scope.span(), error.describe(&value));
        } else if scopes.iter().any(|seen| seen.value() == value) {
            errors.push_at(
                scope.span(),
                format!("duplicate scope `{value}`: list each scope once"),
            );
        } else {
            scopes.push(scope);
        }
    }
    errors.finish()?;
    Ok(scopes)
}

/// `capabilities(reads_fs, writes_fs = false, ..)`.
fn parse_capabilities(meta: &ParseNestedMeta<'_>, errors: &mut Errors) -> syn::Result<Vec<Flag>> {
    let mut flags = Vec::new();
    nested(
        meta,
        keys::CAPABILITY_FLAGS,
        errors,
        |key, inner| match known(key, keys::CAPABILITY_FLAGS) {
            Some(name) => push_flag(&mut flags, name, inner),
            None => Err(unknown(inner, "capability", key, keys::CAPABILITY_FLAGS)),
        },
    )?;
    Ok(flags)
}

/// `cli(command = "..", positional = [..], aliases = [..], examples = [..])`.
fn parse_cli(meta: &ParseNestedMeta<'_>, errors: &mut Errors) -> syn::Result<Cli> {
    let mut cli = Cli::default();
    nested(meta, keys::CLI_KEYS, errors, |key, inner| match key {
        keys::COMMAND => set(&mut cli.command, lit_str(inner)?, inner),
        keys::POSITIONAL => set(&mut cli.positional, str_list(inner)?, inner),
        keys::ALIASES => set(&mut cli.aliases, str_list(inner)?, inner),
        keys::EXAMPLES => set(&mut cli.examples, str_list(inner)?, inner),
        other => Err(unknown(inner, "`cli(..)` key", other, keys::CLI_KEYS)),
    })?;
    Ok(cli)
}

/// `mcp(name = "..", visibility = "..", header(..), read_only, destructive, ..)`.
fn parse_mcp(meta: &ParseNestedMeta<'_>, errors: &mut Errors) -> syn::Result<Mcp> {
    let mut mcp = Mcp::default();
    nested(meta, keys::MCP_KEYS, errors, |key, inner| match key {
        keys::NAME => set(&mut mcp.name, lit_str(inner)?, inner),
        keys::VISIBILITY => set(
            &mut mcp.visibility,
            choice(inner, "visibility", keys::VISIBILITIES)?,
            inner,
        ),
        keys::HEADER => {
            let headers = parse_headers(inner)?;
            set(&mut mcp.headers, headers, inner)
        }
        other => match known(other, keys::MCP_FLAGS) {
            Some(name) => push_flag(&mut mcp.annotations, name, inner),
            None => Err(unknown(inner, "`mcp(..)` key", other, keys::MCP_KEYS)),
        },
    })?;
    Ok(mcp)
}

/// `header(region = "Region", tenant_id = "Tenant")`: input fields, each
/// with the header name it is sent as (`Mcp-Param-Region`). Every bad
/// entry is reported (parsing goes on after one).
fn parse_headers(meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<McpHeader>> {
    const EXAMPLE: &str =
        "`header(region = \"Region\")` (the input field `region`, sent as `Mcp-Param-Region`)";
    if !meta.input.peek(syn::token::Paren) {
        return Err(meta.error(format!(
            "`header` takes input fields and their header names: {EXAMPLE}"
        )));
    }
    let mut headers = Vec::new();
    let mut errors = Errors::default();
    field_entries(meta, |key, input| {
        match header_entry(key, input, EXAMPLE) {
            Ok(header) => headers.push(header),
            Err(error) => {
                errors.push(error);
                skip_entry(input);
            }
        }
        Ok(())
    })?;
    errors.finish()?;
    if headers.is_empty() {
        return Err(meta.error(format!("`header()` names no field: write {EXAMPLE}")));
    }
    Ok(headers)
}

/// One `field = "Name"` (or `"property" = "Name"`) of `header(..)`.
fn header_entry(key: FieldKey, input: ParseStream<'_>, example: &str) -> syn::Result<McpHeader> {
    let field = match key {
        FieldKey::Path(path) => match path.get_ident() {
            // A keyword (`type`) parses here, but `input.type` would not:
            // it must be written raw.
            Some(ident) if syn::parse_str::<Ident>(&ident.to_string()).is_err() => {
                return Err(syn::Error::new(
                    ident.span(),
                    format!("`{ident}` is a keyword: write the field as `r#{ident}`"),
                ));
            }
            Some(ident) => FieldName::Rust(ident.clone()),
            None => {
                return Err(syn::Error::new_spanned(
                    &path,
                    format!("`header(..)` names a field of the input by its identifier, or by the name clients see as a string: {example}"),
                ))
            }
        },
        FieldKey::Serde(name) => serde_key(name)?,
    };
    let value = key_value(&field, input, || {
        format!("`{field}` needs the header name it is sent as: `{field} = \"Name\"` (sent as `Mcp-Param-Name`)")
    })?;
    let name = header_name(value.parse()?, &field.to_string())?;
    Ok(McpHeader { field, name })
}

/// The header name a field is sent as: a string the rule allows.
fn header_name(expr: Expr, field: &str) -> syn::Result<LitStr> {
    let Expr::Lit(syn::ExprLit {
        lit: syn::Lit::Str(name),
        ..
    }) = expr
    else {
        return Err(syn::Error::new_spanned(
            expr,
            format!("`{field}` needs the header name as a string: `{field} = \"Name\"`"),
        ));
    };
    crate::rules::check_header_name(&name.value())
        .map_err(|e| syn::Error::new(name.span(), e.describe(&name.value())))?;
    Ok(name)
}

/// `pi(name = "..", visibility = "..", requires_approval, status_glyph = "..")`.
fn parse_pi(meta: &ParseNestedMeta<'_>, errors: &mut Errors) -> syn::Result<Pi> {
    let mut pi = Pi::default();
    nested(meta, keys::PI_KEYS, errors, |key, inner| match key {
        keys::NAME => set(&mut pi.name, lit_str(inner)?, inner),
        keys::VISIBILITY => set(
            &mut pi.visibility,
            choice(inner, "visibility", keys::VISIBILITIES)?,
            inner,
        ),
        keys::REQUIRES_APPROVAL => set(&mut pi.requires_approval, flag(inner)?, inner),
        keys::STATUS_GLYPH => set(&mut pi.status_glyph, lit_str(inner)?, inner),
        other => Err(unknown(inner, "`pi(..)` key", other, keys::PI_KEYS)),
    })?;
    Ok(pi)
}

/// `authorization(auth_level = "..", required_role = "..", allowed_callers = [..])`.
fn parse_authorization(
    meta: &ParseNestedMeta<'_>,
    errors: &mut Errors,
) -> syn::Result<Authorization> {
    let mut auth = Authorization::default();
    nested(meta, keys::AUTH_KEYS, errors, |key, inner| match key {
        keys::AUTH_LEVEL => set(&mut auth.auth_level, lit_str(inner)?, inner),
        keys::REQUIRED_ROLE => set(&mut auth.required_role, lit_str(inner)?, inner),
        keys::ALLOWED_CALLERS => set(&mut auth.allowed_callers, str_list(inner)?, inner),
        other => Err(unknown(
            inner,
            "`authorization(..)` key",
            other,
            keys::AUTH_KEYS,
        )),
    })?;
    Ok(auth)
}

/// `authorization_resource = "note"` or
/// `authorization_resource(kind = "note", required_fields = [..])`.
fn parse_authorization_resource(
    meta: &ParseNestedMeta<'_>,
    errors: &mut Errors,
) -> syn::Result<AuthorizationResource> {
    if meta.input.peek(Token![=]) {
        return Ok(AuthorizationResource {
            kind: lit_str(meta)?,
            required_fields: None,
        });
    }
    let mut kind = None;
    let mut required_fields = None;
    nested(
        meta,
        keys::AUTH_RESOURCE_KEYS,
        errors,
        |key, inner| match key {
            keys::KIND => set(&mut kind, lit_str(inner)?, inner),
            keys::REQUIRED_FIELDS => set(&mut required_fields, str_list(inner)?, inner),
            other => Err(unknown(
                inner,
                "`authorization_resource(..)` key",
                other,
                keys::AUTH_RESOURCE_KEYS,
            )),
        },
    )?;
    let Some(kind) = kind else {
        return Err(meta.error(
            "`authorization_resource` needs a kind: `authorization_resource(kind = \"note\")`",
        ));
    };
    Ok(AuthorizationResource {
        kind,
        required_fields,
    })
}
